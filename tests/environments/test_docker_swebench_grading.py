"""A SWE-bench-style instance whose tests are not pytest's: a django-style `tests/runtests.py` whose
log only the swebench package's parser for it reads. Graded by the instance's eval script, in a fresh
container, as the SWE-bench harness grades it."""

from __future__ import annotations

import subprocess
import textwrap

from click.testing import CliRunner

from conftest import git_repo, run_instances, write_instances

from ctxbench.harness.cli import cli
from ctxbench.harness.environments.docker_environment import DockerWorkspace
from ctxbench.harness.tasks.taskset import load_taskset

RUNTESTS = '''\
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.dirname(here)]
names = [a for a in sys.argv[1:] if not a.startswith("--")]
result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(
    unittest.defaultTestLoader.loadTestsFromNames(names))
sys.exit(not result.wasSuccessful())
'''
TESTS = '''\
import unittest

from words import shout, upper


class WordTests(unittest.TestCase):
    def test_upper(self):
        self.assertEqual(upper("a"), "A")
'''
HIDDEN = '''
    def test_shout(self):
        self.assertEqual(shout("hi"), "HI!")
'''
EVAL = '''\
#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout {base} tests/test_words.py
git apply -v - <<'EOF_114329324912'
{test_patch}
EOF_114329324912
: '>>>>> Start Test Output'
python tests/runtests.py --verbosity 2 test_words
: '>>>>> End Test Output'
git checkout {base} tests/test_words.py
'''


def _diff(repo, path, text):
    (repo / path).write_text(text)
    diff = subprocess.run(["git", "diff"], cwd=repo, capture_output=True, text=True, check=True).stdout
    subprocess.run(["git", "checkout", "-q", path], cwd=repo, check=True)
    return diff


def _instance(tmp_path, image):
    repo = tmp_path / "repos" / "acme__words"
    (repo / "tests").mkdir(parents=True)
    (repo / "words.py").write_text("def upper(s):\n    return s.upper()\n\n\ndef shout(s):\n    return s\n")
    (repo / "tests" / "runtests.py").write_text(RUNTESTS)
    (repo / "tests" / "test_words.py").write_text(TESTS)
    base = git_repo(repo)
    patch = _diff(repo, "words.py", "def upper(s):\n    return s.upper()\n\n\ndef shout(s):\n    return s.upper() + '!'\n")
    test_patch = _diff(repo, "tests/test_words.py", TESTS + HIDDEN)
    row = {"instance_id": "acme__words-1", "repo": "acme/words", "base_commit": base, "patch": patch,
           "test_patch": test_patch, "problem_statement": "shout() does not shout.",
           "FAIL_TO_PASS": ["test_shout (test_words.WordTests.test_shout)"],
           "PASS_TO_PASS": ["test_upper (test_words.WordTests.test_upper)"],
           "test_cmd": "python tests/runtests.py --verbosity 2 test_words", "test_files": [],
           "version": "1.0", "log_parser": "parse_log_django",
           "eval_script": EVAL.format(base=base, test_patch=test_patch.rstrip("\n"))}
    return write_instances(tmp_path, [row], {"backend": "docker", "image": image}), tmp_path / "repos"


def test_a_runtests_style_instance_is_graded_by_the_swebench_parser(tmp_path, image, swebench_package, no_leftover_containers):
    path, repos = _instance(tmp_path, image)
    task = load_taskset(path, repos).tasks[0]
    assert task.swebench is not None and task.swebench.log_parser == "parse_log_django"

    base = DockerWorkspace.create(task, "python", start=False)
    try:
        before = base.evaluate(120)
    finally:
        base.cleanup()
    assert before.grader == "swebench"
    assert before.tests == {"test_shout (test_words.WordTests.test_shout)": "failed",
                            "test_upper (test_words.WordTests.test_upper)": "passed"}
    assert not before.resolved and before.pass_to_pass_ok

    fixed = DockerWorkspace.create(task, "python", start=False)
    try:
        assert fixed.apply_patch(task.patch)
        after = fixed.evaluate(120)
    finally:
        fixed.cleanup()
    assert after.resolved, after.output_tail
    assert set(after.tests.values()) == {"passed"}


def test_tasks_validate_grades_it_the_same_way(tmp_path, image, swebench_package, no_leftover_containers):
    path, repos = _instance(tmp_path, image)
    result = CliRunner().invoke(cli, ["tasks", "validate", str(path), "--repos", str(repos)])
    assert result.exit_code == 0, result.output
    assert "1/1 tasks valid" in result.output


def test_the_eval_script_runs_with_the_instance_base_commit_as_the_workspace_base(tmp_path, image, swebench_package):
    path, repos = _instance(tmp_path, image)
    task = load_taskset(path, repos).tasks[0]
    from ctxbench.harness.swebench.grading import eval_script
    script = eval_script(task, task.swebench)
    assert task.base_commit not in script and "git checkout HEAD tests/test_words.py" in script
    assert textwrap.dedent(script).count(">>>>> Test Exit Code") == 1


def test_the_run_record_says_the_swebench_package_graded_it(tmp_path, image, swebench_package,
                                                            no_leftover_containers):
    path, repos = _instance(tmp_path, image)
    _, runs = run_instances(tmp_path, "words", path, repos)
    assert [r["grader"] for r in runs] == ["swebench"]
    assert set(runs[0]["tests"]) == {"test_shout (test_words.WordTests.test_shout)",
                                     "test_upper (test_words.WordTests.test_upper)"}
    assert runs[0]["failure_reason"] not in ("harness_error", "taskset_error"), runs[0]["error"]
