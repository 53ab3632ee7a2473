"""Each rule of the simulator pinned by a direct probe on a built-in task (see docs/simulator.md)."""

import json
import re
from pathlib import Path

import pytest

from ctxbench.harness.context import Budget
from ctxbench.harness.models import simprobes as sp
from ctxbench.harness.models.simrules import POLICY
from ctxbench.harness.models.simmemory import parse_memory
from ctxbench.harness.markup.rendering import parse_excerpts, render_excerpt
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.strategies.summarizer import Summarizer
from ctxbench.strategies.trimmer import cut_middle

SEEDS = 40


@pytest.fixture(scope="module")
def probe():
    return sp.load_probe()


def next_call(probe, messages, seed=0, **model):
    call = probe.model(seed, **model).complete(messages, TOOL_SCHEMAS).tool_calls[0]
    return call.name, json.loads(call.arguments)


def test_numbered_lines_on_both_sides_of_an_omission_marker_are_read():
    lines = [f"value_{n} = {n} * 2" for n in range(1, 301)]
    cut = cut_middle(render_excerpt("pkg/mod.py", lines, 1, 300), 3000)
    head, tail = parse_excerpts(cut)
    assert head.path == tail.path == "pkg/mod.py"
    assert head.start == 1 and tail.end == 300
    assert head.end < tail.start - 1
    assert all(text == f"value_{n} = {n} * 2" for n, text in enumerate(head.lines, 1))
    assert all(text == f"value_{n} = {n} * 2" for n, text in enumerate(tail.lines, tail.start))


def test_numbered_lines_after_a_cut_at_a_line_end_are_read():
    lines = [f"value_{n} = {n} * 2" for n in range(1, 301)]
    excerpt = render_excerpt("pkg/mod.py", lines, 1, 300)
    keep = 2 * (excerpt.index("\n", 1500) + 1)
    cut = cut_middle(excerpt, keep)
    assert "\n\n[…" in cut, "the head ends with a whole line"
    head, tail = parse_excerpts(cut)
    assert head.start == 1 and tail.end == 300 and head.end < tail.start - 1


def test_the_trimmed_tail_of_a_read_is_evidence(probe):
    rates = sp.trimmed_tail_probe(probe, SEEDS)
    assert rates["trimmed tail"] > 0.3
    assert rates["trimmed tail"] >= rates["untrimmed"] - 0.15


def test_a_clipped_range_is_read_again_around_the_line_of_interest(probe):
    h = probe.hunk
    start, end = h.old_start - 300, h.old_start + 300
    whole = probe.excerpt(h.path, start, end)
    cut = cut_middle(whole, 6000)
    messages = sp.context(probe, []) + [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "s1", "type": "function", "function": {
            "name": "search", "arguments": json.dumps({"query": "def fn_round("})}}]},
        {"role": "tool", "tool_call_id": "s1", "content": f"1 matches for 'def fn_round('\n{h.path}:{h.old_start - 3}: def fn_round(ctx, number, digits=0):"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "r1", "type": "function", "function": {
            "name": "read_file", "arguments": json.dumps({"path": h.path, "start_line": start, "end_line": end})}}]},
        {"role": "tool", "tool_call_id": "r1", "content": cut},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "type": "function", "function": {
            "name": "run_tests", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "t1", "content": "1 failed\n[exit code 1]"},
    ]
    name, args = next_call(probe, messages, detour_rate=0)
    assert name == "read_file" and args["path"] == h.path
    assert args["start_line"] <= h.old_start - 3 <= args["end_line"]
    assert args["end_line"] - args["start_line"] < end - start


def test_attention_follows_length_not_the_window(probe):
    rates = sp.window_probe(probe, SEEDS)
    assert rates[16000] == rates[32000]


def test_a_miss_on_the_same_view_is_repeatable(probe):
    by_turn = sp.repeat_probe(probe, SEEDS, turns=4)
    assert 0 < by_turn[0] < 1
    assert by_turn == sorted(by_turn)
    assert by_turn[-1] == by_turn[0]


def test_a_reread_is_a_new_chance(probe):
    one = sp.context(probe, [probe.filler(k) for k in range(10)] + [probe.fix_excerpt()])
    two = sp.context(probe, [probe.filler(k) for k in range(10)] + [probe.fix_excerpt(), probe.fix_excerpt()])
    missed_once = [s for s in range(SEEDS) if not sp.fixes(probe, one, s)]
    assert missed_once
    assert any(sp.fixes(probe, two, s) for s in missed_once)


def test_the_middle_of_a_long_context_is_noticed_least(probe):
    rates = sp.position_probe(probe, 60)
    assert rates["middle"] < min(rates["start"], rates["end"])


def test_a_summary_is_memory(probe):
    rates = sp.forgetting_probe(probe, 20)
    assert rates["summarized finish"] == 1.0
    assert rates["summarized repeats a listed call"] == 0.0


