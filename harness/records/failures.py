"""Failure reasons: one closed set, decided in one function."""

from __future__ import annotations

from ctxbench.harness.records import FAILURE_REASONS, FailureReason, StopReason

__all__ = ["FailureReason", "StopReason", "FAILURE_REASONS", "classify_failure"]


def classify_failure(stop: StopReason, patch: str, resolved: bool, fail_to_pass_ok: bool,
                     taskset_fault: bool = False) -> FailureReason | None:
    """The one place a run's failure reason is decided (None when resolved).

    The tests decide `resolved` whatever stopped the agent, except when the endpoint cut the run short
    (`model_error`): such a run is never resolved, its turns and tokens are not comparable. An
    unresolved run that was stopped by a limit or an error is attributed to that, otherwise to what
    the tests saw. `taskset_fault`: the tests could not be collected, and cannot be at the base
    commit either (not the agent's doing).
    """
    if stop in ("harness_error", "model_error"):
        return stop
    if taskset_fault and not resolved:
        return "taskset_error"
    if resolved:
        return None
    if stop != "finished":
        return stop
    if not patch.strip():
        return "no_edit"
    return "regression" if fail_to_pass_ok else "tests_failed"
