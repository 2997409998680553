"""Storing a trial's side-effect result: one row per delta, one summary row."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from flywheel.tools import record_observations

from ._analyze import SideEffectReport
from ._classify import Classification
from ._findings import Finding, count_gaps
from ._gate import gate_input
from ._policy import Profile, Scope
from ._reconcile import Reconciliation

#: 2: field verdicts, scope violations, findings (migration 002).
SCHEMA_VERSION = 2


def store_result(
    store: Any,
    trial_id: str,
    classification: Classification,
    *,
    reconciliation: Reconciliation | None = None,
    scope: Scope | None = None,
    profile: Profile | None = None,
    s0_digest: str = "",
    st_digest: str = "",
    trace_id: str = "",
    project_id: str = "default",
    findings: Sequence[Finding] = (),
) -> int:
    """Insert the decisions and summary of one trial; returns the number of delta rows."""
    now = time.time_ns()
    decs = classification.decisions
    if decs:
        store.insert(
            "side_effect_deltas",
            {
                "project_id": [project_id] * len(decs),
                "trial_id": [trial_id] * len(decs),
                "trace_id": [trace_id] * len(decs),
                "ordinal": list(range(len(decs))),
                "kind": [d.delta.kind for d in decs],
                "resource_type": [d.delta.resource_type for d in decs],
                "key": [list(d.delta.key) for d in decs],
                "changes": [
                    json.dumps(d.delta.to_json(), ensure_ascii=False, default=str) for d in decs
                ],
                "status": [d.status for d in decs],
                "rule_id": [d.rule_id for d in decs],
                "reason": [d.reason for d in decs],
                "categories": [list(d.category_names) for d in decs],
                "category_rules": [[c.rule_id for c in d.categories] for d in decs],
                "tier": [d.tier for d in decs],
                "transient": [int(d.transient) for d in decs],
                "span_id": [d.span_id or "" for d in decs],
                "attribution": [d.attribution or "" for d in decs],
                "fields": [
                    json.dumps([v.to_json() for v in d.fields], ensure_ascii=False, default=str)
                    for d in decs
                ],
                "outside_scope": [int(d.outside_scope) for d in decs],
                "expected_id": [d.expected_id or "" for d in decs],
                "call_indexes": [list(d.call_indexes) for d in decs],
                "schema_version": [SCHEMA_VERSION] * len(decs),
                "created_at": [now] * len(decs),
            },
        )
    counts = classification.counts()
    gate = gate_input(classification, run_id=trial_id)
    gaps = count_gaps(findings)
    store.insert(
        "side_effect_results",
        {
            "project_id": [project_id],
            "trial_id": [trial_id],
            "trace_id": [trace_id],
            "intended": [counts["intended"]],
            "benign": [counts["benign"]],
            "unauthorized": [counts["unauthorized"]],
            "critical": [gate.counts],
            "blocking": [int(gate.blocking)],
            "unexplained": [len(reconciliation.unexplained) if reconciliation else 0],
            "writes_without_effect": [
                len(reconciliation.write_without_effect) if reconciliation else 0
            ],
            "profile": [profile.model_dump_json() if profile else ""],
            "scope": [scope.model_dump_json() if scope else ""],
            "s0_digest": [s0_digest],
            "st_digest": [st_digest],
            "omissions": [gaps["omission"]],
            "wrong_values": [gaps["wrong_value"]],
            "scope_violations": [gate.counts.get("scope_violation", 0)],
            "findings": [
                json.dumps([f.to_json() for f in findings], ensure_ascii=False, default=str)
            ],
            "schema_version": [SCHEMA_VERSION],
            "created_at": [now],
        },
    )
    return len(decs)


def store_report(
    store: Any,
    trial_id: str,
    report: SideEffectReport,
    *,
    trace_id: str = "",
    project_id: str = "default",
) -> int:
    """Insert an ``analyze`` report as the trial's side-effect result.

    The tools whose calls changed state are recorded as the project's tool
    observations (``flywheel.tools``: a tool observed to write is a write,
    whatever its name), keyed by the trace they were seen in.
    """
    if trace_id and report.observed_tools:
        record_observations(store, project_id, trace_id, report.observed_tools)
    return store_result(
        store,
        trial_id,
        report.classification,
        reconciliation=report.reconciliation,
        scope=report.scope,
        profile=report.profile,
        s0_digest=report.s0_digest,
        st_digest=report.st_digest,
        trace_id=trace_id,
        project_id=project_id,
        findings=report.findings,
    )


def read_result(store: Any, trial_id: str, project_id: str = "default") -> dict[str, Any] | None:
    """The stored summary and decisions of a trial, or None."""
    rows = store.query(
        "SELECT * FROM side_effect_results FINAL WHERE project_id = {p:String} "
        "AND trial_id = {t:String}",
        {"p": project_id, "t": trial_id},
    )
    if not rows:
        return None
    deltas = store.query(
        "SELECT kind, resource_type, key, status, rule_id, reason, categories, tier, transient, "
        "span_id, attribution, fields, outside_scope, expected_id, call_indexes "
        "FROM side_effect_deltas WHERE project_id = {p:String} "
        "AND trial_id = {t:String} ORDER BY ordinal",
        {"p": project_id, "t": trial_id},
    )
    row = dict(rows[0])
    row["findings"] = json.loads(row["findings"]) if row.get("findings") else []
    for d in deltas:
        d["fields"] = json.loads(d["fields"]) if d.get("fields") else []
    return {**row, "deltas": deltas}
