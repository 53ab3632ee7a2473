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
  listings, import lines, clipped ranges to re-read.
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
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from ctxbench.harness.config import SimParams
from ctxbench.harness.models.base import Completion, ContextLengthExceeded, Usage
from ctxbench.harness.models.goldpatch import Hunk, parse_patch
from ctxbench.harness.placeholders import exit_code, is_masked
from ctxbench.harness.records import ToolCall
from ctxbench.harness.rendering import Excerpt, parse_excerpts
from ctxbench.harness.summaries import asks_for_summary
from ctxbench.harness.tokens import TokenCounter
from ctxbench.harness.models.simmemory import Memory, parse_memory, summarize_request

__all__ = ["SimModel", "PromptCache", "attention", "is_summary_request"]

_FRAME = re.compile(r"^(?P<path>[\w./-]+\.py):(?P<line>\d+)[:\s]", re.M)
_HIT = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+): (?P<text>.*)$", re.M)
_IDENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)(\()?")
_WORD = re.compile(r"(?<![\w.\"'])([A-Za-z][a-z]+|[A-Z]{3,})(?![\w(\"'])")
_BACKTICK = re.compile(r"`([^`\n]+)`")
_PATHLIKE = re.compile(r"\b([\w-]+(?:/[\w.-]+)*\.py)\b")
_IMPORT = re.compile(r"^\s*from\s+(?P<mod>\.*[\w.]*)\s+import\s+(?P<names>[\w\s,()]+)$", re.M)
_COMMON = set("""print len str int float list dict set tuple bool None True False assert return import from
self def class with open range sorted type object raise except try else elif while for and not
this that when then with into have should would could expected actual error python pytest test tests
instead value values result returns called calling function method example reproduce output""".split())
_PLAIN = set("""about above after again against also always another any anything around because been before
being below between both but cannot case cases come comes does doing done down during each even every
fine first found from gets give gives given going good here however just keep keeps know last like
looks make makes many more most much must need needs never new next note now number numbers only other
others our out over same seems shown since some something still such sure take than their them there
these they thing things think those through too under until used uses using very want wants was way
were what where which while who whole why will without work works working wrong yet you your right
left back bug bugs broken issue happens happen behaviour behavior correct correctly currently already
line lines file files code data see says said show shows time times use user users set sets get
different difference answer answers compare compared against anyone anything everything nothing another
actually really simply simple clearly likely probably already instead should would could become became
before behind believe better between beyond change changed changes check checked checks either enough
entire except expect expects explain follow follows following happen happened happens having itself
little matter mean means measure middle minute mostly myself nearly number others output outputs perhaps
please pretty problem problems reason return returned reported second seems should simply someone
sometimes somewhere status still stopped support supposed though thought through together toward turned
unless unlike update updated usually version whatever whether within without wrong around always almost
across during documented documentation expected example examples correct correctly
currently properly people customer customers report reports looking look looks reproduce
traceback recent crash crashes crashed string strings""".split())
_REFERENCE = re.compile(r"(?<![\w.])(_?[A-Z][A-Z0-9_]{2,}|_[a-z][a-z0-9_]{2,})\b")
_MEMORY_ORDER = -10**6
"""Events a summary remembers come before every verbatim message (order = turn + this)."""


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


@dataclass
class _View:
    """What the simulator can see in one request."""

    calls: dict[str, tuple[str, dict[str, Any], int]] = field(default_factory=dict)
    """tool-call id -> (tool, args, message index)."""
    results: dict[str, tuple[str, int]] = field(default_factory=dict)
    """tool-call id -> (content, message index)."""
    excerpts: list[tuple[int, Excerpt]] = field(default_factory=list)
    fresh: list[tuple[int, Excerpt]] = field(default_factory=list)
    """The excerpts no later edit of their file has made stale."""
    spans: list[tuple[int, int]] = field(default_factory=list)
    """Per message: (first token offset, tokens)."""
    contents: list[str] = field(default_factory=list)
    identities: list[str] = field(default_factory=list)
    """Per message: what makes it one view (its tool-call id, or its content)."""
    memory: Memory = field(default_factory=Memory)
    tokens: int = 0

    def position(self, index: int, needle: str) -> float:
        """Relative position in the whole context of `needle` inside message `index`."""
        start, size = self.spans[index]
        content = self.contents[index]
        at = content.find(needle)
        frac = (at / len(content)) if at >= 0 and content else 0.5
        return (start + size * frac) / self.tokens

    def shown(self, path: str, line: int) -> bool:
        """Line `line` of `path` is visible as a numbered line."""
        return any(e.path == path and e.start <= line <= e.end for _, e in self.fresh)

    def gaps(self) -> list[tuple[str, int, int, bool]]:
        """Ranges a visible file read left out at an omission marker: (path, first, last, ranged read)."""
        out = []
        for cid, (name, args, _) in self.calls.items():
            if name != "read_file" or cid not in self.results:
                continue
            index = self.results[cid][1]
            parts = [e for i, e in self.excerpts if i == index]
            ranged = "start_line" in args or "end_line" in args
            for a, b in zip(parts, parts[1:]):
                if a.path == b.path and b.start > a.end + 1:
                    out.append((a.path, a.end + 1, b.start - 1, ranged))
        return out


@lru_cache(maxsize=1024)
def _identifiers(text: str, limit: int) -> tuple[tuple[str, bool], ...]:
    """Names worth searching for, in order of appearance: (name, looks like a call or class).
    (Cached, as the other readings of the task statement below: each turn asks again.)"""
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
    return tuple(seen.items())[:limit]


@lru_cache(maxsize=1024)
def _keywords(text: str, limit: int) -> tuple[str, ...]:
    """Plain words of the task statement worth a search: upper-case names first, then long words."""
    codeish = {n for n, _ in _identifiers(text, 100)}
    errors = " ".join(re.findall(r"\b\w+(?:Error|Exception): (.*)", text)).replace('"', " ")
    prose = re.sub(r"^ {4}.*$", "", text, flags=re.M)  # code samples are searched by name, not by word
    words = [m.group(1) for m in _WORD.finditer(errors)] + [m.group(1) for m in _WORD.finditer(prose)]
    upper = [w for w in words if w.isupper() and w.lower() not in _PLAIN]
    long = [w.lower() for w in words if not w.isupper() and len(w) >= 6 and w.lower() not in _PLAIN | _COMMON]
    first = [w.lower() for w in _WORD.findall(errors) if len(w) >= 5 and w.lower() not in _PLAIN | _COMMON]
    code = " ".join(_BACKTICK.findall(text) + re.findall(r"^ {4}.*$", text, flags=re.M))
    first += [w.lower() for w in re.findall(r"(?<![\w-])([A-Za-z]{3,}(?:-[A-Za-z]{3,})+)(?![\w-])", code)]
    first += re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]{2,})", code)
    first += [w for span in _BACKTICK.findall(text) for w in re.findall(r"(?<![\w.\\-])([a-z]{4,})(?![\w(.-])", span)
              if w not in _PLAIN | _COMMON]
    programs = {w.lower() for w in re.findall(r"(?:\$ |\bfrom |\bimport |-m |^ {4,})(\w+)(?= )", text, flags=re.M)}
    out = [w for w in dict.fromkeys(first + upper + long) if w not in codeish and w.lower() not in programs]
    return tuple(out[:limit])


