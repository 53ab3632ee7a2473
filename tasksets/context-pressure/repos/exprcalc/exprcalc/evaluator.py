"""Tree-walking evaluator.

The evaluator walks :mod:`exprcalc.nodes` trees in an :class:`Environment`.
Built-in functions come from a registry (see :mod:`exprcalc.functions`);
user-defined functions are :class:`UserFunction` closures stored in the
environment next to variables.  Names are case-insensitive, like spreadsheet
names.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Callable

from . import values
from .errors import (
    ArgumentError,
    EvalError,
    ExprError,
    NameNotFound,
    RecursionLimit,
    UnitError,
)
from .nodes import (
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
from .units import Quantity, parse_unit


@dataclass
class Options:
    """Evaluation options shared by all functions of a calculator."""

    angle_mode: str = "radians"          # or "degrees"
    today: dt.date | None = None         # fixes TODAY()/NOW() for reproducible sheets
    seed: int | None = None              # seeds RAND()/RANDBETWEEN()
    max_depth: int = 200                 # user-function recursion limit
    decimal_separator: str = "."
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self):
        if self.angle_mode not in ("radians", "degrees"):
            raise ValueError(f"angle_mode must be 'radians' or 'degrees', not {self.angle_mode!r}")
        if self.seed is not None:
            self.rng.seed(self.seed)


class Environment:
    """A scope of case-insensitive names with an optional parent scope."""

    def __init__(self, parent: "Environment | None" = None):
        self.parent = parent
        self._values: dict[str, object] = {}
        self._spelling: dict[str, str] = {}

    @staticmethod
    def key(name: str) -> str:
        return name.casefold()

    def define(self, name: str, value: object) -> None:
        key = self.key(name)
        self._values[key] = value
        self._spelling.setdefault(key, name)

    def lookup(self, name: str) -> object:
        key = self.key(name)
        env: Environment | None = self
        while env is not None:
            if key in env._values:
                return env._values[key]
            env = env.parent
        raise NameNotFound(f"Unknown name '{name}'")

    def contains(self, name: str) -> bool:
        try:
            self.lookup(name)
        except NameNotFound:
            return False
        return True

    def remove(self, name: str) -> None:
        key = self.key(name)
        if key not in self._values:
            raise NameNotFound(f"Unknown name '{name}'")
        del self._values[key]
        self._spelling.pop(key, None)

    def names(self) -> list[str]:
        """Names defined directly in this scope, in their original spelling."""
        return sorted(self._spelling[k] for k in self._values)

    def child(self) -> "Environment":
        return Environment(self)


@dataclass(repr=False)
class UserFunction:
    name: str
    params: tuple[str, ...]
    body: Node
    closure: Environment
    source: str = ""

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.params)})"

    def __repr__(self) -> str:
        return f"<function {self} := {self.body}>"


@dataclass
class CallContext:
    """What a built-in function sees besides its arguments."""

    evaluator: "Evaluator"
    env: Environment
    name: str
    node: Call | None = None

    @property
    def options(self) -> Options:
        return self.evaluator.options

    def eval(self, node: Node) -> object:
        """Evaluate an unevaluated argument (for lazy functions)."""
        return self.evaluator.evaluate(node, self.env)

    def call(self, function: object, args: list[object]) -> object:
        """Call a user function or built-in by value (used by MAP, REDUCE ...)."""
        return self.evaluator.call_value(function, args, self.env, self.node)


class Evaluator:
    def __init__(self, registry: dict, options: Options | None = None):
        self.registry = registry
        self.options = options or Options()
        self.depth = 0

    # -- entry points ----------------------------------------------------
    def evaluate(self, node: Node, env: Environment) -> object:
        method: Callable = getattr(self, "_eval_" + type(node).__name__)
        try:
            return method(node, env)
        except ExprError as exc:
            raise exc.with_position(node.pos)

    def execute(self, node: Node, env: Environment, source: str = "") -> object:
        """Evaluate a statement: assignments and definitions update ``env``."""
        if isinstance(node, Assign):
            value = self.evaluate(node.value, env)
            if node.name.upper() in ("TRUE", "FALSE"):
                raise EvalError(f"Cannot assign to {node.name.upper()}", node.pos)
            env.define(node.name, value)
            return value
        if isinstance(node, FunctionDef):
            if node.name.upper() in self.registry:
                raise EvalError(
                    f"Cannot redefine the built-in function {node.name.upper()}", node.pos
                )
            function = UserFunction(node.name, node.params, node.body, env, source)
            env.define(node.name, function)
            return function
        return self.evaluate(node, env)

    # -- literals --------------------------------------------------------
    def _eval_Number(self, node: Number, env):
        return node.value

    def _eval_String(self, node: String, env):
        return node.value

    def _eval_Boolean(self, node: Boolean, env):
        return node.value

    def _eval_ListLiteral(self, node: ListLiteral, env):
        return [self.evaluate(item, env) for item in node.items]

    def _eval_Name(self, node: Name, env: Environment):
        try:
            value = env.lookup(node.name)
        except NameNotFound:
            if node.name.upper() in self.registry:
                raise NameNotFound(
                    f"{node.name.upper()} is a function; call it with parentheses, "
                    f"e.g. {node.name.upper()}(...)"
                ) from None
            raise
        return value

    # -- operators -------------------------------------------------------
    def _eval_Unary(self, node: Unary, env):
        value = self.evaluate(node.operand, env)
        if isinstance(value, list):
            return [self._negate(v, node.op) for v in value]
        return self._negate(value, node.op)

    @staticmethod
    def _negate(value, op):
        if isinstance(value, Quantity):
            return value.scale(-1) if op == "-" else value
        number = values.to_number(value, f"unary {op}")
        return -number if op == "-" else number

    def _eval_Percent(self, node: Percent, env):
        value = self.evaluate(node.operand, env)
        return values.divide(value, 100)

    def _eval_WithUnit(self, node: WithUnit, env):
        value = self.evaluate(node.operand, env)
        if isinstance(value, Quantity):
            raise UnitError(f"Value already has the unit '{value.unit.symbol}'; use 'to [{node.unit}]'")
        return Quantity(values.to_number(value, "unit annotation"), parse_unit(node.unit))

    def _eval_ConvertTo(self, node: ConvertTo, env):
        value = self.evaluate(node.operand, env)
        if not isinstance(value, Quantity):
            raise UnitError(
                f"Only quantities can be converted; write e.g. 5[km] to [{node.unit}]"
            )
        return value.to(node.unit)

    _BINARY = {
        "+": values.add,
        "-": values.subtract,
        "*": values.multiply,
        "/": values.divide,
        "^": values.power,
        "&": values.concat,
    }

    def _eval_Binary(self, node: Binary, env):
        left = self.evaluate(node.left, env)
        right = self.evaluate(node.right, env)
        return self._apply_binary(node.op, left, right)

    def _apply_binary(self, op: str, left, right):
        if isinstance(left, list) or isinstance(right, list):
            return self._broadcast(op, left, right)
        if op in self._BINARY:
            return self._BINARY[op](left, right)
        cmp = values.compare(left, right)
        return {
            "=": cmp == 0,
            "<>": cmp != 0,
            "<": cmp < 0,
            "<=": cmp <= 0,
            ">": cmp > 0,
            ">=": cmp >= 0,
        }[op]

    def _broadcast(self, op, left, right):
        """Element-wise operators: {1,2,3} * 2 -> {2,4,6}."""
        if isinstance(left, list) and isinstance(right, list):
            if len(left) != len(right):
                raise ArgumentError(
                    f"Lists of different lengths ({len(left)} and {len(right)}) cannot be combined with {op}"
                )
            return [self._apply_binary(op, a, b) for a, b in zip(left, right)]
        if isinstance(left, list):
            return [self._apply_binary(op, a, right) for a in left]
        return [self._apply_binary(op, left, b) for b in right]

    # -- calls -----------------------------------------------------------
    def _eval_Call(self, node: Call, env: Environment):
        name = node.name
        try:
            target = env.lookup(name)
        except NameNotFound:
            target = None
        if isinstance(target, UserFunction):
            args = [self.evaluate(arg, env) for arg in node.args]
            return self.call_user(target, args, node)
        spec = self.registry.get(name.upper())
        if spec is None:
            suggestion = self._suggest(name)
            hint = f"; did you mean {suggestion}?" if suggestion else ""
            raise NameNotFound(f"Unknown function '{name}'{hint}")
        spec.check_arity(len(node.args))
        ctx = CallContext(self, env, spec.name, node)
        if spec.lazy:
            return spec.impl(ctx, *node.args)
        args = [self.evaluate(arg, env) for arg in node.args]
        return spec.impl(ctx, *args)

    def call_user(self, function: UserFunction, args: list[object], node: Node | None = None):
        if len(args) != len(function.params):
            raise ArgumentError(
                f"{function.name} expects {len(function.params)} argument"
                f"{'s' if len(function.params) != 1 else ''}, got {len(args)}"
            )
        if self.depth >= self.options.max_depth:
            raise RecursionLimit(
                f"Maximum recursion depth ({self.options.max_depth}) exceeded in {function.name}"
            )
        scope = function.closure.child()
        for param, value in zip(function.params, args):
            scope.define(param, value)
        self.depth += 1
        try:
            return self.evaluate(function.body, scope)
        finally:
            self.depth -= 1

    def call_value(self, function: object, args: list[object], env: Environment, node=None):
        """Call ``function`` given as a value: a UserFunction or a function name."""
        if isinstance(function, UserFunction):
            return self.call_user(function, args, node)
        if isinstance(function, str):
            try:
                target = env.lookup(function)
            except NameNotFound:
                target = None
            if isinstance(target, UserFunction):
                return self.call_user(target, args, node)
            spec = self.registry.get(function.upper())
            if spec is None:
                raise NameNotFound(f"Unknown function '{function}'")
            if spec.lazy:
                raise ArgumentError(f"{spec.name} cannot be passed as a function value")
            spec.check_arity(len(args))
            return spec.impl(CallContext(self, env, spec.name, node), *args)
        raise ArgumentError(
            f"Expected a function name or user function, got {values.type_name(function)}"
        )

    def _suggest(self, name: str) -> str | None:
        import difflib

        matches = difflib.get_close_matches(name.upper(), list(self.registry), n=1, cutoff=0.75)
        return matches[0] if matches else None

    # Statements cannot appear inside expressions; give a clear message if they do.
    def _eval_Assign(self, node: Assign, env):
        raise EvalError("Assignments are only allowed as statements", node.pos)

    def _eval_FunctionDef(self, node: FunctionDef, env):
        raise EvalError("Function definitions are only allowed as statements", node.pos)
