"""Repository files cut into snippets: function/class chunks for Python, bounded line windows otherwise."""

from __future__ import annotations

import ast

from ctxbench.harness.markup.rendering import Excerpt

__all__ = ["Chunk", "chunk_file"]

Chunk = Excerpt
"""A snippet of a file is an excerpt: a run of lines of one file; chunks of one long definition share a `group`."""


def _windows(path: str, lines: list[str], start: int, end: int, size: int, name: str = "") -> list[Chunk]:
    """Lines start..end (1-based, inclusive) in windows of `size`; blank-only windows are skipped."""
    spans = [(a, min(a + size - 1, end)) for a in range(start, end + 1, size)]
    group = f"{path}:{start}-{end}" if name and len(spans) > 1 else ""
    return [Chunk(path, a, tuple(lines[a - 1:b]), len(lines), name, group)
            for a, b in spans if any(ln.strip() for ln in lines[a - 1:b])]


def _definitions(tree: ast.Module, size: int) -> list[tuple[int, int, str]]:
    """(start, end, name) of top-level definitions; classes longer than `size` split into methods."""
    out = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        end = node.end_lineno or node.lineno
        methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not isinstance(node, ast.ClassDef) or end - start < size or not methods:
            out.append((start, end, node.name))
            continue
        cursor = start
        for m in methods:
            m_start = min([m.lineno] + [d.lineno for d in m.decorator_list])
            if m_start > cursor:
                out.append((cursor, m_start - 1, node.name))
            out.append((m_start, m.end_lineno or m.lineno, f"{node.name}.{m.name}"))
            cursor = (m.end_lineno or m.lineno) + 1
        if cursor <= end:
            out.append((cursor, end, node.name))
    return out


def chunk_file(path: str, text: str, size: int) -> list[Chunk]:
    """Snippets of one file, in line order, none longer than `size` lines.

    Python files that parse: one chunk per top-level function or class (methods of a class longer
    than `size` apart), module-level code between them in windows; a definition longer than `size`
    becomes consecutive windows sharing a `group` (to be taken whole). Other files, and Python
    that does not parse (mid-edit), are cut into windows of `size` lines.
    """
    lines = text.splitlines()
    if not lines:
        return []
    try:
        tree = ast.parse(text) if path.endswith(".py") else None
    except (SyntaxError, ValueError):
        tree = None
    if tree is None:
        return _windows(path, lines, 1, len(lines), size)
    chunks: list[Chunk] = []
    cursor = 1
    for start, end, name in _definitions(tree, size):
        if start > cursor:
            chunks += _windows(path, lines, cursor, start - 1, size)
        chunks += _windows(path, lines, start, end, size, name)
        cursor = end + 1
    if cursor <= len(lines):
        chunks += _windows(path, lines, cursor, len(lines), size)
    return chunks
