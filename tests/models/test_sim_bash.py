"""The simulator's bash dialect: a one-shell agent (tests/agents/bash_agent.py, a real subprocess)
against serve-sim resolves a task in tool and text mode, the same way twice; its commands and
their outputs are read back as the native calls they stand for, placeholders included."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ctxbench.harness.wire.conversation import fenced_command
from ctxbench.harness.endpoints.server import respond
from ctxbench.harness.config import ModelConfig, SimParams
from ctxbench.harness.models.sim import SimModel
from ctxbench.harness.models.simbash import shell_command
from ctxbench.harness.models.simbash_reading import native_messages, stable_messages
from ctxbench.harness.models.simview import read_view
from ctxbench.harness.markup.placeholders import masked_output
from ctxbench.harness.endpoints.serve_sim import SimBackend, TaskFinder, make_server
from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path
from ctxbench.harness.tokens import TokenCounter
from ctxbench.harness.wire.chat import CHAT

AGENT = Path(__file__).resolve().parents[1] / "agents" / "bash_agent.py"
COUNTER = TokenCounter("cl100k_base")
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


@pytest.fixture(scope="module")
def smoke():
    return load_taskset(resolve_taskset_path("smoke"))


@pytest.fixture(scope="module")
def median(smoke):
    return next(t for t in smoke.tasks if t.id == "calc-median-even-length")


def serve(smoke, dialect: str):
    model = ModelConfig(sim=SimParams(dialect=dialect))
    server = make_server(SimBackend(smoke, model), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


def git_copy(task, where: Path) -> Path:
    repo = where / "repo"
    shutil.copytree(task.repo_dir, repo)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


def run_agent(server, task, where: Path, *flags: str) -> tuple[int, list[str], Path]:
    repo = git_copy(task, where)
    env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
           "OPENAI_API_KEY": "unused", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, str(AGENT), "--model", "sim-coder", "--max-steps", "20", *flags],
                          input=task.problem_statement, cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()], repo


def fixed_in(task, repo: Path) -> bool:
    ids = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ids], cwd=repo,
                          capture_output=True).returncode == 0


@pytest.mark.parametrize("dialect,flags", [("auto", ()), ("bash_text", ("--text",))], ids=["tool", "text"])
def test_a_one_shell_agent_resolves_the_task(smoke, median, tmp_path, dialect, flags):
    server = serve(smoke, dialect)
    try:
        code, commands, repo = run_agent(server, median, tmp_path, *flags)
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0, commands
    assert commands[0] == "python -m pytest -q" and commands[-1] == SUBMIT
    assert any(c.startswith("nl -ba calc/stats.py | sed -n '") for c in commands)
    assert sum(c.startswith("git apply <<'EOF'\n") for c in commands) == 1
    assert fixed_in(median, repo)


@pytest.mark.parametrize("dialect,flags", [("auto", ()), ("bash_text", ("--text",))], ids=["tool", "text"])
def test_the_same_session_twice_gives_the_same_commands(smoke, median, tmp_path, dialect, flags):
    server = serve(smoke, dialect)
    try:
        first = run_agent(server, median, tmp_path / "a", *flags)
        second = run_agent(server, median, tmp_path / "b", *flags)
    finally:
        server.shutdown()
        server.server_close()
    assert first[0] == second[0] == 0
    assert first[1] == second[1] and len(first[1]) >= 4


def test_statement_is_found_inside_mini_swe_agents_template(smoke, median):
    template = ("Please solve this issue: {task}\n\nYou can execute bash commands and edit files to implement "
                "the necessary changes.\n\n## Recommended Workflow\n")
    find = TaskFinder(smoke.tasks)
    system = {"role": "system", "content": "You are a helpful assistant that can interact with a computer."}
    wrapped = {"role": "user", "content": template.format(task=median.problem_statement)}
    assert find([system, wrapped]) is median
    reindented = {"role": "user", "content": "<pr_description>\n" + median.problem_statement.replace("\n", "\n  ")
                  + "\n</pr_description>"}
    assert find([reindented]) is median
    assert find([system, {"role": "user", "content": "Please solve this issue: something else"}]) is None
    reply = respond(SimBackend(smoke, ModelConfig()), CHAT, {"model": "sim-coder", "messages": [
        system, {"role": "user", "content": "Please solve this issue: something else"}]})
    assert reply.status == 400 and json.loads(reply.data)["error"]["code"] == "unknown_task"


# -- reading the conversation ----------------------------------------------------------------------

STATS = [f"line {n}" for n in range(1, 101)]


def conversation(command: str, output: str, text_mode: bool = False) -> list[dict]:
    opening = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Please solve this issue: the task"}]
    if text_mode:
        return [*opening, {"role": "assistant", "content": f"THOUGHT: reading\n\n```mswea_bash_command\n{command}\n```"},
                {"role": "user", "content": output}]
    call = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
    return [*opening, {"role": "assistant", "content": "reading", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": output}]


def view_of(messages: list[dict], test_cmd=("python", "-m", "pytest", "-q")):
    native, sizes = native_messages(stable_messages(messages), SimParams(), test_cmd, "the task",
                                    [COUNTER.count_message(m) for m in messages])
    return native, read_view(native, COUNTER, sizes)


def wrapped(output: str, code: int = 0) -> str:
    return f"<returncode>{code}</returncode>\n<output>\n{output}</output>"


@pytest.mark.parametrize("text_mode", [False, True], ids=["tool", "text"])
def test_nl_and_cat_reads_are_numbered_excerpts(text_mode):
    nl = "".join(f"{n:>6}\t{STATS[n - 1]}\n" for n in range(10, 31))
    _, v = view_of(conversation("nl -ba calc/stats.py | sed -n '10,30p'", wrapped(nl), text_mode))
    ((_, excerpt),) = v.excerpts
    assert (excerpt.path, excerpt.start, excerpt.end, excerpt.lines[0]) == ("calc/stats.py", 10, 30, "line 10")
    assert excerpt.total > 30  # asked 10-30 and got them all: the file may go on
    (call,) = v.calls.values()
    assert call[:2] == ("read_file", {"path": "calc/stats.py", "start_line": 10, "end_line": 30})
    plain = "".join(line + "\n" for line in STATS[4:9])
    _, v = view_of(conversation("sed -n '5,9p' calc/stats.py", wrapped(plain), text_mode))
    ((_, excerpt),) = v.excerpts
    assert (excerpt.start, excerpt.end, excerpt.lines) == (5, 9, tuple(STATS[4:9]))
    _, v = view_of(conversation("cat calc/stats.py", wrapped("".join(s + "\n" for s in STATS)), text_mode))
    assert [(e.start, e.end, e.total) for _, e in v.excerpts] == [(1, 100, 100)]


def test_mini_swe_agents_json_observation_is_read_inside_and_after_a_cut():
    nl = "".join(f"{n:>6}\t{STATS[n - 1]}\n" for n in range(1, 41))
    content = json.dumps({"returncode": 0, "output": nl}, indent=2)
    _, v = view_of(conversation("cat -n calc/stats.py", content))
    assert [(e.start, e.end) for _, e in v.excerpts] == [(1, 40)]
    cut = content[:200] + "\n[… 300 characters omitted …]\n" + content[500:]
    _, v = view_of(conversation("cat -n calc/stats.py", cut))
    parts = [(e.start, e.end) for _, e in v.excerpts]
    assert len(parts) == 2 and parts[0][0] == 1 and parts[1][1] == 40 and parts[0][1] < parts[1][0]


def test_grep_hits_are_search_hits_in_path_order():
    output = "./calc/units.py:7:def convert(a):\n./calc/stats.py:30:    def median(data):\n./calc/stats.py:3:x = 1\n"
    native, v = view_of(conversation("grep -rn 'def median' .", wrapped(output)))
    assert v.search_hits() == [("calc/stats.py", 3, "x = 1"), ("calc/stats.py", 30, "def median(data):"),
                               ("calc/units.py", 7, "def convert(a):")]
    assert native[-1]["content"].startswith("3 matches for 'def median'")
    _, v = view_of(conversation("grep -rn 'nothing' .", wrapped("", 1)))
    assert v.zero_hits("nothing")


PYTEST = """..F.                                                                     [100%]
=================================== FAILURES ===================================
___________________________ test_median_even_length ____________________________

    def test_median_even_length():
