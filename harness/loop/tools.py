"""The tools an agent uses on its workspace, as OpenAI function schemas plus their implementation."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex as _regex  # tiktoken's dependency; unlike `re`, a match can be given a timeout

from ctxbench.harness.history import parse_arguments
from ctxbench.harness.markup.placeholders import exit_marker
from ctxbench.harness.records import Observation, ObservationKind, ToolCall
from ctxbench.harness.markup.rendering import render_excerpt
from ctxbench.harness.markup.textcut import cap_bytes
from ctxbench.harness.environments.workspace import Workspace

__all__ = ["TOOL_SCHEMAS", "Toolbox", "ToolResult", "ToolError", "walk_files"]


def _fn(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required, "additionalProperties": False}}}


TOOL_SCHEMAS: list[dict[str, Any]] = [
    _fn("list_files", "List files under a folder of the repository (recursive).",
        {"path": {"type": "string", "description": "Folder, relative to the repository root. Default: root."}}, []),
    _fn("read_file", "Read a file with numbered lines, optionally only a line range.",
        {"path": {"type": "string"}, "start_line": {"type": "integer", "minimum": 1},
         "end_line": {"type": "integer", "minimum": 1}}, ["path"]),
    _fn("search", "Search the repository's files for a literal string or a regular expression.",
        {"query": {"type": "string"}, "regex": {"type": "boolean", "default": False},
         "path": {"type": "string", "description": "Limit to this folder or file."}}, ["query"]),
    _fn("edit_file", "Replace one exact, unique occurrence of old_text with new_text in a file.",
        {"path": {"type": "string"}, "old_text": {"type": "string"}, "new_text": {"type": "string"}},
        ["path", "old_text", "new_text"]),
    _fn("write_file", "Create or overwrite a file with the given content.",
        {"path": {"type": "string"}, "content": {"type": "string"}}, ["path", "content"]),
    _fn("run_tests", "Run the task's tests, or only the given pytest test ids.",
        {"test_ids": {"type": "array", "items": {"type": "string"}}}, []),
    _fn("finish", "Stop: the fix is done (or you give up).",
        {"summary": {"type": "string"}}, []),
]
_REQUIRED = {s["function"]["name"]: s["function"]["parameters"]["required"] for s in TOOL_SCHEMAS}

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_DURATION = re.compile(r" in \d+(?:\.\d+)?s(?: \(\d+:\d+:\d+\))?")
MAX_READ_BYTES = 400_000
MAX_WRITE_BYTES = 1_000_000
MAX_SEARCH_MATCHES = 50
SEARCH_SECONDS = 5.0
MAX_LISTING = 1000
MAX_WALK = 50_000
"""Entries a listing or a search looks at before it stops."""
MAX_TEST_IDS = 500
_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache"}
_JSON_TYPES = {"string": str, "integer": int, "boolean": bool, "array": list}


def walk_files(base: Path) -> tuple[list[Path], bool]:
    """Regular files under `base` (no symlinks, no caches, no .git), sorted; True when MAX_WALK cut
    the walk short."""
    if not base.is_dir():
        return ([base] if base.is_file() and not base.is_symlink() else []), False
    out: list[Path] = []
    seen = 0
    for folder, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        seen += len(dirs) + len(names)
        out.extend(p for p in (Path(folder) / n for n in names) if p.is_file() and not p.is_symlink())
        if seen > MAX_WALK:
            return sorted(out), True
    return sorted(out), False


class ToolError(Exception):
    """A refused or failed tool call: becomes an error observation the agent sees."""


@dataclass(frozen=True)
class ToolResult:
    observation: Observation
    invalid: bool = False
    """The call itself was malformed (bad JSON, unknown tool, missing argument)."""
    finished: bool = False
    test_seconds: float = 0.0


class Toolbox:
    """Executes tool calls against one workspace; every path is confined to it."""

    def __init__(self, workspace: Workspace, test_timeout_s: float, output_bytes: int) -> None:
        self.ws = workspace
        self.root = workspace.root.resolve()
        self.test_timeout_s = test_timeout_s
        self.output_bytes = output_bytes

    # -- confinement -------------------------------------------------------------------------
    def resolve(self, path: str) -> Path:
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path must be a non-empty string")
        if "\0" in path:
            raise ToolError("path must not contain NUL characters")
        p = Path(path)
        if p.is_absolute():
            raise ToolError(f"{path}: absolute paths are not allowed; use a path relative to the repository")
        if ".." in p.parts:
            raise ToolError(f"{path}: '..' is not allowed; paths stay inside the repository")
        target = (self.root / p).resolve()
        if target != self.root and self.root not in target.parents:
            raise ToolError(f"{path}: leads outside the repository (symlink)")
        if ".git" in target.relative_to(self.root).parts:
            raise ToolError(f"{path}: the .git folder is not accessible")
        return target

    def rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()

    def _text(self, target: Path, path: str) -> str:
        if not target.is_file():
            raise ToolError(f"{path}: no such file")
        with target.open("rb") as fh:
            data = fh.read(MAX_READ_BYTES + 1)
        if len(data) > MAX_READ_BYTES:
            raise ToolError(f"{path}: file is larger than the {MAX_READ_BYTES}-byte read limit")
        if b"\0" in data:
            raise ToolError(f"{path}: binary file (not shown)")
        try:
            return data.decode()
        except UnicodeDecodeError:
            raise ToolError(f"{path}: not UTF-8 text") from None

    # -- dispatch ----------------------------------------------------------------------------
    def execute(self, call: ToolCall, turn: int) -> ToolResult:
        def error(msg: str, invalid: bool, args: dict[str, Any] | None = None) -> ToolResult:
            path = (args or {}).get("path")
            obs = Observation(call.id, call.name, tuple(sorted((args or {}).items())), f"error: {msg}",
                              True, "error", turn, path if isinstance(path, str) else None)
            return ToolResult(obs, invalid=invalid)

        handler = getattr(self, f"_tool_{call.name}", None) if call.name in _REQUIRED else None
        if handler is None:
            return error(f"unknown tool {call.name!r}; tools: {', '.join(_REQUIRED)}", True)
        try:
            args = parse_arguments(call.arguments)
        except ValueError as exc:
            return error(f"arguments of {call.name} are not valid JSON: {exc}", True)
        args = {k: v for k, v in args.items() if v is not None}
        missing = [k for k in _REQUIRED[call.name] if k not in args]
        if missing:
            return error(f"{call.name} needs {', '.join(missing)}", True, args)
        problem = _argument_problem(call.name, args)
        if problem:
            return error(problem, True, args)
        try:
            content, kind, path, lines, seconds = handler(**args)
        except ToolError as exc:
            return error(str(exc), False, args)
        except (OSError, UnicodeError) as exc:
            return error(f"{call.name}: {type(exc).__name__}: {exc}", False, args)
        content = cap_bytes(content, self.output_bytes, "bytes of tool output")
        obs = Observation(call.id, call.name, tuple(sorted(args.items(), key=lambda kv: kv[0])),
                          content, False, kind, turn, path, lines)
        return ToolResult(obs, finished=call.name == "finish", test_seconds=seconds)

    # -- tools: each returns (content, kind, path, line_range, test_seconds) -------------------
    def _tool_list_files(self, path: str = ".") -> tuple[str, ObservationKind, str | None, None, float]:
        base = self.root if path in ("", ".") else self.resolve(path)
        if not base.exists():
            raise ToolError(f"{path}: no such file or folder")
        files, cut = walk_files(base)
        shown = [self.rel(p) for p in files[:MAX_LISTING]]
        more = f"\n[… {len(files) - MAX_LISTING} more files]" if len(files) > MAX_LISTING else ""
        if cut:
            more += f"\n[listing stopped after {MAX_WALK} entries; list a sub-folder]"
        return "\n".join(shown) + more, "listing", path, None, 0.0

    def _tool_read_file(self, path: str, start_line: int | None = None,
                        end_line: int | None = None) -> tuple[str, ObservationKind, str, tuple[int, int], float]:
        target = self.resolve(path)
        lines = self._text(target, path).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        total = len(lines)
        start = max(1, start_line or 1)
        end = min(total, end_line or total)
        if total and start > total:
            raise ToolError(f"{path}: start_line {start} is past the end ({total} lines)")
        if end < start:
            raise ToolError(f"{path}: end_line {end} is before start_line {start}")
        rel = self.rel(target)
        return render_excerpt(rel, lines[start - 1:end], start, total), "file_read", rel, (start, end), 0.0

    def _tool_search(self, query: str, regex: bool = False, path: str | None = None):
        if not isinstance(query, str) or not query:
            raise ToolError("query must be a non-empty string")
        try:
            pattern = _regex.compile(query) if regex else None
        except _regex.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from None
        base = self.resolve(path) if path else self.root
        deadline = time.monotonic() + SEARCH_SECONDS
        stopped = f"\n[search stopped after {SEARCH_SECONDS:.0f}s; narrow the search]"
        hits: list[str] = []
        files, cut = walk_files(base)
        truncated = f"\n[search stopped after {MAX_WALK} entries; search a sub-folder]" if cut else ""
        for f in files:
            if time.monotonic() > deadline:
                truncated = stopped
                break
            try:
                text = self._text(f, self.rel(f))
            except (ToolError, OSError):
                continue
            try:
                for n, line in enumerate(text.split("\n"), 1):
                    line = line[:2000]
                    if (query in line) if pattern is None else \
                            pattern.search(line, timeout=max(0.001, deadline - time.monotonic())):
                        hits.append(f"{self.rel(f)}:{n}: {line.strip()[:200]}")
            except TimeoutError:
                truncated = stopped
                break
            if len(hits) > MAX_SEARCH_MATCHES:
                truncated = f"\n[more than {MAX_SEARCH_MATCHES} matches; narrow the search]"
                break
        body = "\n".join(hits[:MAX_SEARCH_MATCHES])
        return f"{len(hits[:MAX_SEARCH_MATCHES])} matches for {query!r}\n{body}{truncated}".rstrip(), \
            "search", path, None, 0.0

    def _tool_edit_file(self, path: str, old_text: str, new_text: str):
        target = self.resolve(path)
        text = self._text(target, path)
        if not old_text:
            raise ToolError("old_text must not be empty")
        count = text.count(old_text)
        if count == 0:
            raise ToolError(f"{path}: old_text not found; read the file and copy the exact lines")
        if count > 1:
            raise ToolError(f"{path}: old_text occurs {count} times; include more surrounding lines")
        if len(new_text.encode()) > MAX_WRITE_BYTES:
            raise ToolError(f"new_text is larger than {MAX_WRITE_BYTES} bytes")
        result = text.replace(old_text, new_text, 1)
        if len(result.encode()) > MAX_WRITE_BYTES:
            raise ToolError(f"{path}: the edited file would be larger than {MAX_WRITE_BYTES} bytes")
        target.write_text(result, encoding="utf-8")
        old_n, new_n = old_text.count("\n") + 1, new_text.count("\n") + 1
        return f"edited {self.rel(target)}: replaced {old_n} lines with {new_n} lines", "edit", \
            self.rel(target), None, 0.0

    def _tool_write_file(self, path: str, content: str):
        target = self.resolve(path)
        if len(content.encode()) > MAX_WRITE_BYTES:
            raise ToolError(f"content is larger than {MAX_WRITE_BYTES} bytes")
        if target.is_dir():
            raise ToolError(f"{path}: is a folder")
        for parent in (target.parent, *target.parent.parents):
            if parent == self.root:
                break
            if parent.exists() and not parent.is_dir():
                raise ToolError(f"{path}: {self.rel(parent)} is a file, not a folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"wrote {self.rel(target)} ({content.count(chr(10)) + 1} lines)", "edit", self.rel(target), None, 0.0

    def _tool_run_tests(self, test_ids: list[str] | None = None):
        for t in test_ids or ():
            if not t.strip() or t.startswith("-") or "\0" in t:
                raise ToolError(f"test id {t[:100]!r}: a test id is a path or a pytest node id, never an option")
        if len(test_ids or ()) > MAX_TEST_IDS:
            raise ToolError(f"at most {MAX_TEST_IDS} test ids per run")
        ids = test_ids or self.ws.default_test_targets()
        result = self.ws.run_tests(ids, self.test_timeout_s)
        marker = exit_marker(None if result.timed_out else result.exit_code)
        return f"{self._stable(result.output).rstrip()}\n{marker}", "test_run", None, None, result.seconds

    def _stable(self, output: str) -> str:
        """Test output without what changes from run to run (durations, the workspace's temp path),
        so that identical agent behaviour gives identical observations."""
        output = output.replace(str(self.root) + "/", "").replace(str(self.root), ".")
        return _ADDRESS.sub("0x…", _DURATION.sub(" in <time>", output))

    def _tool_finish(self, summary: str = ""):
        return "finished", "finish", None, None, 0.0


def _argument_problem(tool: str, args: dict[str, Any]) -> str | None:
    """What is wrong with the arguments' names and JSON types, checked against the tool's schema."""
    props = next(s["function"]["parameters"]["properties"] for s in TOOL_SCHEMAS if s["function"]["name"] == tool)
    for key, value in args.items():
        if key not in props:
            return f"{tool}: unknown argument {key!r}; it takes {', '.join(props) or 'no arguments'}"
        spec = props[key]
        kind = spec["type"]
        if kind == "integer" and isinstance(value, str) and value.strip().isdigit():
            value = args[key] = int(value)
        ok = isinstance(value, _JSON_TYPES[kind]) and not (kind == "integer" and isinstance(value, bool))
        if ok and kind == "array":
            ok = all(isinstance(item, str) for item in value)
        if not ok:
            expected = "a list of strings" if kind == "array" else f"a{'n' if kind == 'integer' else ''} {kind}"
            return f"{tool}: argument {key!r} must be {expected}, got {type(value).__name__}"
        if kind == "integer" and value < spec.get("minimum", value):
            return f"{tool}: argument {key!r} must be at least {spec['minimum']}"
    return None
