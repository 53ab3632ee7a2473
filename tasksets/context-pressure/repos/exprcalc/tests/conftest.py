import datetime as dt
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from exprcalc import Calculator  # noqa: E402


@pytest.fixture
def calc():
    """A calculator with a fixed TODAY() and RAND() seed."""
    return Calculator(today=dt.date(2024, 3, 15), seed=1234)


@pytest.fixture
def ev(calc):
    """Shortcut: ev("formula", name=value) evaluates with the shared calculator."""
    return calc.evaluate
