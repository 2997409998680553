"""The noninferiority decision on the paired delta: the interval follows the design.

The gate asks one magnitude question (13.5.3, 22.5): is candidate minus
baseline at least ``-margin``? Which interval answers it depends on the
design, and was chosen by simulation (``bench/gate_false_ship.py``,
``docs/gate.md``):

* **one run per task in both arms** -> Newcombe's paired-score method 10
  (the seed's rule, 13.5.3) on the 2 x 2 table of paired outcomes; the exact
  McNemar p-value answers the separate equality question and is reported.
* **several runs per task** -> the cluster-robust paired t corrected for
  skewness (:func:`skew_corrected_t_interval`): the mean of the per-task
  deltas, its CR1 cluster-robust standard error ``s_d / sqrt(N)`` (eq. 22.4,
  task = cluster, small-sample factor ``G / (G - 1)``), the Student quantile
  at Satterthwaite's degrees of freedom (:func:`satterthwaite_df`: ``N - 1``
  for well-behaved deltas, fewer when a handful of tasks carry all the
  variation), and Hall's (1992) skewness transformation of the t, with the
  lower limit never above the plain t's. Among the percentile, BCa and
  studentized cluster bootstraps and the t, only the t held its coverage at
  5-20 tasks in the simulation (the percentile bootstrap cannot reach below
  the smallest observed delta, so a sample in which no task got worse ships
  however few tasks there are); the Satterthwaite degrees of freedom fixed
  its failure on eval sets of mostly deterministic tasks with a few flaky
  ones; the skewness correction fixed its lower limit sitting above the
  truth too often when a few tasks lose a lot (lower-tail error up to 0.047
  at 50 tasks, nominal 0.025).
* **zero spread** (every task delta equal, which includes one task): the
  t has no standard error, so the bound is exact instead: if all ``N``
  observed deltas equal ``v``, the share ``q`` of tasks whose delta differs
  is below the Clopper-Pearson limit ``p0 = 1 - (alpha/2)^(1/N)`` for 0
  events, and since a delta is at least -1 the mean is at least
  ``v - (1 + v) p0`` (and at most ``v + (1 - v) p0``). Three identical
  tasks give about [-0.71, +0.71], not [0, 0].

The outcome is one of three:

* ``noninferior``: the lower limit is at least ``-margin``;
* ``inferior``: the upper limit is below ``-margin`` (a conclusive loss), or
  the design was powered (its minimum detectable effect at the declared
  power is at most the margin) and the lower limit is still below it;
* ``insufficient_evidence``: the interval straddles ``-margin`` and the
  design could not have told (MDE above the margin, or zero spread). The
  decision then carries the seed's sample-size plan: the task count at
  which the powered noninferiority plan (13.5.3) clears the margin.

``require_powered=True`` also turns a cleared interval from an underpowered
design into ``insufficient_evidence`` (a stricter house rule; off by default
because a cleared interval already bounds the loss at the declared level).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._outcomes import Outcomes, task_scores
from flywheel.evalset.stats._paired import mcnemar_exact, newcombe_paired_interval
from flywheel.evalset.stats._planning import noninferiority_tasks, zero_spread_tasks
from flywheel.evalset.stats._types import FloatLike, Interval
from flywheel.evalset.stats._validate import (
    float_result,
    positive,
    show,
    z_one_sided,
    z_two_sided,
)
from numpy.typing import ArrayLike, NDArray

NEWCOMBE = "newcombe_method10"
CLUSTER_T = "cluster_paired_t_hall"
ZERO_SPREAD = "zero_spread_exact"

#: Why each method decides, as the report prints it.
METHOD_WHY: dict[str, str] = {
    NEWCOMBE: "one run per task in both arms: Newcombe's paired-score method 10 on the "
    "2x2 table of paired outcomes (the seed's rule, 13.5.3); exact McNemar reported",
    CLUSTER_T: "several runs per task: cluster-robust paired t over per-task deltas "
    "(CR1 standard error, Satterthwaite degrees of freedom) with Hall's skewness correction, "
    "the lower limit never above the plain t's; chosen by simulation because its coverage "
    "holds from 5 tasks on, where the percentile, BCa and studentized cluster bootstraps "
    "undercover, and its lower limit stays below the truth in 97.5 % of samples when a few "
    "tasks lose a lot (docs/gate.md)",
    ZERO_SPREAD: "every task delta is equal, so there is no spread to estimate a standard "
    "error from: exact bound from the share of tasks that could differ unseen "
    "(Clopper-Pearson, 0 of N)",
}

Outcome = Literal["noninferior", "inferior", "insufficient_evidence"]
_OUTCOMES: tuple[Outcome, ...] = ("noninferior", "inferior", "insufficient_evidence")


def _as_deltas(deltas: ArrayLike) -> NDArray[np.float64]:
    """Per-task deltas as floats (tasks on the last axis), refused unless finite and not scalar."""
    d = np.asarray(deltas, dtype=np.float64)
    if d.ndim == 0 or not np.all(np.isfinite(d)):
        raise StatsInputError("deltas must be finite per-task differences (last axis = tasks)")
    return d


def cluster_t_interval(deltas: ArrayLike, confidence: float = 0.95) -> Interval:
    """Cluster-robust paired t interval of the mean per-task delta.

    ``dbar +/- t_{N-1, 1-alpha/2} s_d / sqrt(N)``; vectorised over leading
    axes (the last axis holds the ``N`` task deltas). N < 2 or zero spread
    gives a zero-width or ``nan`` interval: use :func:`paired_decision`,
    which falls back to :func:`zero_spread_interval` there.

    Raises:
        StatsInputError: On non-finite deltas or an invalid level.
    """
    z_two_sided(confidence)
    d = _as_deltas(deltas)
    n = d.shape[-1]
    mean = d.mean(axis=-1) if n else np.full(d.shape[:-1], np.nan)
    if n < 2:
        nan = np.full(np.shape(mean), np.nan)
        return Interval(float_result(nan), float_result(nan), float_result(mean), confidence)
    from scipy.stats import t as student_t  # deferred: scipy costs CLI start-up

    se = d.std(axis=-1, ddof=1) / np.sqrt(n)
    half = student_t.ppf(0.5 + confidence / 2.0, satterthwaite_df(d)) * se
    return Interval(
        float_result(mean - half), float_result(mean + half), float_result(mean), confidence
    )


def skew_corrected_t_interval(deltas: ArrayLike, confidence: float = 0.95) -> Interval:
    """The several-runs decision interval: the cluster t corrected for skewness (Hall 1992).

    The studentized mean ``T = (dbar - mu) / (s_d / sqrt(N))`` of skewed task
    deltas is itself skewed (Edgeworth term ``gamma (2x^2 + 1) / (6 sqrt N)``):
    left-skewed deltas (a few tasks lose a lot) put the symmetric t's lower
    limit above the truth too often. Hall's monotone cubic
    ``g(T) = T + a T^2 + a^2 T^3 / 3 + b``, ``a = gamma / (3 sqrt N)``,
    ``b = gamma / (6 sqrt N)``, removes that term; inverting
    ``|g(T)| <= t_{nu, 1-alpha/2}`` (``nu`` from :func:`satterthwaite_df`) gives
    ``[dbar - g^-1(q) se, dbar - g^-1(-q) se]`` with
    ``g^-1(y) = ((1 + 3a(y - b))^(1/3) - 1) / a``. ``gamma = m3 / m2^(3/2)``
    is the sample skewness of the task deltas.

    The skewness of a handful of non-zero deltas says little about the
    population's (one task that got better reads as right skew), so the lower
    limit is never above the symmetric t's: ``lo = min(t lo, Hall lo)``; the
    upper limit is Hall's. With ``gamma = 0`` this is :func:`cluster_t_interval`.
    Vectorised over leading axes (tasks last); N < 2 gives ``nan`` limits.

    Raises:
        StatsInputError: On non-finite deltas or an invalid level.
    """
    z_two_sided(confidence)
    d = _as_deltas(deltas)
    n = d.shape[-1]
    if n < 2:
        return cluster_t_interval(d, confidence)
    from scipy.stats import t as student_t  # deferred: scipy costs CLI start-up

    mean = d.mean(axis=-1)
    se = d.std(axis=-1, ddof=1) / np.sqrt(n)
    q = student_t.ppf(0.5 + confidence / 2.0, satterthwaite_df(d))
    a, b = _hall_coefficients(d)
    # the plain t's lower limit (cluster_t_interval's) from the same mean, SE and quantile
    lo = np.minimum(mean - q * se, mean - _hall_inverse(q, a, b) * se)
    hi = mean - _hall_inverse(-q, a, b) * se
    return Interval(float_result(lo), float_result(hi), float_result(mean), confidence)


def _hall_coefficients(deltas: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Hall's ``a = gamma / (3 sqrt N)`` and ``b = gamma / (6 sqrt N)`` per sample (tasks last).

    ``gamma`` is the sample skewness ``m3 / m2^(3/2)``, 0 at zero spread.
    """
    d = np.asarray(deltas, dtype=np.float64)
    n = d.shape[-1]
    c = d - d.mean(axis=-1, keepdims=True)
    m2 = np.mean(c**2, axis=-1)
    m3 = np.mean(c**3, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        gamma = np.where(m2 > 1e-24, m3 / np.maximum(m2, 1e-300) ** 1.5, 0.0)
    root = np.sqrt(max(n, 1))
    return gamma / (3.0 * root), gamma / (6.0 * root)


def _hall_inverse(y: ArrayLike, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[Any]:
    """``g^-1(y)`` for Hall's cubic (real cube root; ``y - b`` as ``a`` -> 0)."""
    y = np.asarray(y, dtype=np.float64)
    small = np.abs(a) < 1e-12
    safe = np.where(small, 1.0, a)
    with np.errstate(invalid="ignore"):
        inv = (np.cbrt(1.0 + 3.0 * safe * (y - b)) - 1.0) / safe
    return np.where(small, y - b, inv)


def satterthwaite_df(deltas: ArrayLike) -> FloatLike:
    """Degrees of freedom of the t, from how well the tasks pin down their variance.

    ``nu = 2 N (N - 1) / ((N - 1) kappa - (N - 3))`` is Satterthwaite's
    ``2 (E s^2)^2 / Var(s^2)`` with ``Var(s^2) = sigma^4 (kappa/N - (N-3)/(N(N-1)))``
    for ``N`` independent tasks and the kurtosis ``kappa = m4 / m2^2``
    estimated from the task deltas; it is ``N - 1`` for normal deltas and
    is capped there. When a few tasks carry all the variation (most tasks
    deterministic, a handful flaky) ``kappa`` is large and the t widens
    accordingly: a single task that differs gives about 2 degrees of
    freedom, not ``N - 1``. Vectorised over leading axes; at least 1.
    n = 0 or 1 task: 1.

    Raises:
        StatsInputError: On non-finite deltas or a scalar.
    """
    d = _as_deltas(deltas)
    n = d.shape[-1]
    if n < 2:
        return float_result(np.ones(d.shape[:-1]))
    c = d - d.mean(axis=-1, keepdims=True)
    m2 = np.mean(c**2, axis=-1)
    m4 = np.mean(c**4, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = m4 / m2**2
        nu = 2.0 * n * (n - 1) / ((n - 1) * kappa - (n - 3))
    nu = np.where(np.isfinite(nu) & (nu > 0), np.minimum(nu, n - 1), n - 1)
    return float_result(np.maximum(nu, 1.0))


def zero_spread_interval(value: ArrayLike, n: ArrayLike, confidence: float = 0.95) -> Interval:
    """Exact interval for the mean delta when all ``n`` observed task deltas equal ``value``.

    ``[v - (1 + v) p0, v + (1 - v) p0]`` with ``p0 = 1 - (alpha/2)^(1/n)``
    (see module docstring). n = 3, v = 0 at 95 %: about +/-0.71; n = 184:
    about +/-0.0198.

    Raises:
        StatsInputError: On ``value`` outside [-1, 1] or ``n < 1``.
    """
    z_two_sided(confidence)
    v = np.asarray(value, dtype=np.float64)
    nn = positive(n, "n")
    if np.any(~np.isfinite(v)) or np.any(np.abs(v) > 1):
        raise StatsInputError(f"value={show(value)} must be a delta in [-1, 1]")
    p0 = 1.0 - ((1.0 - confidence) / 2.0) ** (1.0 / nn)
    lo = np.clip(v - (1.0 + v) * p0, -1.0, 1.0)
    hi = np.clip(v + (1.0 - v) * p0, -1.0, 1.0)
    return Interval(float_result(lo), float_result(hi), float_result(v), confidence)


@dataclass(frozen=True)
class PairedDecision:
    """The noninferiority decision on candidate minus baseline, with its evidence.

    Attributes:
        outcome: ``noninferior``, ``inferior`` or ``insufficient_evidence``.
        method: :data:`NEWCOMBE`, :data:`CLUSTER_T` or :data:`ZERO_SPREAD`.
        why: Why that method decides (:data:`METHOD_WHY`).
        point: Mean per-task delta.
        lo: Lower limit the decision reads against ``-margin``.
        hi: Upper limit.
        se: Task-level standard error (``nan`` at zero spread).
        mde: Minimum detectable effect ``(z_{1-alpha/2} + z_power) se``.
        powered: ``mde <= margin`` (False at zero spread).
        n_tasks: Paired tasks.
        df: Degrees of freedom of the cluster t (None for the other methods).
        runs: ``1`` for the one-run design, else the mean runs per task.
        margin, confidence, power: The declared rule.
        tasks_needed: The plan when the outcome is ``insufficient_evidence``
            (None otherwise, or when no task count can clear).
        plan: How ``tasks_needed`` was computed, one line.
        cells: ``(n11, n10, n01, n00)`` for the one-run design.
        mcnemar_p: Exact McNemar p for the one-run design.
    """

    outcome: Outcome
    method: str
    why: str
    point: float
    lo: float
    hi: float
    se: float
    mde: float
    powered: bool
    n_tasks: int
    df: float | None
    runs: float
    margin: float
    confidence: float
    power: float
    tasks_needed: int | None
    plan: str
    cells: tuple[int, int, int, int] | None = None
    mcnemar_p: float | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready (``nan`` as None)."""
        out: dict[str, Any] = {}
        for key, value in self.__dict__.items():
            if isinstance(value, float) and not np.isfinite(value):
                value = None
            out[key] = list(value) if isinstance(value, tuple) else value
        return out


def _classify(
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    mde: NDArray[np.float64],
    zero: NDArray[np.bool_],
    margin: float,
    require_powered: bool,
) -> NDArray[np.int8]:
    """Outcome codes (index into the three outcomes), vectorised."""
    powered = (mde <= margin) & ~zero
    clears = lo >= -margin
    if require_powered:
        clears = clears & powered
    inferior = ~clears & ((hi < -margin) | (powered & (lo < -margin)))
    return np.where(clears, 0, np.where(inferior, 1, 2)).astype(np.int8)


def decide_deltas(
    deltas: ArrayLike,
    margin: float,
    confidence: float = 0.95,
    power: float = 0.8,
    *,
    require_powered: bool = False,
) -> dict[str, NDArray[Any]]:
    """The several-runs decision, vectorised over leading axes of ``deltas`` (tasks last).

    Returns arrays ``outcome`` (0 noninferior, 1 inferior, 2 insufficient),
    ``lo``, ``hi``, ``point``, ``se``, ``mde``, ``zero`` (zero spread) and
    ``df`` (degrees of freedom of the t, ``nan`` at zero spread).
    The gate calls it through :func:`paired_decision`; the false-ship
    simulation calls it on thousands of samples at once.

    Raises:
        StatsInputError: On no tasks, non-finite deltas or invalid levels.
    """
    d = np.asarray(deltas, dtype=np.float64)
    n = d.shape[-1]
    if n < 1:
        raise StatsInputError("the paired decision needs at least one task")
    iv = skew_corrected_t_interval(d, confidence)
    point = np.asarray(iv.point, dtype=np.float64)
    spread = d.max(axis=-1) - d.min(axis=-1)
    zero = spread <= 1e-12
    se = d.std(axis=-1, ddof=1) / np.sqrt(n) if n > 1 else np.full(point.shape, np.nan)
    zs = zero_spread_interval(np.clip(point, -1.0, 1.0), n, confidence)
    lo = np.where(zero, zs.lo, np.asarray(iv.lo))
    hi = np.where(zero, zs.hi, np.asarray(iv.hi))
    df = np.where(zero, np.nan, satterthwaite_df(d)) if n > 1 else np.full(point.shape, np.nan)
    return _decided(lo, hi, point, se, zero, df, margin, confidence, power, require_powered)


def _decided(
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    point: NDArray[np.float64],
    se: NDArray[np.float64],
    zero: NDArray[np.bool_],
    df: NDArray[np.float64],
    margin: float,
    confidence: float,
    power: float,
    require_powered: bool,
) -> dict[str, NDArray[Any]]:
    """The decision arrays from an interval, its SE and the zero-spread flags."""
    se = np.where(zero, np.nan, se)
    mde = (z_two_sided(confidence) + z_one_sided(power)) * se
    outcome = _classify(lo, hi, mde, zero, margin, require_powered)
    return {"outcome": outcome, "lo": lo, "hi": hi, "point": point, "se": se, "mde": mde,
            "zero": zero, "df": df}


def decide_cells(
    n11: ArrayLike,
    n10: ArrayLike,
    n01: ArrayLike,
    n00: ArrayLike,
    margin: float,
    confidence: float = 0.95,
    power: float = 0.8,
    *,
    require_powered: bool = False,
) -> dict[str, NDArray[Any]]:
    """The one-run decision (Newcombe method 10), vectorised over the cell arrays.

    ``se`` is the seed's paired normal SE ``sqrt((D - delta^2)/n)``; a table
    without a discordant pair has zero spread. Same keys as :func:`decide_deltas`.

    Raises:
        StatsInputError: On invalid counts or levels.
    """
    iv = newcombe_paired_interval(n11, n10, n01, n00, confidence)
    a, b, c, d = (np.asarray(x, dtype=np.float64) for x in (n11, n10, n01, n00))
    n = a + b + c + d
    with np.errstate(invalid="ignore", divide="ignore"):
        point = (c - b) / n
        se = np.sqrt(np.maximum((b + c) / n - point**2, 0.0) / n)
    lo, hi = np.asarray(iv.lo, dtype=np.float64), np.asarray(iv.hi, dtype=np.float64)
    return _decided(lo, hi, point, se, (b + c) == 0, np.full(np.shape(point), np.nan), margin,
                    confidence, power, require_powered)


def _plan(
    point: float, variance: float, margin: float, confidence: float, power: float
) -> tuple[int | None, str]:
    """The seed's sample-size plan at the observed effect (or at 0 when that is a loss)."""
    gain = point if point + margin > 0 else 0.0
    at = "the observed delta" if gain == point else "an anticipated delta of 0 (the observed " \
        f"delta {point * 100:+.1f} points is beyond the margin)"
    if variance > 0:
        n = int(noninferiority_tasks(gain, variance, margin, confidence, power))
        return n, (
            f"powered noninferiority plan (13.5.3) at {at}: (z_{{1-a/2}} + z_power)^2 "
            f"* task variance {variance:.4g} / (delta + margin)^2"
        )
    n = int(zero_spread_tasks(gain, margin, confidence))
    return n, f"no spread observed: tasks at which {at} clears the margin by the exact bound"


def paired_decision(
    baseline: Outcomes,
    candidate: Outcomes,
    margin: float,
    confidence: float = 0.95,
    power: float = 0.8,
    *,
    require_powered: bool = False,
) -> PairedDecision:
    """Decide noninferiority of candidate vs baseline on paired tasks (see module).

    Args:
        baseline: Per-task runs (tasks x runs, ragged sequences, or 1-D), 0/1
            accepted outcomes with unresolved runs already resolved.
        candidate: The candidate's runs on the same tasks, same order.
        margin: Noninferiority margin (positive fraction, e.g. 0.02).
        confidence: Two-sided level of the interval.
        power: Declared power of the sample-size plan and the MDE.
        require_powered: Also refuse a cleared interval from an underpowered design.

    Raises:
        StatsInputError: On different task counts, no tasks, invalid levels or margin.
    """
    margin = float(positive(margin, "margin"))
    z_two_sided(confidence)
    z_one_sided(power)
    base_runs = _runs(baseline, "baseline")
    cand_runs = _runs(candidate, "candidate")
    if len(base_runs) != len(cand_runs):
        raise StatsInputError(
            f"paired systems need the same tasks; baseline has {len(base_runs)}, "
            f"candidate {len(cand_runs)}"
        )
    if not base_runs:
        raise StatsInputError("the paired decision needs at least one task")
    single = all(r.size == 1 for r in base_runs) and all(r.size == 1 for r in cand_runs)
    n = len(base_runs)
    cells: tuple[int, int, int, int] | None = None
    mcnemar: float | None = None
    if single:
        b = np.array([r[0] for r in base_runs]) > 0.5
        c = np.array([r[0] for r in cand_runs]) > 0.5
        cells = (int(np.sum(b & c)), int(np.sum(b & ~c)), int(np.sum(~b & c)),
                 int(np.sum(~b & ~c)))
        res = decide_cells(*cells, margin, confidence, power, require_powered=require_powered)
        mcnemar = float(mcnemar_exact(cells[1], cells[2]))
        method = NEWCOMBE  # handles a table without discordant pairs itself
        variance = float(res["se"]) ** 2 * n if not bool(res["zero"]) else 0.0
        runs = 1.0
    else:
        deltas = task_scores(cand_runs, "candidate") - task_scores(base_runs, "baseline")
        res = decide_deltas(deltas, margin, confidence, power, require_powered=require_powered)
        method = ZERO_SPREAD if bool(res["zero"]) else CLUSTER_T
        variance = float(np.var(deltas, ddof=1)) if n > 1 and not bool(res["zero"]) else 0.0
        runs = float(np.mean([r.size for r in base_runs + cand_runs]))
    outcome = _OUTCOMES[int(res["outcome"])]
    point = float(res["point"])
    needed, plan = (None, "")
    if outcome == "insufficient_evidence":
        needed, plan = _plan(point, variance, margin, confidence, power)
    se = float(res["se"])
    df = float(res["df"])
    return PairedDecision(
        outcome=outcome,
        method=method,
        why=METHOD_WHY[method],
        point=point,
        lo=float(res["lo"]),
        hi=float(res["hi"]),
        se=se,
        mde=float(res["mde"]),
        powered=bool(np.isfinite(se) and float(res["mde"]) <= margin),
        n_tasks=n,
        df=df if np.isfinite(df) else None,
        runs=runs,
        margin=margin,
        confidence=float(confidence),
        power=float(power),
        tasks_needed=needed,
        plan=plan,
        cells=cells,
        mcnemar_p=mcnemar,
    )


def _runs(outcomes: Outcomes, name: str) -> list[NDArray[np.float64]]:
    """Per-task run arrays (ragged allowed), validated like :func:`task_scores`."""
    task_scores(outcomes, name)  # validates shape and values
    arr: Any
    try:
        arr = np.asarray(outcomes, dtype=np.float64)
    except (TypeError, ValueError):
        return [np.asarray(t, dtype=np.float64).ravel() for t in outcomes]  # type: ignore[union-attr]
    if arr.ndim == 1:
        arr = arr[:, None]
    return [row for row in arr]
