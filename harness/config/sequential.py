"""The `sequential:` block of an experiment (run in rounds until each arm is decided) and the record of
its rounds, sequential.json."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxbench.harness.errors import InputError

__all__ = ["SEQUENTIAL_FILE", "SequentialConfig", "ArmLook", "RoundRecord", "ArmDecision", "SequentialRecord",
           "read_sequential"]

SEQUENTIAL_FILE = "sequential.json"
"""The record of a sequential experiment's rounds, in its results folder."""


class SequentialConfig(BaseModel):
    """Run the arms in rounds (all tasks once, then one more repeat per round) and stop each candidate
    as soon as its confidence sequence against the reference decides it (docs/results.md,
    "Sequential experiments")."""

    model_config = ConfigDict(extra="forbid")

    goal: Literal["superiority", "non_inferiority"] = Field("superiority", description="`superiority`: stop an arm when it is better, worse or futile (a gain of `min_effect` ruled out); `non_inferiority`: stop when it is non-inferior (within `margin`) or worse.")
    max_repeats: int | None = Field(None, ge=1, le=1000, description="Most rounds (repeats of every task); default `repeats`.")
    alpha: float = Field(0.05, gt=0, lt=0.5, description="Chance that any arm's confidence sequence ever misses its difference (Bonferroni over the candidates).")
    min_effect: float = Field(0.05, gt=0, lt=1, description="Smallest gain in completion worth finding (0.05 = 5 points): an arm whose upper bound falls below it is futile.")
    margin: float = Field(0.05, gt=0, lt=1, description="Non-inferiority margin (0.05 = 5 points).")
    reference: str | None = Field(None, description="The arm the others are compared with; default `baseline`, else the first arm running the baseline strategy, else the first arm.")


class ArmLook(BaseModel):
    """One candidate's confidence sequence at the end of one round."""

    model_config = ConfigDict(extra="forbid")
    strategy: str = Field(description="The candidate arm.")
    runs: int = Field(description="Its runs recorded so far.")
    pairs: int = Field(description="Paired differences with the reference so far.")
    estimate: float | None = Field(description="Mean paired difference so far (None without pairs).")
    low: float = Field(description="Lower bound of the confidence sequence.")
    high: float = Field(description="Upper bound.")
    verdict: Literal["better", "worse", "non-inferior", "futile", "undecided"]


class RoundRecord(BaseModel):
    """The look at the end of one round."""

    model_config = ConfigDict(extra="forbid")
    round: int = Field(description="1 for the first round.")
    repeat: int = Field(description="The repeat every task ran in this round (from 0).")
    runs: int = Field(description="Runs recorded so far, every arm.")
    arms: list[ArmLook] = Field(description="The candidates still running in this round, as they stand after it.")


class ArmDecision(BaseModel):
    """How one candidate ended."""

    model_config = ConfigDict(extra="forbid")
    strategy: str
    verdict: Literal["better", "worse", "non-inferior", "futile", "undecided"]
    round: int = Field(description="The round that decided it (the last round when undecided).")
    runs: int = Field(description="Its runs, and as many of the reference's, that the decision took.")
    fixed_runs: int = Field(description="The runs of the arm in the fixed design: tasks × the maximum of repeats.")
    low: float
    high: float


class SequentialRecord(BaseModel):
    """sequential.json: the rounds of a sequential experiment and how each candidate ended."""

    model_config = ConfigDict(extra="forbid")
    version: Literal[1] = 1
    reference: str = Field(description="The arm the candidates are compared with (a nightly: \"itself in the previous run\").")
    against: str | None = Field(None, description="A nightly's previous run (its folder's name), each strategy paired with itself there; None: the reference is an arm of this experiment.")
    goal: Literal["superiority", "non_inferiority"]
    alpha: float = Field(description="The experiment's alpha, over every candidate.")
    arm_alpha: float = Field(description="Each candidate's: alpha / candidates.")
    margin: float
    min_effect: float
    max_repeats: int
    tasks: int
    rounds: list[RoundRecord] = Field(default_factory=list)
    finished: bool = Field(False, description="Every candidate is decided, or the maximum of rounds ran.")
    decisions: list[ArmDecision] = Field(default_factory=list, description="Set when finished.")


def read_sequential(folder: Path) -> SequentialRecord | None:
    """The record of a sequential experiment in a results folder; None when it has none (a fixed design).

    Raises:
        InputError: sequential.json is there but is no such record.
    """
    path = folder / SEQUENTIAL_FILE
    if not path.exists():
        return None
    try:
        return SequentialRecord.model_validate_json(path.read_bytes())
    except ValueError as exc:
        raise InputError(f"{path}: not a record of a sequential experiment ({str(exc).splitlines()[0]})") from None
