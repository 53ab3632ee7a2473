"""The `model` section of an experiment: the provider, its sampling and limits, the simulator's
parameters and the prices that turn tokens into dollars."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer,
                      model_validator)

from ctxbench.harness.errors import InputError
from ctxbench.harness.tokens import SERVED_TOKENIZERS, TokenizerError, check_tokenizer

__all__ = ["Strict", "SimParams", "Pricing", "ModelConfig", "DEFAULT_WINDOW"]

DEFAULT_WINDOW = 16000
"""`model.context_window` when it is not given, and the simulator's when it is `null` (no server to ask)."""


class Strict(BaseModel):
    """A config section: an unknown key is an error, never ignored."""

    model_config = ConfigDict(extra="forbid")


class SimParams(Strict):
    """The simulated model's attention and error model (see README, "The simulated model")."""

    r0: float = Field(0.95, ge=0, le=1, description="Chance to notice a visible piece of evidence in an empty context.")
    attention_scale: int = Field(16000, ge=256, description="Context length in tokens that counts as 1.0 on the attention scale (length = prompt tokens / attention_scale), whatever the window.")
    length_onset: float = Field(0.25, ge=0, description="Relative length where attention starts to degrade (L0).")
    length_slope: float = Field(1.1, ge=0, description="How fast attention falls past length_onset (a).")
    length_floor: float = Field(0.5, ge=0, le=1, description="Least share of r0 that length leaves (however long the context).")
    middle_penalty: float = Field(0.6, ge=0, le=1, description="Loss of attention in the middle of the context (m).")
    middle_full_at: float = Field(0.5, gt=0, description="Relative length at which the middle penalty reaches full strength.")
    detour_rate: float = Field(0.5, ge=0, le=1, description="Chance per turn of a detour, times the share of noise (d).")
    slip_rate: float = Field(0.03, ge=0, le=1, description="Chance that an edit is wrong (s).")
    read_window: int = Field(60, ge=5, description="Lines read around a line of interest (search hit, traceback frame).")
    max_searches: int = Field(6, ge=1, description="Most names from the task statement it will search for.")
    dialect: Literal["auto", "native", "bash", "bash_text", "aider"] = Field("auto", description="How it acts: `native` (ctxbench's tools), `bash` (one call of the shell tool the request offers per reply: `bash`, Claude Code's `Bash`, Codex's `exec_command`, ...), `bash_text` (one fenced shell command in the reply's text, no tool call), `aider` (Aider's SEARCH/REPLACE blocks and requests to add files, docs/agents/aider.md), or `auto`: `aider` for Aider's requests, `bash` when the request offers a shell tool, else `native`.")
    submit_command: str = Field("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", min_length=1, description="The command it submits with in the bash dialects (mini-swe-agent's convention by default).")
    fence: str = Field("mswea_bash_command", pattern=r"^[\w-]*$", description="The info string of the fenced block that holds its command in `bash_text` (mini-swe-agent's text-based format by default).")

    @model_serializer(mode="wrap")
    def _without_default_dialect(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The dialect keys are left out where they keep their defaults, so that an experiment's config
        hash (its id, its fixed variables) is the one it had before these keys existed."""
        data: dict[str, Any] = handler(self)
        for key in ("dialect", "submit_command", "fence"):
            if getattr(self, key) == type(self).model_fields[key].default:
                data.pop(key, None)
        return data


class Pricing(Strict):
    """Dollars per million tokens; without it prices come from the `genai-prices` database by model name."""

    model: str | None = Field(None, description="Price as this model of the price database (e.g. gpt-4o-mini), instead of `name`.")
    input: float | None = Field(None, ge=0, allow_inf_nan=False, description="$ per million prompt tokens not served from cache.")
    cached_input: float | None = Field(None, ge=0, allow_inf_nan=False, description="$ per million cached prompt tokens; default `input`.")
    output: float | None = Field(None, ge=0, allow_inf_nan=False, description="$ per million completion tokens.")

    @model_validator(mode="after")
    def _one_source(self) -> Pricing:
        given = [k for k in ("input", "cached_input", "output") if getattr(self, k) is not None]
        if self.model and given:
            raise ValueError(f"give either model or prices ({', '.join(given)}), not both")
        if given and (self.input is None or self.output is None):
            raise ValueError("prices need at least input and output (cached_input defaults to input)")
        if not self.model and not given:
            raise ValueError("give model (a name in the price database) or input and output prices")
        return self


class ModelConfig(Strict):
    provider: Literal["sim", "openai", "anthropic"] = Field("sim", description="`sim` (embedded simulator), `openai` (any OpenAI-compatible endpoint) or `anthropic` (any Anthropic Messages API endpoint).")
    name: str = Field("sim-coder", description="Model name sent to the provider.")
    base_url: str | None = Field(None, description="Endpoint for `openai` (e.g. http://127.0.0.1:8000/v1; default api.openai.com) or `anthropic`: the API's root, without /v1, as Anthropic's client takes it (e.g. https://api.anthropic.com or http://127.0.0.1:8100; default api.anthropic.com).")
    api_key_env: str | None = Field(None, description="Name of the environment variable holding the API key (never the key).")
    temperature: float = Field(0.0, ge=0, le=2)
    top_p: float = Field(1.0, gt=0, le=1)
    max_output_tokens: int = Field(1024, ge=16, description="Output reserve; also sent as max_tokens.")
    seed: int | None = Field(None, description="Sampling seed sent to the provider; default: the run's seed.")
    context_window: int | None = Field(DEFAULT_WINDOW, ge=512, description="Context window in tokens; requests over it are rejected. `null`: the window the server serves, read before the run (16000 for `sim`, which has no server).")
    tokenizer: str = Field("cl100k_base", description="What counts every token: a tiktoken encoding; `endpoint` (the server counts, chat template and tool schemas included); `calibrated` (tiktoken scaled by the prompt tokens the endpoint reports); `auto` (asks the endpoint which it supports).")
    tool_calls: Literal["native", "text"] = Field("native", description="How the model makes tool calls: `native` (the API's tool calls) or `text` (JSON it writes in its reply, as Qwen does behind llama.cpp's server).")
    retry_budget_s: float = Field(300.0, ge=0, description="How long a failing request is retried (rate limits, 5xx, timeouts, unreadable replies) before its run ends as `model_error`.")
    request_timeout_s: float = Field(600.0, gt=0, description="Longest a request may take, its whole reply streamed included (a cap; silence is `idle_timeout_s`'s).")
    idle_timeout_s: float = Field(120.0, gt=0, description="A request fails (and is retried) after this many seconds without a byte of its reply: waiting for the reply to begin (the server reading the prompt) or between two of its streamed pieces.")
    max_connections: int | None = Field(None, ge=1, description="Most model calls in flight to the endpoint (the ceiling of its adaptive limit); default `max_runs`.")
    sim: SimParams = Field(default_factory=SimParams)
    pricing: Pricing | None = Field(None, description="Prices for cost_usd; default: looked up by `name` in genai-prices.")

    @property
    def window(self) -> int:
        """`context_window`, once a `null` has been replaced by the served window
        (`ctxbench.harness.models.served.resolve_window`).

        Raises:
            InputError: it is still `null`.
        """
        if self.context_window is None:
            raise InputError("model.context_window is null and the served window has not been read: "
                             "ctxbench.harness.models.served.resolve_window reads it before a run")
        return self.context_window

    @field_validator("tokenizer")
    @classmethod
    def _known_tokenizer(cls, name: str) -> str:
        try:
            check_tokenizer(name)
        except TokenizerError as exc:
            raise ValueError(str(exc)) from None
        return name

    @model_validator(mode="after")
    def _served(self) -> ModelConfig:
        if self.provider == "sim":
            if self.tokenizer in SERVED_TOKENIZERS:
                raise ValueError(f"tokenizer {self.tokenizer!r} needs a served model (provider openai or anthropic); "
                                 "the simulator counts with a tiktoken encoding")
            if self.context_window is None:
                self.context_window = DEFAULT_WINDOW
        return self

    @model_serializer(mode="wrap")
    def _without_default_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`tool_calls` and `idle_timeout_s` are left out where they keep their defaults, so that an
        experiment's config hash is the one it had before these keys existed."""
        data: dict[str, Any] = handler(self)
        for key in ("tool_calls", "idle_timeout_s"):
            if getattr(self, key) == type(self).model_fields[key].default:
                data.pop(key, None)
        return data


