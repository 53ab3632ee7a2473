"""The betting confidence sequence of the paired completion difference, and the sequential verdicts."""

import math

import numpy as np
import pytest

from ctxbench.harness.records.sequence import BETS, Bounds, arm_level, confidence_sequence, decide, stops


def mixture_wealth(values, m, side):
    """The dKelly wealth written out from its definition, one product per bet (not the module's code)."""
    total = 0.0
    for c in BETS:
        w = 1.0
        for x in values:
            w *= 1 + c * (x - m) / (1 + m) if side == "greater" else 1 - c * (x - m) / (1 - m)
        total += w
    return total / len(BETS)


def test_no_round_knows_nothing():
    b = confidence_sequence([], 0.05)
    assert (b.low, b.high, b.pairs) == (-1.0, 1.0, 0) and math.isnan(b.estimate)


@pytest.mark.parametrize("values", [[1.0] * 24, [1, 1, 0, 1, -1, 1, 0, 1, 1, 1, 0, 1] * 2, [0.5, -0.25, 1, 1] * 5])
def test_the_bounds_are_where_the_wealth_reaches_two_over_alpha(values):
    b = confidence_sequence([np.array(values, dtype=float)], 0.05)
    assert b.low > -1
    assert mixture_wealth(values, b.low, "greater") == pytest.approx(2 / 0.05, rel=1e-6)
    assert mixture_wealth(values, b.low + 0.01, "greater") < 2 / 0.05 < mixture_wealth(values, b.low - 0.01, "greater")
    if b.high < 1:
        assert mixture_wealth(values, b.high, "less") == pytest.approx(2 / 0.05, rel=1e-6)


def test_known_answers():
    ones = confidence_sequence([np.ones(24)], 0.05)
    assert ones.low == pytest.approx(0.60421, abs=1e-4) and ones.high == 1.0 and ones.estimate == 1.0
    zeros = confidence_sequence([np.zeros(24)], 0.05)
    assert zeros.low == pytest.approx(-0.19790, abs=1e-4) and zeros.high == pytest.approx(0.19790, abs=1e-4)
    assert zeros.pairs == 24


def test_mirrored_differences_give_a_mirrored_sequence():
    rounds = [np.array([1, 0, 0, 1, -1, 0, 1, 0.5]), np.array([1, 1, 0, 0, 0, 0, 1, -0.5])]
    b = confidence_sequence(rounds, 0.1)
    m = confidence_sequence([-r for r in rounds], 0.1)
    assert m.low == pytest.approx(-b.high, abs=1e-9) and m.high == pytest.approx(-b.low, abs=1e-9)


def test_the_same_rounds_again_narrow_it_and_pooling_order_does_not_matter():
    one = np.array([1, 0, 0, 1, 0, 0, 1, 0, -1, 0, 1, 0], dtype=float)
    first = confidence_sequence([one], 0.05)
    more = confidence_sequence([one, one, one], 0.05)
    assert first.low < more.low < more.estimate < more.high < first.high
    assert confidence_sequence([one[::-1], one, one], 0.05) == more


def test_missing_pairs_are_left_out_and_out_of_range_is_refused():
    b = confidence_sequence([np.array([1.0, np.nan, 0.0])], 0.05)
    assert b.pairs == 2 and b.estimate == 0.5
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        confidence_sequence([np.array([1.5])], 0.05)
    with pytest.raises(ValueError, match="alpha"):
        confidence_sequence([np.zeros(3)], 1.0)


def _misses(rng, per_task_means, rounds, alpha, sims):
    """How often the sequence ever leaves out the taskset's mean difference, looking after every round."""
    truth = float(np.mean(per_task_means))
    p_up, p_down = np.clip(per_task_means, 0, 1), np.clip(-per_task_means, 0, 1)
    misses = 0
    for _ in range(sims):
        seen = []
        for _ in range(rounds):
            u = rng.random(per_task_means.size)
            seen.append(np.where(u < p_up, 1.0, np.where(u > 1 - p_down, -1.0, 0.0)))
            b = confidence_sequence(seen, alpha)
            if not b.low <= truth <= b.high:
                misses += 1
                break
    return misses / sims


def test_coverage_holds_at_every_look_when_tasks_differ():
    """Tasks with different expected differences (a task × strategy effect): the sequence covers their
    mean at every one of 8 looks with chance at least 1 − alpha."""
    rng = np.random.default_rng(7)
    tasks = np.array([0.6, -0.2, 0.0, 0.3, 0.1, -0.4, 0.5, 0.0, 0.2, 0.0, -0.1, 0.4])
    rate = _misses(rng, tasks, rounds=8, alpha=0.2, sims=300)
    assert rate <= 0.2 + 2 * math.sqrt(0.2 * 0.8 / 300)


def test_it_finds_a_clear_difference():
    rng = np.random.default_rng(3)
    u = rng.random((24, 4))
    rounds = [np.where(u[:, r] < 0.5, 1.0, 0.0) for r in range(4)]
    assert confidence_sequence(rounds, 0.05).low > 0


@pytest.mark.parametrize("low, high, goal, verdict", [
    (0.01, 0.4, "superiority", "better"),
    (-0.4, -0.01, "superiority", "worse"),
    (-0.2, 0.04, "superiority", "futile"),
    (-0.04, 0.3, "superiority", "undecided"),   # non-inferior, but a superiority experiment goes on
    (-0.2, 0.3, "superiority", "undecided"),
    (-0.04, 0.3, "non_inferiority", "non-inferior"),
    (0.01, 0.3, "non_inferiority", "better"),
    (-0.3, -0.01, "non_inferiority", "worse"),
    (-0.2, 0.04, "non_inferiority", "undecided"),  # futility is no stop for non-inferiority
])
def test_verdicts_and_stops(low, high, goal, verdict):
    got = decide(Bounds(low, high, (low + high) / 2, 10, 0.05), goal, margin=0.05, min_effect=0.05)
    assert got == verdict
    assert stops(got) == (verdict != "undecided")


def test_arm_level_is_bonferroni():
    assert arm_level(0.05, 5) == pytest.approx(0.01)
    with pytest.raises(ValueError):
        arm_level(0.05, 0)


def test_the_fewest_pairs_that_decide_are_the_edge_of_the_sequence():
    """A sample of k pairs one way and the rest tied decides from the returned k on, not before; 5 tasks
    in one round decide nothing at 0.05, however large the difference."""
    from ctxbench.harness.records.sequence import fewest_deciding_pairs

    assert fewest_deciding_pairs(5, 0.05) is None
    for pairs, alpha in ((15, 0.01), (12, 0.1), (240, 0.05)):
        k = fewest_deciding_pairs(pairs, alpha)
        assert k is not None
        sample = np.zeros(pairs)
        sample[:k] = 1.0
        assert confidence_sequence([sample], alpha).low > 0
        sample[k - 1] = 0.0
        assert confidence_sequence([sample], alpha).low <= 0
    assert fewest_deciding_pairs(15, 0.01) == 11
