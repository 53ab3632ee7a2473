"""Hostile YAML: alias bombs, huge whole numbers and recursive aliases are one error line at load time,
exit 2, nothing written; ordinary aliases and large tasksets still load (on the C parser, with progress)."""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ctxbench.harness import yamlfile
from ctxbench.harness.cli import cli
from ctxbench.harness.config import load_config
from ctxbench.harness.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "tasksets" / "smoke"
LAUGHS = "[" + ", ".join(["&a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"] + [
    f"&{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi")]) + ", *i]"
"""The billion laughs as one flow sequence (about 440 bytes): nine levels of nine aliases, 9**9 leaves."""


def _limited_memory() -> None:
    limit = 1536 * 2**20  # an expanded bomb needs gigabytes; the refusal needs the interpreter alone
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _ctxbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from ctxbench.harness.cli import main; main()", *args], cwd=cwd,
                          capture_output=True, text=True, preexec_fn=_limited_memory, timeout=600)


def _experiment(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _taskset_with_bomb_in_tags(tmp_path: Path) -> Path:
    folder = tmp_path / "ts"
    shutil.copytree(SMOKE, folder)
    text = (folder / "taskset.yaml").read_text(encoding="utf-8")
    first_tags = text.index("    tags:")
    end = text.index("\n", first_tags)
    (folder / "taskset.yaml").write_text(text[:first_tags] + f"    tags: {LAUGHS}" + text[end:], encoding="utf-8")
    return folder


BASE = f"taskset: {SMOKE}\nrepeats: 1\nsandbox: none\n"
CASES = {
    "name": (f"name: {LAUGHS}\n{BASE}strategies: [{{name: baseline}}]\n", ()),
    "param": (f"name: t\n{BASE}strategies: [{{name: trimmer, params: {{limit: {LAUGHS}}}}}]\n", ()),
    "taskset.ids": (f"name: t\ntaskset: {{path: {SMOKE}, ids: {LAUGHS}}}\nstrategies: [{{name: baseline}}]\n", ()),
    "--set": (f"name: t\n{BASE}strategies: [{{name: baseline}}]\n", ("--set", f"name={LAUGHS}")),
    "tags": (None, ()),
}


@pytest.mark.parametrize("case", CASES)
def test_an_alias_bomb_is_one_error_line_and_nothing_is_written(case, tmp_path):
    text, extra = CASES[case]
    if text is None:
        taskset = _taskset_with_bomb_in_tags(tmp_path)
        text = f"name: t\ntaskset: {taskset}\nrepeats: 1\nstrategies: [{{name: baseline}}]\n"
    assert len(LAUGHS) < 480
    exp = _experiment(tmp_path, text)
    proc = _ctxbench("run", str(exp), "--output", str(tmp_path / "out"), "--no-report", *extra, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "aliases expand the document" in errors[0], proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()


def test_aliases_that_share_a_block_of_settings_still_load(tmp_path):
    exp = _experiment(tmp_path, f"name: t\n{BASE}strategies:\n"
                                "  - {name: trimmer, label: a, params: &p {limit: 900}}\n"
                                "  - {name: trimmer, label: b, params: *p}\n")
    config = load_config(exp)
    assert [s.params for s in config.strategies] == [{"limit": 900}, {"limit": 900}]


def test_a_recursive_alias_is_refused(tmp_path):
    with pytest.raises(InputError, match="an alias refers to a value that contains it"):
        yamlfile.parse_yaml("a: &x [1, *x]\n", "doc")


@pytest.mark.parametrize("where", ["file", "--set"])
def test_a_five_thousand_digit_number_is_one_error_line(tmp_path, where):
    number = "9" * 5000
    seed = f"seed: {number}\n" if where == "file" else ""
    exp = _experiment(tmp_path, f"name: t\n{BASE}{seed}strategies: [{{name: baseline}}]\n")
    extra = ["--set", f"seed={number}"] if where == "--set" else []
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(tmp_path / "out"), *extra])
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert line.startswith("error: ") and "a whole number of 5,000 digits is too long" in line, line
    assert (str(exp) in line) == (where == "file") and not (tmp_path / "out").exists()


def test_the_strict_loader_parses_with_libyaml_and_still_refuses_duplicate_keys():
    assert yaml.__with_libyaml__ and issubclass(yamlfile._StrictLoader, yaml.CSafeLoader)
    with pytest.raises(InputError, match="duplicate key 'a'"):
        yamlfile.parse_yaml("a: 1\nb: 2\na: 3\n", "doc")


def test_a_large_taskset_says_it_is_being_read_and_how_far_the_check_is(tmp_path):
    folder = tmp_path / "big"
    shutil.copytree(SMOKE, folder)
    spec = yaml.safe_load((SMOKE / "taskset.yaml").read_text(encoding="utf-8"))
    filler = "A long problem statement. " * 160
    tasks = [{**t, "id": f"{t['id']}-{n}", "problem_statement": t["problem_statement"] + filler}
             for n in range(1300 // len(spec["tasks"]) + 1) for t in spec["tasks"]][:1300]
    (folder / "taskset.yaml").write_text(yaml.safe_dump({**spec, "tasks": tasks}), encoding="utf-8")
    assert (folder / "taskset.yaml").stat().st_size >= 5_000_000
    result = CliRunner().invoke(cli, ["tasks", "list", str(folder)])
    assert result.exit_code == 0, result.output
    assert f"ctxbench: reading {folder / 'taskset.yaml'} (" in result.stderr and " MB)..." in result.stderr
    assert "ctxbench: checking tasks 1-1,300 of 1,300" in result.stderr
    assert f"smoke: 1300 tasks" in result.stdout
