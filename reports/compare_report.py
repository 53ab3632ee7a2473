"""The Markdown comparison of two results folders (what `ctxbench compare` prints)."""

from __future__ import annotations

from pathlib import Path

from ctxbench.harness.errors import InputError
from ctxbench.reports.compare import (ALPHA, MARGIN, SAME_RATIO, FolderComparison, accounting_lines, compare_folders,
                                      compare_strategies, comparison_frame, verdict_line)
from ctxbench.reports.fixed import strategy_differences
from ctxbench.reports.document import Block, Bullets, Heading, Notice, Paragraph, Table, to_markdown
from ctxbench.reports.loading import ResultsFolder, load_results
from ctxbench.reports.report import METHOD, check_reference, manifest_notices

__all__ = ["comparison_report", "comparison_blocks", "strategies_report"]


def _notices(a: ResultsFolder, b: ResultsFolder) -> list[Block]:
    plain_a, plain_b = manifest_notices(a.manifest), manifest_notices(b.manifest)
    if plain_a == plain_b:
        return plain_a
    return manifest_notices(a.manifest, "A") + manifest_notices(b.manifest, "B")


def _within(folder: ResultsFolder, label: str, reference: str, margin: float) -> list[Block]:
    if reference not in folder.strategies:
        return [Paragraph(f"{label}: no strategy `{reference}` (strategies: {', '.join(folder.strategies)}).")]
    comparisons = compare_strategies(folder.runs, reference, folder.strategies, margin=margin)
    if not comparisons:
        return [Paragraph(f"{label}: `{reference}` is the only strategy.")]
    return [Paragraph(f"{label}:"), *[Notice(line) for line in accounting_lines(comparisons)],
            Bullets(tuple(verdict_line(c) for c in comparisons))]


def comparison_blocks(result: FolderComparison, reference: str, margin: float = MARGIN) -> list[Block]:
    """Lay out a folder comparison: notices and forced differences first, then B against A, then each
    folder against `reference`."""
    a, b = result.a, result.b
    blocks: list[Block] = _notices(a, b)
    if result.differences:
        blocks += [Notice("**The fixed variables differ (compared with --force)**: the differences below may "
                          "explain any effect."),
                   Bullets(tuple(d.describe() for d in result.differences))]
    blocks += [
        Heading("ctxbench compare", 1),
        Bullets((f"A: `{a.path}` — {a.manifest.name}, started {a.manifest.created}, {len(a.runs)} runs",
                 f"B: `{b.path}` — {b.manifest.name}, started {b.manifest.created}, {len(b.runs)} runs")),
        Heading("B against A, strategy by strategy"),
        Paragraph(METHOD.format(m=len(result.comparisons), reference="A", alpha=ALPHA, margin=margin * 100,
                                same=SAME_RATIO).replace("strategies compared with `A`", "strategies of B compared "
                                                         "with the same strategy in A")),
        *[Notice(line) for line in accounting_lines(result.comparisons)],
        Bullets(tuple(verdict_line(c) for c in result.comparisons)),
        Table(comparison_frame(result.comparisons), id="comparison"),
    ]
    params = [d for d in strategy_differences(a.manifest, b.manifest) if ": only in" not in d and ": new" not in d]
    if params:
        blocks += [Notice("**Strategies under the same label differ between A and B**: a difference below may be "
                          "the change of params, not noise."), Bullets(tuple(params))]
    mismatched = sum(c.seed_mismatches for c in result.comparisons)
    if mismatched:
        blocks.append(Notice(f"{mismatched} pairs ran with different seeds in A and B (different experiment seeds)."))
    for label, names in (("Only in A", result.only_a), ("Only in B", result.only_b)):
        if names:
            blocks.append(Paragraph(f"{label}: " + ", ".join(f"`{s}`" for s in names) + " (not compared)."))
    blocks += [Heading(f"Each folder against `{reference}`"), *_within(a, "A", reference, margin),
               *_within(b, "B", reference, margin)]
    return blocks


def comparison_report(dir_a: str | Path, dir_b: str | Path, force: bool = False, reference: str | None = None,
                      margin: float = MARGIN) -> str:
    """Markdown comparing results folder B with A; within each folder, its strategies against `reference`
    (None: each folder's default reference, as its report has it).

    Raises:
        FixedVariablesDiffer: the fixed variables differ and `force` is false (exit code 2).
        InputError: a folder is not a results folder, they share no strategy, or a named `reference`
            has no runs in one of them.
    """
    a, b = load_results(dir_a), load_results(dir_b)
    if reference is not None:
        for folder in (a, b):
            check_reference(folder, reference)
    reference = check_reference(a, reference)
    return to_markdown(comparison_blocks(compare_folders(a, b, force=force, margin=margin), reference, margin),
                       Path.cwd())


def strategies_report(run_dir: str | Path, reference: str, candidate: str, margin: float = MARGIN) -> str:
    """Markdown comparing two strategies (arms) of one results folder: `candidate` against `reference`.

    Raises:
        InputError: not a results folder, or a strategy has no runs there.
    """
    folder = load_results(run_dir)
    folder.check_strategy(reference, "reference strategy")
    folder.check_strategy(candidate)
    if reference == candidate:
        raise InputError(f"--strategies names `{reference}` twice: give two different strategies")
    runs = folder.runs[folder.runs["strategy"].isin([reference, candidate])]
    comparisons = compare_strategies(runs, reference, [reference, candidate], margin=margin)
    blocks: list[Block] = [
        *manifest_notices(folder.manifest),
        Heading(f"ctxbench compare — `{candidate}` against `{reference}`", 1),
        Paragraph(f"`{folder.path}` — {folder.manifest.name}, started {folder.manifest.created}."),
        Paragraph(METHOD.format(m=1, reference=reference, alpha=ALPHA, margin=margin * 100, same=SAME_RATIO)),
        *[Notice(line) for line in accounting_lines(comparisons)],
        Bullets(tuple(verdict_line(c) for c in comparisons)),
        Table(comparison_frame(comparisons), id="comparison"),
    ]
    return to_markdown(blocks, Path.cwd())
