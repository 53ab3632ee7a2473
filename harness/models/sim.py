"""`sim`: a simulated coding model whose success depends on the context it is sent.

It is a stand-in for a model, not a model. Rules (docs/simulator.md):

- Stateless and context-only: a reply is a function of the messages, the seed and the task's
  reference fix (given at construction, like an oracle agent). Same messages + seed => same reply.
- Evidence-gated: a hunk of the reference fix is written only when its pre-image (the exact old
  lines) is visible in the context, as numbered lines of a file excerpt (on either side of an
  omission marker), and is noticed.
- Attention follows the context's length, not the window: the chance to notice a visible hunk is
  ``r0 * max(floor, 1 - a * max(0, L - L0)) * (1 - m * mid(pos))`` with ``L`` = prompt tokens /
  attention_scale, ``pos`` the relative position of the hunk in the context and
  ``mid(pos) = (1 - |2 pos - 1|) * min(1, L / middle_full_at)``. One draw per (seed, hunk, message
  showing it): the same view gives the same answer; a re-read is a new chance.
- A visible summary is memory: what it says was read, run or edited counts as done.
- Navigation comes only from what is visible: tracebacks, search hits, names and words of the task,
  listings, import lines, clipped ranges to re-read; the rules and their order are the policy of
  `ctxbench.harness.models.simrules`, over the view of `ctxbench.harness.models.simview`.
- A detour (a lower-ranked action) happens per turn with chance ``d * noise_share``; an edit is
  wrong with chance ``s``.
- A request over the window is rejected (ContextLengthExceeded), like a real API.
- It acts through ctxbench's tools, or through one shell (`model.sim.dialect`: a call of the shell
  tool the request offers, `bash`, Claude Code's `Bash`, Codex's `exec_command`, or a fenced command
  per reply, `ctxbench.harness.models.simbash` and `simbash_reading`), with the same decisions.
- An agent's own compaction request (Claude Code's, Codex's, Gemini CLI's, Qwen Code's, Cline's,
  OpenHands') is answered with a summary of the conversation in the form that agent expects, in the
  summary layout it reads back as memory.
- Cached prompt tokens are reported like a provider's prompt cache (`PromptCache`): the longest
  prefix of whole messages already sent in an earlier request, counted in blocks. This is usage
  accounting only; it never changes a reply.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import OrderedDict
from functools import reduce
from typing import Any, Callable, ClassVar

from ctxbench.harness.chat import message_text, read_opening
from ctxbench.harness.wire.conversation import history_from_messages
from ctxbench.harness.config import SimParams
from ctxbench.harness.protocols import Completion, ContextLengthExceeded, Usage
from ctxbench.harness.models.goldpatch import Hunk, parse_patch
from ctxbench.harness.models import simaider, simcline, simflat
from ctxbench.harness.models.simbash import (Dialect, command_of, dialect_for, finish_call, finishes_by_text, shell_call,
                                             shell_command)
from ctxbench.harness.models.simbash_reading import native_messages, stable_messages
from ctxbench.harness.models.simmemory import summarize_request
from ctxbench.harness.models.simrules import Action, explore, situation
from ctxbench.harness.models.simview import TestRun, View, contains, read_view
from ctxbench.harness.records import ToolCall
from ctxbench.harness.markup.summaries import (AGENT_SUMMARY_PROMPTS, Digest, agent_summary_request, asks_for_summary,
                                              asks_for_title, title_of)
from ctxbench.harness.tokens import TokenCounter

__all__ = ["SimModel", "PromptCache", "attention", "is_summary_request"]


def attention(p: SimParams, length: float, pos: float) -> float:
    """Chance to notice a visible piece of evidence at relative position `pos` in a context this long.

    `length` is the context's tokens / `attention_scale`, whatever the window. The middle penalty
    grows with the length and is at full strength from `middle_full_at`: the middle of a *long*
    context is what gets lost, not the middle of three messages.
    """
    mid = (1.0 - abs(2.0 * pos - 1.0)) * min(1.0, length / p.middle_full_at)
    by_length = max(p.length_floor, 1.0 - p.length_slope * max(0.0, length - p.length_onset))
    return p.r0 * by_length * (1.0 - p.middle_penalty * mid)


def is_summary_request(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> bool:
    return not tools and bool(messages) and messages[0].get("role") == "system" \
        and asks_for_summary(messages[0].get("content") or "")


def _uniform(*parts: Any) -> float:
    """A draw in [0, 1) fixed by `parts`: the same seed, evidence and message give the same draw."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


