"""The gate's decision statistics against the seed's numbers and independent libraries."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from flywheel.evalset.stats import (
    StatsInputError,
    cluster_t_interval,
    clustered_rate_interval,
    decide_cells,
    decide_deltas,
    noninferiority_pairs,
    noninferiority_tasks,
    paired_decision,
    satterthwaite_df,
    skew_corrected_t_interval,
    wilson_interval,
    zero_spread_interval,
    zero_spread_tasks,
)
from scipy import optimize, stats
from statsmodels.stats.proportion import proportion_confint

TABLE4 = (70, 12, 18, 50)


def _table4_runs() -> tuple[list[int], list[int]]:
    n11, n10, n01, n00 = TABLE4
    base = [1] * n11 + [1] * n10 + [0] * n01 + [0] * n00
    cand = [1] * n11 + [0] * n10 + [1] * n01 + [0] * n00
    return base, cand


def test_one_run_design_is_the_seeds_newcombe_rule_on_table_4() -> None:
    d = paired_decision(*_table4_runs(), margin=0.02)
    assert d.method == "newcombe_method10" and d.cells == TABLE4
    assert (round(d.lo * 100, 2), round(d.hi * 100, 2), round(d.point, 2)) == (-3.21, 11.12, 0.04)
    assert round(d.mcnemar_p, 3) == 0.362
    # napkin 13.1: the gate is not met; the powered plan asks for more than the even-odds 217
    assert d.outcome == "insufficient_evidence" and d.tasks_needed is not None
    assert d.tasks_needed == noninferiority_pairs(0.04, 0.2, 0.02) > 217


def test_cluster_t_se_is_statsmodels_cluster_robust_se_and_df_n_minus_1_when_normal() -> None:
    rng = np.random.default_rng(4)
    d = rng.normal(0.03, 0.2, 40)
    fit = sm.OLS(d, np.ones((40, 1))).fit(cov_type="cluster", cov_kwds={"groups": np.arange(40)})
    se = d.std(ddof=1) / np.sqrt(40)
    assert fit.bse[0] == pytest.approx(se, rel=1e-12)
    nu = satterthwaite_df(d)
    assert 20 < nu <= 39
    iv = cluster_t_interval(d)
    half = stats.t.ppf(0.975, nu) * se
    assert (iv.lo, iv.hi) == pytest.approx((d.mean() - half, d.mean() + half), rel=1e-12)
    # normal data: the df cap is N - 1, i.e. scipy's one-sample t interval
    symmetric = np.concatenate([d - d.mean(), d.mean() - d])
    ref = stats.ttest_1samp(symmetric, 0.0).confidence_interval(0.95)
    capped = cluster_t_interval(symmetric)
    if satterthwaite_df(symmetric) == len(symmetric) - 1:
        assert (capped.lo, capped.hi) == pytest.approx((ref.low, ref.high), rel=1e-10)


def test_satterthwaite_df_shrinks_when_a_few_tasks_carry_the_variation() -> None:
    one = np.zeros(20)
    one[3] = 1 / 3
    assert 2.0 <= satterthwaite_df(one) < 2.5
    # that single flaky task no longer clears a 2-point margin (N - 1 df would: lo = -0.018)
    assert float(cluster_t_interval(one).lo) < -0.04
    assert decide_deltas(one, 0.02)["outcome"] == 2
    many = np.random.default_rng(1).normal(0, 1, (5, 400))
    assert np.all(satterthwaite_df(many) > 300)


def _hall_by_root_finding(d: np.ndarray) -> tuple[float, float]:
    """Hall's (1992) interval solved numerically: mu with g(T(mu)) = -/+ t_{nu} (scipy)."""
    n, m = len(d), float(np.mean(d))
    se = float(np.std(d, ddof=1)) / np.sqrt(n)
    gamma = float(stats.skew(d, bias=True))
    a, b = gamma / (3 * np.sqrt(n)), gamma / (6 * np.sqrt(n))
    q = float(stats.t.ppf(0.975, satterthwaite_df(d)))

    def g(mu: float) -> float:
        t = (m - mu) / se
        return t + a * t**2 + a**2 * t**3 / 3 + b

    lo = optimize.brentq(lambda mu: g(mu) - q, m - 60 * se, m + 60 * se, xtol=1e-14)
    hi = optimize.brentq(lambda mu: g(mu) + q, m - 60 * se, m + 60 * se, xtol=1e-14)
    return lo, hi


def test_skew_corrected_interval_is_halls_and_never_raises_the_t_lower_limit() -> None:
    rng = np.random.default_rng(8)
    left = -rng.exponential(0.2, 30)  # a few tasks lose a lot: left skew
    lo, hi = _hall_by_root_finding(left)
    iv, t = skew_corrected_t_interval(left), cluster_t_interval(left)
    assert (iv.lo, iv.hi) == pytest.approx((lo, hi), rel=1e-9)
    assert iv.lo < t.lo and iv.hi < t.hi  # the whole interval moves toward the long tail
    right = -left  # one-sided guard: a right skew never raises the lower limit above the t's
    lo, hi = _hall_by_root_finding(right)
    iv, t = skew_corrected_t_interval(right), cluster_t_interval(right)
    assert iv.lo == pytest.approx(float(t.lo), rel=1e-12) and lo > float(t.lo)
    assert iv.hi == pytest.approx(hi, rel=1e-9) and iv.hi > t.hi
    symmetric = np.concatenate([left - left.mean(), left.mean() - left])  # skewness 0: the t
    iv, t = skew_corrected_t_interval(symmetric), cluster_t_interval(symmetric)
    assert (iv.lo, iv.hi) == pytest.approx((float(t.lo), float(t.hi)), abs=1e-12)
    # vectorised over samples as the bench calls it; one sample of one task: nan limits
    many = rng.normal(0, 1, (4, 12)) ** 3
    stacked = skew_corrected_t_interval(many)
    for row, lo_, hi_ in zip(many, stacked.lo, stacked.hi, strict=True):
        one = skew_corrected_t_interval(row)
        assert (lo_, hi_) == pytest.approx((float(one.lo), float(one.hi)), rel=1e-12)
    assert np.isnan(skew_corrected_t_interval([0.2]).lo)


