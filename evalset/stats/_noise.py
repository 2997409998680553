"""A grader with error rates as a noisy instrument (playbook, "The grader is a noisy instrument").

With true capability ``pi``, false-acceptance rate ``alpha`` (passes a wrong
solution) and false-rejection rate ``beta`` (fails a correct one):
``measured = pi (1 - beta) + (1 - pi) alpha``, slope ``1 - alpha - beta``,
and the runs needed to resolve a fixed true gap grow as
``(1 - alpha - beta)^-2``.
"""

from __future__ import annotations

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._types import FloatLike, Interval
from flywheel.evalset.stats._validate import float_result, rates, scalar_or_array, show
from numpy.typing import ArrayLike


def _slope(alpha: ArrayLike, beta: ArrayLike) -> np.ndarray:
    a = rates(alpha, "alpha")
    b = rates(beta, "beta")
    s = 1.0 - a - b
    if np.any(s <= 0):
        raise StatsInputError(
            f"alpha={show(alpha)} + beta={show(beta)} must be below 1; "
            "such a grader carries no signal"
        )
    return s


def measured_rate(true_rate: ArrayLike, alpha: ArrayLike, beta: ArrayLike) -> FloatLike:
    """``pi (1 - beta) + (1 - pi) alpha``: what a noisy grader reports.

    Floor ``alpha`` at ``pi = 0``, ceiling ``1 - beta`` at ``pi = 1``.

    Raises:
        StatsInputError: On rates outside [0, 1].
    """
    pi = rates(true_rate, "true_rate")
    a = rates(alpha, "alpha")
    b = rates(beta, "beta")
    return float_result(pi * (1.0 - b) + (1.0 - pi) * a)


def corrected_rate(measured: ArrayLike, alpha: ArrayLike, beta: ArrayLike) -> FloatLike:
    """Invert the grader-noise model: ``pi = (measured - alpha) / (1 - alpha - beta)``.

    Clipped to [0, 1] (a measured rate below the floor or above the ceiling
    is sampling noise). Assumes ``alpha`` and ``beta`` were calibrated on the
    same task population.

    Raises:
        StatsInputError: If ``alpha + beta >= 1`` or rates fall outside [0, 1].
    """
    m = rates(measured, "measured")
    s = _slope(alpha, beta)
    return float_result(np.clip((m - rates(alpha, "alpha")) / s, 0.0, 1.0))


def corrected_interval(interval: Interval, alpha: ArrayLike, beta: ArrayLike) -> Interval:
    """Map a measured-rate interval through :func:`corrected_rate` (limits map to limits).

    Widths grow by ``1 / (1 - alpha - beta)``; the grader's own calibration
    uncertainty is not included.

    Raises:
        StatsInputError: As :func:`corrected_rate`.
    """
    point = np.asarray(interval.point, dtype=np.float64)
    corrected_point = np.where(
        np.isnan(point), np.nan, corrected_rate(np.nan_to_num(point), alpha, beta)
    )
    return Interval(
        corrected_rate(interval.lo, alpha, beta),
        corrected_rate(interval.hi, alpha, beta),
        scalar_or_array(corrected_point),
        interval.confidence,
    )


def grader_slope(alpha: ArrayLike, beta: ArrayLike) -> FloatLike:
    """``d(measured)/d(pi) = 1 - alpha - beta``: how much a true gap is compressed.

    alpha 8 %, beta 15 %: 0.77. alpha 20 %, beta 25 %: 0.55.

    Raises:
        StatsInputError: If ``alpha + beta >= 1``.
    """
    return float_result(_slope(alpha, beta))


def run_inflation(alpha: ArrayLike, beta: ArrayLike) -> FloatLike:
    """Run-count multiplier ``(1 - alpha - beta)^-2`` to resolve the same true gap.

    alpha 8 %, beta 15 %: 1.7x. alpha 20 %, beta 25 %: 3.3x.

    Raises:
        StatsInputError: If ``alpha + beta >= 1``.
    """
    return float_result(_slope(alpha, beta) ** -2.0)
