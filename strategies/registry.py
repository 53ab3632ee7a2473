"""The one registry of context strategies: built-ins by decorator, third parties by entry point."""

from __future__ import annotations

import difflib
from importlib.metadata import entry_points, packages_distributions
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from ctxbench.harness.errors import did_you_mean, plain_problem
from ctxbench.harness.errors import InputError
from ctxbench.harness.protocols import RepoView

__all__ = ["register_strategy", "get_strategy_class", "available_strategies", "create_strategy",
           "validate_params", "param_problems", "arm_problems", "StrategyError", "StrategyCollision",
           "StrategyServices", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "ctxbench.strategies"

_REGISTRY: dict[str, type[Any]] = {}
"""Strategy classes by name. `type[Any]`: a class is checked for `Params` when registered, and its other
members (`build`, `enforces_budget`) by `ctxbench.strategies.testing.check_strategy`."""
_entry_points_loaded = False

T = TypeVar("T", bound=type)


class StrategyError(InputError, ValueError):
    """Unknown strategy, duplicate registration, or invalid parameters."""


class StrategyCollision(StrategyError, InputError):
    """Two installed packages register a strategy under the same name (exit 2 on the command line)."""

    def __init__(self, message: str) -> None:
        InputError.__init__(self, message)


def register_strategy(name: str) -> Callable[[T], T]:
    """Class decorator: register a strategy under `name` (the only place the name is written).

    The class must define a nested pydantic model `Params` and accept
    `(params, services: StrategyServices | None = None)`.
    """

    def decorate(cls: T) -> T:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise StrategyError(f"strategy {name!r} is already registered by {_REGISTRY[name].__module__}")
        params = getattr(cls, "Params", None)
        if not (isinstance(params, type) and issubclass(params, BaseModel)):
            raise StrategyError(f"strategy {name!r} needs a pydantic `Params` class")
        strategy: type[Any] = cls
        strategy.name = name
        _REGISTRY[name] = strategy
        return cls

    return decorate


def _package_of(cls: type[Any]) -> str:
    """The distribution that ships `cls` (e.g. `ctxbench`), or its top-level module when none is known."""
    top = cls.__module__.split(".")[0]
    dists = packages_distributions().get(top) or [top]
    return ", ".join(dict.fromkeys(dists))


def _load_entry_points() -> None:
    """Register the third-party strategies. A name that is already taken is an error naming both packages.

    Raises:
        StrategyCollision: two strategies (built-in or third-party) share a name.
        StrategyError: an entry point fails to load.
    """
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        package = ep.dist.name if ep.dist is not None else ep.value.split(":")[0].split(".")[0]
        if ep.name in _REGISTRY and _REGISTRY[ep.name].__module__ != ep.value.split(":")[0]:
            taken = _REGISTRY[ep.name]
            raise StrategyCollision(
                f"strategy {ep.name!r} of package {package} ({ep.value}) has the name of the strategy of package "
                f"{_package_of(taken)} ({taken.__module__}:{taken.__qualname__}); one of the two must be renamed "
                "or uninstalled")
        try:
            cls = ep.load()
        except Exception as exc:
            raise StrategyError(f"entry point {ep.name!r} ({ep.value}) failed to load: {exc}") from exc
        if ep.name not in _REGISTRY:
            register_strategy(ep.name)(cls)
    _entry_points_loaded = True


def available_strategies() -> dict[str, type[Any]]:
    """Every registered strategy, built-in and third-party, by name."""
    _load_entry_points()
    return dict(sorted(_REGISTRY.items()))


def get_strategy_class(name: str) -> type[Any]:
    """The class registered under `name`; the error suggests close names."""
    registry = available_strategies()
    if name not in registry:
        close = difflib.get_close_matches(name, registry, n=1)
        hint = f" did you mean {close[0]!r}?" if close else ""
        raise StrategyError(f"unknown strategy {name!r};{hint} available: {', '.join(registry)}")
    return registry[name]


def arm_problems(strategies: Any) -> list[tuple[str, str]]:
    """Unknown strategies and bad parameters in an experiment's `strategies` list, for every arm whose
    shape is right, as `(key.path, problem)` pairs (the config checks the shape)."""
    if not isinstance(strategies, list):
        return []
    problems = []
    for i, spec in enumerate(strategies):
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            continue
        try:
            get_strategy_class(spec["name"])
        except StrategyError as exc:
            problems.append((f"strategies.{i}.name", str(exc)))
            continue
        params = spec.get("params") or {}
        if isinstance(params, dict):
            for problem in param_problems(spec["name"], params):
                key, _, msg = problem.partition(": ")
                problems.append((f"strategies.{i}.{key}", msg))
    return problems


def param_problems(name: str, params: dict[str, Any] | None) -> list[str]:
    """Each problem of `params` for strategy `name` as one `params.key: problem` line (empty when valid).

    Unknown parameters say "did you mean …" when a close name exists.
    """
    cls = get_strategy_class(name)
    try:
        cls.Params(**(params or {}))
    except ValidationError as exc:
        return [_describe_param(name, cls, e) for e in exc.errors()]
    except TypeError as exc:
        return [f"params: {exc}"]
    return []


def _describe_param(name: str, cls: type[Any], error: ErrorDetails) -> str:
    where = ".".join(["params", *(str(p) for p in error["loc"])])
    if error["type"] == "extra_forbidden":
        hint = (did_you_mean(str(error["loc"][-1]), cls.Params.model_fields)
                or f"; parameters: {', '.join(cls.Params.model_fields) or 'none'}")
        return f"{where}: unknown parameter of strategy {name!r}{hint}"
    return f"{where}: {plain_problem(dict(error))}"


def validate_params(name: str, params: dict[str, Any] | None) -> BaseModel:
    """Validate `params` for strategy `name`; unknown parameters are errors."""
    problems = param_problems(name, params)
    if problems:
        raise StrategyError(f"invalid params for strategy {name!r}: {'; '.join(problems)}")
    return get_strategy_class(name).Params(**(params or {}))


@dataclass(frozen=True)
class StrategyServices:
    """What the harness lends a strategy for one run."""

    model: Any = None
    """The experiment's model (ctxbench.harness.models), for strategies that call it (summarizer, model mode)."""
    repo: RepoView | None = None
    """Read-only view of the run's workspace files (file_selector)."""


def create_strategy(name: str, params: dict[str, Any] | None = None,
                    services: StrategyServices | None = None) -> Any:
    """A fresh strategy instance (one per run)."""
    cls = get_strategy_class(name)
    return cls(validate_params(name, params), services or StrategyServices())
