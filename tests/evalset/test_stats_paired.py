"""Paired comparison: table 4 and napkin 13.1 of acceptance-and-statistics 13.5.3."""

from __future__ import annotations

import numpy as np
import pytest
from flywheel.evalset.stats import (
    StatsInputError,
    mcnemar_exact,
    newcombe_paired_interval,
    noninferiority_pairs,
    paired_counts,
    paired_normal_interval,
    pairing_gain,
    pairs_to_clear_margin,
    wilson_interval,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar

# Table 4 (line 300-305): n11 = 70, baseline-only b = 12, candidate-only c = 18, n00 = 50.
TABLE4 = (70, 12, 18, 50)


def test_table4_method10_interval() -> None:
    # Napkin 13.1 (line 326): gain 4 points, method 10 gives -3.21 to 11.12 points.
    iv = newcombe_paired_interval(*TABLE4)
    assert iv.point == pytest.approx(0.04)
    assert round(iv.lo * 100, 2) == -3.21
    assert round(iv.hi * 100, 2) == 11.12
    assert round((iv.point - iv.lo) * 100, 2) == 7.21  # lower half-width
    # Line 328: lower limit below -2 points (gate not met) and interval includes 0.
    assert iv.lo < -0.02 and iv.lo < 0 < iv.hi


def test_table4_exact_mcnemar() -> None:
    # Line 328: exact two-sided McNemar 0.362.
    p = mcnemar_exact(12, 18)
    assert round(p, 3) == 0.362
    table = [[70, 12], [18, 50]]
    assert p == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
    assert p == pytest.approx(binomtest(12, 30, 0.5).pvalue, rel=1e-12)


def test_mcnemar_vectorised_and_edges() -> None:
    b = np.array([0, 0, 1, 6, 12, 40])
    c = np.array([0, 1, 0, 16, 18, 3])
    got = mcnemar_exact(b, c)
    for bi, ci, pi in zip(b, c, got, strict=True):
        ref = mcnemar([[0, bi], [ci, 0]], exact=True).pvalue
        assert pi == pytest.approx(ref, rel=1e-12)
    assert mcnemar_exact(0, 0) == 1.0  # n = 0 discordant pairs
    assert mcnemar_exact(1, 0) == 1.0  # n = 1
    with pytest.raises(StatsInputError):
        mcnemar_exact(-1, 3)


def test_table4_normal_interval_and_pairing_gain() -> None:
    # Line 342: "20 percent discordant pairs".
    assert (TABLE4[1] + TABLE4[2]) / sum(TABLE4) == pytest.approx(0.20)
    # Line 342: normal approximation about +/-7.1 points; paired variance about 40 %
    # of two independent arms; line 458: unpaired needs roughly 2.5x the tasks.
    iv = paired_normal_interval(*TABLE4)
    assert round((iv.hi - iv.point) * 100, 1) == 7.1
    gain = pairing_gain(*TABLE4)
    assert round(1 / gain.ratio, 2) == pytest.approx(0.40, abs=0.01)
    assert round(gain.ratio, 1) == 2.5
    assert gain.equivalent_independent_tasks == pytest.approx(150 * gain.ratio)


def test_napkin_13_1_planning_counts() -> None:
    # Line 330: about 217 pairs centre the lower limit on the margin.
    iv = newcombe_paired_interval(*TABLE4)
    assert pairs_to_clear_margin(150, iv.point, iv.lo, 0.02) == 217
    # Line 330: true gain 0 needs the half-width inside 2 points: about 1,900 pairs
    # (discordance 0.2, no power quantile).
    n0 = noninferiority_pairs(0.0, 0.2, 0.02, power=0.5)
    assert 1850 <= n0 <= 1950 and n0 == 1921
    # A powered plan adds z_power and asks for more.
    assert noninferiority_pairs(0.0, 0.2, 0.02, power=0.8) > n0
    assert noninferiority_pairs(0.04, 0.2, 0.02, power=0.5) < 217


def test_exercise_4_mcnemar_just_above_005_while_interval_excludes_zero() -> None:
    # Exercise 4 (line 546): 200 pairs, b = 6, c = 16; the text says the exact
    # McNemar value sits just above 0.05 while the paired interval excludes zero.
    p = mcnemar_exact(6, 16)
    assert 0.05 < p < 0.06
    assert paired_normal_interval(120, 6, 16, 58).lo > 0


def test_overlapping_marginal_intervals_hide_a_paired_signal() -> None:
    # 13.6 pitfall: separate Wilson intervals overlap on exercise 4's table.
    base = wilson_interval(126, 200)
    cand = wilson_interval(136, 200)
    assert cand.lo < base.hi


def test_paired_counts_from_outcomes() -> None:
    base = [1, 1, 0, 0, 1]
    cand = [1, 0, 1, 0, 1]
    assert paired_counts(base, cand) == (2, 1, 1, 1)
    with pytest.raises(StatsInputError):
        paired_counts([1, 0], [1])
    with pytest.raises(StatsInputError):
        paired_counts([1, 2], [1, 0])


def test_n0_and_n1() -> None:
    empty = newcombe_paired_interval(0, 0, 0, 0)
    assert (empty.lo, empty.hi) == (-1.0, 1.0) and np.isnan(empty.point)
    for cells in [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)]:
        iv = newcombe_paired_interval(*cells)
        assert -1.0 <= iv.lo <= iv.point <= iv.hi <= 1.0
        assert iv.hi - iv.lo > 1.0  # one pair says little
    assert np.isnan(paired_normal_interval(0, 0, 0, 0).point)


