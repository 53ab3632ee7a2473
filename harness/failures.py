"""Failure reasons: one closed set, decided in one function."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["FailureReason", "StopReason", "FAILURE_REASONS", "classify_failure"]

FailureReason = Literal[
    "tests_failed",      # edited, but the target tests still fail
    "regression",        # target tests pass, a PASS_TO_PASS test broke
    "no_edit",           # the agent finished with an empty patch
    "max_turns",         # turn limit reached
    "token_budget",      # max_tokens_per_run reached
    "timeout",           # run_timeout_s reached
    "context_overflow",  # request over the window, or pinned content alone does not fit
    "loop",              # the same action repeated loop_threshold times in a row
    "invalid_action",    # max_invalid_actions malformed tool calls in a row
    "model_error",       # provider failures after retries
    "harness_error",     # a bug in ctxbench: traceback kept, the experiment goes on
    "taskset_error",     # the tests cannot be collected at the base commit either: the taskset's fault
]
FAILURE_REASONS: tuple[str, ...] = get_args(FailureReason)

StopReason = Literal["finished", "max_turns", "token_budget", "timeout", "context_overflow", "loop",
                     "invalid_action", "model_error", "harness_error"]


def classify_failure(stop: StopReason, patch: str, resolved: bool, fail_to_pass_ok: bool,
                     taskset_fault: bool = False) -> FailureReason | None:
    """The one place a run's failure reason is decided (None when resolved).

    The tests decide `resolved` whatever stopped the agent; an unresolved run that was stopped by a
    limit or an error is attributed to that, otherwise to what the tests saw. `taskset_fault`: the
    tests could not be collected, and cannot be at the base commit either (not the agent's doing).
    """
    if stop == "harness_error":
        return "harness_error"
    if taskset_fault and not resolved:
        return "taskset_error"
    if resolved:
        return None
    if stop != "finished":
        return stop
    if not patch.strip():
        return "no_edit"
    return "regression" if fail_to_pass_ok else "tests_failed"
