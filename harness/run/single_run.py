"""One run: a fresh workspace, the agent loop, the evaluation, and its records."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.harness.loop.agent import AgentOutcome, run_agent
from ctxbench.harness.config.agent import AgentSpec
from ctxbench.harness.config import ExperimentConfig
from ctxbench.harness.context import Budget, fixed_tokens
from ctxbench.harness.agents.external import ExternalRun, run_external
from ctxbench.harness.records.failures import classify_failure
from ctxbench.harness.models import make_model
from ctxbench.harness.protocols import FatalModelError
from ctxbench.harness.pricing import Prices, run_cost
from ctxbench.harness.records import History, RunResult, Task, Taskset, TranscriptHeader, TranscriptTurn
from ctxbench.harness.redact import remember_key_variable, scrub
from ctxbench.harness.records.results_folder import transcript_path
from ctxbench.harness.sandbox import Sandbox
from ctxbench.harness.models.served_counting import counter_for, model_counter
from ctxbench.harness.loop.tools import TOOL_SCHEMAS, Toolbox
from ctxbench.harness.records.transcript import TranscriptWriter, compress_transcript, read_transcript
from ctxbench.harness.tasks.validate import base_collection_failure
from ctxbench.harness.environments import Workspace, base_evaluation, environment_for
from ctxbench.harness.environments.workspace import Evaluation
from ctxbench.harness.environments.workspace_files import WorkspaceFiles
from ctxbench.strategies import StrategyServices, create_strategy

__all__ = ["RunSpec", "RunContext", "FinishedRun", "run_seed", "counter_for", "make_budget", "run_one",
           "transcript_path", "live_transcript_path"]


@dataclass(frozen=True)
class RunSpec:
    strategy: str
    """Strategy label (results key)."""
    strategy_name: str
    params: dict[str, Any]
    task_id: str
    repeat: int
    seed: int

    @property
    def run_id(self) -> str:
        return f"{self.strategy}/{self.task_id}/{self.repeat}"


@dataclass(frozen=True)
class RunContext:
    """Everything a worker needs to execute runs (picklable)."""

    config: ExperimentConfig
    taskset: Taskset
    system_prompt: str
    interpreters: dict[str, str]
    """Task id -> the Python its tests run with (its own environment's, or the taskset's)."""
    sandbox: Sandbox
    output_dir: Path
    experiment_id: str
    fixed: dict[str, str]
    """Hashes of the fixed variables (see runner.fixed_variables)."""
    prices: Prices | None = None
    """What a run's tokens cost (None: unknown, cost_usd left empty)."""
    agents: dict[str, AgentSpec] = dataclasses.field(default_factory=dict)
    """Arm key -> the external agent it runs (resolved); arms not here run the builtin loop."""
    left_out: dict[str, str] = dataclasses.field(default_factory=dict)
    """Arms of the experiment file left out because their agent is not installed (`--available`): key ->
    how to install it."""


@dataclass(frozen=True)
class FinishedRun:
    """A run's result and its gzipped transcript, on their way from where the run ran to the one writer."""

    result: RunResult
    transcript: bytes | None


def run_seed(experiment_seed: int, task_id: str, repeat: int) -> int:
    """Depends on (task, repeat) only, so every strategy meets the same seeds."""
    return int(hashlib.sha256(f"{experiment_seed}:{task_id}:{repeat}".encode()).hexdigest()[:8], 16)


def make_budget(config: ExperimentConfig, system_prompt: str) -> Budget:
    """A run's budget, counted as `model.tokenizer` says (`model_counter`: a calibrated counter is the
    run's own)."""
    counter = model_counter(config.model, TOOL_SCHEMAS)
    return Budget(config.model.window, config.model.max_output_tokens,
                  fixed_tokens(counter, system_prompt, TOOL_SCHEMAS), counter)


