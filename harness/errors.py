"""Errors that stop a command: bad input (exit 2) and an experiment that cannot go on (exit 3)."""

from __future__ import annotations

import difflib
from typing import Any, Iterable

__all__ = ["InputError", "EndpointUnavailable", "ExperimentAborted", "did_you_mean", "plain_problem"]


class InputError(Exception):
    """Bad user input (config, taskset, results folder): message names the file and the key.

    Several problems found at once are given as several arguments, one line each; the command line
    prints each as its own `error:` line.
    """

    exit_code = 2

    def __init__(self, message: str = "", *more: str) -> None:
        super().__init__("\n".join((message, *more)))
        self.problems: tuple[str, ...] = (message, *more)


class EndpointUnavailable(InputError):
    """The model endpoint cannot be used (key variable unset, nothing answers, key refused), found
    before anything is written: exit code 3."""

    exit_code = 3


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`"; did you mean 'x'?"` when one of `choices` is close to `name`, else an empty string."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


_PLAIN_WORDS = {
    "missing": "missing (required)",
    "model_type": "expected a mapping",
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


def plain_problem(error: dict[str, Any]) -> str:
    """What one pydantic error says, in our words (no class names), with the value it got."""
    kind = error["type"]
    if kind == "value_error":
        return error["msg"].removeprefix("Value error, ")
    msg = _PLAIN_WORDS.get(kind, error["msg"].replace("Input should be", "expected"))
    if kind != "missing" and "input" in error:
        got = repr(error["input"])
        msg = f"{msg} (got {got if len(got) <= 60 else got[:57] + '...'})"
    return msg


class ExperimentAborted(RuntimeError):
    """The experiment cannot go on: a fatal provider error (authentication, unknown model, bad
    request), or a worker process died."""
