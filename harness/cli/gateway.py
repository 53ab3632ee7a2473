"""`ctxbench gateway`."""

from __future__ import annotations

from pathlib import Path

import click

from ctxbench.harness.cli.base import Command
from ctxbench.harness.cli.options import PROVIDERS, load_served_taskset, serve, set_option, shortcut_overrides
from ctxbench.harness.errors import InputError


@click.command("gateway", cls=Command)
@click.option("--strategy", required=True, metavar="NAME", help="The context strategy applied to every request.")
@click.option("--params", "params_yaml", metavar="YAML", help="The strategy's parameters, as a YAML mapping.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), metavar="EXPERIMENT.yaml",
              help="Take the model section (and the taskset, for the simulator) from this experiment.")
@set_option("Override a key of the --config file (or of the default model section), as in `ctxbench run`.")
@click.option("--model", metavar="NAME", help="Model name; same as --set model.name=NAME.")
@click.option("--provider", type=PROVIDERS, help="Same as --set model.provider=P.")
@click.option("--base-url", metavar="URL", help="The model's endpoint (OpenAI-compatible, or for anthropic the API root without /v1); "
                   "same as --set model.base_url=URL.")
@click.option("--api-key-env", metavar="VAR", help="Variable holding the model's API key; same as --set model.api_key_env=VAR.")
@click.option("--taskset", "taskset_spec", metavar="T",
              help="Taskset folder, .jsonl or built-in name: the simulator's tasks, and the test commands that "
                   "read as test runs.")
@click.option("--transcripts", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Write one transcript per conversation here (a turn per request, with the strategy's ledger).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8100, show_default=True, type=click.IntRange(0, 65535),
              help="Port to bind; 0 picks a free one (the address is printed on start).")
@click.option("-v", "--verbose", is_flag=True, help="Log every request to stderr.")
def gateway(strategy: str, params_yaml: str | None, config_path: Path | None, overrides: tuple[str, ...],
            model: str | None, provider: str | None, base_url: str | None, api_key_env: str | None,
            taskset_spec: str | None, transcripts: Path | None, host: str, port: int, verbose: bool) -> None:
    """Serve a context strategy as a model endpoint in front of a model, for any agent (OpenAI Chat
    Completions, Anthropic Messages, OpenAI Responses and Gemini API requests)."""
    from ctxbench.harness.endpoints.model_section import load_model_section
    from ctxbench.harness.endpoints.gateway import Gateway
    from ctxbench.harness.yamlfile import parse_yaml

    settings = shortcut_overrides(overrides, model=model, provider=provider, base_url=base_url, api_key_env=api_key_env)
    model_config, experiment_taskset, base = load_model_section(config_path, settings)
    params = parse_yaml(params_yaml, "--params") if params_yaml else None
    if params is not None and not isinstance(params, dict):
        raise InputError("--params: expected a YAML mapping of the strategy's parameters")
    taskset = load_served_taskset(taskset_spec, experiment_taskset, base)
    if transcripts is not None and transcripts.exists() and (not transcripts.is_dir() or any(transcripts.iterdir())):
        raise InputError(f"--transcripts {transcripts}: not an empty folder; give a new one")
    simulated = model_config.provider == "sim"
    serve(Gateway(strategy, params, model_config, taskset, transcripts), host, port, verbose,
          lambda url: f"gateway: {strategy} in front of {model_config.provider} model {model_config.name!r}, "
                      f"listening on {url}",
          "gateway: the model is the built-in simulator, a stand-in for a model, not a model." if simulated else "")
