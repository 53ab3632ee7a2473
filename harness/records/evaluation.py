"""What the tests said about a patch: each requested test's outcome, read from pytest's JUnit report."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["TestOutcome", "Evaluation", "parse_junit"]

TestOutcome = Literal["passed", "failed", "error", "skipped", "missing"]


@dataclass(frozen=True)
class Evaluation:
    """What the tests said about the agent's patch."""

    tests: dict[str, TestOutcome]
    fail_to_pass_ok: bool
    pass_to_pass_ok: bool
    test_patch_applied: bool
    output_tail: str = ""
    seconds: float = 0.0
    exit_code: int = 0
    timed_out: bool = False
    grader: Literal["junit", "swebench"] = "junit"
    """What read the outcomes: pytest's JUnit XML report, or the swebench package's log parser."""

    @property
    def resolved(self) -> bool:
        return self.fail_to_pass_ok and self.pass_to_pass_ok and self.test_patch_applied

    @property
    def not_collected(self) -> bool:
        """The tests did not run: no requested test was reported, or pytest stopped before running
        them (exit 2 collection errors, 3 internal error, 4 usage error, 5 nothing collected)."""
        if self.timed_out:
            return False
        return self.exit_code in (2, 3, 4, 5) or all(o == "missing" for o in self.tests.values())


def _node_key(node_id: str) -> tuple[str, str]:
    """(classname, name) that pytest's JUnit report gives the test `node_id`."""
    parts = node_id.split("::")
    module = parts[0][:-3] if parts[0].endswith(".py") else parts[0]
    classname = ".".join([module.replace("/", "."), *parts[1:-1]])
    return classname, parts[-1]


def parse_junit(xml_path: Path, test_ids: list[str]) -> dict[str, TestOutcome]:
    """Outcome of each requested test id from a JUnit XML report; absent tests are `missing`."""
    found: dict[tuple[str, str], TestOutcome] = {}
    if xml_path.exists():
        try:
            root = ET.parse(xml_path).getroot()
        except ET.ParseError:
            root = None
        for case in root.iter("testcase") if root is not None else ():
            key = (case.get("classname", ""), case.get("name", ""))
            tags = {child.tag for child in case}
            outcome: TestOutcome = ("failed" if "failure" in tags else "error" if "error" in tags
                                    else "skipped" if "skipped" in tags else "passed")
            if found.get(key) in ("failed", "error"):
                continue  # setup/teardown errors are reported as a second testcase element
            found[key] = outcome
    return {tid: found.get(_node_key(tid), "missing") for tid in test_ids}
