"""The `agent` key: which agent an arm runs, ctxbench's own loop or any program the user ships."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["AgentSpec", "BUILTIN", "arm_key", "PLACEHOLDERS", "CONTAINER_PLACEHOLDERS"]

BUILTIN = "builtin"

PLACEHOLDERS = ("{statement}", "{statement_file}", "{model}", "{base_url}", "{workspace}")
"""What an agent's command and environment may contain, replaced for each run (docs/agents.md)."""
CONTAINER_PLACEHOLDERS = ("{docker}", "{image}", "{workdir}")
"""Placeholders for a task with `backend: docker` only: the stand-in `docker` that reaches the run's
container, the task's image and its workdir (docs/environments.md). An agent that names `{docker}` or
`{image}` takes the container; only such an agent runs docker-backed tasks."""


PLACEHOLDER = re.compile(r"(?<!\$)\{([a-z_][a-z0-9_]*)\}")
"""How a placeholder is written: `{name}` (a shell's `${name}` is not one); the relay reads them alike."""


class AgentSpec(BaseModel):
    """An agent: `builtin` (ctxbench's own loop), or a command run in the run's workspace against the
    run's gateway (docs/agents.md)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, description="Name in results; default `builtin`, or the command's program name.")
    command: list[str] | None = Field(None, min_length=1, description="The agent's command line (argv); none for the builtin loop. Placeholders: {statement}, {statement_file}, {model}, {base_url}, {workspace}, and for backend docker {docker}, {image}, {workdir}; the statement is also on its standard input.")
    env: dict[str, str] = Field(default_factory=dict, description="Variables set for the agent (placeholders allowed), besides OPENAI_BASE_URL, OPENAI_API_KEY and CTXBENCH_MODEL.")
    version_command: list[str] | None = Field(None, min_length=1, description="Prints the agent's installed version; its output is a fixed variable.")
    config_files: list[str] = Field(default_factory=list, description="The agent's own config files (relative to the experiment file): their content is a fixed variable.")
    install: str | None = Field(None, description="How to install the agent, said with the error when its program is not there (not a fixed variable).")
    home_files: dict[str, str] = Field(default_factory=dict, description="Files written in the agent's private home folder before it starts: a path relative to that folder, and its text (placeholders allowed, `{base_url}` included). A fixed variable.")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if data == BUILTIN:
            return {}
        if isinstance(data, str):
            raise ValueError(f"expected `{BUILTIN}` or a mapping with a `command`, not {data!r}")
        return data

    @model_validator(mode="after")
    def _builtin_has_no_settings(self) -> AgentSpec:
        if self.command is None:
            given = [k for k in ("env", "version_command", "config_files", "install", "home_files") if getattr(self, k)]
            if given:
                raise ValueError(f"{', '.join(given)} need a `command` (the builtin loop takes none)")
        return self

    @model_validator(mode="after")
    def _known_placeholders(self) -> AgentSpec:
        known = (*PLACEHOLDERS, *CONTAINER_PLACEHOLDERS)
        for where, words in (("command", self.command or []), *((f"env.{k}", [v]) for k, v in self.env.items()),
                             *((f"home_files.{k}", [v]) for k, v in self.home_files.items())):
            unknown = sorted({f"{{{m}}}" for w in words for m in PLACEHOLDER.findall(w)} - set(known))
            if unknown:
                raise ValueError(f"{where}: unknown placeholder {', '.join(unknown)}; the known ones are "
                                 f"{', '.join(known)}")
        return self

    @model_validator(mode="after")
    def _home_files_stay_home(self) -> AgentSpec:
        for name in self.home_files:
            parts = PurePosixPath(name).parts
            if not parts or name.startswith(("/", "~")) or ".." in parts:
                raise ValueError(f"home_files: {name!r} must be a path inside the agent's home folder "
                                 f"(relative, without `..`)")
        return self

    @property
    def builtin(self) -> bool:
        return self.command is None

    @property
    def takes_container(self) -> bool:
        """Whether the agent runs its commands in a container it is given: its command or environment
        names `{docker}` or `{image}`."""
        return bool({"{docker}", "{image}"} & set(self.container_placeholders()))

    def container_placeholders(self) -> list[str]:
        """The container placeholders its command and environment name."""
        words = [*(self.command or ()), *self.env.values()]
        return [p for p in CONTAINER_PLACEHOLDERS if any(p in w for w in words)]

    @property
    def label(self) -> str:
        return self.name or (program_name(self.command) if self.command else BUILTIN)


_INTERPRETERS = ("python", "node", "bash", "sh", "uv", "npx")


def program_name(command: list[str]) -> str:
    """What to call an agent by its command: the program, or the script or module an interpreter runs."""
    program = Path(command[0]).name
    if not program.startswith(_INTERPRETERS) or len(command) < 2:
        return program
    if command[1] == "-m" and len(command) > 2:
        return command[2]
    return program if command[1].startswith("-") else Path(command[1]).stem


def arm_key(arm: dict[str, Any]) -> str | None:
    """An arm's name in results, from its raw mapping: its `label`, else `AGENT/STRATEGY` when the arm
    sets its own agent, else the strategy's name."""
    if arm.get("label"):
        return str(arm["label"])
    name = arm.get("name")
    agent = arm.get("agent")
    if agent is None or name is None:
        return None if name is None else str(name)
    if agent == BUILTIN:
        return f"{BUILTIN}/{name}"
    if isinstance(agent, dict):
        command = agent.get("command")
        program = program_name([str(w) for w in command]) if isinstance(command, list) and command else BUILTIN
        return f"{agent.get('name') or program}/{name}"
    return str(name)
