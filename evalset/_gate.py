"""The release gate: graded trials in, the predeclared rule applied, every reason named (22.7).

The gate refuses bad input first (``_gate_inputs``: one configuration per
arm, matching task versions, no trial twice), checks the judge calibrations
in play, grades both arms against the eval set's task contracts, then
applies each rule as its own possible blocker (never averaged together):

- the paired decision on candidate minus baseline, task as the unit
  (``_gate_paired``: Newcombe method 10 with one run per task, the cluster
  paired t with several), against ``-margin``;
- golden tasks, the judge contract, candidate slice floors, critical side
  effects, missing evidence, the cost ceiling and the pass^k floor
  (``_gate_checks``);
- with a scorecard (``flywheel scorecard --json``) for the same eval set and
  version: every scorecard row whose gate column blocks (playbook, "A
  scorecard": gates block a release rather than join an average).

Three verdicts: ``SHIP`` (no reason), ``INSUFFICIENT_EVIDENCE`` (every
reason says the evidence is short: ``insufficient_evidence`` with the
sample-size plan, or ``missing_evidence`` naming what could not be
computed) and ``BLOCK`` (any other reason). Both refusals exit 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flywheel.evalset._bundle_read import EvalSet
from flywheel.evalset._gate_checks import (
    burden_section,
    cost_section,
    golden_section,
    judge_section,
    missing_section,
    side_effects_section,
)
from flywheel.evalset._gate_evidence import (
    EVIDENCE_CODES,
    BlockReason,
    GateEvidence,
    Section,
    json_safe,
)
from flywheel.evalset._gate_inputs import Arm, ArmInput, check_arms, check_out_dir
from flywheel.evalset._gate_paired import arms_section, paired_section, slices_section
from flywheel.evalset._gate_rules import GateRules
from flywheel.evalset._graders import GradingContext, grade_trial
from flywheel.evalset._scorecard_file import (
    Scorecard,
    check_scorecard_for,
    evalset_name,
    load_scorecard,
    scorecard_reasons,
)
from flywheel.evalset._trial import Trial

#: Report layout version (2: the paired decision follows the design; task-clustered rates).
REPORT_SCHEMA = 2

@dataclass
class GateResult:
    """The decision and its evidence packet.

    Attributes:
        verdict: ``"SHIP"``, ``"BLOCK"`` or ``"INSUFFICIENT_EVIDENCE"``.
        reasons: Every blocking reason (empty to ship).
        report: JSON-ready evidence (what report.json holds).
        graded: Graded trials per arm.
        files: Report files written by :func:`gate_paths` (``json``, ``md``, ``png``).
    """

    verdict: str
    reasons: list[BlockReason]
    report: dict[str, Any]
    graded: dict[str, list[Trial]] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """0 to ship, 2 to block or for insufficient evidence."""
        return 0 if self.verdict == "SHIP" else 2


def verdict_of(reasons: list[BlockReason]) -> str:
    """``SHIP`` without reasons, ``INSUFFICIENT_EVIDENCE`` when all are evidence, else ``BLOCK``."""
    if not reasons:
        return "SHIP"
    if all(r.code in EVIDENCE_CODES for r in reasons):
        return "INSUFFICIENT_EVIDENCE"
    return "BLOCK"


def _grade(
    evalset: EvalSet, arms: dict[str, Arm], rules: GateRules, http_client: Any
) -> dict[str, list[Trial]]:
    context = GradingContext(
        base_dir=evalset.base_dir, http_client=http_client, judge_min_kappa=rules.judge.min_kappa
    )
    cache: dict[str, Any] = {}
    return {
        name: [grade_trial(evalset.tasks[t.task_id], t, context, cache=cache) for t in arm.trials]
        for name, arm in arms.items()
    }


def run_gate(
    evalset: EvalSet,
    baseline: ArmInput,
    candidate: ArmInput,
    rules: GateRules,
    *,
    http_client: Any = None,
    scorecard: Scorecard | None = None,
    config_ids: Mapping[str, str] | None = None,
) -> GateResult:
    """Check the inputs, grade both arms and apply the predeclared rule (see module).

    Args:
        evalset: The eval set both arms ran.
        baseline: Baseline trials (a list, or ``read_trials_file`` for file:line errors).
        candidate: Candidate trials, likewise.
        rules: The predeclared rule.
        http_client: Client for judge endpoints (tests pass an in-process one).
        scorecard: A safety scorecard for the same eval set version.
        config_ids: ``{arm: config id}`` to keep one configuration of a mixed arm.

    Raises:
        UserError: Any refusal of ``check_arms``, an unusable calibration
            record, golden ids not in the eval set, or a scorecard computed
            for another eval set or version.
    """
    arms = check_arms(evalset, baseline, candidate, config_ids)
    if scorecard is not None:
        check_scorecard_for(scorecard, evalset_name(evalset), evalset.version)
    judge = judge_section(evalset, rules)
    ev = GateEvidence(evalset, rules, _grade(evalset, arms, rules, http_client))
    report: dict[str, Any] = {
        "schema_version": REPORT_SCHEMA,
        "evalset": {"dir": str(evalset.base_dir), "version": evalset.version,
                    "tasks": len(ev.task_ids)},
        "rules": rules.model_dump(mode="json"),
        "inputs": {
            name: {"config_id": a.config_id, "trials": len(a.trials),
                   "dropped_other_configs": a.dropped,
                   "source": None if a.source is None else str(a.source.path)}
            for name, a in arms.items()
        },
    }
    arms_part = arms_section(ev)
    sections: list[tuple[str | None, Section]] = [
        ("arms", arms_part),
        ("paired", paired_section(ev)),
        ("golden", golden_section(ev)),
        ("judge", judge),
        ("slices", slices_section(ev)),
        ("error_burden", burden_section(ev)),
        ("side_effects", side_effects_section(ev)),
        ("missing_evidence", missing_section(ev)),
        (None, cost_section(ev, arms_part.report)),
    ]
    if scorecard is not None:
        sections.append(("scorecard", _scorecard_section(scorecard)))
    reasons: list[BlockReason] = []
    for key, section in sections:
        if key is not None:
            report[key] = section.report
        reasons.extend(section.reasons)
    verdict = verdict_of(reasons)
    report["verdict"] = verdict
    report["reasons"] = [{"code": r.code, "message": r.message} for r in reasons]
    return GateResult(verdict, reasons, json_safe(report), ev.graded)


def _scorecard_section(card: Scorecard) -> Section:
    """The scorecard as the gate saw it; every gated row that blocks (or has no value) blocks."""
    blocked = scorecard_reasons(card)
    blocking = {m for m, _ in blocked}
    report = {
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
        "unknown_rows": [r.metric for r in card.rows if r.point is None],
    }
    return Section(report, [BlockReason("scorecard", f"scorecard {why}") for _, why in blocked])


def gate_paths(
    evalset_dir: str | Path,
    baseline: str | Path,
    candidate: str | Path,
    rules: str | Path,
    *,
    scorecard: str | Path | None = None,
    config_ids: Mapping[str, str] | None = None,
    out_dir: str | Path | None = None,
) -> GateResult:
    """Load everything from paths, run the gate and (with ``out_dir``) write the report.

    The CLI's one call. ``out_dir`` is checked before any work is done.

    Raises:
        UserError: Any bad input, one line naming the file (and line).
    """
    from flywheel.evalset._bundle_read import load_evalset
    from flywheel.evalset._gate_rules import load_rules
    from flywheel.evalset._report import write_report
    from flywheel.evalset._trials_io import read_trials_file

    out = check_out_dir(out_dir) if out_dir is not None else None
    es = load_evalset(evalset_dir)
    card = None
    if scorecard is not None:
        card = load_scorecard(scorecard)
        check_scorecard_for(card, evalset_name(es), es.version, str(scorecard))
    result = run_gate(
        es,
        read_trials_file(baseline),
        read_trials_file(candidate),
        load_rules(rules),
        scorecard=card,
        config_ids=config_ids,
    )
    if out is not None:
        result.files = write_report(result, out)
    return result
