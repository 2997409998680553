"""Availability (pass@k) and repeated-run consistency (pass^k).

acceptance-and-statistics 13.5.4 (eqs. 4, 5, theorem 13.1, napkin 13.2);
traces-to-release-gate 22.4 (eqs. 22.2, 22.3); playbook "pass^k is a
variance meter".
"""

from __future__ import annotations

import numpy as np
from flywheel.evalset.stats._bootstrap import bootstrap_means
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._types import FloatLike, Interval
from flywheel.evalset.stats._validate import counts, float_result, rates, show, z_two_sided
from numpy.typing import ArrayLike, NDArray


def _check(n: ArrayLike, c: ArrayLike, k: ArrayLike) -> tuple[NDArray[np.int64], ...]:
    nn, cc, kk = np.broadcast_arrays(counts(n, "n"), counts(c, "c"), counts(k, "k"))
    if np.any(cc > nn):
        raise StatsInputError(f"c={show(c)} passes exceed n={show(n)} runs; pass 0 <= c <= n")
    if np.any(kk < 1) or np.any(kk > nn):
        raise StatsInputError(
            f"k={show(k)} must satisfy 1 <= k <= n (n={show(n)}); grade at least k runs per task"
        )
    return nn, cc, kk


def _all_of_k(
    total: NDArray[np.int64], good: NDArray[np.int64], k: NDArray[np.int64]
) -> NDArray[np.float64]:
    """``C(good, k) / C(total, k)`` as the product ``prod_j (good - j)/(total - j)``."""
    out = np.ones(total.shape, dtype=np.float64)
    kmax = int(k.max()) if k.size else 0
    for j in range(kmax):
        active = j < k
        factor = np.maximum(good - j, 0) / np.where(active, total - j, 1)
        out = np.where(active, out * factor, out)
    return out


def pass_at_k(n: ArrayLike, c: ArrayLike, k: ArrayLike) -> FloatLike:
    """Per-task unbiased pass@k: ``1 - C(n - c, k) / C(n, k)`` (eq. 22.3).

    The chance that a size-k subset of the n graded runs contains a pass
    (Chen et al. 2021), computed as a product so large ``n`` never
    overflows. Vectorised over tasks (``n``, ``c``, ``k`` broadcast).
    4 runs with 2 passes: pass@2 = 0.833.

    n = 0: raises (k >= 1 runs are needed). n = 1: the single outcome (k = 1).

    Raises:
        StatsInputError: Unless ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    nn, cc, kk = _check(n, c, k)
    return float_result(1.0 - _all_of_k(nn, nn - cc, kk))


def pass_hat_k(n: ArrayLike, c: ArrayLike, k: ArrayLike) -> FloatLike:
    """Per-task unbiased pass^k: ``C(c, k) / C(n, k)`` (eq. 5, eq. 22.3).

    Each k-subset of the n graded runs counts when all its members pass
    (Yao et al. 2024); zero when ``c < k``. Product form, vectorised.
    4 runs with 3 passes: pass^2 = 0.5; with 2 passes: 0.167.

    n = 0: raises. n = 1: the single outcome (k = 1).

    Raises:
        StatsInputError: Unless ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    nn, cc, kk = _check(n, c, k)
    return float_result(_all_of_k(nn, cc, kk))


def _task_mean(values: NDArray[np.float64], weights: ArrayLike | None) -> float:
    if values.ndim == 0:
        return float(values)
    if values.size == 0:
        raise StatsInputError("no tasks to average; pass at least one task")
    if weights is None:
        return float(values.mean())
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != values.shape or np.any(w < 0) or not np.all(np.isfinite(w)) or w.sum() <= 0:
        raise StatsInputError("weights need one non-negative value per task and a positive sum")
    return float(np.average(values, weights=w))


def mean_pass_at_k(
    n: ArrayLike, c: ArrayLike, k: int, *, weights: ArrayLike | None = None
) -> float:
    """pass@k averaged over tasks with the declared task weights (eq. 4).

    Per-task estimates first, then the (weighted) mean: pooling runs would
    let a task with many runs dominate (22.4).

    n = 0 tasks: raises. One task: its own estimate.

    Raises:
        StatsInputError: As :func:`pass_at_k`, or on bad weights.
    """
    return _task_mean(np.asarray(pass_at_k(n, c, k), dtype=np.float64), weights)


def mean_pass_hat_k(
    n: ArrayLike, c: ArrayLike, k: int, *, weights: ArrayLike | None = None
) -> float:
    """pass^k averaged over tasks with the declared task weights (eq. 5).

    n = 0 tasks: raises. One task: its own estimate.

    Raises:
        StatsInputError: As :func:`pass_hat_k`, or on bad weights.
    """
    return _task_mean(np.asarray(pass_hat_k(n, c, k), dtype=np.float64), weights)


