"""ctxbench.reports loads each public name's module on first use, so its light modules load alone."""

import subprocess
import sys

import ctxbench.reports


def test_every_public_name_resolves_and_star_import_takes_them_all():
    assert sorted(ctxbench.reports._WHERE) == sorted(ctxbench.reports.__all__)
    namespace: dict = {}
    exec("from ctxbench.reports import *", namespace)
    assert set(ctxbench.reports.__all__) <= set(namespace)
    assert namespace["write_report"].__module__ == "ctxbench.reports.report"
    assert namespace["wilson_interval"](5, 10)[0] < 0.5 < namespace["wilson_interval"](5, 10)[1]


def test_the_sequential_runner_and_the_run_command_load_without_pandas():
    code = ("import sys, ctxbench.harness.run.sequential, ctxbench.harness.cli.run, ctxbench.harness.cli.nightly; "
            "print(sorted(m for m in ('pandas', 'matplotlib', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
