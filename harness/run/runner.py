"""Expands strategies x tasks x repeats, runs each in a fresh workspace, and records the results."""

from __future__ import annotations

import shutil
import sys
import time
from collections import deque
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ctxbench.harness.agents.setup import agent_fixed_variable, installed_arms, resolve_agents
from ctxbench.harness.config import ExperimentConfig, config_hash, load_config, resolve_experiment_path
from ctxbench.harness.context import ContextOverflow
from ctxbench.harness.errors import ExperimentAborted, InputError
from ctxbench.harness.concurrency import Gauge
from ctxbench.harness.run.checks import (check_agents_run_here, check_gold_patches, check_output_dir,
                                         pricing_warning, served_model)
from ctxbench.harness.run.executors import check_ray, execute
from ctxbench.harness.records.folderlock import FolderLock
from ctxbench.harness.models import check_upstream
from ctxbench.harness.paths import write_atomically
from ctxbench.harness.pricing import resolve_prices
from ctxbench.harness.records import Manifest, RunResult, SandboxInfo, StrategyEntry, Taskset, TasksetInfo
from ctxbench.harness.protocols import StaticRepo
from ctxbench.harness.records.results import ResultsWriter, read_results, repair_jsonl
from ctxbench.harness.records.results_folder import read_manifest
from ctxbench.harness.sandbox import choose_sandbox, fallback_warning, process_limit_mechanism
from ctxbench.harness.run.single_run import (FinishedRun, RunContext, RunSpec, counter_for, make_budget, run_one,
                                         run_seed, transcript_path)
from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path
from ctxbench.harness.tasks.hashing import taskset_hash
from ctxbench.harness.environments import environment_for, preflight_taskset
from ctxbench.harness.tokens import TokenizerError
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.harness.version import __version__
from ctxbench.harness.environments.workspace import remove_templates, sweep_leftovers
from ctxbench.strategies import StrategyServices, arm_problems, create_strategy, validate_params

__all__ = ["RunSpec", "RunContext", "plan_runs", "run_one", "run_experiment", "prepare", "load_experiment",
           "ExperimentAborted", "check_output_dir", "BREAKER_RUNS", "BREAKER_WINDOW_S", "counter_for",
           "make_budget", "run_seed"]

BREAKER_RUNS = 3
"""Runs ending in `model_error` within the breaker's window that stop the experiment (the circuit
breaker): each one met an endpoint failing for all of `model.retry_budget_s`, so it is down, and
every further run would wait as long to be lost too."""
BREAKER_WINDOW_S = 600.0
"""The breaker's window: this long, or 3 x `model.retry_budget_s` when that is longer (so runs one
after another, each failing for a whole budget, fall into one window)."""

def plan_runs(config: ExperimentConfig, taskset: Taskset) -> list[RunSpec]:
    return [RunSpec(s.key, s.name, s.params, t.id, r, run_seed(config.seed, t.id, r))
            for s in config.strategies for t in taskset.tasks for r in range(config.planned_repeats)]


# -- experiment level -----------------------------------------------------------------------------

def fixed_variables(config: ExperimentConfig, taskset: Taskset, system_prompt: str) -> dict[str, str]:
    """Hashes of what must not differ between runs that are compared."""
    model = config.model.model_dump(exclude={"pricing", "max_connections"})  # prices change the cost, not the runs
    return {
        "model": config_hash(model),
        "taskset": taskset_hash(taskset),
        "system_prompt": config_hash(system_prompt),
        "tools": config_hash(TOOL_SCHEMAS),
        "harness_version": __version__,
        "limits": config_hash(config.limits.model_dump()),
    }


def experiment_hash(config: ExperimentConfig, fixed: dict[str, str]) -> str:
    """The experiment's id: its name, resolved config (minus how it is executed) and taskset content.

    Two experiments with other strategies or repeats get different ids even when their fixed variables
    (`fixed_id`) agree.
    """
    resolved = _fixed_config(config.as_record())
    return config_hash({"name": config.name, "config": resolved, "taskset": fixed.get("taskset")})[:16]


