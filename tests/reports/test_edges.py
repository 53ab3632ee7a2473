"""Reports on edge cases: rates of 0% and 100%, one repeat, one task."""

import pandas as pd
import pytest

from ctxbench.reports import write_report
from ctxbench.reports.stats import wilson_interval


@pytest.mark.parametrize("n", [1, 2, 7, 15, 100, 1000])
def test_wilson_interval_encloses_the_rate_at_the_edges(n):
    assert wilson_interval(n, n)[1] == 1.0
    assert wilson_interval(0, n)[0] == 0.0
    for k in range(n + 1):
        low, high = wilson_interval(k, n)
        assert 0.0 <= low <= k / n <= high <= 1.0


@pytest.mark.parametrize("outcomes", [
    {"baseline": [[True] * 3] * 5, "lean": [[True, False, True]] * 5},   # 100% completion
    {"baseline": [[False] * 3] * 5, "lean": [[False] * 3] * 5},          # 0% everywhere
    {"baseline": [[True]] * 4, "lean": [[False]] * 4},                   # one repeat
    {"baseline": [[True, True, False]], "lean": [[True, True, True]]},   # one task
], ids=["all-resolved", "none-resolved", "one-repeat", "one-task"])
def test_report_renders_at_edge_rates(tmp_path, build, outcomes):
    runs = [r for s, grid in outcomes.items() for r in build.grid(s, grid)]
    folder = build.write_folder(tmp_path / "exp", runs, build.manifest(list(outcomes)))
    paths = write_report(folder)
    text = paths.markdown.read_text()
    assert "## Summary" in text and all(p.stat().st_size > 0 for p in paths.plots)
    csv = pd.read_csv(paths.summary_csv)
    assert list(csv["strategy"]) == list(outcomes)