@lru_cache(maxsize=1024)
def _task_stems(task: str, words: tuple[str, ...]) -> frozenset[str]:
    """Stems of the task's names (and of their snake_case parts) and of its plain words."""
    names = [n.lower() for n, _ in _identifiers(task, 100)]
    return frozenset({_stem(p) for n in names for p in [n, *n.split("_")] if len(p) >= 4} |
                     {_stem(w) for w in [*words, *_keywords(task, 100)]})


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[:-len(suffix)]
    return word


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
            content = m.get("content") or ""
            v.spans.append((acc, size))
            v.contents.append(content)
            v.identities.append(m.get("tool_call_id") or hashlib.sha256(content.encode()).hexdigest()[:16])
            acc += size
            for c in m.get("tool_calls") or ():
                try:
                    args = json.loads(c["function"]["arguments"] or "{}")
                except ValueError:
                    args = {}
                v.calls[c["id"]] = (c["function"]["name"], args if isinstance(args, dict) else {}, i)
            if m.get("role") == "tool":
                v.results[m.get("tool_call_id", "")] = (content, i)
            if m.get("role") in ("tool", "user") and "| " in content:
                v.excerpts.extend((i, e) for e in parse_excerpts(content))
            if m.get("role") == "user" and i >= 2:
                v.memory.merge(parse_memory(content))
        edits = [(i, str(args.get("path")), str(args.get("old_text", args.get("content", ""))).split("\n"))
                 for cid, (name, args, i) in v.calls.items()
                 if name in ("edit_file", "write_file") and not v.results.get(cid, ("", 0))[0].startswith("error:")]
        v.fresh = [(i, part) for i, e in v.excerpts
                   for part in _without_edited(e, [old for k, path, old in edits if path == e.path and k > i])]
        return v

    def _remembered(self, v: _View, path: str, line: int) -> bool:
        """Line `line` of `path` was read, as far as the context tells (visible, masked or summarized)."""
        if v.shown(path, line) or v.memory.read(path, line, line):
            return True
        for cid, (name, args, _) in v.calls.items():
            if name == "read_file" and args.get("path") == path and not self._visible_result(v, cid):
                if int(args.get("start_line") or 1) <= line <= int(args.get("end_line") or 10**9):
                    return True
        return False

    @staticmethod
    def _visible_result(v: _View, cid: str) -> bool:
        """The call's result is in view as the tool gave it (not masked away, not missing)."""
        content = v.results.get(cid, ("", 0))[0]
        return bool(content) and not is_masked(content)

    def _done(self, v: _View, name: str, args: dict[str, Any]) -> bool:
        key = _action_key(name, args)
        if any(_action_key(n, a) == key for n, a, _ in v.calls.values()):
            return True
        if name == "read_file":
            start, end = int(args.get("start_line") or 1), int(args.get("end_line") or 10**9)
            return v.memory.read(args.get("path", ""), start, end)
        return any(c.matches(name, args) for c in v.memory.calls)

    def _applied(self, v: _View) -> set[str]:
        done = set()
        for cid, (name, args, _) in v.calls.items():
            content = v.results.get(cid, ("", 0))[0]
            if content.startswith("error:"):
                continue
            if name == "edit_file":
                for h in self.hunks:
                    if args.get("path") == h.path and args.get("old_text") == h.old_text \
                            and args.get("new_text") == h.new_text:
                        done.add(h.id)
            if name == "write_file":
                done.update(h.id for h in self.hunks if h.new_file and args.get("path") == h.path)
        for h in self.hunks:
            last_new = max((i for i, e in v.excerpts if e.path == h.path and _contains(e, h.new_lines)), default=-1)
            last_old = max((i for i, e in v.excerpts if e.path == h.path and _contains(e, h.old_lines)), default=-1)
            if last_new > last_old and h.old_lines != h.new_lines:
                done.add(h.id)
        for path, n in v.memory.edits.items():
            for h in [h for h in self.hunks if h.path == path and h.id not in done][:n]:
                done.add(h.id)
        return done

    def _timeline(self, v: _View) -> tuple[int | None, list[tuple[int, bool | None, str]]]:
        """The latest edit's order and every test run as (order, passed, output), oldest first.

        Verbatim calls are ordered by message index; what a summary remembers comes before them.
        `passed` is None for a run whose output is masked.
        """
        edits = [i for cid, (n, _, i) in v.calls.items()
                 if n in ("edit_file", "write_file") and not v.results.get(cid, ("", 0))[0].startswith("error:")]
        if v.memory.edits:
            edits.append(_MEMORY_ORDER + (v.memory.last_edit_turn or 0))
        tests = [(_MEMORY_ORDER + turn, passed, v.memory.errors) for turn, passed in v.memory.test_runs()]
        for cid, (n, _, i) in v.calls.items():
            if n == "run_tests" and cid in v.results:
                content = v.results[cid][0]
                shown = self._visible_result(v, cid)
                tests.append((i, (exit_code(content) == 0) if shown else None, content if shown else ""))
        return (max(edits) if edits else None), sorted(tests, key=lambda t: t[0])

    def _noise_share(self, v: _View, messages: list[dict[str, Any]]) -> float:
        """Share of the tokens after the task statement that are irrelevant to the fix.

        A tool result or an assistant message is relevant as a whole when it names a file of the
        fix; a user message (injected snippets, a summary) is judged excerpt by excerpt and line by line.
        """
        total = noise = 0.0
        for i, m in enumerate(messages[2:], 2):
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
    def _decide(self, messages: list[dict[str, Any]], prompt: int, rng: random.Random) -> tuple[str, str, dict]:
        v = self._view(messages)
        length = prompt / self.p.attention_scale
        applied = self._applied(v)
        last_edit, tests = self._timeline(v)
        tested_after_edit = bool(tests) and last_edit is not None and tests[-1][0] > last_edit

        tests_discriminate = any(passed is False for _, passed, _ in tests)
        if tested_after_edit and tests[-1][1] and (tests_discriminate or len(applied) == len(self.hunks)):
            return "The tests pass now.", "finish", {"summary": "Fixed the reported bug."}
        if self.hunks and len(applied) == len(self.hunks):
            if not tested_after_edit:
                return "Let me check the fix with the tests.", "run_tests", {}
            return "The fix is in; remaining failures look unrelated.", "finish", {"summary": "Applied the fix."}

        for h in self.hunks:
            if h.id in applied:
                continue
            if h.new_file and len(applied) == len(self.hunks) - 1:
                return f"{h.path} needs to exist.", "write_file", {"path": h.path, "content": h.new_text + "\n"}
            showing = sorted({i for i, e in v.fresh if e.path == h.path and _contains(e, h.old_lines)}, reverse=True)
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

        candidates = self._explore(messages, v, tests, last_edit)
        if not candidates:
            if last_edit is not None and not tested_after_edit:
                return "Let me run the tests again.", "run_tests", {}
            return "I could not find the cause.", "finish", {"summary": "Gave up."}
        choice = candidates[0]
        if len(candidates) > 1 and rng.random() < self.p.detour_rate * self._noise_share(v, messages):
            choice = rng.choice(candidates[1:])
        return choice

    def _explore(self, messages: list[dict[str, Any]], v: _View, tests: list[tuple[int, bool | None, str]],
                 last_edit: int | None) -> list[tuple[str, str, dict]]:
        out: list[tuple[str, str, dict]] = []
        taken: set[str] = set()
        w = self.p.read_window

        def add(text: str, name: str, args: dict) -> None:
            key = _action_key(name, args)
            if key not in taken and not self._done(v, name, args):
                taken.add(key)
                out.append((text, name, args))

        def read_around(path: str, line: int, before: int, lo: int = 1, hi: int = 10**9) -> dict:
            start = max(lo, line - before)
            return {"path": path, "start_line": start, "end_line": min(hi, start + w - 1)}

        interest: list[tuple[str, int]] = []
        if not tests or (last_edit is not None and last_edit > tests[-1][0]):
            add("Let me run the tests.", "run_tests", {})
        latest = next((t[2] for t in reversed(tests) if t[2]), "")
        if latest:
            frames = list(dict.fromkeys((m["path"], int(m["line"])) for m in _FRAME.finditer(latest)))
            for path, line in reversed([f for f in frames if not _is_test_path(f[0])]):
                interest.append((path, line))
                if not self._remembered(v, path, line):
                    add(f"The traceback points at {path}:{line}.", "read_file", read_around(path, line, w // 2))
        hits = self._search_hits(v)
        interest += [(p, n) for p, n, _ in hits if not _is_test_path(p)]
        for path, first, last, ranged in v.gaps():
            inside = [n for p, n in interest if p == path and first <= n <= last and not v.shown(p, n)]
            for line in inside[:2]:
                add(f"Line {line} of {path} was cut from the output; reading it.", "read_file",
                    read_around(path, line, w // 2, first, last))
            if ranged and not inside:
                add(f"Part of {path} was cut from the output; reading it.", "read_file",
                    {"path": path, "start_line": first, "end_line": min(last, first + w - 1)})
        for path, line, text in hits:
            if re.match(r"(async\s+)?(def|class)\s|@\w[\w.]*\(|_?[A-Z][A-Z0-9_]*\s*(:[^=]*)?=[^=]", text) \
                    and not _is_test_path(path) \
                    and not self._remembered(v, path, line + 3):
                add(f"{path} defines it; reading.", "read_file", read_around(path, line, 5))
        task = messages[1].get("content", "") if len(messages) > 1 else ""
        for name, query in self._referenced_names(v, excerpts=1)[:2]:
            add(f"The code just read uses {name}; where is it defined?", "search", {"query": query})
        for name, codeish in _identifiers(task, self.p.max_searches):
            q = f'"{name}"' if name.isupper() else \
                (f"class {name}" if name[0].isupper() else f"def {name}(") if codeish else name
            add(f"Searching for {q}.", "search", {"query": q})
            if self._zero_hits(v, q):
                add(f"Searching for {name}.", "search", {"query": name})
        for path, line, text in hits:
            if not _is_test_path(path) and not self._remembered(v, path, line):
                add(f"Looking at {path}:{line}.", "read_file", read_around(path, line, w // 2))
        words = _keywords(task, max(1, self.p.max_searches // 2))
        for path, first, last in self._read_on(v, task, words):
            add(f"{path} goes on past line {first - 1}; reading on.", "read_file",
                {"path": path, "start_line": first, "end_line": last})
        for name, query in self._referenced_names(v):
            add(f"Where is {name} defined?", "search", {"query": query})
        for path in self._imported_modules(v, task, words):
            add(f"The code imports from {path}; reading it.", "read_file", {"path": path})
        for m in _PATHLIKE.finditer(task):
            add(f"Reading {m.group(1)}.", "read_file", {"path": m.group(1)})
        for word in words:
            add(f"Searching for {word}.", "search", {"query": word})
        for path in self._listed_files(v, task, words):
            add(f"{path} looks related to the task; reading it.", "read_file", {"path": path})
        if latest:
            tests_at = [(m["path"], int(m["line"])) for m in _FRAME.finditer(latest) if _is_test_path(m["path"])]
            for path, line in dict.fromkeys(tests_at):
                if not self._remembered(v, path, line):
                    add(f"Reading the failing test {path}.", "read_file", read_around(path, line, w // 2))
        if not any(n == "list_files" for n, _, _ in v.calls.values()) and \
                not any(c.tool == "list_files" for c in v.memory.calls):
            add("Let me look at the repository layout.", "list_files", {})
        for path, line in dict.fromkeys(interest):
            if not v.shown(path, line):
                add(f"Reading {path}:{line} again.", "read_file", read_around(path, line, w // 4))
        return out

    def _referenced_names(self, v: _View, excerpts: int = 3) -> list[tuple[str, str]]:
        """Module-level names used in the latest `excerpts` source excerpts but not defined in view."""
        out: list[tuple[str, str]] = []
        shown = "\n".join("\n".join(e.lines) for _, e in v.excerpts)
        latest = max((i for i, _ in v.excerpts), default=-1)
        chosen = [ie for ie in v.excerpts if ie[0] == latest] if excerpts == 1 else \
            sorted(v.excerpts, key=lambda ie: -ie[0])[:excerpts]
        for _, e in chosen:
            if _is_test_path(e.path):
                continue
            for m in _REFERENCE.finditer("\n".join(e.lines)):
                name = m.group(1)
                query = f"{name} =" if name.lstrip("_").isupper() else f"def {name}("
                if query not in shown and (name, query) not in out:
                    out.append((name, query))
        return out[:4]

    def _imported_modules(self, v: _View, task: str, words: tuple[str, ...]) -> list[str]:
        """Modules of the repository imported by the latest source excerpts whose names the task uses."""
        wanted = _task_stems(task, words)
        out: list[str] = []
        for _, e in sorted(v.excerpts, key=lambda ie: -ie[0])[:3]:
            if _is_test_path(e.path):
                continue
            package = PurePosixPath(e.path).parent
            for m in _IMPORT.finditer("\n".join(e.lines)):
                mod = m["mod"]
                dots = len(mod) - len(mod.lstrip("."))
                if dots:
                    base = package
                    for _ in range(dots - 1):
                        base = base.parent
                    parts = [p for p in mod.lstrip(".").split(".") if p]
                elif mod.split(".")[0] == e.path.split("/")[0]:
                    base, parts = PurePosixPath(), mod.split(".")
                else:
                    continue
                names = {_stem(w) for n in re.split(r"[,()\s]+", m["names"]) for w in n.lower().split("_") if w}
                if not parts:
                    continue
                path = str(base.joinpath(*parts)) + ".py"
                if (names & wanted or _stem(parts[-1]) in wanted) and path not in out:
                    out.append(path)
        return out[:2]

    def _read_on(self, v: _View, task: str, words: tuple[str, ...]) -> list[tuple[str, int, int]]:
        """The next lines of the latest source excerpts that mention the task and stop before the file ends."""
        stems = {n.lower() for n, _ in _identifiers(task, 100)} | {_stem(w) for w in _keywords(task, 100)}
        out = []
        for _, e in sorted(v.fresh, key=lambda ie: -ie[0]):
            if _is_test_path(e.path) or e.end >= e.total or v.shown(e.path, e.end + 1) or len(out) == 2:
                continue
            text = " ".join(e.lines).lower()
            package = e.path.split("/")[0].lower()
            if any(s in text for s in stems if len(s) >= 4 and s not in package):
                out.append((e.path, e.end + 1, min(e.total, e.end + self.p.read_window)))
        return out

    def _listed_files(self, v: _View, task: str, words: tuple[str, ...]) -> list[str]:
        """Source files in a visible listing whose names match a name or a word of the task."""
        stems = _task_stems(task, words)
        out = []
        for cid, (name, _, _) in v.calls.items():
            if name != "list_files" or not self._visible_result(v, cid):
                continue
            for path in v.results[cid][0].splitlines():
                parts = [_stem(p) for p in re.split(r"[_.-]", PurePosixPath(path).stem.lower()) if len(p) >= 4]
                if path.endswith(".py") and not _is_test_path(path) and \
                        any(p.startswith(s) or s.startswith(p) for p in parts for s in stems if len(s) >= 4):
                    out.append(path)
        return out[:2]

    def _search_hits(self, v: _View) -> list[tuple[str, int, str]]:
        hits = []
        for cid, (name, _, _) in sorted(v.calls.items(), key=lambda kv: kv[1][2]):
            if name == "search" and cid in v.results:
                hits += [(m["path"], int(m["line"]), m["text"]) for m in _HIT.finditer(v.results[cid][0])]
        return hits

    def _zero_hits(self, v: _View, query: str) -> bool:
        return any(n == "search" and a.get("query") == query and v.results.get(cid, ("",))[0].startswith("0 matches")
                   for cid, (n, a, _) in v.calls.items()) or \
            any(c.tool == "search" and c.matches("search", {"query": query}) and c.outcome.startswith("0 matches")
                for c in v.memory.calls)

    # -- summaries -----------------------------------------------------------------------------
    def _summarize(self, messages: list[dict[str, Any]]) -> str:
        """A summary built only from the request: its previous summary folded with the turns shown."""
        memory = summarize_request("\n".join(m.get("content") or "" for m in messages[1:]))
        return "Summary of earlier work.\n" + memory.render()


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


def _without_edited(e: Excerpt, olds: list[list[str]]) -> list[Excerpt]:
    """`e` split around the lines that a later edit replaced (they no longer show the file)."""
    if not olds:
        return [e]
    stale = set()
    for old in olds:
        n = len(old)
        for k in range(len(e.lines) - n + 1):
            if list(e.lines[k:k + n]) == old:
                stale.update(range(k, k + n))
    parts, run = [], []
    for k, line in enumerate(e.lines):
        if k in stale:
            if run:
                parts.append(Excerpt(e.path, e.start + k - len(run), tuple(run), e.total))
            run = []
        else:
            run.append(line)
    if run:
        parts.append(Excerpt(e.path, e.start + len(e.lines) - len(run), tuple(run), e.total))
    return parts


def _is_test_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path.startswith("tests/") or "/tests/" in path or name.startswith("test_") or name == "conftest.py"


def _slip_line(h: Hunk) -> str:
    indent = re.match(r"\s*", h.old_lines[-1] if h.old_lines else "").group(0)
    return f"{indent}pass  # adjusted"
