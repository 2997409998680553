"""Acceptance priced: cost per accepted task, budgeted acceptance, selection cost.

acceptance-and-statistics 13.5.5 (budgeted acceptance, eq. 6, napkin 13.3);
playbook "Accuracy is half of a number" (``U = Q - lambda C``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._intervals import wilson_interval
from flywheel.evalset.stats._types import FloatLike, Interval
from flywheel.evalset.stats._validate import (
    float_result,
    int_result,
    positive,
    rates,
    scalar_or_array,
    show,
)
from numpy.typing import ArrayLike


def _trial_arrays(costs: ArrayLike, accepted: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    cost = np.asarray(costs, dtype=np.float64)
    acc = np.asarray(accepted)
    if cost.ndim != 1 or cost.shape != acc.shape:
        raise StatsInputError(
            "need one cost and one acceptance flag per trial; "
            f"got shapes {cost.shape} and {acc.shape}"
        )
    if np.any(np.isnan(cost)):
        raise StatsInputError(
            "a trial's cost is unknown (NaN); charge its outstanding liability (reserved amount) "
            "instead of dropping it"
        )
    if np.any(cost < 0) or np.any(np.isinf(cost)):
        raise StatsInputError("trial costs must be finite and non-negative")
    if acc.size and not np.all(np.isin(acc.astype(np.float64), (0.0, 1.0))):
        raise StatsInputError("accepted flags must be 0/1 or booleans")
    return cost, acc.astype(bool)


@dataclass(frozen=True)
class CostPerAccepted:
    """Observed cost per accepted task with every initiated trial charged.

    Attributes:
        total_cost: Spend of all initiated trials, failed and unresolved included.
        n_trials: Initiated trials.
        n_accepted: Accepted trials.
        value: ``total_cost / n_accepted``; ``inf`` with spend and no acceptance,
            ``nan`` with neither.
        mean_cost_accepted: Mean cost of the accepted trials alone; ``value``
            is never below it.
    """

    total_cost: float
    n_trials: int
    n_accepted: int
    value: float
    mean_cost_accepted: float


def cost_per_accepted_task(costs: ArrayLike, accepted: ArrayLike) -> CostPerAccepted:
    """Total charge of all initiated trials over their accepted count (13.5.5).

    Failed, discarded and unresolved trials are charged to the accepted ones,
    so weakening the contract cannot buy a lower figure by dropping them. A
    cohort with no accepted task reports its spend and zero acceptances
    (``value`` is ``inf``).

    n = 0 trials: ``value`` and ``mean_cost_accepted`` are ``nan``.
    n = 1: its cost if accepted, else ``inf`` (or ``nan`` at zero cost).

    Args:
        costs: Total monetary charge of each trial (generation, grading,
            cleanup); unknown charges must be entered as their reserved
            liability, not NaN.
        accepted: Whether each trial was accepted (unresolved = not accepted).

    Raises:
        StatsInputError: On NaN, negative or misaligned costs.
    """
    cost, acc = _trial_arrays(costs, accepted)
    total = float(cost.sum())
    n_acc = int(acc.sum())
    if n_acc:
        value = total / n_acc
    else:
        value = float("inf") if total > 0 else float("nan")
    return CostPerAccepted(
        total_cost=total,
        n_trials=int(cost.size),
        n_accepted=n_acc,
        value=value,
        mean_cost_accepted=float(cost[acc].mean()) if n_acc else float("nan"),
    )


def budgeted_acceptance(
    costs: ArrayLike, accepted: ArrayLike, ceiling: float, confidence: float = 0.95
) -> Interval:
    """``Pr(Acc = 1 and cost <= ceiling)`` with its Wilson interval (13.5.5).

    A trial that was accepted but overspent the ceiling does not count.
    Token or time ceilings are separate conditions: call again with those
    units.

    n = 0: ``point = nan``, interval ``[0, 1]``.

    Raises:
        StatsInputError: On a negative ceiling or invalid trials.
    """
    cost, acc = _trial_arrays(costs, accepted)
    cap = float(positive(ceiling, "ceiling", allow_zero=True))
    return wilson_interval(int(np.sum(acc & (cost <= cap))), int(cost.size), confidence)


@dataclass(frozen=True)
class SelectionCosts:
    """Expected costs of picking one passing candidate among up to ``k`` (eq. 6).

    Attributes:
        availability: ``A_k = 1 - (1 - p)^k``, same for all policies.
        expected_sequential_candidates: ``A_k / p`` (never more than ``k``).
        batch_cost_per_trial: ``k (g + c)``.
        sequential_cost_per_trial: ``(A_k / p)(g + c)``.
        generate_all_cost_per_trial: ``k g + (A_k / p) c`` (generate first,
            stop checking at the first pass).
        batch_cost_per_accepted: ``k (g + c) / A_k``.
        sequential_cost_per_accepted: ``(g + c) / p`` whatever the cap.
        generate_all_cost_per_accepted: ``(k g + (A_k / p) c) / A_k``.
        batch_premium: ``batch / sequential - 1`` per accepted task.
    """

    availability: FloatLike
    expected_sequential_candidates: FloatLike
    batch_cost_per_trial: FloatLike
    sequential_cost_per_trial: FloatLike
    generate_all_cost_per_trial: FloatLike
    batch_cost_per_accepted: FloatLike
    sequential_cost_per_accepted: FloatLike
    generate_all_cost_per_accepted: FloatLike
    batch_premium: FloatLike


def selection_costs(
    p: ArrayLike, k: ArrayLike, generation_cost: ArrayLike, checking_cost: ArrayLike
) -> SelectionCosts:
    """Batch vs. sequential selection cost per accepted task (eq. 6, napkin 13.3).

    Independent candidates with pass probability ``p`` and an exact checker;
    every failed candidate is charged. At p = 0.4, k = 3, g = $0.03,
    c = $0.01: availability 0.784, $0.12 vs. $0.0784 per trial, $0.153 vs.
    $0.10 per accepted task, a 53 % batch premium. Vectorised.

    Raises:
        StatsInputError: Unless ``0 < p <= 1``, ``k >= 1`` and costs are non-negative.
    """
    pp = rates(p, "p")
    if np.any(pp <= 0):
        raise StatsInputError(
            f"p={show(p)} must be positive; "
            "a generator that never passes has no cost per acceptance"
        )
    kk = np.asarray(k, dtype=np.float64)
    if np.any(kk < 1) or np.any(kk % 1 != 0):
        raise StatsInputError(f"k={show(k)} must be a whole number of candidates >= 1")
    g = positive(generation_cost, "generation_cost", allow_zero=True)
    c = positive(checking_cost, "checking_cost", allow_zero=True)
    avail = 1.0 - (1.0 - pp) ** kk
    expected = avail / pp
    batch = kk * (g + c)
    seq = expected * (g + c)
    gen_all = kk * g + expected * c
    with np.errstate(divide="ignore", invalid="ignore"):
        premium = (batch / avail) / ((g + c) / pp) - 1.0
    return SelectionCosts(
        availability=scalar_or_array(avail),
        expected_sequential_candidates=scalar_or_array(expected),
        batch_cost_per_trial=scalar_or_array(batch),
        sequential_cost_per_trial=scalar_or_array(seq),
        generate_all_cost_per_trial=scalar_or_array(gen_all),
        batch_cost_per_accepted=scalar_or_array(batch / avail),
        sequential_cost_per_accepted=scalar_or_array((g + c) / pp),
        generate_all_cost_per_accepted=scalar_or_array(gen_all / avail),
        batch_premium=scalar_or_array(premium),
    )


def candidates_for_availability(p: ArrayLike, target: ArrayLike) -> int | np.ndarray:
    """Smallest cap ``k`` with ``1 - (1 - p)^k >= target`` (13.9 ex. 5b).

    p = 0.3, target 0.9: 7 candidates. p = 1: 1.

    Raises:
        StatsInputError: Unless ``0 < p <= 1`` and ``0 <= target < 1``.
    """
    pp = rates(p, "p")
    tt = rates(target, "target")
    if np.any(pp <= 0) or np.any(tt >= 1):
        raise StatsInputError("need p > 0 and target < 1; certainty needs unbounded candidates")
    with np.errstate(divide="ignore"):
        k = np.where(
            pp >= 1, 1.0, np.ceil(np.log1p(-tt) / np.log1p(-np.minimum(pp, 1 - 1e-300)) - 1e-9)
        )
    return int_result(np.maximum(k, 1))


def checking_cost_crossover(
    p_a: float, generation_a: float, p_b: float, generation_b: float
) -> float:
    """Checking cost at which two generators' sequential costs tie (13.9 ex. 5d).

    Solves ``(g_a + c)/p_a = (g_b + c)/p_b`` for ``c``:
    ``c = (p_a g_b - p_b g_a) / (p_b - p_a)``. Above it the generator with
    the higher pass probability is cheaper per accepted task.

    Raises:
        StatsInputError: If the pass probabilities are equal (no crossover).
    """
    pa = float(rates(p_a, "p_a"))
    pb = float(rates(p_b, "p_b"))
    if pa == pb:
        raise StatsInputError(
            "equal pass probabilities never cross; compare generation costs directly"
        )
    return (pa * float(generation_b) - pb * float(generation_a)) / (pb - pa)


def cost_adjusted_utility(
    quality: ArrayLike, cost: ArrayLike, dollar_weight: ArrayLike
) -> FloatLike:
    """``U = Q - lambda C`` (playbook, "Accuracy is half of a number").

    ``lambda = 0`` is what an accuracy-only leaderboard silently chooses.

    Raises:
        StatsInputError: On a negative ``lambda`` or cost.
    """
    q = np.asarray(quality, dtype=np.float64)
    c = positive(cost, "cost", allow_zero=True)
    lam = positive(dollar_weight, "dollar_weight", allow_zero=True)
    return float_result(q - lam * c)
