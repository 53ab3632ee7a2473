"""Every statistic recomputed with scipy / statsmodels (test-only dependencies) on synthetic data, and the
power computation checked against a simulation."""

import itertools
import math

import numpy as np
import pytest

scipy_stats = pytest.importorskip("scipy.stats")
sm = pytest.importorskip("statsmodels.api")
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar  # noqa: E402
from statsmodels.stats.multitest import multipletests  # noqa: E402
from statsmodels.stats.power import TTestPower  # noqa: E402
from statsmodels.stats.proportion import proportion_confint  # noqa: E402

from ctxbench.reports.power import nct_sf  # noqa: E402
from ctxbench.reports.stats import (clustered_mean, clustered_rate_interval, cluster_bootstrap_ratio, holm,  # noqa: E402
                                    mcnemar_exact, min_detectable_difference, pass_at_k, pass_hat_k, repeats_needed,
                                    t_cdf, t_ppf, tasks_needed, variance_parts, wilson_interval)


def correlated_outcomes(rng, tasks, repeats, spread=2.0):
    """Binary outcomes (tasks × repeats) whose success chance varies strongly between tasks."""
    p = 1 / (1 + np.exp(-rng.normal(0, spread, tasks)))
    return (rng.random((tasks, repeats)) < p[:, None]).astype(float), p


@pytest.mark.parametrize("df", [1, 2, 3, 7, 23, 150, 2.5])
def test_student_t_matches_scipy(df):
    for x in (-40, -3, -1.2, -0.3, 0, 0.4, 2.06, 9):
        assert t_cdf(x, df) == pytest.approx(scipy_stats.t.cdf(x, df), abs=1e-11)
    for q in (1e-4, 0.025, 0.2, 0.5, 0.8, 0.975, 0.999):
        assert t_ppf(q, df) == pytest.approx(scipy_stats.t.ppf(q, df), rel=1e-8, abs=1e-9)


def test_wilson_matches_statsmodels():
    for n in (1, 3, 10, 15, 72):
        for k in range(n + 1):
            low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
            assert wilson_interval(k, n) == pytest.approx((low, high), abs=1e-9)


def test_mcnemar_matches_statsmodels_and_scipy():
    for b, c in [(0, 6), (1, 8), (3, 3), (7, 0), (12, 25), (0, 0)]:
        table = [[5, b], [c, 4]]
        assert mcnemar_exact(b, c) == pytest.approx(sm_mcnemar(table, exact=True).pvalue)
        if b + c:
            assert mcnemar_exact(b, c) == pytest.approx(scipy_stats.binomtest(c, b + c, 0.5).pvalue)


def test_pass_at_k_matches_enumeration():
    for n, c in [(5, 2), (6, 3), (4, 0), (4, 4)]:
        outcomes = [1] * c + [0] * (n - c)
        for k in range(1, n + 1):
            draws = list(itertools.combinations(outcomes, k))
            assert pass_at_k(n, c, k) == pytest.approx(np.mean([any(d) for d in draws]))
            assert pass_hat_k(n, c, k) == pytest.approx(np.mean([all(d) for d in draws]))


def test_clustered_mean_matches_statsmodels_cluster_robust_ols():
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 6, 18)  # unequal repeats per task
    tasks = np.repeat(np.arange(18), sizes)
    effect = rng.normal(0.05, 0.3, 18)[tasks]
    x = np.clip(np.round(effect + rng.normal(0, 0.5, tasks.size)), -1, 1)
    ours = clustered_mean(x, tasks)
    fit = sm.OLS(x, np.ones_like(x)).fit(cov_type="cluster", cov_kwds={"groups": tasks}, use_t=True)
    assert ours.estimate == pytest.approx(fit.params[0])
    assert ours.se == pytest.approx(fit.bse[0], rel=1e-9)
    assert ours.p_value == pytest.approx(fit.pvalues[0], rel=1e-6)
    assert ours.interval(0.95) == pytest.approx(tuple(fit.conf_int(0.05)[0]), rel=1e-7)
    naive = sm.OLS(x, np.ones_like(x)).fit()
    assert ours.se_iid == pytest.approx(naive.bse[0])
    assert ours.design_effect == pytest.approx((fit.bse[0] / naive.bse[0]) ** 2)


