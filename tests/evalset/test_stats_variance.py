"""Variance components and runs-vs-tasks allocation (acceptance-and-statistics 13.5.1, eq. 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from flywheel.evalset.stats import (
    StatsInputError,
    allocate_runs,
    variance_components,
    variance_of_estimate,
    within_task_variance,
)


def test_exercise_1_designs() -> None:
    # Exercise 1 (line 540): mean 0.6, sigma_b^2 = 0.08.
    within = within_task_variance(0.6, 0.08)
    assert within == pytest.approx(0.16)
    assert within / 0.08 == pytest.approx(2.0)  # repeats past 2 leave the task term dominant
    se = {r: math.sqrt(variance_of_estimate(0.08, within, 600 // r, r)) for r in (1, 3, 6)}
    assert round(se[1], 4) == 0.02 and round(se[3], 4) == 0.0258 and round(se[6], 4) == 0.0327
    # Free fixtures: one run per task wins (13.5.1, line 264).
    free = allocate_runs(0.08, within, 600)
    assert (free.runs_per_task, free.n_tasks) == (1, 600)
    # A fixture costing 10 runs moves the best design to R = 5, N = 40.
    costly = allocate_runs(0.08, within, 600, fixture_cost=10)
    assert (costly.runs_per_task, costly.n_tasks) == (5, 40)
    assert costly.variance == pytest.approx(0.08 / 40 + 0.16 / 200)
    assert costly.continuous_optimum == pytest.approx(math.sqrt(20))
    table = {int(r): (int(n), v) for r, n, v in costly.candidates}
    assert table[1][0] == 54 and table[4][0] == 42 and table[6][0] == 37
    assert all(costly.variance <= v for _, v in table.values())


def test_vectorised_eq1() -> None:
    got = variance_of_estimate(0.08, 0.16, np.array([600, 200, 100]), np.array([1, 3, 6]))
    np.testing.assert_allclose(got, [0.0004, 0.08 / 200 + 0.16 / 600, 0.08 / 100 + 0.16 / 600])


def test_components_recover_a_known_population() -> None:
    rng = np.random.default_rng(12)
    p = rng.beta(2, 2, size=4000)  # Var(p) = 0.05, E[p(1-p)] = 0.2
    runs = (rng.random((4000, 5)) < p[:, None]).astype(int)
    vc = variance_components(runs)
    assert vc.between == pytest.approx(0.05, abs=0.006)
    assert vc.within == pytest.approx(0.20, abs=0.006)
    assert vc.ratio == pytest.approx(4.0, rel=0.2)
    assert vc.n_tasks == 4000 and vc.runs_per_task == 5
    assert vc.variance_of_mean == pytest.approx(vc.between / 4000 + vc.within / 20000)


def test_deterministic_tasks_have_no_within_variance() -> None:
    vc = variance_components([[1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0]])
    assert vc.within == 0.0 and vc.between == pytest.approx(1 / 3)
    assert vc.ratio == 0.0


def test_n0_n1_and_bad_input() -> None:
    with pytest.raises(StatsInputError):
        variance_components([])  # n = 0
    one = variance_components([[1, 0, 1, 1]])  # n = 1 task
    assert math.isnan(one.between) and one.within == pytest.approx(0.25)
    single_runs = variance_components([[1], [0], [1]])
    assert math.isnan(single_runs.within) and math.isnan(single_runs.between)
    ragged = variance_components([[1, 0], [1, 1, 1, 0], [0]])
    assert ragged.n_tasks == 3 and math.isfinite(ragged.within)
    with pytest.raises(StatsInputError):
        within_task_variance(0.5, 0.3)  # between exceeds p(1-p)
    with pytest.raises(StatsInputError):
        allocate_runs(0.08, 0.16, 5, fixture_cost=10)
    with pytest.raises(StatsInputError):
        variance_of_estimate(0.08, 0.16, 0, 1)
