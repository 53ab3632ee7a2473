"""`ctxbench serve-sim`."""

from __future__ import annotations

from pathlib import Path

import click

from ctxbench.harness.cli.base import Command
from ctxbench.harness.cli.options import load_served_taskset, serve, set_option
from ctxbench.harness.errors import InputError


@click.command("serve-sim", cls=Command)
@click.option("--taskset", "taskset_spec", metavar="T",
              help="Taskset folder, .jsonl or built-in name (default: the --config's taskset).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to bind; 0 picks a free one (the address is printed on start).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), metavar="EXPERIMENT.yaml",
              help="Take the simulator's parameters, context window, output reserve, tokenizer and model name "
                   "from this experiment's `model` section (default: the built-in defaults).")
@set_option("Override a key of the --config file (without one, a model.* key of the defaults), as in "
            "`ctxbench run`. Repeatable.")
@click.option("-v", "--verbose", is_flag=True, help="Log every request to stderr.")
def serve_sim(taskset_spec: str | None, host: str, port: int, config_path: Path | None,
              overrides: tuple[str, ...], verbose: bool) -> None:
    """Serve the simulated model as an OpenAI-compatible endpoint (/v1/chat/completions, /v1/models)."""
    from ctxbench.harness.endpoints.model_section import load_model_section
    from ctxbench.harness.endpoints.serve_sim import SimBackend

    model, experiment_taskset, base = load_model_section(config_path, list(overrides))
    taskset = load_served_taskset(taskset_spec, experiment_taskset, base)
    if taskset is None:
        raise InputError("give --taskset (or --config with a taskset)")
    serve(SimBackend(taskset, model), host, port, verbose,
          lambda url: f"serve-sim: listening on {url} (model {model.name!r}, taskset {taskset.name!r}, "
                      f"{len(taskset.tasks)} tasks, window {model.context_window})",
          "serve-sim: the built-in simulator, a stand-in for a model, not a model. Ctrl-C stops it.")
