"""Grader noise (playbook, "The grader is a noisy instrument")."""

from __future__ import annotations

import numpy as np
import pytest
from flywheel.evalset.stats import (
    StatsInputError,
    corrected_interval,
    corrected_rate,
    grader_slope,
    measured_rate,
    run_inflation,
    wilson_interval,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def test_playbook_figures() -> None:
    # alpha 8 %, beta 15 %: slope 0.77, 1.7x the runs; alpha 20 %, beta 25 %: 0.55, 3.3x.
    assert grader_slope(0.08, 0.15) == pytest.approx(0.77)
    assert round(run_inflation(0.08, 0.15), 1) == 1.7
    assert grader_slope(0.20, 0.25) == pytest.approx(0.55)
    assert round(run_inflation(0.20, 0.25), 1) == 3.3


def test_floor_ceiling_and_compression() -> None:
    assert measured_rate(0.0, 0.08, 0.15) == pytest.approx(0.08)  # floor alpha
    assert measured_rate(1.0, 0.08, 0.15) == pytest.approx(0.85)  # ceiling 1 - beta
    gap = measured_rate(0.6, 0.08, 0.15) - measured_rate(0.5, 0.08, 0.15)
    assert gap == pytest.approx(0.77 * 0.1)


def test_correction_and_interval() -> None:
    iv = wilson_interval(40, 100)
    fixed = corrected_interval(iv, 0.08, 0.15)
    assert fixed.point == pytest.approx((0.4 - 0.08) / 0.77)
    assert fixed.width == pytest.approx(iv.width / 0.77)
    assert corrected_rate(0.05, 0.08, 0.15) == 0.0  # below the floor: clipped
    with pytest.raises(StatsInputError):
        run_inflation(0.6, 0.5)
    with pytest.raises(StatsInputError):
        measured_rate(1.2, 0.1, 0.1)


@settings(max_examples=80, deadline=None)
@given(
    pi=st.floats(min_value=0, max_value=1),
    alpha=st.floats(min_value=0, max_value=0.45),
    beta=st.floats(min_value=0, max_value=0.45),
)
def test_correction_inverts_the_noise_model(pi: float, alpha: float, beta: float) -> None:
    m = measured_rate(pi, alpha, beta)
    assert corrected_rate(m, alpha, beta) == pytest.approx(pi, abs=1e-9)
    assert min(alpha, 1 - beta) - 1e-12 <= m <= max(alpha, 1 - beta) + 1e-12
    assert np.isfinite(run_inflation(alpha, beta))
