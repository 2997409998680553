"""Sample sizes and detectable effects (acceptance-and-statistics 13.5.3, eq. 3; 22.5)."""

from __future__ import annotations

import numpy as np
import pytest
from flywheel.evalset.stats import (
    StatsInputError,
    minimum_detectable_effect,
    noninferiority_pairs,
    normal_half_width,
    tasks_for_half_width,
    tasks_per_arm,
)
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize


def test_eq3_counts() -> None:
    # Line 338: p = 0.5, 5 % two-sided, 80 % power: about 2,450 per arm for 4 points,
    # 9,800 for 2 points.
    four = tasks_per_arm(0.5, 0.04)
    two = tasks_per_arm(0.5, 0.02)
    assert abs(four - 2450) <= 5 and abs(two - 9800) <= 15
    np.testing.assert_array_equal(tasks_per_arm(0.5, np.array([0.04, 0.02])), [four, two])
    # Same order as statsmodels' arcsine-based power solver at p near 0.5.
    es = proportion_effectsize(0.52, 0.48)
    ref = NormalIndPower().solve_power(es, alpha=0.05, power=0.8, ratio=1.0)
    assert four == pytest.approx(ref, rel=0.01)


def test_half_width_counts() -> None:
    # Line 338: a 2-point half-width at p = 0.5 needs 2,401 tasks; 100 tasks give 9.8.
    assert tasks_for_half_width(0.5, 0.02) == 2401
    assert round(float(normal_half_width(0.5, 100)), 3) == 0.098
    # Halving the margin needs four times the tasks.
    assert tasks_for_half_width(0.5, 0.01) == 4 * 2401


def test_mde_22_5() -> None:
    # Line 608: SE 0.0653 -> 80 %-power MDE about 0.183.
    assert round(minimum_detectable_effect(0.0652791), 3) == 0.183


def test_noninferiority_plan_and_errors() -> None:
    assert noninferiority_pairs(0.0, 0.2, 0.02, power=0.5) == 1921  # "about 1,900"
    with pytest.raises(StatsInputError):
        noninferiority_pairs(-0.03, 0.2, 0.02)  # planned loss beyond the margin
    with pytest.raises(StatsInputError):
        noninferiority_pairs(0.3, 0.2, 0.02)  # discordance below |gain|
    with pytest.raises(StatsInputError):
        tasks_per_arm(0.5, 0.0)
    with pytest.raises(StatsInputError):
        tasks_per_arm(0.5, 0.04, power=1.0)
    assert normal_half_width(0.5, 0) == np.inf  # n = 0
