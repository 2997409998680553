"""The gate's deterministic blockers: golden tasks, judge contract, side effects, evidence, cost.

Each is its own possible blocker (never averaged with the paired delta):

- every golden (must-not-break) task for a pass-rate regression (22.7);
- the judge contract on every calibration record in play (22.3); a record
  must carry its label cells and name the judge the grader runs;
- the error burden per slice (22.6, reported, never blocking);
- critical side-effect events in any candidate trial, for whichever
  categories the rules list; an analysis that failed is ``unknown``;
- missing evidence: a mandatory criterion left ``pending`` or ``unknown``
  (the trial could not be accepted or rejected) blocks, counted and named;
- the cost ceiling per accepted task (13.5.5) and an optional pass^k floor.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np
from flywheel.evalset._bundle_read import EvalSet
from flywheel.evalset._gate_evidence import ARMS, BlockReason, GateEvidence, Section, listing
from flywheel.evalset._gate_rules import GateRules
from flywheel.evalset._graders import load_calibration
from flywheel.evalset._graders._judge import JudgeCalibration
from flywheel.evalset._task import CriterionKind, CriterionRole, Task
from flywheel.evalset._trial import Trial, Verdict
from flywheel.evalset.stats import error_burden, primary_failure

from flywheel.errors import UserError

#: Primary-failure category of each criterion kind, in escalation order
#: (22.6: malformed output, wrong final state, policy violation, then the rest).
FAILURE_CATEGORY: dict[CriterionKind, str] = {
    CriterionKind.SCHEMA: "malformed_output",
    CriterionKind.STATE: "wrong_final_state",
    CriterionKind.POLICY: "policy_violation",
    CriterionKind.SIDE_EFFECT: "critical_side_effect",
    CriterionKind.BUDGET: "over_budget",
    CriterionKind.CUSTOM: "custom_check",
    CriterionKind.JUDGE: "poor_explanation",
}


def primary(task: Task, trial: Trial) -> str | None:
    """First failed mandatory criterion in escalation order; 'unresolved' if open."""
    if trial.verdict is Verdict.PASS:
        return None
    flags: dict[str, list[bool]] = {}
    for kind, category in FAILURE_CATEGORY.items():
        failed = any(
            r.verdict is Verdict.FAIL and r.role is CriterionRole.MANDATORY and r.kind is kind
            for r in trial.results
        )
        flags[category] = [not failed]
    found = primary_failure(flags)[0]
    return "unresolved" if found is None else str(found)


def golden_section(ev: GateEvidence) -> Section:
    """Every golden task: a candidate pass-rate below the baseline's blocks."""
    rules = ev.rules
    golden_ids = sorted(
        {tid for tid, t in ev.evalset.tasks.items() if t.golden and rules.golden.use_task_flags}
        | set(rules.golden.tasks)
    )
    unknown = [g for g in golden_ids if g not in ev.evalset.tasks]
    if unknown:
        raise UserError(f"gate rules name golden task(s) {unknown} that are not in the eval set")
    out: dict[str, Any] = {}
    regressions = []
    for tid in golden_ids:
        b, c = ev.outcomes("baseline", [tid])[0], ev.outcomes("candidate", [tid])[0]
        fails = Counter(
            primary(ev.evalset.tasks[tid], t)
            for t in ev.runs["candidate"][tid]
            if t.verdict is not Verdict.PASS
        )
        entry = {
            "baseline": f"{int(sum(b))}/{len(b)}",
            "candidate": f"{int(sum(c))}/{len(c)}",
            "regressed": float(np.mean(c)) < float(np.mean(b)),
            "candidate_failures": dict(fails),
        }
        out[tid] = entry
        if entry["regressed"]:
            why = ", ".join(f"{k} {v}" for k, v in fails.items())
            regressions.append(
                f"{tid} (baseline {entry['baseline']}, candidate {entry['candidate']}: {why})"
            )
    reasons = (
        [BlockReason("golden_regression", "must-not-break regression: " + "; ".join(regressions))]
        if regressions
        else []
    )
    return Section(out, reasons)


def _record(ref: str, base_dir: Any, where: str) -> JudgeCalibration:
    """A calibration record that carries label cells and a judge id, else a refusal."""
    try:
        rec = load_calibration(ref, base_dir)
    except ValueError as exc:
        raise UserError(f"{where}: {exc}") from exc
    if not rec.judge_id:
        raise UserError(
            f"{where}: calibration {rec.source or ref} names no judge_id; a record must "
            "name the judge it measured"
        )
    return rec