def test_balanced_clustered_mean_is_the_paired_t_test_on_task_means():
    rng = np.random.default_rng(4)
    ref, _ = correlated_outcomes(rng, 24, 3)
    cand, _ = correlated_outcomes(rng, 24, 3)
    tasks = np.repeat(np.arange(24), 3)
    ours = clustered_mean((cand - ref).ravel(), tasks)
    t = scipy_stats.ttest_rel(cand.mean(axis=1), ref.mean(axis=1))
    assert ours.p_value == pytest.approx(t.pvalue, rel=1e-7)
    assert ours.interval(0.9) == pytest.approx(tuple(t.confidence_interval(0.9)), rel=1e-7)


def test_holm_matches_statsmodels():
    p = [0.01, 0.04, 0.03, 0.2, 0.0001]
    adjusted, factors = holm(p)
    assert adjusted == pytest.approx(list(multipletests(p, method="holm")[1]))
    assert factors == [4, 2, 3, 1, 5]
    adjusted, factors = holm([0.02, math.nan, 0.04])
    assert adjusted[0] == pytest.approx(0.04) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.04)


def test_variance_parts_match_mixedlm_reml():
    rng = np.random.default_rng(5)
    tasks = np.repeat(np.arange(30), 4)
    x = rng.normal(0, 0.5, 30)[tasks] + rng.normal(0, 0.3, tasks.size)
    parts = variance_parts(x, tasks)
    fit = sm.MixedLM(x, np.ones_like(x), groups=tasks).fit(reml=True)
    assert parts.between == pytest.approx(float(np.asarray(fit.cov_re)[0, 0]), rel=1e-3)
    assert parts.within == pytest.approx(fit.scale, rel=1e-3)
    assert parts.repeats == 4 and parts.tasks == 30


def test_mdd_matches_statsmodels_noncentral_t_power():
    rng = np.random.default_rng(6)
    tasks = np.repeat(np.arange(20), 3)
    x = rng.normal(0, 0.4, 20)[tasks] + rng.normal(0, 0.5, tasks.size)
    parts = variance_parts(x, tasks)
    sd = math.sqrt(parts.task_mean_variance(3))
    mdd = min_detectable_difference(parts)
    exact = TTestPower().solve_power(nobs=20, alpha=0.05, power=0.8, alternative="two-sided") * sd
    assert mdd == pytest.approx(exact, rel=0.02)
    power = TTestPower().power(effect_size=mdd / sd, nobs=20, alpha=0.05, alternative="two-sided")
    assert 0.79 <= power <= 0.82


def test_mdd_holds_in_simulation():
    """Per-task differences drawn with the pilot's variance and a true difference equal to the MDD:
    the task-level test rejects in ~80% of simulated experiments."""
    rng = np.random.default_rng(7)
    tasks, repeats, sd_b, sd_w = 15, 3, 0.25, 0.45
    ids = np.repeat(np.arange(tasks), repeats)
    pilot = rng.normal(0, sd_b, tasks)[ids] + rng.normal(0, sd_w, ids.size)
    parts = variance_parts(pilot, ids)
    delta = min_detectable_difference(parts)
    sims = 4000
    task_means = delta + rng.normal(0, math.sqrt(parts.between), (sims, tasks)) + \
        rng.normal(0, math.sqrt(parts.within), (sims, tasks, repeats)).mean(axis=2)
    t = task_means.mean(axis=1) / (task_means.std(axis=1, ddof=1) / math.sqrt(tasks))
    rejected = np.abs(t) > t_ppf(0.975, tasks - 1)
    assert 0.77 <= rejected.mean() <= 0.83
    needed = tasks_needed(parts, 0.10)
    assert min_detectable_difference(parts, needed) <= 0.10 < min_detectable_difference(parts, needed - 1)
    r = repeats_needed(parts, delta * 1.2)
    assert r is not None and r <= repeats
    assert repeats_needed(parts, 0.01) is None  # the between-task variance alone is too large


