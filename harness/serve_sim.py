"""The simulated model served as an OpenAI-compatible HTTP endpoint (`ctxbench serve-sim`).

`GET /v1/models` and `POST /v1/chat/completions` (plain or streamed), backed by `SimModel`, which
answers an agent that offers a `bash` tool (or, with `model.sim.dialect: bash_text`, one that
reads fenced commands) in its bash dialect. The task
is recognised from the request's task statement (the first user message, matched against the
taskset's problem statements, as they are or wrapped in an agent's template); the seed is the request's `seed`. An experiment run through this endpoint with the
`openai` provider gives the same results as the same experiment run in-process with `sim`, provided
the server uses the experiment's model section (`--config`).
"""

from __future__ import annotations

import threading
from typing import Any

from ctxbench.harness.chat_history import message_text
from ctxbench.harness.chat_server import (ChatReply, check_chat_request, completion_reply, error_reply, models_reply,
                                          make_server)
from ctxbench.harness.config import ModelConfig
from ctxbench.harness.models.base import ContextLengthExceeded
from ctxbench.harness.models.sim import PromptCache, SimModel, is_summary_request
from ctxbench.harness.records import Task, Taskset
from ctxbench.harness.tokens import TokenCounter

__all__ = ["SimBackend", "TaskFinder", "unknown_task", "make_server"]


class TaskFinder:
    """Finds a request's task by its problem statement in the first user message, as it is or wrapped.

    Agents wrap the statement in their own instance template ("Please solve this issue: ...",
    `<pr_description>` tags), after a system message or not: a statement that appears inside the
    message is found too, its whitespace compared as runs of one space (templates re-indent);
    where several do, the longest.
    """

    def __init__(self, tasks: tuple[Task, ...]) -> None:
        self._exact: dict[str, Task] = {}
        for task in tasks:
            self._exact.setdefault(task.problem_statement.strip(), task)
        self._longest_first = sorted(((_spaced(s), t) for s, t in self._exact.items()), key=lambda item: -len(item[0]))

    def __call__(self, messages: list[dict[str, Any]]) -> Task | None:
        first = next((m for m in messages if m.get("role") == "user"), None)
        text = message_text(first).strip() if first else ""
        exact = self._exact.get(text)
        if exact is not None or not text:
            return exact
        spaced = _spaced(text)
        return next((task for statement, task in self._longest_first if statement and statement in spaced), None)


def _spaced(text: str) -> str:
    return " ".join(text.split())


def unknown_task(taskset: Taskset, server: str) -> ChatReply:
    """The 400 for a request whose first user message holds no problem statement of `taskset`."""
    return error_reply(400, f"unknown task: the first user message holds no problem statement of taskset "
                            f"{taskset.name!r} ({len(taskset.tasks)} tasks); is {server} serving the experiment's "
                            "taskset?", param="messages", code="unknown_task")


class SimBackend:
    """Answers OpenAI chat requests with the simulated model for the tasks of one taskset."""

    def __init__(self, taskset: Taskset, model: ModelConfig) -> None:
        self.taskset = taskset
        self.model = model
        self.counter = TokenCounter(model.tokenizer)
        self._lock = threading.Lock()
        self.cache = PromptCache()
        """One prompt cache for the server, like a provider's: a prefix any earlier request sent is cached."""
        self.task_for = TaskFinder(taskset.tasks)
        """The task whose problem statement is (or is inside) the first user message."""

    def models(self) -> ChatReply:
        return models_reply(self.model.name, "ctxbench-sim")

    def chat(self, request: Any) -> ChatReply:
        """One chat completion request (already JSON-decoded)."""
        refused = check_chat_request(request, self.model.name)
        if refused is not None:
            return refused
        messages, tools = request["messages"], request.get("tools") or []
        task = self.task_for(messages)
        if task is None and not is_summary_request(messages, tools):
            return unknown_task(self.taskset, "serve-sim")
        max_output = request.get("max_tokens") or request.get("max_completion_tokens") or self.model.max_output_tokens
        seed = request.get("seed")
        sim = SimModel(self.model.sim, task.patch if task else "", self.counter, self.model.context_window,
                       int(max_output), int(seed) if seed is not None else 0, self.cache,
                       test_cmd=task.test_cmd if task else (), statement=task.problem_statement if task else None)
        try:
            with self._lock:
                completion = sim.complete(messages, tools)
        except ContextLengthExceeded as exc:
            return error_reply(400, str(exc), param="messages", code="context_length_exceeded")
        return completion_reply(request, completion, self.model.name)
