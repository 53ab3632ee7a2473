"""The controlled-variable guard: which fixed variables differ between two results folders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxbench.harness.errors import InputError
from ctxbench.harness.records import Manifest, StrategyEntry

__all__ = ["FixedDifference", "FixedVariablesDiffer", "fixed_differences", "check_fixed_variables",
           "strategy_differences", "what_differs"]

_EXECUTION = ("workers", "executor", "ray_address", "output_dir")
"""Config keys that say how an experiment was executed, not what it measured."""
ROUNDS = "sequential"
"""The config key of running in rounds until decided: how many runs were made, not what a run measures."""


@dataclass(frozen=True)
class FixedDifference:
    """One fixed variable that differs between folder A and folder B."""

    variable: str
    """Key of manifest["fixed"]: model, taskset, system_prompt, tools, harness_version, limits."""
    a: str | None
    b: str | None
    details: tuple[str, ...] = ()
    """What differs inside it, e.g. "model.temperature: 0.0 -> 0.7"."""

    def describe(self) -> str:
        """One line: the variable and what differs."""
        if self.details:
            return f"{self.variable}: " + "; ".join(self.details)
        if self.variable == "harness_version":
            return f"harness_version: {self.a} -> {self.b}"
        return f"{self.variable}: hash {_short(self.a)} -> {_short(self.b)}"


class FixedVariablesDiffer(InputError):
    """Two folders were compared whose fixed variables differ (and the comparison was not forced)."""

    def __init__(self, differences: list[FixedDifference]) -> None:
        self.differences = differences
        lines = "\n".join(f"  - {d.describe()}" for d in differences)
        super().__init__("refusing to compare: the fixed variables differ\n" + lines
                         + "\npass --force to compare anyway (the report then lists these differences)")


def _short(value: str | None) -> str:
    return "(missing)" if value is None else value[:12]


def _flatten(value: Any, prefix: str) -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}"))
        return out
    return {prefix: value}


def _dict_changes(a: Any, b: Any, prefix: str) -> tuple[str, ...]:
    fa = _flatten({} if a is None else a, prefix)
    fb = _flatten({} if b is None else b, prefix)
    return tuple(f"{k}: {fa.get(k, '(missing)')!r} -> {fb.get(k, '(missing)')!r}"
                 for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k))


def _details(variable: str, a: Manifest, b: Manifest) -> tuple[str, ...]:
    if variable in ("model", "limits"):
        return _dict_changes(a.config.get(variable), b.config.get(variable), variable)
    if variable == "taskset":
        changes = list(_dict_changes(a.config.get("taskset"), b.config.get("taskset"), "taskset"))
        if not changes:
            changes.append(f"same taskset spec, different content (hash {_short(a.fixed.get(variable))} -> "
                           f"{_short(b.fixed.get(variable))})")
        return tuple(changes)
    return ()


def fixed_differences(a: Manifest, b: Manifest) -> list[FixedDifference]:
    """Every fixed variable whose hash (or version) differs; for model and limits, the keys that differ."""
    keys = list(dict.fromkeys([*a.fixed, *b.fixed]))
    return [FixedDifference(k, a.fixed.get(k), b.fixed.get(k), _details(k, a, b))
            for k in keys if a.fixed.get(k) != b.fixed.get(k)]


def check_fixed_variables(a: Manifest, b: Manifest, force: bool = False) -> list[FixedDifference]:
    """The differences between two manifests, refused unless forced.

    Raises:
        FixedVariablesDiffer: some fixed variable differs and `force` is false.
    """
    differences = fixed_differences(a, b)
    if differences and not force:
        raise FixedVariablesDiffer(differences)
    return differences


def _strategies_by_label(m: Manifest) -> dict[str, StrategyEntry]:
    return {s.key: s for s in m.strategies}


def strategy_differences(a: Manifest, b: Manifest) -> list[str]:
    """Strategies (by result label) whose name or params differ, or that only one side ran."""
    sa, sb = _strategies_by_label(a), _strategies_by_label(b)
    out = []
    for label in dict.fromkeys([*sa, *sb]):
        if label not in sb:
            out.append(f"strategy {label}: only in the earlier run")
        elif label not in sa:
            out.append(f"strategy {label}: new")
        else:
            changes = []
            if sa[label].name != sb[label].name:
                changes.append(f"name: {sa[label].name!r} -> {sb[label].name!r}")
            changes += _dict_changes(sa[label].params, sb[label].params, "params")
            if changes:
                out.append(f"strategy {label}: " + "; ".join(changes))
    return out


def what_differs(a: Manifest, b: Manifest, rounds: bool = True) -> list[str]:
    """Everything that differs between two runs of an experiment, one line each: fixed variables (with
    the config keys inside them), strategy params under the same label, and any other config key
    (`rounds=False`: not the `sequential` block, which says when the runs stopped, not what they measured;
    a nightly compares runs in rounds with runs that were not)."""
    lines = [d.describe() for d in fixed_differences(a, b)]
    lines += strategy_differences(a, b)
    covered = ("model", "limits", "taskset", "strategies", "system_prompt", *_EXECUTION, *(() if rounds else (ROUNDS,)))
    other = {k: v for k, v in a.config.items() if k not in covered}
    other_b = {k: v for k, v in b.config.items() if k not in covered}
    keys = sorted(set(other) | set(other_b))
    lines += [c for k in keys for c in _dict_changes(other.get(k), other_b.get(k), k)]
    if a.config.get("system_prompt") != b.config.get("system_prompt") and not any(
            line.startswith("system_prompt") for line in lines):
        lines.append("system_prompt: changed")
    return lines
