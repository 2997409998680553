"""A side-effect analysis that raises is recorded as unknown evidence, never as zero events."""

from __future__ import annotations

import dataclasses

from flywheel.evalset import GradingContext, Task, Verdict
from flywheel.harness import CallCapture, TrialRecord, grade_records
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def _record(**kw: object) -> TrialRecord:
    fields = {f.name: None for f in dataclasses.fields(TrialRecord)}
    fields.update(
        trial_id="tr-1", run_id="run", suite="agentdojo:nonexistent-suite", task_id="user_task_0",
        injection_task_id="", environment_id="env-1", trace_id="trace-1", config_id="cfg",
        agent={}, seams=[], seam_modes={}, budget={}, seed=0, run_index=0, status="done",
        utility=True, security=None, budget_resource="", error="", final_output="done",
        tool_calls=0, write_calls=0, input_tokens=0, output_tokens=0, cost=0.0, started_ns=0,
        duration_s=0.1, faults=[], notes={}, timings={}, s0="{}", sT="{}",
    )
    fields.update(kw)
    return TrialRecord(**fields)  # type: ignore[arg-type]


TASK = Task.model_validate(
    {
        "task_id": "user_task_0",
        "criteria": [
            {"id": "utility", "kind": "custom", "grader": {"name": "agentdojo-utility"}},
            {"id": "effects", "kind": "side-effect", "grader": {"name": "side-effect"}},
        ],
    }
)


def test_analysis_error_is_recorded_and_the_mandatory_criterion_is_unknown() -> None:
    capture = CallCapture(InMemorySpanExporter())
    [graded] = grade_records(
        [_record()], {"user_task_0": TASK}, {"tr-1": "user_task_0"}, capture, GradingContext()
    )
    obs = graded.observations
    assert obs.side_effects is None
    assert obs.side_effects_error and "nonexistent-suite" in obs.side_effects_error
    effects = next(r for r in graded.results if r.criterion_id == "effects")
    assert effects.verdict is Verdict.UNKNOWN
    assert effects.reason.startswith("side-effect analysis failed: ")
    assert graded.verdict is Verdict.UNKNOWN  # mandatory: the trial is unresolved, not a pass


def test_no_captured_calls_is_unknown_too() -> None:
    [graded] = grade_records(
        [_record()], {"user_task_0": TASK}, {"tr-1": "user_task_0"}, None, GradingContext()
    )
    assert graded.observations.side_effects_error == "no tool calls captured for this trial"
    assert graded.verdict is Verdict.UNKNOWN
