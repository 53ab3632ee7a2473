"""Errors that stop a command with a clear message and exit code 2."""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(Exception):
    """Bad user input (config, taskset, results folder): message names the file and the key."""

    exit_code = 2
