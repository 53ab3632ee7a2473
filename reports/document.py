"""A report as a list of blocks, rendered to Markdown or to one self-contained HTML file."""

from __future__ import annotations

import base64
import html
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = ["Heading", "Paragraph", "Notice", "Bullets", "Table", "Figure", "Code", "Block", "to_markdown", "to_html"]


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Paragraph:
    """Text with inline Markdown (`code`, **bold**, [links](href))."""

    text: str


@dataclass(frozen=True)
class Notice:
    """A quoted warning line (Markdown `>`)."""

    text: str


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    frame: pd.DataFrame
    """Rendered as is; the index is rendered when it is named."""
    id: str = ""
    inline: bool = False
    """Cells hold inline Markdown (links, `code`) rendered as such in HTML."""


@dataclass(frozen=True)
class Figure:
    path: Path
    """A PNG file; embedded as a data URI in HTML."""
    caption: str


@dataclass(frozen=True)
class Code:
    """Preformatted text, shown verbatim (a fenced block in Markdown, `<pre>` in HTML)."""

    text: str


Block = Heading | Paragraph | Notice | Bullets | Table | Figure | Code


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def _rows(table: Table) -> tuple[list[str], list[list[str]]]:
    frame = table.frame
    if frame.index.name is not None:
        frame = frame.reset_index()
    return [str(c) for c in frame.columns], [[_cell(v) for v in row] for row in frame.itertuples(index=False)]


def _md_table(table: Table) -> str:
    head, rows = _rows(table)
    esc = [[c.replace("|", "\\|") for c in r] for r in [head, *rows]]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return "\n".join(lines)


def to_markdown(blocks: list[Block], base: Path) -> str:
    """Markdown; figure paths are written relative to `base` (the folder of the .md file)."""
    parts = []
    for b in blocks:
        if isinstance(b, Heading):
            parts.append("#" * b.level + " " + b.text)
        elif isinstance(b, Paragraph):
            parts.append(b.text)
        elif isinstance(b, Notice):
            parts.append("> " + b.text)
        elif isinstance(b, Bullets):
            parts.append("\n".join(f"- {i}" for i in b.items))
        elif isinstance(b, Table):
            parts.append(_md_table(b))
        elif isinstance(b, Figure):
            parts.append(f"![{b.caption}]({Path(os.path.relpath(b.path, base)).as_posix()})\n\n*{b.caption}*")
        elif isinstance(b, Code):
            fence = "```" + "`" * max((len(m) - 2 for m in re.findall(r"`{3,}", b.text)), default=0)
            parts.append(f"{fence}text\n{b.text}\n{fence}")
    return "\n\n".join(parts) + "\n"


def _inline(text: str) -> str:
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\[([^\]]+)\]\(([^)\s\"]+)\)", r'<a href="\2">\1</a>', out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


def _html_table(table: Table) -> str:
    head, rows = _rows(table)
    ident = f' id="{html.escape(table.id)}"' if table.id else ""
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    cell = _inline if table.inline else html.escape
    body = "".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table{ident}><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


_STYLE = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}blockquote{border-left:4px solid #d98;
margin:1em 0;padding:.5em 1em;background:#fff6f0}figure{margin:1.5em 0}img{max-width:100%}
figcaption{color:#555;font-size:.9em}code{background:#f3f3f3;padding:0 .2em}
pre{background:#f7f7f7;border:1px solid #ddd;padding:.5em;overflow-x:auto;white-space:pre-wrap;font-size:.85em}"""

_LOAD_CHECK = """<script>window.addEventListener('load',function(){document.querySelectorAll('img').forEach(
function(i){i.setAttribute('data-rendered',i.naturalWidth+'x'+i.naturalHeight);});});</script>"""


def to_html(blocks: list[Block], title: str) -> str:
    """One self-contained HTML page: PNG figures inlined as base64 data URIs, no external resource.

    After loading, each `img` gets a `data-rendered="WxH"` attribute with its decoded size, so a
    headless browser's DOM dump shows whether every plot rendered.
    """
    parts = []
    for b in blocks:
        if isinstance(b, Heading):
            parts.append(f"<h{b.level}>{_inline(b.text)}</h{b.level}>")
        elif isinstance(b, Paragraph):
            parts.append(f"<p>{_inline(b.text)}</p>")
        elif isinstance(b, Notice):
            parts.append(f"<blockquote>{_inline(b.text)}</blockquote>")
        elif isinstance(b, Bullets):
            parts.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, Table):
            parts.append(_html_table(b))
        elif isinstance(b, Figure):
            data = base64.b64encode(b.path.read_bytes()).decode("ascii")
            alt = html.escape(b.caption)
            parts.append(f'<figure><img alt="{alt}" src="data:image/png;base64,{data}">'
                         f"<figcaption>{alt}</figcaption></figure>")
        elif isinstance(b, Code):
            parts.append(f"<pre>{html.escape(b.text, quote=False)}</pre>")
    body = "\n".join(parts)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{_STYLE}</style></head>\n<body>\n{body}\n{_LOAD_CHECK}\n</body></html>\n")
