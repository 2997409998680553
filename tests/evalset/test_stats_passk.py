"""pass@k and pass^k (acceptance-and-statistics 13.5.4, 13.6; traces-to-release-gate 22.4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from flywheel.evalset.stats import (
    StatsInputError,
    mean_pass_at_k,
    mean_pass_hat_k,
    pass_at_k,
    pass_at_k_from_rate,
    pass_at_k_interval,
    pass_hat_k,
    pass_hat_k_from_rate,
    pass_hat_k_interval,
    pass_hat_k_variance_approx,
    rate_for_consistency,
    task_counts,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def test_section_22_4_table() -> None:
    # Lines 464-466: c/n, pass@2, pass^2 for four trials.
    expected = {4: (1.000, 1.000), 3: (1.000, 0.500), 2: (0.833, 0.167)}
    for c, (at2, hat2) in expected.items():
        assert round(pass_at_k(4, c, 2), 3) == at2
        assert round(pass_hat_k(4, c, 2), 3) == hat2
    # Vectorised over tasks.
    np.testing.assert_allclose(pass_hat_k([4, 4, 4], [4, 3, 2], 2), [1.0, 0.5, 1 / 6])


def test_napkin_13_2_and_fallacy_13_6() -> None:
    # Line 376: p = 0.9, k = 8 -> about 43 %; at 0.8 about 17 %; 90 % needs 98.7 %.
    assert round(pass_hat_k_from_rate(0.9, 8), 2) == 0.43
    assert round(pass_hat_k_from_rate(0.8, 8), 2) == 0.17
    assert pass_at_k_from_rate(0.9, 8) > 0.9999999  # "effectively 100 percent"
    assert round(rate_for_consistency(0.9, 8) * 100, 1) == 98.7
    # Line 378: 95 % per run lifts pass^8 only to 66 %; 1.3 % failure is a 7.6x cut.
    assert round(pass_hat_k_from_rate(0.95, 8), 2) == 0.66
    fail = 1 - rate_for_consistency(0.9, 8)
    assert round(fail * 100, 1) == 1.3
    assert round(0.1 / fail, 1) == 7.6


def test_22_4_p08_pass_at_8_essentially_certain() -> None:
    # Line 397: p = 0.8: pass@8 essentially certain, pass^8 about 0.17.
    assert pass_at_k_from_rate(0.8, 8) == pytest.approx(1 - 0.2**8)
    assert round(pass_hat_k_from_rate(0.8, 8), 2) == 0.17


def test_jensen_example_line_384() -> None:
    # Two equally likely task types at 0.5 and 0.9: repeating one task twice
    # passes 53 %, two fresh tasks pass 49 %.
    p = np.array([0.5, 0.9])
    assert round(float(np.mean(pass_hat_k_from_rate(p, 2))), 2) == 0.53
    assert round(float(np.mean(p)) ** 2, 2) == 0.49
    # Playbook: the second-order read-out is exact at k = 2.
    assert pass_hat_k_variance_approx(0.7, np.var(p), 2) == pytest.approx(0.53)


def test_estimators_match_math_comb() -> None:
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                at = 1 - math.comb(n - c, k) / math.comb(n, k)
                hat = math.comb(c, k) / math.comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(at, abs=1e-12)
                assert pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-12)
    # Large n does not overflow (product form).
    assert pass_hat_k(10_000, 9_000, 8) == pytest.approx(
        math.comb(9000, 8) / math.comb(10000, 8), rel=1e-9
    )


def test_average_per_task_never_pooled() -> None:
    # 22.4: per-task estimates averaged over tasks, not pooled successes.
    runs = [[1, 1, 1, 1, 1, 1, 1, 1], [0, 1]]
    n, c = task_counts(runs)
    assert n.tolist() == [8, 2] and c.tolist() == [8, 1]
    assert mean_pass_hat_k(n, c, 1) == pytest.approx(0.75)  # pooled would say 0.9
    assert mean_pass_at_k(n, c, 2) == pytest.approx(1.0)
    assert mean_pass_hat_k(n, c, 2) == pytest.approx(0.5)
    assert mean_pass_hat_k(n, c, 1, weights=[1, 3]) == pytest.approx(0.625)


def test_n0_n1_and_bad_input() -> None:
    assert pass_hat_k(1, 1, 1) == 1.0 and pass_at_k(1, 0, 1) == 0.0  # n = 1
    with pytest.raises(StatsInputError):
        pass_hat_k(0, 0, 1)  # n = 0: no runs to draw from
    with pytest.raises(StatsInputError):
        pass_at_k(4, 5, 2)
    with pytest.raises(StatsInputError):
        pass_at_k(4, 2, 5)
    with pytest.raises(StatsInputError):
        pass_hat_k(4, 2, 0)
    with pytest.raises(StatsInputError):
        mean_pass_hat_k([], [], 1)
    with pytest.raises(StatsInputError):
        task_counts([[1, 2]])
    with pytest.raises(StatsInputError):
        pass_hat_k_from_rate(1.2, 2)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(min_value=2, max_value=60), data=st.data())
def test_pass_hat_k_falls_and_pass_at_k_rises_with_k(n: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(min_value=0, max_value=n))
    ks = np.arange(1, n + 1)
    at = pass_at_k(n, c, ks)
    hat = pass_hat_k(n, c, ks)
    assert np.all(np.diff(at) >= -1e-12)
    assert np.all(np.diff(hat) <= 1e-12)
    assert np.all((at >= 0) & (at <= 1)) and np.all((hat >= 0) & (hat <= 1))
    assert at[0] == pytest.approx(c / n) and hat[0] == pytest.approx(c / n)
    assert np.all(hat <= at + 1e-12)


@settings(max_examples=100, deadline=None)
@given(p=st.floats(min_value=0, max_value=1), k=st.integers(min_value=1, max_value=30))
def test_rate_forms_monotone_in_k(p: float, k: int) -> None:
    assert pass_hat_k_from_rate(p, k + 1) <= pass_hat_k_from_rate(p, k) + 1e-15
    assert pass_at_k_from_rate(p, k + 1) >= pass_at_k_from_rate(p, k) - 1e-15


def test_pass_k_with_task_level_intervals() -> None:
    # Issue 7: "pass^k with intervals". Baseline of the 22.x reconstruction: 12 tasks x 4.
    passes = [4, 3, 3, 4, 3, 3, 2, 3, 3, 3, 2, 2]
    hat = pass_hat_k_interval([4] * 12, passes, 2)
    at = pass_at_k_interval([4] * 12, passes, 2)
    assert hat.point == pytest.approx(mean_pass_hat_k([4] * 12, passes, 2))
    assert at.point == pytest.approx(mean_pass_at_k([4] * 12, passes, 2))
    assert 0 <= hat.lo < hat.point < hat.hi <= 1 and 0 <= at.lo <= at.point <= at.hi <= 1
    assert hat.hi < at.lo  # consistency sits well below availability here
    one = pass_hat_k_interval([4], [3], 2)  # n = 1 task: no population spread
    assert (one.lo, one.hi, one.point) == (0.0, 1.0, 0.5)
    with pytest.raises(StatsInputError):
        pass_hat_k_interval([], [], 1)  # n = 0
