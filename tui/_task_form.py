"""The task editor's rules, without a terminal: form values -> task, errors by field.

Validation is the API's own: the eval-set ``Task`` pydantic model, then
``promote.validate_task`` (split, unchanged task id, graders that build), so
the editor never accepts what the server would refuse, and every error lands
beside the field that caused it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from flywheel.evalset import Task
from flywheel.promote import validate_task
from pydantic import ValidationError

from flywheel import UserError

#: Editor fields, in form order: (field id, label).
FIELDS: tuple[tuple[str, str], ...] = (
    ("slice", "slice"),
    ("golden", "golden"),
    ("split", "split"),
    ("expected_tools", "reference tool path (comma-separated, in order)"),
    ("allowed_tools", "scope: allowed tools"),
    ("write_tools", "scope: tools that may change state"),
    ("budgets", "budgets (JSON object)"),
    ("expected_state", "expected final state (JSON)"),
    ("criteria", "graders: criteria (JSON list)"),
)


def form_values(task: dict[str, Any]) -> dict[str, Any]:
    """The editor's initial values from a task."""
    meta = task.get("metadata") or {}
    scope = meta.get("scope") or {}
    return {
        "slice": task.get("slice", "all"),
        "golden": bool(task.get("golden", False)),
        "split": meta.get("split", "dev"),
        "expected_tools": ", ".join(task.get("expected_tools") or []),
        "allowed_tools": ", ".join(scope.get("allowed_tools") or []),
        "write_tools": ", ".join(scope.get("write_tools") or []),
        "budgets": json.dumps(meta.get("budgets") or {}),
        "expected_state": json.dumps(task.get("expected_state"), indent=2),
        "criteria": json.dumps(task.get("criteria") or [], indent=2),
    }


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def build_task(
    base: dict[str, Any], values: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Apply form ``values`` to ``base``; return (task, errors by field id).

    Budgets are kept in ``metadata.budgets`` and in the budget criterion's
    grader arguments (the draft writes both), so one edit changes both.
    """
    errors: dict[str, str] = {}
    parsed: dict[str, Any] = {}
    for key in ("budgets", "expected_state", "criteria"):
        text = str(values.get(key, "")).strip()
        try:
            parsed[key] = json.loads(text) if text else None
        except ValueError as exc:
            errors[key] = f"not JSON: {exc}"
    if "budgets" not in errors and not isinstance(parsed.get("budgets") or {}, dict):
        errors["budgets"] = "budgets must be a JSON object like {\"max_tool_calls\": 4}"
    task = copy.deepcopy(base)
    meta = task.setdefault("metadata", {})
    task["slice"] = str(values.get("slice", "")).strip()
    task["golden"] = bool(values.get("golden"))
    meta["split"] = values.get("split")
    task["expected_tools"] = _names(str(values.get("expected_tools", "")))
    meta["scope"] = {
        "allowed_tools": _names(str(values.get("allowed_tools", ""))),
        "write_tools": _names(str(values.get("write_tools", ""))),
    }
    if "expected_state" not in errors:
        task["expected_state"] = parsed["expected_state"]
    if "criteria" not in errors:
        task["criteria"] = parsed["criteria"] if parsed["criteria"] is not None else []
    if "budgets" not in errors:
        budgets = parsed["budgets"] or {}
        meta["budgets"] = budgets
        crit = [c for c in task.get("criteria", []) if isinstance(c, dict)]
        for c in crit:
            if c.get("kind") == "budget":
                c.setdefault("grader", {})["args"] = budgets
    return task, errors


def _field_of(loc: tuple[Any, ...], msg: str) -> str:
    if not loc:  # a whole-model rule: today only criteria rules exist
        return "criteria" if "criterion" in msg else "form"
    head = str(loc[0])
    if head == "metadata" and len(loc) > 1:
        sub = str(loc[1])
        return {"split": "split", "budgets": "budgets"}.get(sub, "allowed_tools")
    return {"criteria": "criteria", "expected_tools": "expected_tools", "slice": "slice",
            "golden": "golden", "expected_state": "expected_state"}.get(head, "form")


def validate(task: dict[str, Any], task_id: str | None) -> dict[str, str]:
    """Errors by field id ({} when the API would accept the task)."""
    try:
        Task.model_validate(task)
    except ValidationError as exc:
        errors: dict[str, str] = {}
        for e in exc.errors():
            where = ".".join(str(p) for p in e.get("loc", ()))
            loc, msg = tuple(e.get("loc", ())), str(e.get("msg"))
            errors.setdefault(_field_of(loc, msg), f"{where}: {msg}" if where else msg)
        return errors
    try:
        validate_task(task, task_id=task_id)
    except UserError as exc:
        msg = exc.message
        field = "criteria" if ("criterion" in msg or "grader" in msg) else (
            "split" if "split" in msg else "form")
        return {field: msg}
    return {}