def live_transcript_path(ctx: RunContext, spec: RunSpec) -> Path:
    """Where a run writes its transcript turn by turn: beside the gzipped one for local runs (a killed
    run leaves it there), a private temporary file on a Ray node (shipped back when the run ends)."""
    if ctx.config.executor == "ray":
        fd, name = tempfile.mkstemp(prefix="ctxbench-transcript-", suffix=".jsonl")
        os.close(fd)
        return Path(name)
    return transcript_path(ctx.output_dir, spec.strategy, spec.task_id, spec.repeat).with_suffix("")


def run_one(ctx: RunContext, spec: RunSpec, model_factory: Any = None) -> FinishedRun:
    """One agent run, recorded whatever happens; only a fatal provider error propagates.

    Args:
        model_factory: `(task, counter, seed) -> model`; default builds the configured provider.
    """
    start = time.monotonic()
    remember_key_variable(ctx.config.model.api_key_env)
    task = next(t for t in ctx.taskset.tasks if t.id == spec.task_id)
    base = dict(experiment_id=ctx.experiment_id, run_id=spec.run_id, strategy=spec.strategy,
                task_id=task.id, repeat=spec.repeat, seed=spec.seed)
    live = live_transcript_path(ctx, spec)
    transcript = TranscriptWriter(live, TranscriptHeader(run_id=spec.run_id, strategy=spec.strategy,
                                                         task_id=task.id, repeat=spec.repeat, seed=spec.seed))
    ws = None
    try:
        config = ctx.config
        budget = make_budget(config, ctx.system_prompt)
        ws = environment_for(task).prepare(task, ctx.interpreters[task.id], sandbox=ctx.sandbox,
                                           output_cap=config.limits.tool_output_bytes, keep=config.keep_workspaces)
        model = (model_factory or (lambda t, c, s: make_model(config.model, t, c, s)))(task, budget.counter, spec.seed)
        deadline = start + config.limits.run_timeout_s
        agent = ctx.agents.get(spec.strategy)
        if agent is not None:
            external = ExternalRun(agent, spec.strategy_name, spec.params, config, ctx.sandbox, ctx.prices,
                                   ctx.interpreters[task.id])
            outcome = run_external(external, task, ws, model, budget.counter, transcript, deadline)
        else:
            strategy = create_strategy(spec.strategy_name, spec.params,
                                       StrategyServices(model=model, repo=WorkspaceFiles(ws.root)))
            toolbox = Toolbox(ws, config.limits.test_timeout_s, config.limits.tool_output_bytes)
            outcome = run_agent(History(ctx.system_prompt, task.problem_statement), strategy, model, toolbox,
                                budget, config.limits, deadline, transcript, ctx.prices)
        result = _judged_result(ctx, task, ws, outcome, base, start)
    except FatalModelError:
        raise
    except Exception:
        error = scrub(traceback.format_exc())
        transcript.close()
        spent = _spent(ctx.prices, _outcome_from_transcript(live, History(ctx.system_prompt, task.problem_statement)))
        result = RunResult(**base, resolved=False, failure_reason="harness_error", **spent,
                           wall_s=round(time.monotonic() - start, 3), error=error, workspace=_kept(ctx, ws))
    finally:
        transcript.close()
        if ws is not None and not ctx.config.keep_workspaces:
            ws.cleanup()
        data = live.read_bytes()
        if ctx.config.executor == "ray":
            live.unlink()
    return FinishedRun(result, compress_transcript(data))


