"""Judge calibration (acceptance-and-statistics 13.4; traces-to-release-gate 22.3).

The 22.3 calibration cells are reconstructed from the printed report (lines
346-348): n = 100, agreement 0.89 (11 disagreements), failure recall 0.80 and
kappa 0.736. With F human failures, 0.8F caught and 11 - 0.2F false
rejections, only F = 30 gives kappa 0.736 (F = 25 -> 0.711, F = 35 -> 0.753),
so the cells are PASS/PASS 65, PASS/FAIL 5, FAIL/PASS 6, FAIL/FAIL 24
(human/judge). The per-slice split (0.9, 0.867, 0.9) forces 30 locale-es
cases with 4 disagreements; the en/mixed sizes (40/30) are one consistent choice.
"""

from __future__ import annotations

import numpy as np
import pytest
from flywheel.evalset.stats import (
    StatsInputError,
    cohen_kappa,
    cohen_kappa_table,
    contingency_table,
    judge_error_rates,
    position_flip_rate,
    verbosity_control_rate,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

# (slice, human, judge, count)
POINTWISE = [
    ("locale-en", "PASS", "PASS", 26),
    ("locale-en", "PASS", "FAIL", 2),
    ("locale-en", "FAIL", "PASS", 2),
    ("locale-en", "FAIL", "FAIL", 10),
    ("locale-es", "PASS", "PASS", 19),
    ("locale-es", "PASS", "FAIL", 2),
    ("locale-es", "FAIL", "PASS", 2),
    ("locale-es", "FAIL", "FAIL", 7),
    ("mixed-language", "PASS", "PASS", 20),
    ("mixed-language", "PASS", "FAIL", 1),
    ("mixed-language", "FAIL", "PASS", 2),
    ("mixed-language", "FAIL", "FAIL", 7),
]
SLICE, HUMAN, JUDGE, COUNT = (np.array(col) for col in zip(*POINTWISE, strict=True))
COUNT = COUNT.astype(int)


def test_section_22_3_calibration_report() -> None:
    # Lines 346-347: n = 100, agreement 0.89, kappa 0.736, failure recall 0.80.
    kappa = cohen_kappa(HUMAN, JUDGE, counts=COUNT)
    assert round(kappa, 3) == 0.736
    rates = judge_error_rates(JUDGE, HUMAN, counts=COUNT)
    assert rates.n == 100
    assert round(rates.agreement, 2) == 0.89
    assert round(rates.kappa, 3) == 0.736
    assert round(rates.fail_recall, 2) == 0.80
    # Line 348: per-slice agreement.
    agreement = {
        name: judge_error_rates(
            JUDGE[SLICE == name], HUMAN[SLICE == name], counts=COUNT[SLICE == name]
        ).agreement
        for name in ("locale-en", "locale-es", "mixed-language")
    }
    assert {k: round(v, 3) for k, v in agreement.items()} == {
        "locale-en": 0.9,
        "locale-es": 0.867,
        "mixed-language": 0.9,
    }


def test_expanded_labels_equal_compressed_cells_and_statsmodels() -> None:
    human = np.repeat(HUMAN, COUNT)
    judge = np.repeat(JUDGE, COUNT)
    assert cohen_kappa(human, judge) == pytest.approx(cohen_kappa(HUMAN, JUDGE, counts=COUNT))
    table, labels = contingency_table(human, judge)
    assert labels.tolist() == ["FAIL", "PASS"]
    assert table.tolist() == [[24, 6], [5, 65]]
    assert cohen_kappa_table(table) == pytest.approx(cohens_kappa(table).kappa, rel=1e-12)


def test_always_pass_judge_has_kappa_zero() -> None:
    # Line 295: 90 PASS / 10 FAIL humans, an always-PASS judge: agreement 0.90, kappa 0.00.
    human = ["PASS"] * 90 + ["FAIL"] * 10
    judge = ["PASS"] * 100
    rates = judge_error_rates(judge, human)
    assert round(rates.agreement, 2) == 0.90
    assert cohen_kappa(human, judge) == pytest.approx(0.0, abs=1e-12)
    assert rates.fail_recall == 0.0 and rates.false_acceptance.point == 1.0


@pytest.mark.parametrize(("share", "agreement"), [(0.9, 0.82), (0.8, 0.68)])
def test_independent_raters_agree_by_chance_only(share: float, agreement: float) -> None:
    # 13.4.3 (line 241) and checkpoint 13.2: two raters that each pass `share` of
    # cases independently agree share^2 + (1-share)^2 by chance, kappa 0.
    pp, pf, ff = share * share, share * (1 - share), (1 - share) ** 2
    table = np.array([[pp, pf], [pf, ff]]) * 100
    assert np.trace(table) / 100 == pytest.approx(agreement)
    assert cohen_kappa_table(table) == pytest.approx(0.0, abs=1e-12)


def test_exercise_3_judges() -> None:
    # Exercise 3 (line 544): A/B agreement table; B against the reference.
    table = np.array([[110, 10], [20, 60]])  # rows A pass/fail, columns B pass/fail
    assert np.trace(table) / table.sum() == pytest.approx(0.85)
    assert cohen_kappa_table(table) == pytest.approx(cohens_kappa(table).kappa, rel=1e-12)
    # Reference: 80 failures (B accepted 16), 120 passes (B accepted 114).
    judge = ["PASS", "FAIL", "PASS", "FAIL"]
    human = ["FAIL", "FAIL", "PASS", "PASS"]
    rates = judge_error_rates(judge, human, counts=[16, 64, 114, 6])
    lo, hi = proportion_confint(16, 80, method="wilson")
    assert rates.false_acceptance.point == pytest.approx(0.2)
    assert (rates.false_acceptance.lo, rates.false_acceptance.hi) == (
        pytest.approx(lo),
        pytest.approx(hi),
    )
    assert rates.failure_among_accepted.point == pytest.approx(16 / 130)
    assert rates.false_rejection.point == pytest.approx(6 / 120)
    assert rates.n_reference_failures == 80 and rates.n_accepted == 130
    # The policy (FAR upper limit <= 10 %) rejects B.
    assert rates.false_acceptance.hi > 0.10


def test_position_flip_and_verbosity_controls() -> None:
    # Line 378: 25 pairwise items, 3 order-sensitive verdicts -> 0.12.
    ab = ["A", "B", "A", "B", "tie"]
    ba = ["A", "B", "B", "A", "A"]
    flip = position_flip_rate(ab, ba, counts=[12, 10, 1, 1, 1])
    assert round(flip.point, 2) == 0.12
    assert 0 <= flip.lo < 0.12 < flip.hi <= 1
    # Line 389: the length-matched control prefers the longer (wrong) answer 40 %.
    control = [
        ("long", "short"),
        ("short", "short"),
        ("long", "short"),
        ("short", "short"),
        ("short", "short"),
    ]
    verbosity = verbosity_control_rate([pick for pick, _correct in control])
    assert verbosity.point == pytest.approx(0.40)
    assert verbosity_control_rate([True, False, True, False, False]).point == pytest.approx(0.4)


def test_n0_n1_and_bad_input() -> None:
    with pytest.raises(StatsInputError):
        cohen_kappa([], [])  # n = 0
    assert np.isnan(cohen_kappa(["PASS"], ["PASS"]))  # n = 1: p_e = 1, undefined
    assert cohen_kappa(["PASS"], ["FAIL"]) == pytest.approx(0.0)  # n = 1, disagree
    with pytest.raises(StatsInputError):
        cohen_kappa(["PASS", "FAIL"], ["PASS"])
    with pytest.raises(StatsInputError):
        cohen_kappa(["PASS"], ["PASS"], counts=[-1])
    with pytest.raises(StatsInputError):
        judge_error_rates([], [])
    one = judge_error_rates(["PASS"], ["PASS"])  # no reference failures
    assert np.isnan(one.false_acceptance.point) and np.isnan(one.fail_recall)
    empty = position_flip_rate([], [])
    assert np.isnan(empty.point) and (empty.lo, empty.hi) == (0.0, 1.0)
    with pytest.raises(StatsInputError):
        cohen_kappa_table([[1, 2, 3]])
    # Booleans: True means pass.
    assert judge_error_rates([True, True], [False, True]).false_acceptance.point == 1.0


labels = st.lists(
    st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), min_size=2, max_size=60
)


@settings(max_examples=80, deadline=None)
@given(pairs=labels)
def test_kappa_matches_statsmodels_and_is_bounded(pairs: list[tuple[str, str]]) -> None:
    first, second = zip(*pairs, strict=True)
    table, _ = contingency_table(list(first), list(second))
    k = cohen_kappa(list(first), list(second))
    if np.isnan(k):
        assert len(set(first) | set(second)) == 1
        return
    assert -1.0 - 1e-12 <= k <= 1.0 + 1e-12
    with np.errstate(all="ignore"):  # statsmodels' own variance terms warn on tiny tables
        reference = cohens_kappa(table).kappa
    assert k == pytest.approx(reference, abs=1e-9)
    assert cohen_kappa(list(second), list(first)) == pytest.approx(k)
