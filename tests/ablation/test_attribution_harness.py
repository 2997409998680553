"""Attribution on the harness's reference agent: injected faults found by category and span.

The labels (``flywheel.sim.*``) are read only by ``score_faults``; the
attributor's loader drops them. One hazard at a time, so each faulty trial
has one expected answer.
"""

from __future__ import annotations

import pytest

from ablation import HAZARDS, AgentSpec, SeamConfig, StoreSpanExporter, plan_trials, run_trials
from ablation._attribution import load_trace
from ablation._attribution._faults import score_faults
from flywheel import Store

#: Category-and-span accuracy floors per fault type (measured well above them;
#: misread_result corrupts an argument exactly as wrong_argument does, so only its
#: span is identifiable in that half of its cases).
FLOORS = {
    "wrong_tool": 0.9,
    "forget_constraint": 0.9,
    "wrong_argument": 0.9,
    "skip_verification": 0.75,
    "misread_result": 0.4,
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
    if hazard != "misread_result":
        assert res[hazard]["span_accuracy"] >= 0.75, res


def test_fault_labels_never_reach_the_attributor(store: Store) -> None:
    ids = _run(store, "wrong_tool", runs=1)
    for tid in ids:
        for s in load_trace(store, tid):
            assert not any(k.startswith("flywheel.sim.") for k in s.attributes)
