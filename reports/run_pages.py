"""The report's run pages: one self-contained HTML page per run with a transcript.

A page holds the problem statement and the system prompt (collapsed), the outcome with the evidence
behind its failure reason, the outcome of each FAIL_TO_PASS / PASS_TO_PASS test, the final patch, the
same (task, repeat) in the other arms (side by side where the outcomes diverge), and every turn,
collapsible. The pages are built from the records read once: runs.jsonl is not read again per page.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ctxbench.harness.errors import InputError
from ctxbench.harness.paths import write_atomically
from ctxbench.harness.records import Manifest, RunResult
from ctxbench.harness.records.results_folder import transcript_path
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.reports.document import Block, Code, Details, Heading, Paragraph, SideBySide, Table, to_html
from ctxbench.reports.loading import ResultsFolder
from ctxbench.reports.runview import RunView, header_blocks, read_view, run_page_path, turn_blocks

__all__ = ["RequestedTests", "requested_tests", "page_blocks", "write_run_pages", "run_index", "ERROR_CHARS"]

ERROR_CHARS = 4000
"""Characters of a run's error text (traceback, provider error, test output) shown on its page."""

RequestedTests = dict[str, dict[str, str]]
"""task id -> test id -> FAIL_TO_PASS or PASS_TO_PASS."""


def requested_tests(manifest: Manifest) -> RequestedTests:
    """Which requested test is FAIL_TO_PASS and which PASS_TO_PASS, per task, from the taskset the
    manifest names; empty when that taskset is no longer where it was (the pages then list the tests
    without their kind)."""
    if manifest.taskset is None:
        return {}
    repos = (manifest.config.get("taskset") or {}).get("repos")
    try:
        taskset = load_taskset(Path(manifest.taskset.path), Path(repos) if repos else None)
    except (InputError, OSError):
        return {}
    return {t.id: {**{i: "PASS_TO_PASS" for i in t.PASS_TO_PASS}, **{i: "FAIL_TO_PASS" for i in t.FAIL_TO_PASS}}
            for t in taskset.tasks}


@dataclass(frozen=True)
class _Context:
    """What every page of a folder shares: the runs by (task, repeat), the manifest and the test kinds."""

    manifest: Manifest
    by_pair: dict[tuple[str, int], list[RunResult]]
    kinds: RequestedTests
    has_page: frozenset[str]


def _outcome(r: RunResult) -> str:
    return "✓ resolved" if r.resolved else f"✗ `{r.failure_reason}`"


def _failing(r: RunResult, kinds: dict[str, str]) -> list[str]:
    return [f"{kinds.get(t, 'test')} `{t}` {o}" for t, o in r.tests.items() if o != "passed"]


def _evidence(view: RunView, kinds: dict[str, str]) -> list[Block]:
    """Why the run failed, in the records' own words: the loop's stop, the tests that did not pass,
    an empty patch, the error text."""
    r = view.result
    if r is None or r.resolved:
        return []
    lines = [f"**Failure reason** `{r.failure_reason}`."]
    if view.end is not None:
        lines.append(f"The loop stopped with `{view.end.stop}`" + (f": {view.end.detail}" if view.end.detail else "."))
    failing = _failing(r, kinds)
    if failing:
        lines.append(f"{len(failing)} of {len(r.tests)} requested tests did not pass: " + "; ".join(failing) + ".")
    if not r.patch.strip():
        lines.append("The final patch is empty: the agent changed no file.")
    blocks: list[Block] = [Paragraph(" ".join(lines))]
    if r.error:
        cut = r.error if len(r.error) <= ERROR_CHARS else r.error[-ERROR_CHARS:]
        blocks.append(Details(f"Error text ({len(r.error):,} characters)", (Code(cut),), open=True))
    return blocks


def _tests_table(r: RunResult, kinds: dict[str, str]) -> list[Block]:
    if not r.tests:
        return [Paragraph("No test outcome was recorded.")]
    order = {"FAIL_TO_PASS": 0, "PASS_TO_PASS": 1}
    rows = sorted(((kinds.get(t, "–"), t, o) for t, o in r.tests.items()), key=lambda x: (order.get(x[0], 2), x[1]))
    frame = pd.DataFrame([{"kind": k, "test": f"`{t}`", "outcome": o} for k, t, o in rows])
    return [Table(frame, id="tests", inline=True,
                  colours=(("passed", "#2ca02c"), ("failed", "#d62728"), ("error", "#d62728"), ("missing", "#7f7f7f")))]


def _patch(r: RunResult) -> Block:
    if not r.patch.strip():
        return Paragraph("The final patch is empty.")
    return Code(r.patch)


def _link(ctx: _Context, r: RunResult, label: str) -> str:
    return f"[{label}](../{r.strategy}/{r.task_id}.{r.repeat}.html)" if r.run_id in ctx.has_page else label


