"""How the agent loop ends: one exception per stop reason, raised inside a step and caught once in
`Agent.run` (the run's stop reason is the exception's `reason`, its message the detail)."""

from __future__ import annotations

from ctxbench.harness.records import StopReason

__all__ = ["AgentStopped", "Finished", "TurnLimit", "TokenBudgetSpent", "TimedOut", "Looping", "InvalidActions",
           "ContextOverflowed", "ModelFailed", "Refused"]


class AgentStopped(Exception):
    """Ends the loop; `reason` becomes the run's stop reason, the message its detail."""

    reason: StopReason = "harness_error"


class Finished(AgentStopped):
    reason = "finished"


class TurnLimit(AgentStopped):
    reason = "max_turns"


class TokenBudgetSpent(AgentStopped):
    reason = "token_budget"


class TimedOut(AgentStopped):
    reason = "timeout"


class Looping(AgentStopped):
    reason = "loop"


class InvalidActions(AgentStopped):
    reason = "invalid_action"


class ContextOverflowed(AgentStopped):
    reason = "context_overflow"


class ModelFailed(AgentStopped):
    reason = "model_error"


class Refused(AgentStopped):
    reason = "request_refused"
