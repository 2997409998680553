"""The gate's statistics: per-arm and per-slice rates, and the paired decision.

Every interval here is task-clustered (22.5: the task is the unit, its runs
are not independent): per-arm and per-slice rates use the Wilson interval at
the effective sample size (``clustered_rate_interval``); the paired decision
uses the interval its design calls for (``paired_decision``: Newcombe
method 10 with one run per task, the cluster paired t with several). The
seed's percentile paired cluster bootstrap (22.5) is still computed and
reported, for comparison with the chapter's figures; the decision does not
read it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from flywheel.evalset._gate_evidence import ARMS, BlockReason, GateEvidence, Section, points
from flywheel.evalset._trial import Trial, Verdict
from flywheel.evalset.stats import (
    PairedDecision,
    clustered_rate_interval,
    cost_per_accepted_task,
    mean_pass_at_k,
    mean_pass_hat_k,
    paired_cluster_bootstrap,
    paired_decision,
)

#: How the per-arm and per-slice intervals are computed, as the report names it.
RATE_INTERVAL = "wilson at the task-clustered effective sample size (Korn-Graubard)"


def rate_json(ev: GateEvidence, arm: str, tasks: list[str]) -> dict[str, Any]:
    """Counts and the task-clustered rate of ``arm`` over ``tasks``, with both-way bounds."""
    trials = [t for tid in tasks for t in ev.runs[arm][tid]]
    verdicts = [t.verdict or Verdict.UNKNOWN for t in trials]
    conf = ev.rules.confidence
    as_fail = clustered_rate_interval(ev.outcomes(arm, tasks, unresolved=0.0), conf)
    as_pass = clustered_rate_interval(ev.outcomes(arm, tasks, unresolved=1.0), conf)
    return {
        "n": len(trials),
        "tasks": len(tasks),
        "accepted": sum(v is Verdict.PASS for v in verdicts),
        "failed": sum(v is Verdict.FAIL for v in verdicts),
        "pending": sum(v is Verdict.PENDING for v in verdicts),
        "unknown": sum(v is Verdict.UNKNOWN for v in verdicts),
        "rate": float(as_fail.point),
        "lo": float(as_fail.lo),
        "hi": float(as_fail.hi),
        "interval": RATE_INTERVAL,
        "lo_if_unresolved_fail": float(as_fail.lo),
        "hi_if_unresolved_pass": float(as_pass.hi),
        "rate_if_unresolved_pass": float(as_pass.point),
    }


def _cost_json(trials: list[Trial]) -> dict[str, Any]:
    costs = [t.cost_usd for t in trials]
    cost: dict[str, Any] = {"known": all(c is not None for c in costs)}
    if cost["known"]:
        cpa = cost_per_accepted_task(
            [float(c or 0.0) for c in costs], [t.verdict is Verdict.PASS for t in trials]
        )
        cost.update(
            total_usd=cpa.total_cost,
            per_accepted_usd=cpa.value,
            mean_accepted_usd=cpa.mean_cost_accepted,
        )
    return cost


def arms_section(ev: GateEvidence) -> Section:
    """Per arm: task-clustered acceptance, pass@k / pass^k, diagnostics, cost, tokens."""
    out: dict[str, Any] = {}
    k = ev.rules.k
    for arm in ARMS:
        trials = ev.graded[arm]
        accepted = ev.outcomes(arm)
        n_runs = np.array([len(r) for r in accepted])
        c_runs = np.array([int(sum(r)) for r in accepted])
        passk: dict[str, Any] = {"k": k}
        if int(n_runs.min()) >= k:
            passk["pass_at_k"] = float(mean_pass_at_k(n_runs, c_runs, k))
            passk["pass_hat_k"] = float(mean_pass_hat_k(n_runs, c_runs, k))
        else:
            passk["note"] = f"a task has fewer than k={k} runs; pass^k not estimable"
        f1 = [
            float(np.mean(vals))
            for tid in ev.task_ids
            if (
                vals := [
                    r.observation["trajectory_f1"]
                    for t in ev.runs[arm][tid]
                    for r in t.results
                    if "trajectory_f1" in r.observation
                ]
            )
        ]
        credits = [t.partial_credit for t in trials if t.partial_credit is not None]
        out[arm] = {
            "config_id": trials[0].config.id if trials else "",
            "trials": rate_json(ev, arm, ev.task_ids),
            "task_mean_pass_rate": float(np.mean([np.mean(r) for r in accepted])),
            "runs_per_task": float(np.mean(n_runs)),
            "pass_k": passk,
            "trajectory_f1": float(np.mean(f1)) if f1 else None,
            "partial_credit_mean": float(np.mean(credits)) if credits else None,
            "cost": _cost_json(trials),
            "tokens": sum(t.tokens or 0 for t in trials),
        }
    return Section(out)


def _decide(
    ev: GateEvidence, baseline: list[list[float]], candidate: list[list[float]]
) -> PairedDecision:
    r = ev.rules
    return paired_decision(
        baseline,
        candidate,
        r.margin,
        r.confidence,
        r.evidence.power,
        require_powered=r.evidence.require_powered,
    )


def _reason(d: PairedDecision) -> BlockReason | None:
    """The paired rule's blocking reason, if any, naming method, interval and plan."""
    iv = (
        f"{d.confidence:.0%} interval [{d.lo * 100:+.1f}, {d.hi * 100:+.1f}] points by "
        f"{d.method}, mean delta {points(d.point)} over {d.n_tasks} tasks"
    )
    if d.outcome == "inferior":
        return BlockReason(
            "paired_lower_bound",
            f"paired lower bound {points(d.lo)} is below the allowed loss -{d.margin} ({iv})",
        )
    if d.outcome == "insufficient_evidence":
        why = (
            "no task delta differs from the others (zero spread)"
            if not np.isfinite(d.se)
            else f"the design's minimum detectable effect at {d.power:.0%} power is "
            f"{d.mde * 100:.1f} points, above the margin {d.margin * 100:g}"
        )
        need = (
            f"; about {d.tasks_needed} tasks would be needed ({d.plan})"
            if d.tasks_needed is not None
            else ""
        )
        return BlockReason(
            "insufficient_evidence",
            f"the evidence cannot establish noninferiority: {iv} reaches below -{d.margin} "
            f"and {why}{need}",
        )
    return None


