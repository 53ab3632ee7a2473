import pytest
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.config import load_config
from ctxbench.harness.errors import InputError


def run_cli(*args):
    return CliRunner().invoke(cli, list(args))


def test_defaults_and_overrides(experiment_file):
    path = experiment_file()
    config = load_config(path, ["model.context_window=9000", "repeats=5", "strategies=[{name: baseline}]",
                                "limits.max_turns=7"])
    assert config.model.context_window == 9000 and config.repeats == 5 and config.limits.max_turns == 7
    assert config.model.provider == "sim" and config.model.tokenizer == "cl100k_base"


@pytest.mark.parametrize("overrides, expected", [
    ({"colour": "blue"}, "colour: unknown key"),
    ({"repeats": "many"}, "repeats: expected a whole number (got 'many')"),
    ({"model": {"context_window": -5}}, "model.context_window"),
    ({"strategies": [{"name": "baselin"}]}, "unknown strategy 'baselin'; did you mean 'baseline'?"),
    ({"strategies": [{"name": "baseline", "params": {"x": 1}}]}, "strategies.0.params.x: unknown parameter of strategy 'baseline'"),
    ({"model": {"max_retries": 4}}, "model.max_retries: unknown key; replaced by model.retry_budget_s"),
    ({"model": {"pricing": {"input": float("inf"), "output": 1.0}}}, "model.pricing.input: expected a finite number"),
    ({"model": {"pricing": {"input": 1.0, "output": float("nan")}}}, "model.pricing.output: expected a finite number"),
])
def test_config_errors_exit_2_with_file_and_key(experiment_file, tmp_path, overrides, expected):
    path = experiment_file(**overrides)
    out = tmp_path / "out"
    result = run_cli("run", str(path), "--output", str(out))
    assert result.exit_code == 2
    assert str(path) in result.output and expected in result.output
    assert not out.exists()


def test_malformed_yaml(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: [unclosed\n")
    result = run_cli("run", str(path))
    assert result.exit_code == 2 and "not valid YAML" in result.output


def test_bad_override_syntax(experiment_file):
    with pytest.raises(InputError, match="KEY.PATH=VALUE"):
        load_config(experiment_file(), ["repeats"])


def test_missing_taskset(experiment_file, tmp_path):
    result = run_cli("run", str(experiment_file(taskset="no-such-taskset")), "--output", str(tmp_path / "o"))
    assert result.exit_code == 2 and "taskset 'no-such-taskset' not found" in result.output
