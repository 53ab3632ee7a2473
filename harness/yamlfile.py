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


MAX_ALIAS_EXPANSION = 1_000_000
"""The most nodes and scalar characters that aliases may add to a YAML document once expanded (or
ten times the document's length, when that is more): far more than sharing blocks of settings or a
generated file's repeated lists need, far less than an alias bomb (a few hundred bytes that expand
to billions of nodes, which any repr or dump of the loaded value would then write out)."""

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser where PyYAML was built with libyaml


class _StrictLoader(_Base):
    """SafeLoader (on the C parser when available) that refuses a key given twice in one mapping (YAML
    says keys are unique; PyYAML would keep the last one silently) and a whole number that Python
    will not convert from text (over 4,300 digits)."""

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        try:
            return int(super().construct_yaml_int(node))
        except ValueError:
            digits = sum(c.isdigit() for c in str(node.value))
            raise yaml.constructor.ConstructorError(
                None, None, f"a whole number of {digits:,} digits is too long", node.start_mark) from None


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
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_yaml_int)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_aliases(root: yaml.Node, where: str, length: int) -> None:
    """Refuse a document of `length` characters whose aliases expand it by more than
    MAX_ALIAS_EXPANSION (or ten times its length), or refer to themselves, before anything is built
    from it (each distinct node is visited once)."""
    bound = max(MAX_ALIAS_EXPANSION, 10 * length)
    size: dict[int, int] = {}
    written = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, done = stack.pop()
        if done:
            open_nodes.discard(id(node))
            own = 1 + (len(str(node.value)) if isinstance(node, yaml.ScalarNode) else 0)
            written += own
            size[id(node)] = own + sum(size[id(child)] for child in _children(node))
            if size[id(node)] - written > bound:
                raise InputError(f"{where}: line {node.start_mark.line + 1}: aliases expand the document by over "
                                 f"{bound:,} nodes and characters; write the values out instead")
            continue
        if id(node) in size:
            continue
        if id(node) in open_nodes:
            raise InputError(f"{where}: line {node.start_mark.line + 1}: an alias refers to a value that contains it")
        open_nodes.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in size)


def _load(text: str, where: str) -> Any:
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_aliases(node, where, len(text))
        return loader.construct_document(node)
    finally:
        loader.dispose()


def parse_yaml(text: str, where: str) -> Any:
    """YAML text parsed strictly.

    Raises:
        InputError: `where`: not valid YAML (with the line), a duplicate key, a whole number too long
            to read, aliases that expand beyond MAX_ALIAS_EXPANSION, or nesting too deep to read.
    """
    try:
        return _load(text, where)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        at = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "?"
        if (exc.problem or "").startswith("duplicate key"):
            raise InputError(f"{where}: {at}: {exc.problem}; a key may appear once per mapping") from None
        if (exc.problem or "").startswith("a whole number"):
            raise InputError(f"{where}: {at}: {exc.problem}") from None
        raise InputError(f"{where}: not valid YAML at {at}: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{where}: not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise InputError(f"{where}: nested too deeply to read") from None


def read_yaml(path: Path, what: str = "file") -> Any:
    """A UTF-8 YAML file parsed strictly (see `read_text` and `parse_yaml`)."""
    return parse_yaml(read_text(path, what), str(path))
