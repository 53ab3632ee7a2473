"""`budget_planner`: an allocation table, pinned items, and a fixed eviction order (notes 001, 003)."""

from __future__ import annotations

from typing import Any, Callable, ClassVar, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxbench.harness.context import Budget, Component, Context, ContextOverflow
from ctxbench.harness.history import file_turn, tool_component, turn_messages
from ctxbench.harness.markup.placeholders import evicted_output
from ctxbench.harness.records import ContextLedger, History
from ctxbench.harness.markup.textcut import cut_middle
from ctxbench.harness.tokens import REPLY_PRIMING
from ctxbench.strategies.allocation import (DEFAULT_RESERVE_RATIO, DEFAULT_SHARES, TABLES, AllocationTable, Phase,
                                            TableName, plan_context_budget, portion)
from ctxbench.strategies.eviction import EVICTION_ORDER, EvictionItem, eviction_plan
from ctxbench.strategies.pinned import pinned_notes
from ctxbench.strategies.registry import StrategyServices, register_strategy

_CAPPED: dict[Component, str] = {"files": "key_files", "history": "history", "tool_output": "tool_output"}
_TABLE_FIELDS = ("reserve_ratio", "key_files_share", "history_share", "tool_output_share", "extra_share", "high_water")


def task_phase(history: History) -> Phase:
    """`edit` from the first edit that applied on, `explore` before it (001 §5: retrieval, then writing code)."""
    done = any(o.kind == "edit" and not o.is_error for t in history.turns for o in t.observations)
    return "edit" if done else "explore"


