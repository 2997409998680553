"""The grader contract and its registries.

A grader maps one trial's evidence to a :class:`Grade` (verdict, diagnostic
score, reason, observation). Graders are built by registered factories from
``(name, args)`` so the spec stored beside each result rebuilds the exact
grader (STYLE 7). A grader never raises on bad evidence: missing evidence is
``unknown`` with a reason; only a bad *spec* raises ``UserError``.

No code is chosen by input. A spec names a grader, and a schema grader may
name a pydantic model; both are looked up by exact name in a registry:

- the built-ins and whatever Python code registered (``register_grader``,
  ``register_schema``) before;
- plug-ins the operator installed: distributions that declare entry points in
  the groups ``flywheel.graders`` and ``flywheel.schemas``. Only an entry
  point whose *name* equals the requested one is loaded, and what it imports
  is what its installed metadata says, never text from the spec.

A name that is not registered is a ``UserError``; nothing is imported for it
(module paths, dunder names and file paths are just unknown names).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

from flywheel.evalset._task import GraderSpec, Task
from flywheel.evalset._trial import Trial, Verdict

from flywheel.errors import UserError


@dataclass(frozen=True)
class Grade:
    """One grader's finding for one trial.

    Attributes:
        verdict: pass / fail / pending / unknown.
        score: Diagnostic partial score in [0, 1] (share of checks met), or None.
        reason: Why, in one line.
        observation: What the grader saw (kept for error analysis).
    """

    verdict: Verdict
    score: float | None = None
    reason: str = ""
    observation: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GradingContext:
    """What a factory may need beyond its args.

    Attributes:
        base_dir: Directory that relative paths in args resolve against
            (the eval-set directory).
        http_client: Optional ``httpx.Client`` for judges (tests inject one).
        judge_min_kappa: The gate's judge contract; a judge below it cannot
            produce a mandatory pass.
    """

    base_dir: Path | None = None
    http_client: Any = None
    judge_min_kappa: float = 0.6


class Grader(Protocol):
    """Grades one trial of one task."""

    def __call__(self, task: Task, trial: Trial) -> Grade: ...  # noqa: D102


Factory = Callable[..., Grader]
_REGISTRY: dict[str, Factory] = {}
_SCHEMAS: dict[str, type] = {}
GRADER_ENTRY_POINTS = "flywheel.graders"
SCHEMA_ENTRY_POINTS = "flywheel.schemas"


def register_grader(name: str) -> Callable[[Factory], Factory]:
    """Register a factory ``f(context, **args) -> Grader`` under ``name``."""

    def deco(factory: Factory) -> Factory:
        _REGISTRY[name] = factory
        return factory

    return deco


def _plugin(group: str, name: str) -> Any:
    """The object of the installed entry point ``name`` in ``group``, or None."""
    for ep in entry_points(group=group):
        if ep.name == name:
            try:
                return ep.load()
            except (ImportError, AttributeError) as exc:
                raise UserError(f"plug-in {name!r} ({group}, {ep.value}) does not load: {exc}") from exc
    return None


def grader_names() -> list[str]:
    """Registered grader names (built-in, registered and installed plug-ins), sorted."""
    return sorted(set(_REGISTRY) | {ep.name for ep in entry_points(group=GRADER_ENTRY_POINTS)})


def register_schema(name: str, model: type) -> type:
    """Make the pydantic ``model`` available to schema graders as ``{"model": name}``."""
    from pydantic import BaseModel

    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"register_schema({name!r}): {model!r} is not a pydantic model")
    _SCHEMAS[name] = model
    return model


def schema_names() -> list[str]:
    """Names a schema grader's ``model`` may take, sorted."""
    return sorted(set(_SCHEMAS) | {ep.name for ep in entry_points(group=SCHEMA_ENTRY_POINTS)})


def registered_schema(name: str) -> type:
    """The pydantic model registered (or installed as a plug-in) under ``name``.

    Raises:
        ValueError: No such name (nothing is imported for it).
    """
    model = _SCHEMAS.get(name) if isinstance(name, str) else None
    if model is None and isinstance(name, str):
        model = _plugin(SCHEMA_ENTRY_POINTS, name)
        if model is not None:
            register_schema(name, model)
    if model is None:
        known = ", ".join(schema_names()) or "none yet"
        raise ValueError(
            f"model {name!r} is not a registered schema (registered: {known}); register it with "
            f"register_schema() or install it as a {SCHEMA_ENTRY_POINTS!r} entry point"
        )
    return model


def build_grader(spec: GraderSpec, context: GradingContext | None = None) -> Grader:
    """Rebuild a grader from its spec.

    Raises:
        UserError: Unknown grader name or arguments the factory rejects.
    """
    factory = _REGISTRY.get(spec.name)
    if factory is None:
        factory = _plugin(GRADER_ENTRY_POINTS, spec.name)
        if factory is not None:
            _REGISTRY[spec.name] = factory
    if factory is None:
        raise UserError(
            f"unknown grader {spec.name!r}; registered graders: {', '.join(grader_names())}"
        )
    try:
        return factory(context or GradingContext(), **spec.args)
    except TypeError as exc:
        raise UserError(f"grader {spec.name!r}: bad arguments {spec.args!r}: {exc}") from exc
    except ValueError as exc:
        raise UserError(f"grader {spec.name!r}: {exc}") from exc
