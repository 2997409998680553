"""What every rule of the gate reads: the graded arms, per task, and how a rule answers.

Each rule of the gate is a function ``GateEvidence -> Section`` (its part
of ``report.json`` and the reasons it blocks); ``run_gate`` applies them in
order and never averages one into another.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from flywheel.evalset._bundle_read import EvalSet
from flywheel.evalset._gate_rules import GateRules
from flywheel.evalset._trial import Trial, Verdict

ARMS = ("baseline", "candidate")

#: Reason codes that say the evidence is short rather than the candidate bad.
EVIDENCE_CODES = frozenset({"insufficient_evidence", "missing_evidence"})


@dataclass(frozen=True)
class BlockReason:
    """One reason the rule blocks; ``code`` is stable, ``message`` names the evidence."""

    code: str
    message: str


@dataclass
class Section:
    """One rule's part of the report and the reasons it blocks (empty: it passes)."""

    report: dict[str, Any]
    reasons: list[BlockReason] = field(default_factory=list)


@dataclass
class GateEvidence:
    """The graded trials of both arms, indexed the ways the rules read them.

    Attributes:
        evalset: The eval set (tasks by id).
        rules: The predeclared rule.
        graded: Graded trials per arm, in input order.
        task_ids: Every task id, sorted (the pairing order).
        runs: ``arm -> task id -> graded trials`` of that task.
    """

    evalset: EvalSet
    rules: GateRules
    graded: dict[str, list[Trial]]
    task_ids: list[str] = field(init=False)
    runs: dict[str, dict[str, list[Trial]]] = field(init=False)

    def __post_init__(self) -> None:
        self.task_ids = sorted(self.evalset.tasks)
        self.runs = {arm: defaultdict(list) for arm in ARMS}
        for arm in ARMS:
            for t in self.graded[arm]:
                self.runs[arm][t.task_id].append(t)

    def outcomes(
        self, arm: str, tasks: list[str] | None = None, *, unresolved: float = 0.0
    ) -> list[list[float]]:
        """Per-task 0/1 acceptance of ``arm``'s runs; unresolved runs count as ``unresolved``.

        The default 0 is the seed's (13.2.3): unresolved trials stay in the
        denominator as not accepted.
        """
        out = []
        for tid in tasks if tasks is not None else self.task_ids:
            row = []
            for t in self.runs[arm][tid]:
                if t.verdict is Verdict.PASS:
                    row.append(1.0)
                elif t.verdict is Verdict.FAIL:
                    row.append(0.0)
                else:
                    row.append(unresolved)
            out.append(row)
        return out


def json_safe(value: Any) -> Any:
    """NaN/inf to None so report.json is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def points(x: float) -> str:
    """A delta as a fraction and in points: ``+0.0125 (+1.2 points)``."""
    return f"{x:+.4f} ({x * 100:+.1f} points)"


def listing(items: list[str], limit: int = 5) -> str:
    """The first ``limit`` items, comma-separated, with ``(+N more)`` for the rest."""
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more
