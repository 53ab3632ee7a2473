"""The errors a user can meet: one tree under `CtxbenchError`, each class with the exit code the
command line ends with (the table in docs/commands.md is tested against `exit_codes()`).

The command line prints every problem of an error as one `error:` line and exits with its code; a
traceback means a bug in ctxbench. Exceptions that steer a run from inside (`AgentStopped`,
`ToolError`, `ContextOverflow`, `ModelError`, `SelectionError`) never reach the user and stay outside
the tree.
"""

from __future__ import annotations

import difflib
import errno
from typing import Any, Callable, ClassVar, Iterable

__all__ = ["CtxbenchError", "InputError", "EndpointUnavailable", "ExperimentAborted", "DiskFull", "CheckFailed",
           "Regressed", "CantTell", "Interrupted", "Terminated", "exit_codes", "from_os_error", "did_you_mean", "plain_problem",
           "validation_details", "validation_problems"]


class CtxbenchError(Exception):
    """Base of every error a user can meet. Several problems found at once are given as several
    arguments; each is printed as its own `error:` line."""

    exit_code: ClassVar[int] = 1
    meaning: ClassVar[str] = ""
    """What the exit code says, for the docs' exit-code table."""

    def __init__(self, message: str = "", *more: str) -> None:
        super().__init__("\n".join((message, *more)))
        self.problems: tuple[str, ...] = (message, *more)


class CheckFailed(CtxbenchError):
    """A check ran and found a problem (a strategy breaks the contract, a task is invalid)."""

    exit_code = 1
    meaning = "a check found a problem: a strategy breaks the contract, a task is invalid, a strategy regressed"


class Regressed(CheckFailed):
    """`nightly`: a strategy regressed against the previous run."""


class CantTell(CheckFailed):
    """`nightly`: no strategy regressed, but one was lower on some task, or its tokens rose, by an amount the
    runs cannot tell from noise."""

    exit_code = 4
    meaning = ("nightly cannot tell: no strategy regressed, but one's completion was lower on some task, or its "
               "tokens rose, by an amount these runs cannot tell from noise (not 0, so that a fall it cannot see "
               "never passes as none)")


class InputError(CtxbenchError):
    """Bad user input (config, taskset, results folder, command line): the message names the file and
    the key; nothing is written."""

    exit_code = 2
    meaning = "bad input (a file, a key, an option, a results folder that cannot be read or written): nothing written"


class EndpointUnavailable(InputError):
    """The model endpoint cannot be used (key variable unset, nothing answers, key refused), found
    before anything is written."""

    exit_code = 3
    meaning = "the model endpoint failed its check before the run: nothing written"


class ExperimentAborted(CtxbenchError):
    """The experiment cannot go on: a fatal provider error (authentication, unknown model, bad
    request), runs lost to an endpoint that stayed down (the breaker), or a worker process died. The runs
    recorded stay."""

    exit_code = 3
    meaning = ("the experiment stopped (fatal provider error, runs lost to an endpoint down past the retry budget, "
               "a dead worker): the runs recorded stay, --resume continues")


class DiskFull(ExperimentAborted):
    """No space left on the device (or over quota): the runs recorded stay valid."""

    meaning = "no space left on the device: runs.jsonl holds the runs recorded, --resume continues"


class Interrupted(CtxbenchError):
    """Ctrl-C (SIGINT)."""

    exit_code = 130
    meaning = "interrupted (Ctrl-C): the runs recorded stay, --resume continues"


class Terminated(Interrupted):
    """SIGTERM: the same clean stop as Ctrl-C."""

    exit_code = 143
    meaning = "terminated (SIGTERM): the same clean stop as Ctrl-C"


def exit_codes() -> dict[int, list[str]]:
    """Every exit code of the tree with what it means (0 is success), in code order."""
    out: dict[int, list[str]] = {0: ["done"]}
    pending: list[type[CtxbenchError]] = [CtxbenchError]
    while pending:
        cls = pending.pop(0)
        pending += cls.__subclasses__()
        if cls.__module__ != __name__ or not cls.meaning:
            continue  # classes elsewhere inherit a code (and its meaning) from this module
        meanings = out.setdefault(cls.exit_code, [])
        if cls.meaning not in meanings:
            meanings.append(cls.meaning)
    return dict(sorted(out.items()))


_FULL = (errno.ENOSPC, errno.EDQUOT)
_DENIED = (errno.EACCES, errno.EPERM, errno.EROFS)


def from_os_error(exc: OSError) -> CtxbenchError | None:
    """The user's error behind an OSError that escaped a command: a full disk, or a file or folder
    that cannot be written or read; None for anything else (a bug)."""
    where = f"{exc.filename}: " if exc.filename else ""
    reason = exc.strerror or str(exc)
    if exc.errno in _FULL:
        return DiskFull(f"{where}{reason} (the disk is full: free some space)")
    if exc.errno in _DENIED:
        return InputError(f"{where}{reason}: make it writable, or choose another folder")
    return None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`"; did you mean 'x'?"` when one of `choices` is close to `name`, else an empty string."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


_PLAIN_WORDS = {
    "missing": "missing (required)",
    "extra_forbidden": "unknown key",
    "model_type": "expected a mapping",
    "model_attributes_type": "expected a mapping",
    "dict_type": "expected a mapping",
    "list_type": "expected a list",
    "string_type": "expected a string",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
}


def plain_problem(error: Any) -> str:
    """What one pydantic error says, in our words (no class names), with the value it got."""
    kind = error["type"]
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    msg = _PLAIN_WORDS.get(kind, str(error["msg"]).replace("Input should be", "expected"))
    if kind not in ("missing", "extra_forbidden") and "input" in error:
        got = repr(error["input"])
        msg = f"{msg} (got {got if len(got) <= 60 else got[:57] + '...'})"
    return msg


UnknownKey = Callable[[tuple[Any, ...]], str]
"""Words for an unknown key at a key path (e.g. with "did you mean"), instead of "unknown key"."""


def validation_details(exc: Any, prefix: str = "", unknown: UnknownKey | None = None) -> list[tuple[str, str]]:
    """Every error of a pydantic ValidationError as (key.path, problem), in our words (no class names).

    Args:
        exc: The ValidationError.
        prefix: Put before each key path (e.g. `params`).
        unknown: Words for an unknown key, given its key path.
    """
    out = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        where = ".".join(str(p) for p in (*([prefix] if prefix else []), *loc)) or "(top level)"
        problem = unknown(loc) if unknown is not None and error["type"] == "extra_forbidden" else plain_problem(error)
        out.append((where, problem))
    return out


def validation_problems(exc: Any, prefix: str = "", unknown: UnknownKey | None = None) -> list[str]:
    """Every error of a pydantic ValidationError as one `key.path: problem` line (see validation_details)."""
    return [f"{where}: {problem}" for where, problem in validation_details(exc, prefix, unknown)]
