"""Schema grader: the structured response parses and has the declared shape (22.2).

Validates ``observations.output`` (an object, or a string holding JSON)
against either a JSON Schema subset (``type``, ``properties``, ``required``,
``additionalProperties`` (bool), ``items``, ``enum``, ``const``,
``minimum``/``maximum``, ``minLength``/``maxLength``, ``minItems``/``maxItems``,
``anyOf``) or a pydantic model registered under a name (``register_schema``
or an installed ``flywheel.schemas`` entry point; never imported from the
name). Unknown schema keywords raise at build time rather than being
silently ignored.
"""

from __future__ import annotations

import json
from typing import Any

from flywheel.evalset._graders._base import (
    Grade,
    GradingContext,
    register_grader,
    registered_schema,
)
from flywheel.evalset._task import Task
from flywheel.evalset._trial import Trial, Verdict
from pydantic import BaseModel, ValidationError

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}
_KEYWORDS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "anyOf",
    "title",
    "description",
    "$schema",
    "default",
}


def _check_keywords(schema: Any, where: str = "$") -> None:
    if not isinstance(schema, dict):
        raise ValueError(f"schema at {where} must be an object")
    unknown = set(schema) - _KEYWORDS
    if unknown:
        raise ValueError(f"schema at {where} uses unsupported keyword(s) {sorted(unknown)}")
    for name, sub in (schema.get("properties") or {}).items():
        _check_keywords(sub, f"{where}.{name}")
    if "items" in schema:
        _check_keywords(schema["items"], f"{where}[]")
    for i, sub in enumerate(schema.get("anyOf") or []):
        _check_keywords(sub, f"{where}.anyOf[{i}]")


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[name])


def validate(value: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """Errors of ``value`` against the supported JSON Schema subset (empty = valid)."""
    errors: list[str] = []
    t = schema.get("type")
    if t is not None:
        names = [t] if isinstance(t, str) else list(t)
        if not any(_is_type(value, n) for n in names):
            return [f"{where}: expected {t}, got {type(value).__name__}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{where}: expected {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} not in {schema['enum']!r}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{where}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{where}: {value} > maximum {schema['maximum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{where}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{where}: longer than {schema['maxLength']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{where}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{where}: more than {schema['maxItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                errors += validate(item, schema["items"], f"{where}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for name in schema.get("required") or []:
            if name not in value:
                errors.append(f"{where}: missing required {name!r}")
        for name, sub in props.items():
            if name in value:
                errors += validate(value[name], sub, f"{where}.{name}")
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(props))
            if extra:
                errors.append(f"{where}: unexpected properties {extra}")
    if "anyOf" in schema and not any(not validate(value, s, where) for s in schema["anyOf"]):
        errors.append(f"{where}: matches none of anyOf")
    return errors


def _load_model(ref: str) -> type[BaseModel]:
    if not isinstance(ref, str) or not ref:
        raise ValueError(f"model {ref!r} must be the name of a registered schema")
    return registered_schema(ref)  # type: ignore[return-value]


class SchemaGrader:
    """Validates the structured output against a schema or a pydantic model."""

    def __init__(self, schema: dict[str, Any] | None, model: str | None, field: str) -> None:
        if (schema is None) == (model is None):
            raise ValueError("schema grader needs exactly one of 'schema' or 'model'")
        if schema is not None:
            _check_keywords(schema)
        self.schema = schema
        self.model = _load_model(model) if model else None
        self.field = field

    def __call__(self, task: Task, trial: Trial) -> Grade:  # noqa: D102
        output = getattr(trial.observations, self.field, None)
        if output is None:
            return Grade(Verdict.UNKNOWN, None, f"no {self.field} recorded for this trial")
        if isinstance(output, str):
            try:
                output = json.loads(output)
            except json.JSONDecodeError as exc:
                return Grade(Verdict.FAIL, 0.0, f"{self.field} is not JSON: {exc.msg}")
        if self.model is not None:
            try:
                self.model.model_validate(output)
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first["loc"])
                return Grade(
                    Verdict.FAIL, 0.0, f"{loc}: {first['msg']}", {"errors": exc.error_count()}
                )
            return Grade(Verdict.PASS, 1.0, f"valid {self.model.__name__}")
        errors = validate(output, self.schema or {})
        if errors:
            return Grade(Verdict.FAIL, 0.0, "; ".join(errors[:3]), {"errors": len(errors)})
        return Grade(Verdict.PASS, 1.0, "output matches the schema")


@register_grader("schema")
def schema_grader(
    context: GradingContext,
    *,
    schema: dict[str, Any] | None = None,
    model: str | None = None,
    field: str = "output",
) -> SchemaGrader:
    """Factory: ``{"name": "schema", "args": {"schema": {...}}}`` or ``{"model": "NAME"}``."""
    return SchemaGrader(schema, model, field)
