"""Disparate error burden and primary failure category (traces-to-release-gate 22.6)."""

from __future__ import annotations

import numpy as np
import pytest
from flywheel.evalset.stats import (
    FAILURE_ORDER,
    StatsInputError,
    error_burden,
    partial_credit,
    primary_failure,
)


def _rows(
    schema: bool = True, state: bool = True, policy: bool = True, judge: bool = True
) -> list[bool]:
    return [schema, state, policy, judge]  # FAILURE_ORDER column order


def test_two_slices_equal_success_opposite_harm() -> None:
    # Lines 777-778: both slices at 0.75; returns-desk 2 policy violations,
    # billing-desk 2 poor explanations.
    checks = [_rows()] * 6 + [_rows(policy=False)] * 2 + [_rows()] * 6 + [_rows(judge=False)] * 2
    slices = ["returns-desk"] * 8 + ["billing-desk"] * 8
    burden = error_burden(slices, primary_failure(np.array(checks)))
    assert list(burden) == ["billing-desk", "returns-desk"]
    assert burden["billing-desk"].success.point == pytest.approx(0.75)
    assert burden["returns-desk"].success.point == pytest.approx(0.75)
    assert burden["billing-desk"].failures == {"poor_explanation": 2}
    assert burden["returns-desk"].failures == {"policy_violation": 2}
    assert burden["returns-desk"].dominant_failure == "policy_violation"
    assert burden["returns-desk"].failure_rates["policy_violation"].point == pytest.approx(0.25)


def test_refund_en_failures() -> None:
    # Lines 74 and 808-811: refund-en candidate trials; trial 2 skipped the lookup
    # (policy), trial 3 wrote a poor explanation.
    checks = {
        "malformed_output": [True, True, True, True],
        "wrong_final_state": [True, True, True, True],
        "policy_violation": [True, True, False, True],
        "poor_explanation": [True, True, True, False],
    }
    primary = primary_failure(checks)
    assert primary.tolist() == [None, None, "policy_violation", "poor_explanation"]


def test_earliest_boundary_wins() -> None:
    # A trial that is malformed and also violates policy is counted once, as malformed.
    assert FAILURE_ORDER[0] == "malformed_output"
    got = primary_failure(np.array([[False, True, False, False], [True, False, False, True]]))
    assert got.tolist() == ["malformed_output", "wrong_final_state"]


def test_n0_n1_and_bad_input() -> None:
    assert error_burden([], []) == {}  # n = 0
    one = error_burden(["solo"], [None])  # n = 1
    assert (
        one["solo"].n == 1
        and one["solo"].success.point == 1.0
        and one["solo"].dominant_failure is None
    )
    with pytest.raises(StatsInputError):
        error_burden(["a", "b"], [None])
    with pytest.raises(StatsInputError):
        primary_failure(np.ones((3, 2), dtype=bool))


def test_partial_credit_is_a_separate_number() -> None:
    # Playbook: seven of eight checkpoints scores 0.875 partial, but the terminal verdict fails.
    passed = [True] * 7 + [False]
    assert partial_credit(passed) == pytest.approx(0.875)
    assert partial_credit(passed, weights=[0] * 7 + [1]) == 0.0
    np.testing.assert_allclose(partial_credit([[True, False], [True, True]]), [0.5, 1.0])
    with pytest.raises(StatsInputError):
        partial_credit([True, False], weights=[1])
