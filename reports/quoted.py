"""Verdict lines quoted in a Markdown page (the README), regenerated from the results folder they quote.

A quoted block sits between two comment lines that say what it quotes:

    <!-- quoted verdicts: quickstart vs baseline: observation_masking trimmer -->
    ```
    - `observation_masking` vs `baseline`: **cheaper** in tokens (×0.80 [0.68, 0.98]), … and …
    ```
    <!-- end of quoted verdicts -->

`refresh` rewrites every block of the folder's experiment from the folder; a page whose blocks
`refresh` leaves unchanged quotes the folder truly. Each quoted line is the report's verdict line with the cost and the secondary figures
left out (`…`), and every piece of it is checked to stand in the report.md it came from.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from ctxbench.harness.errors import InputError
from ctxbench.reports.compare import compare_strategies
from ctxbench.reports.loading import ResultsFolder, load_results
from ctxbench.reports.metrics import PairedComparison
from ctxbench.reports.verdicts import completion_phrase, ratio_phrase, task_phrase

__all__ = ["QuotedBlock", "quoted_blocks", "quoted_lines", "refresh", "WIDTH"]

WIDTH = 110
"""Quoted lines are wrapped at this width, continuation lines indented by two spaces."""

_BLOCK = re.compile(r"(?P<head><!-- quoted verdicts: (?P<experiment>\S+) vs (?P<reference>\S+): (?P<names>[^>]*?) -->\n)"
                    r"(?P<body>.*?)(?P<tail><!-- end of quoted verdicts -->)", re.S)


@dataclass(frozen=True)
class QuotedBlock:
    """One quoted block of a page: what it quotes and the text it holds now."""

    experiment: str
    reference: str
    strategies: tuple[str, ...]
    body: str
    """The text between the two comment lines (a fenced code block)."""


def quoted_blocks(page: str) -> list[QuotedBlock]:
    """Every quoted block of a Markdown page, in order."""
    return [QuotedBlock(m["experiment"], m["reference"], tuple(m["names"].split()), m["body"])
            for m in _BLOCK.finditer(page)]


def _quote(c: PairedComparison) -> str:
    costs = ", …" if c.cost is not None else ""
    return (f"- `{c.strategy}` vs `{c.reference}`: {ratio_phrase(c.tokens)}{costs} and {completion_phrase(c)} — "
            f"{task_phrase(c)}; …")


def _check_against_report(folder: ResultsFolder, line: str, strategy: str) -> None:
    """Every piece of `line` stands in the report's verdict line of `strategy`, or the quote is wrong."""
    report = folder.path / "report.md"
    if not report.is_file():
        raise InputError(f"{folder.path}: no report.md to quote (`ctxbench report {folder.path}` writes it)")
    said = [x for x in report.read_text(encoding="utf-8").splitlines() if x.startswith(f"- `{strategy}` vs ")]
    missing = [piece for piece in line.removeprefix("- ").split("…") if piece.strip(" ,;") and
               not any(piece.strip(" ,;") in x for x in said)]
    if missing:
        raise InputError(f"{report}: its `{strategy}` line does not say {missing[0].strip()!r}: write the report "
                         "again with this version of ctxbench")


def quoted_lines(folder: ResultsFolder, reference: str, strategies: tuple[str, ...]) -> str:
    """The fenced block of verdict lines for `strategies` against `reference`, as the folder's report says.

    Raises:
        InputError: a strategy has no runs, or the folder's report.md says otherwise.
    """
    unknown = [s for s in (reference, *strategies) if s not in folder.strategies]
    if unknown:
        raise InputError(f"{folder.path}: no runs of {', '.join(unknown)} (strategies: {', '.join(folder.strategies)})")
    comparisons = {c.strategy: c for c in compare_strategies(folder.runs, reference, folder.strategies)}
    lines = []
    for s in strategies:
        line = _quote(comparisons[s])
        _check_against_report(folder, line, s)
        lines.append(textwrap.fill(line, WIDTH, subsequent_indent="  ", break_long_words=False,
                                   break_on_hyphens=False))
    return "```\n" + "\n".join(lines) + "\n```\n"


def refresh(page: str, run_dir: str | Path) -> str:
    """`page` with every quoted block of the folder's experiment regenerated from the folder.

    Raises:
        InputError: the page quotes nothing of this experiment, or the folder cannot be quoted.
    """
    folder = load_results(run_dir)
    name = folder.manifest.name
    if not any(b.experiment == name for b in quoted_blocks(page)):
        raise InputError(f"the page quotes no verdicts of the experiment {name!r}")

    def new(m: re.Match[str]) -> str:
        if m["experiment"] != name:
            return m[0]
        return m["head"] + quoted_lines(folder, m["reference"], tuple(m["names"].split())) + m["tail"]

    return _BLOCK.sub(new, page)
