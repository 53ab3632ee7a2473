"""User settings, kept in ``config.json`` inside the data directory.

Every setting has a declared type and default; ``taskcli config set`` checks
values against :data:`SETTINGS` before writing them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from taskcli.dates import WEEKDAYS, parse_weekday
from taskcli.durations import parse_duration
from taskcli.models import normalize_priority, normalize_project


class ConfigError(ValueError):
    """Unknown setting or invalid value."""


def _bool(value: str) -> bool:
    lowered = str(value).strip().lower()
    if lowered in ("1", "true", "yes", "on", "y"):
        return True
    if lowered in ("0", "false", "no", "off", "n"):
        return False
    raise ConfigError(f"expected a boolean (yes/no), got {value!r}")


def _int(value: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"expected a whole number, got {value!r}") from exc


def _choice(*options: str) -> Callable[[str], str]:
    def convert(value: str) -> str:
        lowered = str(value).strip().lower()
        if lowered not in options:
            raise ConfigError(f"expected one of {', '.join(options)}, got {value!r}")
        return lowered
    return convert


def _weekday(value: str) -> str:
    try:
        return WEEKDAYS[parse_weekday(value)]
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def _duration(value: str) -> str:
    try:
        parse_duration(value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    return str(value).strip()


def _priority(value: str) -> str | None:
    try:
        return normalize_priority(value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def _project(value: str) -> str | None:
    try:
        return normalize_project(value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def _date_format(value: str) -> str:
    if "%" not in value:
        raise ConfigError(f"date_format must contain strftime codes such as %Y, got {value!r}")
    return value


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    convert: Callable[[str], Any]
    help: str


SETTINGS = {s.name: s for s in [
    Setting("store", "json", _choice("json", "sqlite"), "storage backend for new data directories"),
    Setting("week_start", "monday", _weekday, "first day of the week for weekly reports"),
    Setting("date_format", "%Y-%m-%d", _date_format, "how dates are shown in tables"),
    Setting("default_project", None, _project, "project given to new tasks without --project"),
    Setting("default_priority", None, _priority, "priority given to new tasks without --priority"),
    Setting("default_sort", "id", _choice("id", "due", "priority", "urgency", "created", "project", "description"),
            "sort order of `list` when --sort is not given"),
    Setting("width", 0, _int, "table width; 0 means the terminal width"),
    Setting("color", "auto", _choice("auto", "always", "never"), "colour output"),
    Setting("auto_stop", True, _bool, "`start` stops a running timer instead of failing"),
    Setting("report_rounding", "0m", _duration, "round report totals to this increment"),
    Setting("undo_depth", 20, _int, "how many actions `undo` can revert"),
    Setting("confirm_delete", True, _bool, "ask before deleting more than one task"),
    Setting("archive_after", "30d", _duration, "default age for `archive` without --older-than"),
    Setting("agenda_days", 7, _int, "how many days `agenda` shows"),
]}


class Config:
    """Settings backed by a JSON file; unknown keys in the file are preserved."""

    filename = "config.json"

    def __init__(self, path: Path, values: dict | None = None):
        self.path = Path(path)
        self.values = dict(values or {})

    @classmethod
    def load(cls, data_dir: Path) -> "Config":
        path = Path(data_dir) / cls.filename
        if not path.exists():
            return cls(path)
        try:
            with open(path, encoding="utf-8") as handle:
                values = json.load(handle)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
        if not isinstance(values, dict):
            raise ConfigError(f"{path} must contain a JSON object")
        return cls(path, values)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "w", encoding="utf-8") as handle:
            json.dump(self.values, handle, indent=2, sort_keys=True)
            handle.write("\n")

    def get(self, key: str) -> Any:
        if key not in SETTINGS:
            raise ConfigError(f"unknown setting {key!r}")
        if key in self.values:
            return self.values[key]
        return SETTINGS[key].default

    def __getitem__(self, key: str) -> Any:
        return self.get(key)

    def is_set(self, key: str) -> bool:
        return key in self.values

    def set(self, key: str, raw_value: str) -> Any:
        if key not in SETTINGS:
            raise ConfigError(f"unknown setting {key!r}; see `taskcli config list`")
        value = SETTINGS[key].convert(raw_value)
        self.values[key] = value
        return value

    def unset(self, key: str) -> bool:
        if key not in SETTINGS:
            raise ConfigError(f"unknown setting {key!r}")
        if key in self.values:
            del self.values[key]
            return True
        return False

    def items(self):
        for name in sorted(SETTINGS):
            yield name, self.get(name), name in self.values
