"""Wilson/Wald intervals and four-verdict bounds (acceptance-and-statistics 13.2.3, 13.5.2)."""

from __future__ import annotations

import numpy as np
import pytest
from flywheel.evalset.stats import (
    StatsInputError,
    normal_half_width,
    normal_interval,
    resolution_bounds,
    wald_interval,
    wilson_interval,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint


def test_zero_of_fifty_upper_limit_is_7_13_percent() -> None:
    # 13.5.2 (line 284) and figure 4B (line 340): 0 of 50 -> upper z^2/(50+z^2) = 7.13 %.
    iv = wilson_interval(0, 50)
    z = 1.959963984540054
    assert iv.lo == 0.0
    assert iv.hi == pytest.approx(z**2 / (50 + z**2), rel=1e-12)
    assert round(iv.hi * 100, 2) == 7.13
    assert iv.point == 0.0


def test_figure_4b_wald_breaks_where_wilson_does_not() -> None:
    # Line 340: Wald collapses at 0 of 50, goes below zero at 2 of 50, nearly coincides at 25.
    wald0 = wald_interval(0, 50)
    assert wald0.lo == wald0.hi == 0.0
    assert wald_interval(2, 50).lo < 0 <= wilson_interval(2, 50).lo
    w25, wald25 = wilson_interval(25, 50), wald_interval(25, 50)
    assert abs(w25.lo - wald25.lo) < 0.01 and abs(w25.hi - wald25.hi) < 0.01  # within a point


def test_half_widths_at_one_hundred_tasks() -> None:
    # Line 338: p = 0.5, n = 100: normal half-width about 9.8 points, Wilson 9.6.
    assert round(float(normal_half_width(0.5, 100)) * 100, 1) == 9.8
    iv = wilson_interval(50, 100)
    assert round((iv.hi - iv.lo) / 2 * 100, 1) == 9.6


def test_matches_statsmodels_and_scipy_vectorised() -> None:
    n = np.array([1, 2, 7, 50, 50, 50, 150, 1000])
    x = np.array([0, 1, 3, 0, 2, 25, 88, 999])
    for conf in (0.8, 0.95, 0.99):
        iv = wilson_interval(x, n, conf)
        lo, hi = proportion_confint(x, n, alpha=1 - conf, method="wilson")
        np.testing.assert_allclose(iv.lo, lo, atol=1e-12)
        np.testing.assert_allclose(iv.hi, hi, atol=1e-12)
        for xi, ni, li, hi_ in zip(x, n, iv.lo, iv.hi, strict=True):
            ref = binomtest(int(xi), int(ni)).proportion_ci(confidence_level=conf, method="wilson")
            assert li == pytest.approx(ref.low, abs=1e-12)
            assert hi_ == pytest.approx(ref.high, abs=1e-12)


def test_n0_and_n1() -> None:
    iv = wilson_interval(0, 0)
    assert (iv.lo, iv.hi) == (0.0, 1.0) and np.isnan(iv.point)
    fail, win = wilson_interval(0, 1), wilson_interval(1, 1)
    assert fail.lo == 0.0 and fail.hi == pytest.approx(0.7935, abs=1e-4)
    assert win.hi == 1.0 and win.lo == pytest.approx(1 - 0.7935, abs=1e-4)
    assert np.isnan(wald_interval(0, 0).point)


@pytest.mark.parametrize(
    ("x", "n", "conf"),
    [
        (-1, 5, 0.95),
        (6, 5, 0.95),
        (1.5, 5, 0.95),
        (1, 5, 1.0),
        (1, 5, 0.0),
        (float("nan"), 5, 0.95),
    ],
)
def test_bad_input_is_a_user_error(x: float, n: int, conf: float) -> None:
    with pytest.raises(StatsInputError):
        wilson_interval(x, n, conf)
    with pytest.raises(ValueError):  # also a ValueError for numeric callers
        wilson_interval(x, n, conf)


def test_four_verdict_bounds() -> None:
    # 13.2.3: unresolved stay in n, count as not accepted, and both resolutions are reported.
    rb = resolution_bounds(accepted=30, unresolved=5, n=50)
    assert rb.point == pytest.approx(0.6)
    assert rb.if_all_failed.point == pytest.approx(0.6)
    assert rb.if_all_accepted.point == pytest.approx(0.7)
    assert rb.lo == wilson_interval(30, 50).lo and rb.hi == wilson_interval(35, 50).hi
    assert rb.unresolved == 5
    empty = resolution_bounds(0, 0, 0)
    assert np.isnan(empty.point) and (empty.lo, empty.hi) == (0.0, 1.0)
    with pytest.raises(StatsInputError):
        resolution_bounds(30, 25, 50)


@settings(max_examples=100, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=5000),
    frac=st.floats(min_value=0, max_value=1),
    conf=st.floats(min_value=0.5, max_value=0.999),
)
def test_wilson_contains_point_and_stays_in_unit_interval(n: int, frac: float, conf: float) -> None:
    x = int(round(frac * n))
    iv = wilson_interval(x, n, conf)
    assert 0.0 <= iv.lo <= iv.point <= iv.hi <= 1.0
    assert iv.hi > iv.lo  # never collapses, unlike Wald


@settings(max_examples=100, deadline=None)
@given(n=st.integers(min_value=2, max_value=2000), frac=st.floats(min_value=0, max_value=1))
def test_wilson_narrows_with_more_data_at_same_rate(n: int, frac: float) -> None:
    x = int(round(frac * n))
    assert wilson_interval(4 * x, 4 * n).width < wilson_interval(x, n).width


def test_leaderboard_gap_needs_about_five_points() -> None:
    # Line 294: with standard errors near two points, two independent systems need a
    # gap of about 5 points (z * sqrt(2) * 2 = 5.5) before a test separates them.
    gap = normal_interval(0.0, np.sqrt(2) * 0.02).hi
    assert 0.05 < gap < 0.06


def test_exercise_2_clean_record() -> None:
    # Exercise 2 (line 542): 60 clean tasks; Wald collapses, Wilson does not; pricing the
    # Wilson upper limit at $12,000 per wrong change against a $20 approval.
    assert wald_interval(0, 60).hi == 0.0
    upper = wilson_interval(0, 60).hi
    assert upper * 12_000 > 20
    n = np.arange(60, 10_000)
    clean = n[np.asarray(wilson_interval(0, n).hi) * 12_000 < 20][0]  # vectorised over n
    assert clean == 2302
