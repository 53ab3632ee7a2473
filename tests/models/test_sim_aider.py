"""The simulator speaking Aider's `diff` edit format: how Aider's requests read (a text-mode conversation
whose answers are observations a strategy can mask), the files it asks to add, the SEARCH/REPLACE blocks
it writes, the test output it reads, how it finishes, and its answer to Aider's summarizing request.

The requests are Aider 0.86.2's own (`aider_requests.json`: `--edit-format diff --map-tokens 1024
--auto-test --test-cmd 'python -m pytest -q' --max-chat-history-tokens 300`, on the smoke taskset's
`calc` repository): the task alone, the file added to the chat, the summary of its history, and the
failing test output after an edit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.harness.config import SimParams
from ctxbench.harness.context import Budget
from ctxbench.harness.markup.summaries import SECTION
from ctxbench.harness.models.sim import SimModel
from ctxbench.harness.models.simaider import native_conversation
from ctxbench.harness.models.simbash import dialect_for
from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path
from ctxbench.harness.tokens import TokenCounter
from ctxbench.harness.wire.aider import FILES_PREFIX, RULES, aider_conversation, edit_blocks, file_blocks
from ctxbench.harness.wire.conversation import fingerprints, history_from_messages, own_context
from ctxbench.strategies.registry import create_strategy

COUNTER = TokenCounter("cl100k_base")
REQUESTS = json.loads((Path(__file__).parent / "aider_requests.json").read_text())
TEST_CMD = ("python", "-m", "pytest", "-q")


def request(name: str) -> list[dict]:
    return [dict(m) for m in REQUESTS[name]["messages"]]


@pytest.fixture(scope="module")
def median():
    return next(t for t in load_taskset(resolve_taskset_path("smoke")).tasks if t.id == "calc-median-even-length")


def sim(task, seed: int = 0) -> SimModel:
    return SimModel(SimParams(), task.patch, COUNTER, 32000, 4096, seed, test_cmd=task.test_cmd,
                    statement=task.problem_statement)


def test_aider_request_reads_as_a_text_mode_conversation():
    messages = request("tests_failed")
    conversation = aider_conversation(messages)
    assert [m["role"] for m in conversation] == ["system", "user", "assistant", "user", "assistant", "user"]
    system = conversation[0]["content"]
    assert "Change get_factorial() to use math.factorial" in system and "calc/units.py:" in system  # examples, map
    added, tested = conversation[3]["content"], conversation[5]["content"]
    assert added.startswith("I added these files to the chat: calc/stats.py") and FILES_PREFIX in added
    assert "return (values[mid - 1] + values[mid]) / 2" in file_blocks(added)["calc/stats.py"]  # its current text
    assert tested.startswith("I updated the files.") and "I ran this command:" in tested and RULES not in tested
    assert aider_conversation(conversation) == conversation


def test_its_answers_are_observations_that_masking_hides():
    history = history_from_messages(request("tests_failed"), (TEST_CMD,))
    assert history.task_statement.startswith("`calc.median` gives the wrong answer")
    assert [len(t.observations) for t in history.turns] == [1, 1]
    assert FILES_PREFIX in history.turns[0].observations[0].content
    strategy = create_strategy("observation_masking", {"keep_recent": 1})
    context = strategy.build(history, Budget(32000, 4096, 0, COUNTER))
    masked = [a for a in context.ledger.actions if a.kind == "masked"]
    assert [a.target for a in masked] == [history.turns[0].observations[0].call_id]
    assert not any("def median(data):" in str(m.get("content")) for m in context.messages)


def test_a_request_that_adds_files_extends_the_one_before():
    first, second = request("first"), request("files_added")
    assert own_context(second, fingerprints(second), fingerprints(first)) is None  # its repo map changed
    assert own_context(request("summary"), [], fingerprints(second)) == "summary_request"


def test_aider_requests_choose_the_aider_dialect():
    assert {dialect_for(SimParams(), [], request(n)) for n in REQUESTS} == {"aider"}
    assert dialect_for(SimParams(), [], [{"role": "system", "content": "You help."},
                                         {"role": "user", "content": "Fix it."}]) == "native"


def test_it_asks_for_the_file_the_repo_map_shows(median):
    reply = sim(median).complete(request("first"), [])
    assert not reply.tool_calls and not edit_blocks(reply.text)
    assert reply.text.endswith("Please add calc/stats.py, tests/test_stats.py to the chat.")


def test_it_edits_the_file_shown_with_a_search_replace_block(median):
    shown = file_blocks(aider_conversation(request("files_added"))[3]["content"])["calc/stats.py"]
    hunk = sim(median).hunks[0]
    edits = [edit_blocks(sim(median, seed).complete(request("files_added"), []).text) for seed in range(8)]
    made = [e for e in edits if e]
    assert len(made) >= 4  # most draws notice the hunk in the whole file shown
    for (path, search, _), in made:
        assert path == "calc/stats.py" and search == hunk.old_text
        assert shown.count(search + "\n") == 1  # Aider finds it as it is, once
    assert any(replace == hunk.new_text for (_, _, replace), in made)  # the fix (a draw may slip)


def test_it_reads_the_failing_test_output_and_finishes(median):
    native = native_conversation(request("tests_failed"), median.problem_statement)
    results = {c["function"]["name"]: m for m in native for c in m.get("tool_calls") or []}
    assert set(results) >= {"list_files", "read_file", "edit_file", "run_tests"}
    tested = native[-1]["content"]
    assert "FAILED tests/test_units.py::test_fahrenheit_to_celsius" in tested and tested.endswith("[exit code 1]")
    reply = sim(median).complete(request("tests_failed"), []).text
    assert reply == "The fix is in; remaining failures look unrelated."  # no block, no file: Aider stops


def test_it_answers_aider_summary_request_with_memory(median):
    summary = sim(median).complete(request("summary"), []).text
    assert summary.startswith("I asked you")
    assert "calc/stats.py (lines all)" in summary and "calc/stats.py (1 edit" in summary
    after = request("tests_failed")
    opening = next(i for i, m in enumerate(after) if m["content"].startswith("`calc.median`"))
    edited = next(i for i, m in enumerate(after) if m["content"] == "Ok." and i > opening + 3)
    after[opening:edited + 1] = [{"role": "user", "content": "I spoke to you previously about a number of things.\n"
                                  + summary}, {"role": "assistant", "content": "Ok."}]
    native = native_conversation(after, median.problem_statement)
    assert SECTION.search(native[2]["content"]) and native[2]["role"] == "user"  # read as memory
    assert sim(median).complete(after, []).text == "The fix is in; remaining failures look unrelated."
