"""The extractive summary of turns, as the `summarizer` folds it: `ctxbench.harness.markup.summaries.Digest`.

It lives with the summary's layout in `ctxbench.harness.markup.summaries`, which the simulated model reads
back; this module keeps the strategies' import path.
"""

from ctxbench.harness.markup.placeholders import exit_code
from ctxbench.harness.markup.summaries import Digest, failure_lines, merge_ranges

__all__ = ["Digest", "exit_code", "failure_lines", "merge_ranges"]
