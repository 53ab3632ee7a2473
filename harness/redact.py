"""Key values kept out of everything ctxbench stores or prints.

Text enters ctxbench's records from an endpoint (replies, error bodies), from tools and tests
(observations, test output) and from ctxbench itself (tracebacks); each entry point passes it
through `scrub`, so runs.jsonl, transcripts, run pages, `ctxbench show` and error lines never hold a
key, even when an endpoint echoes one back.
"""

from __future__ import annotations

import os

__all__ = ["scrub", "remember_key_variable", "MIN_KEY_CHARS"]

MIN_KEY_CHARS = 8
"""Shorter values are not scrubbed (a key that short is no secret, and replacing it would mangle text)."""

_NAMED: set[str] = set()


def remember_key_variable(name: str | None) -> None:
    """Scrub the value of environment variable `name` (a `model.api_key_env`) from now on, in this process."""
    if name:
        _NAMED.add(name)


def _keys() -> list[tuple[str, str]]:
    """(value, variable) of every key this process knows, longest value first."""
    names = _NAMED | {n for n in os.environ if n.upper().endswith("_API_KEY")}
    keys = {os.environ[n]: n for n in sorted(names) if len(os.environ.get(n, "")) >= MIN_KEY_CHARS}
    return sorted(keys.items(), key=lambda item: -len(item[0]))


def scrub(text: str) -> str:
    """`text` with every key value this process knows replaced by `[redacted $VARIABLE]`: the variables
    named by `model.api_key_env` (see `remember_key_variable`) and every `*_API_KEY` in the environment."""
    for value, name in _keys():
        if value in text:
            text = text.replace(value, f"[redacted ${name}]")
    return text
