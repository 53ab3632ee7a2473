"""`summarizer`: past a history budget, earlier turns become one summary; the last K stay verbatim."""

from __future__ import annotations

from itertools import accumulate
from typing import Any, ClassVar, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ctxbench.harness.context import Budget, Context, ContextOverflow
from ctxbench.harness.history import file_turn, turn_messages
from ctxbench.harness.protocols import MalformedOutput, ModelError
from ctxbench.harness.records import ContextLedger, History, Turn
from ctxbench.harness.markup.summaries import (SUMMARIZE_PROMPT, Digest, fold_request, folded_call, folded_turn,
                                        summary_message)
from ctxbench.harness.markup.textcut import cut_middle
from ctxbench.strategies.registry import StrategyError, StrategyServices, register_strategy

__all__ = ["Summarizer", "SUMMARIZE_PROMPT"]


@register_strategy("summarizer")
class Summarizer:
    """Verbatim turns while they fit `history_share` of the budget; afterwards a summary plus the last K.

    Trigger: the first prefix of `t > keep_recent` turns whose messages exceed
    `history_share * budget.available` tokens. From then on the turns before the last
    `keep_recent` are replaced by one user message right after the task statement:

    - `extractive`: a `ctxbench.harness.markup.summaries.Digest` (task goal, files read, files modified, commands
      and outcomes, unresolved errors), a left fold over the turns;
    - `model`: `services.model.complete` with `SUMMARIZE_PROMPT`; the first call summarizes turns
      `0..t-keep_recent-1`, each later call folds the previous summary and one more turn, so the
      summary is a function of the history (cached on the instance), and the call's usage goes to
      the ledger's strategy tokens.

    Within `max_summary_chars`, each section is bounded on its own: the task goal, every file
    modified (and how) and the unresolved errors are never cut; the files read (line ranges merged
    per file) and the commands drop their oldest entries. In `model` mode the model's text is cut
    to head + tail and the digest's three kept sections follow it, so a model cannot lose them.

    Raises:
        ContextOverflow: the task, summary and last `keep_recent` turns exceed `budget.available`.
    """

    enforces_budget: ClassVar[bool] = True

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        mode: Literal["extractive", "model"] = Field("extractive", description="How earlier turns are summarized: a deterministic digest, or a call to the experiment's model.")
        keep_recent: int = Field(4, ge=1, description="Most recent turns always sent verbatim.")
        history_share: float = Field(0.6, gt=0, le=1, description="Share of budget.available the turns may take verbatim before summarizing starts.")
        max_summary_chars: int = Field(4000, ge=200, description="Characters the summary may take; the task goal, files modified and unresolved errors are kept beyond it.")
        model_input_chars: int = Field(2000, ge=100, description="Model mode: characters of each tool output shown to the summarizing model.")

    def __init__(self, params: Params, services: StrategyServices | None = None) -> None:
        self.params = params
        self.model = services.model if services else None
        if params.mode == "model" and self.model is None:
            raise StrategyError("summarizer mode 'model' needs a model in StrategyServices")
        self._cache: tuple[int, tuple[Turn, ...], Any] | None = None
        self._digest: tuple[tuple[Turn, ...], Digest] = ((), Digest())

    def preflight(self, budget: Budget) -> None:
        if budget.available <= 0:
            raise ContextOverflow(f"summarizer: no tokens available (budget.available={budget.available})")

    def build(self, history: History, budget: Budget) -> Context:
        p, count, ledger = self.params, budget.counter.count_message, ContextLedger()
        units = [turn_messages(t) for t in history.turns]
        cumulative = list(accumulate(sum(count(m) for m in unit) for unit in units))
        limit = int(budget.available * p.history_share)
        trigger = next((m for m in range(p.keep_recent + 1, len(units) + 1) if cumulative[m - 1] > limit), None)
        system, task = history.system_message(), history.task_message()
        head = [task]
        boundary = 0
        if trigger is not None:
            boundary = len(units) - p.keep_recent
            try:
                cut, omitted = self._summary(history, trigger - p.keep_recent, boundary, ledger, budget)
            except ModelError as exc:
                exc.ledger = ledger  # the calls that succeeded before this one are counted
                raise
            first, last = history.turns[0].index, history.turns[boundary - 1].index
            head.append({"role": "user", "content": summary_message(first, last, cut)})
            for turn in history.turns[:boundary]:
                ledger.act("summarized", f"turn:{turn.index}", f"{p.mode} summary (history over {limit} tokens)")
            if omitted:
                ledger.act("trimmed", "summary", f"summary over max_summary_chars={p.max_summary_chars}: {omitted}")
            ledger.add("summary", count(head[1]))
        ledger.add("system", count(system))
        ledger.add("task", count(task))
        messages = [system, *head]
        for turn, unit in zip(history.turns[boundary:], units[boundary:]):
            file_turn(ledger, turn, unit, count)
            messages += unit
        used = budget.counter.count_messages(messages) - count(system)
        if used > budget.available:
            raise ContextOverflow(f"summarizer: task + summary + last {len(units) - boundary} turns take {used} "
                                  f"tokens, over budget.available={budget.available}")
        return Context(messages, ledger)

    def _summary(self, history: History, first: int, boundary: int, ledger: ContextLedger,
                 budget: Budget) -> tuple[str, str]:
        """Summary of turns[:boundary] and what was left out of it ("" when nothing); `first` is where
        the model-mode chain starts."""
        digest, p = self._folded(history.turns[:boundary]), self.params
        if p.mode == "extractive":
            text, omitted = digest.render(history.task_statement, p.max_summary_chars)
            return text, f"{omitted} oldest entries of the files read and commands left out" if omitted else ""
        turns = history.turns
        start, state = 0, None
        if self._cache is not None:
            c_anchor, c_turns, c_state = self._cache
            if c_anchor == first and len(c_turns) <= boundary and turns[:len(c_turns)] == c_turns:
                start, state = len(c_turns), c_state
        if state is None:
            state, start = self._call(None, turns[:first], ledger, budget), first
        for i in range(start, boundary):
            state = self._call(state, turns[i:i + 1], ledger, budget)
        self._cache = (first, turns[:boundary], state)
        kept = "\n".join(digest.kept_sections(history.task_statement))
        text = cut_middle(state, max(200, p.max_summary_chars - len(kept) - 1))
        return f"{text}\n{kept}", "model summary cut to head + tail" if text != state else ""

    def _folded(self, turns: tuple[Turn, ...]) -> Digest:
        """The digest of `turns`, continued from the previous build's when it is a prefix."""
        done, digest = self._digest
        if len(done) > len(turns) or turns[:len(done)] != done:
            done, digest = (), Digest()
        for turn in turns[len(done):]:
            digest = digest.fold(turn)
        self._digest = (turns, digest)
        return digest

    def _call(self, previous: str | None, turns: Sequence[Turn], ledger: ContextLedger, budget: Budget) -> str:
        """One summarizing call: the previous summary (if any) and `turns` in, the new summary out."""
        entries = []
        for turn in turns:
            entries.append(folded_turn(turn.index, turn.text))
            for call, obs in zip(turn.tool_calls, turn.observations):
                body = cut_middle(obs.content, self.params.model_input_chars)
                entries.append(folded_call(call.name, call.arguments, obs.kind, obs.is_error, body))
        messages = [{"role": "system", "content": SUMMARIZE_PROMPT},
                    {"role": "user", "content": fold_request(previous, entries)}]
        assert self.model is not None, "mode 'model' without a model is refused in __init__"
        completion = self.model.complete(messages, tools=[])
        usage = completion.usage
        if usage.prompt_tokens or usage.completion_tokens:
            ledger.strategy_prompt_tokens += usage.prompt_tokens
            ledger.strategy_completion_tokens += usage.completion_tokens
        else:  # the provider reported no usage: count what was sent and received
            ledger.strategy_prompt_tokens += budget.counter.count_messages(messages)
            ledger.strategy_completion_tokens += budget.counter.count(completion.text or "")
        text = (completion.text or "").strip()
        if not text:
            raise MalformedOutput("summarizer: the model returned an empty summary")
        return text
