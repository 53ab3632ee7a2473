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

__all__ = ["Heading", "Paragraph", "Notice", "Bullets", "Table", "Figure", "Code", "Details", "SideBySide", "Block", "to_markdown", "to_html"]


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
    colours: tuple[tuple[str, str], ...] = ()
    """(word, CSS colour) pairs: a cell that is exactly one of these words is shown bold in Markdown
    and bold in that colour in HTML (verdict words)."""


@dataclass(frozen=True)
class Figure:
    path: Path
    """A PNG file; embedded as a data URI in HTML."""
    caption: str


@dataclass(frozen=True)
class Code:
    """Preformatted text, shown verbatim (a fenced block in Markdown, `<pre>` in HTML)."""

    text: str


@dataclass(frozen=True)
class Details:
    """A collapsible section: `summary` always shown, `blocks` when opened (`<details>` in HTML; in
    Markdown the summary in bold, then the blocks)."""

    summary: str
    blocks: tuple[Block, ...]
    open: bool = False


@dataclass(frozen=True)
class SideBySide:
    """Columns next to each other in HTML (one after the other in Markdown): (title, blocks) each."""

    columns: tuple[tuple[str, tuple[Block, ...]], ...]


Block = Heading | Paragraph | Notice | Bullets | Table | Figure | Code | Details | SideBySide


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
    words = dict(table.colours)
    rows = [[f"**{c}**" if c in words else c for c in r] for r in rows]
    esc = [[c.replace("|", "\\|") for c in r] for r in [head, *rows]]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return "\n".join(lines)


def to_markdown(blocks: list[Block] | tuple[Block, ...], base: Path) -> str:
    """Markdown; figure paths are written relative to `base` (the folder of the .md file)."""
    parts = []
    for b in blocks:
        if isinstance(b, Details):
            parts.append(f"**{b.summary}**\n\n" + to_markdown(b.blocks, base).rstrip("\n"))
        elif isinstance(b, SideBySide):
            parts.append("\n\n".join(f"**{title}**\n\n" + to_markdown(inner, base).rstrip("\n")
                                       for title, inner in b.columns))
        elif isinstance(b, Heading):
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
    text = _inline if table.inline else html.escape
    words = dict(table.colours)

    def cell(c: str) -> str:
        if c in words:
            return f'<td class="verdict" style="color:{html.escape(words[c])}">{html.escape(c)}</td>'
        return f"<td>{text(c)}</td>"

    body = "".join("<tr>" + "".join(cell(c) for c in r) + "</tr>" for r in rows)
    return f"<table{ident}><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


_STYLE = """body{font-family:system-ui,sans-serif;max-width:1180px;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:.9em;max-width:100%}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right;overflow-wrap:break-word}
td code{overflow-wrap:anywhere}td.verdict{font-weight:bold;text-align:center;white-space:nowrap}h1{font-size:1.5em;margin:.4em 0}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}blockquote{border-left:4px solid #d98;
margin:1em 0;padding:.5em 1em;background:#fff6f0}figure{margin:1.5em 0}img{max-width:100%}
figcaption{color:#555;font-size:.9em}code{background:#f3f3f3;padding:0 .2em}
pre{background:#f7f7f7;border:1px solid #ddd;padding:.5em;overflow-x:auto;white-space:pre-wrap;
overflow-wrap:anywhere;font-size:.85em}details{margin:.5em 0}summary{cursor:pointer}
.columns{display:flex;gap:1em}.column{flex:1;min-width:0}"""

_LOAD_CHECK = """<script>window.addEventListener('load',function(){document.querySelectorAll('img').forEach(
function(i){i.setAttribute('data-rendered',i.naturalWidth+'x'+i.naturalHeight);});
var d=document.documentElement;d.setAttribute('data-layout',window.innerWidth+'x'+window.innerHeight+' '+
d.scrollWidth+'x'+d.scrollHeight);document.querySelectorAll('table[id]').forEach(function(t){var r=
t.getBoundingClientRect();t.setAttribute('data-box',[r.left,r.top,r.right,r.bottom].map(Math.round).join(','));});
});</script>"""


def _html_blocks(blocks: list[Block] | tuple[Block, ...]) -> str:
    parts = []
    for b in blocks:
        if isinstance(b, Details):
            summary = f"<summary>{_inline(b.summary)}</summary>"
            parts.append(f"<details{' open' if b.open else ''}>{summary}{_html_blocks(b.blocks)}</details>")
        elif isinstance(b, SideBySide):
            cells = "".join(f'<div class="column"><h4>{_inline(t)}</h4>{_html_blocks(inner)}</div>'
                            for t, inner in b.columns)
            parts.append(f'<div class="columns">{cells}</div>')
        else:
            parts.append(_html_block(b))
    return "\n".join(parts)


def _html_block(b: Block) -> str:
    if isinstance(b, Heading):
        return f"<h{b.level}>{_inline(b.text)}</h{b.level}>"
    if isinstance(b, Paragraph):
        return f"<p>{_inline(b.text)}</p>"
    if isinstance(b, Notice):
        return f"<blockquote>{_inline(b.text)}</blockquote>"
    if isinstance(b, Bullets):
        return "<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in b.items) + "</ul>"
    if isinstance(b, Table):
        return _html_table(b)
    if isinstance(b, Figure):
        data = base64.b64encode(b.path.read_bytes()).decode("ascii")
        alt = html.escape(b.caption)
        return f'<figure><img alt="{alt}" src="data:image/png;base64,{data}"><figcaption>{alt}</figcaption></figure>'
    if isinstance(b, Code):
        return f"<pre>{html.escape(b.text, quote=False)}</pre>"
    return ""


def to_html(blocks: list[Block], title: str) -> str:
    """One self-contained HTML page: PNG figures inlined as base64 data URIs, no external resource.

    After loading, each `img` gets a `data-rendered="WxH"` attribute with its decoded size, the root
    element `data-layout="<window W>x<H> <page W>x<H>"` and each table with an id `data-box="left,top,
    right,bottom"` (CSS pixels), so a headless browser's DOM dump shows whether every plot rendered,
    whether the page is wider than the window and what the first screen holds.
    """
    body = _html_blocks(blocks)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{_STYLE}</style></head>\n<body>\n{body}\n{_LOAD_CHECK}\n</body></html>\n")
