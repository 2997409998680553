"""Trials and their s0/sT snapshots in the store (tables of migration 001)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from flywheel import ConflictError, NotFoundError, Store, canonical_json, sha256_hex

from ._agents import AgentSpec
from ._budget import Budget
from ._runner import SCHEMA_VERSION, TrialRecord, TrialSpec
from ._seams import SeamConfig, SeamSpec

TRIALS = "ablation_trials"
SNAPSHOTS = "ablation_snapshots"


def save_trials(store: Store, records: Sequence[TrialRecord], *, project: str = "default") -> int:
    """Insert trial rows and snapshot rows (columnar, two inserts); return the trial count.

    An environment identity or trial id already in the store is refused
    (ConflictError): the in-process ledger cannot see other processes.
    """
    if not records:
        return 0
    n = len(records)
    env_ids = [r.environment_id for r in records]
    trial_ids = [r.trial_id for r in records]
    if len(set(env_ids)) != n or len(set(trial_ids)) != n:
        raise ConflictError("two trials in one batch share an environment identity or trial id")
    clash = store.query(
        f"SELECT environment_id, trial_id FROM {TRIALS} WHERE project_id = {{p:String}} "
        "AND (has({e:Array(String)}, environment_id) OR has({t:Array(String)}, trial_id)) LIMIT 1",
        {"p": project, "e": env_ids, "t": trial_ids},
    )
    if clash:
        raise ConflictError(
            f"environment {clash[0]['environment_id']!r} / trial {clash[0]['trial_id']!r} "
            "is already in the store; every trial needs a fresh environment identity"
        )
    store.insert(
        TRIALS,
        {
            "project_id": [project] * n,
            "trial_id": [r.trial_id for r in records],
            "run_id": [r.run_id for r in records],
            "suite": [r.suite for r in records],
            "task_id": [r.task_id for r in records],
            "injection_task_id": [r.injection_task_id for r in records],
            "environment_id": [r.environment_id for r in records],
            "trace_id": [r.trace_id for r in records],
            "config_id": [r.config_id for r in records],
            "agent_name": [str(r.agent.get("name", "")) for r in records],
            "agent_spec": [canonical_json(r.agent) for r in records],
            "seam_specs": [canonical_json(r.seams) for r in records],
            "seam_modes": [r.seam_modes for r in records],
            "budget": [canonical_json(r.budget) for r in records],
            "seed": [r.seed for r in records],
            "run_index": [r.run_index for r in records],
            "status": [r.status for r in records],
            "utility": [r.utility for r in records],
            "security": [r.security for r in records],
            "budget_exhausted": [r.budget_exhausted for r in records],
            "budget_resource": [r.budget_resource for r in records],
            "error": [r.error for r in records],
            "final_output": [r.final_output for r in records],
            "tool_calls": [r.tool_calls for r in records],
            "write_calls": [r.write_calls for r in records],
            "input_tokens": [r.input_tokens for r in records],
            "output_tokens": [r.output_tokens for r in records],
            "cost": [r.cost for r in records],
            "started_at": [r.started_ns for r in records],
            "duration_s": [r.duration_s for r in records],
            "faults": [canonical_json(r.faults) for r in records],
            "notes": [canonical_json(r.notes) for r in records],
            "timings": [canonical_json(r.timings) for r in records],
            "s0_sha256": [sha256_hex(r.s0) for r in records],
            "st_sha256": [sha256_hex(r.sT) for r in records],
            "schema_version": [SCHEMA_VERSION] * n,
        },
    )
    rows = [(r, "s0", r.s0) for r in records] + [(r, "sT", r.sT) for r in records]
    store.insert(
        SNAPSHOTS,
        {
            "project_id": [project] * len(rows),
            "trial_id": [r.trial_id for r, _, _ in rows],
            "which": [w for _, w, _ in rows],
            "environment_id": [r.environment_id for r, _, _ in rows],
            "sha256": [sha256_hex(d) for _, _, d in rows],
            "document": [d for _, _, d in rows],
            "schema_version": [SCHEMA_VERSION] * len(rows),
        },
    )
    return n


def load_trials(
    store: Store, *, run_id: str | None = None, project: str = "default"
) -> list[dict[str, Any]]:
    """Trial rows (without snapshots), optionally of one run, JSON columns decoded."""
    sql = f"SELECT * FROM {TRIALS} WHERE project_id = {{p:String}}"
    params: dict[str, Any] = {"p": project}
    if run_id:
        sql += " AND run_id = {r:String}"
        params["r"] = run_id
    rows = store.query(sql + " ORDER BY started_at", params)
    for row in rows:
        for col in ("agent_spec", "seam_specs", "budget", "faults", "notes", "timings"):
            row[col] = json.loads(row[col]) if row.get(col) else None
    return rows


def load_snapshot(
    store: Store, trial_id: str, which: str = "s0", *, project: str = "default"
) -> str:
    """The canonical JSON document of a trial's s0 or sT."""
    if which not in ("s0", "sT"):
        raise NotFoundError(f"snapshot {which!r}: choose s0 or sT")
    doc = store.scalar(
        f"SELECT any(document) AS d FROM {SNAPSHOTS} WHERE project_id = {{p:String}} "
        "AND trial_id = {t:String} AND which = {w:String}",
        {"p": project, "t": trial_id, "w": which},
    )
    if not doc:
        raise NotFoundError(
            f"no {which} snapshot for trial {trial_id!r}; list trials with `flywheel run --json`"
        )
    return str(doc)


def spec_from_row(row: dict[str, Any]) -> TrialSpec:
    """Rebuild the trial spec (agent, seams, budget, seed) from a stored trial row.

    Runs the same configuration again, like with like: same factories by name
    and arguments, same seed, a fresh environment identity.
    """
    agent = row["agent_spec"]
    return TrialSpec(
        suite=row["suite"],
        task_id=row["task_id"],
        agent=AgentSpec(agent["name"], dict(agent.get("args") or {})),
        seams=SeamConfig(tuple(SeamSpec(**s) for s in row["seam_specs"])),
        budget=Budget(**row["budget"]),
        injection_task_id=row["injection_task_id"] or None,
        seed=int(row["seed"]),
        run_index=int(row["run_index"]),
    )
