"""Every module of the package can be imported first: no import cycle hides behind the order in which the
suite happens to load modules.

Each module is imported into an interpreter that holds no ctxbench module (a fresh one, with every
`ctxbench` entry removed from `sys.modules` before each import; third-party modules stay loaded, which
cannot change the order in which ctxbench's own modules import each other)."""

from __future__ import annotations

import json
import subprocess
import sys

from test_layers import module_files

PROBE = """
import importlib, json, sys, traceback
failures = {}
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m == "ctxbench" or m.startswith("ctxbench.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception:
        failures[name] = traceback.format_exc(limit=-3)
print(json.dumps(failures))
"""


def import_each_first(names: list[str]) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(names)], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def test_every_module_imports_first():
    names = sorted(module_files())
    assert len(names) > 120
    assert import_each_first(names) == {}


def test_the_probe_sees_a_failing_import():
    assert list(import_each_first(["ctxbench.harness.nosuch"])) == ["ctxbench.harness.nosuch"]
