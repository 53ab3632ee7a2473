"""The report's first screen: the verdict table, in Markdown and as Chromium lays out report.html."""

import os
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from ctxbench.reports import write_report
from ctxbench.reports.verdict_table import VERDICT_COLOURS
from tests.reports.conftest import grid, manifest, write_folder

CHROMIUM = Path("/usr/bin/chromium")
WIDTH, HEIGHT = 1280, 800


def _priced(runs, dollars_per_token):
    return [r.model_copy(update={"cost_usd": r.total_tokens * dollars_per_token}) for r in runs]


@pytest.fixture
def four_arms(tmp_path: Path) -> Path:
    """A priced real-model experiment with four strategies over 8 tasks × 3 repeats (enough tasks for
    the exact tests to decide at α/3): the widest report."""
    outcomes = [[True, True, True], [True, False, True], [True, True, False], [False, True, True],
                [True, True, True], [False, False, True], [True, True, True], [True, False, True]]
    runs = _priced(grid("baseline", outcomes, tokens=2000), 1e-6)
    runs += _priced(grid("observation-masking", outcomes, tokens=1000), 1e-6)
    runs += _priced(grid("a-strategy-with-a-long-name", [[False] * 3] * 8, tokens=2100), 2e-6)
    runs += _priced(grid("summarizer", [[True] * 3] * 8, tokens=1900), 1e-6)
    strategies = ["baseline", "observation-masking", "a-strategy-with-a-long-name", "summarizer"]
    man = manifest(strategies, model={"provider": "openai", "name": "gpt-4o-mini"}, simulated=False)
    man["pricing"] = {"input": 0.15, "cached_input": 0.075, "output": 0.6, "source": "experiment file"}
    return write_folder(tmp_path / "exp", runs, man)


def test_the_report_opens_with_the_verdict_table(four_arms):
    paths = write_report(four_arms)
    text = paths.markdown.read_text()
    first_table = text[text.index("\n|"):].split("\n\n")[0]
    head = first_table.strip().splitlines()[0]
    assert head.startswith("| strategy | completion | Δ completion, pts [CI] | tokens | total tokens ratio [CI] | cost |")
    assert first_table.count("\n| ") == 4  # one row per candidate
    assert "| **worse** |" in first_table and "| **cheaper** |" in first_table
    assert text.index(first_table) < text.index("## Experiment") < text.index("## Summary")


class _Layout(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.layout = ""
        self.boxes: dict[str, tuple[int, ...]] = {}
        self.verdict_cells: list[tuple[str, str]] = []
        self._cell: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.layout = a.get("data-layout", "")
        elif tag == "table" and a.get("id"):
            self.boxes[a["id"]] = tuple(int(v) for v in a["data-box"].split(","))
        elif tag == "td" and a.get("class") == "verdict":
            self._cell = a["style"]

    def handle_data(self, data):
        if self._cell is not None:
            self.verdict_cells.append((data, self._cell))
            self._cell = None


def _chromium_layout(page: Path, profile: Path) -> _Layout:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("CI is set but /usr/bin/chromium is missing: the HTML report must be checked in a browser")
        pytest.skip("chromium not installed")
    proc = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         f"--window-size={WIDTH},{HEIGHT}", f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    layout = _Layout()
    layout.feed(proc.stdout)
    assert layout.layout, "the layout probe did not run"
    return layout


def test_at_1280_px_the_verdict_table_is_on_the_first_screen_and_nothing_overflows(four_arms, tmp_path):
    paths = write_report(four_arms)
    layout = _chromium_layout(paths.html, tmp_path / "profile")
    window, page = layout.layout.split()
    width, height = (int(v) for v in window.split("x"))  # the viewport: the window less its frame
    assert width == WIDTH and 0 < height <= HEIGHT
    assert int(page.split("x")[0]) <= WIDTH  # no horizontal scrolling
    left, top, right, bottom = layout.boxes["verdicts"]
    assert 0 <= left and right <= WIDTH and bottom <= height
    assert {"verdicts", "summary", "comparison", "power", "passk", "tasks", "runs"} <= set(layout.boxes)
    assert all(box[2] <= WIDTH for box in layout.boxes.values()), layout.boxes
    words = {word for word, _ in layout.verdict_cells}
    assert {"worse", "cheaper", "dearer"} <= words
    assert all(f"color:{VERDICT_COLOURS[word]}" == style for word, style in layout.verdict_cells)


def test_the_forest_plot_colours_each_marker_by_its_verdict(four_arms):
    paths = write_report(four_arms)
    pixels = (imread(next(p for p in paths.plots if p.name == "forest.png"))[..., :3] * 255).round().astype(int)

    def count(colour: str) -> int:
        rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
        return int(np.all(pixels == rgb, axis=-1).sum())

    assert count(VERDICT_COLOURS["worse"]) > 50  # the long-named arm resolves nothing: worse, dearer
    assert count(VERDICT_COLOURS["cheaper"]) > 50  # observation-masking: half the tokens
