"""How every command ends: the one handler that prints an error as `error:` lines and exits with its code.

Every command and group is a `Command` or `Group` of this module, so the handler runs whether a
command is invoked through `ctxbench` or on its own (as tests do). Commands raise errors of the
tree in ctxbench.harness.errors; none prints an error or picks an exit code itself.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import Any, NoReturn, Sequence

import click

from ctxbench.harness.errors import CtxbenchError, InputError, Interrupted, Terminated, did_you_mean, from_os_error

__all__ = ["Command", "Group", "fail", "as_error", "terminate_on_sigterm", "CONTEXT_SETTINGS"]

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}


class _Terminate(KeyboardInterrupt):
    """SIGTERM, delivered where Ctrl-C would be, so every clean-up for Ctrl-C runs for it too."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminate()


def terminate_on_sigterm() -> None:
    """From now on SIGTERM stops the command as Ctrl-C does (and exits 143)."""
    signal.signal(signal.SIGTERM, _on_sigterm)


def interrupted(exc: BaseException, what: str = "interrupted") -> Interrupted:
    """The error for Ctrl-C (or SIGTERM) caught as `exc`; `what` says what it stopped."""
    cause = exc.__cause__ if isinstance(exc, click.exceptions.Abort) else exc
    if isinstance(cause, _Terminate):
        return Terminated(what.replace("interrupted", "terminated (SIGTERM)", 1))
    return Interrupted(what)


def _usage_message(exc: click.UsageError) -> str:
    possibilities = getattr(exc, "possibilities", None)
    message = " ".join((exc.message if possibilities else exc.format_message()).split()).rstrip(".")
    if possibilities:
        message += f"; did you mean {', '.join(possibilities)}?"
    command = exc.ctx.command_path if exc.ctx is not None else "ctxbench"
    return f"{message} (see `{command} --help`)"


def as_error(exc: BaseException) -> CtxbenchError | None:
    """The error of the tree that `exc` stands for, or None for a bug (its traceback is shown)."""
    if isinstance(exc, CtxbenchError):
        return exc
    if isinstance(exc, (KeyboardInterrupt, click.exceptions.Abort)):
        return interrupted(exc)
    if isinstance(exc, click.UsageError):
        return InputError(_usage_message(exc))
    if isinstance(exc, click.ClickException):
        return InputError(" ".join(exc.format_message().split()))
    if isinstance(exc, OSError):
        return from_os_error(exc)
    return None


def fail(error: CtxbenchError) -> NoReturn:
    """Print each problem of `error` as one `error:` line and exit with its code."""
    for problem in error.problems:
        click.echo(f"error: {problem}", err=True)
    sys.exit(error.exit_code)


class _Handled(click.Command):
    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except BaseException as exc:
            error = as_error(exc)
            if error is None or not standalone_mode:
                raise
            fail(error)
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:  # before click turns it into "Aborted!"
            raise interrupted(exc) from None


class Command(_Handled, click.Command):
    """A ctxbench command: errors end it through `fail`; `-h` is `--help`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", CONTEXT_SETTINGS)
        super().__init__(*args, **kwargs)


class Group(_Handled, click.Group):
    """A ctxbench command group: as `Command`, and an unknown command says "did you mean"."""

    command_class = Command
    group_class = type

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", CONTEXT_SETTINGS)
        super().__init__(*args, **kwargs)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        unknown = name and not name.startswith("-") and self.get_command(ctx, name) is None
        if unknown and not ctx.resilient_parsing:
            hint = did_you_mean(name, self.list_commands(ctx))
            raise click.UsageError(f"no such command {name!r}{hint}", ctx)
        return super().resolve_command(ctx, args)
