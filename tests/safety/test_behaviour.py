"""Behavioural confidence recovers the injected truth of the safety simulation.

The ``safety_reference`` simulation with ``act_errors`` and
``difficulty="task"`` proposes a wrong call with probability 1 - p at each
write, p fixed per task position and recorded on the trace
(``flywheel.sim.p_true``, read only here), so the truth is known.
"""

from __future__ import annotations

import pytest
from flywheel.harness import AgentSpec, plan_trials, run_trials
from flywheel.safety import (
    Action,
    ReversibilityConfig,
    actions_from_spans,
    build_scorecard,
    estimated_violation,
    fit_behavioural,
    spans_from_readable,
    threshold_compliance,
    with_behavioural_confidence,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

SIM = {"act_errors": True, "difficulty": "task"}


def _run(suite: str, runs: int, seed: int, **args: object):
    exp = InMemorySpanExporter()
    specs = plan_trials(suite, AgentSpec("safety_reference", {**SIM, **args}), runs=runs, seed=seed)
    recs = run_trials(specs, exp)
    return recs, spans_from_readable(exp.get_finished_spans())


def _truth(rows, acts: list[Action]) -> float:
    p = {
        (r.trace_id, r.get("flywheel.sim.call_id")): float(r.get("flywheel.sim.p_true"))
        for r in rows
        if r.get("flywheel.sim.p_true")
    }
    alone = [a for a in acts if a.tier == "irreversible" and not a.escalated]
    return sum(p[(a.trace_id, a.call_id)] < a.p_star for a in alone) / len(alone)


def _inside(iv, truth: float) -> bool:
    return float(iv.lo) - 1e-9 <= truth <= float(iv.hi) + 1e-9


@pytest.fixture(scope="module")
def hidden():
    return _run("agentdojo:slack", 6, 0, expose_confidence=False)


def test_estimated_violation_matches_injected_truth(hidden) -> None:
    recs, rows = hidden
    acts = actions_from_spans(rows, ReversibilityConfig())
    assert acts and all(a.confidence is None for a in acts)  # nothing stated on the trace
    truth = _truth(rows, acts)
    est = estimated_violation(acts)
    assert est is not None and est.taken_alone > 30 and est.runs_per_group == 6
    assert _inside(est.violation_rate, truth), (est.violation_rate, truth)
    assert abs(est.violation_rate.point - truth) < 0.15


def test_estimated_confidence_is_calibrated_in_the_large(hidden) -> None:
    _, rows = hidden
    acts = with_behavioural_confidence(actions_from_spans(rows, ReversibilityConfig()))
    assert {a.confidence_source for a in acts} == {"estimated"}
    wrong = {
        (r.trace_id, r.get("flywheel.sim.call_id")): r.get("flywheel.sim.wrong") == "true"
        for r in rows
        if r.get("flywheel.sim.p_true")
    }
    correct = 1 - sum(wrong[(a.trace_id, a.call_id)] for a in acts) / len(acts)
    mean_est = sum(a.confidence for a in acts) / len(acts)
    assert abs(mean_est - correct) < 0.05, (mean_est, correct)


def test_stated_and_estimated_agree_on_the_same_behaviour() -> None:
    """Same seeds with the confidence stated: the Wilson interval covers the same truth."""
    _, rows = _run("agentdojo:slack", 6, 0)
    acts = actions_from_spans(rows, ReversibilityConfig())
    assert all(a.confidence_source == "stated" for a in acts)
    assert _inside(threshold_compliance(acts).violation_rate, _truth(rows, acts))


def test_scorecard_labels_the_estimate(hidden) -> None:
    recs, rows = hidden
    card = build_scorecard("agentdojo:slack", recs, rows)
    row = card.row("threshold_violation")
    assert row is not None and row.estimated and row.interval.startswith("bootstrap")
    assert "estimated from behaviour" in row.detail["confidence"]
    assert card.row("escalation_f1").estimated


def test_edge_cases() -> None:
    def act(task: str, proposal: str, trace: str) -> Action:
        return Action(
            trace, "c1", "send_money", "irreversible", 0.9, None, False, task, 0, proposal
        )

    # one run per task: nothing to compare
    assert fit_behavioural([act("t1", "a", "x"), act("t2", "b", "y")]) is None
    assert estimated_violation([act("t1", "a", "x")]) is None
    # four runs agree: x = k = 4, posterior Beta(4.5, 0.5)
    fit = fit_behavioural([act("t1", "a", str(i)) for i in range(4)])
    assert fit is not None and fit.mean(("0", "c1")) == pytest.approx(4.5 / 5)
    # two of four agree: posterior Beta(2.5, 2.5), almost surely below 0.9
    fit = fit_behavioural([act("t1", p, str(i)) for i, p in enumerate("aabc")])
    assert fit.mean(("0", "c1")) == pytest.approx(0.5)
    assert fit.p_below(("0", "c1"), 0.9) > 0.95
