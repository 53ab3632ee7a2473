"""Reports: load results folders, compute the statistics, compare, plot and render.

The names below load their module on first use (PEP 562): importing one module of this package loads
what that module needs, not pandas and matplotlib for every report, so the commands that read a
report's pieces late (`ctxbench run`, `nightly`) stay quick to start."""

if __name__ == "reports":  # imported by its folder name, which would make a second copy of every class
    raise SystemExit("error: import ctxbench.reports, not reports: the folder reports/ is the package ctxbench.reports")

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxbench.reports.compare import (Completion, FolderComparison, PairedComparison, Ratio, apply_holm, compare_folders,
                                          compare_paired, compare_strategies, verdict_line)
    from ctxbench.reports.compare_report import comparison_report, strategies_report
    from ctxbench.reports.frames import TURN_COLUMNS, run_records, runs_df, turns_df
    from ctxbench.reports.fixed import FixedDifference, FixedVariablesDiffer, check_fixed_variables, fixed_differences
    from ctxbench.reports.loading import Manifest, ResultsFolder, load_results, runs_frame
    from ctxbench.reports.nightly import (NightlyOutcome, RegressionCheck, StrategyCheck, check_regressions, nightly_check,
                                          trend_frame, write_trend_report)
    from ctxbench.reports.planning import plan_rows, plan_text
    from ctxbench.reports.report import ReportPaths, write_report
    from ctxbench.reports.stats import (bootstrap_ci, clustered_mean, holm, mcnemar_exact, min_detectable_difference,
                                        pass_at_k, pass_hat_k, variance_parts, wilson_interval)
    from ctxbench.reports.summary import StrategySummary, summarize, summary_frame, task_table

_MODULES = {
    "compare": "Completion FolderComparison PairedComparison Ratio apply_holm compare_folders compare_paired "
               "compare_strategies verdict_line",
    "compare_report": "comparison_report strategies_report",
    "frames": "TURN_COLUMNS run_records runs_df turns_df",
    "fixed": "FixedDifference FixedVariablesDiffer check_fixed_variables fixed_differences",
    "loading": "Manifest ResultsFolder load_results runs_frame",
    "nightly": "NightlyOutcome RegressionCheck StrategyCheck check_regressions nightly_check trend_frame "
               "write_trend_report",
    "planning": "plan_rows plan_text",
    "report": "ReportPaths write_report",
    "stats": "bootstrap_ci clustered_mean holm mcnemar_exact min_detectable_difference pass_at_k pass_hat_k "
             "variance_parts wilson_interval",
    "summary": "StrategySummary summarize summary_frame task_table",
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names.split()}
"""Each public name -> the module of this package that defines it."""


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'ctxbench.reports' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"ctxbench.reports.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "load_results", "runs_frame", "Manifest", "ResultsFolder",
    "runs_df", "turns_df", "run_records", "TURN_COLUMNS",
    "wilson_interval", "mcnemar_exact", "pass_at_k", "pass_hat_k", "bootstrap_ci", "min_detectable_difference",
    "clustered_mean", "holm", "variance_parts", "plan_rows", "plan_text", "apply_holm", "strategies_report",
    "StrategySummary", "summarize", "summary_frame", "task_table",
    "PairedComparison", "Completion", "Ratio", "compare_paired", "compare_strategies", "FolderComparison", "compare_folders", "verdict_line",
    "FixedDifference", "FixedVariablesDiffer", "fixed_differences", "check_fixed_variables",
    "comparison_report", "ReportPaths", "write_report",
    "StrategyCheck", "RegressionCheck", "check_regressions", "nightly_check", "trend_frame",
    "write_trend_report", "NightlyOutcome",
]
