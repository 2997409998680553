"""Ablation trials graded by the eval-set graders, on both sources.

Acceptance in an ablation is the graders' acceptance (acceptance-and-
statistics 13.2.3: every mandatory criterion passes). An ``--evalset`` run
grades each trial against its released task's criteria; a ``--suite`` run
grades against a one-criterion task whose grader is ``agentdojo-utility``,
so both paths go through ``evalset.grade_trial`` and store their per-
criterion grades with ``evalset.save_trials``.

Graders read a trial's evidence (``evalset.Trial``): the sT snapshot, the
final output, the tool calls in order, usage (cost, tokens, latency), the
harness's own verdicts (``observations.recorded``) and, when a task has a
side-effect criterion, the s0 -> sT side-effect summary. The tool calls are
taken from the trial's own ``execute_tool`` spans as they are exported
(:class:`CallCapture`), so grading never re-reads the span table.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from flywheel.evalset import (
    Criterion,
    CriterionKind,
    CriterionRole,
    Grade,
    Grader,
    GraderSpec,
    GradingContext,
    Task,
    Trial,
    Verdict,
    grade_trial,
    register_grader,
    trial_from_harness,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ._runner import TrialRecord

#: The grader that reads AgentDojo's own utility check, as the harness recorded it.
AGENTDOJO_UTILITY = "agentdojo-utility"


class AgentDojoUtilityGrader:
    """AgentDojo's utility verdict for the trial (the suite's own ``utility`` check).

    The check needs the live pre- and post-state, so the harness runs it
    when the trial ends and records it in ``observations.recorded["utility"]``;
    this grader reads that record. Missing (the checker crashed, or the trial
    did not come from the AgentDojo harness): ``unknown``.
    """

    def __call__(self, task: Task, trial: Trial) -> Grade:  # noqa: D102
        verdict = trial.observations.recorded.get("utility")
        if verdict is None:
            return Grade(Verdict.UNKNOWN, None, "no AgentDojo utility verdict recorded")
        score = {Verdict.PASS: 1.0, Verdict.FAIL: 0.0}.get(verdict)
        return Grade(verdict, score, f"AgentDojo utility check: {verdict.value}")


@register_grader(AGENTDOJO_UTILITY)
def agentdojo_utility_grader(context: GradingContext) -> AgentDojoUtilityGrader:
    """Factory: ``{"name": "agentdojo-utility", "args": {}}``."""
    return AgentDojoUtilityGrader()


def suite_task(suite: str, task_id: str) -> Task:
    """The grading task of a ``--suite`` cell: one mandatory ``agentdojo-utility`` criterion."""
    kind, _, name = suite.partition(":")
    return Task(
        task_id=task_id,
        slice=suite,
        criteria=[
            Criterion(
                id="utility",
                kind=CriterionKind.CUSTOM,
                role=CriterionRole.MANDATORY,
                grader=GraderSpec(name=AGENTDOJO_UTILITY),
                description="AgentDojo's own utility check of the user task.",
            )
        ],
        metadata={
            "environment": {
                "kind": kind,
                "suite": name,
                "user_task": task_id,
                "injection_task": None,
            }
        },
    )


class CallCapture(SpanExporter):
    """Forwards spans to ``inner`` and keeps each trial's tool calls, in start order.

    Reads ``execute_tool`` spans (``gen_ai.tool.name``,
    ``gen_ai.tool.call.arguments``) tagged with ``flywheel.trial.id``. Export
    never raises on a malformed span (it is skipped, like any processor on
    the hot path).
    """

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self._calls: dict[str, list[tuple[int, str, dict[str, Any]]]] = defaultdict(list)
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:  # noqa: D102
        found = []
        for span in spans:
            attrs = span.attributes or {}
            name = attrs.get("gen_ai.tool.name")
            trial = attrs.get("flywheel.trial.id")
            if attrs.get("gen_ai.operation.name") != "execute_tool" or not name or not trial:
                continue
            try:
                args = json.loads(str(attrs.get("gen_ai.tool.call.arguments") or "{}"))
            except ValueError:
                args = {}
            found.append((str(trial), span.start_time or 0, str(name), args))
        with self._lock:
            for trial, start, name, args in found:
                self._calls[trial].append((start, name, args if isinstance(args, dict) else {}))
        return self.inner.export(spans)

    def pop(self, trial_id: str) -> list[dict[str, Any]]:
        """The trial's calls as ``[{name, arguments}]`` (forgotten afterwards)."""
        with self._lock:
            calls = sorted(self._calls.pop(trial_id, []), key=lambda c: c[0])
        return [{"name": n, "arguments": a} for _, n, a in calls]

    def shutdown(self) -> None:  # noqa: D102
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:  # noqa: D102
        return self.inner.force_flush(timeout_millis)


