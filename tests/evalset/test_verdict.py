"""The four-verdict rule (13.2.3): short circuit, unresolved kept, both-way bounds."""

from __future__ import annotations

import math

import pytest
from flywheel.evalset import CriterionRole, Verdict, aggregate, tally
from flywheel.evalset.stats import wilson_interval
from hypothesis import given
from hypothesis import strategies as st

M, D = CriterionRole.MANDATORY, CriterionRole.DIAGNOSTIC
P, F, PE, U = Verdict.PASS, Verdict.FAIL, Verdict.PENDING, Verdict.UNKNOWN


@pytest.mark.parametrize(
    "results, expected",
    [
        ([(M, P), (M, P)], P),
        ([(M, P), (M, F)], F),
        ([(M, PE), (M, F)], F),  # a mandatory failure short-circuits past pending
        ([(M, U), (M, F), (M, PE)], F),
        ([(M, P), (M, PE)], PE),  # table 2: nothing failed, regression still running
        ([(M, P), (M, U)], U),
        ([(M, PE), (M, U)], U),  # missing evidence cannot arrive later
        ([(M, P), (D, F)], P),  # a diagnostic never moves the verdict
        ([(M, P), (D, U)], P),
        ([(D, P)], U),  # nothing mandatory established acceptance
        ([], U),
    ],
)
def test_aggregate(results: list[tuple[CriterionRole, Verdict]], expected: Verdict) -> None:
    assert aggregate(results) is expected


def test_table2_interim_record_is_pending_then_fail_then_unknown() -> None:
    """Example 13.1: six criteria, two still open; later a regression failure or the cutoff."""
    interim = [(M, P), (M, PE), (M, P), (M, P), (M, PE), (M, P)]
    assert aggregate(interim) is PE
    assert aggregate([(M, F) if i == 1 else r for i, r in enumerate(interim)]) is F
    assert aggregate([(M, U) if v is PE else (r, v) for r, v in interim]) is U


def test_unresolved_stay_in_the_denominator_with_both_way_bounds() -> None:
    verdicts = [P] * 30 + [F] * 10 + [PE] * 6 + [U] * 4
    t = tally(verdicts)
    assert (t.n, t.accepted, t.failed, t.pending, t.unknown, t.unresolved) == (50, 30, 10, 6, 4, 10)
    assert t.rate == pytest.approx(30 / 50)  # not 30/40: unresolved count as not accepted
    low, high = wilson_interval(30, 50), wilson_interval(40, 50)
    assert t.bounds.lo == pytest.approx(low.lo) and t.bounds.hi == pytest.approx(high.hi)
    assert t.bounds.if_all_accepted.point == pytest.approx(40 / 50)


def test_empty_tally() -> None:
    t = tally([])
    assert t.n == 0 and math.isnan(t.rate)


verdicts = st.sampled_from(list(Verdict))
roles = st.sampled_from([M, D])


@given(st.lists(st.tuples(roles, verdicts), max_size=12))
def test_aggregate_properties(results: list[tuple[CriterionRole, Verdict]]) -> None:
    out = aggregate(results)
    mandatory = [v for r, v in results if r is M]
    if F in mandatory:
        assert out is F
    elif mandatory and all(v is P for v in mandatory):
        assert out is P
    else:
        assert out in (PE, U)
    # diagnostics are irrelevant
    assert aggregate([(r, v) for r, v in results if r is M] or [(D, P)]) is out or not mandatory


@given(st.lists(verdicts, min_size=1, max_size=60))
def test_bounds_bracket_the_rate(vs: list[Verdict]) -> None:
    t = tally(vs)
    assert t.n == len(vs)
    assert 0.0 <= t.bounds.lo <= t.rate <= (t.accepted + t.unresolved) / t.n <= t.bounds.hi <= 1.0
