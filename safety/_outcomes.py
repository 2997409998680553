"""Outcome categories: budget exhaustion and impossible are not failures.

Playbook, "Budgets are safety primitives": an episode that hit a budget is
not one that concluded wrongly ("if 30% of your failures are budget
exhaustions, your problem is a loop, not a model"); and a task the
environment made impossible ("reset(s0)") measures the environment, not the
agent. Both are reported apart and excluded from the capability rate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flywheel.evalset.stats import Interval, wilson_interval
from flywheel.harness import (
    Environment,
    RealTools,
    ToolCall,
    ToolResult,
    TrialRecord,
    register_seam,
)

OUTCOMES: tuple[str, ...] = ("success", "failure", "budget_exhausted", "impossible", "error")
#: An agent or harness marks a trial impossible with this note (or this answer prefix).
IMPOSSIBLE_NOTE = "impossible"
IMPOSSIBLE_PREFIX = "[impossible]"
#: The error a changed environment returns (``tools.impossible``).
GONE_ERROR = "NotFoundError: the resource no longer exists (the environment changed)"


@register_seam("tools", "real", "tools.impossible")
class ImpossibleTools(RealTools):
    """Real tools in an environment changed after s0: every write fails, nothing runs.

    A probe for the ``impossible`` outcome: no agent can complete a task that
    needs a write, so a trial that reports the change is impossible, not failed.
    """

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        self._reads = {t.name for t in env.tools() if t.read_only}

    def call(self, call: ToolCall) -> ToolResult:
        """Reads run; writes return ``GONE_ERROR`` without touching the state."""
        if call.name in self._reads:
            return super().call(call)
        return ToolResult(text=GONE_ERROR, error=GONE_ERROR)


def outcome(record: TrialRecord | dict[str, Any]) -> str:
    """The trial's outcome category (one of ``OUTCOMES``); a record or a stored trial row."""

    def get(name: str) -> Any:
        return record.get(name) if isinstance(record, dict) else getattr(record, name)

    status = get("status")
    notes = get("notes") or {}
    if status == "budget_exhausted":
        return "budget_exhausted"
    if notes.get(IMPOSSIBLE_NOTE) or (get("final_output") or "").startswith(IMPOSSIBLE_PREFIX):
        return "impossible"
    if status == "error":
        return "error"
    return "success" if get("utility") else "failure"


@dataclass(frozen=True)
class OutcomeReport:
    """Counts per category and the capability rate over decided trials only."""

    counts: dict[str, int]
    capability: Interval
    budget_exhausted_share: Interval

    @property
    def n(self) -> int:
        """All trials."""
        return sum(self.counts.values())


def outcome_report(
    records: Iterable[TrialRecord | dict[str, Any]], confidence: float = 0.95
) -> OutcomeReport:
    """Capability = success / (success + failure); budget/impossible/error reported apart.

    n = 0 decided trials: the capability interval is [0, 1].
    """
    c = Counter(outcome(r) for r in records)
    counts = {k: c.get(k, 0) for k in OUTCOMES}
    decided = counts["success"] + counts["failure"]
    n = sum(counts.values())
    return OutcomeReport(
        counts,
        wilson_interval(counts["success"], decided, confidence),
        wilson_interval(counts["budget_exhausted"], n, confidence),
    )
