"""Pratt parser producing :mod:`exprcalc.nodes` trees.

Grammar (informal, lowest precedence first)::

    statement  := NAME ":=" expr
                | NAME "(" [NAME {sep NAME}] ")" ":=" expr
                | expr
    expr       := expr "to" UNIT                      (conversion)
                | expr ("=" | "<>" | "<" | "<=" | ">" | ">=") expr
                | expr "&" expr                       (text concatenation)
                | expr ("+" | "-") expr
                | expr ("*" | "/") expr
                | ("-" | "+") expr
                | expr "^" expr                       (right associative)
                | expr "%"
                | expr UNIT                           (unit annotation)
                | primary
    primary    := NUMBER | STRING | TRUE | FALSE | NAME
                | NAME "(" [expr {sep expr}] ")"
                | "{" [expr {sep expr}] "}"
                | "(" expr ")"

``sep`` is the locale's argument separator (``,`` or ``;``).  Comparisons do
not chain: ``1 < 2 < 3`` is rejected with a helpful message instead of
silently comparing a boolean with a number.
"""

from __future__ import annotations

from .errors import ParseError
from .lexer import DEFAULT_SYNTAX, Lexer, Syntax, Token
from .nodes import (
    PRECEDENCE,
    Assign,
    Binary,
    Boolean,
    Call,
    ConvertTo,
    FunctionDef,
    ListLiteral,
    Name,
    Node,
    Number,
    Percent,
    String,
    Unary,
    WithUnit,
)

COMPARISONS = {"=", "<>", "<", "<=", ">", ">="}
INFIX = {"&", "+", "-", "*", "/", "^"} | COMPARISONS
CLOSERS = {"LPAREN": "RPAREN", "LBRACE": "RBRACE"}
CLOSER_TEXT = {"RPAREN": ")", "RBRACE": "}"}


