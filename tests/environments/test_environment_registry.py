"""Environments chosen by name: a third-party one installed through a real entry point runs the smoke
experiment as `local` does, its options checked at load; an unknown backend is one line and exit 2 with
nothing written. No docker needed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.environments import environment_for, get_environment, installed_environments
from ctxbench.harness.environments.local import LocalEnvironment
from ctxbench.harness.errors import InputError
from ctxbench.harness.records import TasksetEnvironment
from ctxbench.harness.tasks.taskset import load_taskset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TASKS = ["calc-median-even-length", "calc-fahrenheit-to-celsius", "calc-percentile-upper-bound", "textutils-contractions"]


def install(site: Path, monkeypatch, entry_points: str, name: str = "ctxbench-toy-environment") -> None:
    """Put a distribution on sys.path whose metadata declares `entry_points` (entry_points.txt), as
    `pip install` of a package with `[project.entry-points."ctxbench.environments"]` would."""
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    monkeypatch.syspath_prepend(str(site))


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy environment (tests/fixtures/toy_environment) installed under the name `toy`."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    install(tmp_path / "site", monkeypatch, "[ctxbench.environments]\ntoy = toy_environment:ToyEnvironment\n")


def taskset_with(tmp_path: Path, smoke_dir: Path, environment: dict | None) -> Path:
    folder = tmp_path / "taskset"
    shutil.copytree(smoke_dir, folder)
    data = yaml.safe_load((folder / "taskset.yaml").read_text())
    data["tasks"] = [t for t in data["tasks"] if t["id"] in TASKS]
    if environment is not None:
        data["environment"] = environment
    (folder / "taskset.yaml").write_text(yaml.safe_dump(data))
    return folder


def run(experiment_file, folder: Path, out: Path) -> list[dict]:
    exp = experiment_file(taskset={"path": str(folder)}, repeats=2, name=out.name, limits={"max_turns": 5})
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]


def test_a_third_party_environment_runs_the_smoke_experiment_as_local_does(toy, experiment_file, tmp_path,
                                                                           smoke_dir):
    log = tmp_path / "commands.jsonl"
    toy_runs = run(experiment_file, taskset_with(tmp_path / "t", smoke_dir, {"backend": "toy",
                                                                           "options": {"log": str(log)}}),
                   tmp_path / "toy")
    local_runs = run(experiment_file, taskset_with(tmp_path / "l", smoke_dir, None), tmp_path / "local")

    def outcomes(runs):
        return {(r["task_id"], r["repeat"]): (r["resolved"], r["failure_reason"], r["tests"]) for r in runs}

    assert len(toy_runs) == len(local_runs) == 8
    assert outcomes(toy_runs) == outcomes(local_runs)
    assert {r["failure_reason"] for r in toy_runs} == {None, "max_turns"}  # with 5 turns, some runs do not finish
    commands = [json.loads(line) for line in log.read_text().splitlines()]
    tool_runs = sum(r["tool_calls"].get("run_tests", 0) for r in toy_runs)
    evaluations = [c for c in commands if c["evaluation"]]
    assert len(commands) == tool_runs + len(evaluations) and tool_runs > 0
    assert 0 < len(evaluations) <= len(toy_runs)  # a run that changed nothing shares its task's base evaluation
    assert {c["task"] for c in commands} == set(TASKS)
    assert all(c["argv"][1:3] == ["-m", "pytest"] for c in commands)


def test_an_installed_environment_is_listed_without_loading_it(tmp_path, monkeypatch, smoke_dir):
    module = f"ctxbench_probe_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text("from ctxbench.harness.environments.local import LocalEnvironment\n\n\n"
                                           "class Probe(LocalEnvironment):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    install(tmp_path / "site", monkeypatch, f"[ctxbench.environments]\nprobe = {module}:Probe\n", "probe")
    assert installed_environments() == ["docker", "local", "probe"]
    load_taskset(taskset_with(tmp_path, smoke_dir, None))
    assert module not in sys.modules  # a taskset that does not name it never imports it
    assert type(get_environment("probe")).__name__ == "Probe" and module in sys.modules


def test_the_tasks_of_a_third_party_environment_ask_it(toy, tmp_path, smoke_dir):
    assert installed_environments() == ["docker", "local", "toy"]
    folder = taskset_with(tmp_path, smoke_dir, {"backend": "toy", "options": {"log": str(tmp_path / "log")}})
    task = load_taskset(folder).tasks[0]
    assert task.runs_in.backend == "toy" and task.container is None
    environment = environment_for(task)
    assert isinstance(environment, LocalEnvironment) and type(environment).__name__ == "ToyEnvironment"
    assert environment is get_environment("toy") and not environment.containers


def test_an_environment_s_options_are_checked_at_load(toy, tmp_path, smoke_dir):
    cases = [({"backend": "toy"}, "environment.options.log: missing (required)"),
             ({"backend": "toy", "options": {"log": "x", "lgo": 1}}, "environment.options.lgo: unknown key"),
             ({"options": {"log": "x"}}, "environment.options: environment 'local' takes no options")]
    for n, (environment, words) in enumerate(cases):
        with pytest.raises(InputError) as raised:
            load_taskset(taskset_with(tmp_path / str(n), smoke_dir, environment))
        assert str(raised.value).endswith(words), str(raised.value)


def test_a_local_environment_hashes_as_before_and_a_third_party_one_keeps_its_options():
    assert TasksetEnvironment(backend="local", options={}).model_dump_json() == '{"python":null,"requirements":[]}'
    toy = TasksetEnvironment(backend="toy", options={"log": "/x"})
    assert toy.model_dump() == {"python": None, "requirements": (), "backend": "toy", "options": {"log": "/x"}}
    assert hash(toy) == hash(TasksetEnvironment(backend="toy", options={"log": "/x"}))


def test_an_unknown_backend_is_one_line_and_exit_2_with_nothing_written(tmp_path, smoke_dir):
    folder = taskset_with(tmp_path, smoke_dir, {"backend": "nosuch"})
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({"name": "x", "taskset": str(folder), "strategies": [{"name": "baseline"}],
                                   "sandbox": "none"}))
    out = tmp_path / "out"
    ctxbench = Path(sys.executable).parent / "ctxbench"
    result = subprocess.run([str(ctxbench), "run", str(exp), "--output", str(out)], capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [f"error: {folder}/taskset.yaml: environment.backend: unknown environment "
                                          "'nosuch' (installed: docker, local)"]
    assert not out.exists()


def test_a_backend_close_to_an_installed_one_is_named(tmp_path, smoke_dir):
    with pytest.raises(InputError, match=r"environment\.backend: unknown environment 'dockr'; did you mean "
                                         r"'docker'\? \(installed: docker, local\)"):
        load_taskset(taskset_with(tmp_path, smoke_dir, {"backend": "dockr"}))


def test_entry_points_that_cannot_serve_are_refused_with_both_names(tmp_path, monkeypatch):
    install(tmp_path / "a", monkeypatch, "[ctxbench.environments]\ndocker = somewhere:Docker\n", "takes-docker")
    with pytest.raises(InputError, match="'docker' of package takes-docker .* name of a built-in"):
        installed_environments()
    monkeypatch.undo()
    install(tmp_path / "b", monkeypatch, "[ctxbench.environments]\nbroken = ctxbench_no_such_module:Env\n", "broken")
    assert "broken" in installed_environments()
    with pytest.raises(InputError, match="environment 'broken': its entry point ctxbench_no_such_module:Env failed"):
        get_environment("broken")
    install(tmp_path / "c", monkeypatch, "[ctxbench.environments]\nbroken = json:dumps\n", "also-broken")
    with pytest.raises(InputError, match="registered by package also-broken .* and by package broken"):
        installed_environments()
