"""Tokenizer for exprcalc formulas.

The lexer turns formula text into a list of :class:`Token` objects.  It knows
about the locale-dependent parts of the syntax through :class:`Syntax`: the
decimal separator used in number literals and the separator between function
arguments / list items (``,`` by default, ``;`` for locales that write
``1,5`` for one and a half).

Token kinds
-----------
``NUMBER``   numeric literal (value is ``int`` or ``float``)
``STRING``   double-quoted text, ``""`` inside the quotes is an escaped quote
``NAME``     identifier: variable, function, ``TRUE``/``FALSE`` or the ``to`` keyword
``UNIT``     unit annotation written in square brackets, e.g. ``[km/h]``
``OP``       operator: ``+ - * / ^ & % = <> < <= > >=``
``ASSIGN``   ``:=`` (only valid at statement level)
``LPAREN`` ``RPAREN`` ``LBRACE`` ``RBRACE`` ``COMMA`` ``SEMICOLON``
``NEWLINE``  line break outside of any brackets (statement separator)
``EOF``      end of input
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import LexError, Position, locate

OPERATORS_2 = {"<=", ">=", "<>", "!=", "==", ":="}
OPERATORS_1 = set("+-*/^&%=<>")

LOCALES = {
    "en": (".", ","),
    "us": (".", ","),
    "uk": (".", ","),
    "de": (",", ";"),
    "fr": (",", ";"),
    "es": (",", ";"),
    "it": (",", ";"),
    "nl": (",", ";"),
    "pt": (",", ";"),
}


@dataclass(frozen=True)
class Syntax:
    """Locale-dependent syntax settings."""

    decimal_separator: str = "."
    arg_separator: str = ","

    def __post_init__(self):
        if self.decimal_separator not in (".", ","):
            raise ValueError(f"unsupported decimal separator {self.decimal_separator!r}")
        if self.arg_separator not in (",", ";"):
            raise ValueError(f"unsupported argument separator {self.arg_separator!r}")
        if self.decimal_separator == self.arg_separator:
            raise ValueError("decimal and argument separators must differ")

    @property
    def arg_separator_kind(self) -> str:
        return "COMMA" if self.arg_separator == "," else "SEMICOLON"

    @classmethod
    def for_locale(cls, locale: str | None) -> "Syntax":
        """Return the syntax for a locale code such as ``"de"`` or ``"en_US"``."""
        if not locale:
            return cls()
        key = locale.replace("-", "_").split("_")[0].lower()
        try:
            decimal, sep = LOCALES[key]
        except KeyError:
            raise ValueError(f"unknown locale {locale!r}") from None
        return cls(decimal, sep)


DEFAULT_SYNTAX = Syntax()


@dataclass
class Token:
    kind: str
    value: object
    start: int
    end: int
    text: str = ""
    position: Position | None = field(default=None, compare=False)

    def describe(self) -> str:
        """Human readable description used in error messages."""
        if self.kind == "EOF":
            return "end of formula"
        if self.kind == "NEWLINE":
            return "line break"
        if self.kind == "STRING":
            return f"text {self.text}"
        if self.kind == "NUMBER":
            return f"number {self.text}"
        if self.kind == "NAME":
            return f"name '{self.text}'"
        if self.kind == "UNIT":
            return f"unit {self.text}"
        return f"'{self.text}'"


class Lexer:
    """Convert formula text to tokens.

    >>> [t.kind for t in Lexer("SUM(1, 2)").tokenize()]
    ['NAME', 'LPAREN', 'NUMBER', 'COMMA', 'NUMBER', 'RPAREN', 'EOF']
    """

    def __init__(self, source: str, syntax: Syntax = DEFAULT_SYNTAX):
        self.source = source
        self.syntax = syntax
        self.pos = 0
        self.depth = 0
        self.tokens: list[Token] = []

    # -- helpers ---------------------------------------------------------
    def _peek(self, ahead: int = 0) -> str:
        i = self.pos + ahead
        return self.source[i] if i < len(self.source) else ""

    def _error(self, message: str, offset: int | None = None) -> LexError:
        return LexError(message, locate(self.source, self.pos if offset is None else offset))

    def _add(self, kind: str, value: object, start: int) -> None:
        text = self.source[start:self.pos]
        self.tokens.append(Token(kind, value, start, self.pos, text, locate(self.source, start)))

    # -- main loop -------------------------------------------------------
    def tokenize(self) -> list[Token]:
        src = self.source
        while self.pos < len(src):
            ch = src[self.pos]
            if ch == "\n":
                start = self.pos
                self.pos += 1
                if self.depth == 0 and self.tokens and self.tokens[-1].kind != "NEWLINE":
                    self._add("NEWLINE", "\n", start)
                continue
            if ch in " \t\r":
                self.pos += 1
                continue
            if ch == "/" and self._peek(1) == "/":
                while self.pos < len(src) and src[self.pos] != "\n":
                    self.pos += 1
                continue
            if ch.isdigit() or (ch == "." and self._peek(1).isdigit()):
                self._number()
            elif ch.isalpha() or ch == "_":
                self._name()
            elif ch == '"':
                self._string()
            elif ch == "[":
                self._unit()
            elif ch in "(){}":
                self._bracket(ch)
            elif ch == ",":
                self.pos += 1
                self._add("COMMA", ",", self.pos - 1)
            elif ch == ";":
                self.pos += 1
                self._add("SEMICOLON", ";", self.pos - 1)
            elif src[self.pos:self.pos + 2] in OPERATORS_2:
                start = self.pos
                self.pos += 2
                op = src[start:self.pos]
                if op == ":=":
                    self._add("ASSIGN", op, start)
                else:
                    self._add("OP", {"!=": "<>", "==": "="}.get(op, op), start)
            elif ch in OPERATORS_1:
                self.pos += 1
                self._add("OP", ch, self.pos - 1)
            else:
                raise self._error(f"Unexpected character {ch!r}")
        while self.tokens and self.tokens[-1].kind == "NEWLINE":
            self.tokens.pop()
        self.tokens.append(Token("EOF", None, len(src), len(src), "", locate(src, len(src))))
        return self.tokens

    # -- token readers ---------------------------------------------------
    def _digits(self) -> str:
        start = self.pos
        while self._peek().isdigit() or (self._peek() == "_" and self._peek(1).isdigit()):
            self.pos += 1
        return self.source[start:self.pos].replace("_", "")

    def _number(self) -> None:
        start = self.pos
        whole = self._digits()
        fraction = None
        exponent = None
        if self._peek() == "." and self._peek(1).isdigit():
            self.pos += 1
            fraction = self._digits()
        if self._peek() in ("e", "E"):
            nxt, after = self._peek(1), self._peek(2)
            if nxt.isdigit() or (nxt in ("+", "-") and after.isdigit()):
                sign = "-" if after == "-" else ""
                self.pos += 2 if nxt in ("+", "-") else 1
                exponent = sign + self._digits()
        if self._peek().isalpha() or self._peek() == "_":
            raise self._error(
                f"Invalid number literal {self.source[start:self.pos + 1]!r}", start
            )
        if fraction is None and exponent is None:
            value: object = int(whole)
        else:
            literal = f"{whole or '0'}.{fraction or '0'}"
            if exponent is not None:
                literal += f"e{exponent}"
            value = float(literal)
        self._add("NUMBER", value, start)

    def _name(self) -> None:
        start = self.pos
        while self.pos < len(self.source) and (self._peek().isalnum() or self._peek() in "_."):
            self.pos += 1
        name = self.source[start:self.pos]
        if name.endswith("."):
            raise self._error(f"Name {name!r} cannot end with '.'", start)
        self._add("NAME", name, start)

    def _string(self) -> None:
        start = self.pos
        self.pos += 1
        chars: list[str] = []
        while True:
            ch = self._peek()
            if ch == "":
                raise self._error("Unterminated text literal", start)
            if ch == '"':
                if self._peek(1) == '"':
                    chars.append('"')
                    self.pos += 2
                    continue
                self.pos += 1
                break
            chars.append(ch)
            self.pos += 1
        self._add("STRING", "".join(chars), start)

    def _unit(self) -> None:
        start = self.pos
        end = self.source.find("]", start + 1)
        newline = self.source.find("\n", start + 1)
        if end == -1 or (newline != -1 and newline < end):
            raise self._error("Unterminated unit annotation, expected ']'", start)
        unit = self.source[start + 1:end].strip()
        if not unit:
            raise self._error("Empty unit annotation '[]'", start)
        self.pos = end + 1
        self._add("UNIT", unit, start)

    def _bracket(self, ch: str) -> None:
        start = self.pos
        self.pos += 1
        if ch in "({":
            self.depth += 1
        else:
            self.depth = max(0, self.depth - 1)
        kind = {"(": "LPAREN", ")": "RPAREN", "{": "LBRACE", "}": "RBRACE"}[ch]
        self._add(kind, ch, start)


def tokenize(source: str, syntax: Syntax = DEFAULT_SYNTAX) -> list[Token]:
    """Shortcut for ``Lexer(source, syntax).tokenize()``."""
    return Lexer(source, syntax).tokenize()