class PromptCache:
    """Prompt-cache accounting like OpenAI's: a request's prefix already sent before is served from cache.

    The prefix is the tool schemas then whole messages; the cached count is the longest such prefix
    that an earlier request (one this cache saw) also began with, rounded down to a multiple of
    `block` tokens, and 0 below `minimum` tokens (OpenAI: 128 and 1,024). A strategy that rewrites
    early context (a new summary near the top) therefore drops the cached share to the part before it.
    """

    def __init__(self, block: int = 128, minimum: int = 1024, capacity: int = 200_000) -> None:
        self.block, self.minimum, self.capacity = block, minimum, capacity
        self._seen: OrderedDict[str, None] = OrderedDict()

    def cached(self, counter: TokenCounter, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        """Tokens of this request served from cache; then remembers its prefixes."""
        digest = hashlib.sha256(json.dumps(tools, sort_keys=True).encode())
        tokens = counter.count_tools(tools)
        hit, matching = 0, True
        for message in messages:
            digest.update(json.dumps(message, sort_keys=True).encode())
            tokens += counter.count_message(message)
            key = digest.copy().hexdigest()
            if matching and key in self._seen:
                hit = tokens
                self._seen.move_to_end(key)
            else:
                matching = False
                self._seen[key] = None
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)
        cached = hit // self.block * self.block
        return cached if cached >= self.minimum else 0


