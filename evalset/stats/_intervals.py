"""Intervals for one acceptance (or violation) rate.

acceptance-and-statistics 13.5.2 (eq. 2) and 13.2.3 (the four-verdict rule:
unresolved trials stay in the denominator and are reported with both-way
bounds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._types import FloatLike, Interval
from flywheel.evalset.stats._validate import counts, scalar_or_array, show, z_two_sided
from numpy.typing import ArrayLike


def wilson_interval(successes: ArrayLike, n: ArrayLike, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion (seed eq. 2).

    ``c = (x + z^2/2) / (n + z^2)`` and the limits are
    ``c -/+ z/(n + z^2) * sqrt(x (n - x)/n + z^2/4)``. It keeps a non-zero
    width at 0 or n successes, where the Wald interval collapses: 0 of 50
    gives an upper limit ``z^2/(50 + z^2)`` = 7.13 %.

    Vectorised: ``successes`` and ``n`` broadcast against each other.

    n = 0: no information, the interval is ``[0, 1]`` and ``point`` is ``nan``.
    n = 1: ``[0, 0.79]`` for a failure, ``[0.21, 1]`` for a success.

    Args:
        successes: Accepted (or violating) count(s) ``x``, ``0 <= x <= n``.
        n: Trial or task count(s).
        confidence: Two-sided level; ``z`` is its normal quantile.

    Returns:
        ``Interval(lo, hi, point=x/n)``, limits clipped to ``[0, 1]``.

    Raises:
        StatsInputError: On negative or fractional counts, ``x > n``, or a
            confidence outside ``(0, 1)``.
    """
    z = z_two_sided(confidence)
    x = counts(successes, "successes")
    m = counts(n, "n")
    x, m = np.broadcast_arrays(x, m)
    if np.any(x > m):
        raise StatsInputError(f"successes={show(successes)} exceed n={show(n)}; pass x <= n")
    lo, hi, point = _wilson(x.astype(np.float64), m.astype(np.float64), z)
    return Interval(scalar_or_array(lo), scalar_or_array(hi), scalar_or_array(point), confidence)


def _wilson(xf: np.ndarray, nf: np.ndarray, z: float) -> tuple[np.ndarray, ...]:
    """Wilson limits for (possibly fractional) ``x`` of ``n``: ``(lo, hi, point)``."""
    z2 = z * z
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.where(nf > 0, xf * (nf - xf) / np.where(nf > 0, nf, 1.0), 0.0)
        point = np.where(nf > 0, xf / np.where(nf > 0, nf, 1.0), np.nan)
    center = (xf + z2 / 2.0) / (nf + z2)
    half = z / (nf + z2) * np.sqrt(np.maximum(spread, 0.0) + z2 / 4.0)
    lo = np.where(xf <= 0, 0.0, np.clip(center - half, 0.0, 1.0))
    hi = np.where(xf >= nf, 1.0, np.clip(center + half, 0.0, 1.0))
    return lo, hi, point


def clustered_rate_interval(runs: Sequence[Sequence[float]] | ArrayLike,
                            confidence: float = 0.95) -> Interval:
    """A task-clustered interval for a pass rate: Wilson at the effective sample size.

    The rate is the mean of the per-task pass rates (the task is the unit,
    22.5). Repeated runs of a task are not independent, so the Wilson
    interval (eq. 2) is computed at the effective sample size
    ``n_eff = p (1 - p) / SE^2`` with ``SE = s / sqrt(N)`` over the ``N``
    per-task rates (Korn and Graubard 1998), kept between ``N`` (a task's
    runs are worth at least one task) and the run count (worth at most
    independent trials). A rate of 0 or 1, or no spread between tasks,
    uses ``n_eff = N``. One run per task: exactly the Wilson interval on
    ``N`` tasks. n = 0 tasks: ``[0, 1]`` with ``point = nan``.

    Raises:
        StatsInputError: On runs other than 0/1, an empty task or an invalid level.
    """
    from flywheel.evalset.stats._outcomes import task_counts

    z = z_two_sided(confidence)
    n_runs, passes = task_counts(runs, "runs")
    scores = passes / np.maximum(n_runs, 1)
    tasks = scores.size
    if tasks == 0:
        return Interval(0.0, 1.0, float("nan"), confidence)
    p = float(scores.mean())
    total = float(np.sum(n_runs))
    se2 = float(scores.var(ddof=1)) / tasks if tasks > 1 else 0.0
    if 0.0 < p < 1.0 and se2 > 0:
        n_eff = min(max(p * (1 - p) / se2, float(tasks)), total)
    else:
        n_eff = float(tasks)
    lo, hi, _ = _wilson(np.asarray(p * n_eff), np.asarray(n_eff), z)
    return Interval(float(lo), float(hi), p, confidence)


