"""Sample-size planning and detectable effects (13.5.3, 22.5).

Every count is returned rounded up (a plan asks for whole tasks) as ``int``
for scalar input or an integer array for array input.
"""

from __future__ import annotations

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._types import FloatLike, Interval
from flywheel.evalset.stats._validate import (
    float_result,
    int_result,
    positive,
    rates,
    scalar_or_array,
    show,
    z_one_sided,
    z_two_sided,
)
from numpy.typing import ArrayLike

_EPS = 1e-9  # guards ceil() against 2401.0000000001 from floating arithmetic


def _ceil(x: np.ndarray) -> int | np.ndarray:
    out = np.ceil(np.asarray(x) - _EPS).astype(np.int64)
    return int_result(out)


def normal_interval(point: ArrayLike, se: ArrayLike, confidence: float = 0.95) -> Interval:
    """Symmetric normal interval ``point +/- z se``.

    Used for the 22.5 comparison of the honest task-level SE (N = 12 tasks,
    [-0.003, +0.253]) with the inflated trial-level one (N = 48, [+0.061,
    +0.189]). ``se = nan`` (one task) gives a ``nan`` interval.

    Raises:
        StatsInputError: On a negative SE or invalid confidence.
    """
    z = z_two_sided(confidence)
    p = np.asarray(point, dtype=np.float64)
    s = np.asarray(se, dtype=np.float64)
    if np.any(s < 0):
        raise StatsInputError(f"se={show(se)} must be non-negative")
    return Interval(
        scalar_or_array(p - z * s), scalar_or_array(p + z * s), scalar_or_array(p), confidence
    )


def minimum_detectable_effect(
    se: ArrayLike, confidence: float = 0.95, power: float = 0.8
) -> FloatLike:
    """Smallest true effect a design detects at the stated power (22.5).

    ``MDE = (z_{1-alpha/2} + z_{power}) * SE``. With the 12-task cluster SE
    0.0653 at 95 % and 80 % power: 0.183.

    Raises:
        StatsInputError: On invalid confidence/power or a negative SE.
    """
    s = np.asarray(se, dtype=np.float64)
    if np.any(s < 0):
        raise StatsInputError(f"se={show(se)} must be non-negative")
    return float_result((z_two_sided(confidence) + z_one_sided(power)) * s)


def normal_half_width(p: ArrayLike, n: ArrayLike, confidence: float = 0.95) -> FloatLike:
    """Normal-approximation half-width ``z sqrt(p(1-p)/n)`` (13.5.3, figure 4A).

    At p = 0.5 and n = 100: 0.098. n = 0 gives ``inf``.

    Raises:
        StatsInputError: On p outside [0, 1] or negative n.
    """
    z = z_two_sided(confidence)
    pp = rates(p, "p")
    nn = positive(n, "n", allow_zero=True)
    with np.errstate(divide="ignore"):
        return float_result(z * np.sqrt(pp * (1 - pp) / nn))


def tasks_for_half_width(
    p: ArrayLike, half_width: ArrayLike, confidence: float = 0.95
) -> int | np.ndarray:
    """Tasks for a target half-width: ``z^2 p (1-p) / h^2`` (13.5.3).

    At p = 0.5 a 2-point half-width needs 2,401 tasks.

    Raises:
        StatsInputError: On p outside [0, 1] or a non-positive half-width.
    """
    z = z_two_sided(confidence)
    pp = rates(p, "p")
    h = positive(half_width, "half_width")
    return _ceil(z * z * pp * (1 - pp) / h**2)


def tasks_per_arm(
    pooled_rate: ArrayLike, mde: ArrayLike, alpha: float = 0.05, power: float = 0.8
) -> int | np.ndarray:
    """Tasks per independent arm to detect a difference (seed eq. 3).

    ``n ~ 2 (z_{1-alpha/2} + z_{1-beta})^2 p (1 - p) / MDE^2`` with ``p`` the
    average acceptance of the two arms. At p = 0.5, alpha = 0.05, 80 % power:
    about 2,450 per arm for a 4-point difference and 9,800 for 2 points.

    Args:
        pooled_rate: Average acceptance probability of the two arms.
        mde: Minimum detectable difference (absolute, e.g. 0.04).
        alpha: Two-sided significance level.
        power: ``1 - beta``.

    Raises:
        StatsInputError: On invalid rates, a non-positive MDE, alpha or power.
    """
    p = rates(pooled_rate, "pooled_rate")
    d = positive(mde, "mde")
    alpha = float(alpha)
    if not 0 < alpha < 1:
        raise StatsInputError(f"alpha={show(alpha)} must lie strictly between 0 and 1")
    z = z_two_sided(1 - alpha) + z_one_sided(power)
    return _ceil(2 * z * z * p * (1 - p) / d**2)


def _gain(anticipated_gain: ArrayLike) -> np.ndarray:
    delta = np.asarray(anticipated_gain, dtype=np.float64)
    if np.any(~np.isfinite(delta)) or np.any(np.abs(delta) > 1):
        raise StatsInputError(f"anticipated_gain={show(anticipated_gain)} must lie in [-1, 1]")
    return delta


