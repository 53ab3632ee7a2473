"""High-level API: :class:`Calculator` ties lexer, parser and evaluator together.

>>> calc = Calculator()
>>> calc.evaluate("ROUND(PI() * r^2, 2)", r=2)
12.57
>>> calc.run("rate := 5%\\ninterest(x) := x * rate\\ninterest(200)")[-1]
10
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict

from . import display
from .compat import registry_for
from .errors import ArgumentError, ExprError, NameNotFound, ParseError, render_error
from .evaluator import Environment, Evaluator, Options, UserFunction
from .functions import REGISTRY, help_text
from .lexer import Lexer, Syntax
from .nodes import Call, FunctionDef, Node, called_functions, free_names
from .parser import Parser


class Calculator:
    """Evaluate formulas with variables and user-defined functions.

    Parameters
    ----------
    locale:
        ``"de"``, ``"fr"`` ... switch to decimal commas with ``;`` between
        arguments (``ROUND(2,5; 0)``).  Default: ``.`` and ``,``.
    angle_mode:
        ``"radians"`` (default) or ``"degrees"`` for trigonometric functions.
    compat:
        ``"v1"`` evaluates with exprcalc 1.x function semantics.
    today:
        Fix ``TODAY()`` / ``NOW()`` to a date (useful for tests and reports).
    seed:
        Seed for ``RAND()`` / ``RANDBETWEEN()``.
    """

    CACHE_SIZE = 256

    def __init__(
        self,
        *,
        locale: str | None = None,
        angle_mode: str = "radians",
        compat: str | None = None,
        today: dt.date | None = None,
        seed: int | None = None,
        max_depth: int = 200,
        variables: dict[str, object] | None = None,
    ):
        self.syntax = Syntax.for_locale(locale)
        self.options = Options(
            angle_mode=angle_mode,
            today=today,
            seed=seed,
            max_depth=max_depth,
            decimal_separator=self.syntax.decimal_separator,
        )
        self.registry = registry_for(compat)
        self.evaluator = Evaluator(self.registry, self.options)
        self.env = Environment()
        self._cache: OrderedDict[tuple[str, str], Node] = OrderedDict()
        for name, value in (variables or {}).items():
            self.set(name, value)

    # -- parsing ---------------------------------------------------------
    @staticmethod
    def _strip_equals(formula: str) -> str:
        stripped = formula.lstrip()
        if stripped.startswith("=") and not stripped.startswith("=="):
            offset = len(formula) - len(stripped)
            return formula[:offset] + " " + stripped[1:]
        return formula

    def _parse(self, formula: str, mode: str) -> Node | list[Node]:
        key = (mode, formula)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        source = self._strip_equals(formula) if mode == "expr" else formula
        parser = Parser(Lexer(source, self.syntax).tokenize(), self.syntax, source)
        if mode == "expr":
            node = parser.parse()
        elif mode == "statement":
            node = parser.parse_statement()
        else:
            node = parser.parse_program()
        self._cache[key] = node
        if len(self._cache) > self.CACHE_SIZE:
            self._cache.popitem(last=False)
        return node

    def parse(self, formula: str) -> Node:
        """Parse a formula (a leading ``=`` is allowed) into an AST."""
        return self._parse(formula, "expr")

    def normalize(self, formula: str) -> str:
        """Canonical spelling of a formula: ``"1+2*x"`` -> ``"1 + 2 * x"``."""
        return str(self.parse(formula))

    # -- variables and functions ---------------------------------------
    def set(self, name: str, value: object) -> None:
        if not name or not (name[0].isalpha() or name[0] == "_"):
            raise ValueError(f"invalid variable name {name!r}")
        if isinstance(value, tuple):
            value = list(value)
        self.env.define(name, value)

    def get(self, name: str) -> object:
        return self.env.lookup(name)

    def delete(self, name: str) -> None:
        self.env.remove(name)

    def variables(self) -> dict[str, object]:
        return {
            name: self.env.lookup(name)
            for name in self.env.names()
            if not isinstance(self.env.lookup(name), UserFunction)
        }

    def define(self, source: str) -> UserFunction:
        """Define a function: ``calc.define("area(w, h) := w * h")``."""
        node = self._parse(source, "statement")
        if not isinstance(node, FunctionDef):
            raise ParseError("define() expects a function definition such as 'f(x) := x * 2'")
        return self.evaluator.execute(node, self.env, source)

    def user_functions(self) -> list[str]:
        return [
            str(self.env.lookup(name))
            for name in self.env.names()
            if isinstance(self.env.lookup(name), UserFunction)
        ]

    # -- evaluation ------------------------------------------------------
    def evaluate(self, formula: str, **variables: object) -> object:
        """Evaluate one formula; keyword arguments are temporary variables."""
        node = self.parse(formula)
        env = self.env
        if variables:
            env = self.env.child()
            for name, value in variables.items():
                env.define(name, list(value) if isinstance(value, tuple) else value)
        return self.evaluator.evaluate(node, env)

    def execute(self, statement: str) -> object:
        """Run one statement (assignment, definition or expression)."""
        node = self._parse(statement, "statement")
        return self.evaluator.execute(node, self.env, statement)

    def run(self, script: str) -> list[object]:
        """Run statements separated by line breaks; returns each statement's value."""
        statements = self._parse(script, "program")
        return [self.evaluator.execute(node, self.env, script) for node in statements]

    def try_evaluate(self, formula: str, **variables: object) -> object:
        """Like :meth:`evaluate`, but return the error object instead of raising."""
        try:
            return self.evaluate(formula, **variables)
        except ExprError as exc:
            return exc

    # -- introspection ---------------------------------------------------
    def dependencies(self, formula: str) -> set[str]:
        """Variable names (case-folded) a formula reads."""
        return free_names(self.parse(formula))

    def check(self, formula: str) -> list[str]:
        """Static problems in a formula: unknown functions, wrong argument counts,
        undefined variables.  An empty list means the formula looks fine."""
        node = self.parse(formula)
        problems: list[str] = []
        for name in sorted(called_functions(node)):
            if self.env.contains(name) and isinstance(self.env.lookup(name), UserFunction):
                continue
            if name not in self.registry:
                problems.append(f"Unknown function '{name}'")
        for sub in node.walk():
            if isinstance(sub, Call) and sub.name.upper() in self.registry:
                try:
                    self.registry[sub.name.upper()].check_arity(len(sub.args))
                except ArgumentError as exc:
                    problems.append(exc.message)
        for name in sorted(free_names(node)):
            if not self.env.contains(name):
                problems.append(f"Undefined variable '{name}'")
        return problems

    def explain(self, formula: str, **variables: object) -> str:
        """Evaluate and render either the result or the error with a caret."""
        try:
            return self.format(self.evaluate(formula, **variables))
        except ExprError as exc:
            return render_error(self._strip_equals(formula), exc)

    def format(self, value: object, thousands: bool = False) -> str:
        """Display a value using this calculator's decimal separator."""
        return display.format_value(value, self.syntax.decimal_separator, thousands)

    def help(self, name: str) -> str:
        try:
            return help_text(name)
        except KeyError:
            raise NameNotFound(f"Unknown function '{name}'") from None

    @staticmethod
    def function_names(category: str | None = None) -> list[str]:
        return sorted(n for n, s in REGISTRY.items() if category is None or s.category == category)
