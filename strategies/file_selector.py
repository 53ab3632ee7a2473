"""`file_selector`: the most relevant repository snippets, injected once, instead of old file reads."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ctxbench.harness.context import Budget, Context, ContextOverflow
from ctxbench.harness.history import append_turn, tool_message
from ctxbench.harness.markup.placeholders import hidden_read
from ctxbench.harness.records import ContextLedger, History, Observation
from ctxbench.harness.markup.rendering import render_excerpt
from ctxbench.harness.tokens import MESSAGE_OVERHEAD
from ctxbench.strategies.allocation import DEFAULT_SHARES, portion
from ctxbench.strategies.chunking import Chunk, chunk_file
from ctxbench.strategies.packing import Candidate, ProtectedOverBudget, select_candidates
from ctxbench.strategies.registry import StrategyError, StrategyServices, register_strategy
from ctxbench.strategies.relevance import error_locations, error_text, latest_error, score_chunks

HEADER = "Code selected for this task ({n} snippets, most relevant first; current file contents):"


@register_strategy("file_selector")
class FileSelector:
    """One user message of ranked snippets right after the task; older file reads become notes.

    Candidates are `ctxbench.strategies.chunking` snippets of every file of `services.repo`, scored by
    `ctxbench.strategies.relevance` against the task statement and the latest error output (chunks sharing
    nothing with them, or scoring below `min_score_share` of the best, are not candidates).
    `ctxbench.strategies.packing.select_candidates` picks complete snippets within `files_share` of `budget.available`: score order, ties by id; the windows of
    one long definition taken or left whole; at most `per_file_quota` per file; the snippet that
    holds the innermost repository frame of the latest traceback protected (first, never dropped);
    snippets fully shown by a file read of the current turn skipped. Every left-out snippet is in
    the ledger with its reason. File reads of earlier turns keep their tool message with a one-line
    note. The rest of the history is sent verbatim: the total budget is not enforced.

    Raises:
        ContextOverflow: the protected snippet does not fit the files budget.
    """

    enforces_budget: ClassVar[bool] = False

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        files_share: float = Field(DEFAULT_SHARES["key_files"], gt=0, le=1, description="Share of budget.available for the injected snippets.")
        per_file_quota: int = Field(2, ge=1, description="Most snippets (or whole long definitions) taken from one file.")
        max_snippet_lines: int = Field(60, ge=5, description="Longest snippet in lines; longer definitions become windows taken together.")
        min_score_share: float = Field(0.2, ge=0, le=1, description="Snippets scoring below this share of the best score are not candidates (lexical noise).")
        protect_error_site: bool = Field(True, description="Protect the snippet holding the innermost repository frame of the latest traceback.")

    def __init__(self, params: Params, services: StrategyServices | None = None) -> None:
        if services is None or services.repo is None:
            raise StrategyError("file_selector needs a repository view (StrategyServices.repo)")
        self.params, self.repo = params, services.repo
        self._chunks: dict[str, tuple[str, list[Chunk]]] = {}

    def _chunks_of(self, path: str) -> list[Chunk]:
        text = self.repo.read(path)
        cached = self._chunks.get(path)
        if cached is None or cached[0] != text:
            cached = self._chunks[path] = (text, chunk_file(path, text, self.params.max_snippet_lines))
        return cached[1]

    def candidates(self, history: History, ledger: ContextLedger, paths: list[str],
                   chunks: list[Chunk]) -> list[Candidate]:
        """Relevant, not currently visible snippets of `chunks` (those of `paths`); long definitions
        as dependency chains."""
        error = latest_error(history)
        evidence = error_text(error) if error else ""
        locations = error_locations(evidence, paths)
        scores = score_chunks(chunks, history.task_statement + "\n" + evidence, locations)
        site = locations[-1] if locations and self.params.protect_error_site else None
        reads = [o for o in (history.turns[-1].observations if history.turns else ())
                 if o.kind == "file_read" and not o.is_error and o.line_range]
        groups: dict[str, list[tuple[Chunk, float]]] = {}
        for chunk, score in zip(chunks, scores):
            groups.setdefault(chunk.group or chunk.id, []).append((chunk, score))
        floor = self.params.min_score_share * max(scores, default=0.0)
        out = []
        for members in groups.values():
            score = max(s for _, s in members)
            protected = site is not None and any(c.path == site[0] and c.start <= site[1] <= c.end for c, _ in members)
            if (score <= 0 or score < floor) and not protected:
                continue
            if not protected and all(_shown(c, reads) for c, _ in members):
                ledger.act("skipped", members[0][0].id, "already_visible")
                continue
            for k, (c, _) in enumerate(members):
                deps = (members[k - 1][0].id,) if k else ()
                out.append(Candidate(c.id, "\n".join(c.lines), "snippet", score, deps, protected, source_ref=c.path))
        return out

    def build(self, history: History, budget: Budget) -> Context:
        count, ledger = budget.counter.count_message, ContextLedger()
        paths = self.repo.paths()
        chunks = [c for path in paths for c in self._chunks_of(path)]
        rendered = {c.id: render_excerpt(c.path, c.lines, c.start, c.total) for c in chunks}
        files_budget = max(0, portion(budget.available, self.params.files_share)
                           - MESSAGE_OVERHEAD - budget.counter.count(HEADER.format(n=999) + "\n\n"))
        try:
            chosen = select_candidates(self.candidates(history, ledger, paths, chunks), files_budget,
                                       lambda c: budget.counter.count(rendered[c.item_id] + "\n\n"),
                                       self.params.per_file_quota)
        except ProtectedOverBudget as exc:
            raise ContextOverflow(f"file_selector: the error-site snippet does not fit the files budget: {exc}") from exc
        system, task = history.system_message(), history.task_message()
        messages = [system, task]
        ledger.add("system", count(system))
        ledger.add("task", count(task))
        if chosen.selected:
            body = "\n\n".join(rendered[c.item_id] for c in chosen.selected)
            messages.append({"role": "user", "content": HEADER.format(n=len(chosen.selected)) + "\n\n" + body})
            ledger.add("files", count(messages[-1]))
            ledger.act("injected", "selection", (f"{len(chosen.selected)} snippets, {chosen.used}/{files_budget} tokens, "
                                                        f"{len(chosen.left_out)} left out"), after=count(messages[-1]))
        for c in chosen.selected:
            ledger.act("selected", c.item_id, f"score {c.priority:g}" + (" (protected: error site)" if c.protected else ""))
        for left in chosen.left_out:
            ledger.act("skipped", left.id, left.reason)
        for position, turn in enumerate(history.turns):
            replaced = {}
            for obs in turn.observations:
                if obs.kind == "file_read" and not obs.is_error and position < len(history.turns) - 1:
                    replaced[obs.call_id] = hidden_read(obs.path, obs.line_range, turn.index)
                    ledger.act("evicted", obs.call_id, "old file read replaced by a note", count(tool_message(obs)),
                               count(tool_message(obs, replaced[obs.call_id])))
            append_turn(messages, ledger, turn, count, replaced)
        return Context(messages, ledger)


def _shown(chunk: Chunk, reads: list[Observation]) -> bool:
    return any(o.path == chunk.path and o.line_range is not None and o.line_range[0] <= chunk.start
               and chunk.end <= o.line_range[1] for o in reads)
