"""The `ctxbench` command. This module stays light so that a Ctrl-C while the rest loads (click,
pydantic, the subcommands) still ends with one line, not a traceback; the group is `cli`, loaded on
first use."""

from __future__ import annotations

import signal
import sys
from typing import Any

__all__ = ["main", "cli"]


def main() -> None:
    """The console script: run the `ctxbench` group with the one error handler (ctxbench.harness.cli.base)."""
    from ctxbench.harness.errors import Interrupted

    try:
        from ctxbench.harness.cli.app import cli
        from ctxbench.harness.cli.base import terminate_on_sigterm
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        sys.exit(Interrupted.exit_code)
    terminate_on_sigterm()
    try:
        cli(prog_name="ctxbench")
    finally:
        # The command has ended (its exit code is set): a Ctrl-C from here on, while the interpreter
        # shuts down, must not turn that end into a death by signal with nothing said.
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def __getattr__(name: str) -> Any:
    if name == "cli":
        from ctxbench.harness.cli.app import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
