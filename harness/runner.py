"""Expands strategies x tasks x repeats, runs each in a fresh workspace, and records the results."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ctxbench.harness.agent import run_agent
from ctxbench.harness.config import ExperimentConfig, config_hash
from ctxbench.harness.context import Budget, ContextOverflow
from ctxbench.harness.errors import InputError
from ctxbench.harness.failures import classify_failure
from ctxbench.harness.folderlock import FolderLock
from ctxbench.harness.history import History
from ctxbench.harness.models import make_model
from ctxbench.harness.models.base import FatalModelError
from ctxbench.harness.repo_view import StaticRepo
from ctxbench.harness.results import ResultsWriter, RunResult, read_results, repair_jsonl
from ctxbench.harness.sandbox import Sandbox, choose_sandbox, fallback_warning, process_limit_mechanism, sweep_cgroups
from ctxbench.harness.pricing import Prices, resolve_prices, run_cost
from ctxbench.harness.tasks import Taskset, load_taskset, resolve_taskset_path
from ctxbench.harness.testenv import command_problem, resolve_interpreter
from ctxbench.harness.tokens import REPLY_PRIMING, TokenCounter, TokenizerError
from ctxbench.harness.validate import base_collection_failure
from ctxbench.harness.tools import TOOL_SCHEMAS, Toolbox, walk_files
from ctxbench.harness.version import __version__
from ctxbench.harness.workspace import Workspace, prepare_template, remove_templates, sweep_stale
from ctxbench.strategies import StrategyServices, create_strategy

__all__ = ["RunSpec", "RunContext", "plan_runs", "run_one", "run_experiment", "prepare", "ExperimentAborted",
           "FIXED_KEYS", "check_output_dir", "MODEL_ERRORS_IN_A_ROW"]

MODEL_ERRORS_IN_A_ROW = 3
"""Runs ending in `model_error` one after another that stop the experiment (the circuit breaker):
an endpoint that fails this often is down, and every further run would be lost too."""

FIXED_KEYS = ("model", "taskset", "system_prompt", "tools", "harness_version", "limits")


class ExperimentAborted(RuntimeError):
    """The experiment cannot go on: a fatal provider error (authentication, unknown model, bad
    request), or a worker process died."""


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
    """Hashes of the fixed variables (see fixed_variables)."""
    prices: Prices | None = None
    """What a run's tokens cost (None: unknown, cost_usd left empty)."""


def run_seed(experiment_seed: int, task_id: str, repeat: int) -> int:
    """Depends on (task, repeat) only, so every strategy meets the same seeds."""
    return int(hashlib.sha256(f"{experiment_seed}:{task_id}:{repeat}".encode()).hexdigest()[:8], 16)


def plan_runs(config: ExperimentConfig, taskset: Taskset) -> list[RunSpec]:
    return [RunSpec(s.key, s.name, s.params, t.id, r, run_seed(config.seed, t.id, r))
            for s in config.strategies for t in taskset.tasks for r in range(config.repeats)]


_COUNTERS: dict[str, TokenCounter] = {}


def counter_for(name: str) -> TokenCounter:
    """One token counter (and cache) per tokenizer per process."""
    if name not in _COUNTERS:
        _COUNTERS[name] = TokenCounter(name)
    return _COUNTERS[name]


def make_budget(config: ExperimentConfig, system_prompt: str) -> Budget:
    counter = counter_for(config.model.tokenizer)
    fixed = (counter.count_message({"role": "system", "content": system_prompt})
             + counter.count_tools(TOOL_SCHEMAS) + REPLY_PRIMING)
    return Budget(config.model.context_window, config.model.max_output_tokens, fixed, counter)


