"""Attribution on the harness's reference agent: injected faults found by category and span.

The labels (``flywheel.sim.*``) are read only by ``score_faults``; the
attributor's loader drops them. One hazard at a time, so each faulty trial
has one expected answer.
"""

from __future__ import annotations

import pytest
from flywheel.attribution import load_trace, score_faults
from flywheel.harness import (
    HAZARDS,
    AgentSpec,
    SeamConfig,
    StoreSpanExporter,
    plan_trials,
    run_trials,
)

from flywheel import Store

#: Category-and-span accuracy floors per fault type (measured at 6 runs per task on
#: banking: 1.00 for all but misread_result, 0.97 -- a final answer that quotes a
#: neighbouring field of the result holds a real observed value, invisible without the
#: reference answer). Floors sit below the measured values: 2 runs are a small sample.
FLOORS = {
    "wrong_tool": 0.9,
    "forget_constraint": 0.9,
    "wrong_argument": 0.9,
    "skip_verification": 0.9,
    "misread_result": 0.85,
}


def _run(store: Store, hazard: str, runs: int = 2) -> list[str]:
    rates = {h: (0.4 if h == hazard else 0.0) for h in HAZARDS}
    specs = plan_trials(
        "agentdojo:banking",
        AgentSpec("reference", {"rates": rates}),
        runs=runs,
        seed=7,
        seams=SeamConfig.from_oracles([]),
    )
    records = run_trials(specs, StoreSpanExporter(store), workers=1)
    return [r.trace_id for r in records]


@pytest.mark.parametrize("hazard", sorted(FLOORS))
def test_injected_faults_are_attributed(store: Store, hazard: str) -> None:
    ids = _run(store, hazard)
    res = score_faults(store, ids)["per_fault"]
    assert hazard in res and res[hazard]["n"] >= 5, res
    assert res[hazard]["both_accuracy"] >= FLOORS[hazard], res
    assert res[hazard]["span_accuracy"] >= 0.75, res


def test_a_misread_is_derived_from_the_result_it_read(store: Store) -> None:
    """The injected misread is a near-copy or a neighbouring field of the previous result."""
    from flywheel.attribution import near_copy

    rates = {h: (1.0 if h == "misread_result" else 0.0) for h in HAZARDS}
    specs = plan_trials(
        "agentdojo:banking",
        AgentSpec("reference", {"rates": rates}),
        runs=1,
        seed=3,
        tasks=["user_task_3"],
        seams=SeamConfig.from_oracles([]),
    )
    (rec,) = run_trials(specs, StoreSpanExporter(store), workers=1)
    kinds = [f["detail"] for f in rec.faults if f["kind"] == "misread_result"]
    assert any(
        k.startswith(
            (
                "off by one",
                "digits transposed",
                "characters transposed",
                "truncated",
                "neighbouring field",
            )
        )
        for k in kinds
    ), rec.faults
    assert near_copy("GB29NWBK6016133192681", "GB29NWBK60161331926819") == "truncated"


def test_fault_labels_never_reach_the_attributor(store: Store) -> None:
    ids = _run(store, "wrong_tool", runs=1)
    for tid in ids:
        for s in load_trace(store, tid):
            assert not any(k.startswith("flywheel.sim.") for k in s.attributes)


def test_successful_trials_get_no_failure_category(store: Store) -> None:
    """A trial the grader accepted (no fault injected) is not given a failure (issue 23)."""
    from flywheel.attribution import attribute_trace

    rates = dict.fromkeys(HAZARDS, 0.0)
    specs = plan_trials(
        "agentdojo:banking",
        AgentSpec("reference", {"rates": rates}),
        runs=1,
        seed=7,
        tasks=["user_task_0", "user_task_3", "user_task_5"],
        seams=SeamConfig.from_oracles([]),
    )
    records = run_trials(specs, StoreSpanExporter(store), workers=1)
    accepted = [r for r in records if r.utility]
    assert accepted
    for rec in accepted:
        a = attribute_trace(store, rec.trace_id)
        assert not a.failed and a.category == "undetermined", a