def noninferiority_pairs(
    anticipated_gain: ArrayLike,
    discordant_fraction: ArrayLike,
    tolerance: ArrayLike,
    confidence: float = 0.95,
    power: float = 0.8,
) -> int | np.ndarray:
    """Task pairs for a powered paired noninferiority plan (13.5.3).

    ``n = (z_{1-alpha/2} + z_{power})^2 (D - delta^2) / (delta + Delta)^2``:
    per-pair variance ``D - delta^2`` (discordant fraction minus the squared
    anticipated gain) times the squared quantile sum, over the squared
    distance from the anticipated gain to the negative tolerance. With a true
    gain of 0, D = 0.2 and a 2-point tolerance, ``power=0.5`` (no power
    quantile) gives about 1,900 pairs. Fixed-variance normal approximation:
    independent pairs, complete verdicts, one planned look.

    Args:
        anticipated_gain: Planned candidate-minus-baseline difference ``delta``.
        discordant_fraction: Planned ``D``; must be at least ``|delta|``.
        tolerance: Noninferiority margin ``Delta`` (positive, e.g. 0.02).
        confidence: Two-sided level of the gate's interval.
        power: Probability that the lower limit clears ``-Delta``.

    Raises:
        StatsInputError: If ``delta + Delta <= 0``, ``D < |delta|`` or inputs invalid.
    """
    delta = _gain(anticipated_gain)
    disc = rates(discordant_fraction, "discordant_fraction")
    tol = positive(tolerance, "tolerance")
    if np.any(disc < np.abs(delta)):
        raise StatsInputError(
            f"discordant_fraction={show(discordant_fraction)} must be at least |anticipated_gain|"
        )
    return noninferiority_tasks(delta, disc - delta**2, tol, confidence, power)


def noninferiority_tasks(
    anticipated_gain: ArrayLike,
    task_variance: ArrayLike,
    tolerance: ArrayLike,
    confidence: float = 0.95,
    power: float = 0.8,
) -> int | np.ndarray:
    """Tasks for a powered noninferiority plan from the per-task delta variance (13.5.3).

    ``n = (z_{1-alpha/2} + z_{power})^2 var(d_i) / (delta + Delta)^2``: the
    seed's plan with the per-pair variance ``D - delta^2`` replaced by the
    variance of the per-task deltas, so the same plan serves designs with
    several runs per task (each task's delta is then the mean of its runs;
    the task stays the unit). :func:`noninferiority_pairs` is the one-run case.

    Raises:
        StatsInputError: If ``delta + Delta <= 0`` or the variance is negative.
    """
    delta = _gain(anticipated_gain)
    var = positive(task_variance, "task_variance", allow_zero=True)
    tol = positive(tolerance, "tolerance")
    if np.any(delta + tol <= 0):
        raise StatsInputError(
            f"anticipated_gain + tolerance must be positive; a planned loss of "
            f"{show(anticipated_gain)} beyond the margin {show(tolerance)} can never pass"
        )
    z = z_two_sided(confidence) + z_one_sided(power)
    return _ceil(z * z * var / (delta + tol) ** 2)


def zero_spread_tasks(
    observed: ArrayLike, tolerance: ArrayLike, confidence: float = 0.95
) -> int | np.ndarray:
    """Tasks at which ``N`` equal deltas ``v`` clear ``-tolerance`` by the exact bound.

    With every task delta equal to ``v`` the lower limit is
    ``v - (1 + v)(1 - (alpha/2)^(1/N))`` (see ``zero_spread_interval``), so
    ``N >= ln(alpha/2) / ln(1 - (v + Delta)/(1 + v))``. v = 0, Delta = 0.02
    at 95 %: 183 tasks.

    Raises:
        StatsInputError: If ``v + Delta <= 0`` (no count clears) or v is outside [-1, 1).
    """
    v = np.asarray(observed, dtype=np.float64)
    tol = positive(tolerance, "tolerance")
    z_two_sided(confidence)
    if np.any(~np.isfinite(v)) or np.any(v <= -1) or np.any(v > 1):
        raise StatsInputError(f"observed={show(observed)} must be a delta in (-1, 1]")
    if np.any(v + tol <= 0):
        raise StatsInputError("observed + tolerance must be positive; no task count clears")
    share = np.minimum((v + tol) / (1.0 + v), 1.0)
    with np.errstate(divide="ignore"):
        n = np.where(share >= 1.0, 1.0, np.log((1 - confidence) / 2) / np.log1p(-share))
    return _ceil(np.maximum(n, 1.0))


def pairs_to_clear_margin(
    n: ArrayLike, estimate: ArrayLike, lower: ArrayLike, tolerance: ArrayLike
) -> int | np.ndarray:
    """Napkin 13.1: pairs at which an observed lower half-width fits the margin.

    Half-widths shrink as ``1/sqrt(n)``, so
    ``n_req ~ n [(estimate - lower) / (estimate + tolerance)]^2``. Table 4:
    150 [7.21 / 6]^2 -> about 217 pairs; that only centres the expected lower
    limit on the margin (even odds), it is not a powered plan.

    Raises:
        StatsInputError: If ``estimate + tolerance <= 0`` or ``lower > estimate``.
    """
    nn = positive(n, "n")
    est = np.asarray(estimate, dtype=np.float64)
    lo = np.asarray(lower, dtype=np.float64)
    tol = positive(tolerance, "tolerance")
    if np.any(lo > est):
        raise StatsInputError(f"lower={show(lower)} must not exceed estimate={show(estimate)}")
    if np.any(est + tol <= 0):
        raise StatsInputError(
            "estimate + tolerance must be positive; more pairs cannot clear the margin"
        )
    return _ceil(nn * ((est - lo) / (est + tol)) ** 2)
