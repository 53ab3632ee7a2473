"""The text formats that tools and strategies write into a model's messages, each with one writer and one
reader: numbered excerpts (`rendering`), bracketed markers (`placeholders`), head-and-tail cuts
(`textcut`) and the summary of earlier turns (`summaries`)."""

from __future__ import annotations

from ctxbench.harness.markup.rendering import Excerpt, parse_excerpts, render_excerpt
from ctxbench.harness.markup.textcut import cap_bytes, cut_middle, keep_ends

__all__ = ["Excerpt", "render_excerpt", "parse_excerpts", "cut_middle", "cap_bytes", "keep_ends"]
