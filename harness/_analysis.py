"""Analyse a stored harness trial: argument provenance and side effects.

Reads only what the trial left in the store (its trace, its s0/sT
snapshots), so it works on trials run in another process or over OTLP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flywheel.ingest import compute_provenance
from flywheel.side_effects import (
    ReferenceRun,
    SideEffectReport,
    agentdojo_profile,
    analyze,
    calls_from_trace,
    diff,
    scope_from_ground_truth,
    snapshot_agentdojo_json,
    store_report,
)

from flywheel import Store

from ._agentdojo import load_suite
from ._runner import TrialRecord, parse_suite


@dataclass
class TrialAnalysis:
    """What a trial's trace and state say beyond its utility verdict."""

    trial_id: str
    trace_id: str
    provenance_flags: int
    side_effects: SideEffectReport

    def summary(self) -> dict[str, Any]:
        """A JSON-ready summary: flags, unauthorized deltas, critical event counts."""
        gate = self.side_effects.gate
        return {
            "trial_id": self.trial_id,
            "trace_id": self.trace_id,
            "provenance_flags": self.provenance_flags,
            "unauthorized_deltas": sum(
                1 for d in self.side_effects.classification.decisions if d.status == "unauthorized"
            ),
            "critical_events": {k: v for k, v in gate.counts.items() if v},
            "blocking": gate.blocking,
        }


@dataclass(frozen=True)
class _StoredTrial:
    trial_id: str
    suite: str
    task_id: str
    trace_id: str
    s0: str
    sT: str  # noqa: N815 - the playbook's name


def analyse_stored_trial(store: Store, trial_id: str, *, project: str = "default") -> TrialAnalysis:
    """``analyse_trial`` for a trial already in the store (any process, any time)."""
    from flywheel import NotFoundError

    from ._trials_store import TRIALS, load_snapshot

    rows = store.query(
        f"SELECT trial_id, suite, task_id, trace_id FROM {TRIALS} "
        "WHERE project_id = {p:String} AND trial_id = {t:String} LIMIT 1",
        {"p": project, "t": trial_id},
    )
    if not rows:
        raise NotFoundError(f"no trial {trial_id} in project {project}; see `flywheel run`")
    r = rows[0]
    trial = _StoredTrial(
        r["trial_id"],
        r["suite"],
        r["task_id"],
        r["trace_id"],
        load_snapshot(store, trial_id, "s0", project=project),
        load_snapshot(store, trial_id, "sT", project=project),
    )
    return analyse_trial(store, trial, project=project)  # type: ignore[arg-type]


def accepted_runs(
    store: Store, record: Any, *, project: str = "default", limit: int = 5
) -> list[ReferenceRun]:
    """Other benign trials of the same task that met their utility check, as correct runs."""
    from ._trials_store import TRIALS, load_snapshot

    rows = store.query(
        f"SELECT trial_id FROM {TRIALS} WHERE project_id = {{p:String}} "
        "AND suite = {s:String} AND task_id = {t:String} AND injection_task_id = '' "
        "AND utility = true AND trial_id != {me:String} ORDER BY started_at DESC "
        "LIMIT {n:UInt32}",
        {"p": project, "s": record.suite, "t": record.task_id, "me": record.trial_id, "n": limit},
    )
    _, suite_name = parse_suite(record.suite)
    out = []
    for r in rows:
        s0 = snapshot_agentdojo_json(
            load_snapshot(store, r["trial_id"], "s0", project=project), suite_name
        )
        st = snapshot_agentdojo_json(
            load_snapshot(store, r["trial_id"], "sT", project=project), suite_name
        )
        out.append(ReferenceRun(diff(s0, st), (), s0, f"trial {r['trial_id']}"))
    return out


def agentdojo_side_effects(
    record: TrialRecord,
    calls: list[Any],
    observations: list[Any] | None = None,
    accepted: Sequence[ReferenceRun] = (),
) -> SideEffectReport:
    """The s0 -> sT side effects of an AgentDojo trial.

    Scoped by its user task's ground truth plus ``accepted`` correct runs of the
    same task (``accepted_runs``): the scope fits every correct run, not one.
    """
    _, suite_name = parse_suite(record.suite)
    suite = load_suite(suite_name)
    env = suite.environment_type.model_validate_json(record.s0)
    scope = scope_from_ground_truth(
        suite, suite.user_tasks[record.task_id], env, free=True, accepted=accepted
    )
    return analyze(
        snapshot_agentdojo_json(record.s0, suite_name),
        snapshot_agentdojo_json(record.sT, suite_name),
        scope=scope,
        profile=agentdojo_profile(suite_name),
        calls=calls,
        observations=observations or [],
        run_id=record.trial_id,
    )


def analyse_trial(store: Store, record: TrialRecord, *, project: str = "default") -> TrialAnalysis:
    """Provenance of the trial's trace, then its s0 -> sT side effects, both stored."""
    prov = compute_provenance(store, record.trace_id, project=project)
    calls, observations = calls_from_trace(store, record.trace_id, project=project)
    accepted = accepted_runs(store, record, project=project)
    report = agentdojo_side_effects(record, calls, observations, accepted)
    store_report(store, record.trial_id, report, trace_id=record.trace_id, project_id=project)
    return TrialAnalysis(record.trial_id, record.trace_id, sum(1 for r in prov if r.flags), report)
