"""The one registry of environments: the built-ins by name, third parties by entry point.

A taskset names its environment with `environment: {backend: NAME}`. The built-ins are `local` and
`docker` (`builtin_environments`); a package adds one with an entry point in the group
`ctxbench.environments` (`modal = "ctxbench_modal:ModalEnvironment"`), loaded only when a taskset
names it. Listing the installed names (`installed_environments`) reads the packages' metadata and
imports nothing of theirs. A name taken twice (by two packages, or by a package and a built-in) is an
error naming both.

This module and ctxbench.harness.swebench.instances import each other's package through the docker
environment (docker_environment -> swebench.grading -> the swebench package -> instances -> here), so
both import modules, not names, and the built-in table is read when it is used.
"""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from pydantic import ValidationError

from ctxbench.harness.environments import docker_environment, local
from ctxbench.harness.environments.interface import Environment
from ctxbench.harness.errors import InputError, did_you_mean, validation_problems
from ctxbench.harness.records import Task, TasksetEnvironment

__all__ = ["ENTRY_POINT_GROUP", "builtin_environments", "installed_environments", "get_environment",
           "environment_for", "check_backend", "check_setting"]

ENTRY_POINT_GROUP = "ctxbench.environments"

_REQUIRED = ("containers", "setting_problems", "interpreter", "problem", "warm", "prepare")
"""What an environment class must have (the members of `Environment`)."""

_found: tuple[tuple[str, ...], dict[str, EntryPoint]] | None = None
"""The entry points of the group as of a `sys.path` (read again when it changes)."""
_instances: dict[str, Environment] = {}


def builtin_environments() -> dict[str, type[Any]]:
    """The built-in environment classes by name."""
    return {"docker": docker_environment.DockerEnvironment, "local": local.LocalEnvironment}


def _entry_points() -> dict[str, EntryPoint]:
    """The group's entry points by name, read once per `sys.path`.

    Raises:
        InputError: an entry point takes a built-in's name, or two packages register one name.
    """
    global _found
    path = tuple(sys.path)
    if _found is not None and _found[0] == path:
        return _found[1]
    builtins = builtin_environments()
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in builtins:
            raise InputError(f"environment {ep.name!r} of package {_package(ep)} ({ep.value}) has the name of "
                             "a built-in environment; the package must rename it")
        other = found.get(ep.name)
        if other is not None and other.value != ep.value:
            raise InputError(f"environment {ep.name!r} is registered by package {_package(other)} ({other.value}) "
                             f"and by package {_package(ep)} ({ep.value}); one of the two must be renamed or "
                             "uninstalled")
        found.setdefault(ep.name, ep)
    _found = (path, found)
    for name in [n for n in _instances if n not in builtins]:  # another path: another package may serve it
        del _instances[name]
    return found


def _package(ep: EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else ep.value.split(":")[0].split(".")[0]


def installed_environments() -> list[str]:
    """Every environment name a taskset may give, built-in and third-party, sorted (nothing loaded)."""
    return sorted({*builtin_environments(), *_entry_points()})


def get_environment(name: str) -> Environment:
    """The environment registered under `name` (one instance per process; a third-party one is loaded
    the first time it is asked for).

    Raises:
        InputError: no such environment (naming the installed ones), or its entry point does not load
            or gives no environment class.
    """
    if name in _instances:
        return _instances[name]
    cls = builtin_environments().get(name)
    if cls is None:
        ep = _entry_points().get(name)
        if ep is None:
            raise InputError(_unknown(name))
        cls = _load(name, ep)
    _instances[name] = cls()
    return _instances[name]


def _unknown(name: str) -> str:
    installed = installed_environments()
    return f"unknown environment {name!r}{did_you_mean(name, installed)} (installed: {', '.join(installed)})"


def _load(name: str, ep: EntryPoint) -> type[Any]:
    try:
        cls = ep.load()
    except Exception as exc:
        raise InputError(f"environment {name!r}: its entry point {ep.value} failed to load: {exc}") from exc
    missing = [m for m in _REQUIRED if not hasattr(cls, m)] if isinstance(cls, type) else ["(not a class)"]
    if missing:
        raise InputError(f"environment {name!r} ({ep.value}) is not an environment: it lacks "
                         f"{', '.join(missing)} (docs/environments.md, \"Writing an environment\")")
    return cls


def environment_for(task: Task) -> Environment:
    """The environment the task runs in (`task.runs_in.backend`)."""
    return get_environment(task.runs_in.backend)


def check_backend(setting: TasksetEnvironment, where: str) -> None:
    """That `setting` names an installed environment. `where` says where the setting was read: a key
    path (`<file>: environment`), or a file whose top level it is (`<file>:`).

    Raises:
        InputError: one line, `<where>.backend: unknown environment ... (installed: ...)`.
    """
    if setting.backend not in builtin_environments() and setting.backend not in _entry_points():
        raise InputError(f"{_key(where, 'backend')}: {_unknown(setting.backend)}")


def _key(where: str, key: str) -> str:
    return f"{where} {key}" if where.endswith(":") else f"{where}.{key}"


def check_setting(setting: TasksetEnvironment, where: str) -> None:
    """That a task's `environment` suits the environment it names: a known name, the keys it takes, and
    its `options` as its `Options` model reads them.

    Raises:
        InputError: one line per problem, each starting with `where`.
    """
    check_backend(setting, where)
    environment = get_environment(setting.backend)
    problems = [f"{where.rstrip(':')}: {problem}" for problem in environment.setting_problems(setting)]
    options = getattr(type(environment), "Options", None)
    if options is None and setting.options:
        problems.append(f"{_key(where, 'options')}: environment {setting.backend!r} takes no options")
    elif options is not None:
        try:
            options.model_validate(setting.options)
        except ValidationError as exc:
            problems += [f"{_key(where, 'options')}.{problem}" for problem in validation_problems(exc)]
    if problems:
        raise InputError(*problems)
