"""Lexical relevance of code chunks to a query (task statement + latest error output). Pure."""

from __future__ import annotations

import math
import re
from typing import Sequence

from ctxbench.harness.records import History, Observation
from ctxbench.strategies.chunking import Chunk
from ctxbench.strategies.digest import exit_code

__all__ = ["terms", "latest_error", "error_text", "error_locations", "score_chunks", "LOCATION_BONUS", "PATH_BONUS"]

LOCATION_BONUS = 3.0
"""Added to a chunk that contains a line named by the error output (per location)."""
PATH_BONUS = 2.0
"""Added to a chunk whose file path is written out in the query."""

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_LOCATIONS = (re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)'),
              re.compile(r"^(?P<path>[\w./-]+\.py):(?P<line>\d+)", re.MULTILINE))
_FAILURES = re.compile(r"^=+ (FAILURES|ERRORS) =+$", re.MULTILINE)
TAIL_LINES = 50
"""Lines of a test run without a FAILURES/ERRORS section that count as its error output."""
_STOP = frozenset("""the and for with that this from are was were not but you your has have had def class
return self none true false import into when then than also should would could there their which what
its use used using test tests pass none elif else try except raise""".split())


def terms(text: str) -> set[str]:
    """Lower-case words of 3+ letters, identifiers also split at `_` and camelCase, stop words out."""
    out = set()
    for word in _WORD.findall(text):
        for part in {word, *word.split("_"), *_CAMEL.findall(word)}:
            p = part.lower()
            if len(p) >= 3 and p not in _STOP:
                out.add(p)
    return out


def latest_error(history: History) -> Observation | None:
    """The latest failed call or test run, unless a later test run passed."""
    for turn in reversed(history.turns):
        for obs in reversed(turn.observations):
            if obs.kind == "test_run":
                return obs if exit_code(obs.content) != 0 or obs.is_error else None
            if obs.is_error or obs.kind == "error":
                return obs
    return None


def error_text(obs: Observation) -> str:
    """The part of an error observation that says what went wrong.

    For a test run: from pytest's FAILURES (or ERRORS) section to the end, else its last
    `TAIL_LINES` lines, so that the names of passing tests do not count as evidence.
    """
    if obs.kind != "test_run":
        return obs.content
    section = _FAILURES.search(obs.content)
    return obs.content[section.start():] if section else "\n".join(obs.content.splitlines()[-TAIL_LINES:])


def error_locations(output: str, paths: Sequence[str]) -> list[tuple[str, int]]:
    """(repository path, line) pairs named by a traceback, in order of appearance."""
    found = []
    for pattern in _LOCATIONS:
        for m in pattern.finditer(output):
            raw = m["path"].replace("\\", "/")
            match = next((p for p in paths if raw == p or raw.endswith("/" + p)), None)
            if match:
                found.append((m.start(), match, int(m["line"])))
    return [(p, n) for _, p, n in sorted(found)]


def score_chunks(chunks: Sequence[Chunk], query: str, locations: Sequence[tuple[str, int]]) -> list[float]:
    """One score per chunk: idf-weighted shared terms, plus path and error-location bonuses.

    `idf(t) = ln(1 + N / df(t))` over the chunks; scores are rounded to 6 decimals so that equal
    evidence ties exactly (ties are then broken by stable id, by the caller).
    """
    wanted = terms(query)
    chunk_terms = [terms(c.path + "\n" + "\n".join(c.lines)) & wanted for c in chunks]
    df: dict[str, int] = {}
    for ts in chunk_terms:
        for t in ts:
            df[t] = df.get(t, 0) + 1
    scores = []
    for chunk, ts in zip(chunks, chunk_terms):
        score = sum(math.log(1 + len(chunks) / df[t]) for t in sorted(ts))
        score += PATH_BONUS if chunk.path in query else 0.0
        score += LOCATION_BONUS * sum(1 for p, n in locations if p == chunk.path and chunk.start <= n <= chunk.end)
        scores.append(round(score, 6))
    return scores