>       assert median([4, 1, 3, 2]) == 2.5

tests/test_stats.py:27:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

    def median(data):
>       return (values[mid] + values[mid + 1]) / 2
E       IndexError: list index out of range

calc/stats.py:38: IndexError
=========================== short test summary info ============================
FAILED tests/test_stats.py::test_median_even_length - IndexError: list index out of range
1 failed, 3 passed in 0.05s
"""


def test_a_pytest_run_is_a_failed_test_run_with_its_frames():
    native, v = view_of(conversation("python -m pytest -q", wrapped(PYTEST, 1)))
    last_edit, tests = v.timeline()
    ((_, passed, output),) = tests
    assert passed is False and output.endswith("[exit code 1]") and "in <time>" in output
    assert "calc/stats.py:38: IndexError" in output and last_edit is None
    from ctxbench.harness.models.simrules import situation
    s = situation(v, SimParams(), "the task", tests, last_edit)
    assert s.frames(tests=False) == [("calc/stats.py", 38)] and s.frames(tests=True) == [("tests/test_stats.py", 27)]
    passing = view_of(conversation("python -m pytest -q", wrapped("4 passed in 0.01s\n")))[1].timeline()[1]
    assert [p for _, p, _ in passing] == [True]


@pytest.mark.parametrize("text_mode", [False, True], ids=["tool", "text"])
def test_a_masked_output_hides_the_same_evidence_as_a_masked_native_read(text_mode):
    nl = "".join(f"{n:>6}\t{STATS[n - 1]}\n" for n in range(10, 31))
    command = "nl -ba calc/stats.py | sed -n '10,30p'"
    shown = view_of(conversation(command, wrapped(nl), text_mode))[1]
    masked = view_of(conversation(command, masked_output("bash", json.dumps({"command": command}), 400, 120),
                                  text_mode))[1]
    native_masked = read_view([*conversation(command, "")[:2],
                               {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function",
                                "function": {"name": "read_file", "arguments": json.dumps(
                                    {"path": "calc/stats.py", "start_line": 10, "end_line": 30})}}]},
                               {"role": "tool", "tool_call_id": "c", "content": masked_output("read_file", "{}", 400, 120)}],
                              COUNTER)
    assert len(shown.excerpts) == 1 and shown.shown("calc/stats.py", 20)
    for v in (masked, native_masked):
        assert v.excerpts == [] and not v.shown("calc/stats.py", 20)
        assert v.remembered("calc/stats.py", 20) and not v.remembered("calc/stats.py", 31)
        assert v.done("read_file", {"path": "calc/stats.py", "start_line": 10, "end_line": 30})


def test_a_visible_pre_image_is_fixed_and_a_masked_one_is_not(median):
    source = (median.repo_dir / "calc" / "stats.py").read_text().split("\n")
    nl = "".join(f"{n:>6}\t{source[n - 1]}\n" for n in range(20, 50))
    command = "nl -ba calc/stats.py | sed -n '20,49p'"
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {}}}]
    sim = SimModel(SimParams(r0=1.0, slip_rate=0.0), median.patch, COUNTER, 16000, 512, 3,
                   test_cmd=median.test_cmd, statement=median.problem_statement)
    messages = conversation(command, wrapped(nl))
    messages[1]["content"] = f"Please solve this issue: {median.problem_statement}"
    (call,) = sim.complete(messages, tools).tool_calls
    assert call.name == "bash" and json.loads(call.arguments)["command"].startswith("git apply <<'EOF'\n")
    messages[-1]["content"] = masked_output("bash", json.dumps({"command": command}), 400, 120)
    (call,) = sim.complete(messages, tools).tool_calls
    assert "git apply" not in json.loads(call.arguments)["command"]


def test_edits_and_writes_read_back_as_the_native_calls():
    p = SimParams()
    edit = {"path": "calc/stats.py", "old_text": "a\n\nb = 1\nc", "new_text": "a\n\nb = 2\nc"}
    write = {"path": "calc/new.py", "content": "x = 1\nEOF\n"}
    for name, args in (("edit_file", edit), ("write_file", write), ("search", {"query": "def f("}),
                       ("read_file", {"path": "a b.py"}), ("run_tests", {}), ("list_files", {}), ("finish", {})):
        command = shell_command(name, args, p, ("python", "-m", "pytest", "-q"), [])
        _, v = view_of(conversation(command, wrapped("")))
        assert [c[:2] for c in v.calls.values()] == [(name, args)], command
    failed = view_of(conversation(shell_command("edit_file", edit, p, (), []), wrapped("error: patch failed", 1)))[1]
    assert failed.failed("call_1")


def test_the_fenced_command_of_mini_swe_agents_text_mode_is_read():
    assert fenced_command("THOUGHT: x\n\n```mswea_bash_command\nls -la\n```") == "ls -la"


def test_the_dialect_keys_keep_default_experiment_ids():
    assert set(SimParams().model_dump()) & {"dialect", "submit_command", "fence"} == set()
    assert SimParams(dialect="bash_text", fence="bash").model_dump(mode="json")["dialect"] == "bash_text"


def test_a_long_output_cut_by_the_agent_is_read_on_both_sides_of_the_cut():
    nl = "".join(f"{n:>6}\t{STATS[n - 1]}\n" for n in range(1, 101))
    content = (f"<returncode>0</returncode>\n<warning>\nThe output of your last command was too long.\n</warning>"
               f"<output_head>\n{nl[:600]}\n</output_head>\n<elided_chars>\n{len(nl) - 1200} characters elided\n"
               f"</elided_chars>\n<output_tail>\n{nl[-600:]}\n</output_tail>")
    _, v = view_of(conversation("nl -ba calc/stats.py", content))
    (head, tail) = [e for _, e in v.excerpts]
    assert head.start == 1 and tail.end == 100 and head.end <= 40 < 60 < tail.start


def test_a_failed_read_shows_no_file_lines():
    missing = "nl: calc/nope.py: No such file or directory\n"
    _, v = view_of(conversation("nl -ba calc/nope.py | sed -n '1,60p'", wrapped(missing)))
    assert v.excerpts == []
    native, v = view_of(conversation("cat calc/nope.py", wrapped("cat: calc/nope.py: No such file or directory\n", 1)))
    assert v.excerpts == [] and native[-1]["content"].startswith("error: ")


def test_its_search_skips_what_the_native_search_skips(tmp_path):
    for path in ("calc/stats.py", ".pytest_cache/v/cache/nodeids", "calc/__pycache__/stats.txt", ".git/HEAD"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x = 1\ndef median(data):\n")
    command = shell_command("search", {"query": "def median("}, SimParams(), (), [])
    done = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True)
    _, v = view_of(conversation(command, wrapped(done.stdout, done.returncode)))
    assert v.search_hits() == [("calc/stats.py", 2, "def median(data):")]