def wald_interval(successes: ArrayLike, n: ArrayLike, confidence: float = 0.95) -> Interval:
    """Textbook Wald interval ``p +/- z sqrt(p(1-p)/n)``, deliberately unclipped.

    Kept to show why the seed rejects it (13.5.2, figure 4B): zero width at
    0 or n successes, and a negative lower limit at 2 of 50. Do not gate on it.

    n = 0: all fields ``nan``. n = 1: zero width at the single outcome.

    Raises:
        StatsInputError: As :func:`wilson_interval`.
    """
    z = z_two_sided(confidence)
    x = counts(successes, "successes")
    m = counts(n, "n")
    x, m = np.broadcast_arrays(x, m)
    if np.any(x > m):
        raise StatsInputError(f"successes={show(successes)} exceed n={show(n)}; pass x <= n")
    with np.errstate(invalid="ignore", divide="ignore"):
        nf = np.where(m > 0, m, np.nan).astype(np.float64)
        p = x / nf
        half = z * np.sqrt(p * (1.0 - p) / nf)
    return Interval(
        scalar_or_array(p - half), scalar_or_array(p + half), scalar_or_array(p), confidence
    )


@dataclass(frozen=True)
class ResolutionBounds:
    """An acceptance rate with its unresolved trials resolved both ways.

    Attributes:
        point: ``accepted / n``; unresolved trials count as not accepted.
        if_all_failed: Wilson interval with every unresolved trial failed.
        if_all_accepted: Wilson interval with every unresolved trial accepted.
        lo: ``if_all_failed.lo``, the lowest the rate can honestly be.
        hi: ``if_all_accepted.hi``, the highest it can honestly be.
        unresolved: Pending plus unknown trials, listed apart from failures.
    """

    point: FloatLike
    if_all_failed: Interval
    if_all_accepted: Interval
    lo: FloatLike
    hi: FloatLike
    unresolved: int | np.ndarray


def resolution_bounds(
    accepted: ArrayLike, unresolved: ArrayLike, n: ArrayLike, confidence: float = 0.95
) -> ResolutionBounds:
    """Acceptance rate under the four-verdict rule with both-way bounds (13.2.3).

    Unresolved (pending or unknown) trials stay in ``n`` and are not
    accepted; the report adds the two resolutions "all accepted" and "all
    failed", each with its Wilson interval, to show how far open verdicts
    could still move the result.

    n = 0: ``point`` is ``nan`` and both intervals are ``[0, 1]``.

    Args:
        accepted: Trials whose mandatory criteria all passed.
        unresolved: Trials with no mandatory failure and some criterion
            still pending or unknown.
        n: All initiated trials (accepted + failed + unresolved).
        confidence: Two-sided level of the Wilson intervals.

    Raises:
        StatsInputError: If ``accepted + unresolved > n`` or counts are invalid.
    """
    a = counts(accepted, "accepted")
    u = counts(unresolved, "unresolved")
    m = counts(n, "n")
    if np.any(a + u > m):
        raise StatsInputError(
            f"accepted={show(accepted)} plus unresolved={show(unresolved)} exceed n={show(n)}"
        )
    low = wilson_interval(a, m, confidence)
    high = wilson_interval(a + u, m, confidence)
    return ResolutionBounds(
        point=low.point,
        if_all_failed=low,
        if_all_accepted=high,
        lo=low.lo,
        hi=high.hi,
        unresolved=scalar_or_array(u),
    )
