"""Options shared by commands that run an experiment (`run`, `nightly`): `--set` and its shortcuts.

Each shortcut is the same as one documented `--set` (the table below is the one place that says
which); `--strategies` keeps a subset of the file's arms.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any, Callable

import click

from ctxbench.harness.config import ModelConfig, TasksetSpec
from ctxbench.harness.records import Taskset

__all__ = ["experiment_options", "set_option", "SHORTCUTS", "shortcut_overrides", "load_served_taskset", "serve"]

SHORTCUTS: dict[str, str] = {
    "limit": "taskset.limit",
    "tasks": "taskset.ids",
    "tags": "taskset.include_tags",
    "model": "model.name",
    "provider": "model.provider",
    "base_url": "model.base_url",
    "api_key_env": "model.api_key_env",
}
"""Shortcut option (its parameter name) -> the config key it sets."""


def _comma_list(ctx: click.Context, param: click.Parameter, value: str | None) -> list[str] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise click.BadParameter("expected a comma-separated list of names")
    return items


def set_option(help: str = "Override any config key; the value is parsed as YAML. Repeatable.") -> Callable:
    """`--set KEY.PATH=VALUE` (repeatable); the command receives the items as `overrides`."""
    return click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE", help=help)


PROVIDERS = click.Choice(typing.get_args(ModelConfig.model_fields["provider"].annotation))
"""The model providers, as the config model names them (`--provider`)."""

_OPTIONS = [
    set_option(),
    click.option("--limit", type=click.IntRange(1), metavar="N",
                 help="Only the first N tasks (after --tasks/--tags); same as --set taskset.limit=N."),
    click.option("--tasks", callback=_comma_list, metavar="ID,…",
                 help="Only these tasks; same as --set 'taskset.ids=[ID,…]'."),
    click.option("--tags", callback=_comma_list, metavar="TAG,…",
                 help="Only tasks with any of these tags; same as --set 'taskset.include_tags=[TAG,…]'."),
    click.option("--strategies", "strategies", callback=_comma_list, metavar="NAME,…",
                 help="Only these arms of the experiment (by label, or name), in the file's order."),
    click.option("--model", metavar="NAME", help="Model name sent to the provider; same as --set model.name=NAME."),
    click.option("--provider", type=PROVIDERS,
                 help="Same as --set model.provider=P."),
    click.option("--base-url", metavar="URL",
                 help="The model's endpoint: an OpenAI-compatible server's (…/v1), or an Anthropic Messages "
                      "API's root (without /v1); same as --set model.base_url=URL."),
    click.option("--api-key-env", metavar="VAR",
                 help="Name of the environment variable holding the API key; same as --set model.api_key_env=VAR."),
]


def experiment_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add `--set` and the shortcuts; the command receives `overrides`, `strategies` and one parameter
    per entry of SHORTCUTS (pass them to `shortcut_overrides`)."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def shortcut_overrides(overrides: tuple[str, ...], **shortcuts: Any) -> list[str]:
    """The `--set` items, then one `KEY.PATH=VALUE` per shortcut given (values as JSON, which YAML reads)."""
    out = list(overrides)
    for name, value in shortcuts.items():
        if value is not None:
            out.append(f"{SHORTCUTS[name]}={json.dumps(value)}")
    return out


def load_served_taskset(spec: str | None, experiment_taskset: TasksetSpec | None, base: Path) -> Taskset | None:
    """The taskset a served model answers for (`serve-sim`, `gateway`): `--taskset`, else the experiment's
    (with its `repos`), else None.

    Raises:
        InputError: the taskset cannot be read.
    """
    from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path

    repos = None
    if spec is None:
        if experiment_taskset is None:
            return None
        spec = experiment_taskset.path
        repos = base / experiment_taskset.repos if experiment_taskset.repos else None
    return load_taskset(resolve_taskset_path(spec, base), repos)


def serve(backend: Any, host: str, port: int, verbose: bool, banner: Callable[[str], str], notice: str) -> None:
    """Bind an OpenAI-compatible endpoint for `backend`, print `banner(url)` (stdout) and `notice`
    (stderr), and serve until Ctrl-C or SIGTERM, which end the command as they end every other: exit
    130 or 143, so that whatever started the server can tell that it was stopped.

    Raises:
        InputError: the address cannot be bound (a port taken, an address not of this machine).
        Interrupted: Ctrl-C or SIGTERM stopped the server.
    """
    from ctxbench.harness.cli.base import interrupted
    from ctxbench.harness.endpoints.server import make_server
    from ctxbench.harness.errors import InputError

    try:
        server = make_server(backend, host, port, verbose)
    except OSError as exc:
        raise InputError(f"cannot bind {host}:{port}: {exc.strerror or exc}") from exc
    click.echo(banner(f"http://{server.server_address[0]!s}:{server.server_address[1]}/v1"))
    if notice:
        click.echo(notice, err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt as exc:
        raise interrupted(exc, "interrupted: the server stopped") from None
    finally:
        server.server_close()