def test_vectorised_matches_scalar() -> None:
    cells = np.array([[70, 12, 18, 50], [120, 6, 16, 58], [5, 0, 0, 5], [0, 3, 9, 0]])
    iv = newcombe_paired_interval(cells[:, 0], cells[:, 1], cells[:, 2], cells[:, 3])
    for i, row in enumerate(cells):
        one = newcombe_paired_interval(*row)
        assert iv.lo[i] == pytest.approx(one.lo) and iv.hi[i] == pytest.approx(one.hi)


cells = st.tuples(*(st.integers(min_value=0, max_value=300) for _ in range(4))).filter(
    lambda t: sum(t) > 0
)


@settings(max_examples=100, deadline=None)
@given(cells=cells, conf=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_newcombe_contains_point_and_stays_in_range(
    cells: tuple[int, int, int, int], conf: float
) -> None:
    iv = newcombe_paired_interval(*cells, confidence=conf)
    assert -1.0 <= iv.lo <= iv.point + 1e-12
    assert iv.point - 1e-12 <= iv.hi <= 1.0
    assert 0.0 <= mcnemar_exact(cells[1], cells[2]) <= 1.0


@settings(max_examples=80, deadline=None)
@given(
    n11=st.integers(min_value=5, max_value=200),
    n10=st.integers(min_value=2, max_value=60),
    n01=st.integers(min_value=2, max_value=60),
    n00=st.integers(min_value=5, max_value=200),
    shift=st.integers(min_value=1, max_value=20),
)
def test_paired_interval_narrows_as_concordance_rises(
    n11: int, n10: int, n01: int, n00: int, shift: int
) -> None:
    # Moving s pairs from each discordant cell to the concordant cells keeps both
    # marginal counts and the difference fixed but raises within-pair dependence.
    s = min(shift, n10 - 1, n01 - 1)
    if s < 1:
        return
    wide = newcombe_paired_interval(n11, n10, n01, n00)
    narrow = newcombe_paired_interval(n11 + s, n10 - s, n01 - s, n00 + s)
    assert narrow.point == pytest.approx(wide.point)
    assert narrow.width <= wide.width + 1e-12


def test_method10_coverage_by_simulation() -> None:
    # Vectorised over 4,000 simulated 150-pair studies like table 4 (true gain +4 points):
    # nominal 95 % method-10 intervals should cover the true difference about 95 % of the time.
    rng = np.random.default_rng(2026)
    probs = [0.45, 0.08, 0.12, 0.35]  # n11, n10, n01, n00
    cells = rng.multinomial(150, probs, size=4000)
    iv = newcombe_paired_interval(cells[:, 0], cells[:, 1], cells[:, 2], cells[:, 3])
    truth = probs[2] - probs[1]
    coverage = np.mean((iv.lo <= truth) & (truth <= iv.hi))
    assert 0.93 <= coverage <= 0.97
    wilson = wilson_interval(cells[:, 0] + cells[:, 2], 150)
    covered = (wilson.lo <= 0.57) & (0.57 <= wilson.hi)
    assert 0.93 <= np.mean(covered) <= 0.97
