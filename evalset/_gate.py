"""The release gate: graded trials in, the predeclared rule applied, every reason named (22.7).

The gate grades both arms against the eval set's task contracts, then
checks, each as its own possible blocker (never averaged together):

- the paired cluster-bootstrap lower bound of candidate minus baseline
  (task as the unit, 22.5) against ``-margin``;
- every golden (must-not-break) task for a pass-rate regression;
- the judge contract on every calibration record in play (22.3);
- candidate slice floors (22.6);
- critical side-effect events in any candidate trial;
- the cost ceiling per accepted task (13.5.5) and an optional pass^k floor;
- with a scorecard (``flywheel scorecard --json``) for the same eval set and
  version: every scorecard row whose gate column blocks (playbook, "A
  scorecard": gates block a release rather than join an average).

Unresolved trials stay in every denominator as not accepted (13.2.3); the
report adds the both-way bounds and the paired delta with the unresolved
resolved against the candidate.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from flywheel.evalset._bundle_read import EvalSet
from flywheel.evalset._gate_rules import GateRules
from flywheel.evalset._graders import GradingContext, grade_trial, load_calibration
from flywheel.evalset._graders._judge import JudgeCalibration
from flywheel.evalset._scorecard_file import (
    Scorecard,
    check_scorecard_for,
    evalset_name,
    load_scorecard,
    scorecard_reasons,
)
from flywheel.evalset._task import CriterionKind, CriterionRole, Task
from flywheel.evalset._trial import Trial, Verdict
from flywheel.evalset._verdict import VerdictTally, tally
from flywheel.evalset.stats import (
    cost_per_accepted_task,
    error_burden,
    mcnemar_exact,
    mean_pass_at_k,
    mean_pass_hat_k,
    newcombe_paired_interval,
    paired_cluster_bootstrap,
    paired_counts,
    primary_failure,
)

from flywheel.errors import UserError

ARMS = ("baseline", "candidate")

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


@dataclass(frozen=True)
class BlockReason:
    """One reason the rule blocks; ``code`` is stable, ``message`` names the evidence."""

    code: str
    message: str


@dataclass
class GateResult:
    """The decision and its evidence packet.

    Attributes:
        verdict: ``"SHIP"`` or ``"BLOCK"``.
        reasons: Every blocking reason (empty to ship).
        report: JSON-ready evidence (what report.json holds).
        graded: Graded trials per arm.
    """

    verdict: str
    reasons: list[BlockReason]
    report: dict[str, Any]
    graded: dict[str, list[Trial]] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """0 to ship, 2 to block."""
        return 0 if self.verdict == "SHIP" else 2


def _check_inputs(evalset: EvalSet, arms: dict[str, list[Trial]]) -> None:
    environments: dict[str, str] = {}
    trial_ids: set[str] = set()
    for arm, trials in arms.items():
        for t in trials:
            if t.task_id not in evalset.tasks:
                raise UserError(
                    f"{arm} trial {t.trial_id!r} is for task {t.task_id!r}, "
                    "which is not in the eval set "
                    f"{evalset.base_dir}; grade it against the eval set it came from"
                )
            if t.trial_id in trial_ids:
                raise UserError(f"trial id {t.trial_id!r} appears more than once across both arms")
            trial_ids.add(t.trial_id)
            if t.environment_id in environments:
                raise UserError(
                    f"environment {t.environment_id!r} is reused by trials "
                    f"{environments[t.environment_id]!r} "
                    f"and {t.trial_id!r}; every trial needs its own isolated environment"
                )
            environments[t.environment_id] = t.trial_id
    for arm, trials in arms.items():
        covered = {t.task_id for t in trials}
        missing = sorted(set(evalset.tasks) - covered)
        if missing:
            raise UserError(
                f"{arm} has no trials for task(s) {', '.join(missing[:5])}"
                f"{' ...' if len(missing) > 5 else ''}; "
                "the paired comparison needs every task in both arms"
            )


def _primary(task: Task, trial: Trial) -> str | None:
    """First failed mandatory criterion in escalation order; 'unresolved' if open."""
    if trial.verdict is Verdict.PASS:
        return None
    flags: dict[str, list[bool]] = {}
    by_kind = {r.criterion_id: r for r in trial.results}
    for kind, category in FAILURE_CATEGORY.items():
        failed = any(
            r.verdict is Verdict.FAIL and r.role is CriterionRole.MANDATORY and r.kind is kind
            for r in by_kind.values()
        )
        flags[category] = [not failed]
    found = primary_failure(flags)[0]
    return "unresolved" if found is None else str(found)


def _tally_json(t: VerdictTally) -> dict[str, Any]:
    return {
        "n": t.n,
        "accepted": t.accepted,
        "failed": t.failed,
        "pending": t.pending,
        "unknown": t.unknown,
        "rate": t.rate,
        "lo_if_unresolved_fail": float(t.bounds.if_all_failed.lo),
        "hi_if_unresolved_pass": float(t.bounds.if_all_accepted.hi),
        "rate_if_unresolved_pass": (t.accepted + t.unresolved) / t.n if t.n else math.nan,
    }


def _calibrations(
    evalset: EvalSet, rules: GateRules
) -> tuple[dict[str, JudgeCalibration], list[str]]:
    """Calibration records in play, and mandatory judge criteria lacking one."""
    records: dict[str, JudgeCalibration] = {}
    uncalibrated: list[str] = []
    for ref in rules.judge.calibrations:
        try:
            rec = load_calibration(ref, rules.base_dir)
        except ValueError as exc:
            raise UserError(f"gate rules: {exc}") from exc
        records[rec.judge_id or ref] = rec
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
            if judge_id not in records:
                try:
                    records[judge_id] = load_calibration(cal_ref, evalset.base_dir)
                except ValueError as exc:
                    raise UserError(f"task {task.task_id}: {exc}") from exc
    return records, sorted(set(uncalibrated))


def _judge_failures(rec: JudgeCalibration, rules: GateRules) -> list[str]:
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
    if c.max_position_flip_rate is not None:
        if rec.position_flip_rate is None:
            bad.append("no position-flip measurement")
        elif rec.position_flip_rate > c.max_position_flip_rate:
            bad.append(
                f"position-flip rate {rec.position_flip_rate:.2f} > {c.max_position_flip_rate}"
            )
    if c.max_verbosity_rate is not None:
        if rec.verbosity_rate is None:
            bad.append("no verbosity-control measurement")
        elif rec.verbosity_rate > c.max_verbosity_rate:
            bad.append(f"verbosity rate {rec.verbosity_rate:.2f} > {c.max_verbosity_rate}")
    return bad


def _json_safe(value: Any) -> Any:
    """NaN/inf to None so report.json is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def _frac(x: float) -> str:
    return f"{x:+.4f} ({x * 100:+.1f} points)"