def test_task_clustered_test_keeps_its_level_where_mcnemar_does_not():
    """A/A on correlated repeats: both arms draw from the same per-task chances. The task-level test
    rejects ~5%; the (task, repeat) McNemar test, treating repeats as independent, rejects more."""
    rng = np.random.default_rng(8)
    tasks, repeats, sims = 24, 3, 600
    ids = np.repeat(np.arange(tasks), repeats)
    clustered, pairwise = 0, 0
    for _ in range(sims):
        p = 1 / (1 + np.exp(-rng.normal(0, 2.0, tasks)))
        # repeats of one task share a seed-level draw: strong within-task correlation in each arm
        shared = rng.random((tasks, 1)) < 0.7
        a = np.where(shared, rng.random((tasks, 1)) < p[:, None], rng.random((tasks, repeats)) < p[:, None])
        b = np.where(shared, rng.random((tasks, 1)) < p[:, None], rng.random((tasks, repeats)) < p[:, None])
        a, b = np.broadcast_to(a, (tasks, repeats)).astype(float), np.broadcast_to(b, (tasks, repeats)).astype(float)
        c = clustered_mean((b - a).ravel(), ids)
        clustered += c.estimable and c.p_value < 0.05
        pairwise += mcnemar_exact(int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())) < 0.05
    assert clustered / sims <= 0.07
    assert pairwise / sims > clustered / sims + 0.05


def test_cluster_bootstrap_ratio_matches_scipy_bootstrap():
    rng = np.random.default_rng(9)
    tasks = np.repeat(np.arange(20), 3)
    ref = rng.gamma(4, 500, 20)[tasks] * rng.uniform(0.8, 1.2, tasks.size)
    cand = ref * 0.6 * rng.uniform(0.7, 1.3, tasks.size)
    draws = cluster_bootstrap_ratio(ref, cand, tasks, n_boot=20000, seed=1)
    ours = np.percentile(draws, [2.5, 97.5])
    r_t = np.bincount(tasks, weights=ref)
    c_t = np.bincount(tasks, weights=cand)
    res = scipy_stats.bootstrap((r_t, c_t), lambda r, c, axis=-1: c.sum(axis=axis) / r.sum(axis=axis),
                                paired=True, vectorized=True, n_resamples=20000, method="percentile",
                                random_state=np.random.default_rng(2))
    assert ours[0] == pytest.approx(res.confidence_interval.low, rel=0.01)
    assert ours[1] == pytest.approx(res.confidence_interval.high, rel=0.01)
    assert draws[0] <= cand.sum() / ref.sum() <= draws[-1]


@pytest.mark.parametrize("df", [1, 2, 4, 9, 23, 299])
def test_noncentral_t_matches_scipy(df):
    for x, ncp in ((2.0, 1.0), (-1.0, 0.5), (3.0, 3.0), (0.5, 0.0), (5.0, 2.0)):
        assert nct_sf(x, df, ncp) == pytest.approx(scipy_stats.nct.sf(x, df, ncp), abs=1e-7)


def test_mdd_is_planned_at_the_level_of_holms_first_step():
    rng = np.random.default_rng(10)
    tasks = np.repeat(np.arange(24), 3)
    parts = variance_parts(rng.normal(0, 0.3, 24)[tasks] + rng.normal(0, 0.4, tasks.size), tasks)
    sd = math.sqrt(parts.task_mean_variance(3))
    at_five = min_detectable_difference(parts, alpha=0.05 / 5)
    exact = TTestPower().solve_power(nobs=24, alpha=0.01, power=0.8, alternative="two-sided") * sd
    assert at_five == pytest.approx(exact, rel=1e-3) and at_five > min_detectable_difference(parts)
    assert math.isinf(min_detectable_difference(parts, tasks=7, alpha=0.01))  # 7 tasks: no p below 2/128


def test_clustered_rate_interval_covers_the_task_population_rate():
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(400):
        p = rng.beta(0.7, 0.9, 6)
        y = (rng.random((6, 3)) < p[:, None]).astype(float)
        low, high = clustered_rate_interval(y.ravel(), np.repeat(np.arange(6), 3))
        covered += low <= 0.7 / 1.6 <= high
    assert covered / 400 >= 0.92