def run_one(ctx: RunContext, spec: RunSpec, model_factory: Any = None) -> RunResult:
    """One agent run, recorded whatever happens; only a fatal provider error propagates.

    Args:
        model_factory: `(task, counter, seed) -> model`; default builds the configured provider.
    """
    start = time.monotonic()
    task = next(t for t in ctx.taskset.tasks if t.id == spec.task_id)
    base = dict(experiment_id=ctx.experiment_id, run_id=spec.run_id, strategy=spec.strategy,
                task_id=task.id, repeat=spec.repeat, seed=spec.seed)
    ws = None
    try:
        config = ctx.config
        budget = make_budget(config, ctx.system_prompt)
        ws = Workspace.create(task, ctx.interpreters[task.id], sandbox=ctx.sandbox, output_cap=config.limits.tool_output_bytes,
                              keep=config.keep_workspaces)
        model = (model_factory or (lambda t, c, s: make_model(config.model, t, c, s)))(task, budget.counter, spec.seed)
        strategy = create_strategy(spec.strategy_name, spec.params, StrategyServices(model=model, repo=_RepoFiles(ws.root)))
        toolbox = Toolbox(ws, config.limits.test_timeout_s, config.limits.tool_output_bytes)
        history = History(ctx.system_prompt, task.problem_statement)
        outcome = run_agent(history, strategy, model, toolbox, budget, config.limits,
                            start + config.limits.run_timeout_s)
        patch = ws.diff()
        evaluation = ws.evaluate(config.limits.test_timeout_s)
        fault = None
        if not evaluation.resolved and evaluation.not_collected:
            fault = base_collection_failure(task, ctx.interpreters[task.id], config.limits.test_timeout_s,
                                            ctx.sandbox)
        reason = classify_failure(outcome.stop, patch, evaluation.resolved, evaluation.fail_to_pass_ok,
                                  taskset_fault=fault is not None)
        result = RunResult(
            **base, resolved=reason is None, failure_reason=reason, turns=outcome.turns,
            prompt_tokens=outcome.prompt_tokens, completion_tokens=outcome.completion_tokens,
            strategy_tokens=outcome.strategy_tokens, total_tokens=outcome.total_tokens,
            cached_tokens=outcome.cached_tokens, peak_context_tokens=outcome.peak_context_tokens,
            cost_usd=_cost(ctx.prices, outcome),
            wall_s=round(time.monotonic() - start, 3), model_s=round(outcome.model_s, 3),
            tool_s=round(outcome.tool_s, 3), test_s=round(outcome.test_s + evaluation.seconds, 3),
            tool_calls=dict(sorted(outcome.tool_calls.items())), invalid_actions=outcome.invalid_actions,
            context_loss_events=outcome.context_loss_events, tests=dict(evaluation.tests), patch=patch,
            workspace=_kept(ctx, ws),
            error=outcome.detail if reason == "model_error" else _taskset_fault_message(fault),
        )
        result._transcript = _transcript(outcome.ledgers, outcome.detail)
        return result
    except FatalModelError:
        raise
    except Exception:
        return RunResult(**base, resolved=False, failure_reason="harness_error", turns=0, prompt_tokens=0,
                         completion_tokens=0, strategy_tokens=0, total_tokens=0, peak_context_tokens=0,
                         wall_s=round(time.monotonic() - start, 3), error=traceback.format_exc(),
                         workspace=_kept(ctx, ws))
    finally:
        if ws is not None and not ctx.config.keep_workspaces:
            ws.cleanup()


def _cost(prices: Prices | None, outcome: Any) -> float | None:
    """The run's dollars: the agent's calls, and the strategy's own calls (their prompts priced as uncached)."""
    strategy_prompt = outcome.strategy_tokens - outcome.strategy_completion_tokens
    cost = run_cost(prices, outcome.prompt_tokens + strategy_prompt, outcome.cached_tokens,
                    outcome.completion_tokens + outcome.strategy_completion_tokens)
    return None if cost is None else round(cost, 8)


def _taskset_fault_message(output: str | None) -> str | None:
    if output is None:
        return None
    return ("the tests could not be collected, at the base commit either (the taskset or its test "
            "environment is at fault); last test output:\n" + output)


def _kept(ctx: RunContext, ws: Workspace | None) -> str | None:
    return str(ws.root) if ws is not None and ctx.config.keep_workspaces else None