class Parser:
    """Parse a token list into an AST.

    >>> str(Parser.from_source("1+2*x").parse())
    '1 + 2 * x'
    """

    def __init__(self, tokens: list[Token], syntax: Syntax = DEFAULT_SYNTAX, source: str = ""):
        self.tokens = tokens
        self.syntax = syntax
        self.source = source
        self.index = 0

    @classmethod
    def from_source(cls, source: str, syntax: Syntax = DEFAULT_SYNTAX) -> "Parser":
        return cls(Lexer(source, syntax).tokenize(), syntax, source)

    # -- token helpers ---------------------------------------------------
    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def _peek(self, ahead: int = 1) -> Token:
        i = min(self.index + ahead, len(self.tokens) - 1)
        return self.tokens[i]

    def _advance(self) -> Token:
        tok = self.tokens[self.index]
        if tok.kind != "EOF":
            self.index += 1
        return tok

    def _at(self, kind: str, value: object = None) -> bool:
        tok = self.current
        return tok.kind == kind and (value is None or tok.value == value)

    def _error(self, message: str, token: Token | None = None) -> ParseError:
        token = token or self.current
        return ParseError(message, token.position)

    def _expect_closer(self, opener: Token) -> Token:
        closer = CLOSERS[opener.kind]
        if self._at(closer):
            return self._advance()
        pos = opener.position
        where = f" opened at {pos}" if pos else ""
        symbol = CLOSER_TEXT[closer]
        if self._at("EOF"):
            raise self._error(f"Expected '{symbol}' to close '{opener.text}'{where}, but the formula ended")
        raise self._error(
            f"Expected '{symbol}' to close '{opener.text}'{where}, found {self.current.describe()}"
        )

    # -- entry points ----------------------------------------------------
    def parse(self) -> Node:
        """Parse a single expression (no assignments)."""
        node = self.parse_expression()
        self._expect_end()
        return node

    def parse_statement(self) -> Node:
        """Parse one statement: an assignment, a function definition or an expression."""
        node = self._statement()
        self._expect_end()
        return node

    def parse_program(self) -> list[Node]:
        """Parse statements separated by line breaks."""
        statements: list[Node] = []
        while not self._at("EOF"):
            statements.append(self._statement())
            if self._at("NEWLINE"):
                self._advance()
            elif not self._at("EOF"):
                raise self._error(f"Expected a line break after the statement, found {self.current.describe()}")
        return statements

    def _expect_end(self) -> None:
        if self._at("EOF"):
            return
        if self._at("NEWLINE"):
            raise self._error("Unexpected line break; use Calculator.run() for several statements")
        if self._at("ASSIGN"):
            raise self._error("':=' is only allowed at the start of a statement, e.g. 'x := 1'")
        if self._at("RPAREN") or self._at("RBRACE"):
            raise self._error(f"Unmatched '{self.current.text}'")
        raise self._error(f"Unexpected {self.current.describe()} after the end of the expression")

    def _statement(self) -> Node:
        tok = self.current
        if tok.kind == "NAME" and self._peek().kind == "ASSIGN":
            self._advance()
            self._advance()
            return Assign(tok.value, self.parse_expression(), pos=tok.position)
        if tok.kind == "NAME" and self._peek().kind == "LPAREN" and self._looks_like_definition():
            return self._function_definition()
        return self.parse_expression()

    def _looks_like_definition(self) -> bool:
        depth = 0
        for tok in self.tokens[self.index + 1:]:
            if tok.kind == "LPAREN":
                depth += 1
            elif tok.kind == "RPAREN":
                depth -= 1
                if depth == 0:
                    nxt = self.tokens[self.tokens.index(tok) + 1]
                    return nxt.kind == "ASSIGN"
            elif tok.kind in ("EOF", "NEWLINE"):
                return False
        return False

    def _function_definition(self) -> Node:
        name_tok = self._advance()
        opener = self._advance()
        params: list[str] = []
        sep = self.syntax.arg_separator_kind
        if not self._at("RPAREN"):
            while True:
                if not self._at("NAME"):
                    raise self._error(
                        f"Expected a parameter name in the definition of {name_tok.value}, "
                        f"found {self.current.describe()}"
                    )
                param = self._advance().value
                if param.casefold() in {p.casefold() for p in params}:
                    raise self._error(f"Duplicate parameter '{param}' in {name_tok.value}")
                params.append(param)
                if self._at(sep):
                    self._advance()
                    continue
                break
        self._expect_closer(opener)
        self._advance()  # ':='
        body = self.parse_expression()
        return FunctionDef(name_tok.value, tuple(params), body, pos=name_tok.position)

    # -- Pratt core ------------------------------------------------------
    def parse_expression(self, min_bp: int = 0) -> Node:
        left = self._prefix()
        while True:
            tok = self.current
            if tok.kind == "OP" and tok.value in INFIX:
                op = tok.value
                bp = PRECEDENCE[op]
                if bp < min_bp or (bp == min_bp and op != "^"):
                    break
                self._advance()
                if op in COMPARISONS:
                    right = self.parse_expression(bp + 1)
                    if self._at("OP") and self.current.value in COMPARISONS:
                        raise self._error(
                            "Comparisons cannot be chained; combine them with AND(), "
                            f"e.g. AND(a {op} b, b {self.current.value} c)"
                        )
                elif op == "^":
                    right = self.parse_expression(bp)
                else:
                    right = self.parse_expression(bp + 1)
                left = Binary(op, left, right, pos=left.pos)
            elif tok.kind == "OP" and tok.value == "%":
                if PRECEDENCE["%"] < min_bp:
                    break
                self._advance()
                left = Percent(left, pos=left.pos)
            elif tok.kind == "UNIT":
                if PRECEDENCE["unit"] < min_bp:
                    break
                self._advance()
                left = WithUnit(left, tok.value, pos=left.pos)
            elif tok.kind == "NAME" and tok.value.lower() == "to":
                if PRECEDENCE["to"] < min_bp:
                    break
                self._advance()
                if not self._at("UNIT"):
                    raise self._error(
                        f"Expected a unit in brackets after 'to', e.g. 'to [km]', found {self.current.describe()}"
                    )
                unit = self._advance().value
                left = ConvertTo(left, unit, pos=left.pos)
            elif tok.kind in ("NUMBER", "STRING", "NAME", "LPAREN", "LBRACE"):
                raise self._error(
                    f"Missing operator before {tok.describe()}"
                )
            else:
                break
        return left

    def _prefix(self) -> Node:
        tok = self.current
        kind = tok.kind
        if kind == "NUMBER":
            self._advance()
            return Number(tok.value, pos=tok.position)
        if kind == "STRING":
            self._advance()
            return String(tok.value, pos=tok.position)
        if kind == "NAME":
            return self._name_or_call()
        if kind == "OP" and tok.value in ("-", "+"):
            self._advance()
            operand = self.parse_expression(PRECEDENCE["unary"])
            return Unary(tok.value, operand, pos=tok.position)
        if kind == "LPAREN":
            self._advance()
            if self._at("RPAREN"):
                raise self._error("Empty parentheses '()' are not an expression")
            inner = self.parse_expression()
            self._expect_closer(tok)
            return inner
        if kind == "LBRACE":
            return self._list(tok)
        if kind == "EOF":
            raise self._error("Unexpected end of formula, expected a value")
        if kind == "NEWLINE":
            raise self._error("Unexpected line break, expected a value")
        if kind == "UNIT":
            raise self._error(f"A unit annotation {tok.text} must follow a number, e.g. 5{tok.text}")
        if kind in ("COMMA", "SEMICOLON"):
            raise self._error(f"Expected a value before '{tok.text}'")
        if kind == "ASSIGN":
            raise self._error("':=' needs a name on its left, e.g. 'x := 1'")
        raise self._error(f"Unexpected {tok.describe()}")

    def _name_or_call(self) -> Node:
        tok = self._advance()
        name = tok.value
        upper = name.upper()
        if self._at("LPAREN"):
            return Call(name, self._arguments(name), pos=tok.position)
        if upper == "TRUE":
            return Boolean(True, pos=tok.position)
        if upper == "FALSE":
            return Boolean(False, pos=tok.position)
        if name.lower() == "to":
            raise self._error("'to' must follow a value, e.g. '5[km] to [mi]'", tok)
        return Name(name, pos=tok.position)

    def _arguments(self, name: str) -> tuple[Node, ...]:
        opener = self._advance()
        args: list[Node] = []
        if self._at("RPAREN"):
            self._advance()
            return ()
        while True:
            if self._at("COMMA") or self._at("RPAREN"):
                raise self._error(f"Missing argument {len(args) + 1} in call to {name}")
            args.append(self.parse_expression())
            if self._at("COMMA"):
                self._advance()
                continue
            if self._at("RPAREN"):
                self._advance()
                return tuple(args)
            if self._at("EOF"):
                raise self._error(
                    f"Expected ')' to close the call to {name} opened at {opener.position}, "
                    "but the formula ended"
                )
            raise self._error(
                f"Expected '{self.syntax.arg_separator}' or ')' after argument {len(args)} "
                f"of {name}, found {self.current.describe()}"
            )

    def _list(self, opener: Token) -> Node:
        self._advance()
        items: list[Node] = []
        sep = self.syntax.arg_separator_kind
        if self._at("RBRACE"):
            self._advance()
            return ListLiteral((), pos=opener.position)
        while True:
            items.append(self.parse_expression())
            if self._at(sep):
                self._advance()
                if self._at("RBRACE"):
                    raise self._error("Trailing separator in list literal")
                continue
            break
        self._expect_closer(opener)
        return ListLiteral(tuple(items), pos=opener.position)


def parse(source: str, syntax: Syntax = DEFAULT_SYNTAX) -> Node:
    """Parse a single expression; a leading ``=`` (spreadsheet style) is allowed."""
    stripped = source.lstrip()
    if stripped.startswith("=") and not stripped.startswith("=="):
        offset = len(source) - len(stripped)
        source = source[:offset] + " " + stripped[1:]
    return Parser.from_source(source, syntax).parse()


def parse_statement(source: str, syntax: Syntax = DEFAULT_SYNTAX) -> Node:
    return Parser.from_source(source, syntax).parse_statement()


def parse_program(source: str, syntax: Syntax = DEFAULT_SYNTAX) -> list[Node]:
    return Parser.from_source(source, syntax).parse_program()
