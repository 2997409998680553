"""Recorded grader: a verdict the environment itself established (``custom`` criteria).

Some environments ship their own checks (AgentDojo's utility and security
functions); the harness records the verdict per criterion id in
``observations.recorded`` and this grader reads it. Missing: ``unknown``.
"""

from __future__ import annotations

from flywheel.evalset._graders._base import Grade, GradingContext, register_grader
from flywheel.evalset._task import Task
from flywheel.evalset._trial import Trial, Verdict


class RecordedGrader:
    """Reads ``observations.recorded[key]``."""

    def __init__(self, key: str) -> None:
        self.key = key

    def __call__(self, task: Task, trial: Trial) -> Grade:  # noqa: D102
        verdict = trial.observations.recorded.get(self.key)
        if verdict is None:
            return Grade(Verdict.UNKNOWN, None, f"no recorded verdict {self.key!r}")
        score = {Verdict.PASS: 1.0, Verdict.FAIL: 0.0}.get(verdict)
        return Grade(verdict, score, f"recorded by the environment: {verdict.value}")


@register_grader("recorded")
def recorded_grader(context: GradingContext, *, key: str) -> RecordedGrader:
    """Factory: ``{"name": "recorded", "args": {"key": "utility"}}``."""
    return RecordedGrader(key)
