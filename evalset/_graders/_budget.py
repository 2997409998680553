"""Budget grader: the trial stayed within its declared allowances (13.2.2, 13.5.5).

Each limit is its own unit (cost in dollars, tokens, seconds, tool calls),
never collapsed into one scalar. A limit whose measurement is missing is
``unknown``; a harness-reported budget exhaustion is a failure.
"""

from __future__ import annotations

from typing import Any

from flywheel.evalset._graders._base import Grade, GradingContext, register_grader
from flywheel.evalset._task import Task
from flywheel.evalset._trial import Trial, Verdict


class BudgetGrader:
    """Compares measured usage with declared ceilings."""

    def __init__(self, limits: dict[str, float]) -> None:
        if not limits:
            raise ValueError(
                "budget grader needs at least one of max_cost_usd, max_tokens, "
                "max_latency_s, max_tool_calls"
            )
        self.limits = limits

    def __call__(self, task: Task, trial: Trial) -> Grade:  # noqa: D102
        calls = trial.observations.tool_calls
        used: dict[str, Any] = {
            "max_cost_usd": trial.cost_usd,
            "max_tokens": trial.tokens,
            "max_latency_s": trial.latency_s,
            "max_tool_calls": None if calls is None else len(calls),
        }
        over = [
            f"{k[4:]} {used[k]} > {v}"
            for k, v in self.limits.items()
            if used[k] is not None and used[k] > v
        ]
        missing = [k[4:] for k in self.limits if used[k] is None]
        met = len(self.limits) - len(over) - len(missing)
        observation = {k[4:]: used[k] for k in self.limits}
        if trial.observations.budget_exhausted:
            over.append("harness reported budget exhaustion")
        if over:
            return Grade(Verdict.FAIL, met / len(self.limits), "; ".join(over), observation)
        if missing:
            return Grade(
                Verdict.UNKNOWN, None, f"usage not recorded: {', '.join(missing)}", observation
            )
        return Grade(Verdict.PASS, 1.0, "within every declared allowance", observation)


@register_grader("budget")
def budget_grader(
    context: GradingContext,
    *,
    max_cost_usd: float | None = None,
    max_tokens: int | None = None,
    max_latency_s: float | None = None,
    max_tool_calls: int | None = None,
) -> BudgetGrader:
    """Factory: any subset of the four ceilings."""
    limits = {
        k: v
        for k, v in {
            "max_cost_usd": max_cost_usd,
            "max_tokens": max_tokens,
            "max_latency_s": max_latency_s,
            "max_tool_calls": max_tool_calls,
        }.items()
        if v is not None
    }
    return BudgetGrader(limits)
