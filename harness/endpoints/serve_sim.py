"""The simulated model served as an OpenAI-compatible HTTP endpoint (`ctxbench serve-sim`).

`GET /v1/models` and a model call in any of the three wire formats (`ctxbench.harness.endpoints.server`:
Chat Completions, Anthropic Messages, Responses; plain or streamed), backed by `SimModel`, which
answers an agent that offers a `bash` tool (or, with `model.sim.dialect: bash_text`, one that
reads fenced commands) in its bash dialect. The task
is recognised from the request's task statement (the opening user messages, matched against the
taskset's problem statements, as they are or wrapped in an agent's template); the seed is the request's `seed`. An experiment run through this endpoint with the
`openai` provider gives the same results as the same experiment run in-process with `sim`, provided
the server uses the experiment's model section (`--config`).
"""

from __future__ import annotations

import threading
from typing import Any

from ctxbench.harness.chat import message_text, read_opening
from ctxbench.harness.endpoints.server import make_server
from ctxbench.harness.config import ModelConfig
from ctxbench.harness.endpoints.model_section import request_settings
from ctxbench.harness.protocols import Completion, ContextLengthExceeded
from ctxbench.harness.models.sim import PromptCache, SimModel, is_summary_request
from ctxbench.harness.records import Task, Taskset
from ctxbench.harness.tokens import TokenCounter
from ctxbench.harness.wire.base import ModelRequest, Refusal

__all__ = ["SimBackend", "TaskFinder", "unknown_task", "make_server"]


class TaskFinder:
    """Finds a request's task by its problem statement in its opening user messages (those before the
    first reply), as it is or wrapped.

    Agents wrap the statement in their own instance template ("Please solve this issue: ...",
    `<pr_description>` tags), after a system message or not, some after a user message of their own
    (Codex's environment context): a statement that appears inside them is found too, its whitespace
    compared as runs of one space (templates re-indent); where several do, the longest.
    """

    def __init__(self, tasks: tuple[Task, ...]) -> None:
        self._exact: dict[str, Task] = {}
        for task in tasks:
            self._exact.setdefault(task.problem_statement.strip(), task)
        self._longest_first = sorted(((_spaced(s), t) for s, t in self._exact.items()), key=lambda item: -len(item[0]))

    def __call__(self, messages: list[dict[str, Any]]) -> Task | None:
        text = "\n".join(message_text(messages[i]).strip() for i in read_opening(messages).user)
        exact = self._exact.get(text)
        if exact is not None or not text:
            return exact
        spaced = _spaced(text)
        return next((task for statement, task in self._longest_first if statement and statement in spaced), None)


def _spaced(text: str) -> str:
    return " ".join(text.split())


def unknown_task(taskset: Taskset, server: str) -> Refusal:
    """The 400 for a request whose opening user messages hold no problem statement of `taskset`."""
    return Refusal(400, f"unknown task: the opening user messages hold no problem statement of taskset "
                        f"{taskset.name!r} ({len(taskset.tasks)} tasks); is {server} serving the experiment's "
                        "taskset?", param="messages", code="unknown_task")


class SimBackend:
    """Answers model calls with the simulated model for the tasks of one taskset."""

    owner = "ctxbench-sim"

    def __init__(self, taskset: Taskset, model: ModelConfig) -> None:
        self.taskset = taskset
        self.model = model
        self.model_name = model.name
        self.counter = TokenCounter(model.tokenizer)
        self._lock = threading.Lock()
        self.cache = PromptCache()
        """One prompt cache for the server, like a provider's: a prefix any earlier request sent is cached."""
        self.task_for = TaskFinder(taskset.tasks)
        """The task whose problem statement is (or is inside) the opening user messages."""

    def answer(self, request: ModelRequest) -> Completion | Refusal:
        messages, tools = request.messages, request.tools
        task = self.task_for(messages)
        if task is None and not is_summary_request(messages, tools):
            return unknown_task(self.taskset, "serve-sim")
        max_output, seed = request_settings(request, self.model)
        sim = SimModel(self.model.sim, task.patch if task else "", self.counter, self.model.window,
                       max_output, seed, self.cache,
                       test_cmd=task.test_cmd if task else (), statement=task.problem_statement if task else None)
        try:
            with self._lock:
                return sim.complete(messages, tools)
        except ContextLengthExceeded as exc:
            return Refusal(400, str(exc), param="messages", code="context_length_exceeded")
