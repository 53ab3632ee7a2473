"""The docker backend against the local one: the same smoke tasks, as SWE-bench-style instances, give
the same outcomes in both, and the exported predictions pass in a fresh container."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner

from conftest import run_instances, smoke_instances, write_instances, git_repo

from ctxbench.harness.cli import cli
from ctxbench.harness.environments.docker_environment import DockerWorkspace
from ctxbench.harness.tasks.taskset import load_taskset


def test_docker_and_local_give_the_same_outcomes_and_predictions_pass(tmp_path, smoke_dir, image,
                                                                     no_leftover_containers):
    """The smoke tasks as SWE-bench-style instances, run locally and in the image (2 repeats, the
    simulator): each run has the same verdict, failure reason and per-test outcomes in both. The
    image runs the local environment's pytest (image-requirements.txt), so the agent sees the same
    test output in both and acts alike."""
    local_dir, docker_dir = tmp_path / "local", tmp_path / "docker"
    local_dir.mkdir()
    docker_dir.mkdir()
    local = smoke_instances(local_dir, smoke_dir, None)
    docker = smoke_instances(docker_dir, smoke_dir, {"backend": "docker", "image": image})
    out, docker_runs = run_instances(docker_dir, "docker", docker, docker_dir / "repos", repeats=2)
    _, local_runs = run_instances(local_dir, "local", local, local_dir / "repos", repeats=2)
    assert len(docker_runs) == len(local_runs) == 10
    assert not [r for r in docker_runs if r["failure_reason"] in ("harness_error", "taskset_error")]
    assert not [r for r in docker_runs if "grader" in r]  # pytest's JUnit report judged them
    assert sum(r["resolved"] for r in docker_runs) >= 5

    def outcomes(runs):
        return {(r["task_id"], r["repeat"]): (r["resolved"], r["failure_reason"], r["tests"]) for r in runs}

    assert outcomes(docker_runs) == outcomes(local_runs)

    exported = CliRunner().invoke(cli, ["export-predictions", str(out), "--repeat", "0"])
    assert exported.exit_code == 0, exported.output
    tasks = {t.id: t for t in load_taskset(docker, docker_dir / "repos").tasks}
    resolved = {r["task_id"] for r in docker_runs if r["resolved"] and r["repeat"] == 0}
    predictions = [json.loads(line) for line in (out / "predictions" / "baseline.r0.jsonl").read_text().splitlines()]
    checked = 0
    for row in predictions:
        if row["instance_id"] not in resolved:
            continue
        fresh = DockerWorkspace.create(tasks[row["instance_id"]], "python", start=False)
        try:
            assert fresh.apply_patch(row["model_patch"])
            evaluation = fresh.evaluate(120)
        finally:
            fresh.cleanup()
        assert evaluation.resolved, evaluation.output_tail
        checked += 1
    assert checked == len(resolved) > 0


def test_an_instance_needing_a_package_only_the_image_has(tmp_path, image, no_leftover_containers):
    """`more_itertools` is a Debian package of the image, absent from ctxbench's own interpreter."""
    repo = tmp_path / "repos" / "acme__chunks"
    (repo / "tests").mkdir(parents=True)
    (repo / "chunks.py").write_text("import more_itertools\n\n\ndef pairs(xs):\n    return list(more_itertools.chunked(xs, 3))\n")
    (repo / "tests" / "test_chunks.py").write_text(
        "from chunks import pairs\n\n\ndef test_pairs():\n    assert pairs([1, 2, 3, 4]) == [[1, 2], [3, 4]]\n")
    base = git_repo(repo)
    (repo / "chunks.py").write_text(
        "import more_itertools\n\n\ndef pairs(xs):\n    return list(more_itertools.chunked(xs, 2))\n")
    patch = subprocess.run(["git", "diff"], cwd=repo, capture_output=True, text=True).stdout
    subprocess.run(["git", "checkout", "chunks.py"], cwd=repo, check=True)
    row = {"instance_id": "acme__chunks-1", "repo": "acme/chunks", "base_commit": base, "patch": patch,
           "test_patch": "", "problem_statement": "pairs() gives chunks of three, not pairs.",
           "FAIL_TO_PASS": ["tests/test_chunks.py::test_pairs"], "PASS_TO_PASS": [],
           "test_cmd": "python -m pytest -q", "test_files": ["tests/test_chunks.py"]}
    local_dir, docker_dir = tmp_path / "local", tmp_path / "docker"
    for folder, env in ((local_dir, None), (docker_dir, {"backend": "docker", "image": image})):
        folder.mkdir()
        write_instances(folder, [row], env)
    _, docker_runs = run_instances(docker_dir, "docker", docker_dir / "instances.jsonl", tmp_path / "repos")
    _, local_runs = run_instances(local_dir, "local", local_dir / "instances.jsonl", tmp_path / "repos")
    assert [(r["resolved"], r["failure_reason"]) for r in docker_runs] == [(True, None)]
    assert [r["failure_reason"] for r in local_runs] == ["taskset_error"]
    assert "more_itertools" in local_runs[0]["error"]