def _judged_result(ctx: RunContext, task: Task, ws: Workspace, outcome: AgentOutcome, base: dict[str, Any],
                   start: float) -> RunResult:
    """The record of a run the agent finished: its patch judged, its failure reason, what it spent."""
    patch, evaluation, fault = _judge(ctx, task, ws)
    reason = classify_failure(outcome.stop, patch, evaluation.resolved, evaluation.fail_to_pass_ok,
                              taskset_fault=fault is not None)
    return RunResult(
        **base, resolved=reason is None, failure_reason=reason, **_spent(ctx.prices, outcome),
        wall_s=round(time.monotonic() - start, 3), model_s=round(outcome.model_s, 3),
        tool_s=round(outcome.tool_s, 3), test_s=round(outcome.test_s + evaluation.seconds, 3),
        tool_calls=dict(sorted(outcome.tool_calls.items())), invalid_actions=outcome.invalid_actions,
        context_loss_events=outcome.context_loss_events,
        own_rewrites=outcome.own_rewrites, cut_replies=outcome.cut_replies, tests=dict(evaluation.tests),
        patch=scrub(patch),
        workspace=_kept(ctx, ws), grader="swebench" if evaluation.grader == "swebench" else None,
        error=(scrub(outcome.detail) if reason in ("model_error", "request_refused", "agent_error",
                                                   "context_overflow")
               else _taskset_fault_message(fault)),
    )


def _judge(ctx: RunContext, task: Task, ws: Workspace) -> tuple[str, Evaluation, str | None]:
    """The run's patch, its evaluation, and the base's own test failure when the tests were not collected
    (a fault of the taskset, not of the agent)."""
    limits, python = ctx.config.limits, ctx.interpreters[task.id]
    patch = ws.diff()
    if patch or ctx.config.keep_workspaces:  # a kept workspace shows what its own evaluation saw
        evaluation = ws.evaluate(limits.test_timeout_s)
    else:  # no change: the base's evaluation, run once per task in this process
        evaluation = base_evaluation(task, python, limits.test_timeout_s, ctx.sandbox, ws)
    fault = None
    if not evaluation.resolved and evaluation.not_collected:
        fault = base_collection_failure(task, python, limits.test_timeout_s, ctx.sandbox)
    return patch, evaluation, fault


def _spent(prices: Prices | None, outcome: AgentOutcome) -> dict[str, Any]:
    """The RunResult fields of what the run spent: turns, tokens, cost."""
    return dict(turns=outcome.turns, prompt_tokens=outcome.prompt_tokens, completion_tokens=outcome.completion_tokens,
                strategy_tokens=outcome.strategy_tokens, total_tokens=outcome.total_tokens,
                cached_tokens=outcome.cached_tokens, peak_context_tokens=outcome.peak_context_tokens,
                cost_usd=_cost(prices, outcome), usage_estimated=outcome.usage_estimated)


def _outcome_from_transcript(path: Path, history: History) -> AgentOutcome:
    """The turns and tokens a run's transcript holds (a run that failed in the harness keeps its spend)."""
    out = AgentOutcome("harness_error", history)
    try:
        turns = [r for r in read_transcript(path) if isinstance(r, TranscriptTurn)]
    except (OSError, ValueError):  # nothing readable was written: nothing was spent
        return out
    for turn in turns:
        out.turns += 1
        out.add_usage(turn.usage)
        out.strategy_tokens += turn.ledger.strategy_tokens
        out.strategy_completion_tokens += turn.ledger.strategy_completion_tokens
        out.peak_context_tokens = max(out.peak_context_tokens, turn.context_tokens)
    return out


def _cost(prices: Prices | None, outcome: AgentOutcome) -> float | None:
    """The run's dollars: the agent's calls, and the strategy's own calls (their prompts priced as uncached)."""
    strategy_prompt = outcome.strategy_tokens - outcome.strategy_completion_tokens
    cost = run_cost(prices, outcome.prompt_tokens + strategy_prompt, outcome.cached_tokens,
                    outcome.completion_tokens + outcome.strategy_completion_tokens, outcome.cache_write_tokens)
    return None if cost is None else round(cost, 8)


def _taskset_fault_message(output: str | None) -> str | None:
    if output is None:
        return None
    return ("the tests could not be collected, at the base commit either (the taskset or its test "
            "environment is at fault); last test output:\n" + scrub(output))


def _kept(ctx: RunContext, ws: Workspace | None) -> str | None:
    return str(ws.root) if ws is not None and ctx.config.keep_workspaces else None