class _RepoFiles:
    """RepoView over a workspace folder: current text files, read-only."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def paths(self) -> list[str]:
        """The files the agent's tools see (`list_files` of the whole workspace)."""
        return [p.relative_to(self.root).as_posix() for p in walk_files(self.root)[0]]

    def read(self, path: str) -> str:
        return (self.root / path).read_text(errors="replace")


def _transcript(ledgers: list[dict], detail: str) -> bytes:
    """The run's per-turn ledger as gzipped JSON lines, built where the run ran (a worker or a Ray
    node) and written by the runner, so every output file has one writer."""
    lines = [json.dumps(record) for record in ledgers]
    if detail:
        lines.append(json.dumps({"stop_detail": detail}))
    return gzip.compress("".join(line + "\n" for line in lines).encode(), compresslevel=5, mtime=0)


def transcript_path(output_dir: Path, result: RunResult) -> Path:
    return output_dir / "transcripts" / result.strategy / f"{result.task_id}.{result.repeat}.jsonl.gz"


# -- experiment level -----------------------------------------------------------------------------

def fixed_variables(config: ExperimentConfig, taskset: Taskset, system_prompt: str) -> dict[str, str]:
    """Hashes of what must not differ between runs that are compared."""
    model = config.model.model_dump(exclude={"pricing"})  # prices change the cost, not the runs
    return {
        "model": config_hash(model),
        "taskset": taskset.content_hash(),
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
    resolved = {k: v for k, v in config.model_dump(mode="json").items() if k not in _NOT_FIXED}
    return config_hash({"name": config.name, "config": resolved, "taskset": fixed.get("taskset")})[:16]


def prepare(config: ExperimentConfig, config_dir: Path, output_dir: Path | None = None) -> RunContext:
    """Resolve the taskset, system prompt, interpreter and sandbox; check every strategy's budget."""
    if config.model.provider != "sim":  # first: an endpoint that is down fails within seconds
        from ctxbench.harness.models.openai_provider import preflight as check_endpoint

        check_endpoint(config.model)
    spec = config.taskset
    path = resolve_taskset_path(spec.path, config_dir)
    repos = (config_dir / spec.repos) if spec.repos else None
    taskset = load_taskset(path, repos).select(spec.ids, spec.include_tags, spec.exclude_tags, spec.limit)
    system_prompt = config.resolved_system_prompt(config_dir)
    try:
        budget = make_budget(config, system_prompt)
    except TokenizerError as exc:
        raise InputError(f"model.tokenizer: {exc}") from None
    if budget.available <= 0:
        raise InputError(f"model.context_window {config.model.context_window} leaves no room: the fixed part "
                         f"({budget.fixed_tokens} tokens) plus the output reserve ({budget.output_reserve}) fill it")
    for s in config.strategies:
        probe = create_strategy(s.name, s.params, StrategyServices(repo=StaticRepo({})))
        preflight = getattr(probe, "preflight", None)
        if preflight is not None:
            try:
                preflight(budget)
            except ContextOverflow as exc:
                raise InputError(f"strategy {s.key}: {exc}") from exc
    check_gold_patches(taskset)
    interpreters = {t.id: resolve_interpreter(taskset.environment_for(t)) for t in taskset.tasks}
    check_test_commands(taskset, interpreters)
    fixed = fixed_variables(config, taskset, system_prompt)
    experiment_id = experiment_hash(config, fixed)
    out = (output_dir or Path(config.output_dir or f"results/{config.name}-{_stamp()}")).resolve()
    check_output_dir(out, "--output" if output_dir else "output_dir")
    if config.executor == "ray":
        from ctxbench.harness.executors import check_ray

        check_ray(config.ray_address)
    return RunContext(config, taskset, system_prompt, interpreters,
                      choose_sandbox(config.sandbox, hide=(*taskset.folders(), repos, out)), out, experiment_id, fixed,
                      resolve_prices(config.model))


def check_output_dir(out: Path, key: str) -> None:
    """The results folder can be created (or is a folder) and written.

    Raises:
        InputError: naming `key` (`--output` or `output_dir`) and what is in the way.
    """
    if out.exists() and not out.is_dir():
        raise InputError(f"{key}: {out} is a file, expected a folder for the results")
    existing = next(p for p in (out, *out.parents) if p.exists())
    if not existing.is_dir():
        raise InputError(f"{key}: {out} lies under {existing}, which is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"{key}: {existing} is not writable, so {out} cannot be written")


def check_test_commands(taskset: Taskset, interpreters: dict[str, str]) -> None:
    """Every task's test command can start (checked once, before the first run).

    Raises:
        InputError: naming the taskset file, the task and why the command cannot start.
    """
    where = taskset.path / "taskset.yaml" if taskset.path.is_dir() else taskset.path
    for task in taskset.tasks:
        problem = command_problem(task, interpreters[task.id])
        if problem:
            raise InputError(f"{where}: task {task.id}: test_cmd {shlex.join(task.test_cmd)!r} cannot start: {problem}")


def check_gold_patches(taskset: Taskset) -> None:
    """`git apply --check` of every task's gold patch on its base files (milliseconds per task).

    Raises:
        InputError: naming the taskset file, the task and the key.
    """
    where = taskset.path / "taskset.yaml" if taskset.path.is_dir() else taskset.path
    for task in taskset.tasks:
        if not task.patch.strip():
            continue
        with tempfile.TemporaryDirectory(prefix="ctxbench-check-") as tmp:
            env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(task.repo_dir.parent), "GIT_INDEX_FILE": f"{tmp}/index"}
            args = ["apply", "--check", "--whitespace=nowarn", "-"]
            if task.base_commit:
                read = subprocess.run(["git", "read-tree", task.base_commit], cwd=task.repo_dir, env=env,
                                      capture_output=True, text=True)
                if read.returncode != 0:
                    raise InputError(f"{where}: task {task.id}: base_commit {task.base_commit} not found in "
                                     f"{task.repo_dir}: {read.stderr.strip()[:300]}")
                args.insert(2, "--cached")
            proc = subprocess.run(["git", *args], cwd=task.repo_dir, env=env, input=task.patch,
                                  capture_output=True, text=True)
        if proc.returncode != 0:
            why = "; ".join(line.removeprefix("error: ") for line in proc.stderr.strip().splitlines())
            raise InputError(f"{where}: task {task.id}: `patch` (the gold patch) does not apply to "
                             f"{task.repo_dir}: {why[:500]}")


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def manifest_for(ctx: RunContext) -> dict[str, Any]:
    config = ctx.config
    sandbox_note = fallback_warning(config.sandbox, ctx.sandbox)
    return {
        "version": 1,
        "experiment_id": ctx.experiment_id,
        "fixed_id": config_hash(ctx.fixed)[:16],
        "name": config.name,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "harness_version": __version__,
        "fixed": ctx.fixed,
        "config": config.model_dump(mode="json"),
        "system_prompt": ctx.system_prompt,
        "taskset": {"name": ctx.taskset.name, "path": str(ctx.taskset.path),
                    "tasks": [t.id for t in ctx.taskset.tasks]},
        "strategies": [s.model_dump() for s in config.strategies],
        "sandbox": {"requested": config.sandbox, "used": ctx.sandbox.mode, "warning": sandbox_note,
                    "process_limit": process_limit_mechanism()},
        "simulated": config.model.provider == "sim",
        "pricing": ctx.prices.as_dict() if ctx.prices else None,
        "runs_planned": len(plan_runs(config, ctx.taskset)),
    }


_NOT_FIXED = ("workers", "executor", "ray_address", "output_dir")
"""Config keys that may change between a run and its resume."""


def _read_manifest(output_dir: Path) -> dict[str, Any]:
    """The manifest of a results folder being resumed.

    Raises:
        InputError: it is missing, not JSON, or not a ctxbench manifest.
    """
    path = output_dir / "manifest.json"
    if not path.is_file():
        raise InputError(f"{output_dir}: cannot resume, no manifest.json (runs.jsonl without its manifest is "
                         "not a results folder ctxbench can continue); choose another --output")
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot resume, not valid JSON ({exc})") from None
    missing = [k for k in ("fixed", "config", "strategies") if not isinstance(old, dict) or k not in old]
    if missing or not isinstance(old.get("config"), dict):
        raise InputError(f"{path}: cannot resume, not a ctxbench manifest (missing {', '.join(missing) or 'config'})")
    return old


def _check_resume(output_dir: Path, manifest: dict[str, Any]) -> None:
    old = _read_manifest(output_dir)
    old_fixed, new_fixed = old.get("fixed", {}), manifest["fixed"]
    diffs = [k for k in sorted(set(old_fixed) | set(new_fixed)) if old_fixed.get(k) != new_fixed.get(k)]
    if old.get("strategies") != manifest.get("strategies"):
        diffs.append("strategies")
    a = {k: v for k, v in old["config"].items() if k not in _NOT_FIXED}
    b = {k: v for k, v in manifest["config"].items() if k not in _NOT_FIXED}
    if a != b and not diffs:
        diffs.append("config (" + ", ".join(sorted(k for k in a if a.get(k) != b.get(k))) + ")")
    if diffs:
        raise InputError(f"{output_dir}: cannot resume, the fixed variables differ: {', '.join(diffs)}")


def run_experiment(ctx: RunContext, resume: bool = False, progress: Any = None) -> list[RunResult]:
    """Run every missing run of the experiment into ctx.output_dir; returns all results.

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
        return _run_missing(ctx, done, progress)
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
        _atomic_write(out / "manifest.json", json.dumps(manifest, indent=2))
    return {r.run_id for r in read_results(runs_path)}


def _run_missing(ctx: RunContext, done: set[str], progress: Any) -> list[RunResult]:
    out = ctx.output_dir
    runs_path = out / "runs.jsonl"
    warning = fallback_warning(ctx.config.sandbox, ctx.sandbox)
    if warning:
        print(f"ctxbench: WARNING: {warning}", file=sys.stderr)
    specs = plan_runs(ctx.config, ctx.taskset)
    todo = [s for s in specs if s.run_id not in done]
    swept = sweep_stale()
    if swept:
        print(f"ctxbench: removed {swept} workspace folders left by ctxbench processes that no longer run",
              file=sys.stderr)
    swept = sweep_cgroups()
    if swept:
        print(f"ctxbench: removed {swept} process-limit cgroups left by ctxbench processes that no longer run",
              file=sys.stderr)
    if ctx.config.executor == "local":
        for task in ctx.taskset.tasks:
            prepare_template(task)  # built once here; forked workers inherit them (Ray workers build their own)
    writer = ResultsWriter(runs_path)

    def record(result: RunResult) -> None:
        if result._transcript is not None:  # before the result line: a recorded run has its transcript
            path = transcript_path(out, result)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(result._transcript)
        writer.write(result)

    streak: list[RunResult] = []  # model_error runs in a row, held back until a run ends otherwise
    try:
        from ctxbench.harness.executors import execute

        for result in execute(ctx, todo, progress, already_done=len(done), total=len(specs)):
            if result.failure_reason == "model_error":
                streak.append(result)
                if len(streak) >= MODEL_ERRORS_IN_A_ROW:
                    raise ExperimentAborted(
                        f"{len(streak)} runs in a row ended in model_error, the endpoint failing after its retries "
                        f"(last: {' '.join((result.error or '?').split())[:300]}); those runs are not recorded")
                continue
            for held in streak:
                record(held)
            streak = []
            record(result)
        for held in streak:
            record(held)
    finally:
        writer.close()
        remove_templates()
    results = read_results(runs_path)
    order = {s.run_id: i for i, s in enumerate(specs)}
    results.sort(key=lambda r: order.get(r.run_id, len(order)))
    _atomic_write(runs_path, "".join(r.model_dump_json() + "\n" for r in results))
    return results


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)

