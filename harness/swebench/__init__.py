"""SWE-bench interoperability: instances read from JSONL, predictions written out, and grading by the
swebench package's own test specs and log parsers."""

from __future__ import annotations

from ctxbench.harness.swebench.instances import export_predictions, load_swebench

__all__ = ["load_swebench", "export_predictions"]