def prepare(config: ExperimentConfig, config_dir: Path, output_dir: Path | None = None,
            available: bool = False) -> RunContext:
    """Resolve the taskset, system prompt, interpreter and sandbox; check every strategy's budget.
    `available` leaves out the arms whose agent is not installed (`RunContext.left_out`) instead of
    refusing the experiment."""
    if config.model.provider != "sim":  # first: an endpoint that is down fails within seconds
        check_upstream(config.model)
        config, notes = served_model(config)
        for note in notes:
            print(f"ctxbench: {note}", file=sys.stderr)
    if shutil.which("git") is None:
        raise InputError("git is not on PATH: every run's workspace is a git repository (Debian: apt-get install git)")
    left_out: dict[str, str] = {}
    if available:
        config, left_out = installed_arms(config, config_dir)
    agents = resolve_agents(config, config_dir)  # an agent that is not installed fails before any other work
    spec = config.taskset
    path = resolve_taskset_path(spec.path, config_dir)
    repos = (config_dir / spec.repos) if spec.repos else None
    taskset = load_taskset(path, repos).select(spec.ids, spec.include_tags, spec.exclude_tags, spec.limit)
    check_agents_run_here(config, taskset)
    system_prompt = config.resolved_system_prompt(config_dir)
    try:
        budget = make_budget(config, system_prompt)
    except TokenizerError as exc:
        raise InputError(f"model.tokenizer: {exc}") from None
    if budget.available <= 0:
        raise InputError(f"model.context_window {config.model.context_window} leaves no room: the fixed part "
                         f"({budget.fixed_tokens} tokens) plus the output reserve ({budget.output_reserve}) fill it")
    for s in config.strategies:
        probe = create_strategy(s.name, s.params, StrategyServices(model=_PreflightModel(), repo=StaticRepo({})))
        preflight = getattr(probe, "preflight", None)
        if preflight is not None:
            try:
                preflight(budget)
            except ContextOverflow as exc:
                raise InputError(f"strategy {s.key}: {exc}") from exc
    check_gold_patches(taskset)
    interpreters = preflight_taskset(taskset)  # each task's environment says what it needs
    fixed = fixed_variables(config, taskset, system_prompt)
    if agents:  # experiments of the builtin loop alone keep the fixed variables they always had
        fixed["agent"] = agent_fixed_variable(config, agents)
    experiment_id = experiment_hash(config, fixed)
    out = (output_dir or Path(config.output_dir or f"results/{config.name}-{_stamp()}")).resolve()
    check_output_dir(out, "--output" if output_dir else "output_dir")
    if config.executor == "ray":
        check_ray(config.ray_address)
    return RunContext(config, taskset, system_prompt, interpreters,
                      choose_sandbox(config.sandbox, hide=(*taskset.folders(), repos, out)), out, experiment_id, fixed,
                      resolve_prices(config.model), agents, left_out)