def test_a_summary_saying_edited_but_not_tested_leads_to_the_tests(probe):
    h = probe.hunk
    summary = ("Summary of turns 0-5 (earlier turns, folded; the later turns follow verbatim):\n"
               f"Files read:\n- {h.path} (lines {h.old_start - 20}-{h.old_start + 20})\n"
               f"Files modified:\n- {h.path} (1 edit; last turn 5: fixed)\n"
               "Commands run (oldest first):\n- turn 0: run_tests({}) -> exit code 1\n"
               "Unresolved errors:\n- none")
    messages = sp.context(probe, []) + [{"role": "user", "content": summary}]
    assert next_call(probe, messages)[0] == "run_tests"


def test_memory_reads_both_summary_layouts():
    one_line = parse_memory("Files read: a/b.py (1-60, 100-120); c.py (all)\n"
                            "Files modified: a/b.py (turn 4: edited a/b.py: replaced 1 lines with 1 lines)\n"
                            "Commands run (oldest first):\n- turn 2: search({\"query\": \"x\"}) -> 3 matches\n"
                            "Unresolved errors:\n- none")
    listed = parse_memory("Files read:\n- a/b.py (lines 1-60, 100-120)\n- c.py (lines all)\n"
                          "Files modified:\n- a/b.py (2 edits; last turn 4: \"x\" -> \"y\")\n"
                          "Commands run (oldest first):\n- turn 2: search({\"query\": \"x\"}) -> 3 matches")
    for mem in (one_line, listed):
        assert mem.read("a/b.py", 100, 120) and not mem.read("a/b.py", 61, 99) and mem.read("c.py", 1, 5000)
        assert mem.edits["a/b.py"] >= 1 and mem.last_edit_turn == 4
        assert mem.calls[0].matches("search", {"query": "x"})


def test_injected_irrelevant_code_counts_as_noise(probe):
    rates = sp.noise_probe(probe, SEEDS)
    assert rates["no noise"] == 0.0
    assert rates["irrelevant injected snippet"] > 0.1
    assert rates["irrelevant tool output"] > 0.1


def drive(probe, messages, steps, listing=""):
    """Let the simulator act `steps` times on canned results: tests fail, searches find nothing."""
    model = probe.model(0, detour_rate=0)
    calls = []
    for k in range(steps):
        call = model.complete(messages, TOOL_SCHEMAS).tool_calls[0]
        args = json.loads(call.arguments)
        calls.append((call.name, args))
        if call.name in ("finish", "edit_file"):
            break
        result = {"run_tests": "1 failed\n[exit code 1]", "list_files": listing,
                  "search": f"0 matches for {args.get('query')!r}"}.get(call.name, "error: no such file")
        messages = messages + [
            {"role": "assistant", "content": "", "tool_calls": [{"id": f"d{k}", "type": "function", "function": {
                "name": call.name, "arguments": call.arguments}}]},
            {"role": "tool", "tool_call_id": f"d{k}", "content": result}]
    return calls


def test_plain_words_of_the_statement_are_searched(probe):
    queries = [args["query"] for name, args in drive(probe, sp.context(probe, []), 20) if name == "search"]
    assert "ROUND" in queries and "invoicing" in queries, queries


def test_a_file_named_in_a_listing_is_opened(probe):
    listing = "\n".join(["exprcalc/__init__.py", "exprcalc/lexer.py", "exprcalc/rounding.py", "tests/test_x.py"])
    calls = drive(probe, sp.context(probe, []), 30, listing)
    assert ("read_file", {"path": "exprcalc/rounding.py"}) in calls, calls
    assert ("read_file", {"path": "exprcalc/lexer.py"}) not in calls


def test_a_wrong_edit_is_not_repeated_from_the_view_it_made_stale(probe):
    h = probe.hunk
    wrong = h.old_text + "\n    pass  # adjusted"
    messages = sp.context(probe, [probe.fix_excerpt()]) + [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "e1", "type": "function", "function": {
            "name": "edit_file", "arguments": json.dumps({"path": h.path, "old_text": h.old_text, "new_text": wrong})}}]},
        {"role": "tool", "tool_call_id": "e1", "content": f"edited {h.path}: replaced 1 lines with 2 lines"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "type": "function", "function": {
            "name": "run_tests", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "t1", "content": f"{h.path}:{h.old_start + 3}: AssertionError\n1 failed\n[exit code 1]"},
    ]
    for seed in range(SEEDS):
        name, args = next_call(probe, messages, seed)
        assert name != "edit_file"
    name, args = next_call(probe, messages, 0, detour_rate=0)
    assert name == "read_file" and args["path"] == h.path and args["start_line"] <= h.old_start + 3 <= args["end_line"]


def test_the_forgetting_probe_sends_what_the_summarizer_sends(probe):
    history = sp.fixed_and_tested(probe)
    budget = Budget(context_window=32000, output_reserve=512, fixed_tokens=0, counter=sp.COUNTER)
    built = Summarizer(Summarizer.Params(keep_recent=1, history_share=0.05)).build(history, budget)
    assert {a.kind for a in built.ledger.actions} == {"summarized"}
    assert sp.summarized(history) == built.messages


def test_the_documented_rules_are_the_policy_in_its_order():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "simulator.md").read_text()
    listed = re.findall(r"^ {2}\d+\. `(\w+)` — ", doc, flags=re.M)
    assert listed == [rule.__name__ for rule in POLICY]
    assert all(rule.__doc__ for rule in POLICY)
