"""The simulator's gating and determinism, measured over many seeds."""

import json

import pytest

from ctxbench.harness.config import SimParams
from ctxbench.harness.protocols import ContextLengthExceeded
from ctxbench.harness.models.goldpatch import parse_patch
from ctxbench.harness.models.sim import SimModel, attention
from ctxbench.harness.markup.rendering import render_excerpt
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.tokens import TokenCounter
from ctxbench.harness.loop.tools import TOOL_SCHEMAS

COUNTER = TokenCounter("cl100k_base")


def task(smoke_dir, task_id="calc-median-even-length"):
    return next(t for t in load_taskset(smoke_dir).tasks if t.id == task_id)


def context_with(tool_content: str, statement: str, call=("read_file", {"path": "calc/stats.py"})):
    name, args = call
    return [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": statement},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
        {"role": "tool", "tool_call_id": "c1", "content": tool_content},
    ]


def sim(t, seed, window=16000, **params):
    return SimModel(SimParams(**params), t.patch, COUNTER, window, 512, seed)


def file_excerpt(t, path, drop_lines=()):
    lines = (t.repo_dir / path).read_text().split("\n")[:-1]
    shown = [("# (line elided)" if i + 1 in drop_lines else l) for i, l in enumerate(lines)]
    return render_excerpt(path, shown, 1, len(lines))


def test_same_messages_and_seed_give_the_same_reply(smoke_dir):
    t = task(smoke_dir)
    messages = context_with(file_excerpt(t, "calc/stats.py"), t.problem_statement)
    replies = {json.dumps([c.name for c in sim(t, 7).complete(messages, TOOL_SCHEMAS).tool_calls] +
                          [c.arguments for c in sim(t, 7).complete(messages, TOOL_SCHEMAS).tool_calls])
               for _ in range(5)}
    assert len(replies) == 1


def test_visible_preimage_is_applied_by_most_seeds(smoke_dir):
    t = task(smoke_dir)
    hunk = parse_patch(t.patch)[0]
    messages = context_with(file_excerpt(t, "calc/stats.py"), t.problem_statement)
    edits = 0
    for seed in range(100):
        call = sim(t, seed).complete(messages, TOOL_SCHEMAS).tool_calls[0]
        if call.name == "edit_file":
            args = json.loads(call.arguments)
            assert args["old_text"] == hunk.old_text
            edits += 1
    assert edits >= 80


def test_hidden_preimage_is_never_applied(smoke_dir):
    """The file is shown with one line of the hunk's pre-image elided: no seed may write the fix."""
    t = task(smoke_dir)
    hunk = parse_patch(t.patch)[0]
    changed = hunk.old_start + next(i for i, l in enumerate(hunk.old_lines) if l not in hunk.new_lines)
    messages = context_with(file_excerpt(t, "calc/stats.py", drop_lines={changed}), t.problem_statement)
    for seed in range(200):
        for call in sim(t, seed).complete(messages, TOOL_SCHEMAS).tool_calls:
            assert call.name != "edit_file"
            assert hunk.new_text not in call.arguments


def test_context_over_the_window_is_rejected(smoke_dir):
    t = task(smoke_dir)
    messages = context_with(file_excerpt(t, "calc/stats.py") * 20, t.problem_statement)
    with pytest.raises(ContextLengthExceeded, match="maximum context length"):
        sim(t, 0, window=4000).complete(messages, TOOL_SCHEMAS)


def test_attention_falls_with_fill_and_in_the_middle():
    p = SimParams()
    assert attention(p, 0.1, 1.0) == pytest.approx(p.r0)
    assert attention(p, 0.9, 1.0) < attention(p, 0.5, 1.0) < attention(p, 0.1, 1.0)
    assert attention(p, 0.1, 0.5) < attention(p, 0.1, 0.0) == attention(p, 0.1, 1.0)


def test_completion_tokens_are_counted_from_the_reply(smoke_dir):
    t = task(smoke_dir)
    messages = context_with(file_excerpt(t, "calc/stats.py"), t.problem_statement)
    c = sim(t, 1).complete(messages, TOOL_SCHEMAS)
    call = c.tool_calls[0]
    assert c.usage.completion_tokens == COUNTER.count(c.text) + COUNTER.count(call.name) + COUNTER.count(call.arguments)
    assert c.usage.prompt_tokens == COUNTER.count_messages(messages) + COUNTER.count_tools(TOOL_SCHEMAS)
