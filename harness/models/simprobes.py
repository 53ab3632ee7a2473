"""Direct probes of the simulator: one request, many seeds, a measured chance.

Each probe builds the messages a strategy would send (real file excerpts of a built-in task, the
`summarizer`'s digest and the `trimmer`'s cut) and asks the simulator for its next action under many seeds.
They measure the simulator, a stand-in for a model; `benchmarks/calibration.py` prints them next to
the published behaviour of real models, and the tests pin their direction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import reduce
from typing import Any

from ctxbench.harness.config import SimParams
from ctxbench.harness.history import History, Observation, ObservationKind, ToolCall, Turn, turn_messages
from ctxbench.harness.models.goldpatch import Hunk, parse_patch
from ctxbench.harness.models.sim import SimModel
from ctxbench.harness.markup.placeholders import exit_marker
from ctxbench.harness.markup.rendering import header_path, render_excerpt
from ctxbench.harness.markup.summaries import Digest, summary_message
from ctxbench.harness.tasks.taskset import Task, load_taskset, resolve_taskset_path
from ctxbench.harness.markup.textcut import cut_middle
from ctxbench.harness.tokens import TokenCounter
from ctxbench.harness.loop.tools import TOOL_SCHEMAS

__all__ = ["Probe", "load_probe", "notice_rate", "position_probe", "repeat_probe", "window_probe",
           "trimmed_tail_probe", "forgetting_probe", "noise_probe", "fixed_and_tested", "summarized"]

COUNTER = TokenCounter("cl100k_base")
SYSTEM = "You are a careful coding agent. Use the tools to read, search, edit and run the tests."
PROBE_TASK = "exprcalc-round-half-away-from-zero"
"""A single-hunk task in a 3,000-line file, with look-alike files around it."""


@dataclass
class Probe:
    """A task, its one hunk, and excerpts of its repository to build contexts from."""

    task: Task
    hunk: Hunk

    def excerpt(self, path: str, start: int, end: int) -> str:
        lines = (self.task.repo_dir / path).read_text().split("\n")
        if lines[-1] == "":
            lines.pop()
        return render_excerpt(path, lines[start - 1:end], start, len(lines))

    def fix_excerpt(self, before: int = 20, after: int = 20) -> str:
        """The hunk's pre-image with `before` and `after` lines around it."""
        h = self.hunk
        return self.excerpt(h.path, max(1, h.old_start - before), h.old_start + len(h.old_lines) + after)

    def filler(self, k: int) -> str:
        """Excerpt number `k` of files that have nothing to do with the fix (real code of the repo)."""
        files = sorted(p.relative_to(self.task.repo_dir).as_posix() for p in self.task.repo_dir.rglob("*.py")
                       if p.relative_to(self.task.repo_dir).as_posix() != self.hunk.path
                       and "tests" not in p.parts and p.stat().st_size > 4000)
        path = files[k % len(files)]
        start = 1 + 40 * (k // len(files))
        return self.excerpt(path, start, start + 39)

    def model(self, seed: int, window: int = 32000, **params: Any) -> SimModel:
        return SimModel(SimParams(**params), self.task.patch, COUNTER, window, 512, seed)


def load_probe(task_id: str = PROBE_TASK) -> Probe:
    task = next(t for t in load_taskset(resolve_taskset_path("context-pressure")).tasks if t.id == task_id)
    return Probe(task, parse_patch(task.patch)[0])


def _read_turn(call_id: str, args: dict[str, Any], content: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": "", "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "read_file", "arguments": json.dumps(args)}}]},
        {"role": "tool", "tool_call_id": call_id, "content": content}]


