"""Every module imports ctxbench's own code through the `ctxbench` namespace, never the bare folder names."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BARE = re.compile(r"^\s*(from|import)\s+(harness|strategies|reports)(\.|\s|$)", re.M)


def project_python_files():
    for folder in ("harness", "strategies", "reports", "tests", "benchmarks", "examples"):
        for path in (ROOT / folder).rglob("*.py"):
            if "fixtures" not in path.parts:
                yield path


def test_no_module_imports_the_bare_folder_names():
    offenders = [f"{p.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}"
                 for p in project_python_files() for text in [p.read_text()] for m in BARE.finditer(text)]
    assert offenders == []


def test_the_bare_names_are_not_importable_from_outside_the_checkout(tmp_path):
    probe = ("import importlib.util, sys; "
             "print([n for n in ('harness', 'strategies', 'reports') if importlib.util.find_spec(n)]); "
             "import ctxbench.harness.cli, ctxbench.strategies, ctxbench.reports")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_users_own_strategies_folder_does_not_shadow_ctxbench(tmp_path):
    (tmp_path / "strategies").mkdir()
    (tmp_path / "strategies" / "__init__.py").write_text("raise ImportError('the user package was imported')\n")
    out = subprocess.run([sys.executable, "-c", "import ctxbench.strategies as s; print(sorted(s.available_strategies())[:1])"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("['")
