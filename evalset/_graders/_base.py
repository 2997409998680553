"""The grader contract and its registry.

A grader maps one trial's evidence to a :class:`Grade` (verdict, diagnostic
score, reason, observation). Graders are built by registered factories from
``(name, args)`` so the spec stored beside each result rebuilds the exact
grader (STYLE 7). A grader never raises on bad evidence: missing evidence is
``unknown`` with a reason; only a bad *spec* raises ``UserError``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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


def register_grader(name: str) -> Callable[[Factory], Factory]:
    """Register a factory ``f(context, **args) -> Grader`` under ``name``."""

    def deco(factory: Factory) -> Factory:
        _REGISTRY[name] = factory
        return factory

    return deco


def grader_names() -> list[str]:
    """Registered grader names, sorted."""
    return sorted(_REGISTRY)


def build_grader(spec: GraderSpec, context: GradingContext | None = None) -> Grader:
    """Rebuild a grader from its spec.

    Raises:
        UserError: Unknown grader name or arguments the factory rejects.
    """
    factory = _REGISTRY.get(spec.name)
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
