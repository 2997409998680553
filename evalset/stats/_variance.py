"""Variance components and the new-tasks-vs-repeats allocation (13.5.1, eq. 1).

``Var(p_hat) = sigma_b^2 / N + sigma_w^2 / (N R)`` with
``sigma_b^2 = Var(p_i)`` (between tasks) and ``sigma_w^2 = E[p_i (1 - p_i)]``
(within a task, run to run). Repeats shrink only the second term; once
``R > sigma_w^2 / sigma_b^2`` the task term dominates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._outcomes import Outcomes, task_counts
from flywheel.evalset.stats._types import FloatLike
from flywheel.evalset.stats._validate import float_result, positive, rates, show
from numpy.typing import ArrayLike, NDArray


@dataclass(frozen=True)
class VarianceComponents:
    """Method-of-moments variance components of task acceptance.

    Attributes:
        mean: Task-averaged acceptance ``p_hat`` (mean of per-task rates).
        between: ``sigma_b^2`` estimate, clipped at 0.
        within: ``sigma_w^2 = E[p_i (1 - p_i)]`` estimate.
        ratio: ``within / between``, the repeat count past which the task
            term dominates (``inf`` when ``between`` is 0).
        n_tasks: Tasks ``N``.
        runs_per_task: Mean runs per task.
        variance_of_mean: Eq. 1 at the observed design (``nan`` for N < 2).
    """

    mean: float
    between: float
    within: float
    ratio: float
    n_tasks: int
    runs_per_task: float
    variance_of_mean: float


def variance_components(outcomes: Outcomes) -> VarianceComponents:
    """Estimate ``sigma_b^2`` and ``sigma_w^2`` from 0/1 runs per task (eq. 1).

    Unbiased within-task term per task ``p_i_hat (1 - p_i_hat) R_i / (R_i - 1)``
    averaged over tasks; between-task term ``s^2(p_i_hat) - mean(w_i / R_i)``
    (the spread of observed task rates minus the part the runs alone explain;
    single-run tasks borrow the pooled within term), clipped at zero.

    n = 0 tasks: raises. n = 1 task: ``between`` is ``nan``. Tasks with a
    single run cannot inform ``within``; if every task has one run it is
    ``nan`` and ``between`` is ``nan`` too.

    Args:
        outcomes: 0/1 run outcomes, 2-D ``tasks x runs`` or ragged.

    Raises:
        StatsInputError: On no tasks, or as :func:`task_counts`.
    """
    runs, passes = task_counts(outcomes)
    if runs.size == 0:
        raise StatsInputError("variance components need at least one task")
    p = passes / runs
    multi = runs >= 2
    w_i = np.where(multi, p * (1 - p) * runs / np.where(multi, runs - 1, 1), np.nan)
    within = float(np.nanmean(w_i)) if np.any(multi) else float("nan")
    if runs.size >= 2 and np.any(multi):
        # Tasks with one run borrow the pooled within term for their noise share.
        noise = float(np.mean(np.where(multi, w_i, within) / runs))
        between = float(max(p.var(ddof=1) - noise, 0.0))
    else:
        between = float("nan")
    mean_runs = float(runs.mean())
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = float(np.float64(within) / np.float64(between))
    var_mean = (
        float(variance_of_estimate(between, within, runs.size, mean_runs))
        if runs.size >= 2 and np.isfinite(between) and np.isfinite(within)
        else float("nan")
    )
    return VarianceComponents(
        mean=float(p.mean()),
        between=between,
        within=within,
        ratio=ratio,
        n_tasks=int(runs.size),
        runs_per_task=mean_runs,
        variance_of_mean=var_mean,
    )


def within_task_variance(mean: ArrayLike, between: ArrayLike) -> FloatLike:
    """``sigma_w^2 = E[p] - E[p]^2 - sigma_b^2`` from the mean and between term (13.9 ex. 1).

    Mean 0.6 and ``sigma_b^2 = 0.08`` give 0.16.

    Raises:
        StatsInputError: If the implied within variance is negative (impossible inputs).
    """
    m = rates(mean, "mean")
    b = positive(between, "between", allow_zero=True)
    w = m - m**2 - b
    if np.any(w < -1e-12):
        raise StatsInputError(
            f"between={show(between)} exceeds mean(1 - mean) for mean={show(mean)}; "
            "no such task population"
        )
    return float_result(np.maximum(w, 0.0))


def variance_of_estimate(
    between: ArrayLike, within: ArrayLike, n_tasks: ArrayLike, runs_per_task: ArrayLike
) -> FloatLike:
    """Eq. 1: ``sigma_b^2 / N + sigma_w^2 / (N R)``.

    600 tasks x 1 run at (0.08, 0.16): 0.0004 (SE 0.020); 200 x 3: SE 0.026;
    100 x 6: SE 0.033.

    Raises:
        StatsInputError: On negative variances or non-positive N or R.
    """
    b = positive(between, "between", allow_zero=True)
    w = positive(within, "within", allow_zero=True)
    n = positive(n_tasks, "n_tasks")
    r = positive(runs_per_task, "runs_per_task")
    return float_result(b / n + w / (n * r))


@dataclass(frozen=True)
class Allocation:
    """Best runs-per-task design for a budget with a fixture cost.

    Attributes:
        runs_per_task: Chosen ``R``.
        n_tasks: Largest whole ``N`` the budget affords at that ``R``.
        variance: Eq. 1 at ``(N, R)``.
        se: ``sqrt(variance)``.
        continuous_optimum: ``sqrt(f sigma_w^2 / (c sigma_b^2))``, the
            unconstrained optimum of ``R`` (fixture cost ``f``, run cost ``c``).
        candidates: ``(R, N, variance)`` for every ``R`` examined.
    """

    runs_per_task: int
    n_tasks: int
    variance: float
    se: float
    continuous_optimum: float
    candidates: NDArray[np.float64] = field(repr=False, compare=False)


def allocate_runs(
    between: float,
    within: float,
    budget: float,
    *,
    fixture_cost: float = 0.0,
    run_cost: float = 1.0,
    max_runs: int | None = None,
) -> Allocation:
    """Choose runs per task ``R`` and tasks ``N`` minimising eq. 1 under a budget.

    Each task costs ``fixture_cost + R * run_cost``; for each ``R`` the design
    takes the largest whole ``N = floor(budget / (fixture_cost + R run_cost))``
    and the smallest eq.-1 variance wins (ties go to fewer runs). With free
    fixtures the answer is one run per task; at (0.08, 0.16), a 600-run
    budget and fixtures costing 10 runs it moves to R = 5, N = 40.

    Args:
        between: ``sigma_b^2``.
        within: ``sigma_w^2``.
        budget: Total spend in run-equivalents (or money, with ``run_cost``).
        fixture_cost: Cost of writing and validating one new task.
        run_cost: Cost of one graded run.
        max_runs: Largest ``R`` examined (default: what the budget allows for
            a single task, capped at 10,000).

    Raises:
        StatsInputError: If the budget cannot buy one task with one run, or on
            negative variances/costs.
    """
    b = float(positive(between, "between", allow_zero=True))
    w = float(positive(within, "within", allow_zero=True))
    total = float(positive(budget, "budget"))
    f = float(positive(fixture_cost, "fixture_cost", allow_zero=True))
    c = float(positive(run_cost, "run_cost"))
    if total < f + c:
        raise StatsInputError(
            f"budget={show(budget)} cannot buy one task "
            f"({show(fixture_cost)} fixture + {show(run_cost)} run)"
        )
    limit = int((total - f) // c)
    if max_runs is not None:
        if max_runs < 1:
            raise StatsInputError(f"max_runs={show(max_runs)} must be at least 1")
        limit = min(limit, int(max_runs))
    limit = max(1, min(limit, 10_000))
    r = np.arange(1, limit + 1, dtype=np.float64)
    n = np.floor(total / (f + r * c) + 1e-12)
    var = b / n + w / (n * r)
    best = int(np.argmin(var))
    with np.errstate(divide="ignore", invalid="ignore"):
        optimum = float(np.sqrt(f * w / (c * b))) if b > 0 else float("inf")
    return Allocation(
        runs_per_task=int(r[best]),
        n_tasks=int(n[best]),
        variance=float(var[best]),
        se=float(np.sqrt(var[best])),
        continuous_optimum=optimum,
        candidates=np.column_stack([r, n, var]),
    )