def _other_arms(ctx: _Context, r: RunResult) -> list[Block]:
    """The same (task, repeat) in every arm, with links; side by side with each arm whose outcome differs."""
    arms = ctx.by_pair.get((r.task_id, r.repeat), [])
    if len(arms) < 2:
        return []
    frame = pd.DataFrame([{"strategy": _link(ctx, o, o.strategy) if o.run_id != r.run_id else f"**{o.strategy}** (this run)",
                           "outcome": _outcome(o), "turns": o.turns, "tokens": f"{o.total_tokens:,}",
                           "patch lines": o.patch.count("\n")} for o in arms])
    blocks: list[Block] = [Heading(f"`{r.task_id}` repeat {r.repeat} in every arm"),
                           Table(frame, id="arms", inline=True)]
    kinds = ctx.kinds.get(r.task_id, {})
    for other in arms:
        if other.run_id == r.run_id or (other.resolved, other.failure_reason) == (r.resolved, r.failure_reason):
            continue
        columns = tuple((f"{x.strategy}: {_outcome(x)}",
                         (Paragraph("; ".join(_failing(x, kinds)) or "every requested test passed"), _patch(x)))
                        for x in (r, other))
        blocks.append(Details(f"Side by side with `{other.strategy}` (the outcomes differ)", (SideBySide(columns),)))
    return blocks


def page_blocks(view: RunView, ctx: _Context) -> list[Block]:
    """A run's page: links, header, evidence, statement and prompt, tests, patch, other arms, turns."""
    r = view.result
    blocks: list[Block] = [Paragraph("[← the report](../../report.html)"), *header_blocks(view)]
    kinds = ctx.kinds.get(view.header.task_id, {})
    blocks += _evidence(view, kinds)
    first = [view.messages.get(h, {}) for h in (view.turns[0].messages if view.turns else [])]
    statement = next((m.get("content") or "" for m in first if m.get("role") == "user"), "")
    system = ctx.manifest.system_prompt or next((m.get("content") or "" for m in first if m.get("role") == "system"), "")
    blocks += [Details("Problem statement", (Code(statement or "(not in the transcript)"),)),
               Details("System prompt", (Code(system or "(not recorded)"),))]
    if r is not None:
        blocks += [Heading("Tests"), *_tests_table(r, kinds), Heading("Final patch"), _patch(r), *_other_arms(ctx, r)]
    blocks.append(Heading("Turns"))
    for turn, inner in turn_blocks(view, full=True):
        calls = ", ".join(c.name for c in turn.tool_calls) or "no tool call"
        summary = f"Turn {turn.turn}: {turn.context_tokens:,} tokens, {len(turn.ledger.actions)} strategy action(s) → {calls}"
        blocks.append(Details(summary, tuple(inner)))
    return blocks


def write_run_pages(path: str | Path, results: list[RunResult], manifest: Manifest) -> dict[str, Path]:
    """A self-contained HTML page per run that has a transcript; run id -> page. Each transcript is
    read once and runs.jsonl not at all (the records are `results`)."""
    path = Path(path)
    files = {r.run_id: transcript_path(path, r.strategy, r.task_id, r.repeat) for r in results}
    files = {k: f for k, f in files.items() if f.is_file()}
    by_pair: dict[tuple[str, int], list[RunResult]] = {}
    for r in results:
        by_pair.setdefault((r.task_id, r.repeat), []).append(r)
    ctx = _Context(manifest, by_pair, requested_tests(manifest) if files else {}, frozenset(files))
    pages = {}
    for result in results:
        if result.run_id not in files:
            continue
        page = run_page_path(path, result)
        page.parent.mkdir(parents=True, exist_ok=True)
        view = read_view(files[result.run_id], result)
        write_atomically(page, to_html(page_blocks(view, ctx), f"ctxbench run {result.run_id}"))
        pages[result.run_id] = page
    return pages


def run_index(folder: ResultsFolder) -> list[Block]:
    """Every run with a transcript, linked to its page (✓ resolved, ✗ not), tasks × strategies."""
    cells: dict[tuple[str, str], list[str]] = {}
    for r in folder.runs.sort_values("repeat").to_dict(orient="records"):
        strategy, task, repeat = str(r["strategy"]), str(r["task_id"]), int(r["repeat"])
        if not transcript_path(folder.path, strategy, task, repeat).is_file():
            continue
        href = f"runs/{strategy}/{task}.{repeat}.html"
        cells.setdefault((task, strategy), []).append(f"[{'✓' if r['resolved'] else '✗'}{repeat}]({href})")
    if not cells:
        return []
    tasks = list(dict.fromkeys(t for t, _ in sorted(cells)))
    frame = pd.DataFrame([{s: " ".join(cells.get((t, s), [])) or "–" for s in folder.strategies} for t in tasks],
                         index=pd.Index(tasks, name="task"))
    return [Heading("Runs"),
            Paragraph("Each run turn by turn (what the strategy changed, what the model saw and did), one page per "
                      "run: ✓ resolved, ✗ not, then the repeat. In a terminal: `ctxbench show RUN_DIR RUN_ID`."),
            Table(frame, id="runs", inline=True)]