def _needs_side_effects(task: Task) -> bool:
    # the state criterion reads the omissions and wrong values of the same analysis
    return any(c.kind in (CriterionKind.SIDE_EFFECT, CriterionKind.STATE) for c in task.criteria)


def side_effect_summary(
    record: TrialRecord, calls: list[dict[str, Any]]
) -> tuple[dict[str, int] | None, str | None]:
    """The trial's side-effect summary (``side_effects.side_effect_summary``).

    Critical events and scope violations per category, omissions and wrong
    values against the scope from the user task's ground truth (what the
    task may change). Returns ``(summary, None)``, or ``(None, error)`` when
    the analysis raised: the error is recorded on the trial
    (``observations.side_effects_error``), the graders say ``unknown`` and
    the release gate counts, names and blocks on it; it is never read as
    zero events.
    """
    try:
        from flywheel.side_effects import ToolCall
        from flywheel.side_effects import side_effect_summary as summarise

        from ._analysis import agentdojo_side_effects

        report = agentdojo_side_effects(
            record, [ToolCall(name=c["name"], args=c["arguments"]) for c in calls]
        )
        return summarise(report.classification, report.findings), None
    except Exception as exc:  # noqa: BLE001 - recorded on the trial as unknown evidence
        return None, f"{type(exc).__name__}: {exc}"[:500]


def grade_records(
    records: Sequence[TrialRecord],
    tasks: Mapping[str, Task],
    unit_of: Mapping[str, str],
    capture: CallCapture | None,
    context: GradingContext,
    *,
    cache: dict[str, Grader] | None = None,
) -> list[Trial]:
    """Grade each harness trial against its task's criteria (``evalset.grade_trial``).

    Args:
        records: Harness trial records.
        tasks: Task id (the pairing unit) -> the task graded against.
        unit_of: Trial id -> task id.
        capture: Where the trials' tool calls were captured (None: unknown).
        context: Grading context (the bundle directory for relative paths).
        cache: Built graders, reused across calls.

    Returns:
        Graded ``evalset.Trial`` records; ``trial.verdict`` is the acceptance.
    """
    out: list[Trial] = []
    for rec in records:
        unit = unit_of[rec.trial_id]
        task = tasks[unit]
        calls = capture.pop(rec.trial_id) if capture is not None else None
        trial = trial_from_harness(rec, tool_calls=calls)
        update: dict[str, Any] = {"task_id": unit, "task_version": task.version}
        if _needs_side_effects(task):
            summary, error = (
                side_effect_summary(rec, calls)
                if calls is not None
                else (None, "no tool calls captured for this trial")
            )
            update["observations"] = trial.observations.model_copy(
                update={"side_effects": summary, "side_effects_error": error}
            )
        trial = trial.model_copy(update=update)
        out.append(grade_trial(task, trial, context, cache=cache))
    return out


def for_storage(trial: Trial) -> Trial:
    """The graded trial without its sT snapshot (kept once, in ``ablation_snapshots``)."""
    return trial.model_copy(
        update={"observations": trial.observations.model_copy(update={"snapshot": None})}
    )
