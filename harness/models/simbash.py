"""The simulator's `bash` dialect: it acts through one shell, as mini-swe-agent, SWE-agent, Claude Code
(`Bash`) or Codex CLI (`exec_command`) do.

Two directions, so that the rules of `ctxbench.harness.models.sim` stay the one policy:

- `ctxbench.harness.models.simbash_reading` reads a conversation of shell commands as the native tool
  calls and results they stand for;
- `shell_command` here writes a native action as a real command run in the repository's root, and
  `shell_call` the call of the shell tool the request offers (`bash`/`Bash` {command}, `exec_command`
  {cmd}, a `shell` whose `command` is a list of words: `[bash, -lc, COMMAND]`).
"""

from __future__ import annotations

import difflib
import shlex
from pathlib import PurePosixPath
from typing import Any, Literal

from ctxbench.harness.config import SimParams
from ctxbench.harness.models.goldpatch import Hunk
from ctxbench.harness.wire.conversation import SHELL_TOOLS
from ctxbench.harness.wire.aider import is_aider_request, is_aider_summary

__all__ = ["Dialect", "dialect_for", "shell_tool", "shell_call", "finish_call", "finishes_by_text", "shell_command",
           "command_of"]

Dialect = Literal["native", "bash", "bash_text", "aider"]

_SHELL_PREFERENCE = ("bash", "Bash", "exec_command", "shell", "local_shell", "run_commands")
"""Which shell tool the simulator calls when a request offers several."""
_FINISHED_BY_TEXT = frozenset({"Bash", "exec_command", "shell", "local_shell", "run_commands", "run_shell_command"})
"""Shell tools of agents whose run ends with a reply that calls no tool (Claude Code, Codex CLI, Cline, Gemini
CLI and Qwen Code): no submit command."""
_FILE_TOOLS = frozenset({"read", "edit", "write"})
"""File tools an agent offers beside a `bash` of its own (OpenCode, Pi): it ends its run with a reply that
calls no tool. mini-swe-agent offers its `bash` alone and submits with a command."""
_SKIPPED = "--exclude-dir=.git --exclude-dir=__pycache__ --exclude-dir=.pytest_cache"
"""What a search leaves out, as the native search's walk does (binary files too: grep's -I)."""


def dialect_for(p: SimParams, tools: list[dict[str, Any]], messages: list[dict[str, Any]] | None = None) -> Dialect:
    """The dialect of a reply: the configured one, or (`auto`) `aider` for Aider's requests
    (`ctxbench.harness.models.simaider`), `bash` when a shell tool is offered."""
    if p.dialect != "auto":
        return p.dialect
    if messages and (is_aider_request(messages) or is_aider_summary(messages)):
        return "aider"
    return "bash" if shell_tool(tools) is not None else "native"


