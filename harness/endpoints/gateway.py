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

A conversation is the requests that continue one another, told apart by their content: a request whose
messages are its opening alone (system messages and task) starts one, and a later request belongs to the
conversation whose last request its messages extend with that conversation's reply next, the reply's
text and tool calls (names, arguments, ids) as they were answered. So two runs of one task through one
gateway are two conversations, each with its own strategy instance, seed and transcript, even when
their requests interleave. A client may name its conversations (the request's `user` field, Claude
Code's and Codex's session ids): the name, in full, is then part of what identifies one. A request that
repeats a conversation's last request (a client that lost the reply and sends it again) is answered
with the reply recorded for it, and is no new turn: asking the model again would move the strategy's
state and could answer differently from what the transcript holds. Two clients whose requests are
the same in every message, seed and name are one conversation to the gateway: give each a name or a
seed to keep them apart. A turn whose client went away before its reply was sent (it closed the
connection, a streaming client cut off, while the model answered) is recorded with `delivered: false`;
a turn is written as its reply is sent, so it is on disk before the client can read it.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.harness.chat import message_text, read_arguments, read_opening
from ctxbench.harness.wire.conversation import fingerprints, own_context
from ctxbench.harness.config import ModelConfig
from ctxbench.harness.context import Context
from ctxbench.harness.errors import InputError
from ctxbench.harness.protocols import Completion
from ctxbench.harness.models import make_upstream
from ctxbench.harness.models.endpoint import EndpointModel
from ctxbench.harness.models.counters import learn_from_reply
from ctxbench.harness.models.served_counting import model_counter
from ctxbench.harness.models.sim import PromptCache, SimModel
from ctxbench.harness.pricing import Prices, resolve_prices
from ctxbench.harness.protocols import Model
from ctxbench.harness.records import Taskset, TranscriptHeader, TranscriptTurn
from ctxbench.harness.endpoints.serve_sim import TaskFinder, unknown_task
from ctxbench.harness.endpoints.model_section import request_settings
from ctxbench.harness.endpoints.server import after_sending, passing_on
from ctxbench.harness.records.transcript import TranscriptWriter, TurnRecorder
from ctxbench.harness.wire.base import MODEL_FAILURES, ModelRequest, Refusal, model_refusal
from ctxbench.harness.wire.messages import marked_for
from ctxbench.strategies.hook import StrategyHook
from ctxbench.strategies.registry import StrategyError, StrategyServices, create_strategy

__all__ = ["Gateway", "conversation_id"]


def conversation_id(messages: list[dict[str, Any]]) -> str:
    """A hash of a request's system and task messages: what its conversation opened with."""
    opening = read_opening(messages)
    told = [[messages[i].get("role"), messages[i].get("content")] for i in sorted(opening.system + opening.user)]
    return hashlib.sha256(json.dumps(told, sort_keys=True, default=str).encode()).hexdigest()[:16]


def said(message: dict[str, Any]) -> str:
    """What identifies a message as a client sends it again: its role, text, tool calls (ids, names and
    arguments read as objects, so that a client's own JSON spacing does not count) and the call it answers."""
    calls = [[c.get("id"), (c.get("function") or {}).get("name"), read_arguments((c.get("function") or {}).get("arguments"))]
             for c in message.get("tool_calls") or () if isinstance(c, dict)]
    told = [message.get("role"), message_text(message), calls, message.get("tool_call_id")]
    return hashlib.sha256(json.dumps(told, sort_keys=True, default=str).encode()).hexdigest()[:20]


def _reply_said(completion: Completion) -> str:
    """`said` of a reply as its client sends it back."""
    return said({"role": "assistant", "content": completion.text, "tool_calls": [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in completion.tool_calls]})


def _file_stem(key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in key)[:80] or "conversation"


