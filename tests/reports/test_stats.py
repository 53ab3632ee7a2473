import math

import numpy as np
import pytest

from ctxbench.reports.stats import bootstrap_ci, mcnemar_exact, pass_at_k, pass_hat_k, wilson_interval


def test_wilson_matches_hand_computed_values():
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    low, high = wilson_interval(0, 10)
    assert low == pytest.approx(0.0, abs=1e-12) and round(high, 4) == 0.2775
    low, high = wilson_interval(10, 10)
    assert round(low, 4) == 0.7225 and high == pytest.approx(1.0)


def test_wilson_rejects_empty_sample():
    with pytest.raises(ValueError):
        wilson_interval(0, 0)


def test_mcnemar_exact_two_sided_binomial():
    assert mcnemar_exact(1, 8) == 0.0390625
    assert mcnemar_exact(8, 1) == 0.0390625
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 6) == 0.03125
    assert mcnemar_exact(0, 5) == 0.0625


def test_pass_at_k_unbiased_estimator():
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)
    assert pass_at_k(5, 2, 4) == 1.0
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(3, 3, 1) == 1.0


def test_pass_hat_k_all_k_succeed():
    assert pass_hat_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)
    assert pass_hat_k(5, 2, 3) == 0.0
    assert pass_hat_k(4, 3, 2) == pytest.approx(3 / 6)


def test_pass_k_rejects_k_beyond_n():
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_bootstrap_is_seeded_and_contains_point_estimate():
    rng = np.random.default_rng(1)
    ref = rng.integers(0, 2, 40).astype(float)
    cand = rng.integers(0, 2, 40).astype(float)

    def diff(r, c):
        return c.mean(axis=1) - r.mean(axis=1)

    first = bootstrap_ci(diff, ref, cand, seed=7)
    assert first == bootstrap_ci(diff, ref, cand, seed=7)
    assert first != bootstrap_ci(diff, ref, cand, seed=8)
    point = cand.mean() - ref.mean()
    assert first[0] <= point <= first[1]
    assert first[0] < first[1]


def test_bootstrap_undefined_statistic_is_nan():
    zeros = np.zeros(5)
    low, high = bootstrap_ci(lambda r, c: c.mean(axis=1) / r.mean(axis=1), zeros, np.ones(5))
    assert math.isnan(low) and math.isnan(high)
