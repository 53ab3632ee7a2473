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


def test_a_bare_folder_name_imported_from_the_checkout_fails_with_one_line():
    for name in ("harness", "strategies", "reports"):
        out = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT, capture_output=True, text=True)
        assert out.returncode == 1
        assert out.stderr.splitlines() == [f"error: import ctxbench.{name}, not {name}: "
                                           f"the folder {name}/ is the package ctxbench.{name}"]


def test_python_dash_m_ctxbench_is_the_command(tmp_path):
    out = subprocess.run([sys.executable, "-m", "ctxbench", "--version"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ctxbench, version 0.1.0"


def test_the_checkouts_ctxbench_folder_links_every_subpackage():
    links = {p.name: p for p in (ROOT / "ctxbench").iterdir() if p.is_symlink()}
    assert sorted(links) == ["experiments", "harness", "reports", "strategies", "tasksets"]
    assert all(p.resolve() == ROOT / name for name, p in links.items())
    assert (ROOT / "ctxbench" / "py.typed").exists()
