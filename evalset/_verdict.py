"""The four-verdict rule: aggregation per trial and rates that keep the unresolved (13.2.3).

A mandatory failure short-circuits the trial to ``fail`` whatever else is
open; a trial is accepted only if every mandatory criterion passed; otherwise
it is unresolved. Diagnostic criteria never move the verdict. Unresolved
trials stay in the denominator as not accepted, are listed apart from
failures, and every rate carries the two bounds from resolving them all
accepted and all failed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from flywheel.evalset._task import CriterionRole
from flywheel.evalset._trial import CriterionResult, Verdict
from flywheel.evalset.stats import ResolutionBounds, resolution_bounds


def aggregate(results: Iterable[tuple[CriterionRole, Verdict]]) -> Verdict:
    """One trial verdict from its criterion verdicts.

    Order of precedence among mandatory criteria: any ``fail`` -> fail (short
    circuit); else any ``unknown`` -> unknown (evidence missing at the cutoff
    cannot arrive later, so the trial can no longer be accepted); else any
    ``pending`` -> pending; else pass. No mandatory criterion at all ->
    unknown (nothing established acceptance).
    """
    seen_mandatory = False
    open_verdict: Verdict | None = None
    for role, verdict in results:
        if role is not CriterionRole.MANDATORY:
            continue
        seen_mandatory = True
        if verdict is Verdict.FAIL:
            return Verdict.FAIL
        if verdict is Verdict.UNKNOWN:
            open_verdict = Verdict.UNKNOWN
        elif verdict is Verdict.PENDING and open_verdict is None:
            open_verdict = Verdict.PENDING
    if not seen_mandatory:
        return Verdict.UNKNOWN
    return open_verdict or Verdict.PASS


def aggregate_results(results: Iterable[CriterionResult]) -> Verdict:
    """:func:`aggregate` over stored criterion results."""
    return aggregate((r.role, r.verdict) for r in results)


@dataclass(frozen=True)
class VerdictTally:
    """Counts of trial verdicts and the acceptance rate with both-way bounds.

    Attributes:
        n: All initiated trials (the denominator; nothing is dropped).
        accepted: Trials with verdict pass.
        failed: Established failures.
        pending: Still being assessed.
        unknown: Evidence missing at the cutoff.
        rate: accepted / n (unresolved count as not accepted).
        bounds: Wilson intervals with the unresolved resolved all-failed and
            all-accepted; ``bounds.lo``/``bounds.hi`` are the outer limits.
    """

    n: int
    accepted: int
    failed: int
    pending: int
    unknown: int
    rate: float
    bounds: ResolutionBounds

    @property
    def unresolved(self) -> int:
        """Pending plus unknown."""
        return self.pending + self.unknown


def tally(verdicts: Iterable[Verdict], confidence: float = 0.95) -> VerdictTally:
    """Count verdicts and attach both-way bounds (``evalset.stats.resolution_bounds``).

    n = 0: rate ``nan`` and bounds ``[0, 1]``.
    """
    counts = {v: 0 for v in Verdict}
    for v in verdicts:
        counts[Verdict(v)] += 1
    n = sum(counts.values())
    unresolved = counts[Verdict.PENDING] + counts[Verdict.UNKNOWN]
    bounds = resolution_bounds(counts[Verdict.PASS], unresolved, n, confidence)
    return VerdictTally(
        n=n,
        accepted=counts[Verdict.PASS],
        failed=counts[Verdict.FAIL],
        pending=counts[Verdict.PENDING],
        unknown=counts[Verdict.UNKNOWN],
        rate=float(bounds.point),
        bounds=bounds,
    )
