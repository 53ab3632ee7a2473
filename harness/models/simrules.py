"""How the simulator explores when it cannot fix yet: named rules in one ordered policy.

Each rule reads the `Situation` (the view of the request and what follows from it) and proposes
actions. `explore` asks the rules in `POLICY` order and keeps each action once, unless it was
already taken (its call is in view, or a summary in view lists it). The first action is the one
taken; a detour takes a later one (see `ctxbench.harness.models.sim`). The order is the policy:
docs/simulator.md lists it, and a test checks that the list there matches `POLICY`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Callable, Iterator

from ctxbench.harness.config import SimParams
from ctxbench.harness.models.simtext import identifiers, keywords, stem, task_stems
from ctxbench.harness.models.simview import TestRun, View, action_key, is_test_path

__all__ = ["Action", "Situation", "situation", "explore", "POLICY"]

Action = tuple[str, str, dict[str, Any]]
"""(the text it says, the tool it calls, the call's arguments)."""

_FRAME = re.compile(r"^(?P<path>[\w./-]+\.py):(?P<line>\d+)[:\s]", re.M)
_PATHLIKE = re.compile(r"\b([\w-]+(?:/[\w.-]+)*\.py)\b")
_IMPORT = re.compile(r"^\s*from\s+(?P<mod>\.*[\w.]*)\s+import\s+(?P<names>[\w\s,()]+)$", re.M)
_REFERENCE = re.compile(r"(?<![\w.])(_?[A-Z][A-Z0-9_]{2,}|_[a-z][a-z0-9_]{2,})\b")
_DEFINITION = re.compile(r"(async\s+)?(def|class)\s|@\w[\w.]*\(|_?[A-Z][A-Z0-9_]*\s*(:[^=]*)?=[^=]")


@dataclass(frozen=True)
class Situation:
    """What the rules read: the view, the task statement and what follows from them."""

    view: View
    params: SimParams
    task: str
    tests: list[TestRun]
    last_edit: int | None
    latest: str
    """The output of the latest test run in view that shows one ("" when none does)."""
    hits: list[tuple[str, int, str]]
    interest: list[tuple[str, int]]
    """Lines of interest: the source frames of the latest traceback (innermost first), then the search hits."""
    words: tuple[str, ...]
    """Plain words of the task statement worth a search."""

    def around(self, path: str, line: int, before: int, lo: int = 1, hi: int = 10**9) -> dict[str, Any]:
        """A read of `read_window` lines starting `before` lines above `line`, within lo..hi."""
        start = max(lo, line - before)
        return {"path": path, "start_line": start, "end_line": min(hi, start + self.params.read_window - 1)}

    def frames(self, tests: bool) -> list[tuple[str, int]]:
        """(path, line) of the latest traceback's frames in test files (`tests`) or in source files."""
        return [(m["path"], int(m["line"])) for m in _FRAME.finditer(self.latest) if is_test_path(m["path"]) == tests]


def situation(view: View, params: SimParams, task: str, tests: list[TestRun], last_edit: int | None) -> Situation:
    latest = next((t[2] for t in reversed(tests) if t[2]), "")
    frames = list(dict.fromkeys((m["path"], int(m["line"])) for m in _FRAME.finditer(latest)))
    hits = view.search_hits()
    interest = [f for f in reversed(frames) if not is_test_path(f[0])] + [(p, n) for p, n, _ in hits if not is_test_path(p)]
    return Situation(view, params, task, tests, last_edit, latest, hits, interest,
                     keywords(task, max(1, params.max_searches // 2)))


# -- the rules, in policy order -----------------------------------------------------------------------

def run_the_tests(s: Situation) -> Iterator[Action]:
    """No test run in view, or an edit since the latest one: run the tests."""
    if not s.tests or (s.last_edit is not None and s.last_edit > s.tests[-1][0]):
        yield "Let me run the tests.", "run_tests", {}


def read_traceback_frames(s: Situation) -> Iterator[Action]:
    """Read around each source frame of the latest traceback (innermost first) not yet read."""
    w = s.params.read_window
    for path, line in reversed(list(dict.fromkeys(s.frames(tests=False)))):
        if not s.view.remembered(path, line):
            yield f"The traceback points at {path}:{line}.", "read_file", s.around(path, line, w // 2)


def reread_cut_ranges(s: Situation) -> Iterator[Action]:
    """A read cut at an omission marker: re-read around the lines of interest in the cut (two at
    most), or the cut itself when the read asked for that range."""
    w = s.params.read_window
    for path, first, last, ranged in s.view.gaps():
        inside = [n for p, n in s.interest if p == path and first <= n <= last and not s.view.shown(p, n)]
        for line in inside[:2]:
            yield (f"Line {line} of {path} was cut from the output; reading it.", "read_file",
                   s.around(path, line, w // 2, first, last))
        if ranged and not inside:
            yield (f"Part of {path} was cut from the output; reading it.", "read_file",
                   {"path": path, "start_line": first, "end_line": min(last, first + w - 1)})


def read_found_definitions(s: Situation) -> Iterator[Action]:
    """Read the definitions its searches found (`def`, `class`, constants, registration lines)."""
    for path, line, text in s.hits:
        if _DEFINITION.match(text) and not is_test_path(path) and not s.view.remembered(path, line + 3):
            yield f"{path} defines it; reading.", "read_file", s.around(path, line, 5)


def find_names_just_read(s: Situation) -> Iterator[Action]:
    """Search for the definitions of module-level names used in the code it read last (two at most)."""
    for name, query in referenced_names(s.view, excerpts=1)[:2]:
        yield f"The code just read uses {name}; where is it defined?", "search", {"query": query}


def search_task_names(s: Situation) -> Iterator[Action]:
    """Search for the names in the task statement (as a call, a class or a quoted constant; the bare
    name after a search that found nothing)."""
    for name, codeish in identifiers(s.task, s.params.max_searches):
        q = f'"{name}"' if name.isupper() else \
            (f"class {name}" if name[0].isupper() else f"def {name}(") if codeish else name
        yield f"Searching for {q}.", "search", {"query": q}
        if s.view.zero_hits(q):
            yield f"Searching for {name}.", "search", {"query": name}


def read_search_hits(s: Situation) -> Iterator[Action]:
    """Read around the other search hits in source files not yet read."""
    w = s.params.read_window
    for path, line, _ in s.hits:
        if not is_test_path(path) and not s.view.remembered(path, line):
            yield f"Looking at {path}:{line}.", "read_file", s.around(path, line, w // 2)


def read_on(s: Situation) -> Iterator[Action]:
    """Read on past the end of a source excerpt that mentions the task, when the file goes on."""
    for path, first, last in lines_after(s.view, s.task, s.params.read_window):
        yield f"{path} goes on past line {first - 1}; reading on.", "read_file", \
            {"path": path, "start_line": first, "end_line": last}


def find_names_read(s: Situation) -> Iterator[Action]:
    """Search for the definitions of module-level names used in the latest three source excerpts."""
    for name, query in referenced_names(s.view):
        yield f"Where is {name} defined?", "search", {"query": query}


def open_imported_modules(s: Situation) -> Iterator[Action]:
    """Open the repository modules that code in view imports, when the import names what the task mentions."""
    for path in imported_modules(s.view, s.task, s.words):
        yield f"The code imports from {path}; reading it.", "read_file", {"path": path}


def read_named_files(s: Situation) -> Iterator[Action]:
    """Read the files the task statement names."""
    for m in _PATHLIKE.finditer(s.task):
        yield f"Reading {m.group(1)}.", "read_file", {"path": m.group(1)}


def search_task_words(s: Situation) -> Iterator[Action]:
    """Search for plain words of the task statement (those of its error message first)."""
    for word in s.words:
        yield f"Searching for {word}.", "search", {"query": word}


def open_listed_files(s: Situation) -> Iterator[Action]:
    """Open source files of a visible listing whose names match a name or word of the task."""
    for path in listed_files(s.view, s.task, s.words):
        yield f"{path} looks related to the task; reading it.", "read_file", {"path": path}


def read_failing_tests(s: Situation) -> Iterator[Action]:
    """Read around the test-file frames of the latest traceback."""
    w = s.params.read_window
    for path, line in dict.fromkeys(s.frames(tests=True)):
        if not s.view.remembered(path, line):
            yield f"Reading the failing test {path}.", "read_file", s.around(path, line, w // 2)


def list_the_files(s: Situation) -> Iterator[Action]:
    """List the repository's files, once (in view, or as a summary remembers it)."""
    if not any(n == "list_files" for n, _, _ in s.view.calls.values()) and \
            not any(c.tool == "list_files" for c in s.view.memory.calls):
        yield "Let me look at the repository layout.", "list_files", {}


def reread_lost_lines(s: Situation) -> Iterator[Action]:
    """Last: re-read, with a narrower window, a line of interest no longer in view (masked,
    summarized or trimmed away)."""
    for path, line in dict.fromkeys(s.interest):
        if not s.view.shown(path, line):
            yield f"Reading {path}:{line} again.", "read_file", s.around(path, line, s.params.read_window // 4)


Rule = Callable[[Situation], Iterator[Action]]
POLICY: tuple[Rule, ...] = (
    run_the_tests, read_traceback_frames, reread_cut_ranges, read_found_definitions, find_names_just_read,
    search_task_names, read_search_hits, read_on, find_names_read, open_imported_modules, read_named_files,
    search_task_words, open_listed_files, read_failing_tests, list_the_files, reread_lost_lines,
)
"""The exploration policy: the rules, best first."""


def explore(s: Situation) -> list[Action]:
    """Every action the rules propose, in policy order, each once, none already taken."""
    out: list[Action] = []
    taken: set[str] = set()
    for rule in POLICY:
        for text, name, args in rule(s):
            key = action_key(name, args)
            if key not in taken and not s.view.done(name, args):
                taken.add(key)
                out.append((text, name, args))
    return out


# -- what the rules read off the view -----------------------------------------------------------------

def referenced_names(v: View, excerpts: int = 3) -> list[tuple[str, str]]:
    """Module-level names used in the latest `excerpts` source excerpts but not defined in view."""
    out: list[tuple[str, str]] = []
    shown = "\n".join("\n".join(e.lines) for _, e in v.excerpts)
    latest = max((i for i, _ in v.excerpts), default=-1)
    chosen = [ie for ie in v.excerpts if ie[0] == latest] if excerpts == 1 else \
        sorted(v.excerpts, key=lambda ie: -ie[0])[:excerpts]
    for _, e in chosen:
        if is_test_path(e.path):
            continue
        for m in _REFERENCE.finditer("\n".join(e.lines)):
            name = m.group(1)
            query = f"{name} =" if name.lstrip("_").isupper() else f"def {name}("
            if query not in shown and (name, query) not in out:
                out.append((name, query))
    return out[:4]


def imported_modules(v: View, task: str, words: tuple[str, ...]) -> list[str]:
    """Modules of the repository imported by the latest source excerpts whose names the task uses."""
    wanted = task_stems(task, words)
    out: list[str] = []
    for _, e in sorted(v.excerpts, key=lambda ie: -ie[0])[:3]:
        if is_test_path(e.path):
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
            names = {stem(w) for n in re.split(r"[,()\s]+", m["names"]) for w in n.lower().split("_") if w}
            if not parts:
                continue
            path = str(base.joinpath(*parts)) + ".py"
            if (names & wanted or stem(parts[-1]) in wanted) and path not in out:
                out.append(path)
    return out[:2]


def lines_after(v: View, task: str, window: int) -> list[tuple[str, int, int]]:
    """The next lines of the latest source excerpts that mention the task and stop before the file ends."""
    stems = {n.lower() for n, _ in identifiers(task, 100)} | {stem(w) for w in keywords(task, 100)}
    out: list[tuple[str, int, int]] = []
    for _, e in sorted(v.fresh, key=lambda ie: -ie[0]):
        if is_test_path(e.path) or e.end >= e.total or v.shown(e.path, e.end + 1) or len(out) == 2:
            continue
        text = " ".join(e.lines).lower()
        package = e.path.split("/")[0].lower()
        if any(s in text for s in stems if len(s) >= 4 and s not in package):
            out.append((e.path, e.end + 1, min(e.total, e.end + window)))
    return out


def listed_files(v: View, task: str, words: tuple[str, ...]) -> list[str]:
    """Source files in a visible listing whose names match a name or a word of the task."""
    stems = task_stems(task, words)
    out = []
    for cid, (name, _, _) in v.calls.items():
        if name != "list_files" or not v.visible_result(cid):
            continue
        for path in v.results[cid][0].splitlines():
            parts = [stem(p) for p in re.split(r"[_.-]", PurePosixPath(path).stem.lower()) if len(p) >= 4]
            if path.endswith(".py") and not is_test_path(path) and \
                    any(p.startswith(s) or s.startswith(p) for p in parts for s in stems if len(s) >= 4):
                out.append(path)
    return out[:2]
