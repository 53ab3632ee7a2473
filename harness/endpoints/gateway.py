"""A context strategy as a model endpoint in front of any model (`ctxbench gateway`).

An agent points its base URL here and calls the model in its own wire format (OpenAI Chat
Completions, the Anthropic Messages API or the OpenAI Responses API, `ctxbench.harness.wire.base`). Each
request's messages are read as a History
(`ctxbench.harness.wire.conversation`), the strategy builds the context from it as it does for
ctxbench's own loop, the rewritten messages go to the model (the simulator, any
OpenAI-compatible endpoint or an Anthropic endpoint), and the reply goes back in the client's format,
plain or streamed. Every request is one turn of its conversation's transcript, built as every agent's
turns are (`ctxbench.harness.records.transcript.TurnRecorder`), with the strategy's ledger (what was
masked, trimmed, summarized or evicted), the usage, the cost and the seconds since the conversation's
previous call: the per-turn context log, for any agent. A turn is written as its request is answered,
so it holds no observations: what the agent's tools returned arrives with its next request, in the
messages, and a standalone gateway never knows which request is a conversation's last.

A conversation is the requests that continue one another: a request whose messages are its
opening alone (system messages and task) starts one, and a later request belongs to the conversation
whose last request its messages extend, with that conversation's reply next and as many replies as
the conversation has turns. So two runs of one task through one gateway are two conversations, each
with its own strategy instance and transcript, even when their requests interleave. A client may
name its conversations instead (the request's `user` field, Claude Code's and Codex's session ids).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.harness.chat import read_opening
from ctxbench.harness.wire.conversation import fingerprints, own_context, replies
from ctxbench.harness.config import ModelConfig
from ctxbench.harness.context import Context
from ctxbench.harness.errors import InputError
from ctxbench.harness.protocols import Completion
from ctxbench.harness.models import make_upstream
from ctxbench.harness.models.sim import PromptCache, SimModel
from ctxbench.harness.pricing import Prices, resolve_prices
from ctxbench.harness.protocols import Model
from ctxbench.harness.records import Taskset, TranscriptHeader
from ctxbench.harness.endpoints.serve_sim import TaskFinder, unknown_task
from ctxbench.harness.tokens import TokenCounter
from ctxbench.harness.records.transcript import TranscriptWriter, TurnRecorder
from ctxbench.harness.wire.base import MODEL_FAILURES, ModelRequest, Refusal, model_refusal
from ctxbench.harness.wire.messages import marked_for
from ctxbench.strategies.hook import StrategyHook
from ctxbench.strategies.registry import StrategyError, StrategyServices, create_strategy

__all__ = ["Gateway", "conversation_id"]


def conversation_id(messages: list[dict[str, Any]], user: str | None = None) -> str:
    """The conversation a request belongs to: its `user` field, or a hash of its system and task messages."""
    if user:
        return "".join(c if c.isalnum() or c in "-_." else "_" for c in user)[:80]
    opening = read_opening(messages)
    told = [[messages[i].get("role"), messages[i].get("content")] for i in sorted(opening.system + opening.user)]
    return hashlib.sha256(json.dumps(told, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class _Conversation:
    key: str
    hook: StrategyHook
    model: Model
    recorder: TurnRecorder | None
    """Writes its transcript (None without `--transcripts`)."""
    turns: int = 0
    pending: int = 0
    """Requests chosen for this conversation and not yet answered (counted under the gateway's lock)."""
    first: list[str] = field(default_factory=list)
    """The fingerprints of the messages of its first request."""
    last: list[str] = field(default_factory=list)
    """The fingerprints of the messages of its last answered request."""
    reply: str = ""
    """The text of its last reply."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def continued_by(self, request: list[str], messages: list[dict[str, Any]]) -> bool:
        """Whether a request extends this conversation's last one with its reply, one reply per turn."""
        if not self.last or len(request) <= len(self.last) or request[:len(self.last)] != self.last:
            return False
        replies_since = replies(messages) - replies(messages[:len(self.first)])
        following = messages[len(self.last)]
        return replies_since == self.turns and (following.get("role") != "assistant"
                                          or (following.get("content") or "") == self.reply)


class Gateway:
    """Answers model calls through one strategy, conversation by conversation."""

    owner = "ctxbench-gateway"

    def __init__(self, strategy: str, params: dict[str, Any] | None, model: ModelConfig,
                 taskset: Taskset | None = None, transcripts: Path | None = None) -> None:
        """Raises InputError for an unknown strategy, bad params, or the simulator without a taskset."""
        try:
            create_strategy(strategy, params)  # fails now, not on the first request
        except StrategyError as exc:
            raise InputError(f"--strategy {strategy}: {exc}") from None
        if model.provider == "sim" and taskset is None:
            raise InputError("the sim provider needs the taskset its requests come from (--taskset)")
        self.strategy, self.params, self.model, self.taskset = strategy, params, model, taskset
        self.transcripts = transcripts
        self.counter = TokenCounter(model.tokenizer)
        self.prices: Prices | None = resolve_prices(model)
        self.find_task = TaskFinder(taskset.tasks) if taskset is not None else None
        self.cache = PromptCache()
        """One prompt cache for the simulator, like a provider's: shared by every conversation."""
        self._upstream = make_upstream(model, seed=model.seed or 0) if model.provider != "sim" else None
        self.model_name = model.name
        self._conversations: dict[str, list[_Conversation]] = {}
        """The conversations by opening (or `user` name), in the order they started."""
        self._lock = threading.Lock()

    def answer(self, request: ModelRequest) -> Completion | Refusal:
        """One model call, in any wire format."""
        messages, tools = request.messages, request.tools
        sent = fingerprints(messages)
        conversation = self._conversation(request, sent)
        if conversation is None:
            assert self.taskset is not None  # only the simulator refuses a conversation, and it has a taskset
            return unknown_task(self.taskset, "the gateway")
        try:
            with conversation.lock:
                try:
                    context = conversation.hook(messages, tools)
                    if conversation.recorder is not None:
                        conversation.recorder.call_starts(time.monotonic())
                    completion = conversation.model.complete(
                        marked_for(conversation.model, context.messages, request.cache_marks), tools)
                except MODEL_FAILURES as exc:
                    return model_refusal(exc)
                self._record(conversation, messages, sent, tools, context, completion)
                conversation.last, conversation.reply = sent, completion.text
        finally:
            with self._lock:
                conversation.pending -= 1
        return completion

    def _conversation(self, request: ModelRequest, sent: list[str]) -> _Conversation | None:
        """The request's conversation, counted as pending: the one it continues, or a new one (`sent`:
        the `fingerprints` of its messages)."""
        messages = request.messages
        base = conversation_id(messages, request.conversation)
        with self._lock:
            family = self._conversations.setdefault(base, [])
            found = self._continued(family, sent, messages, named=request.conversation is not None)
            if found is None:
                key = base if not family else f"{base}-{len(family) + 1}"
                found = self._start(key, request)
                if found is None:
                    return None
                found.first = sent
                family.append(found)
            found.pending += 1
            return found

    @staticmethod
    def _continued(family: list[_Conversation], fingerprints: list[str], messages: list[dict[str, Any]],
                   named: bool) -> _Conversation | None:
        """The conversation of `family` (one opening) a request belongs to; None where it starts one."""
        if named or not family:
            return family[0] if family else None
        if read_opening(messages).end == len(messages) or any(c.first == fingerprints for c in family):
            # A first request: a conversation not yet under way takes it (a retried first request);
            # otherwise it is another run of the same opening.
            return next((c for c in family if c.turns == 0 and c.pending == 0), None)
        continued = [c for c in family if c.continued_by(fingerprints, messages)]
        if continued:
            return min(continued, key=lambda c: c.pending)
        # The client rewrote its history (its own compaction, say): the latest conversation of that
        # opening goes on, as one agent's run does.
        return family[-1]

    def _start(self, key: str, request: ModelRequest) -> _Conversation | None:
        """A new conversation under `key`; None where the simulator knows no such task."""
        task = self.find_task(request.messages) if self.find_task is not None else None
        if self.model.provider == "sim" and task is None:
            return None
        seed: int = request.seed if request.seed is not None else (self.model.seed or 0)
        model = self._upstream or SimModel(self.model.sim, task.patch if task else "", self.counter,
                                           self.model.window, self.model.max_output_tokens, seed,
                                           self.cache, test_cmd=task.test_cmd if task else (),
                                           statement=task.problem_statement if task else None)
        hook = StrategyHook(self.strategy, self.params, context_window=self.model.window,
                            max_output_tokens=self.model.max_output_tokens, tokenizer=self.model.tokenizer,
                            services=StrategyServices(model=model),
                            test_commands=(task.test_cmd,) if task is not None else (), counter=self.counter)
        recorder = None
        if self.transcripts is not None:
            transcript = TranscriptWriter(self.transcripts / self.strategy / f"{key}.jsonl", TranscriptHeader(
                run_id=key, strategy=self.strategy, task_id=task.id if task else "", repeat=0, seed=seed))
            recorder = TurnRecorder(transcript, self.counter, self.model.window, self.prices)
        return _Conversation(key, hook, model, recorder)

    def _record(self, conversation: _Conversation, messages: list[dict[str, Any]], sent: list[str],
                tools: list[dict[str, Any]], context: Context, completion: Completion) -> None:
        index, conversation.turns = conversation.turns, conversation.turns + 1
        recorder = conversation.recorder
        if recorder is None:
            return
        tokens = self.counter.count_messages(context.messages) + self.counter.count_tools(tools)
        recorder.write(recorder.turn(index, context, tokens, completion.text, completion.tool_calls, completion.usage,
                                     request_messages=len(messages),
                                     own_context=own_context(messages, sent, conversation.last or None)))
