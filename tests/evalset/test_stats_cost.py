"""Pricing acceptance (acceptance-and-statistics 13.5.5, eq. 6, napkin 13.3; playbook)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from flywheel.evalset.stats import (
    StatsInputError,
    budgeted_acceptance,
    candidates_for_availability,
    checking_cost_crossover,
    cost_adjusted_utility,
    cost_per_accepted_task,
    selection_costs,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def test_napkin_13_3() -> None:
    # Line 434: p = 0.4, cap 3, generation $0.03, checking $0.01.
    s = selection_costs(0.4, 3, 0.03, 0.01)
    assert round(s.availability * 100, 1) == 78.4
    assert s.batch_cost_per_trial == pytest.approx(0.12)
    assert round(s.expected_sequential_candidates, 2) == 1.96
    assert s.sequential_cost_per_trial == pytest.approx(0.0784)
    assert round(s.batch_cost_per_accepted, 3) == 0.153
    assert s.sequential_cost_per_accepted == pytest.approx(0.10)
    # Line 436 and 13.6 (line 470): a 53 percent batch premium.
    assert round(s.batch_premium * 100) == 53
    # Generate-all-then-stop-checking falls between the two.
    assert (
        s.sequential_cost_per_accepted
        < s.generate_all_cost_per_accepted
        < s.batch_cost_per_accepted
    )
    assert s.generate_all_cost_per_trial == pytest.approx(3 * 0.03 + 1.96 * 0.01)
    # Line 436: doubling p halves the sequential cost to $0.05, whatever the cap.
    assert selection_costs(0.8, 3, 0.03, 0.01).sequential_cost_per_accepted == pytest.approx(0.05)
    assert selection_costs(0.4, 10, 0.03, 0.01).sequential_cost_per_accepted == pytest.approx(0.10)


def test_exercise_5_generators() -> None:
    # Exercise 5 (line 548): checker $0.04; A p=0.3 at $0.05, B p=0.5 at $0.12.
    a, b = selection_costs([0.3, 0.5], 4, [0.05, 0.12], 0.04).sequential_cost_per_accepted
    assert (a, b) == (pytest.approx(0.30), pytest.approx(0.32))
    avail = selection_costs([0.3, 0.5], 4, [0.05, 0.12], 0.04).availability
    assert avail[0] < 0.9 <= avail[1]
    assert candidates_for_availability(0.3, 0.9) == 7
    assert candidates_for_availability(np.array([0.3, 0.5, 1.0]), 0.9).tolist() == [7, 4, 1]
    assert checking_cost_crossover(0.3, 0.05, 0.5, 0.12) == pytest.approx(0.055)
    rich = selection_costs([0.3, 0.5], 4, [0.05, 0.12], 0.20).sequential_cost_per_accepted
    assert rich[1] < rich[0]  # past the crossover the better generator wins


def test_cost_per_accepted_charges_failures() -> None:
    res = cost_per_accepted_task([0.1, 0.2, 0.3, 0.4], [1, 0, 1, 0])
    assert res.total_cost == pytest.approx(1.0) and res.n_accepted == 2 and res.n_trials == 4
    assert res.value == pytest.approx(0.5)
    assert res.mean_cost_accepted == pytest.approx(0.2)
    none = cost_per_accepted_task([0.5, 0.5], [False, False])
    assert none.value == math.inf and none.total_cost == 1.0 and none.n_accepted == 0
    empty = cost_per_accepted_task([], [])  # n = 0
    assert math.isnan(empty.value) and empty.n_trials == 0
    assert cost_per_accepted_task([0.3], [True]).value == pytest.approx(0.3)  # n = 1
    with pytest.raises(StatsInputError):
        cost_per_accepted_task([0.1, float("nan")], [1, 0])
    with pytest.raises(StatsInputError):
        cost_per_accepted_task([0.1, -1], [1, 0])


def test_budgeted_acceptance() -> None:
    iv = budgeted_acceptance([1.0, 2.0, 5.0, 0.5], [1, 1, 1, 0], ceiling=2.0)
    assert iv.point == pytest.approx(0.5)  # the $5 acceptance overspent
    assert np.isnan(budgeted_acceptance([], [], 1.0).point)
    with pytest.raises(StatsInputError):
        budgeted_acceptance([1.0], [1], ceiling=-1)


def test_cost_adjusted_utility() -> None:
    # Playbook: lambda = 0 lets the expensive configuration win; any lambda > 0 can flip it.
    quality = np.array([0.62, 0.60])
    cost = np.array([4.0, 0.02])
    assert np.argmax(cost_adjusted_utility(quality, cost, 0.0)) == 0
    assert np.argmax(cost_adjusted_utility(quality, cost, 0.01)) == 1


def test_bad_selection_input() -> None:
    with pytest.raises(StatsInputError):
        selection_costs(0.0, 3, 0.03, 0.01)
    with pytest.raises(StatsInputError):
        selection_costs(0.4, 0, 0.03, 0.01)
    with pytest.raises(StatsInputError):
        checking_cost_crossover(0.3, 0.05, 0.3, 0.12)


@settings(max_examples=100, deadline=None)
@given(
    costs=st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=40),
    data=st.data(),
)
def test_cost_per_accepted_never_below_mean_of_successes(
    costs: list[float], data: st.DataObject
) -> None:
    accepted = data.draw(st.lists(st.booleans(), min_size=len(costs), max_size=len(costs)))
    res = cost_per_accepted_task(costs, accepted)
    if res.n_accepted:
        assert res.value >= res.mean_cost_accepted - 1e-9


@settings(max_examples=100, deadline=None)
@given(
    p=st.floats(min_value=0.01, max_value=1),
    k=st.integers(min_value=1, max_value=20),
    g=st.floats(min_value=0, max_value=1),
    c=st.floats(min_value=0, max_value=1),
)
def test_sequential_never_dearer_than_batch(p: float, k: int, g: float, c: float) -> None:
    s = selection_costs(p, k, g, c)
    assert s.sequential_cost_per_accepted <= s.batch_cost_per_accepted + 1e-12
    assert s.expected_sequential_candidates <= k + 1e-12