def run_gate(
    evalset: EvalSet,
    baseline: list[Trial],
    candidate: list[Trial],
    rules: GateRules,
    *,
    http_client: Any = None,
    scorecard: Scorecard | None = None,
) -> GateResult:
    """Grade both arms and apply the predeclared rule (and the scorecard's gates, if given).

    Raises:
        UserError: Trials for unknown tasks, a reused environment identity or
            trial id, a task missing from an arm, an unreadable calibration,
            or a scorecard computed for another eval set or version.
    """
    arms = {"baseline": baseline, "candidate": candidate}
    _check_inputs(evalset, arms)
    if scorecard is not None:
        check_scorecard_for(scorecard, evalset_name(evalset), evalset.version)
    context = GradingContext(
        base_dir=evalset.base_dir, http_client=http_client, judge_min_kappa=rules.judge.min_kappa
    )
    cache: dict[str, Any] = {}
    graded = {
        arm: [grade_trial(evalset.tasks[t.task_id], t, context, cache=cache) for t in trials]
        for arm, trials in arms.items()
    }
    task_ids = sorted(evalset.tasks)
    conf = rules.confidence
    reasons: list[BlockReason] = []
    report: dict[str, Any] = {
        "schema_version": 1,
        "evalset": {
            "dir": str(evalset.base_dir),
            "version": evalset.version,
            "tasks": len(task_ids),
        },
        "rules": rules.model_dump(mode="json"),
    }

    # Per-task outcomes (unresolved = not accepted; the default of 13.2.3).
    runs: dict[str, dict[str, list[Trial]]] = {arm: defaultdict(list) for arm in ARMS}
    for arm in ARMS:
        for t in graded[arm]:
            runs[arm][t.task_id].append(t)
    accepted = {
        arm: [[float(t.verdict is Verdict.PASS) for t in runs[arm][tid]] for tid in task_ids]
        for arm in ARMS
    }
    optimistic = {
        arm: [
            [
                float(t.verdict in (Verdict.PASS, Verdict.PENDING, Verdict.UNKNOWN))
                for t in runs[arm][tid]
            ]
            for tid in task_ids
        ]
        for arm in ARMS
    }

    arms_json: dict[str, Any] = {}
    for arm in ARMS:
        trials = graded[arm]
        n_runs = np.array([len(r) for r in accepted[arm]])
        c_runs = np.array([int(sum(r)) for r in accepted[arm]])
        k = rules.k
        passk: dict[str, Any] = {"k": k}
        if int(n_runs.min()) >= k:
            passk["pass_at_k"] = float(mean_pass_at_k(n_runs, c_runs, k))
            passk["pass_hat_k"] = float(mean_pass_hat_k(n_runs, c_runs, k))
        else:
            passk["note"] = f"a task has fewer than k={k} runs; pass^k not estimable"
        f1 = []
        for tid in task_ids:
            vals = [
                r.observation["trajectory_f1"]
                for t in runs[arm][tid]
                for r in t.results
                if "trajectory_f1" in r.observation
            ]
            if vals:
                f1.append(float(np.mean(vals)))
        credits = [t.partial_credit for t in trials if t.partial_credit is not None]
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
        arms_json[arm] = {
            "trials": _tally_json(tally((t.verdict or Verdict.UNKNOWN for t in trials), conf)),
            "task_mean_pass_rate": float(np.mean([np.mean(r) for r in accepted[arm]])),
            "pass_k": passk,
            "trajectory_f1": float(np.mean(f1)) if f1 else None,
            "partial_credit_mean": float(np.mean(credits)) if credits else None,
            "cost": cost,
            "tokens": sum(t.tokens or 0 for t in trials),
        }
    report["arms"] = arms_json

    # Paired cluster bootstrap, task as the unit (22.5).
    boot = paired_cluster_bootstrap(
        accepted["baseline"],
        accepted["candidate"],
        resamples=rules.bootstrap.resamples,
        confidence=conf,
        seed=rules.bootstrap.seed,
    )
    paired: dict[str, Any] = {
        "mean_delta": boot.mean_delta,
        "lo": boot.lo,
        "hi": boot.hi,
        "cluster_se": boot.se,
        "mde_80": boot.mde,
        "n_tasks": boot.n_tasks,
        "resamples": boot.resamples,
        "seed": boot.seed,
        "confidence": boot.confidence,
        "task_deltas": dict(zip(task_ids, (float(d) for d in boot.task_deltas), strict=True)),
    }
    if any(a["trials"]["pending"] + a["trials"]["unknown"] for a in arms_json.values()):
        worst = paired_cluster_bootstrap(
            optimistic["baseline"],
            accepted["candidate"],
            resamples=rules.bootstrap.resamples,
            confidence=conf,
            seed=rules.bootstrap.seed,
        )
        best = paired_cluster_bootstrap(
            accepted["baseline"],
            optimistic["candidate"],
            resamples=rules.bootstrap.resamples,
            confidence=conf,
            seed=rules.bootstrap.seed,
        )
        paired["unresolved_bounds"] = {
            "against_candidate": {"mean_delta": worst.mean_delta, "lo": worst.lo, "hi": worst.hi},
            "for_candidate": {"mean_delta": best.mean_delta, "lo": best.lo, "hi": best.hi},
        }
    single = all(len(r) == 1 for arm in ARMS for r in accepted[arm])
    if single:
        n11, n10, n01, n00 = paired_counts(
            [r[0] for r in accepted["baseline"]], [r[0] for r in accepted["candidate"]]
        )
        iv = newcombe_paired_interval(n11, n10, n01, n00, conf)
        paired["newcombe_method10"] = {
            "lo": float(iv.lo),
            "hi": float(iv.hi),
            "point": float(iv.point),
        }
        paired["mcnemar_exact_p"] = float(mcnemar_exact(n10, n01))
    report["paired"] = paired
    if boot.lo < -rules.margin:
        reasons.append(
            BlockReason(
                "paired_lower_bound",
                f"paired lower bound {_frac(boot.lo)} is below the allowed loss -{rules.margin} "
                f"(mean delta {_frac(boot.mean_delta)}, {conf:.0%} interval "
                f"[{boot.lo:+.4f}, {boot.hi:+.4f}] "
                f"over {boot.n_tasks} tasks)",
            )
        )

    # Golden (must-not-break) tasks.
    golden_ids = sorted(
        {tid for tid, t in evalset.tasks.items() if t.golden and rules.golden.use_task_flags}
        | set(rules.golden.tasks)
    )
    unknown_golden = [g for g in golden_ids if g not in evalset.tasks]
    if unknown_golden:
        raise UserError(
            f"gate rules name golden task(s) {unknown_golden} that are not in the eval set"
        )
    golden_json = {}
    regressions = []
    for tid in golden_ids:
        i = task_ids.index(tid)
        b, c = accepted["baseline"][i], accepted["candidate"][i]
        fails = Counter(
            _primary(evalset.tasks[tid], t)
            for t in runs["candidate"][tid]
            if t.verdict is not Verdict.PASS
        )
        entry = {
            "baseline": f"{int(sum(b))}/{len(b)}",
            "candidate": f"{int(sum(c))}/{len(c)}",
            "regressed": float(np.mean(c)) < float(np.mean(b)),
            "candidate_failures": dict(fails),
        }
        golden_json[tid] = entry
        if entry["regressed"]:
            why = ", ".join(f"{k} {v}" for k, v in fails.items())
            regressions.append(
                f"{tid} (baseline {entry['baseline']}, candidate {entry['candidate']}: {why})"
            )
    report["golden"] = golden_json
    if regressions:
        reasons.append(
            BlockReason("golden_regression", "must-not-break regression: " + "; ".join(regressions))
        )

    # Judge contract.
    records, uncalibrated = _calibrations(evalset, rules)
    judge_json: dict[str, Any] = {"contract": rules.judge.model_dump(mode="json"), "records": {}}
    for judge_id, rec in records.items():
        bad = _judge_failures(rec, rules)
        judge_json["records"][judge_id] = {
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
        judge_json["uncalibrated_mandatory"] = uncalibrated
        reasons.append(
            BlockReason(
                "judge_contract",
                "mandatory judge criteria without a calibration record: "
                + ", ".join(uncalibrated[:5]),
            )
        )
    report["judge"] = judge_json

    # Slices: trial pass rates with both-way bounds, floors on the candidate.
    slices_json: dict[str, Any] = {}
    weak = []
    names = sorted({t.slice for t in evalset.tasks.values()})
    for arm in ARMS:
        slices_json[arm] = {}
        for name in names:
            verdicts = [
                t.verdict or Verdict.UNKNOWN
                for t in graded[arm]
                if evalset.tasks[t.task_id].slice == name
            ]
            slices_json[arm][name] = _tally_json(tally(verdicts, conf))
    for name in names:
        floor = rules.slices.floor_for(name)
        rate = slices_json["candidate"][name]["rate"]
        if floor is not None and rate < floor:
            weak.append(f"{name} {rate:.3f} < {floor}")
    report["slices"] = slices_json
    if weak:
        reasons.append(
            BlockReason("slice_floor", "candidate misses slice floor: " + ", ".join(weak))
        )

    # Error burden per slice (22.6), both arms.
    burden: dict[str, Any] = {}
    for arm in ARMS:
        primaries = [_primary(evalset.tasks[t.task_id], t) for t in graded[arm]]
        sl = [evalset.tasks[t.task_id].slice for t in graded[arm]]
        burden[arm] = {
            k: {
                "success": float(v.success.point),
                "failures": v.failures,
                "dominant": v.dominant_failure,
            }
            for k, v in error_burden(sl, np.array(primaries, dtype=object), confidence=conf).items()
        }
    report["error_burden"] = burden

    # Critical side effects: any event in a candidate trial blocks.
    critical = set(rules.side_effects.critical)
    events: dict[str, list[str]] = defaultdict(list)
    for t in graded["candidate"]:
        for cat, count in (t.observations.side_effects or {}).items():
            if cat in critical and count > 0:
                events[cat].append(f"{t.trial_id}x{count}" if count > 1 else t.trial_id)
    report["side_effects"] = {"critical": sorted(critical), "candidate_events": dict(events)}
    if events:
        listing = "; ".join(f"{cat} in {', '.join(ids[:5])}" for cat, ids in sorted(events.items()))
        reasons.append(
            BlockReason(
                "critical_side_effect", f"critical side effects in candidate trials: {listing}"
            )
        )

    # Cost ceiling and pass^k floor.
    ceiling = rules.cost.max_cost_per_accepted_usd
    if ceiling is not None:
        cand_cost = arms_json["candidate"]["cost"]
        if not cand_cost["known"]:
            reasons.append(
                BlockReason(
                    "cost_ceiling",
                    "a cost ceiling is declared but candidate trials carry no cost_usd",
                )
            )
        elif not cand_cost["per_accepted_usd"] <= ceiling:
            reasons.append(
                BlockReason(
                    "cost_ceiling",
                    f"cost per accepted task ${cand_cost['per_accepted_usd']:.4f} "
                    f"exceeds the ceiling ${ceiling}",
                )
            )
    if rules.min_pass_hat_k is not None:
        got = arms_json["candidate"]["pass_k"].get("pass_hat_k")
        if got is None or got < rules.min_pass_hat_k:
            reasons.append(
                BlockReason(
                    "pass_hat_k_floor",
                    f"candidate pass^{rules.k} {got if got is None else round(got, 3)} "
                    f"below {rules.min_pass_hat_k}",
                )
            )

    if scorecard is not None:
        blocked = scorecard_reasons(scorecard)
        report["scorecard"] = _scorecard_json(scorecard, {m for m, _ in blocked})
        reasons.extend(BlockReason("scorecard", f"scorecard {why}") for _, why in blocked)

    verdict = "SHIP" if not reasons else "BLOCK"
    report["verdict"] = verdict
    report["reasons"] = [{"code": r.code, "message": r.message} for r in reasons]
    return GateResult(verdict, reasons, _json_safe(report), graded)


def _scorecard_json(card: Scorecard, blocking: set[str]) -> dict[str, Any]:
    """The scorecard as the gate saw it: identity, runs per task, every row with its gate."""
    return {
        "suite": card.suite,
        "evalset": None if card.evalset is None else card.evalset.model_dump(),
        "trials": card.trials,
        "tasks": card.tasks,
        "runs_per_task": card.runs_per_task,
        "confidence": card.confidence,
        "rows": [
            {
                "metric": r.metric,
                "point": r.point,
                "lo": r.lo,
                "hi": r.hi,
                "n": r.n,
                "interval": r.interval,
                "estimated": r.estimated,
                "gate": None if r.gate is None else r.gate.model_dump(exclude={"blocking"}),
                "blocks": r.metric in blocking,
            }
            for r in card.rows
        ],
    }


def gate_paths(
    evalset_dir: str | Path,
    baseline: str | Path,
    candidate: str | Path,
    rules: str | Path,
    *,
    scorecard: str | Path | None = None,
) -> GateResult:
    """Load everything from paths and run the gate (the CLI's one call)."""
    from flywheel.evalset._bundle_read import load_evalset
    from flywheel.evalset._gate_rules import load_rules
    from flywheel.evalset._trials_io import read_trials

    es = load_evalset(evalset_dir)
    card = None
    if scorecard is not None:
        card = load_scorecard(scorecard)
        check_scorecard_for(card, evalset_name(es), es.version, str(scorecard))
    return run_gate(
        es,
        read_trials(baseline),
        read_trials(candidate),
        load_rules(rules),
        scorecard=card,
    )
