"""The reference agent's hazards fire at their declared rates, seeded, and are traced."""

from __future__ import annotations

import json
import math
from collections import Counter

from flywheel.harness import HAZARDS, AgentSpec, SeamConfig, plan_trials, run_trials
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

RATES = {h: 0.2 for h in HAZARDS}


def _run(
    suite: str,
    *,
    rates=None,
    runs=1,
    seed=0,
    oracles=(),
    tasks=None,
    injections=False,
    exporter=None,
):
    agent = AgentSpec("reference", {"rates": rates} if rates is not None else {})
    specs = plan_trials(
        f"agentdojo:{suite}",
        agent,
        runs=runs,
        seed=seed,
        tasks=tasks,
        injections=injections,
        seams=SeamConfig.from_oracles(oracles),
    )
    return run_trials(specs, exporter or InMemorySpanExporter(), workers=2)


def _tally(records):
    opp, fired = Counter(), Counter()
    for r in records:
        opp.update(r.notes.get("sim.opportunities", {}))
        fired.update(r.notes.get("sim.fired", {}))
    return opp, fired


def test_hazards_fire_at_their_declared_rates() -> None:
    records = _run("banking", rates=RATES, runs=3) + _run("slack", rates=RATES, runs=3)
    records += _run(
        "banking", rates=RATES, tasks=[f"user_task_{i}" for i in range(5)], injections=True
    )
    opp, fired = _tally(records)
    for hazard, p in RATES.items():
        n = opp[hazard]
        assert n >= 30, (hazard, n)
        rate = fired[hazard] / n
        assert abs(rate - p) <= 4 * math.sqrt(p * (1 - p) / n), (hazard, rate, n)
    # every draw that fired is a recorded fault (misread may fire twice per step at most)
    faults = Counter(f["kind"] for r in records for f in r.faults)
    for hazard in HAZARDS:
        assert faults[hazard] == fired[hazard]


def test_runs_vary_but_are_reproducible_from_the_seed() -> None:
    a = _run("banking", runs=3, seed=7)
    b = _run("banking", runs=3, seed=7)
    c = _run("banking", runs=3, seed=8)
    key = lambda rs: sorted((r.task_id, r.run_index, r.utility, json.dumps(r.faults)) for r in rs)  # noqa: E731
    assert key(a) == key(b)
    assert key(a) != key(c)
    assert 0 < sum(bool(r.utility) for r in a) < len(a)  # a simulated agent that sometimes fails


def test_zero_rates_solve_every_task() -> None:
    zero = {h: 0.0 for h in HAZARDS}
    records = _run("banking", rates=zero) + _run("slack", rates=zero)
    assert all(r.utility for r in records), [(r.task_id, r.error) for r in records if not r.utility]
    assert not any(r.faults for r in records)


def test_each_oracle_removes_its_hazard() -> None:
    opp, _ = _tally(_run("banking", rates=RATES, oracles=["planner", "memory", "verifier"]))
    assert (
        opp["wrong_tool"] == 0 and opp["forget_constraint"] == 0 and opp["skip_verification"] == 0
    )
    assert opp["wrong_argument"] > 0
    real_opp, _ = _tally(_run("banking", rates={h: 0.0 for h in HAZARDS}))
    oracle_opp, _ = _tally(_run("banking", rates={h: 0.0 for h in HAZARDS}, oracles=["tools"]))
    assert oracle_opp["misread_result"] < real_opp["misread_result"]


def test_oracle_verifier_and_planner_raise_utility() -> None:
    base = _run("banking", rates=RATES, runs=3, seed=3)
    better = _run("banking", rates=RATES, runs=3, seed=3, oracles=["verifier", "planner"])
    u = lambda rs: sum(bool(r.utility) for r in rs) / len(rs)  # noqa: E731
    assert u(better) > u(base)


def test_faults_are_span_attributes_at_their_step() -> None:
    exporter = InMemorySpanExporter()
    records = _run("slack", rates=RATES, runs=2, exporter=exporter)
    spans = exporter.get_finished_spans()
    traced = Counter()
    for s in spans:
        kinds = s.attributes.get("flywheel.sim.fault")
        if kinds:
            assert s.name.startswith("chat ")
            detail = json.loads(s.attributes["flywheel.sim.detail"])
            assert [d["kind"] for d in detail] == kinds.split(",")
            assert s.attributes["flywheel.sim.step"] == detail[0]["step"]
            traced.update((s.attributes["flywheel.trial.id"], d["kind"], d["step"]) for d in detail)
    recorded = Counter((r.trial_id, f["kind"], f["step"]) for r in records for f in r.faults)
    assert traced == recorded and recorded
