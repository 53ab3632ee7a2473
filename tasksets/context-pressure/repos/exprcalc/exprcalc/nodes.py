"""Abstract syntax tree for exprcalc formulas.

Nodes are small immutable dataclasses.  Every node remembers the
:class:`~exprcalc.errors.Position` of its first token so evaluation errors can
point back into the formula.  ``str(node)`` renders a normalised formula, which
``Calculator.normalize`` exposes to users (e.g. to store formulas canonically).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from .errors import Position

# Binding powers shared by the parser and the pretty printer.
PRECEDENCE = {
    "to": 5,
    "=": 10, "<>": 10, "<": 10, "<=": 10, ">": 10, ">=": 10,
    "&": 20,
    "+": 30, "-": 30,
    "*": 40, "/": 40,
    "unary": 50,
    "^": 60,
    "%": 70,
    "unit": 80,
}


@dataclass(frozen=True)
class Node:
    pos: Position | None = field(default=None, compare=False, kw_only=True)

    def children(self) -> tuple["Node", ...]:
        return ()

    def walk(self) -> Iterator["Node"]:
        """Yield this node and all of its descendants, depth first."""
        yield self
        for child in self.children():
            yield from child.walk()


@dataclass(frozen=True)
class Number(Node):
    value: int | float

    def __str__(self) -> str:
        if isinstance(self.value, float) and self.value.is_integer() and abs(self.value) < 1e16:
            return f"{self.value:.1f}"
        return repr(self.value)


@dataclass(frozen=True)
class String(Node):
    value: str

    def __str__(self) -> str:
        return '"' + self.value.replace('"', '""') + '"'


@dataclass(frozen=True)
class Boolean(Node):
    value: bool

    def __str__(self) -> str:
        return "TRUE" if self.value else "FALSE"


@dataclass(frozen=True)
class Name(Node):
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ListLiteral(Node):
    items: tuple[Node, ...]

    def children(self):
        return self.items

    def __str__(self) -> str:
        return "{" + ", ".join(str(i) for i in self.items) + "}"


@dataclass(frozen=True)
class Unary(Node):
    op: str
    operand: Node

    def children(self):
        return (self.operand,)

    def __str__(self) -> str:
        return f"{self.op}{_wrap(self.operand, PRECEDENCE['unary'])}"


@dataclass(frozen=True)
class Percent(Node):
    operand: Node

    def children(self):
        return (self.operand,)

    def __str__(self) -> str:
        return f"{_wrap(self.operand, PRECEDENCE['%'])}%"


@dataclass(frozen=True)
class WithUnit(Node):
    """``expr[unit]`` - attach a unit to a number."""

    operand: Node
    unit: str

    def children(self):
        return (self.operand,)

    def __str__(self) -> str:
        return f"{_wrap(self.operand, PRECEDENCE['unit'])}[{self.unit}]"


@dataclass(frozen=True)
class ConvertTo(Node):
    """``expr to [unit]`` - convert a quantity to another unit."""

    operand: Node
    unit: str

    def children(self):
        return (self.operand,)

    def __str__(self) -> str:
        return f"{_wrap(self.operand, PRECEDENCE['to'])} to [{self.unit}]"


@dataclass(frozen=True)
class Binary(Node):
    op: str
    left: Node
    right: Node

    def children(self):
        return (self.left, self.right)

    def __str__(self) -> str:
        prec = PRECEDENCE[self.op]
        right_assoc = self.op == "^"
        left = _wrap(self.left, prec + (1 if right_assoc else 0))
        right = _wrap(self.right, prec + (0 if right_assoc else 1))
        if self.op == "^":
            return f"{left}^{right}"
        return f"{left} {self.op} {right}"


@dataclass(frozen=True)
class Call(Node):
    name: str
    args: tuple[Node, ...]

    def children(self):
        return self.args

    def __str__(self) -> str:
        return f"{self.name}(" + ", ".join(str(a) for a in self.args) + ")"


@dataclass(frozen=True)
class Assign(Node):
    """``name := expr`` statement."""

    name: str
    value: Node

    def children(self):
        return (self.value,)

    def __str__(self) -> str:
        return f"{self.name} := {self.value}"


@dataclass(frozen=True)
class FunctionDef(Node):
    """``name(a, b) := expr`` statement."""

    name: str
    params: tuple[str, ...]
    body: Node

    def children(self):
        return (self.body,)

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.params)}) := {self.body}"


def _precedence(node: Node) -> int:
    if isinstance(node, Binary):
        return PRECEDENCE[node.op]
    if isinstance(node, Unary):
        return PRECEDENCE["unary"]
    if isinstance(node, Percent):
        return PRECEDENCE["%"]
    if isinstance(node, WithUnit):
        return PRECEDENCE["unit"]
    if isinstance(node, ConvertTo):
        return PRECEDENCE["to"]
    return 100


def _wrap(node: Node, min_prec: int) -> str:
    text = str(node)
    return f"({text})" if _precedence(node) < min_prec else text


def free_names(node: Node, bound: frozenset[str] = frozenset()) -> set[str]:
    """Return the variable names referenced by ``node`` (case-folded).

    Function names are not included; parameters of a :class:`FunctionDef`
    are treated as bound.
    """
    if isinstance(node, FunctionDef):
        return free_names(node.body, bound | {p.casefold() for p in node.params})
    names: set[str] = set()
    for sub in node.walk():
        if isinstance(sub, Name) and sub.name.casefold() not in bound:
            names.add(sub.name.casefold())
    return names


def called_functions(node: Node) -> set[str]:
    """Return the upper-cased names of all functions called in ``node``."""
    return {sub.name.upper() for sub in node.walk() if isinstance(sub, Call)}