def _k_array(k: ArrayLike) -> NDArray[np.int64]:
    kk = counts(k, "k")
    if np.any(kk < 1):
        raise StatsInputError(f"k={show(k)} must be at least 1")
    return kk


def pass_at_k_from_rate(p: ArrayLike, k: ArrayLike) -> FloatLike:
    """Availability ``1 - (1 - p)^k`` for a known single-run rate (eq. 22.2).

    p = 0.8, k = 8: 0.99999744 (effectively certain).

    Raises:
        StatsInputError: On p outside [0, 1] or k < 1.
    """
    return float_result(1.0 - (1.0 - rates(p, "p")) ** _k_array(k))


def pass_hat_k_from_rate(p: ArrayLike, k: ArrayLike) -> FloatLike:
    """Consistency ``p^k`` for a known single-run rate (eq. 22.2, napkin 13.2).

    p = 0.9, k = 8: 0.43; p = 0.8: 0.17; p = 0.95: 0.66.

    Raises:
        StatsInputError: On p outside [0, 1] or k < 1.
    """
    return float_result(rates(p, "p") ** _k_array(k))


def rate_for_consistency(target: ArrayLike, k: ArrayLike) -> FloatLike:
    """Single-run rate holding pass^k at ``target``: ``target^(1/k)`` (napkin 13.2).

    90 % over 8 recurrences needs 98.7 % per run.

    Raises:
        StatsInputError: On target outside [0, 1] or k < 1.
    """
    return float_result(rates(target, "target") ** (1.0 / _k_array(k)))


def pass_hat_k_variance_approx(mean_p: ArrayLike, var_p: ArrayLike, k: ArrayLike) -> FloatLike:
    """Second-order read-out ``E[p^k] ~ pbar^k + k(k-1)/2 pbar^(k-2) Var(p)`` (playbook).

    The gap between measured pass^k and ``pbar^k`` is, to leading order, the
    between-task variance of difficulty: a flat pass^k curve means
    capability gaps, a steep one means run-to-run variance.

    Raises:
        StatsInputError: On mean outside [0, 1], negative variance, or k < 1.
    """
    m = rates(mean_p, "mean_p")
    v = np.asarray(var_p, dtype=np.float64)
    if np.any(v < 0) or not np.all(np.isfinite(v)):
        raise StatsInputError(f"var_p={show(var_p)} must be a finite non-negative variance")
    kk = _k_array(k).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        lead = np.where(kk >= 2, 0.5 * kk * (kk - 1) * m ** (kk - 2) * v, 0.0)
    return float_result(m**kk + lead)


def _task_interval(
    per_task: NDArray[np.float64], confidence: float, resamples: int, seed: int | None
) -> Interval:
    z_two_sided(confidence)
    values = np.atleast_1d(per_task)
    if values.size == 0:
        raise StatsInputError("no tasks to average; pass at least one task")
    point = float(values.mean())
    if values.size == 1:
        return Interval(0.0, 1.0, point, confidence)
    means = bootstrap_means(values, resamples=resamples, seed=seed)
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(means, [tail, 1.0 - tail])
    return Interval(float(max(lo, 0.0)), float(min(hi, 1.0)), point, confidence)


def pass_hat_k_interval(
    n: ArrayLike,
    c: ArrayLike,
    k: int,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int | None = 0,
) -> Interval:
    """Task-averaged pass^k with a task-level bootstrap interval (eq. 5; 22.5).

    The point is :func:`mean_pass_hat_k` (equal task weights); the interval
    resamples tasks, the unit of independence, never runs.

    n = 0 tasks: raises. One task: ``[0, 1]`` around its estimate (one task
    says nothing about the spread of the task population).

    Raises:
        StatsInputError: As :func:`pass_hat_k`, or on invalid levels.
    """
    per_task = np.asarray(pass_hat_k(n, c, k), dtype=np.float64)
    return _task_interval(per_task, confidence, resamples, seed)


def pass_at_k_interval(
    n: ArrayLike,
    c: ArrayLike,
    k: int,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int | None = 0,
) -> Interval:
    """Task-averaged pass@k with a task-level bootstrap interval (eq. 4; 22.5).

    n = 0 tasks: raises. One task: ``[0, 1]`` around its estimate.

    Raises:
        StatsInputError: As :func:`pass_at_k`, or on invalid levels.
    """
    per_task = np.asarray(pass_at_k(n, c, k), dtype=np.float64)
    return _task_interval(per_task, confidence, resamples, seed)