def test_a_missing_image_is_one_line_and_exit_2(tmp_path, smoke_dir, image):
    path = smoke_instances(tmp_path, smoke_dir, {"backend": "docker", "image": "ctxbench-absent:none"})
    exp = tmp_path / "exp.yaml"
    exp.write_text(json.dumps({"name": "x", "taskset": {"path": str(path), "repos": str(tmp_path / "repos")},
                               "strategies": [{"name": "baseline"}], "repeats": 1, "sandbox": "none"}))
    out = tmp_path / "out"
    result = subprocess.run([*_ctxbench(), "run", str(exp), "--output", str(out)], capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "docker image ctxbench-absent:none is not present" in lines[0]
    assert not out.exists()


def _ctxbench() -> list[str]:
    import sys
    from pathlib import Path
    return [str(Path(sys.executable).parent / "ctxbench")]


def test_an_external_agent_with_a_docker_environment_is_one_line_and_exit_2(tmp_path, smoke_dir):
    """An external agent runs on this machine, not in the run's container: refused before anything runs."""
    path = smoke_instances(tmp_path, smoke_dir, {"backend": "docker", "image": "ctxbench-any:image"})
    exp = tmp_path / "exp.yaml"
    exp.write_text(json.dumps({"name": "x", "taskset": {"path": str(path), "repos": str(tmp_path / "repos")},
                               "strategies": [{"name": "baseline"},
                                              {"name": "baseline", "agent": {"name": "mine", "command": ["true"]}}],
                               "repeats": 1, "sandbox": "none"}))
    out = tmp_path / "out"
    result = subprocess.run([*_ctxbench(), "run", str(exp), "--output", str(out)], capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: strategies[mine/baseline].agent: the external agent "
                                                   "mine would run on this machine"), lines
    assert "acme__calc-median-even-length" in lines[0] and "agent: builtin" in lines[0]
    assert not out.exists()


AGENT = r'''#!/bin/bash
# An external agent with a docker environment of its own, as mini-swe-agent's: it starts "its"
# container with `docker run -d` and runs every command by `docker exec`. It checks what it sees and
# exits 1 saying what went wrong.
set -u
fail() { echo "agent check failed: $*"; exit 1; }
[ "$DOCKER" = "$(command -v docker)" ] || fail "the stand-in is not first on PATH"
id=$(docker run -d --rm --name mine -w "$WORKDIR" "$IMAGE" sleep 2h) || fail "run -d"
out=$(docker exec -w "$WORKDIR" "$id" bash -lc 'python -c "import more_itertools, sys; print(sys.prefix)"; pwd') \
    || fail "exec python: $out"
[ "$out" = "$(printf '/usr\n%s' "$WORKDIR")" ] || fail "not the image's python in $WORKDIR: $out"
docker exec "$id" bash -lc "echo escaped > /etc/$MARK" || fail "write in the container"
docker exec "$id" test -e "/etc/$MARK" || fail "the container forgot"
[ ! -e "/etc/$MARK" ] || fail "the write reached this machine"
out=$(docker exec -e FOO=bar "$id" bash -c 'echo "$FOO"; echo oops >&2; exit 3' 2>/dev/null); code=$?
[ "$code" = 3 ] && [ "$out" = bar ] || fail "exit code $code, output $out"
err=$(docker exec "$id" bash -c 'echo oops >&2' 2>&1 >/dev/null)
[ "$err" = oops ] || fail "standard error: $err"
docker ps >/dev/null 2>&1; [ $? = 125 ] || fail "docker ps was not refused"
docker exec -w "$WORKDIR" "$id" sed -i 's/helo /hello /' greet.py || fail "edit"
docker stop "$id" >/dev/null || fail "stop"
'''


def test_an_external_agent_with_a_docker_environment_runs_its_commands_in_the_run_s_container(
        tmp_path, image, no_leftover_containers):
    """Its `docker` reaches the run's container only: commands run with the image's python in the
    workdir, their writes outside the repository stay there, edits to the repository are the patch."""
    repo = tmp_path / "repos" / "acme__greet"
    (repo / "tests").mkdir(parents=True)
    (repo / "greet.py").write_text('def greet(name):\n    return "helo " + name\n')
    (repo / "tests" / "test_greet.py").write_text(
        "from greet import greet\n\n\ndef test_greet():\n    assert greet('you') == 'hello you'\n")
    base = git_repo(repo)
    row = {"instance_id": "acme__greet-1", "repo": "acme/greet", "base_commit": base, "patch": "",
           "test_patch": "", "problem_statement": "greet() misspells hello.",
           "FAIL_TO_PASS": ["tests/test_greet.py::test_greet"], "PASS_TO_PASS": [],
           "test_cmd": "python -m pytest -q", "test_files": ["tests/test_greet.py"]}
    path = write_instances(tmp_path, [row], {"backend": "docker", "image": image})
    (tmp_path / "agent.sh").write_text(AGENT)
    mark = f"ctxbench-agent-{tmp_path.name}"
    exp = tmp_path / "exp.yaml"
    exp.write_text(json.dumps({
        "name": "agent-in-docker", "taskset": {"path": str(path), "repos": str(tmp_path / "repos")},
        "strategies": [{"name": "baseline"}], "repeats": 1, "workers": 1, "sandbox": "none",
        "model": {"provider": "sim"},
        "agent": {"name": "mine", "command": ["bash", "agent.sh"],
                  "env": {"DOCKER": "{docker}", "IMAGE": "{image}", "WORKDIR": "{workdir}", "MARK": mark}}}))
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"])
    assert result.exit_code == 0, result.output
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert [(r["resolved"], r["failure_reason"]) for r in runs] == [(True, None)], runs[0]["error"]
    assert runs[0]["patch"].count("diff --git") == 1 and '+    return "hello " + name' in runs[0]["patch"]
    assert not Path("/etc", mark).exists()


def test_container_placeholders_with_a_local_task_are_one_line_and_exit_2(tmp_path, smoke_dir):
    path = smoke_instances(tmp_path, smoke_dir, None)
    exp = tmp_path / "exp.yaml"
    exp.write_text(json.dumps({"name": "x", "taskset": {"path": str(path), "repos": str(tmp_path / "repos")},
                               "strategies": [{"name": "baseline"}], "repeats": 1, "sandbox": "none",
                               "agent": {"name": "mine", "command": ["true", "{image}"]}}))
    out = tmp_path / "out"
    result = subprocess.run([*_ctxbench(), "run", str(exp), "--output", str(out)], capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["error: agent: the container placeholders {image} mean nothing for tasks "
                     "acme__calc-median-even-length, acme__calc-fahrenheit-to-celsius, acme__calc-percentile-upper-bound "
                     "and 2 more (backend local: no container)"], lines
    assert not out.exists()
