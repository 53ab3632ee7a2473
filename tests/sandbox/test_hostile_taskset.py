"""The hostile taskset through prepare/run_experiment: each attack is contained and recorded, and the run goes on."""

from __future__ import annotations

import json
import os
import re
import resource

import pytest
from sandbox_helpers import needs_bwrap, write_experiment

from ctxbench.harness.config import load_config
from ctxbench.harness.run.runner import prepare, run_experiment
from ctxbench.harness.sandbox import owner_tag
from ctxbench.harness.sandbox.procs import descendants

SCRIPT = [("write_file", {"path": "notes.txt", "content": "looked around\n"}), ("run_tests", {}), ("finish", {})]

# What the agent's run_tests observation shows for each attack, and the hostile test's outcome at evaluation.
EXPECTED = {
    "network": (("Network is unreachable", "Connection refused"), {"failed"}),
    "write-outside": (("Read-only file system",), {"failed"}),
    "fork": (("Resource temporarily unavailable", "more than 256 processes"), {"failed", "missing"}),
    "memory": (("MemoryError",), {"failed"}),
    "sleep": (("[timed out]",), {"missing"}),
    "print": (("bytes of output omitted", "[timed out]"), {"missing"}),
    "env-dump": (("dumped what it could see",), {"failed"}),
}

# The test timeout of each group of attacks. An attack that a limit refuses, or that ends by itself, gets a
# timeout it never comes near, so what ends it is the limit, however loaded the machine: forking up to the
# process limit takes 256 forks of a pytest process, ~10 ms each, and on two cores shared with other busy
# processes that alone took longer than 6 s. Only the attacks that nothing but the clock ends get a short one.
GROUPS = {
    "ended by a limit or by themselves": (120, ["network", "write-outside", "fork", "memory", "env-dump"]),
    "ended by the timeout": (6, ["sleep", "print"]),
}


def _leftovers(task_ids: list[str]) -> list[str]:
    """Live processes still working in one of this process's workspaces of the hostile tasks, or running
    their tests (the workspaces' names start with their owner's tag; another test process may be running
    hostile tasks of its own)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry.name}/cwd")
            cmdline = open(f"/proc/{entry.name}/cmdline", "rb").read().decode(errors="replace")
        except OSError:
            continue
        if any(re.search(rf"/ctxbench-run-{re.escape(owner_tag())}-{re.escape(t)}-", cwd + "\0" + cmdline)
               for t in task_ids):
            found.append(f"{entry.name}: {cmdline[:200]}")
    return found


def _observations_by_task(bodies: list[str], statements: dict[str, str]) -> dict[str, str]:
    """The run_tests output each task's agent was shown (from the last request of each run)."""
    seen: dict[str, str] = {}
    for body in bodies:
        messages = json.loads(body)["messages"]
        task = next(t for t, s in statements.items() if any(m.get("content") == s for m in messages))
        tools = [m["content"] for m in messages if m.get("role") == "tool"]
        if len(tools) >= 2:
            seen[task] = tools[1]
    return seen


def test_the_groups_cover_every_attack(hostile):
    assert sorted(t for _, ids in GROUPS.values() for t in ids) == sorted(EXPECTED) == sorted(hostile["tasks"])


@needs_bwrap
@pytest.mark.parametrize("group", list(GROUPS))
def test_every_attack_is_contained_recorded_and_the_experiment_goes_on(tmp_path, hostile, chat_server, group):
    timeout, ids = GROUPS[group]
    server = chat_server(SCRIPT)
    exp = write_experiment(
        tmp_path / "hostile.yaml", name="hostile", taskset={"path": str(hostile["path"]), "ids": ids},
        strategies=[{"name": "baseline"}],
        model={"provider": "openai", "name": "scripted", "base_url": server.url, "retry_budget_s": 0},
        repeats=1, workers=1, sandbox="bwrap",
        limits={"test_timeout_s": timeout, "run_timeout_s": 300, "max_turns": 6})
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    ctx = prepare(load_config(exp), tmp_path, tmp_path / "out")
    assert ctx.sandbox.mode == "bwrap"
    results = run_experiment(ctx)

    assert sorted(r.task_id for r in results) == sorted(ids)
    statements = {t.id: t.problem_statement for t in ctx.taskset.tasks}
    shown = _observations_by_task(server.bodies, statements)
    for r in results:
        markers, outcomes = EXPECTED[r.task_id]
        assert r.failure_reason == "tests_failed", (r.task_id, r.failure_reason, r.error)
        assert r.turns == 3 and r.tool_calls == {"write_file": 1, "run_tests": 1, "finish": 1}
        assert set(r.tests.values()) <= outcomes, (r.task_id, r.tests)
        assert any(m in shown[r.task_id] for m in markers), (r.task_id, shown[r.task_id][-600:])
    assert len((tmp_path / "out" / "runs.jsonl").read_text().splitlines()) == len(ids)

    # the host is unaffected
    assert hostile["listener"].accepted == 0
    assert not hostile["outside"].exists()
    assert descendants(os.getpid()) == []
    assert _leftovers(ids) == []
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 300 * 1024  # KiB
    if "print" in ids:
        assert len(shown["print"]) < 2 * 200_000
        assert "ctxbench-hostile-output" in shown["print"]