def context(probe: Probe, parts: list[str]) -> list[dict[str, Any]]:
    """System, task, then one read turn per part."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": probe.task.problem_statement}]
    for k, part in enumerate(parts):
        path = header_path(part.split("\n", 1)[0])
        messages += _read_turn(f"read{k}", {"path": path, "k": k}, part)
    return messages


def fixes(probe: Probe, messages: list[dict[str, Any]], seed: int, **model: Any) -> bool:
    """The simulator's next action under `seed` is the hunk's edit."""
    call = probe.model(seed, **model).complete(messages, TOOL_SCHEMAS).tool_calls[0]
    return call.name == "edit_file" and json.loads(call.arguments).get("old_text") == probe.hunk.old_text


def notice_rate(probe: Probe, messages: list[dict[str, Any]], seeds: int, **model: Any) -> float:
    return sum(fixes(probe, messages, s, **model) for s in range(seeds)) / seeds


def position_probe(probe: Probe, seeds: int, fillers: int = 12) -> dict[str, float]:
    """Chance to fix with the pre-image at the start, middle or end of a long context (~8k tokens)."""
    out = {}
    for where, at in (("start", 0), ("middle", fillers // 2), ("end", fillers)):
        parts = [probe.filler(k) for k in range(fillers)]
        parts.insert(at, probe.fix_excerpt())
        out[where] = notice_rate(probe, context(probe, parts), seeds)
    return out


def window_probe(probe: Probe, seeds: int, fillers: int = 20) -> dict[int, float]:
    """The same context (pre-image at the end) sent with a 16k and a 32k window."""
    messages = context(probe, [probe.filler(k) for k in range(fillers)] + [probe.fix_excerpt()])
    return {w: notice_rate(probe, messages, seeds, window=w) for w in (16000, 32000)}


def repeat_probe(probe: Probe, seeds: int, turns: int = 6, fillers: int = 16) -> list[float]:
    """Chance of having fixed by turn 1..`turns` when the same view stays and each turn adds one
    unrelated read: a miss on the same view is repeatable."""
    base = [probe.filler(k) for k in range(fillers)] + [probe.fix_excerpt()]
    fixed_by = [0] * turns
    for seed in range(seeds):
        for t in range(turns):
            if fixes(probe, context(probe, base + [probe.filler(100 + j) for j in range(t)]), seed):
                for k in range(t, turns):
                    fixed_by[k] += 1
                break
    return [n / seeds for n in fixed_by]


def trimmed_tail_probe(probe: Probe, seeds: int) -> dict[str, float]:
    """A whole-file read cut by the `trimmer` with the pre-image in the kept tail, against the same
    lines untrimmed."""
    h = probe.hunk
    whole = probe.excerpt(h.path, h.old_start - 400, h.old_start + len(h.old_lines) + 20)
    trimmed = cut_middle(whole, 6000)
    return {"untrimmed": notice_rate(probe, context(probe, [whole]), seeds),
            "trimmed tail": notice_rate(probe, context(probe, [trimmed]), seeds)}


def _obs(call_id: str, tool: str, args: dict[str, Any], content: str, kind: ObservationKind, turn: int,
         path: str | None = None, lines: tuple[int, int] | None = None) -> Observation:
    return Observation(call_id, tool, tuple(sorted(args.items())), content, False, kind, turn, path, lines)


def _turn(index: int, obs: Observation) -> Turn:
    call = ToolCall(obs.call_id, obs.tool, json.dumps(dict(obs.arguments), sort_keys=True))
    return Turn(index, f"step {index}", (call,), (obs,))


def summarized(history: History, keep_recent: int = 1) -> list[dict[str, Any]]:
    """The messages the `summarizer` (extractive) sends once it summarizes: every turn but the last
    `keep_recent` folded into its digest, right after the task statement."""
    boundary = len(history.turns) - keep_recent
    text, _ = reduce(Digest.fold, history.turns[:boundary], Digest()).render(history.task_statement)
    summary = summary_message(history.turns[0].index, history.turns[boundary - 1].index, text)
    return [history.system_message(), history.task_message(), {"role": "user", "content": summary},
            *(m for turn in history.turns[boundary:] for m in turn_messages(turn))]


def fixed_and_tested(probe: Probe) -> History:
    """A run that failed the tests, found and read the fix's pre-image, fixed it, read eight unrelated
    files and passed the tests."""
    h = probe.hunk
    start, end = max(1, h.old_start - 20), h.old_start + len(h.old_lines) + 20
    turns = [
        _turn(0, _obs("t0", "run_tests", {}, f"FAILED tests/test_math_functions.py::test_round_table\n{exit_marker(1)}",
                      "test_run", 0)),
        _turn(1, _obs("t1", "search", {"query": "def fn_round("}, f"1 matches for 'def fn_round('\n"
                      f"{h.path}:{h.old_start}: def fn_round(", "search", 1)),
        _turn(2, _obs("t2", "read_file", {"path": h.path, "start_line": start, "end_line": end},
                      probe.excerpt(h.path, start, end), "file_read", 2, h.path, (start, end))),
        _turn(3, _obs("t3", "edit_file", {"path": h.path, "old_text": h.old_text, "new_text": h.new_text},
                      f"edited {h.path}: replaced 1 lines with 1 lines", "edit", 3, h.path)),
    ]
    turns += [_turn(4 + k, _obs(f"f{k}", "read_file", {"path": "filler", "k": k}, probe.filler(k), "file_read",
                                4 + k, "filler", (1, 40))) for k in range(8)]
    turns.append(_turn(12, _obs("t12", "run_tests", {}, f"64 passed\n{exit_marker(0)}", "test_run", 12)))
    return History(SYSTEM, probe.task.problem_statement, tuple(turns))


def forgetting_probe(probe: Probe, seeds: int) -> dict[str, float]:
    """A run that read, fixed and tested (`fixed_and_tested`), folded into the `summarizer`'s summary:
    how often the next action is to finish (memory kept) rather than to explore again.

    Returns the finish rate with the history verbatim and with it summarized, and how often the
    summarized run repeats a call the summary lists.
    """
    history = fixed_and_tested(probe)
    verbatim = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": probe.task.problem_statement}]
    for turn in history.turns:
        verbatim += turn_messages(turn)
    listed = {("search", json.dumps({"query": "def fn_round("}, sort_keys=True)), ("run_tests", "{}")}

    def rate(messages: list[dict[str, Any]]) -> tuple[float, float]:
        finished = repeated = 0
        for seed in range(seeds):
            call = probe.model(seed).complete(messages, TOOL_SCHEMAS).tool_calls[0]
            finished += call.name == "finish"
            repeated += (call.name, call.arguments) in listed
        return finished / seeds, repeated / seeds

    v_finish, _ = rate(verbatim)
    s_finish, s_repeat = rate(summarized(history))
    return {"verbatim finish": v_finish, "summarized finish": s_finish, "summarized repeats a listed call": s_repeat}


def noise_probe(probe: Probe, seeds: int, fillers: int = 8) -> dict[str, float]:
    """How often the next action is a detour (not the best-ranked one) with no noise, with irrelevant
    tool output and with the same irrelevant code injected as a snippet (a user message)."""
    statement = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": probe.task.problem_statement}]
    clean = statement
    noise = [probe.filler(k) for k in range(fillers)]
    as_tools = context(probe, noise)
    as_snippet = statement + [{"role": "user", "content": "Relevant code:\n\n" + "\n\n".join(noise)}]

    def best(messages: list[dict[str, Any]]) -> str:
        calls = [probe.model(s, detour_rate=0).complete(messages, TOOL_SCHEMAS).tool_calls[0] for s in range(3)]
        return calls[0].name + calls[0].arguments

    def detours(messages: list[dict[str, Any]]) -> float:
        top = best(messages)
        moved = 0
        for s in range(seeds):
            c = probe.model(s).complete(messages, TOOL_SCHEMAS).tool_calls[0]
            moved += c.name + c.arguments != top
        return moved / seeds

    return {"no noise": detours(clean), "irrelevant tool output": detours(as_tools),
            "irrelevant injected snippet": detours(as_snippet)}
