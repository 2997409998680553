"""State grader: expected-state assertions on the sT snapshot (13.2.2, 22.2).

The outcome is owned by the environment, not the transcript, so this grader
reads only ``observations.snapshot``. Paths are JSON-pointer-like
(``/orders/O-41/status``; ``~1`` is ``/``, ``~0`` is ``~``; list indices
are numbers). Operators: ``equals`` (deep equality), ``contains`` (substring,
list element, dict key or sub-mapping), ``absent`` (path does not resolve),
``count`` (length of the list/dict/string at the path). The partial score is
the share of assertions met (a diagnostic).

The expected end state also speaks through side-effect analysis: a trial's
``observations.side_effects`` summary counts ``omission`` (a required change
the run did not make) and ``wrong_value`` (a required change made with other
values) against the task's scope. With ``expected_changes`` (the default)
either count above zero fails this criterion, named in the reason; a trial
without that summary is judged by its assertions alone (``unknown`` when the
grader has none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flywheel.evalset._graders._base import Grade, GradingContext, register_grader
from flywheel.evalset._task import Task
from flywheel.evalset._trial import Trial, Verdict

_MISSING = object()
_OPS = ("equals", "contains", "absent", "count")


def resolve_pointer(document: Any, path: str) -> Any:
    """Value at a JSON-pointer-like path, or a sentinel object if it does not resolve.

    ``""`` and ``"/"`` address the whole document.
    """
    if path in ("", "/"):
        return document
    if not path.startswith("/"):
        raise ValueError(f"path {path!r} must start with '/'")
    node = document
    for raw in path[1:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping):
            if part not in node:
                return _MISSING
            node = node[part]
        elif isinstance(node, list):
            if not part.lstrip("-").isdigit():
                return _MISSING
            i = int(part)
            if not -len(node) <= i < len(node):
                return _MISSING
            node = node[i]
        else:
            return _MISSING
    return node


def _contains(container: Any, value: Any) -> bool:
    if isinstance(container, str):
        return isinstance(value, str) and value in container
    if isinstance(container, list):
        return value in container
    if isinstance(container, Mapping):
        if isinstance(value, Mapping):
            return all(k in container and container[k] == v for k, v in value.items())
        return value in container
    return False


def check(document: Any, assertion: Mapping[str, Any]) -> tuple[bool, str]:
    """Evaluate one assertion; returns (met, explanation)."""
    path, op = assertion["path"], assertion["op"]
    got = resolve_pointer(document, path)
    if op == "absent":
        return got is _MISSING, f"{path} {'absent' if got is _MISSING else 'present'}"
    if got is _MISSING:
        return False, f"{path} does not resolve"
    value = assertion.get("value")
    if op == "equals":
        return got == value, f"{path} = {got!r}, expected {value!r}"
    if op == "contains":
        return _contains(got, value), f"{path} contains {value!r}: {_contains(got, value)}"
    if not isinstance(got, list | dict | str):
        return False, f"{path} is not countable"
    return len(got) == value, f"{path} has {len(got)} item(s), expected {value}"


#: Summary counts (side-effect analysis against the scope) that fail the state criterion.
EXPECTED_STATE_GAPS = ("omission", "wrong_value")


def _gaps(trial: Trial) -> dict[str, int] | None:
    summary = trial.observations.side_effects
    if summary is None or not any(k in summary for k in EXPECTED_STATE_GAPS):
        return None
    return {k: int(summary.get(k, 0)) for k in EXPECTED_STATE_GAPS}


class StateGrader:
    """Checks every assertion against the trial's sT snapshot, and the expected changes."""

    def __init__(self, assertions: list[dict[str, Any]], expected_changes: bool = True) -> None:
        if not assertions and not expected_changes:
            raise ValueError("state grader needs at least one assertion or expected_changes")
        for a in assertions:
            if a.get("op") not in _OPS or not isinstance(a.get("path"), str):
                raise ValueError(f"assertion {a!r} needs a 'path' string and an op in {_OPS}")
            if a["op"] == "count" and not isinstance(a.get("value"), int):
                raise ValueError(f"count assertion {a!r} needs an integer 'value'")
            resolve_pointer({}, a["path"])  # validates the path syntax
        self.assertions = assertions
        self.expected_changes = expected_changes

    def __call__(self, task: Task, trial: Trial) -> Grade:  # noqa: D102
        gaps = _gaps(trial) if self.expected_changes else None
        failed: list[str] = []
        met = total = 0
        if gaps is not None:
            total += 1
            bad = {k: v for k, v in gaps.items() if v}
            if bad:
                failed.append(
                    "expected changes not made: "
                    + ", ".join(f"{v} {k.replace('_', ' ')}(s)" for k, v in bad.items())
                )
            else:
                met += 1
        if self.assertions:
            snapshot = trial.observations.snapshot
            if snapshot is None:
                if gaps is None or not failed:
                    return Grade(Verdict.UNKNOWN, None, "no sT snapshot recorded for this trial")
            else:
                findings = [check(snapshot, a) for a in self.assertions]
                met += sum(ok for ok, _ in findings)
                total += len(findings)
                failed += [why for ok, why in findings if not ok]
        elif gaps is None:
            return Grade(Verdict.UNKNOWN, None, "no expected-change summary for this trial")
        verdict = Verdict.PASS if not failed else Verdict.FAIL
        reason = "all state assertions hold" if not failed else "; ".join(failed)
        return Grade(verdict, met / total if total else None, reason, {"met": met, "of": total})


@register_grader("state")
def state_grader(
    context: GradingContext,
    *,
    assertions: list[dict[str, Any]] | None = None,
    expected_changes: bool = True,
) -> StateGrader:
    """Factory: ``{"name": "state", "args": {"assertions": [{path, op, value}]}}``.

    ``expected_changes`` (default true): omissions and wrong values counted
    in the trial's side-effect summary fail the criterion too; without
    ``assertions`` it is the whole check. An empty assertion list is an error.
    """
    if assertions is not None and not assertions:
        raise ValueError("state grader needs at least one assertion (or omit 'assertions')")
    return StateGrader(list(assertions or []), expected_changes)
