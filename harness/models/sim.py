"""`sim`: a simulated coding model whose success depends on the context it is sent.

It is a stand-in for a model, not a model. Rules (README, "The simulated model"):

- Stateless and context-only: a reply is a function of the messages, the seed and the task's
  reference fix (given at construction, like an oracle agent). Same messages + seed => same reply.
- Evidence-gated: a hunk of the reference fix is written only when its pre-image (the exact old
  lines) is visible in the context, as a numbered file excerpt, and is noticed.
- Attention: the chance to notice a visible hunk is
  ``r0 * (1 - a * max(0, fill - f0)) * (1 - m * mid(pos))`` with ``fill`` = context tokens / window,
  ``pos`` the relative position of the hunk in the context and
  ``mid(pos) = (1 - |2 pos - 1|) * min(1, fill / middle_full_at)``.
- Navigation comes only from what is visible: tracebacks, search hits, names in the task.
- A detour (a lower-ranked action) happens per turn with chance ``d * noise_share``; an edit is
  wrong with chance ``s``.
- A request over the window is rejected (ContextLengthExceeded), like a real API.
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
from dataclasses import dataclass, field
from typing import Any

from ctxbench.harness.config import SimParams
from ctxbench.harness.history import ToolCall
from ctxbench.harness.models.base import Completion, ContextLengthExceeded, Usage
from ctxbench.harness.models.goldpatch import Hunk, parse_patch
from ctxbench.harness.rendering import Excerpt, parse_excerpts
from ctxbench.harness.tokens import TokenCounter

__all__ = ["SimModel", "PromptCache", "attention", "is_summary_request"]

_FRAME = re.compile(r"^(?P<path>[\w./-]+\.py):(?P<line>\d+)[:\s]", re.M)
_HIT = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+): (?P<text>.*)$", re.M)
_IDENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)(\()?")
_BACKTICK = re.compile(r"`([^`\n]+)`")
_PATHLIKE = re.compile(r"\b([\w-]+(?:/[\w.-]+)*\.py)\b")
_COMMON = set("""print len str int float list dict set tuple bool None True False assert return import from
self def class with open range sorted type object raise except try else elif while for and not
this that when then with into have should would could expected actual error python pytest test tests
instead value values result returns called calling function method example reproduce output""".split())
_SUMMARY_MARKER = "summar"
_REFERENCE = re.compile(r"(?<![\w.])(_?[A-Z][A-Z0-9_]{2,}|_[a-z][a-z0-9_]{2,})\b")


def attention(p: SimParams, fill: float, pos: float) -> float:
    """Chance to notice a visible piece of evidence at relative position `pos` in a context this full.

    The middle penalty grows with the fill and is at full strength from `middle_full_at`: the
    middle of a *long* context is what gets lost, not the middle of three messages.
    """
    mid = (1.0 - abs(2.0 * pos - 1.0)) * min(1.0, fill / p.middle_full_at)
    return max(0.0, p.r0 * (1.0 - p.fill_slope * max(0.0, fill - p.fill_onset)) * (1.0 - p.middle_penalty * mid))


def is_summary_request(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> bool:
    return not tools and bool(messages) and messages[0].get("role") == "system" \
        and _SUMMARY_MARKER in (messages[0].get("content") or "").lower()


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


@dataclass
class _View:
    """What the simulator can see in one request."""

    calls: dict[str, tuple[str, dict[str, Any], int]] = field(default_factory=dict)
    """tool-call id -> (tool, args, message index)."""
    results: dict[str, tuple[str, int]] = field(default_factory=dict)
    """tool-call id -> (content, message index)."""
    excerpts: list[tuple[int, Excerpt]] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    """Per message: (first token offset, tokens)."""
    contents: list[str] = field(default_factory=list)

    def position(self, index: int, needle: str) -> float:
        """Relative position in the whole context of `needle` inside message `index`."""
        start, size = self.spans[index]
        content = self.contents[index]
        at = content.find(needle)
        frac = (at / len(content)) if at >= 0 and content else 0.5
        return (start + size * frac) / self.tokens
    tokens: int = 0


def _identifiers(text: str, limit: int) -> list[tuple[str, bool]]:
    """Names worth searching for, in order of appearance: (name, looks like a call or class)."""
    seen: dict[str, bool] = {}
    spans = [m.group(1).strip() for m in _BACKTICK.finditer(text)]
    for chunk in spans + [text]:
        whole = chunk is not text and re.fullmatch(r"[A-Za-z_][\w.]*(\(\))?", chunk) is not None
        for m in _IDENT.finditer(chunk):
            name, call = m.group(1), bool(m.group(2))
            codeish = call or "_" in name or (name[0].isupper() and any(c.islower() for c in name[1:])
                                              and any(c.isupper() for c in name[1:]))
            if len(name) < 4 or name.lower() in _COMMON or not (codeish or whole):
                continue
            if name not in seen:
                seen[name] = call or name[0].isupper()
    return list(seen.items())[:limit]


class SimModel:
    """The simulated model for one task (its reference fix is the oracle)."""

    def __init__(self, params: SimParams, gold_patch: str, counter: TokenCounter, context_window: int,
                 max_output_tokens: int, seed: int, cache: PromptCache | None = None) -> None:
        self.p = params
        self.cache = cache or PromptCache()
        self.hunks: list[Hunk] = [h for h in parse_patch(gold_patch)]
        self.fix_files = {h.path for h in self.hunks}
        self.counter = counter
        self.window = context_window
        self.max_output = max_output_tokens
        self.seed = seed

    # -- entry point ---------------------------------------------------------------------------
    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Completion:
        prompt = self.counter.count_messages(messages) + self.counter.count_tools(tools)
        if prompt + self.max_output > self.window:
            raise ContextLengthExceeded(
                f"This model's maximum context length is {self.window} tokens. However, you requested "
                f"{prompt + self.max_output} tokens ({prompt} in the messages, {self.max_output} in the completion).")
        digest = hashlib.sha256(json.dumps([self.seed, messages], sort_keys=True).encode()).hexdigest()
        rng = random.Random(int(digest[:16], 16))
        cached = self.cache.cached(self.counter, messages, tools)
        if is_summary_request(messages, tools):
            text = self._summarize(messages)
            return Completion(text, (), Usage(prompt, self.counter.count(text), cached))
        text, name, args = self._decide(messages, prompt, rng)
        call = ToolCall(f"call_{digest[:10]}", name, json.dumps(args, sort_keys=True))
        completion_tokens = self.counter.count(text) + self.counter.count(name) + self.counter.count(call.arguments)
        return Completion(text, (call,), Usage(prompt, completion_tokens, cached))

    # -- reading the context -------------------------------------------------------------------
    def _view(self, messages: list[dict[str, Any]]) -> _View:
        v = _View()
        sizes = [self.counter.count_message(m) for m in messages]
        v.tokens = sum(sizes) or 1
        acc = 0
        for i, (m, size) in enumerate(zip(messages, sizes)):
            v.spans.append((acc, size))
            v.contents.append(m.get("content") or "")
            acc += size
            for c in m.get("tool_calls") or ():
                try:
                    args = json.loads(c["function"]["arguments"] or "{}")
                except ValueError:
                    args = {}
                v.calls[c["id"]] = (c["function"]["name"], args if isinstance(args, dict) else {}, i)
            if m.get("role") == "tool":
                v.results[m.get("tool_call_id", "")] = (m.get("content") or "", i)
            if m.get("role") in ("tool", "user") and "| " in (m.get("content") or ""):
                v.excerpts.extend((i, e) for e in parse_excerpts(m["content"]))
        return v

    def _done_actions(self, v: _View) -> set[str]:
        return {_action_key(name, args) for name, args, _ in v.calls.values()}

    def _applied(self, v: _View) -> set[str]:
        done = set()
        for cid, (name, args, _) in v.calls.items():
            content = v.results.get(cid, ("", 0))[0]
            if name == "edit_file" and content.startswith("edited"):
                for h in self.hunks:
                    if args.get("path") == h.path and args.get("old_text") == h.old_text \
                            and args.get("new_text") == h.new_text:
                        done.add(h.id)
            if name == "write_file" and content.startswith("wrote"):
                done.update(h.id for h in self.hunks if h.new_file and args.get("path") == h.path)
        for h in self.hunks:
            last_new = max((i for i, e in v.excerpts if e.path == h.path and _contains(e, h.new_lines)), default=-1)
            last_old = max((i for i, e in v.excerpts if e.path == h.path and _contains(e, h.old_lines)), default=-1)
            if last_new > last_old and h.old_lines != h.new_lines:
                done.add(h.id)
        return done

    def _noise_share(self, v: _View, messages: list[dict[str, Any]]) -> float:
        dynamic = noise = 0
        for m in messages[2:]:
            n = self.counter.count_message(m)
            dynamic += n
            if m.get("role") == "tool" and not any(f in (m.get("content") or "") for f in self.fix_files):
                noise += n
        return noise / dynamic if dynamic else 0.0

    # -- deciding ------------------------------------------------------------------------------
    def _decide(self, messages: list[dict[str, Any]], prompt: int, rng: random.Random) -> tuple[str, str, dict]:
        v = self._view(messages)
        fill = prompt / self.window
        applied = self._applied(v)
        last_edit = max((i for n, a, i in v.calls.values() if n in ("edit_file", "write_file")), default=-1)
        test_runs = sorted((i, cid) for cid, (n, a, i) in v.calls.items() if n == "run_tests" and cid in v.results)
        last_test = v.results[test_runs[-1][1]] if test_runs else None
        tested_after_edit = bool(test_runs) and test_runs[-1][0] > last_edit

        if self.hunks and len(applied) == len(self.hunks):
            if tested_after_edit and last_test and "[exit code 0]" in last_test[0]:
                return "The tests pass now.", "finish", {"summary": "Fixed the reported bug."}
            if not tested_after_edit:
                return "Let me check the fix with the tests.", "run_tests", {}
            return "The fix is in; remaining failures look unrelated.", "finish", {"summary": "Applied the fix."}

        for h in self.hunks:
            if h.id in applied:
                continue
            seen = [i for i, e in v.excerpts if e.path == h.path and _contains(e, h.old_lines)]
            if h.new_file and len(applied) == len(self.hunks) - 1:
                return f"{h.path} needs to exist.", "write_file", {"path": h.path, "content": h.new_text + "\n"}
            if seen and rng.random() < attention(self.p, fill, v.position(seen[-1], h.old_lines[0])):
                if rng.random() < self.p.slip_rate:
                    wrong = h.old_text + "\n" + _slip_line(h)
                    return f"I think the problem is in {h.path}.", "edit_file", \
                        {"path": h.path, "old_text": h.old_text, "new_text": wrong}
                return f"Found the cause in {h.path}; fixing it.", "edit_file", \
                    {"path": h.path, "old_text": h.old_text, "new_text": h.new_text}

        candidates = self._explore(messages, v, last_test, last_edit, test_runs)
        if not candidates:
            if last_edit >= 0 and not tested_after_edit:
                return "Let me run the tests again.", "run_tests", {}
            return "I could not find the cause.", "finish", {"summary": "Gave up."}
        choice = candidates[0]
        if len(candidates) > 1 and rng.random() < self.p.detour_rate * self._noise_share(v, messages):
            choice = rng.choice(candidates[1:])
        return choice

    def _explore(self, messages: list[dict[str, Any]], v: _View, last_test: tuple[str, int] | None,
                 last_edit: int, test_runs: list) -> list[tuple[str, str, dict]]:
        done = self._done_actions(v)
        out: list[tuple[str, str, dict]] = []
        w = self.p.read_window

        def add(text: str, name: str, args: dict) -> None:
            key = _action_key(name, args)
            if key not in done:
                done.add(key)
                out.append((text, name, args))

        def covered(path: str, line: int) -> bool:
            return any(e.path == path and e.start <= line <= e.end for _, e in v.excerpts)

        def read_around(path: str, line: int, before: int) -> dict:
            start = max(1, line - before)
            return {"path": path, "start_line": start, "end_line": start + w - 1}

        if not test_runs or (last_edit > test_runs[-1][0]):
            add("Let me run the tests.", "run_tests", {})
        if last_test:
            frames = [(m["path"], int(m["line"])) for m in _FRAME.finditer(last_test[0])]
            frames = list(dict.fromkeys(frames))
            src = [f for f in frames if not _is_test_path(f[0])]
            for path, line in reversed(src):
                if not covered(path, line):
                    add(f"The traceback points at {path}:{line}.", "read_file", read_around(path, line, w // 2))
        task = messages[1].get("content", "") if len(messages) > 1 else ""
        hits = self._search_hits(v)
        for path, line, text in hits:
            if re.match(r"(async\s+)?(def|class)\s", text) and not _is_test_path(path) and not covered(path, line + 3):
                add(f"{path} defines it; reading.", "read_file", read_around(path, line, 5))
        for name, codeish in _identifiers(task, self.p.max_searches):
            q = (f"class {name}" if name[0].isupper() else f"def {name}(") if codeish else name
            add(f"Searching for {q}.", "search", {"query": q})
            if _action_key("search", {"query": q}) in done and self._zero_hits(v, q):
                add(f"Searching for {name}.", "search", {"query": name})
        for path, line, text in hits:
            if not _is_test_path(path) and not covered(path, line):
                add(f"Looking at {path}:{line}.", "read_file", read_around(path, line, w // 2))
        for name, query in self._referenced_names(v):
            add(f"Where is {name} defined?", "search", {"query": query})
        for m in _PATHLIKE.finditer(task):
            add(f"Reading {m.group(1)}.", "read_file", {"path": m.group(1)})
        if last_test:
            tests = [(m["path"], int(m["line"])) for m in _FRAME.finditer(last_test[0]) if _is_test_path(m["path"])]
            for path, line in dict.fromkeys(tests):
                if not covered(path, line):
                    add(f"Reading the failing test {path}.", "read_file", read_around(path, line, w // 2))
        if not any(n == "list_files" for n, _, _ in v.calls.values()):
            add("Let me look at the repository layout.", "list_files", {})
        return out

    def _referenced_names(self, v: _View) -> list[tuple[str, str]]:
        """Module-level names used in the latest source excerpts but not defined in view."""
        out: list[tuple[str, str]] = []
        shown = "\n".join("\n".join(e.lines) for _, e in v.excerpts)
        for _, e in sorted(v.excerpts, key=lambda ie: -ie[0])[:3]:
            if _is_test_path(e.path):
                continue
            for m in _REFERENCE.finditer("\n".join(e.lines)):
                name = m.group(1)
                query = f"{name} =" if name.lstrip("_").isupper() else f"def {name}("
                if query not in shown and (name, query) not in out:
                    out.append((name, query))
        return out[:4]

    def _search_hits(self, v: _View) -> list[tuple[str, int, str]]:
        hits = []
        for cid, (name, _, _) in sorted(v.calls.items(), key=lambda kv: kv[1][2]):
            if name == "search" and cid in v.results:
                hits += [(m["path"], int(m["line"]), m["text"]) for m in _HIT.finditer(v.results[cid][0])]
        return hits

    def _zero_hits(self, v: _View, query: str) -> bool:
        return any(n == "search" and a.get("query") == query and v.results.get(cid, ("",))[0].startswith("0 matches")
                   for cid, (n, a, _) in v.calls.items())

    # -- summaries -----------------------------------------------------------------------------
    def _summarize(self, messages: list[dict[str, Any]]) -> str:
        v = self._view(messages)
        reads = sorted({f"{e.path} lines {e.start}-{e.end}" for _, e in v.excerpts})
        edits = [f"{a.get('path')}: {v.results.get(cid, ('?',))[0]}" for cid, (n, a, _) in v.calls.items()
                 if n in ("edit_file", "write_file")]
        errors = []
        for content, _ in v.results.values():
            errors += [ln.strip() for ln in content.split("\n") if ln.startswith("E ")][-3:]
        parts = ["Summary of earlier work."]
        if reads:
            parts.append("Read: " + "; ".join(reads[:20]))
        if edits:
            parts.append("Edits: " + "; ".join(edits[:10]))
        if errors:
            parts.append("Last errors: " + " | ".join(errors[-5:]))
        return "\n".join(parts)


def _action_key(name: str, args: dict[str, Any]) -> str:
    return name + json.dumps(args, sort_keys=True)


def _contains(e: Excerpt, lines: tuple[str, ...]) -> bool:
    if not lines:
        return False
    n = len(lines)
    body = e.lines
    first = lines[0]
    for i in range(len(body) - n + 1):
        if body[i] == first and body[i:i + n] == lines:
            return True
    return False


def _is_test_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path.startswith("tests/") or "/tests/" in path or name.startswith("test_") or name == "conftest.py"


def _slip_line(h: Hunk) -> str:
    indent = re.match(r"\s*", h.old_lines[-1] if h.old_lines else "").group(0)
    return f"{indent}pass  # adjusted"
