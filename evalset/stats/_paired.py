"""Paired comparison of two configurations on the same tasks (13.5.3).

Cell convention, indexed ``n_{baseline, candidate}`` as in table 4 (rows are
the baseline outcome, columns the candidate outcome):

* ``n11`` both accepted, ``n00`` neither,
* ``n10`` baseline only (the seed's ``b``), ``n01`` candidate only (``c``).

Every difference here is **candidate minus baseline**,
``delta = (n01 - n10) / n``, so a positive value favours the candidate and a
noninferiority gate reads ``lo > -margin``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._intervals import wilson_interval
from flywheel.evalset.stats._types import FloatLike, Interval
from flywheel.evalset.stats._validate import counts, float_result, scalar_or_array, z_two_sided
from numpy.typing import ArrayLike


def _cells(
    n11: ArrayLike, n10: ArrayLike, n01: ArrayLike, n00: ArrayLike
) -> tuple[np.ndarray, ...]:
    a, b, c, d = (
        counts(v, name) for v, name in ((n11, "n11"), (n10, "n10"), (n01, "n01"), (n00, "n00"))
    )
    return tuple(x.astype(np.float64) for x in np.broadcast_arrays(a, b, c, d))


def paired_counts(baseline: ArrayLike, candidate: ArrayLike) -> tuple[int, int, int, int]:
    """Tabulate per-task paired 0/1 outcomes into ``(n11, n10, n01, n00)``.

    Args:
        baseline: One accepted (1/True) or not (0/False) outcome per task.
        candidate: The candidate's outcome on the same tasks, same order.

    Raises:
        StatsInputError: On unequal lengths or values other than 0/1.
    """
    b = np.asarray(baseline)
    c = np.asarray(candidate)
    if b.shape != c.shape or b.ndim != 1:
        raise StatsInputError(
            "baseline and candidate need one outcome per task each; "
            f"got shapes {b.shape} and {c.shape}"
        )
    for arr, name in ((b, "baseline"), (c, "candidate")):
        if arr.size and not np.all(np.isin(arr.astype(np.float64), (0.0, 1.0))):
            raise StatsInputError(f"{name} outcomes must be 0/1 (or booleans)")
    bb = b.astype(bool)
    cc = c.astype(bool)
    return (
        int(np.sum(bb & cc)),
        int(np.sum(bb & ~cc)),
        int(np.sum(~bb & cc)),
        int(np.sum(~bb & ~cc)),
    )


def mcnemar_exact(b: ArrayLike, c: ArrayLike) -> FloatLike:
    """Exact two-sided McNemar p-value on the discordant pairs (13.5.3).

    ``p = min(1, 2 * sum_{j=0}^{min(b, c)} C(b + c, j) 2^{-(b + c)})``: under
    equal marginals and ``b + c`` discordant pairs, candidate wins are
    Binomial(b + c, 1/2). Table 4 (b = 12, c = 18) gives 0.362.

    Symmetric in ``b`` and ``c``; vectorised over both.
    n = 0 discordant pairs: ``1.0`` (no evidence against equality).
    n = 1 discordant pair: ``1.0``.

    Args:
        b: Baseline-only accepted task count(s) (``n10``).
        c: Candidate-only accepted task count(s) (``n01``).

    Raises:
        StatsInputError: On negative or fractional counts.
    """
    bb, cc = np.broadcast_arrays(counts(b, "b"), counts(c, "c"))
    from scipy.stats import binom  # deferred: scipy costs ~0.4 s of CLI start-up

    p = np.minimum(1.0, 2.0 * binom.cdf(np.minimum(bb, cc), bb + cc, 0.5))
    return float_result(p)


def newcombe_paired_interval(
    n11: ArrayLike,
    n10: ArrayLike,
    n01: ArrayLike,
    n00: ArrayLike,
    confidence: float = 0.95,
) -> Interval:
    """Newcombe's paired-score interval, method 10 (Newcombe 1998; 13.5.3).

    Combines the Wilson intervals (eq. 2) of the candidate rate
    ``p1 = (n11 + n01)/n`` -> ``[l1, u1]`` and the baseline rate
    ``p2 = (n11 + n10)/n`` -> ``[l2, u2]`` through the continuity-corrected
    within-pair correlation

    ``phi = max(n11 n00 - n10 n01 - n/2, 0) / sqrt(r1 r0 c1 c0)`` if
    ``n11 n00 > n10 n01``, else ``(n11 n00 - n10 n01) / sqrt(r1 r0 c1 c0)``
    (``phi = 0`` when a margin is empty), and, with ``delta = p1 - p2``,

    ``lo = delta - sqrt((p1 - l1)^2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)^2)``,
    ``hi = delta + sqrt((u1 - p1)^2 - 2 phi (u1 - p1)(p2 - l2) + (p2 - l2)^2)``.

    Table 4 (70, 12, 18, 50) gives -3.21 to 11.12 points around +4. Positive
    dependence (more concordant pairs at fixed margins) narrows it.

    Orientation: candidate minus baseline (see module docstring).
    n = 0: ``[-1, 1]`` with ``point = nan``.
    n = 1: ``[-0.79, 0.79]`` for a concordant pair, ``[-1, 0.12]`` or
    ``[-0.12, 1]`` for a discordant one.

    Raises:
        StatsInputError: On invalid counts or confidence.
    """
    a, b, c, d = _cells(n11, n10, n01, n00)
    n = a + b + c + d
    empty = n == 0
    safe_n = np.where(empty, 1.0, n)
    cand = wilson_interval(a + c, n, confidence)
    base = wilson_interval(a + b, n, confidence)
    p1 = (a + c) / safe_n
    p2 = (a + b) / safe_n
    l1, u1 = np.asarray(cand.lo, dtype=float), np.asarray(cand.hi, dtype=float)
    l2, u2 = np.asarray(base.lo, dtype=float), np.asarray(base.hi, dtype=float)
    product = (a + b) * (c + d) * (a + c) * (b + d)
    den = np.sqrt(product)
    cross = a * d - b * c
    num = np.where(cross > 0, np.maximum(cross - n / 2.0, 0.0), cross)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    delta = (c - b) / safe_n  # = p1 - p2, without the rounding of the subtraction
    dl = np.sqrt(np.maximum((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    du = np.sqrt(np.maximum((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    lo = np.where(empty, -1.0, np.clip(delta - dl, -1.0, 1.0))
    hi = np.where(empty, 1.0, np.clip(delta + du, -1.0, 1.0))
    point = np.where(empty, np.nan, delta)
    return Interval(scalar_or_array(lo), scalar_or_array(hi), scalar_or_array(point), confidence)


def paired_normal_interval(
    n11: ArrayLike,
    n10: ArrayLike,
    n01: ArrayLike,
    n00: ArrayLike,
    confidence: float = 0.95,
) -> Interval:
    """Hand-computable paired interval ``delta +/- z sqrt((D - delta^2)/n)`` (13.5.3).

    Each task's candidate-minus-baseline outcome is -1, 0 or +1; with
    discordant fraction ``D = (n10 + n01)/n`` its variance is ``D - delta^2``.
    Table 4 gives about +/-7.1 points. Symmetric and unclipped; prefer
    :func:`newcombe_paired_interval` for the gate.

    n = 0: all ``nan``. n = 1: zero width (the variance is 0 for one pair).

    Raises:
        StatsInputError: On invalid counts or confidence.
    """
    z = z_two_sided(confidence)
    a, b, c, d = _cells(n11, n10, n01, n00)
    n = a + b + c + d
    with np.errstate(invalid="ignore", divide="ignore"):
        nn = np.where(n > 0, n, np.nan)
        delta = (c - b) / nn
        disc = (b + c) / nn
        half = z * np.sqrt(np.maximum(disc - delta**2, 0.0) / nn)
    return Interval(
        scalar_or_array(delta - half),
        scalar_or_array(delta + half),
        scalar_or_array(delta),
        confidence,
    )


@dataclass(frozen=True)
class PairingGain:
    """How much pairing saves against two independent arms (13.5.3, 13.6).

    Attributes:
        paired_variance: ``(D - delta^2)/n``.
        independent_variance: ``(p_B (1 - p_B) + p_C (1 - p_C))/n``.
        ratio: independent over paired (table 4: about 2.5; paired keeps
            about 40 % of the independent variance).
        equivalent_independent_tasks: Tasks per independent arm matching the
            paired precision, ``n * ratio``.
    """

    paired_variance: FloatLike
    independent_variance: FloatLike
    ratio: FloatLike
    equivalent_independent_tasks: FloatLike


def pairing_gain(n11: ArrayLike, n10: ArrayLike, n01: ArrayLike, n00: ArrayLike) -> PairingGain:
    """Compare paired and independent-arm variance at the observed rates.

    n = 0: all ``nan``. A table with no discordant pair (and no difference)
    has zero paired variance, so ``ratio`` is ``inf``.

    Raises:
        StatsInputError: On invalid counts.
    """
    a, b, c, d = _cells(n11, n10, n01, n00)
    n = a + b + c + d
    with np.errstate(invalid="ignore", divide="ignore"):
        nn = np.where(n > 0, n, np.nan)
        delta = (c - b) / nn
        paired = np.maximum((b + c) / nn - delta**2, 0.0) / nn
        pb = (a + b) / nn
        pc = (a + c) / nn
        independent = (pb * (1 - pb) + pc * (1 - pc)) / nn
        ratio = independent / paired
    return PairingGain(
        scalar_or_array(paired),
        scalar_or_array(independent),
        scalar_or_array(ratio),
        scalar_or_array(nn * ratio),
    )
