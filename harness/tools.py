"""The tools an agent uses on its workspace, as OpenAI function schemas plus their implementation."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.history import Observation, ObservationKind, ToolCall
from harness.rendering import render_excerpt
from harness.workspace import Workspace

__all__ = ["TOOL_SCHEMAS", "Toolbox", "ToolResult", "ToolError"]


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

MAX_READ_BYTES = 400_000
MAX_WRITE_BYTES = 1_000_000
MAX_SEARCH_MATCHES = 50
SEARCH_SECONDS = 5.0
MAX_LISTING = 1000


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
        if target.stat().st_size > MAX_READ_BYTES:
            raise ToolError(f"{path}: file is larger than {MAX_READ_BYTES} bytes; read a line range of a smaller file")
        data = target.read_bytes()
        if b"\0" in data[:8192]:
            raise ToolError(f"{path}: binary file")
        try:
            return data.decode()
        except UnicodeDecodeError:
            raise ToolError(f"{path}: not UTF-8 text") from None

    def _files(self, base: Path) -> list[Path]:
        out = []
        for p in sorted(base.rglob("*")) if base.is_dir() else [base]:
            rel = p.relative_to(self.root).parts
            if {".git", "__pycache__", ".pytest_cache"} & set(rel) or not p.is_file() or p.is_symlink():
                continue
            out.append(p)
        return out

    # -- dispatch ----------------------------------------------------------------------------
    def execute(self, call: ToolCall, turn: int) -> ToolResult:
        def error(msg: str, invalid: bool, args: dict[str, Any] | None = None) -> ToolResult:
            obs = Observation(call.id, call.name, tuple(sorted((args or {}).items())), f"error: {msg}",
                              True, "error", turn, (args or {}).get("path") if args else None)
            return ToolResult(obs, invalid=invalid)

        handler = getattr(self, f"_tool_{call.name}", None) if call.name in _REQUIRED else None
        if handler is None:
            return error(f"unknown tool {call.name!r}; tools: {', '.join(_REQUIRED)}", True)
        try:
            args = json.loads(call.arguments or "{}")
            if not isinstance(args, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            return error(f"arguments of {call.name} are not valid JSON: {exc}", True)
        missing = [k for k in _REQUIRED[call.name] if k not in args]
        if missing:
            return error(f"{call.name} needs {', '.join(missing)}", True, args)
        try:
            content, kind, path, lines, seconds = handler(**args)
        except TypeError as exc:
            return error(f"{call.name}: bad arguments ({exc})", True, args)
        except ToolError as exc:
            return error(str(exc), False, args)
        if len(content.encode()) > self.output_bytes:
            half = self.output_bytes // 2
            omitted = len(content) - 2 * half
            content = content[:half] + f"\n[… {omitted} characters of tool output omitted …]\n" + content[-half:]
        obs = Observation(call.id, call.name, tuple(sorted(args.items(), key=lambda kv: kv[0])),
                          content, False, kind, turn, path, lines)
        return ToolResult(obs, finished=call.name == "finish", test_seconds=seconds)

    # -- tools: each returns (content, kind, path, line_range, test_seconds) -------------------
    def _tool_list_files(self, path: str = ".") -> tuple[str, ObservationKind, str | None, None, float]:
        base = self.root if path in ("", ".") else self.resolve(path)
        if not base.exists():
            raise ToolError(f"{path}: no such file or folder")
        files = self._files(base)
        shown = [self.rel(p) for p in files[:MAX_LISTING]]
        more = f"\n[… {len(files) - MAX_LISTING} more files]" if len(files) > MAX_LISTING else ""
        return "\n".join(shown) + more, "listing", path, None, 0.0

    def _tool_read_file(self, path: str, start_line: int | None = None,
                        end_line: int | None = None) -> tuple[str, ObservationKind, str, tuple[int, int], float]:
        target = self.resolve(path)
        lines = self._text(target, path).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        total = len(lines)
        start = max(1, int(start_line or 1))
        end = min(total, int(end_line or total))
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
            pattern = re.compile(query if regex else re.escape(query))
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from None
        base = self.resolve(path) if path else self.root
        deadline = time.monotonic() + SEARCH_SECONDS
        hits: list[str] = []
        truncated = ""
        for f in self._files(base):
            if time.monotonic() > deadline:
                truncated = f"\n[search stopped after {SEARCH_SECONDS:.0f}s]"
                break
            try:
                text = self._text(f, self.rel(f))
            except ToolError:
                continue
            for n, line in enumerate(text.split("\n"), 1):
                if pattern.search(line[:2000]):
                    hits.append(f"{self.rel(f)}:{n}: {line.strip()[:200]}")
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
        target.write_text(text.replace(old_text, new_text, 1))
        old_n, new_n = old_text.count("\n") + 1, new_text.count("\n") + 1
        return f"edited {self.rel(target)}: replaced {old_n} lines with {new_n} lines", "edit", \
            self.rel(target), None, 0.0

    def _tool_write_file(self, path: str, content: str):
        target = self.resolve(path)
        if not isinstance(content, str):
            raise ToolError("content must be a string")
        if len(content.encode()) > MAX_WRITE_BYTES:
            raise ToolError(f"content is larger than {MAX_WRITE_BYTES} bytes")
        if target.is_dir():
            raise ToolError(f"{path}: is a folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        return f"wrote {self.rel(target)} ({content.count(chr(10)) + 1} lines)", "edit", self.rel(target), None, 0.0

    def _tool_run_tests(self, test_ids: list[str] | None = None):
        if test_ids is not None and not (isinstance(test_ids, list) and all(isinstance(t, str) for t in test_ids)):
            raise ToolError("test_ids must be a list of strings")
        ids = test_ids or list(self.ws.task.test_files)
        result = self.ws.run_tests(ids, self.test_timeout_s)
        status = "timed out" if result.timed_out else f"exit code {result.exit_code}"
        return f"{result.output.rstrip()}\n[{status}]", "test_run", None, None, result.seconds

    def _tool_finish(self, summary: str = ""):
        return "finished", "finish", None, None, 0.0
