"""Exception hierarchy and error rendering for exprcalc.

Every error raised while lexing, parsing or evaluating a formula derives from
:class:`ExprError`.  Evaluation errors additionally carry a spreadsheet-style
error code (``#DIV/0!``, ``#NAME?`` ...) so that ``IFERROR`` / ``ERROR.TYPE``
and the display layer can treat them like cell errors.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Position:
    """A location inside a formula.  ``line`` and ``column`` are 1-based."""

    offset: int
    line: int
    column: int

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"


class ExprError(Exception):
    """Base class of every exprcalc error."""

    code = "#ERROR!"

    def __init__(self, message: str, position: Position | None = None):
        super().__init__(message)
        self.message = message
        self.position = position

    def __str__(self) -> str:
        if self.position is None:
            return self.message
        return f"{self.message} (at {self.position})"

    def with_position(self, position: Position | None) -> "ExprError":
        """Attach ``position`` unless the error already knows where it happened."""
        if self.position is None and position is not None:
            self.position = position
        return self


class LexError(ExprError):
    """The formula contains characters that do not form a valid token."""

    code = "#SYNTAX!"


class ParseError(ExprError):
    """The tokens do not form a valid formula."""

    code = "#SYNTAX!"


class EvalError(ExprError):
    """A formula was well formed but could not be evaluated."""

    code = "#VALUE!"


class NameNotFound(EvalError):
    """Reference to an unknown variable or function."""

    code = "#NAME?"


class ArgumentError(EvalError):
    """A function received the wrong number or type of arguments."""

    code = "#VALUE!"


class DivisionByZero(EvalError):
    code = "#DIV/0!"


class NumError(EvalError):
    """A numeric result is undefined or out of range (e.g. SQRT(-1))."""

    code = "#NUM!"


class NotAvailable(EvalError):
    """A lookup found no match, or NA() was called."""

    code = "#N/A"


class RefError(EvalError):
    """An index points outside a list."""

    code = "#REF!"


class RecursionLimit(EvalError):
    """A user-defined function recursed too deeply."""

    code = "#NUM!"


class UnitError(EvalError):
    """Incompatible or unknown units."""

    code = "#VALUE!"


#: Error codes in the order used by ERROR.TYPE (1-based).
ERROR_CODES = ("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A")


def locate(source: str, offset: int) -> Position:
    """Compute the :class:`Position` of ``offset`` inside ``source``."""
    offset = max(0, min(offset, len(source)))
    line = source.count("\n", 0, offset) + 1
    line_start = source.rfind("\n", 0, offset) + 1
    return Position(offset, line, offset - line_start + 1)


def render_error(source: str, error: ExprError) -> str:
    """Render ``error`` with the offending source line and a caret.

    >>> print(render_error("1 + * 2", ParseError("Unexpected '*'", locate("1 + * 2", 4))))
    ParseError: Unexpected '*' (at line 1, column 5)
      1 | 1 + * 2
        |     ^
    """
    header = f"{type(error).__name__}: {error}"
    pos = error.position
    if pos is None or not source:
        return header
    lines = source.split("\n")
    if not 1 <= pos.line <= len(lines):
        return header
    text = lines[pos.line - 1]
    gutter = str(pos.line)
    pad = " " * len(gutter)
    caret = " " * (pos.column - 1) + "^"
    return f"{header}\n  {gutter} | {text}\n  {pad} | {caret}"
