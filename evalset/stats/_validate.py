"""Input checks shared by the statistics; every failure names value and fix."""

from __future__ import annotations

from statistics import NormalDist
from typing import Any, cast

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from numpy.typing import ArrayLike, NDArray

#: The standard library's quantile (Wichura AS241, double precision) equals
#: ``scipy.stats.norm.ppf`` to ~1e-16 and keeps scipy out of CLI start-up.
_STANDARD_NORMAL = NormalDist()


def show(value: Any, limit: int = 60) -> str:
    """``repr`` shortened for error messages (a long array would flood the line)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _level(value: Any, name: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise StatsInputError(f"{name}={show(value)} must be a number") from exc


def z_two_sided(confidence: float) -> float:
    """Standard normal quantile ``z_{1-alpha/2}`` for a two-sided level.

    Args:
        confidence: Two-sided coverage in ``(0, 1)``, e.g. ``0.95`` -> 1.95996.

    Raises:
        StatsInputError: If ``confidence`` is not strictly between 0 and 1.
    """
    confidence = _level(confidence, "confidence")
    if not 0.0 < confidence < 1.0:
        raise StatsInputError(
            f"confidence={show(confidence)} must lie strictly between 0 and 1 (e.g. 0.95)"
        )
    return float(_STANDARD_NORMAL.inv_cdf(0.5 + confidence / 2.0))


def z_one_sided(probability: float, name: str = "power") -> float:
    """Standard normal quantile ``z_p`` (e.g. power 0.8 -> 0.8416).

    Raises:
        StatsInputError: If ``probability`` is not strictly between 0 and 1.
    """
    probability = _level(probability, name)
    if not 0.0 < probability < 1.0:
        raise StatsInputError(f"{name}={show(probability)} must lie strictly between 0 and 1")
    return float(_STANDARD_NORMAL.inv_cdf(probability))


def counts(value: ArrayLike, name: str) -> NDArray[np.int64]:
    """Coerce to a non-negative integer array (scalars become 0-d arrays).

    Raises:
        StatsInputError: On negative, fractional, non-finite or non-numeric values.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StatsInputError(f"{name}={show(value)} must be a whole count") from exc
    if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr % 1 != 0)):
        raise StatsInputError(f"{name}={show(value)} must be non-negative whole counts")
    return arr.astype(np.int64)


def rates(value: ArrayLike, name: str) -> NDArray[np.float64]:
    """Coerce to a float array of probabilities in ``[0, 1]``.

    Raises:
        StatsInputError: If any value is outside the range or not finite.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StatsInputError(f"{name}={show(value)} must be a probability") from exc
    if arr.size:
        if np.any(~np.isfinite(arr) | (arr < 0) | (arr > 1)):
            raise StatsInputError(f"{name}={show(value)} must be probabilities in [0, 1]")
    return arr


def positive(value: ArrayLike, name: str, *, allow_zero: bool = False) -> NDArray[np.float64]:
    """Coerce to a float array of positive (or non-negative) finite values.

    Raises:
        StatsInputError: On a non-positive (or negative) or non-finite value.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StatsInputError(f"{name}={show(value)} must be a number") from exc
    if arr.size:
        bad = ~np.isfinite(arr) | ((arr < 0) if allow_zero else (arr <= 0))
        if np.any(bad):
            kind = "non-negative" if allow_zero else "positive"
            raise StatsInputError(f"{name}={show(value)} must be {kind} and finite")
    return arr


def scalar_or_array(arr: NDArray[Any]) -> Any:
    """Return a Python scalar for 0-d input, else the array itself."""
    arr = np.asarray(arr)
    return arr.item() if arr.ndim == 0 else arr


def float_result(arr: ArrayLike) -> float | NDArray[np.float64]:
    """A float for 0-d input, else a float64 array (typed :func:`scalar_or_array`)."""
    return cast("float | NDArray[np.float64]", scalar_or_array(np.asarray(arr, dtype=np.float64)))


def int_result(arr: ArrayLike) -> int | NDArray[np.int64]:
    """An int for 0-d input, else an int64 array (typed :func:`scalar_or_array`)."""
    return cast("int | NDArray[np.int64]", scalar_or_array(np.asarray(arr, dtype=np.int64)))