@dataclass
class _Conversation:
    key: str
    hook: StrategyHook
    model: Model
    recorder: TurnRecorder | None
    """Writes its transcript (None without `--transcripts`)."""
    turns: int = 0
    last: list[str] | None = None
    """`said` of the messages of its last request (set as the request is taken)."""
    previous: list[str] | None = None
    """`fingerprints` of the messages of the request before it (what `own_context` compares with)."""
    reply: str = ""
    """`said` of its last reply ("" until it is answered)."""
    completion: Completion | None = None
    """Its last reply, for a client that asks again."""
    settled: threading.Event = field(default_factory=threading.Event)
    """Set once its last request is answered and the reply has gone out or failed to (or the call failed)."""
    delivered: bool = True
    """Whether its last reply reached its client."""
    held: TranscriptTurn | None = None
    """Its last turn, until the reply has gone out (or the next request shows it did)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def continued_by(self, request: list[str]) -> bool:
        """Whether a request extends this conversation's last one with its reply next."""
        if not self.reply or self.last is None or len(request) <= len(self.last) + 1:
            return False
        return request[:len(self.last)] == self.last and request[len(self.last)] == self.reply

    def take(self, request: list[str], messages: list[dict[str, Any]]) -> None:
        """`request` (its messages' `said`) is now its last, not yet answered."""
        self._before = (self.last, self.previous, self._wire, self.reply, self.completion)
        if self.last is not None:
            self.previous = self._wire
        self._wire = fingerprints(messages)
        self.last, self.reply, self.completion, self.settled = request, "", None, threading.Event()

    def untake(self) -> None:
        """Its last request failed: it is as it was before (a client that sends it again is answered anew)."""
        self.last, self.previous, self._wire, self.reply, self.completion = self._before
        self.settled.set()

    _wire: list[str] | None = None
    _before: tuple[Any, ...] = (None, None, None, "", None)


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
        self.counter = model_counter(model, [])  # as a run's: each request counted with its own tools
        self.prices: Prices | None = resolve_prices(model)
        self.find_task = TaskFinder(taskset.tasks) if taskset is not None else None
        self.cache = PromptCache()
        """One prompt cache for the simulator, like a provider's: shared by every conversation."""
        self._upstream = make_upstream(model, seed=model.seed or 0, counter=self.counter) \
            if model.provider != "sim" else None
        self.model_name = model.name
        self._conversations: dict[tuple[str, str, int | None], list[_Conversation]] = {}
        """The conversations by (client's name, opening, seed), in the order they started."""
        self._stems: set[str] = set()
        """Transcript file names taken."""
        self._lock = threading.Lock()

    def answer(self, request: ModelRequest) -> Completion | Refusal:
        """One model call, in any wire format."""
        messages, tools = request.messages, request.tools
        sent = [said(m) for m in messages]
        chosen = self._conversation(request, sent)
        while chosen is not None and chosen[1]:
            conversation = chosen[0]
            conversation.settled.wait()
            with self._lock:
                if conversation.last == sent and conversation.completion is not None and not conversation.delivered:
                    # Sent again after its reply was lost: the recorded reply, no new turn.
                    after_sending(lambda delivered: setattr(conversation, "delivered", delivered))
                    return conversation.completion
            # The first attempt failed (answered anew), or its reply reached a client: another client's.
            chosen = self._conversation(request, sent, repeats=conversation.completion is None)
        if chosen is None:
            assert self.taskset is not None  # only the simulator refuses a conversation, and it has a taskset
            return unknown_task(self.taskset, "the gateway")
        conversation = chosen[0]
        with conversation.lock:
            self._write_held(conversation, True)  # its client sent another request: it had the reply
            try:
                context = conversation.hook(messages, tools)
                if conversation.recorder is not None:
                    conversation.recorder.call_starts(time.monotonic())
                completion = self._call(conversation.model, context.messages, request)
                learn_from_reply(self.counter, context.messages, tools, completion.usage)
            except MODEL_FAILURES as exc:
                self._forget(conversation)
                return model_refusal(exc)
            except BaseException:
                self._forget(conversation)
                raise
            conversation.held = turn = self._record(conversation, messages, tools, context, completion)
            conversation.reply, conversation.completion = _reply_said(completion), completion
            settled = conversation.settled
        if not after_sending(lambda delivered: self._settle(conversation, turn, settled, delivered)):
            self._settle(conversation, turn, settled, True)
        return completion

    def _call(self, model: Model, messages: list[dict[str, Any]], request: ModelRequest) -> Completion:
        """The model's reply to the context a strategy built (`messages`): an upstream's with the client's
        `max_tokens` up to the model's and the client's seed (`request_settings`, as `serve-sim` answers),
        its text passed on as it arrives to a client that streams (`passing_on`; not where calls are read
        from the text: the text passed on would hold them)."""
        sent = marked_for(model, messages, request.cache_marks)
        if not isinstance(model, EndpointModel):
            return model.complete(sent, request.tools)
        reserve, seed = request_settings(request, self.model)
        upstream = make_upstream(self.model.model_copy(update={"max_output_tokens": reserve}), seed, self.counter)
        assert isinstance(upstream, EndpointModel)
        listener = passing_on(request) if self.model.tool_calls == "native" else None
        return upstream.complete(sent, request.tools, listener)

    def _forget(self, conversation: _Conversation) -> None:
        """Its last request failed: no turn."""
        with self._lock:
            conversation.untake()

    def _conversation(self, request: ModelRequest, sent: list[str],
                      repeats: bool = True) -> tuple[_Conversation, bool] | None:
        """The request's conversation (`sent`: its messages' `said`), and whether the request repeats its
        last one (looked for only with `repeats`): the one it continues, or a new one, with the request
        taken as its last."""
        messages = request.messages
        base = (request.conversation or "", conversation_id(messages), request.seed)
        with self._lock:
            family = self._conversations.setdefault(base, [])
            again = next((c for c in family if c.last == sent), None) if repeats else None
            if again is not None:
                return again, True
            found = next((c for c in family if c.continued_by(sent)), None)
            opening_only = read_opening(messages).end == len(messages)
            if found is None and opening_only:  # a first request, after one that failed
                found = next((c for c in family if c.last is None and c.turns == 0), None)
            if found is None and family and (request.conversation or not opening_only):
                # The client rewrote its history (its own compaction, say), or named its conversation: the
                # latest conversation of that opening (and name) goes on, as one agent's run does.
                found = family[-1]
            if found is None:
                found = self._start(request)
                if found is None:
                    return None
                family.append(found)
            found.take(sent, messages)
            return found, False

    def _start(self, request: ModelRequest) -> _Conversation | None:
        """A new conversation; None where the simulator knows no such task."""
        task = self.find_task(request.messages) if self.find_task is not None else None
        if self.model.provider == "sim" and task is None:
            return None
        key = request.conversation or conversation_id(request.messages)
        stem = _file_stem(key)
        n = 1
        while (stem if n == 1 else f"{stem}-{n}") in self._stems:
            n += 1
        stem = stem if n == 1 else f"{stem}-{n}"
        self._stems.add(stem)
        reserve, seed = request_settings(request, self.model)  # the simulator's: the conversation's first request's
        model = self._upstream or SimModel(self.model.sim, task.patch if task else "", self.counter,
                                           self.model.window, reserve, seed,
                                           self.cache, test_cmd=task.test_cmd if task else (),
                                           statement=task.problem_statement if task else None)
        hook = StrategyHook(self.strategy, self.params, context_window=self.model.window,
                            max_output_tokens=self.model.max_output_tokens, tokenizer=self.model.tokenizer,
                            services=StrategyServices(model=model),
                            test_commands=(task.test_cmd,) if task is not None else (), counter=self.counter)
        recorder = None
        if self.transcripts is not None:
            transcript = TranscriptWriter(self.transcripts / self.strategy / f"{stem}.jsonl", TranscriptHeader(
                run_id=key if request.conversation else stem, strategy=self.strategy, task_id=task.id if task else "",
                repeat=0, seed=seed))
            recorder = TurnRecorder(transcript, self.counter, self.model.window, self.prices)
        return _Conversation(key, hook, model, recorder)

    def _record(self, conversation: _Conversation, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                context: Context, completion: Completion) -> TranscriptTurn | None:
        """The request's turn, counted, to be written once its reply has gone out (None without transcripts)."""
        index, conversation.turns = conversation.turns, conversation.turns + 1
        recorder = conversation.recorder
        if recorder is None:
            return None
        tokens = self.counter.count_prompt(context.messages, tools)
        return recorder.turn(index, context, tokens, completion.text, completion.tool_calls, completion.usage,
                             request_messages=len(messages),
                             own_context=own_context(messages, fingerprints(messages), conversation.previous))

    def _settle(self, conversation: _Conversation, turn: TranscriptTurn | None, settled: threading.Event,
                delivered: bool) -> None:
        """The reply to one of its requests (`turn`, `settled` its event) has gone out (`delivered`) or
        failed to: its turn is written, saying which, unless its next request came first (and wrote it)."""
        with conversation.lock:
            if turn is not None and conversation.held is turn:
                self._write_held(conversation, delivered)
            if conversation.settled is settled:
                conversation.delivered = delivered
            settled.set()

    @staticmethod
    def _write_held(conversation: _Conversation, delivered: bool) -> None:
        """Writes the held turn (under the conversation's lock)."""
        turn, conversation.held = conversation.held, None
        if turn is not None and conversation.recorder is not None:
            turn.delivered = delivered
            conversation.recorder.write(turn)