def calibrations(
    evalset: EvalSet, rules: GateRules
) -> tuple[dict[str, JudgeCalibration], list[str]]:
    """Calibration records in play by judge id, and mandatory judge criteria lacking one.

    Raises:
        UserError: A record without label cells or judge id, or one whose
            judge id differs from the grader it is attached to.
    """
    records: dict[str, JudgeCalibration] = {}
    for ref in rules.judge.calibrations:
        rec = _record(ref, rules.base_dir, "gate rules")
        records[rec.judge_id] = rec
    uncalibrated: list[str] = []
    for task in evalset.tasks.values():
        for c in task.criteria:
            if c.kind is not CriterionKind.JUDGE:
                continue
            judge_id = str(c.grader.args.get("judge_id", c.id))
            cal_ref = c.grader.args.get("calibration")
            if cal_ref is None:
                if c.role is CriterionRole.MANDATORY and judge_id not in records:
                    uncalibrated.append(f"{task.task_id}/{c.id}")
                continue
            where = f"task {task.task_id} criterion {c.id}"
            rec = _record(cal_ref, evalset.base_dir, where)
            if rec.judge_id != judge_id:
                raise UserError(
                    f"{where}: calibration {rec.source or cal_ref} measured judge "
                    f"{rec.judge_id!r}, but the grader runs judge {judge_id!r}; attach the "
                    "record of the judge that grades"
                )
            records.setdefault(judge_id, rec)
    return records, sorted(set(uncalibrated))


def judge_failures(rec: JudgeCalibration, rules: GateRules) -> list[str]:
    """Every way ``rec`` misses the judge contract (empty: it meets it)."""
    c = rules.judge
    bad = []
    if not rec.meets(c.min_kappa):
        bad.append(f"kappa {rec.kappa:.3f} < {c.min_kappa}")
    if c.min_fail_recall is not None and not rec.fail_recall >= c.min_fail_recall:
        bad.append(f"failure recall {rec.fail_recall:.2f} < {c.min_fail_recall}")
    if (
        c.max_false_acceptance is not None
        and not rec.false_acceptance_rate <= c.max_false_acceptance
    ):
        bad.append(f"false acceptance {rec.false_acceptance_rate:.2f} > {c.max_false_acceptance}")
    for name, limit, value in (
        ("position-flip", c.max_position_flip_rate, rec.position_flip_rate),
        ("verbosity", c.max_verbosity_rate, rec.verbosity_rate),
    ):
        if limit is None:
            continue
        if value is None:
            bad.append(f"no {name} measurement")
        elif value > limit:
            bad.append(f"{name} rate {value:.2f} > {limit}")
    return bad


def judge_section(evalset: EvalSet, rules: GateRules) -> Section:
    """Every calibration record in play against the contract; uncalibrated mandatory judges.

    Reads no trial, so the gate runs it before grading: a record that
    cannot be used is refused before any work is done.

    Raises:
        UserError: As :func:`calibrations`.
    """
    records, uncalibrated = calibrations(evalset, rules)
    out: dict[str, Any] = {"contract": rules.judge.model_dump(mode="json"), "records": {}}
    reasons = []
    for judge_id, rec in records.items():
        bad = judge_failures(rec, rules)
        out["records"][judge_id] = {
            **rec.model_dump(mode="json"),
            "meets_contract": not bad,
            "failures": bad,
        }
        if bad:
            reasons.append(
                BlockReason(
                    "judge_contract",
                    f"judge {judge_id} does not meet the contract: {'; '.join(bad)}",
                )
            )
    if uncalibrated:
        out["uncalibrated_mandatory"] = uncalibrated
        reasons.append(
            BlockReason(
                "judge_contract",
                "mandatory judge criteria without a calibration record: " + listing(uncalibrated),
            )
        )
    return Section(out, reasons)


def burden_section(ev: GateEvidence) -> Section:
    """Error burden per slice (22.6), both arms: success and primary failure categories."""
    out: dict[str, Any] = {}
    for arm in ARMS:
        graded = ev.graded[arm]
        primaries = [primary(ev.evalset.tasks[t.task_id], t) for t in graded]
        sl = [ev.evalset.tasks[t.task_id].slice for t in graded]
        out[arm] = {
            k: {
                "success": float(v.success.point),
                "failures": v.failures,
                "dominant": v.dominant_failure,
            }
            for k, v in error_burden(
                sl, np.array(primaries, dtype=object), confidence=ev.rules.confidence
            ).items()
        }
    return Section(out)