@register_strategy("budget_planner")
class BudgetPlanner:
    """Keeps the request within a planned budget by evicting in a fixed order.

    The dynamic budget is `plan_context_budget(window, fixed, output_reserve, reserve_ratio)`;
    file reads are capped at `key_files_share` of it, assistant messages at `history_share`, other
    tool output at `tool_output_share` (`extra_share` covers the task and pinned notes). While a
    cap or the dynamic budget is exceeded, items are reduced layer by layer in the order defined
    precisely in `ctxbench.strategies.eviction` — stale tool output, finished-subtask history, early
    exploration, environment snapshots — (only items that touch an exceeded component, unless the total is over);
    inside a layer, items over `cut_chars` are first cut to head + marker + tail, then whole items
    are evicted. Never touched: the system prompt, the task statement, the pinned notes
    (`ctxbench.strategies.pinned`) and the last `keep_recent` turns.

    The table is re-allocated at every build (001 §5): from the budget it is handed (a larger resident
    layer, e.g. more tool schemas, shrinks every cap), for the task phase (`task_phase`; the `001`
    table shifts material from file reads to tool output once an edit applied), and past `high_water`
    of the dynamic budget, compression starts: items are cut to head + tail layer by layer, and only
    over the budget or a cap are whole items evicted. `table: "001"` is design note 001's illustrative
    table (`ctxbench.strategies.allocation.TABLES`).

    Raises:
        ContextOverflow: from `build`, when the untouchable part alone exceeds the dynamic budget;
            from `preflight`, when the fixed part leaves no dynamic budget.
    """

    enforces_budget: ClassVar[bool] = True

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        reserve_ratio: float = Field(DEFAULT_RESERVE_RATIO, ge=0, lt=1, description="Safety margin kept free, as a share of the context window.")
        key_files_share: float = Field(DEFAULT_SHARES["key_files"], ge=0, le=1, description="Cap on file-read output, as a share of the dynamic budget.")
        history_share: float = Field(DEFAULT_SHARES["history"], ge=0, le=1, description="Cap on assistant messages, as a share of the dynamic budget.")
        tool_output_share: float = Field(DEFAULT_SHARES["tool_output"], ge=0, le=1, description="Cap on other tool output (tests, search, listings...), as a share of the dynamic budget.")
        extra_share: float = Field(DEFAULT_SHARES["extra"], ge=0, le=1, description="Share of the dynamic budget planned for the task statement and pinned notes (never evicted).")
        keep_recent: int = Field(4, ge=0, description="Most recent turns that are never evicted or cut.")
        stale_after: int = Field(8, ge=1, description="Age in turns at which a tool output counts as stale even if nothing superseded it.")
        cut_chars: int = Field(1500, ge=1, description="Characters an item keeps when it is cut to head + marker + tail before being evicted.")
        head_ratio: float = Field(0.4, ge=0, le=1, description="Share of the kept characters taken from the head when cutting (the tail holds verdicts).")
        high_water: float = Field(1.0, gt=0, le=1, description="Share of the dynamic budget at which compression starts: items are cut to head + tail; whole items are evicted only over the budget or a cap (1: at the limit).")
        table: TableName = Field("003", description="Allocation table: '003' the margin, shares and high_water above; '001' design note 001's illustrative table (20% of the window kept for the reply, shares per task phase, compression from 80%), which fixes those six.")

        @model_validator(mode="after")
        def _shares_fit(self) -> "BudgetPlanner.Params":
            plan_context_budget(1, 0, 0, 0, self.shares())
            fixed = sorted(set(_TABLE_FIELDS) & self.model_fields_set)
            if self.table != "003" and fixed:
                raise ValueError(f"table {self.table!r} fixes {', '.join(fixed)}; set them with table '003'")
            return self

        def allocation(self) -> AllocationTable:
            """The table in use: a named one, or 003's made of these parameters."""
            if self.table != "003":
                return TABLES[self.table]
            return AllocationTable(self.reserve_ratio, 0.0, {"explore": self.shares(), "edit": self.shares()},
                                   self.high_water)

        def shares(self) -> dict[str, float]:
            return {"key_files": self.key_files_share, "history": self.history_share,
                    "tool_output": self.tool_output_share, "extra": self.extra_share}

    def __init__(self, params: Params, services: StrategyServices | None = None) -> None:
        self.params = params

    def plan(self, budget: Budget, phase: Phase = "explore") -> dict[str, int]:
        """The allocation table for `budget` in `phase`; ContextOverflow when the fixed part does not fit."""
        table = self.params.allocation()
        reserve = max(budget.output_reserve, portion(budget.context_window, table.reply_share))
        try:
            plan = plan_context_budget(budget.context_window, budget.fixed_tokens, reserve, table.reserve_ratio,
                                       table.shares[phase])
        except ValueError as exc:
            raise ContextOverflow(f"budget_planner: {exc}") from exc
        if plan["dynamic_budget"] <= 0:
            raise ContextOverflow(f"budget_planner: no dynamic budget left: {plan}")
        return plan

    def preflight(self, budget: Budget) -> None:
        self.plan(budget)

    def build(self, history: History, budget: Budget) -> Context:
        plan, p, count = self.plan(budget, task_phase(history)), self.params, budget.counter.count_message
        caps = {c: plan[key] for c, key in _CAPPED.items()}
        ledger = ContextLedger()
        head = [history.task_message()]
        pinned = pinned_notes(history, p.keep_recent)
        if pinned:
            head.append({"role": "user", "content": pinned})
            ledger.act("injected", "pinned", "pinned notes: constraints, current plan, key references",
                       after=count(head[1]))
        kept = {i: turn_messages(t) for i, t in enumerate(history.turns)}
        comps: dict[Component, int] = {"task": count(head[0]), "pinned": sum(count(m) for m in head[1:])}
        for i in kept:
            for component, tokens in self._turn_tokens(history, i, kept, count).items():
                comps[component] = comps.get(component, 0) + tokens

        def over(limit: int) -> set[str]:
            exceeded: set[str] = {c for c, cap in caps.items() if comps.get(c, 0) > cap}
            return exceeded | ({"total"} if REPLY_PRIMING + sum(comps.values()) > limit else set())

        items = eviction_plan(history.turns, p.keep_recent, p.stale_after)
        dynamic = plan["dynamic_budget"]
        water = portion(dynamic, p.allocation().high_water)
        passes = [(layer, True, water) for layer in EVICTION_ORDER] if water < dynamic else []
        passes += [(layer, cut, dynamic) for layer in EVICTION_ORDER for cut in (True, False)]
        for layer, cut, limit in passes:
            for item in (it for it in items if it.layer == layer):
                exceeded = over(limit)
                if not exceeded:
                    break
                if item.turn in kept and ("total" in exceeded or self._touches(history, item) & exceeded):
                    for component, delta in self._reduce(cut, history, item, kept, ledger, count).items():
                        comps[component] = comps.get(component, 0) + delta
        comps = {c: tokens for c, tokens in comps.items() if tokens or c in ("task", "pinned")}
        total = REPLY_PRIMING + sum(comps.values())
        if total > plan["dynamic_budget"]:
            raise ContextOverflow(
                f"budget_planner: {total} tokens after every allowed eviction exceed the dynamic budget "
                f"{plan['dynamic_budget']} (task {comps['task']}, pinned {comps['pinned']}, the last "
                f"{p.keep_recent} turns {total - REPLY_PRIMING - comps['task'] - comps['pinned']}); "
                f"the task, pinned notes and recent turns are never evicted")
        system = history.system_message()
        ledger.add("system", count(system))
        for component, tokens in comps.items():
            if tokens:
                ledger.add(component, tokens)
        return Context([system, *head, *(m for i in sorted(kept) for m in kept[i])], ledger)

    @staticmethod
    def _touches(history: History, item: EvictionItem) -> set[str]:
        observations = history.turns[item.turn].observations
        parts: set[str] = {tool_component(o) for o in observations if item.call_id in (None, o.call_id)}
        return parts if item.call_id else parts | {"history"}

    @staticmethod
    def _turn_tokens(history: History, i: int, kept: dict[int, list[dict[str, Any]]],
                     count: Callable[[dict[str, Any]], int]) -> dict[Component, int]:
        """Tokens of kept turn `i` per component: its assistant message (history) and its tool results."""
        ledger = ContextLedger()
        file_turn(ledger, history.turns[i], kept[i], count)
        return cast(dict[Component, int], ledger.components)  # file_turn files under Component names only

    def _reduce(self, cut: bool, history: History, item: EvictionItem, kept: dict[int, list[dict[str, Any]]],
                ledger: ContextLedger, count: Callable[[dict[str, Any]], int]) -> dict[Component, int]:
        """Cut the item's long messages to head + tail, or evict it (a turn dropped, an output noted).
        Returns the change in tokens per component, so the caller keeps running totals."""
        turn, msgs = history.turns[item.turn], kept[item.turn]
        if not cut and item.call_id is None:
            dropped = self._turn_tokens(history, item.turn, kept, count)
            before = sum(count(m) for m in kept.pop(item.turn))
            ledger.act("evicted", f"turn:{turn.index}", f"{item.layer}: whole turn dropped", before, 0)
            return {component: -tokens for component, tokens in dropped.items()}
        targets: list[tuple[dict[str, Any], str, str, Component]] = (
            [(msgs[0], f"turn:{turn.index}", "", "history")] if item.call_id is None else [])
        targets += [(m, o.call_id, o.tool, tool_component(o)) for o, m in zip(turn.observations, msgs[1:])
                    if item.call_id in (None, o.call_id)]
        deltas: dict[Component, int] = {}
        cut_before = {(a.kind, a.target) for a in ledger.actions}  # a message is cut once, not its cut again
        for msg, target, tool, component in targets:
            before, text = count(msg), msg.get("content") or ""
            if cut and len(text) > self.params.cut_chars and ("trimmed", target) not in cut_before:
                msg["content"] = cut_middle(text, self.params.cut_chars, self.params.head_ratio)
                after = count(msg)
                ledger.act("trimmed", target, f"{item.layer}: cut to head + tail", before, after)
            elif not cut:
                msg["content"] = evicted_output(tool, turn.index, item.layer)
                after = count(msg)
                ledger.act("evicted", target, f"{item.layer}: output replaced by a note", before, after)
            else:
                continue
            deltas[component] = deltas.get(component, 0) + after - before
        return deltas
