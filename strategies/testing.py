"""The strategy contract check, and the histories it runs on: for the built-ins' tests and for plugin authors.

    from ctxbench.strategies.testing import check_strategy
    check_strategy(MyStrategy)                 # raises StrategyContractError naming the first breach

or, for a registered strategy, `ctxbench strategies check NAME`. The histories are real `History`
objects over a small in-memory repository: growing, with huge outputs, error-heavy, many files per
turn, and one whose last turn alone does not fit.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from typing import Any, Callable, ClassVar

from pydantic import BaseModel

from ctxbench.harness.context import Budget, Context, ContextOverflow, conversation_problems
from ctxbench.harness.errors import CheckFailed
from ctxbench.harness.history import History, Observation, ToolCall, Turn
from ctxbench.harness.protocols import Completion, Usage
from ctxbench.harness.records import ObservationKind
from ctxbench.harness.markup.placeholders import exit_marker
from ctxbench.harness.markup.rendering import render_excerpt
from ctxbench.harness.protocols import StaticRepo
from ctxbench.harness.tokens import REPLY_PRIMING, TokenCounter
from ctxbench.strategies.registry import StrategyServices

__all__ = ["check_strategy", "StrategyContractError", "CONTRACT_CASES", "contract_services", "COUNTER", "REPO",
           "SYSTEM", "TASK", "OPS", "EchoSummaryModel", "make_budget", "make_repo", "make_turn", "obs", "read_obs",
           "run_obs", "run_output", "search_obs", "scripted_history", "with_turns", "long_function", "util_module",
           "agent_turn"]

COUNTER = TokenCounter("cl100k_base")
SYSTEM = "You are a careful coding agent. Use the tools to read, search, edit and run the tests."
TASK = ("divide() in calc/ops.py crashes with ZeroDivisionError when b is 0; it must return None instead.\n"
        "Do not change the signature of divide. The failing test is tests/test_ops.py::test_divide_by_zero.")

OPS = '''"""Arithmetic operations."""

from calc.util_0 import helper_0_a


def add(a, b):
    return a + b


def divide(a, b):
    """Divide a by b."""
    return a / b


def multiply(a, b):
    result = 0
    for _ in range(b):
        result = add(result, a)
    return result
'''


def util_module(k: int) -> str:
    body = [f'"""Utility module {k}: helpers and a widget."""', "", "import math", "", f"CONSTANT_{k} = {k}", ""]
    for name in ("a", "b", "c"):
        body += ["", f"def helper_{k}_{name}(x):", f'    """Scale x by {k} ({name})."""', "    total = 0",
                 "    for i in range(x):", f"        total += i * CONSTANT_{k}", "    return math.floor(total)", ""]
    body += ["", f"class Widget{k}:", f'    """A widget of size {k}."""', "", "    def __init__(self, size):",
             "        self.size = size", "", "    def grow(self, by):", "        self.size += by",
             "        return self.size", ""]
    return "\n".join(body)


def long_function(lines: int) -> str:
    body = ["def long_report(rows):", '    """Build a long report."""', "    out = []"]
    body += [f"    out.append(str(rows[{i}]))  # row {i}" for i in range(lines)]
    return "\n".join(body + ["    return out", ""])


def make_repo(n_utils: int = 24) -> StaticRepo:
    files = {"calc/__init__.py": "", "calc/ops.py": OPS, "calc/report.py": long_function(90),
             "README.md": "\n".join(f"Line {i} of the calc README: usage, division, notes." for i in range(120)),
             "tests/test_ops.py": ("from calc.ops import divide\n\n\ndef test_divide():\n    assert divide(4, 2) == 2\n\n\n"
                                   "def test_divide_by_zero():\n    assert divide(1, 0) is None\n")}
    files.update({f"calc/util_{k}.py": util_module(k) for k in range(n_utils)})
    return StaticRepo(files)


REPO = make_repo()


def obs(call_id: str, tool: str, kind: ObservationKind, content: str, turn: int, *, path: str | None = None,
        line_range: tuple[int, int] | None = None, is_error: bool = False, **args: Any) -> Observation:
    return Observation(call_id, tool, tuple(sorted(args.items())), content, is_error, kind, turn, path, line_range)


def make_turn(index: int, text: str, *observations: Observation) -> Turn:
    calls = tuple(ToolCall(o.call_id, o.tool, json.dumps(dict(o.arguments), sort_keys=True)) for o in observations)
    return Turn(index, text, calls, tuple(observations))


def read_obs(call_id: str, turn: int, path: str, start: int = 1, end: int | None = None, repo: StaticRepo = REPO) -> Observation:
    lines = repo.read(path).splitlines()
    end = min(end or len(lines), len(lines))
    content = render_excerpt(path, lines[start - 1:end], start, len(lines))
    return obs(call_id, "read_file", "file_read", content, turn, path=path, line_range=(start, end), path_arg=path)


def run_output(failing: bool = True, filler: int = 60) -> str:
    lines = ["============================= test session starts ==============================",
             "collected %d items" % (filler + 2)]
    lines += [f"tests/test_util_{i}.py::test_helper_{i} PASSED" for i in range(filler)]
    if failing:
        lines += ["=================================== FAILURES ===================================",
                  "_____________________________ test_divide_by_zero ______________________________",
                  "", "    def test_divide_by_zero():", ">       assert divide(1, 0) is None", "",
                  "tests/test_ops.py:9: ", "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",
                  "", "a = 1, b = 0", "", "    def divide(a, b):", '        """Divide a by b."""',
                  ">       return a / b", "E       ZeroDivisionError: division by zero", "",
                  "calc/ops.py:12: ZeroDivisionError",
                  "FAILED tests/test_ops.py::test_divide_by_zero - ZeroDivisionError: division by zero",
                  f"========================= 1 failed, {filler + 1} passed in 0.12s ========================="]
    else:
        lines.append(f"============================== {filler + 2} passed in 0.10s ==============================")
    return "\n".join(lines + [exit_marker(1 if failing else 0)])


def run_obs(call_id: str, turn: int, failing: bool = True, filler: int = 60) -> Observation:
    return obs(call_id, "run_tests", "test_run", run_output(failing, filler), turn)


def search_obs(call_id: str, turn: int, query: str = "divide", repo: StaticRepo = REPO) -> Observation:
    hits = [f"{p}:{n}: {line.strip()}" for p in repo.paths() for n, line in enumerate(repo.read(p).splitlines(), 1)
            if re.search(query, line)]
    return obs(call_id, "search", "search", f"{len(hits)} matches for '{query}'\n" + "\n".join(hits), turn, query=query)


def agent_turn(i: int, *, huge: int = 0, error_heavy: bool = False, files_per_turn: int = 1) -> Turn:
    """Turn `i` of a scripted exploration: tests, searches, reads, listings, edits and failed calls."""
    cid = f"c{i}"
    step = i % 6
    if error_heavy or step == 0:
        o = [run_obs(f"{cid}a", i, filler=60 if not huge else huge // 50)]
        if error_heavy:
            o.append(obs(f"{cid}b", "read_file", "error", f"Error: file not found: calc/missing_{i}.py", i,
                         is_error=True, path_arg=f"calc/missing_{i}.py"))
        return make_turn(i, "Run the tests to see what fails." if step == 0 else "", *o)
    if step == 1:
        return make_turn(i, "Search for divide.", search_obs(cid, i))
    if step == 2:
        reads = [read_obs(f"{cid}{k}", i, f"calc/util_{(i + k) % 24}.py") for k in range(files_per_turn)]
        return make_turn(i, "Plan: 1) read the utilities 2) fix divide 3) rerun the tests.", *reads)
    if step == 3:
        listing = "\n".join(REPO.paths())
        return make_turn(i, "", obs(cid, "list_files", "listing", listing, i, path_arg="."),
                         read_obs(f"{cid}r", i, "calc/ops.py", 1, 20))
    if step == 4:
        path = f"calc/util_{i % 24}.py"
        return make_turn(i, "Apply a small edit.",
                         obs(cid, "edit_file", "edit", f"Edited {path}: replaced 1 occurrence", i, path=path, path_arg=path))
    return make_turn(i, "", obs(cid, "read_file", "error", "Error: file not found: calc/nope.py", i,
                                is_error=True, path_arg="calc/nope.py"))


def scripted_history(n_turns: int, **kwargs: Any) -> History:
    return History(SYSTEM, TASK, tuple(agent_turn(i, **kwargs) for i in range(n_turns)))


def with_turns(history: History, turns: list[Turn]) -> History:
    return History(history.system_prompt, history.task_statement, tuple(turns))


def make_budget(window: int = 16000, reserve: int = 1000, schema_tokens: int = 400) -> Budget:
    fixed = COUNTER.count_message({"role": "system", "content": SYSTEM}) + schema_tokens
    return Budget(window, reserve, fixed, COUNTER)


class EchoSummaryModel:
    """Scripted summarizing model: its reply names the turns it was shown and the previous summary's start."""

    takes_cache_marks: ClassVar[bool] = False

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Completion:
        self.calls.append((messages, tools))
        user = messages[-1]["content"]
        turns = re.findall(r"^Turn (\d+) assistant", user, re.MULTILINE)
        previous = re.search(r"Previous summary:\n(.*)", user)
        text = f"Folded turns {','.join(turns)}." + (f" Before: {previous.group(1)[:60]}" if previous else "")
        return Completion(text, (), Usage(prompt_tokens=50 + len(user) // 10, completion_tokens=20))


# -- the contract ------------------------------------------------------------------------------

class StrategyContractError(CheckFailed, AssertionError):
    """A strategy broke the contract; the message names the case, the prefix and the rule."""


def _overflowing() -> History:
    history = scripted_history(8)
    last = make_turn(8, "Run the whole suite verbosely.",
                     obs("c8", "run_tests", "test_run", run_output(filler=6000), 8))
    return with_turns(history, [*history.turns, last])


def _replies_without_calls() -> History:
    """Every fourth reply calls no tool, as a model that sometimes answers in prose does."""
    turns = [make_turn(i, "The fix is to return None in divide when b is 0.") if i % 4 == 3 else agent_turn(i)
             for i in range(24)]
    return History(SYSTEM, TASK, tuple(turns))


CONTRACT_CASES: dict[str, Callable[[], History]] = {
    "growing": lambda: scripted_history(60),
    "replies_without_calls": _replies_without_calls,
    "huge_outputs": lambda: scripted_history(30, huge=40000),
    "errors": lambda: scripted_history(30, error_heavy=True),
    "many_files": lambda: scripted_history(40, files_per_turn=4),
    "last_turn_too_big": _overflowing,
}
"""The histories every strategy is checked on. Only on `last_turn_too_big`, and only at its full
length, may a strategy that enforces the budget refuse with ContextOverflow."""


def contract_services() -> Any:
    """Services for the check: a scripted summarizing model and a read-only view of the fixture repository."""
    return StrategyServices(model=EchoSummaryModel(), repo=REPO)


def _require(ok: Any, where: str, rule: str) -> None:
    if not ok:
        raise StrategyContractError(f"{where}: {rule}")


def _check_declaration(cls: type) -> type[BaseModel]:
    """The class-level rules; returns the strategy's `Params` model."""
    name = getattr(cls, "__name__", repr(cls))
    _require(cls.__doc__, name, "needs a docstring (its first line is what `ctxbench strategies list` shows)")
    params = getattr(cls, "Params", None)
    if not (isinstance(params, type) and issubclass(params, BaseModel)):
        raise StrategyContractError(f"{name}: needs a nested pydantic `Params` class")
    _require(params.model_config.get("extra") == "forbid", name, "Params must forbid unknown keys "
             "(model_config = ConfigDict(extra='forbid')): a misspelt parameter must be an error, not ignored")
    for field, info in params.model_fields.items():
        _require(info.description, name, f"parameter {field!r} needs a description (Field(..., description=...))")
    _require(isinstance(getattr(cls, "enforces_budget", None), bool), name,
             "must declare `enforces_budget: ClassVar[bool]` (does every context fit budget.available?)")
    _require(callable(getattr(cls, "build", None)), name, "needs a `build(history, budget) -> Context` method")
    try:
        inspect.signature(cls).bind(params(), None)
    except TypeError:
        _require(False, name, "the constructor must accept (params, services=None)")
    return params


def _check_context(ctx: Any, history: History, budget: Budget, enforces: bool, where: str) -> None:
    _require(isinstance(ctx, Context), where, f"build must return a Context, got {type(ctx).__name__}")
    messages = ctx.messages
    _require(messages and messages[0] == history.system_message(), where, "the first message is the system prompt")
    _require(len(messages) > 1 and messages[1] == history.task_message(), where,
             "the task statement comes right after the system prompt")
    expected: list[str] = []
    for msg in messages:
        if msg["role"] == "tool":
            _require(expected, where, f"orphan tool message {msg.get('tool_call_id')}: a tool result without its call")
            _require(msg["tool_call_id"] == expected.pop(0), where, "tool results answer the calls in order")
            continue
        _require(not expected, where, f"tool calls left unanswered: {expected} (a call and its result are one unit)")
        expected = [c["id"] for c in msg.get("tool_calls") or ()]
    _require(not expected, where, f"tool calls left unanswered: {expected} (a call and its result are one unit)")
    problems = conversation_problems(messages)
    _require(not problems, where, "the context is a conversation a chat server accepts (it ends with a user or "
                                  "tool message, no two assistant messages in a row; ctxbench.harness.context."
                                  "well_formed repairs it, at a cost): " + "; ".join(problems))
    total = budget.counter.count_messages(messages)
    ledgered = sum(ctx.ledger.components.values()) + REPLY_PRIMING
    _require(ledgered == total, where, f"the ledger accounts for every token: components sum to "
                                       f"{ledgered - REPLY_PRIMING} + {REPLY_PRIMING} reply priming, messages take {total}")
    _check_filing(ctx, history, budget, where)
    if enforces:
        over = total - budget.counter.count_message(messages[0])
        _require(over <= budget.available, where, f"enforces_budget is set but the context takes {over} tokens "
                                                  f"beyond the system prompt, over budget.available={budget.available}")


def _check_filing(ctx: Context, history: History, budget: Budget, where: str) -> None:
    """Each component holds at least the messages that belong to it: the system prompt under `system`, the
    task under `task`, assistant messages under `history`, results of file reads under `files`, other tool
    results under `tool_output`. Messages a strategy adds (summaries, pinned notes, snippets) may go anywhere."""
    count, messages = budget.counter.count_message, ctx.messages
    reads: dict[str, set[bool]] = {}
    for o in (o for t in history.turns for o in t.observations):
        reads.setdefault(o.call_id, set()).add(o.kind == "file_read")
    floor = {"system": count(messages[0]), "task": count(messages[1]), "history": 0, "files": 0, "tool_output": 0}
    for msg in messages[2:]:
        read = reads.get(msg.get("tool_call_id", ""), set()) if msg["role"] == "tool" else set()
        if msg["role"] == "assistant":
            floor["history"] += count(msg)
        elif len(read) == 1:  # a call id reused by another kind of call is left out
            floor["files" if read == {True} else "tool_output"] += count(msg)
    for component, tokens in floor.items():
        filed = ctx.ledger.components.get(component, 0)
        _require(filed >= tokens, where, f"the ledger files {filed} tokens under {component!r} but its messages "
                 f"take {tokens} (file reads go under 'files', other tool results under 'tool_output', "
                 "assistant messages under 'history', whatever their content)")


def check_strategy(cls: type, params: dict[str, Any] | None = None, services: Any = None,
                   budget: Budget | None = None) -> int:
    """Check a strategy class against the contract every built-in passes; returns the number of builds checked.

    The rules: a docstring, a pydantic `Params` that forbids unknown keys and describes every field,
    a declared `enforces_budget`, a `(params, services=None)` constructor; `build` never mutates the
    history, keeps the system prompt then the task statement first, keeps each tool call and its
    results together and in order, accounts for every token in the ledger and files it where it belongs
    (file reads under `files`, other tool results under `tool_output`), fits `budget.available`
    when it says it enforces the budget, and is deterministic: two fresh instances give the same
    context, and one instance built turn after turn (like the runner) agrees with a fresh one.

    Args:
        cls: The strategy class (registered or not).
        params: Its parameters (validated by `cls.Params`); default all defaults.
        services: StrategyServices for the check; default `contract_services()`.
        budget: Default a 16,000-token window (`make_budget()`).

    Raises:
        StrategyContractError: the first rule broken, naming the case and the turn.
    """
    params_model = _check_declaration(cls)
    budget = budget or make_budget()

    def fresh() -> Any:
        return cls(params_model(**(params or {})), services if services is not None else contract_services())

    return sum(_check_case(cls, case, make(), fresh, budget) for case, make in CONTRACT_CASES.items())


def _check_case(cls: type, case: str, history: History, fresh: Callable[[], Any], budget: Budget) -> int:
    """Build every prefix of `history` with one instance, then the whole with two fresh ones; the builds checked."""
    before, strategy, enforces = copy.deepcopy(history), fresh(), bool(getattr(cls, "enforces_budget"))
    if hasattr(strategy, "preflight"):
        strategy.preflight(budget)
    last: Any = None
    checked = 0
    for n in range(len(history.turns) + 1):
        prefix = with_turns(history, list(history.turns[:n]))
        where = f"{cls.__name__} on {case!r} at {n} turns"
        try:
            last = strategy.build(prefix, budget)
        except ContextOverflow as exc:
            _require(prefix == with_turns(history, list(history.turns[:n])), where, "the history is never mutated")
            _require(enforces and case == "last_turn_too_big" and n == len(history.turns), where,
                     f"raised ContextOverflow ({exc}); only a budget-enforcing strategy may, and only when "
                     "the last turn alone does not fit")
            last = None
            continue
        _require(prefix == with_turns(history, list(history.turns[:n])), where, "the history is never mutated")
        _check_context(last, prefix, budget, enforces, where)
        checked += 1
    _require(history == before, f"{cls.__name__} on {case!r}", "the history is never mutated")
    where = f"{cls.__name__} on {case!r}, fresh instances"
    if last is None:
        for _ in range(2):
            try:
                fresh().build(history, budget)
            except ContextOverflow:
                continue
            _require(False, where, "a fresh instance built what the incremental one refused")
        return checked
    first, second = fresh().build(history, budget), fresh().build(history, budget)
    _require(first.messages == second.messages and first.ledger == second.ledger, where,
             "two fresh instances must build the same context and ledger (no randomness, no clock)")
    _require(first.messages == last.messages, where,
             "an instance built turn after turn must agree with a fresh one (caches must not change results)")
    return checked
