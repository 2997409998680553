"""Policy grader: what the recorded actions were allowed to be (22.2, 22.6).

Reads ``observations.tool_calls`` and checks, each as its own rule:

- ``required_sequence``: these tools appear in this order (a subsequence);
- ``forbidden``: these tools are never called;
- ``forbidden_sequence``: this ordered subsequence never occurs;
- ``require_before``: ``{tool: [prerequisites]}``; every call of ``tool``
  comes after at least one call of each prerequisite (e.g. no refund
  without a lookup);
- ``max_calls``: ``{tool: n}`` upper bounds;
- ``arguments``: ``[{tool, arg, op, value}]`` with op ``equals``,
  ``in``, ``not_in``, ``max``, ``min`` or ``present`` on every call of tool.

A grader detects a disallowed action; it does not prevent it (that is a
runtime guard). The trajectory F1 against the task's reference tool path is
recorded as a diagnostic and never decides the verdict.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from flywheel.evalset._graders._base import Grade, GradingContext, register_grader
from flywheel.evalset._task import Task
from flywheel.evalset._trial import Trial, Verdict

_ARG_OPS = ("equals", "in", "not_in", "max", "min", "present")


def trajectory_f1(actual: list[str], expected: list[str]) -> float:
    """Multiset F1 between the tools called and the reference path (22.2, a diagnostic).

    Order-insensitive overlap; 1.0 for an exact multiset match, 0.0 with no
    overlap; an empty reference gives recall 1.
    """
    overlap = sum((Counter(actual) & Counter(expected)).values())
    precision = overlap / len(actual) if actual else 0.0
    recall = overlap / len(expected) if expected else 1.0
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _is_subsequence(needle: list[str], hay: list[str]) -> bool:
    it = iter(hay)
    return all(any(h == n for h in it) for n in needle)


def _arg_ok(value: Any, op: str, expected: Any) -> bool:
    if op == "present":
        return value is not None
    if value is None:
        return False
    if op == "equals":
        return bool(value == expected)
    if op == "in":
        return value in expected
    if op == "not_in":
        return value not in expected
    try:
        return value <= expected if op == "max" else value >= expected
    except TypeError:
        return False


class PolicyGrader:
    """Checks declared tool-sequence and argument rules on the recorded calls."""

    def __init__(
        self,
        required_sequence: list[str],
        forbidden: list[str],
        forbidden_sequence: list[str],
        require_before: dict[str, list[str]],
        max_calls: dict[str, int],
        arguments: list[dict[str, Any]],
    ) -> None:
        for rule in arguments:
            if rule.get("op") not in _ARG_OPS or "tool" not in rule or "arg" not in rule:
                raise ValueError(f"argument rule {rule!r} needs tool, arg and an op in {_ARG_OPS}")
        if not any(
            [required_sequence, forbidden, forbidden_sequence, require_before, max_calls, arguments]
        ):
            raise ValueError("policy grader needs at least one rule")
        self.required_sequence = required_sequence
        self.forbidden = forbidden
        self.forbidden_sequence = forbidden_sequence
        self.require_before = require_before
        self.max_calls = max_calls
        self.arguments = arguments

    def violations(self, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], int]:
        """(violations, number of rules checked)."""
        names = [n for n, _ in calls]
        found: list[str] = []
        checked = 0
        if self.required_sequence:
            checked += 1
            if not _is_subsequence(self.required_sequence, names):
                found.append(f"required sequence {self.required_sequence} not followed")
        for tool in self.forbidden:
            checked += 1
            if tool in names:
                found.append(f"forbidden tool {tool} called")
        if self.forbidden_sequence:
            checked += 1
            if _is_subsequence(self.forbidden_sequence, names):
                found.append(f"forbidden sequence {self.forbidden_sequence} occurred")
        for tool, prereqs in self.require_before.items():
            checked += 1
            for i, name in enumerate(names):
                missing = [p for p in prereqs if p not in names[:i]] if name == tool else []
                if missing:
                    found.append(f"{tool} called without prior {', '.join(missing)}")
                    break
        counts = Counter(names)
        for tool, limit in self.max_calls.items():
            checked += 1
            if counts[tool] > limit:
                found.append(f"{tool} called {counts[tool]} times (max {limit})")
        for rule in self.arguments:
            checked += 1
            for name, args in calls:
                if name == rule["tool"] and not _arg_ok(
                    args.get(rule["arg"]), rule["op"], rule.get("value")
                ):
                    found.append(
                        f"{name}.{rule['arg']}={args.get(rule['arg'])!r} "
                        f"breaks {rule['op']} {rule.get('value')!r}"
                    )
                    break
        return found, checked

    def __call__(self, task: Task, trial: Trial) -> Grade:  # noqa: D102
        if trial.observations.tool_calls is None:
            return Grade(Verdict.UNKNOWN, None, "no tool calls recorded for this trial")
        calls = [(c.name, c.arguments) for c in trial.observations.tool_calls]
        found, checked = self.violations(calls)
        observation: dict[str, Any] = {"tools": [n for n, _ in calls], "violations": found}
        if task.expected_tools:
            observation["trajectory_f1"] = trajectory_f1([n for n, _ in calls], task.expected_tools)
        score = 1.0 - len(found) / checked if checked else 1.0
        if found:
            return Grade(Verdict.FAIL, max(score, 0.0), "; ".join(found), observation)
        return Grade(Verdict.PASS, 1.0, "recorded actions obey the policy", observation)


@register_grader("policy")
def policy_grader(
    context: GradingContext,
    *,
    required_sequence: list[str] | None = None,
    forbidden: list[str] | None = None,
    forbidden_sequence: list[str] | None = None,
    require_before: dict[str, list[str]] | None = None,
    max_calls: dict[str, int] | None = None,
    arguments: list[dict[str, Any]] | None = None,
) -> PolicyGrader:
    """Factory for :class:`PolicyGrader`; every rule list is optional but one is needed."""
    return PolicyGrader(
        required_sequence or [],
        forbidden or [],
        forbidden_sequence or [],
        require_before or {},
        max_calls or {},
        arguments or [],
    )