def test_the_skew_correction_keeps_the_lower_limit_below_the_truth_more_often() -> None:
    """Left-skewed task deltas (15 % of tasks lose 50 points): the t's lower limit sits above
    the truth in more than 2.5 % of samples; the corrected one does not (4,000 samples)."""
    rng = np.random.default_rng(5)
    lose = rng.random((4000, 40)) < 0.15
    d = np.where(lose, -0.5, 0.05) + rng.normal(0, 0.05, (4000, 40))
    truth = 0.15 * -0.5 + 0.85 * 0.05
    t_err = np.mean(np.asarray(cluster_t_interval(d).lo) > truth)
    hall_err = np.mean(np.asarray(skew_corrected_t_interval(d).lo) > truth)
    assert t_err > 0.03 and hall_err < 0.025 + 2 * np.sqrt(0.025 * 0.975 / 4000)


def test_zero_spread_bound_is_clopper_pearson_and_its_task_count() -> None:
    for n in (1, 3, 20, 184):
        cp = stats.binomtest(0, n).proportion_ci(0.95, "exact").high
        iv = zero_spread_interval(0.0, n)
        assert -iv.lo == pytest.approx(cp, rel=1e-9) and iv.hi == pytest.approx(cp, rel=1e-9)
    n = zero_spread_tasks(0.0, 0.02)
    assert n == 183
    assert float(zero_spread_interval(0.0, n).lo) >= -0.02
    assert float(zero_spread_interval(0.0, n - 1).lo) < -0.02
    assert float(zero_spread_interval(0.5, 10).lo) == pytest.approx(0.5 - 1.5 * (1 - 0.025**0.1))
    with pytest.raises(StatsInputError):
        zero_spread_tasks(-0.05, 0.02)


def test_three_identical_tasks_never_ship() -> None:
    for runs in ([[1], [1], [0]], [[1, 1], [1, 0], [0, 0]]):
        d = paired_decision(runs, runs, margin=0.02)
        assert d.outcome == "insufficient_evidence" and d.lo < -0.4 < 0.4 < d.hi
        assert d.tasks_needed == 183
    assert paired_decision([[1, 1]] * 3, [[1, 1]] * 3, 0.02).method == "zero_spread_exact"


def test_outcomes_inferior_insufficient_noninferior() -> None:
    worse = np.full((1, 400), -0.2)
    worse[0, ::2] = 0.0
    assert int(decide_deltas(worse, 0.02)["outcome"][0]) == 1  # conclusive loss
    better = np.random.default_rng(2).normal(0.1, 0.2, 400)
    assert int(decide_deltas(better, 0.02)["outcome"]) == 0
    assert int(decide_cells(70, 12, 18, 50, 0.02)["outcome"]) == 2
    # require_powered: a cleared interval from an underpowered design is refused too
    small_gain = np.random.default_rng(3).normal(0.3, 0.2, 12)
    assert int(decide_deltas(small_gain, 0.02)["outcome"]) == 0
    assert int(decide_deltas(small_gain, 0.02, require_powered=True)["outcome"]) == 2


def test_noninferiority_tasks_generalises_the_seeds_plan() -> None:
    assert noninferiority_tasks(0.04, 0.2 - 0.04**2, 0.02) == noninferiority_pairs(0.04, 0.2, 0.02)
    # seed: a true gain of zero with D = 0.2 and no power quantile needs about 1,900 pairs
    assert noninferiority_tasks(0.0, 0.2, 0.02, power=0.5) == pytest.approx(1921, abs=1)


def test_clustered_rate_interval_is_wilson_at_the_effective_sample_size() -> None:
    one_run = [[1], [0], [1], [1], [0]]
    iv, ref = clustered_rate_interval(one_run), wilson_interval(3, 5)
    assert (iv.lo, iv.hi) == pytest.approx((ref.lo, ref.hi))
    runs = [[1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 0, 1], [0, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 0]]
    scores = np.array([np.mean(r) for r in runs])
    p, se2 = scores.mean(), scores.var(ddof=1) / len(scores)
    n_eff = min(max(p * (1 - p) / se2, 6), 24)
    lo, hi = proportion_confint(p * n_eff, n_eff, method="wilson")
    iv = clustered_rate_interval(runs)
    assert (iv.lo, iv.hi) == pytest.approx((lo, hi), rel=1e-9)
    naive = wilson_interval(int(sum(map(sum, runs))), 24)
    assert iv.hi - iv.lo > naive.hi - naive.lo  # repeated runs are not independent
    assert clustered_rate_interval([[1, 1], [1, 1]]).lo == pytest.approx(
        float(wilson_interval(2, 2).lo)
    )


def test_bad_inputs_are_stats_input_errors() -> None:
    with pytest.raises(StatsInputError):
        paired_decision([[1]], [[1], [0]], 0.02)
    with pytest.raises(StatsInputError):
        paired_decision([], [], 0.02)
    with pytest.raises(StatsInputError):
        paired_decision([[1]], [[1]], 0.0)
    with pytest.raises(StatsInputError):
        cluster_t_interval([np.nan, 1.0])
    with pytest.raises(StatsInputError):
        zero_spread_interval(2.0, 3)