class _PreflightModel:
    """The model a strategy is lent for its preflight, which checks its budget and never calls it (so
    that a strategy that needs a model, the summarizer's `mode: model`, can be built before any run)."""

    def complete(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a strategy's preflight called the model")


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def load_experiment(path: str | Path, overrides: list[str] | None = None,
                    strategies: list[str] | None = None) -> ExperimentConfig:
    """`load_config` with every arm checked against the strategy registry (names and params).

    Raises:
        InputError: every problem of the file at once, one line each.
    """
    return load_config(resolve_experiment_path(path), overrides, strategies, check_arms=arm_problems)


def manifest_for(ctx: RunContext) -> Manifest:
    config = ctx.config
    return Manifest(
        experiment_id=ctx.experiment_id,
        fixed_id=config_hash(ctx.fixed)[:16],
        name=config.name,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        harness_version=__version__,
        fixed=ctx.fixed,
        config=config.as_record(),
        system_prompt=ctx.system_prompt,
        taskset=TasksetInfo(name=ctx.taskset.name, path=str(ctx.taskset.path),
                            tasks=[t.id for t in ctx.taskset.tasks]),
        strategies=[StrategyEntry(name=s.name, label=s.label or (s.key if s.key != s.name else None),
                                  agent=ctx.agents[s.key].label if s.key in ctx.agents else "builtin",
                                  params=validate_params(s.name, s.params).model_dump(mode="json"))
                    for s in config.strategies],
        sandbox=SandboxInfo(requested=config.sandbox, used=ctx.sandbox.mode,
                            warning=fallback_warning(config.sandbox, ctx.sandbox),
                            process_limit=process_limit_mechanism()),
        simulated=config.model.provider == "sim",
        pricing=ctx.prices.as_dict() if ctx.prices else None,
        runs_planned=len(plan_runs(config, ctx.taskset)),
        left_out=ctx.left_out,
    )


_NOT_FIXED = ("workers", "max_runs", "max_subprocesses", "executor", "ray_address", "output_dir")
"""Config keys that may change between a run and its resume (with `model.max_connections`)."""


def _fixed_config(record: dict[str, Any]) -> dict[str, Any]:
    """A config record without what only says how the runs are executed."""
    fixed = {k: v for k, v in record.items() if k not in _NOT_FIXED}
    if isinstance(fixed.get("model"), dict):
        fixed["model"] = {k: v for k, v in fixed["model"].items() if k != "max_connections"}
    return fixed


def _check_resume(output_dir: Path, manifest: Manifest) -> None:
    old = read_manifest(output_dir, "cannot resume")
    diffs = [k for k in sorted(set(old.fixed) | set(manifest.fixed)) if old.fixed.get(k) != manifest.fixed.get(k)]
    if old.strategies != manifest.strategies:
        diffs.append("strategies")
    a, b = _fixed_config(old.config), _fixed_config(manifest.config)
    if a != b and not diffs:
        diffs.append("config (" + ", ".join(sorted(k for k in a if a.get(k) != b.get(k))) + ")")
    if diffs:
        raise InputError(f"{output_dir}: cannot resume, the fixed variables differ: {', '.join(diffs)}")


def run_experiment(ctx: RunContext, resume: bool = False, progress: Any = None,
                   select: Callable[[RunSpec], bool] | None = None) -> list[RunResult]:
    """Run every missing run of the experiment (of those `select` keeps) into ctx.output_dir; returns
    all results recorded.

    The results folder is locked first (one runner per folder); an input error before the first run
    leaves nothing behind.
    """
    out = ctx.output_dir
    lock = FolderLock.acquire(out)
    try:
        try:
            done = _open_results(ctx, resume)
        except BaseException:
            lock.release(remove_created=True)
            raise
        return _run_missing(ctx, done, progress, select)
    finally:
        lock.release()


def _open_results(ctx: RunContext, resume: bool) -> set[str]:
    """Check (and on resume repair) what the folder holds, write the manifest; the recorded run ids."""
    out = ctx.output_dir
    manifest = manifest_for(ctx)
    runs_path = out / "runs.jsonl"
    if (out / "manifest.json").exists() or runs_path.exists():
        if not resume:
            raise InputError(f"{out} already holds results; pass --resume to continue it, or choose another --output")
        _check_resume(out, manifest)
        repaired = repair_jsonl(runs_path)
        if repaired:
            print(f"ctxbench: repaired a torn last line in {runs_path} ({repaired} bytes)", file=sys.stderr)
    if not (out / "manifest.json").exists():
        write_atomically(out / "manifest.json", manifest.model_dump_json(indent=2))
    results = read_results(runs_path)
    finished = [r for r in results if r.failure_reason != "model_error"]
    if len(finished) < len(results):  # cut short by the endpoint: not finished, so they run again
        write_atomically(runs_path, "".join(r.model_dump_json() + "\n" for r in finished))
        print(f"ctxbench: {len(results) - len(finished)} runs that ended in model_error run again", file=sys.stderr)
    return {r.run_id for r in finished}


def _run_missing(ctx: RunContext, done: set[str], progress: Any,
                 select: Callable[[RunSpec], bool] | None) -> list[RunResult]:
    out = ctx.output_dir
    runs_path = out / "runs.jsonl"
    for warning in (fallback_warning(ctx.config.sandbox, ctx.sandbox), pricing_warning(ctx.config)):
        if warning:
            print(f"ctxbench: WARNING: {warning}", file=sys.stderr)
    specs = plan_runs(ctx.config, ctx.taskset)
    todo = [s for s in specs if s.run_id not in done and (select is None or select(s))]
    for line in sweep_leftovers().messages():
        print(f"ctxbench: {line}", file=sys.stderr)
    if ctx.config.executor == "local":
        for task in ctx.taskset.tasks:
            environment_for(task).warm(task)  # built once here; forked workers inherit it (Ray workers build their own)
    writer = ResultsWriter(runs_path)

    def record(run: FinishedRun) -> None:
        result = run.result
        path = transcript_path(out, result.strategy, result.task_id, result.repeat)
        if run.transcript is not None:  # before the result line: a recorded run has its transcript
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(run.transcript)
        path.with_suffix("").unlink(missing_ok=True)  # the live transcript of a local run, now compressed
        writer.write(result)

    breaker = _Breaker(max(BREAKER_WINDOW_S, 3 * ctx.config.model.retry_budget_s))
    gauges = _ManifestGauges(out / "manifest.json")
    try:
        for run in execute(ctx, todo, run_one, progress, already_done=len(done),
                           total=len(specs) if select is None else len(done) + len(todo), on_gauges=gauges):
            record(run)
            if run.result.failure_reason == "model_error":
                breaker.trip_on(run.result)
    finally:
        writer.close()
        gauges.write()
        remove_templates()
    results = read_results(runs_path)
    order = {s.run_id: i for i, s in enumerate(specs)}
    results.sort(key=lambda r: order.get(r.run_id, len(order)))
    write_atomically(runs_path, "".join(r.model_dump_json() + "\n" for r in results))
    cut_short = [r for r in results if r.failure_reason == "model_error"]
    if cut_short:
        raise ExperimentAborted(f"{len(cut_short)} runs ended in model_error (last: {_one_line(cut_short[-1].error)}); "
                                "they are recorded as unfinished and --resume runs them again")
    return results


class _ManifestGauges:
    """Keeps the manifest's `concurrency` (the endpoints' limits of model calls in flight) current:
    rewritten at most every GAUGE_WRITE_S seconds while the runs go on, and when they end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.gauges: dict[str, Gauge] = {}
        self.written = time.monotonic()

    def __call__(self, gauges: dict[str, Gauge]) -> None:
        self.gauges = gauges
        if time.monotonic() - self.written >= GAUGE_WRITE_S:
            self.write()

    def write(self) -> None:
        if not self.gauges:
            return
        self.written = time.monotonic()
        manifest = read_manifest(self.path.parent, "cannot update")
        manifest.concurrency = {endpoint: g.as_dict() for endpoint, g in self.gauges.items()}
        write_atomically(self.path, manifest.model_dump_json(indent=2))


GAUGE_WRITE_S = 5.0


class _Breaker:
    """Stops the experiment when BREAKER_RUNS runs end in `model_error` within `window_s` seconds."""

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self.ends: deque[float] = deque()

    def trip_on(self, result: RunResult) -> None:
        """Count a run that ended in `model_error`.

        Raises:
            ExperimentAborted: the BREAKER_RUNS-th such run within the window.
        """
        now = time.monotonic()
        self.ends.append(now)
        while now - self.ends[0] > self.window_s:
            self.ends.popleft()
        if len(self.ends) >= BREAKER_RUNS:
            raise ExperimentAborted(
                f"{len(self.ends)} runs ended in model_error within {self.window_s / 60:g} min (the endpoint is "
                f"down; last: {_one_line(result.error)}); they are recorded as unfinished and --resume runs them again")


def _one_line(text: str | None) -> str:
    return " ".join((text or "?").split())[:300]