def paired_section(ev: GateEvidence) -> Section:
    """The paired decision (task as the unit), the reference bootstrap, unresolved bounds."""
    r = ev.rules
    base, cand = ev.outcomes("baseline"), ev.outcomes("candidate")
    decision = _decide(ev, base, cand)
    deltas = [float(np.mean(c) - np.mean(b)) for b, c in zip(base, cand, strict=True)]
    report: dict[str, Any] = {
        "mean_delta": decision.point,
        "lo": decision.lo,
        "hi": decision.hi,
        "method": decision.method,
        "n_tasks": decision.n_tasks,
        "confidence": r.confidence,
        "decision": decision.to_json(),
        "task_deltas": dict(zip(ev.task_ids, deltas, strict=True)),
    }
    if len(ev.task_ids) >= 2:
        boot = paired_cluster_bootstrap(
            base, cand, resamples=r.bootstrap.resamples, confidence=r.confidence,
            seed=r.bootstrap.seed,
        )
        report["reference_bootstrap"] = {
            "lo": boot.lo,
            "hi": boot.hi,
            "cluster_se": boot.se,
            "mde_80": boot.mde,
            "resamples": boot.resamples,
            "seed": boot.seed,
            "note": "the seed's 22.5 percentile paired cluster bootstrap, for comparison; "
            "the decision does not read it (it cannot reach below the smallest task delta)",
        }
    if any(t.verdict is not None and not t.verdict.resolved for a in ARMS for t in ev.graded[a]):
        worst = _decide(ev, ev.outcomes("baseline", unresolved=1.0), cand)
        best = _decide(ev, base, ev.outcomes("candidate", unresolved=1.0))
        report["unresolved_bounds"] = {
            "against_candidate": {"mean_delta": worst.point, "lo": worst.lo, "hi": worst.hi,
                                  "outcome": worst.outcome},
            "for_candidate": {"mean_delta": best.point, "lo": best.lo, "hi": best.hi,
                              "outcome": best.outcome},
        }
    reason = _reason(decision)
    return Section(report, [reason] if reason else [])


def slices_section(ev: GateEvidence) -> Section:
    """Task-clustered pass rates per slice and arm; candidate slice floors block."""
    names = sorted({t.slice for t in ev.evalset.tasks.values()})
    out: dict[str, Any] = {arm: {} for arm in ARMS}
    weak = []
    for name in names:
        tasks = [tid for tid in ev.task_ids if ev.evalset.tasks[tid].slice == name]
        for arm in ARMS:
            out[arm][name] = rate_json(ev, arm, tasks)
        floor = ev.rules.slices.floor_for(name)
        rate = out["candidate"][name]["rate"]
        if floor is not None and rate < floor:
            weak.append(f"{name} {rate:.3f} < {floor}")
    reasons = (
        [BlockReason("slice_floor", "candidate misses slice floor: " + ", ".join(weak))]
        if weak
        else []
    )
    return Section(out, reasons)