def side_effects_section(ev: GateEvidence) -> Section:
    """Any event of a critical category in a candidate trial blocks; unknown analyses block too.

    Generic over the categories: the rules' ``critical`` list decides which
    of the categories the analysis emits are critical. A failed analysis
    blocks where side effects are needed (the task has a side-effect
    criterion, or the rules require a summary) and is reported everywhere;
    a criterion that read it is ``unknown`` and blocks as missing evidence.
    """
    rules = ev.rules.side_effects
    critical = set(rules.critical)
    events: dict[str, list[str]] = defaultdict(list)
    failed: dict[str, str] = {}
    failed_unused: dict[str, str] = {}  # no side-effect criterion and not required
    missing: list[str] = []
    analysed = 0
    for t in ev.graded["candidate"]:
        obs = t.observations
        task = ev.evalset.tasks[t.task_id]
        if obs.side_effects is None:
            needed = rules.required or any(
                c.kind is CriterionKind.SIDE_EFFECT for c in task.criteria
            )
            if obs.side_effects_error:
                (failed if needed else failed_unused)[t.trial_id] = obs.side_effects_error
            elif needed:
                missing.append(t.trial_id)
            continue
        analysed += 1
        for cat, count in obs.side_effects.items():
            if cat in critical and count > 0:
                events[cat].append(f"{t.trial_id}x{count}" if count > 1 else t.trial_id)
    out = {
        "critical": sorted(critical),
        "candidate_events": dict(events),
        "analysed": analysed,
        "not_analysed": len(ev.graded["candidate"]) - analysed,
        "unknown": {"analysis_failed": {**failed, **failed_unused}, "no_summary": missing},
    }
    reasons = []
    if events:
        text = "; ".join(f"{cat} in {listing(ids)}" for cat, ids in sorted(events.items()))
        reasons.append(
            BlockReason(
                "critical_side_effect", f"critical side effects in candidate trials: {text}"
            )
        )
    if failed:
        first = next(iter(failed.items()))
        reasons.append(
            BlockReason(
                "missing_evidence",
                f"side-effect analysis failed for {len(failed)} candidate trial(s) "
                f"({listing(list(failed))}; first: {first[1]}); their critical side effects "
                "are unknown",
            )
        )
    if missing:
        need = (
            "the rules require one"
            if rules.required
            else "their task has a side-effect criterion"
        )
        reasons.append(
            BlockReason(
                "missing_evidence",
                f"{len(missing)} candidate trial(s) carry no side-effect summary although "
                f"{need}: {listing(missing)}",
            )
        )
    return Section(out, reasons)


def missing_section(ev: GateEvidence) -> Section:
    """Every criterion that could not be graded, counted and named; mandatory ones block.

    A mandatory ``pending`` or ``unknown`` grade leaves its trial unresolved:
    counting it as not accepted would make a baseline look worse for want of
    evidence, so the gate refuses to decide instead.
    """
    out: dict[str, Any] = {}
    reasons = []
    for arm in ARMS:
        per: dict[str, dict[str, Any]] = {}
        blocking: list[str] = []
        for t in ev.graded[arm]:
            for r in t.results:
                if r.verdict.resolved:
                    continue
                entry = per.setdefault(
                    r.criterion_id,
                    {"role": r.role.value, "kind": r.kind.value, "pending": 0, "unknown": 0,
                     "trials": [], "reasons": []},
                )
                entry[r.verdict.value] += 1
                entry["trials"].append(t.trial_id)
                if r.reason and r.reason not in entry["reasons"] and len(entry["reasons"]) < 3:
                    entry["reasons"].append(r.reason)
            if t.verdict is not None and not t.verdict.resolved:
                blocking.append(t.trial_id)
        out[arm] = {"unresolved_trials": len(blocking), "criteria": per}
        if blocking:
            open_mandatory = sorted(
                f"{cid} ({e['unknown']} unknown, {e['pending']} pending: "
                f"{e['reasons'][0] if e['reasons'] else 'no reason given'})"
                for cid, e in per.items()
                if e["role"] == CriterionRole.MANDATORY.value
            )
            reasons.append(
                BlockReason(
                    "missing_evidence",
                    f"{len(blocking)} {arm} trial(s) could not be graded on a mandatory "
                    f"criterion ({listing(blocking)}): {listing(open_mandatory, 3)}",
                )
            )
    return Section(out, reasons)


def cost_section(ev: GateEvidence, arms_report: dict[str, Any]) -> Section:
    """The cost ceiling per accepted task and the optional pass^k floor (candidate)."""
    rules = ev.rules
    reasons = []
    ceiling = rules.cost.max_cost_per_accepted_usd
    cand = arms_report["candidate"]
    if ceiling is not None:
        cost = cand["cost"]
        if not cost["known"]:
            reasons.append(
                BlockReason(
                    "cost_ceiling",
                    "a cost ceiling is declared but candidate trials carry no cost_usd",
                )
            )
        elif not cost["per_accepted_usd"] <= ceiling:
            reasons.append(
                BlockReason(
                    "cost_ceiling",
                    f"cost per accepted task ${cost['per_accepted_usd']:.4f} "
                    f"exceeds the ceiling ${ceiling}",
                )
            )
    if rules.min_pass_hat_k is not None:
        got = cand["pass_k"].get("pass_hat_k")
        if got is None or got < rules.min_pass_hat_k:
            reasons.append(
                BlockReason(
                    "pass_hat_k_floor",
                    f"candidate pass^{rules.k} {got if got is None else round(got, 3)} "
                    f"below {rules.min_pass_hat_k}",
                )
            )
    return Section({}, reasons)
