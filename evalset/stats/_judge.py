"""Judge calibration: agreement, error rates and bias controls.

acceptance-and-statistics 13.4.2 (false acceptance vs. failure among
accepted), 13.4.3 (Cohen's kappa, position and verbosity bias);
traces-to-release-gate 22.3 (eq. 22.1, failure recall, position-flip rate,
length-matched verbosity control); playbook "The grader is a noisy
instrument".

Labels may be strings (``"PASS"``/``"FAIL"`` by default), booleans (True =
pass) or any hashable category; every function also accepts ``counts`` so a
calibration record stored as compressed contingency cells needs no expansion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._intervals import wilson_interval
from flywheel.evalset.stats._types import Interval
from flywheel.evalset.stats._validate import counts as as_counts
from numpy.typing import ArrayLike, NDArray


def _weights(size: int, counts: ArrayLike | None) -> NDArray[np.int64]:
    if counts is None:
        return np.ones(size, dtype=np.int64)
    w = as_counts(counts, "counts")
    if w.shape != (size,):
        raise StatsInputError(f"counts need one entry per label pair ({size}), got shape {w.shape}")
    return w


def _aligned(first: ArrayLike, second: ArrayLike, what: str) -> tuple[NDArray[Any], NDArray[Any]]:
    a = np.asarray(first)
    b = np.asarray(second)
    if a.ndim != 1 or a.shape != b.shape:
        raise StatsInputError(
            f"{what} need equal-length 1-D label lists; got shapes {a.shape} and {b.shape}"
        )
    return a, b


def cohen_kappa_table(table: ArrayLike) -> float:
    """Cohen's kappa from a square contingency table (eq. 22.1; 13.4.3).

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the diagonal share and
    ``p_e = sum_c p_c^(1) p_c^(2)`` from the row and column margins.

    n = 0: raises. ``p_e = 1`` (both raters always give the same single
    label, e.g. n = 1): ``nan``, since the seed calls kappa undefined there;
    a gate must treat ``nan`` as "not calibrated".

    Raises:
        StatsInputError: On a non-square table, negative cells or no cases.
    """
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] != t.shape[1]:
        raise StatsInputError(f"kappa needs a square contingency table, got shape {t.shape}")
    if np.any(t < 0) or not np.all(np.isfinite(t)):
        raise StatsInputError("contingency cells must be non-negative counts")
    n = t.sum()
    if n <= 0:
        raise StatsInputError("kappa needs at least one rated case")
    p_o = np.trace(t) / n
    p_e = float(np.sum(t.sum(axis=1) * t.sum(axis=0)) / n**2)
    if p_e >= 1.0 - 1e-12:
        return float("nan")
    return float((p_o - p_e) / (1.0 - p_e))


def contingency_table(
    first: ArrayLike, second: ArrayLike, *, counts: ArrayLike | None = None
) -> tuple[NDArray[np.int64], NDArray[Any]]:
    """Cross-tabulate two raters: ``(table[first_label, second_label], labels)``.

    Raises:
        StatsInputError: On misaligned inputs or bad counts.
    """
    a, b = _aligned(first, second, "raters")
    w = _weights(a.size, counts)
    labels, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    k = labels.size
    ca, cb = codes[: a.size], codes[a.size :]
    table = np.bincount(ca * k + cb, weights=w, minlength=k * k).reshape(k, k)
    return table.astype(np.int64), labels


def cohen_kappa(first: ArrayLike, second: ArrayLike, *, counts: ArrayLike | None = None) -> float:
    """Cohen's kappa between two raters' labels of the same cases (eq. 22.1).

    Chance-corrected agreement: an always-PASS judge on 90 PASS / 10 FAIL
    human labels agrees 90 % of the time and scores kappa 0. It measures
    consistency, not correctness; pair it with :func:`judge_error_rates`.

    n = 0: raises. n = 1 (or any single shared label): ``nan``.

    Args:
        first: One rater's labels (e.g. adjudicated human labels).
        second: The other rater's labels, index-aligned with ``first``.
        counts: Optional multiplicity of each aligned pair (compressed cells).

    Raises:
        StatsInputError: On unequal lengths, no cases, or bad counts.
    """
    table, _ = contingency_table(first, second, counts=counts)
    return cohen_kappa_table(table)


def _as_pass(labels: NDArray[Any], pass_label: Any) -> NDArray[np.bool_]:
    if labels.dtype == bool:
        return labels.astype(bool)
    return np.asarray(labels == pass_label, dtype=bool)


@dataclass(frozen=True)
class JudgeErrorRates:
    """A grader's error rates against an independent reference (13.4.2).

    Attributes:
        false_acceptance: ``Pr(Acc | reference failure)`` with its Wilson
            interval; needs reference-assessed failures, including the ones
            the grader rejected.
        failure_among_accepted: ``Pr(reference failure | Acc)``, what a random
            audit of accepted outputs estimates (``1 -`` precision).
        false_rejection: ``Pr(not Acc | reference pass)``.
        fail_recall: Share of reference failures the grader caught,
            ``1 - false_acceptance.point`` (22.3: 0.80).
        agreement: Raw agreement share.
        kappa: Cohen's kappa between grader and reference.
        n: Cases assessed.
        n_reference_failures: Denominator of ``false_acceptance``.
        n_accepted: Denominator of ``failure_among_accepted``.
    """

    false_acceptance: Interval
    failure_among_accepted: Interval
    false_rejection: Interval
    fail_recall: float
    agreement: float
    kappa: float
    n: int
    n_reference_failures: int
    n_accepted: int


def judge_error_rates(
    judge_labels: ArrayLike,
    human_labels: ArrayLike,
    *,
    pass_label: Any = "PASS",
    counts: ArrayLike | None = None,
    confidence: float = 0.95,
) -> JudgeErrorRates:
    """False-acceptance rate and failure among accepted, with Wilson intervals.

    ``FAR = Pr(Acc | F)`` conditions on reference failures;
    ``Pr(F | Acc)`` conditions on the grader's acceptances (13.4.2). Any
    label other than ``pass_label`` is a failure (booleans: True = pass).

    n = 0: raises. A denominator of zero (no reference failures, or nothing
    accepted) gives that rate ``point = nan`` and interval ``[0, 1]``.

    Args:
        judge_labels: The grader's verdicts.
        human_labels: Independent reference verdicts on the same cases.
        pass_label: The label that means accepted/passing.
        counts: Optional multiplicity per aligned pair (compressed cells).
        confidence: Level of the Wilson intervals.

    Raises:
        StatsInputError: On misaligned inputs, no cases, or bad counts.
    """
    j, h = _aligned(judge_labels, human_labels, "judge and reference labels")
    w = _weights(j.size, counts)
    total = int(w.sum())
    if total == 0:
        raise StatsInputError("judge calibration needs at least one assessed case")
    acc = _as_pass(j, pass_label)
    ref_pass = _as_pass(h, pass_label)
    ref_fail = ~ref_pass
    fa = int(w[acc & ref_fail].sum())
    n_fail = int(w[ref_fail].sum())
    n_acc = int(w[acc].sum())
    fr = int(w[~acc & ref_pass].sum())
    n_pass = int(w[ref_pass].sum())
    far = wilson_interval(fa, n_fail, confidence)
    table = np.array(
        [
            [w[acc & ref_pass].sum(), w[~acc & ref_pass].sum()],
            [w[acc & ref_fail].sum(), w[~acc & ref_fail].sum()],
        ]
    )
    return JudgeErrorRates(
        false_acceptance=far,
        failure_among_accepted=wilson_interval(fa, n_acc, confidence),
        false_rejection=wilson_interval(fr, n_pass, confidence),
        fail_recall=float(1.0 - far.point) if n_fail else float("nan"),
        agreement=float(np.trace(table) / total),
        kappa=cohen_kappa_table(table),
        n=total,
        n_reference_failures=n_fail,
        n_accepted=n_acc,
    )


def position_flip_rate(
    ab: ArrayLike,
    ba_normalized: ArrayLike,
    *,
    counts: ArrayLike | None = None,
    confidence: float = 0.95,
) -> Interval:
    """Share of pairwise verdicts that change when only the answer order changes (22.3).

    Each item is judged in both orders and the BA winner is normalised back to
    answer identity; a disagreement is a position flip. 3 flips in 25 items:
    0.12 (Wilson interval around it).

    n = 0: ``point = nan``, interval ``[0, 1]``.

    Raises:
        StatsInputError: On misaligned inputs or bad counts.
    """
    a, b = _aligned(ab, ba_normalized, "both answer orders")
    w = _weights(a.size, counts)
    flips = int(w[a != b].sum())
    return wilson_interval(flips, int(w.sum()), confidence)


def verbosity_control_rate(
    picks: ArrayLike,
    *,
    longer: Any = "long",
    counts: ArrayLike | None = None,
    confidence: float = 0.95,
) -> Interval:
    """Share of length-matched controls where the judge still picked the longer answer (22.3).

    In every control pair the longer answer is deliberately the worse one, so
    a length-blind judge never picks it; order swapping cannot detect this
    bias. 2 of 5 controls: 0.40.

    n = 0: ``point = nan``, interval ``[0, 1]``.

    Args:
        picks: Booleans (True = picked the longer answer) or labels compared
            with ``longer``.
        longer: The label that marks a pick of the longer answer.
        counts: Optional multiplicity of each pick.
        confidence: Level of the Wilson interval.

    Raises:
        StatsInputError: On non-1-D input or bad counts.
    """
    p = np.asarray(picks)
    if p.ndim != 1:
        raise StatsInputError(f"picks must be a 1-D list of control verdicts, got shape {p.shape}")
    w = _weights(p.size, counts)
    chose_long = p if p.dtype == bool else p == longer
    return wilson_interval(int(w[chose_long].sum()), int(w.sum()), confidence)