def shell_tool(tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The function of the shell tool a request offers (`bash`, Claude Code's `Bash`, Codex's
    `exec_command`, ...), or None."""
    offered = {str(f.get("name")): f for f in (t.get("function") for t in tools if isinstance(t, dict))
               if isinstance(f, dict) and f.get("name") in SHELL_TOOLS}
    name = next((n for n in _SHELL_PREFERENCE if n in offered), next(iter(sorted(offered)), None))
    return offered[name] if name is not None else None


def finishes_by_text(tools: list[dict[str, Any]]) -> bool:
    """The offered shell tool is that of an agent that ends its run with a reply calling no tool: one of
    `_FINISHED_BY_TEXT`, or a `bash` offered beside file tools of the agent's own (`_FILE_TOOLS`)."""
    tool = shell_tool(tools)
    if tool is None:
        return False
    offered = {f.get("name") for f in (t.get("function") for t in tools if isinstance(t, dict)) if isinstance(f, dict)}
    return tool.get("name") in _FINISHED_BY_TEXT or (tool.get("name") == "bash" and bool(offered & _FILE_TOOLS))


def shell_call(tools: list[dict[str, Any]], command: str) -> tuple[str, dict[str, Any]]:
    """The name and arguments of a call of the offered shell tool (`bash` where none is offered) that
    runs `command`: in `cmd` or `command` as its schema names it, a list of words `[bash, -lc, COMMAND]`
    where it takes one (a list of command lines, `commands`: Cline's `run_commands`); Codex's `exec_command`
    waits up to 30 s for the output (`yield_time_ms`); OpenHands' `terminal` is told the risk is low."""
    tool = shell_tool(tools) or {"name": "bash", "parameters": {}}
    properties = (tool.get("parameters") or {}).get("properties") or {}
    if "commands" in properties and "command" not in properties:
        return str(tool["name"]), {"commands": [command]}
    key = "cmd" if "cmd" in properties and "command" not in properties else "command"
    value: Any = ["bash", "-lc", command] if (properties.get(key) or {}).get("type") == "array" else command
    arguments: dict[str, Any] = {key: value}
    if "yield_time_ms" in properties:
        arguments["yield_time_ms"] = 30_000
    if "security_risk" in properties:  # OpenHands' `terminal` requires the action's risk
        arguments["security_risk"] = "LOW"
    return str(tool["name"]), arguments


def finish_call(tools: list[dict[str, Any]], text: str) -> tuple[str, dict[str, Any]] | None:
    """The call that ends the run where the request offers a `finish` tool beside its shell (OpenHands'
    `finish {message}`), or None."""
    offered = [t.get("function") or {} for t in tools if isinstance(t, dict)]
    finish = next((f for f in offered if f.get("name") == "finish"), None)
    if finish is None or shell_tool(tools) is None:
        return None
    return "finish", {"message": text}


def shell_command(name: str, args: dict[str, Any], p: SimParams, test_cmd: tuple[str, ...],
                  hunks: list[Hunk]) -> str:
    """The shell command, run in the repository's root, that does what the native call does."""
    q = shlex.quote
    if name == "read_file":
        path = q(str(args["path"]))
        if "start_line" in args or "end_line" in args:
            start = int(args.get("start_line") or 1)
            end = int(args.get("end_line") or start + p.read_window - 1)
            return f"nl -ba {path} | sed -n '{start},{end}p'"
        return f"nl -ba {path}"
    if name == "search":
        return f"grep -rnIF {_SKIPPED} -e {q(str(args['query']))} ."
    if name == "list_files":
        return "git ls-files"
    if name == "run_tests":
        return shlex.join(test_cmd or ("python", "-m", "pytest", "-q"))
    if name == "edit_file":
        return _git_apply(str(args["path"]), str(args["old_text"]), str(args["new_text"]), hunks)
    if name == "write_file":
        path, content = str(args["path"]), str(args["content"])
        folder = str(PurePosixPath(path).parent)
        made = f"mkdir -p {q(folder)} && " if folder != "." else ""
        return f"{made}cat > {q(path)} <<'{_delimiter(content)}'\n{content.removesuffix(chr(10))}\n{_delimiter(content)}"
    if name == "finish":
        return p.submit_command
    raise ValueError(f"no shell command for the native call {name}")


def _git_apply(path: str, old_text: str, new_text: str, hunks: list[Hunk]) -> str:
    """A here-doc'd `git apply` of the one-hunk diff that replaces `old_text` by `new_text` in `path`."""
    old, new = old_text.split("\n"), new_text.split("\n")
    start = next((h.old_start for h in hunks if h.path == path and h.old_text == old_text), 1)
    lines = [f"diff --git a/{path} b/{path}", f"--- a/{path}", f"+++ b/{path}",
             f"@@ -{start},{len(old)} +{start},{len(new)} @@"]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            lines += [" " + line for line in old[i1:i2]]
        else:
            lines += ["-" + line for line in old[i1:i2]] + ["+" + line for line in new[j1:j2]]
    diff = "\n".join(lines)
    return f"git apply <<'{_delimiter(diff)}'\n{diff}\n{_delimiter(diff)}"


def _delimiter(text: str) -> str:
    word = "EOF"
    while any(line.strip() == word for line in text.split("\n")):
        word += "_"
    return word


def command_of(text: str, command: str, dialect: Dialect, fence: str) -> str:
    """The reply's text in `bash_text`: the reasoning, then the command in its fenced block."""
    return f"THOUGHT: {text}\n\n```{fence}\n{command}\n```" if dialect == "bash_text" else text
