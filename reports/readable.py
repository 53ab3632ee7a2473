"""A message's or tool result's text as the model read it, for `ctxbench show` and the run pages.

Some agents send their observations as a JSON object: mini-swe-agent's `{"returncode": 1, "output":
"…\\n…"}`. Printed as is, its output is one escaped line (`\\n`, `\\"`, `\\u003e`); the model reads the
JSON's strings as the text they hold. `readable` shows such an object one field per line, each string
unescaped, and says that it did.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["readable", "JSON_NOTE"]

_SCALARS = (str, int, float, bool, type(None))

JSON_NOTE = "a JSON object, shown one field per line, its strings unescaped"
"""What to say beside a text `readable` turned into fields."""


def _field(key: str, value: Any) -> str:
    if isinstance(value, str):
        return f"{key}:\n{value}" if "\n" in value else f"{key}: {value}"
    return f"{key}: {json.dumps(value)}"


def readable(text: str) -> tuple[str, bool]:
    """`text` as the model read it, and whether it was a JSON object: one whose values are all strings,
    numbers, booleans or null becomes one `key: value` line per field (a string with line breaks under
    its key), strings unescaped; any other text comes back as it is."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return text, False
    try:
        value = json.loads(stripped)
    except ValueError:
        return text, False
    if not isinstance(value, dict) or not value or not all(isinstance(v, _SCALARS) for v in value.values()):
        return text, False
    return "\n".join(_field(str(k), v) for k, v in value.items()), True
