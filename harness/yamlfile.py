"""Reading the user's text and YAML files: UTF-8 or a clear error, and no silently repeated keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ctxbench.harness.errors import InputError

__all__ = ["read_text", "read_yaml", "parse_yaml"]


def read_text(path: Path, what: str = "file") -> str:
    """The UTF-8 text of `path`.

    Raises:
        InputError: the file is missing, a folder, unreadable or not UTF-8.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: is a folder, expected a {what}")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); "
                         f"save the {what} as UTF-8") from None


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (YAML says keys are unique; PyYAML
    would keep the last one silently)."""


def _mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            continue  # the constructor below reports unhashable keys
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first on line {seen[key] + 1})", key_node.start_mark)
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def parse_yaml(text: str, where: str) -> Any:
    """YAML text parsed strictly.

    Raises:
        InputError: `where`: not valid YAML (with the line), or a duplicate key.
    """
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        at = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "?"
        if (exc.problem or "").startswith("duplicate key"):
            raise InputError(f"{where}: {at}: {exc.problem}; a key may appear once per mapping") from None
        raise InputError(f"{where}: not valid YAML at {at}: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{where}: not valid YAML: {' '.join(str(exc).split())}") from None


def read_yaml(path: Path, what: str = "file") -> Any:
    """A UTF-8 YAML file parsed strictly (see `read_text` and `parse_yaml`)."""
    return parse_yaml(read_text(path, what), str(path))
