"""exprcalc - a spreadsheet-style expression language.

Quick start::

    from exprcalc import Calculator
    calc = Calculator()
    calc.evaluate("=SUM({1, 2, 3}) * 2")      # 12
    calc.run("tax(x) := x * 19%\\ntax(100)")   # [<function>, 19]

See :class:`exprcalc.calculator.Calculator` for options (locales, degree
mode, fixed TODAY(), 1.x compatibility).
"""

from .calculator import Calculator
from .errors import (
    ArgumentError,
    DivisionByZero,
    EvalError,
    ExprError,
    LexError,
    NameNotFound,
    NotAvailable,
    NumError,
    ParseError,
    RefError,
    UnitError,
    render_error,
)
from .units import Quantity

__all__ = [
    "Calculator", "Quantity", "ExprError", "LexError", "ParseError", "EvalError",
    "NameNotFound", "ArgumentError", "DivisionByZero", "NumError", "NotAvailable",
    "RefError", "UnitError", "render_error",
]

__version__ = "2.3.1"
