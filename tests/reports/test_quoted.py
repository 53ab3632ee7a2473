import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ctxbench.harness.errors import InputError
from ctxbench.reports import write_report
from ctxbench.reports.quoted import quoted_blocks, refresh

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "refresh_quotes.py"

STALE = """# A page

<!-- quoted verdicts: synthetic vs baseline: lean -->
```
- `lean` vs `baseline`: **dearer** in tokens (×2.00 [1.90, 2.10]) and **better** in completion (+50.0 pts) — …
```
<!-- end of quoted verdicts -->

<!-- quoted verdicts: other-experiment vs baseline: lean -->
```
left as it is
```
<!-- end of quoted verdicts -->
"""


@pytest.fixture
def reported(two_strategy_folder):
    write_report(two_strategy_folder)
    return two_strategy_folder


def test_refresh_quotes_what_the_report_says_and_leaves_other_experiments(reported):
    fresh = refresh(STALE, reported)
    mine, other = quoted_blocks(fresh)
    assert (mine.experiment, mine.reference, mine.strategies) == ("synthetic", "baseline", ("lean",))
    lines = mine.body.splitlines()
    assert lines[0] == lines[-1] == "```" and lines[1].startswith("- `lean`") and len(lines) >= 3
    quoted = " ".join(x.strip() for x in lines[1:-1])
    assert quoted.startswith("- `lean` vs `baseline`: **too few tasks** in total tokens (total ×0.50, interval not "
                             "estimable: too few tasks (2); typical task ×0.50) and "
                             "**too few tasks** in completion (")
    assert "— tasks +0/−2 of 2; p = " in quoted and quoted.endswith("; …")
    assert all(len(x) <= 110 for x in lines)
    assert other.body == "```\nleft as it is\n```\n"
    assert refresh(fresh, reported) == fresh  # a true page is left as it is


def test_a_quote_the_report_does_not_say_is_refused(reported):
    report = reported / "report.md"
    report.write_text(report.read_text().replace("**too few tasks** in total tokens", "**same** in total tokens"))
    with pytest.raises(InputError, match="does not say"):
        refresh(STALE, reported)


def test_a_page_quoting_nothing_of_the_experiment_is_an_error(reported):
    with pytest.raises(InputError, match="quotes no verdicts of the experiment 'synthetic'"):
        refresh("# nothing quoted\n", reported)


def test_the_script_checks_and_refreshes_a_page(reported, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(STALE)
    check = [sys.executable, str(SCRIPT), str(reported), "--page", str(page), "--check"]
    stale = subprocess.run(check, capture_output=True, text=True)
    assert stale.returncode == 1 and "-- `lean` vs `baseline`: **dearer**" in stale.stdout
    assert "no longer gives" in stale.stderr and page.read_text() == STALE
    done = subprocess.run(check[:-1], capture_output=True, text=True)
    assert done.returncode == 0 and "refreshed" in done.stdout
    assert subprocess.run(check, capture_output=True, text=True).returncode == 0


def test_the_readme_quotes_the_quickstart_through_a_block_ci_checks():
    (block,) = [b for b in quoted_blocks((ROOT / "README.md").read_text()) if b.experiment == "quickstart"]
    config = yaml.safe_load((ROOT / "experiments" / "quickstart.yaml").read_text())
    arms = [s["name"] for s in config["strategies"]]
    assert block.reference in arms and set(block.strategies) <= set(arms)
    assert block.body.count("\n- `") + block.body.startswith("- `") == len(block.strategies)
    assert 'docs/refresh_quotes.py "$scratch/qs" --check' in (ROOT / ".ci" / "run").read_text()
