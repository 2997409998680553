"""Graders reading side-effect analysis against a task's scope: state gaps, scope violations."""

from __future__ import annotations

from typing import Any

from flywheel.evalset import GraderSpec, GradingContext, Task, Trial, Verdict, build_grader


def _trial(**obs: Any) -> Trial:
    return Trial.model_validate(
        {
            "trial_id": "r1",
            "task_id": "t1",
            "config": {"id": "c"},
            "environment_id": "e",
            "observations": obs,
        }
    )


def _grade(name: str, args: dict[str, Any], trial: Trial) -> Any:
    task = Task.model_validate(
        {
            "task_id": "t1",
            "criteria": [
                {"id": "c", "kind": "custom", "grader": {"name": "recorded", "args": {"key": "c"}}}
            ],
        }
    )
    return build_grader(GraderSpec(name=name, args=args), GradingContext())(task, trial)


def test_omissions_and_wrong_values_fail_the_state_criterion() -> None:
    snap = {"orders": {"O1": {"status": "cancelled"}}}
    assertion = {"path": "/orders/O1/status", "op": "equals", "value": "cancelled"}
    ok = _trial(snapshot=snap, side_effects={"omission": 0, "wrong_value": 0})
    assert _grade("state", {"assertions": [assertion]}, ok).verdict is Verdict.PASS
    missed = _trial(snapshot=snap, side_effects={"omission": 1, "wrong_value": 0})
    g = _grade("state", {"assertions": [assertion]}, missed)
    assert g.verdict is Verdict.FAIL and "1 omission" in g.reason
    wrong = _trial(side_effects={"omission": 0, "wrong_value": 2})
    g = _grade("state", {}, wrong)
    assert g.verdict is Verdict.FAIL and "2 wrong value" in g.reason
    assert _grade("state", {}, _trial()).verdict is Verdict.UNKNOWN
    off = {"assertions": [assertion], "expected_changes": False}
    assert _grade("state", off, missed).verdict is Verdict.PASS


def test_scope_violations_fail_the_side_effect_criterion_by_default() -> None:
    summary = {"resource_creation": 1, "scope_violation": 1, "scope_violation:bookings": 1}
    g = _grade("side-effect", {}, _trial(side_effects=summary))
    assert g.verdict is Verdict.FAIL and "scope_violation: 1" in g.reason
    excused = {"allowed": {"scope_violation:bookings": 1}}
    assert _grade("side-effect", excused, _trial(side_effects=summary)).verdict is Verdict.PASS
    only_critical = {"forbidden": ["external_communication"]}
    assert (
        _grade("side-effect", only_critical, _trial(side_effects=summary)).verdict is Verdict.PASS
    )