class SimModel:
    """The simulated model for one task (its reference fix is the oracle)."""

    takes_cache_marks: ClassVar[bool] = False

    def __init__(self, params: SimParams, gold_patch: str, counter: TokenCounter, context_window: int,
                 max_output_tokens: int, seed: int, cache: PromptCache | None = None,
                 test_cmd: tuple[str, ...] = (), statement: str | None = None) -> None:
        """`test_cmd` and `statement` (the task's test command and problem statement) serve the bash
        dialects: the command it runs the tests with, and the task it reads inside an agent's template."""
        self.p = params
        self.cache = cache or PromptCache()
        self.hunks: list[Hunk] = [h for h in parse_patch(gold_patch)]
        self.fix_files = {h.path for h in self.hunks}
        self.counter = counter
        self.window = context_window
        self.max_output = max_output_tokens
        self.seed = seed
        self.test_cmd, self.statement = test_cmd, statement

    # -- entry point ---------------------------------------------------------------------------
    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Completion:
        if asks_for_title(messages):  # OpenCode names its session before its first turn
            return self._title_reply(messages, tools)
        dialect = dialect_for(self.p, tools, messages)
        if dialect == "aider":
            return self._complete_in_aider(messages, tools)
        agent = agent_summary_request(messages)
        if dialect != "native" or agent is not None:  # Codex compacts without tools
            return self._complete_in_shell(messages, tools, dialect, agent)
        prompt, digest, rng, cached = self._request(messages, tools)
        if is_summary_request(messages, tools):
            return self._summary_reply(messages, prompt, cached)
        text, name, args = self._decide(messages, prompt, rng)
        call = ToolCall(f"call_{digest[:10]}", name, json.dumps(args, sort_keys=True))
        completion_tokens = self.counter.count(text) + self.counter.count(name) + self.counter.count(call.arguments)
        return Completion(text, (call,), Usage(prompt, completion_tokens, cached))

    def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 identity: list[dict[str, Any]] | None = None) -> tuple[int, str, random.Random, int]:
        """What a request is, read as `messages`: its prompt tokens (checked against the window), its
        digest (of `identity`, default the messages), the random draws it seeds, and the tokens the
        prompt cache serves."""
        prompt = self.counter.count_prompt(messages, tools)
        self._check_window(prompt)
        digest = hashlib.sha256(json.dumps([self.seed, messages if identity is None else identity],
                                           sort_keys=True).encode()).hexdigest()
        return prompt, digest, random.Random(int(digest[:16], 16)), self.cache.cached(self.counter, messages, tools)

    def _title_reply(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Completion:
        """A short title of the task, for an agent that names its session (`asks_for_title`)."""
        prompt, _, _, cached = self._request(messages, tools)
        text = title_of(self.statement or history_from_messages(messages).task_statement)
        return Completion(text, (), Usage(prompt, self.counter.count(text), cached))

    def _summary_reply(self, messages: list[dict[str, Any]], prompt: int, cached: int) -> Completion:
        text = self._summarize(messages)
        return Completion(text, (), Usage(prompt, self.counter.count(text), cached))

    def _check_window(self, prompt: int) -> None:
        if prompt + self.max_output > self.window:
            raise ContextLengthExceeded(
                f"This model's maximum context length is {self.window} tokens. However, you requested "
                f"{prompt + self.max_output} tokens ({prompt} in the messages, {self.max_output} in the completion).")

    def _complete_in_shell(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], dialect: Dialect,
                           agent: str | None) -> Completion:
        """A reply in a bash dialect: the native decision on the conversation read as native calls,
        written as one shell command (a call of the offered shell tool, or a fenced block in
        `bash_text`). The request is read and counted without durations and addresses
        (`stable_messages`), its draws are seeded by the conversation read as native calls after
        the system prompt, and the system prompt weighs in its attention at its size rounded to a
        thousand tokens: an agent's own system prompt, working folder and date, and its template
        around the statement, do not move them. An agent that ends its run when a reply calls no
        tool (Claude Code, Codex) finishes with such a reply; `agent` names the agent whose own
        compaction request this is, answered with a summary in its form."""
        stable = stable_messages(messages)
        native, sizes = native_messages(stable, self.p, self.test_cmd, self.statement,
                                        [self.counter.count_message(m) for m in stable])
        prompt, digest, rng, cached = self._request(stable, tools, native[1:])
        if agent is not None:  # before a summarizer's request: Gemini CLI's asks with a system prompt of its own
            if agent in ("cline", "opencode", "pi"):  # its request holds the conversation as text
                flattened = (simcline if agent == "cline" else simflat).conversation(stable)
                native = native_messages(flattened, self.p, self.test_cmd, self.statement, [0] * len(flattened))[0]
            summary = self._compaction(native, agent)
            return Completion(summary, (), Usage(prompt, self.counter.count(summary), cached))
        if is_summary_request(messages, tools):
            return self._summary_reply(messages, prompt, cached)
        # the agent's system prompt at its size in whole thousands of tokens: the few tokens a run's working
        # folder, date or version stamp adds or takes must not move a notice draw near its threshold
        steady = round(sizes[0], -3)
        text, name, args = self._decide(native, prompt - sizes[0] + steady, rng, [steady, *sizes[1:]])
        if name == "finish" and dialect == "bash" and finishes_by_text(tools):
            return Completion(text, (), Usage(prompt, self.counter.count(text), cached))
        finish = finish_call(tools, text) if name == "finish" and dialect == "bash" else None
        if finish is not None:  # OpenHands ends its run with its `finish` tool
            call = ToolCall(f"call_{digest[:10]}", finish[0], json.dumps(finish[1]))
            return Completion(text, (call,), Usage(prompt, self.counter.count(text) + self.counter.count(call.arguments),
                                                   cached))
        command = shell_command(name, args, self.p, self.test_cmd, self.hunks)
        if dialect == "bash_text":
            reply = command_of(text, command, dialect, self.p.fence)
            return Completion(reply, (), Usage(prompt, self.counter.count(reply), cached))
        tool, arguments = shell_call(tools, command)
        call = ToolCall(f"call_{digest[:10]}", tool, json.dumps(arguments))
        completion_tokens = self.counter.count(text) + self.counter.count(call.name) + self.counter.count(call.arguments)
        return Completion(text, (call,), Usage(prompt, completion_tokens, cached))

    def _complete_in_aider(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Completion:
        """A reply in Aider's terms (`ctxbench.harness.models.simaider`): the native decision on its
        conversation read as native calls, among the actions Aider can carry out, written as a request to
        add files, a SEARCH/REPLACE block or a closing reply; its summarizing request answered with the
        digest of the turns it shows. Draws are seeded by the conversation read as native calls."""
        native = simaider.native_conversation(messages, self.statement)
        prompt, _, rng, cached = self._request(messages, tools, native[1:])
        if agent_summary_request(messages) == "aider":
            text = simaider.summary_text(messages, self.statement, self.test_cmd)
        else:
            text = simaider.reply_text(self._decide(native, prompt, rng, allowed=simaider.allows(native)), native)
        return Completion(text, (), Usage(prompt, self.counter.count(text), cached))

    def _applied(self, v: View) -> set[str]:
        """The hunks that are in: edited as the fix has them, shown by a later read, or remembered as edits."""
        done: set[str] = set()
        for cid, (name, args, _) in v.calls.items():
            if v.failed(cid):
                continue
            if name == "edit_file":
                for h in self.hunks:
                    if args.get("path") == h.path and args.get("old_text") == h.old_text \
                            and args.get("new_text") == h.new_text:
                        done.add(h.id)
            if name == "write_file":
                done.update(h.id for h in self.hunks if h.new_file and args.get("path") == h.path)
        for h in self.hunks:
            last_new = max((i for i, e in v.excerpts if e.path == h.path and contains(e, h.new_lines)), default=-1)
            last_old = max((i for i, e in v.excerpts if e.path == h.path and contains(e, h.old_lines)), default=-1)
            if last_new > last_old and h.old_lines != h.new_lines:
                done.add(h.id)
        for path, n in v.memory.edits.items():
            for h in [h for h in self.hunks if h.path == path and h.id not in done][:n]:
                done.add(h.id)
        return done

    def _noise_share(self, v: View, messages: list[dict[str, Any]]) -> float:
        """Share of the tokens after the task statement that are irrelevant to the fix.

        A tool result or an assistant message is relevant as a whole when it names a file of the
        fix; a user message (injected snippets, a summary) is judged excerpt by excerpt and line by line.
        """
        total = noise = 0.0
        start = read_opening(messages).task_end
        for i, m in enumerate(messages[start:], start):
            size = v.spans[i][1]
            total += size
            content = v.contents[i]
            if m.get("role") == "user" and content:
                blocks = re.split(r"\n(?=== )|\n(?!\s*\d+\|)", content)
                irrelevant = sum(len(b) + 1 for b in blocks if not any(f in b for f in self.fix_files))
                noise += size * min(1.0, irrelevant / (len(content) + 1))
            else:
                text = content + json.dumps(m.get("tool_calls") or "")
                if not any(f in text for f in self.fix_files):
                    noise += size
        return noise / total if total else 0.0

    # -- deciding ------------------------------------------------------------------------------
    def _decide(self, messages: list[dict[str, Any]], prompt: int, rng: random.Random,
                sizes: list[int] | None = None, allowed: Callable[[Action], bool] | None = None) -> Action:
        """Finish or test when the fix is in; else write a hunk it notices; else explore (`simrules`),
        among the actions `allowed` (all by default: an agent may offer fewer, as Aider does)."""
        v = read_view(messages, self.counter, sizes)
        applied = self._applied(v)
        last_edit, tests = v.timeline()
        tested_after_edit = bool(tests) and last_edit is not None and tests[-1][0] > last_edit
        settled = self._settled(applied, tests, tested_after_edit)
        if settled:
            return settled
        fix = self._fix(v, applied, prompt / self.p.attention_scale)
        if fix:
            return fix
        opening = read_opening(messages)
        task = message_text(messages[opening.user[0]]) if opening.user else ""
        candidates = [c for c in explore(situation(v, self.p, task, tests, last_edit)) if allowed is None or allowed(c)]
        if not candidates:
            if last_edit is not None and not tested_after_edit:
                return "Let me run the tests again.", "run_tests", {}
            return "I could not find the cause.", "finish", {"summary": "Gave up."}
        choice = candidates[0]
        if len(candidates) > 1 and rng.random() < self.p.detour_rate * self._noise_share(v, messages):
            choice = rng.choice(candidates[1:])
        return choice

    def _settled(self, applied: set[str], tests: list[TestRun], tested_after_edit: bool) -> Action | None:
        """Finish when the latest run passed after an edit (and passing proves something: a run in
        view failed, or every hunk is in); test or finish when every hunk is in."""
        tests_discriminate = any(passed is False for _, passed, _ in tests)
        if tested_after_edit and tests[-1][1] and (tests_discriminate or len(applied) == len(self.hunks)):
            return "The tests pass now.", "finish", {"summary": "Fixed the reported bug."}
        if self.hunks and len(applied) == len(self.hunks):
            if not tested_after_edit:
                return "Let me check the fix with the tests.", "run_tests", {}
            return "The fix is in; remaining failures look unrelated.", "finish", {"summary": "Applied the fix."}
        return None

    def _fix(self, v: View, applied: set[str], length: float) -> Action | None:
        """The edit of the first hunk not yet in whose pre-image it notices (latest view first), or
        the file a last, new-file hunk creates. One notice draw per (seed, hunk, view)."""
        for h in self.hunks:
            if h.id in applied:
                continue
            if h.new_file and len(applied) == len(self.hunks) - 1:
                return f"{h.path} needs to exist.", "write_file", {"path": h.path, "content": h.new_text + "\n"}
            showing = sorted({i for i, e in v.fresh if e.path == h.path and contains(e, h.old_lines)}, reverse=True)
            for i in showing:
                view = v.identities[i]
                if _uniform(self.seed, "notice", h.id, view) >= attention(self.p, length, v.position(i, h.old_lines[0])):
                    continue
                if _uniform(self.seed, "slip", h.id, view) < self.p.slip_rate:
                    wrong = h.old_text + "\n" + _slip_line(h)
                    return f"I think the problem is in {h.path}.", "edit_file", \
                        {"path": h.path, "old_text": h.old_text, "new_text": wrong}
                return f"Found the cause in {h.path}; fixing it.", "edit_file", \
                    {"path": h.path, "old_text": h.old_text, "new_text": h.new_text}
        return None

    # -- summaries -----------------------------------------------------------------------------
    def _compaction(self, native: list[dict[str, Any]], agent: str) -> str:
        """The summary an agent's own compaction asks for: what the conversation read, ran and changed
        (the `summarizer`'s digest of its turns, in the layout read back as memory), with the task,
        in the agent's form (Claude Code takes the `<summary>` block)."""
        history = history_from_messages(native[:-1] if native[-1].get("role") == "user" else native,
                                        (self.test_cmd,) if self.test_cmd else ())
        task = self.statement or history.task_statement
        body, _ = reduce(Digest.fold, history.turns, Digest()).render(task)
        if agent == "claude-code":
            return (f"<analysis>\nWhat the conversation read, ran and changed, for the work to go on.\n</analysis>\n\n"
                    f"<summary>\nPrimary request:\n{task}\n\n{body}\n</summary>")
        if agent == "cline":
            return simcline.summary_reply(task, body)
        if agent in ("opencode", "pi"):
            return simflat.summary_reply(agent, task, body)
        if "<state_snapshot>" in AGENT_SUMMARY_PROMPTS.get(agent, ""):  # Gemini CLI, Qwen Code
            return f"<state_snapshot>\nTask:\n{task}\n\n{body}\n</state_snapshot>"
        return f"Summary of the work so far.\n\nTask:\n{task}\n\n{body}"

    def _summarize(self, messages: list[dict[str, Any]]) -> str:
        """A summary built only from the request: its previous summary folded with the turns shown."""
        memory = summarize_request("\n".join(m.get("content") or "" for m in messages[1:]))
        return "Summary of earlier work.\n" + memory.render()


def _slip_line(h: Hunk) -> str:
    last = h.old_lines[-1] if h.old_lines else ""
    return f"{last[:len(last) - len(last.lstrip())]}pass  # adjusted"

