"""Model providers: `sim` (embedded simulator), `openai` (any OpenAI-compatible endpoint) and `anthropic`
(any Anthropic Messages API endpoint)."""

from __future__ import annotations

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.models.anthropic_provider import AnthropicModel
from ctxbench.harness.models.anthropic_provider import preflight as anthropic_preflight
from ctxbench.harness.protocols import (Completion, ContextLengthExceeded, FatalModelError, MalformedOutput, Model,
                                        ModelError, TransientModelError, Usage)
from ctxbench.harness.models.openai_provider import OpenAIModel
from ctxbench.harness.models.openai_provider import preflight as openai_preflight
from ctxbench.harness.models.sim import SimModel
from ctxbench.harness.records import Task
from ctxbench.harness.tokens import TokenCounter

__all__ = ["make_model", "make_upstream", "check_upstream", "Completion", "Usage", "ModelError",
           "ContextLengthExceeded", "TransientModelError", "FatalModelError", "MalformedOutput"]


def make_model(config: ModelConfig, task: Task, counter: TokenCounter, seed: int) -> Model:
    """The model for one run. `seed` is used when the config does not fix one."""
    if config.provider == "sim":
        return SimModel(config.sim, task.patch, counter, config.window, config.max_output_tokens,
                        config.seed if config.seed is not None else seed, test_cmd=task.test_cmd,
                        statement=task.problem_statement)
    return make_upstream(config, seed=config.seed if config.seed is not None else seed, counter=counter)


def make_upstream(config: ModelConfig, seed: int, counter: TokenCounter | None = None) -> Model:
    """The model behind an endpoint (`openai` or `anthropic`), for a run or a gateway; `counter` (the
    run's, the budget's) counts a reply whose endpoint reports no usage."""
    if config.provider == "anthropic":
        return AnthropicModel(config, seed=seed, counter=counter)
    return OpenAIModel(config, seed=seed, counter=counter)


def check_upstream(config: ModelConfig) -> None:
    """Before anything is written: the endpoint of `config` (`openai` or `anthropic`) answers, takes the
    key and serves `config.name` (the provider's `preflight`).

    Raises:
        EndpointUnavailable: the key variable is unset, nothing answers, the key is refused.
        InputError: the answer is not a model list, or it lacks `model.name`.
    """
    (anthropic_preflight if config.provider == "anthropic" else openai_preflight)(config)
