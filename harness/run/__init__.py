"""Running an experiment: the plan of runs, one run, the executors (in-process, worker processes, Ray)
and sequential experiments in rounds."""

from __future__ import annotations

from ctxbench.harness.run.runner import load_experiment, plan_runs, run_experiment

__all__ = ["run_experiment", "load_experiment", "plan_runs"]
