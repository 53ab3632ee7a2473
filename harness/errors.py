"""Errors that stop a command with a clear message and exit code 2."""

from __future__ import annotations

import difflib
from typing import Iterable

__all__ = ["InputError", "EndpointUnavailable", "did_you_mean"]


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
