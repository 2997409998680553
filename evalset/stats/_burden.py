"""Disparate error burden: who bears which kind of failure (22.6).

Every failing trial gets one primary category, the earliest boundary it
violated, and each predeclared slice reports its success rate together with
the composition of its failures; two slices at the same success rate can
carry opposite harm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._intervals import wilson_interval
from flywheel.evalset.stats._types import Interval
from numpy.typing import ArrayLike, NDArray

#: Escalating order of the 22.6 categories (schema, state, policy, judge checks).
FAILURE_ORDER: tuple[str, ...] = (
    "malformed_output",
    "wrong_final_state",
    "policy_violation",
    "poor_explanation",
)


def primary_failure(
    checks: Mapping[str, ArrayLike] | ArrayLike, categories: Sequence[str] = FAILURE_ORDER
) -> NDArray[np.object_]:
    """First failed check per trial, in escalating order; ``None`` for a success.

    Args:
        checks: Either a mapping ``category -> pass flags`` (its order is the
            escalation order, e.g. ``{"malformed_output": schema_ok,
            "wrong_final_state": state_ok, ...}``), or a 2-D boolean array
            ``trials x checks`` whose columns follow ``categories``.
        categories: Category names for the array form.

    Returns:
        An object array with one category name or ``None`` per trial.

    Raises:
        StatsInputError: On misaligned flags or a column/category count mismatch.
    """
    if isinstance(checks, Mapping):
        names = list(checks)
        try:
            cols = [np.asarray(checks[name], dtype=bool).ravel() for name in names]
        except (TypeError, ValueError) as exc:
            raise StatsInputError("check flags must be booleans") from exc
        if len({c.size for c in cols}) > 1:
            raise StatsInputError("every check needs one pass flag per trial")
        passes = np.column_stack(cols) if cols else np.ones((0, 0), dtype=bool)
    else:
        names = list(categories)
        passes = np.asarray(checks, dtype=bool)
        if passes.ndim == 1:
            passes = passes[None, :]
        if passes.ndim != 2 or passes.shape[1] != len(names):
            raise StatsInputError(
                f"checks must be trials x {len(names)} flags in the order {names}; "
                f"got {passes.shape}"
            )
    labels = np.array([*names, None], dtype=object)
    failed = ~passes
    first = np.where(failed.any(axis=1), failed.argmax(axis=1), len(names))
    return labels[first]


@dataclass(frozen=True)
class SliceBurden:
    """Success and failure composition of one predeclared slice.

    Attributes:
        n: Trials in the slice.
        successes: Trials without any failure.
        success: Success rate with its Wilson interval.
        failures: Primary-category counts of the failing trials.
        failure_rates: Each category's share of the slice's trials, with Wilson intervals.
        dominant_failure: The most frequent primary category (``None`` if none failed).
    """

    n: int
    successes: int
    success: Interval
    failures: dict[str, int]
    failure_rates: dict[str, Interval]
    dominant_failure: str | None


def error_burden(
    slices: ArrayLike, primary: ArrayLike, *, confidence: float = 0.95
) -> dict[str, SliceBurden]:
    """Per-slice success rate plus the composition of its failures (22.6).

    The 22.6 demonstration: returns-desk and billing-desk both at 0.75, one
    with two policy violations, the other with two poor explanations.

    A slice with one trial is reported like any other (wide intervals).
    n = 0 trials: an empty mapping.

    Args:
        slices: Slice name of each trial.
        primary: Primary failure category per trial (``None``/empty for a
            success), e.g. from :func:`primary_failure`.
        confidence: Level of the Wilson intervals.

    Raises:
        StatsInputError: On misaligned inputs.
    """
    s = np.asarray(slices, dtype=object)
    p = np.asarray(primary, dtype=object)
    if s.ndim != 1 or s.shape != p.shape:
        raise StatsInputError(
            f"need one slice and one primary category per trial; got {s.shape} and {p.shape}"
        )
    failed = np.frompyfunc(lambda value: value is not None and value != "", 1, 1)(p)
    failed = failed.astype(bool) if p.size else np.zeros(0, dtype=bool)
    names, which = np.unique(s.astype(str), return_inverse=True)
    report: dict[str, SliceBurden] = {}
    for index, name in enumerate(names.tolist()):
        mask = which == index
        n = int(mask.sum())
        cats, cnts = np.unique(p[mask & failed].astype(str), return_counts=True)
        failures = {str(c): int(k) for c, k in zip(cats, cnts, strict=True)}
        successes = n - int((mask & failed).sum())
        dominant: Any = max(failures, key=lambda c: (failures[c], c)) if failures else None
        report[name] = SliceBurden(
            n=n,
            successes=successes,
            success=wilson_interval(successes, n, confidence),
            failures=failures,
            failure_rates={c: wilson_interval(k, n, confidence) for c, k in failures.items()},
            dominant_failure=dominant,
        )
    return report
