"""The pattern detector's own loop over Presidio's recognizers gives what their ``analyze`` gives.

``flywheel.pii._patterns.recognizer_runner`` replaces Presidio's per-match
bookkeeping with tuples, and ``_RUNS`` finds the stretches worth a recognizer
call with one scan each. Both are speed changes only: these tests compare them
with Presidio's ``analyze`` and with the run-by-run filter they replaced, on
hand-picked texts and on generated ones.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from presidio_analyzer import Pattern, PatternRecognizer

from flywheel.pii._engine import empty_artifacts, shared_analyzer
from flywheel.pii._patterns import _RUNS, _runs, recognizer_runner

TEXTS = [
    "",
    "mail jane.doe@example.com or JANE@EXAMPLE.ORG, not a@b",
    "card 4111 1111 1111 1111 and 4111-1111-1111-1112, amex 3782 822463 10005",
    "5555555555554444 5105105105105100 6011111111111117 30569309025904",
    "IBAN DE89 3704 0044 0532 0130 00, GB33BUKB20201555555555, gb33 bukb 2020 1555 5555 55",
    "FR76 3000 6000 0112 3456 7890 189 2 days later; NL91ABNA0417164300 x",
    "ips 192.168.0.1, 10.0.0.256, 2001:db8::1, ::1, fe80::1%eth0, 1.2.3.4/24, 256.1.1.1",
    "ssn 123-45-6789, 123 45 6789, 123456789, 000-12-3456, 666-12-3456, 078-05-1120",
    "call 0049301234567 or 004930123456789012 now",
    "x 1.1.1.1.1.1 2001:0db8:85a3:0000:0000:8a2e:0370:7334 12:34:56",
]

_ALPHABET = st.sampled_from(list("0123456789 -.:@/%_abcdefXYZDEGB+()#\n") + ["١", "é"])
_GEN = st.lists(
    st.one_of(_ALPHABET, st.sampled_from(TEXTS[1:]).map(lambda t: t[: len(t) // 2])),
    max_size=60,
).map("".join)


def _recognizers() -> list[Any]:
    analyzer = shared_analyzer()
    return [r for r in analyzer.registry.recognizers if not hasattr(r, "analyze_windows")]


def _presidio(rec: Any, text: str) -> list[tuple[int, int, float]]:
    artifacts = empty_artifacts(shared_analyzer())
    return [
        (r.start, r.end, r.score)
        for r in rec.analyze(text, list(rec.supported_entities), artifacts)
    ]


@pytest.mark.parametrize("text", TEXTS)
def test_runner_gives_what_analyze_gives(text: str) -> None:
    recs = _recognizers()
    assert {type(r).__name__ for r in recs} >= {
        "EmailRecognizer",
        "CreditCardRecognizer",
        "IbanRecognizer",
        "IpRecognizer",
        "UsSsnRecognizer",
        "PatternRecognizer",
    }
    for rec in recs:
        assert recognizer_runner(rec)(text) == _presidio(rec, text), rec.name


@settings(max_examples=150, deadline=None)
@given(text=_GEN)
def test_runner_gives_what_analyze_gives_on_generated_text(text: str) -> None:
    for rec in _recognizers():
        assert recognizer_runner(rec)(text) == _presidio(rec, text), rec.name


def test_contained_and_repeated_matches_are_removed_as_presidio_removes_them() -> None:
    rec = PatternRecognizer(
        supported_entity="X",
        name="Overlaps",
        patterns=[
            Pattern("long", r"\d{4}-\d{4}", 0.4),
            Pattern("short", r"\d{4}", 0.4),  # inside "long" at the same score: dropped
            Pattern("short-high", r"\d{4}(?=-)", 0.6),  # inside, higher score: kept
            Pattern("again", r"\d{4}-\d{4}", 0.4),  # the same span twice: once
        ],
    )
    text = "1234-5678 and 9999"
    assert recognizer_runner(rec)(text) == _presidio(rec, text)
    assert len(recognizer_runner(rec)(text)) == 3


def test_a_recognizer_with_its_own_analyze_is_asked_directly() -> None:
    class Custom(PatternRecognizer):
        def analyze(self, text: str, entities: Any, nlp_artifacts: Any = None, regex_flags: Any = None) -> Any:  # noqa: E501
            return super().analyze(text.upper(), entities, nlp_artifacts, regex_flags)

    rec = Custom(supported_entity="X", patterns=[Pattern("up", r"[A-Z]{3}\b", 0.5)])
    rec.global_regex_flags = re.DOTALL  # case matters
    assert recognizer_runner(rec)("abc def") == [(0, 3, 0.5), (4, 7, 0.5)]


# The run-by-run filter ``_RUNS`` replaced: each maximal run of the pattern's
# characters, kept when it holds what a match needs.
_DIGITS = str.maketrans("", "", "0123456789")
_SSN_SHAPE = re.compile(r"\d{3}[- .]?\d{2}[- .]?\d{4}|\d{5}-\d{4}|\d{3}-\d{6}")
_IP_TRIGGER = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|[0-9A-Fa-f]{0,4}:[0-9A-Fa-f]{0,4}:")
_OLD_RUNS = {
    "EMAIL_ADDRESS": (re.compile(r"[\w!#$%&'*+\-/=?^`{|}~.@]+"), lambda r: "@" in r),
    "CREDIT_CARD": (re.compile(r"[\d \-]+"), lambda r: len(r) - len(r.translate(_DIGITS)) >= 12),
    "US_SSN": (re.compile(r"[\d \-.]+"), lambda r: _SSN_SHAPE.search(r) is not None),
    "IBAN_CODE": (re.compile(r"[A-Z0-9 \-]+"), lambda r: len(r) - len(r.translate(_DIGITS)) >= 8),
    "IP_ADDRESS": (re.compile(r"[\w.:%/]+"), lambda r: _IP_TRIGGER.search(r) is not None),
}


def _old_runs(entity: str, text: str) -> list[tuple[int, int]]:
    rx, worth = _OLD_RUNS[entity]
    return [m.span() for m in rx.finditer(text) if worth(m.group())]


@pytest.mark.parametrize("entity", sorted(_RUNS))
@pytest.mark.parametrize("text", [*TEXTS, "١٢٣٤٥٦٧٨٩٠١٢ 12", "DE١٢3456789012 x", "a@@b @ x@"])
def test_runs_are_the_runs_the_old_filter_kept(entity: str, text: str) -> None:
    assert _runs(entity, text) == _old_runs(entity, text)


@settings(max_examples=300, deadline=None)
@given(text=_GEN)
def test_runs_are_the_runs_the_old_filter_kept_on_generated_text(text: str) -> None:
    for entity in _RUNS:
        assert _runs(entity, text) == _old_runs(entity, text), entity


def test_every_match_holds_a_literal_its_pattern_needs() -> None:
    """A pattern skipped on a window without its literals could not have matched there.

    Every match of every gated pattern (``needed_literals``) holds one of them.
    """
    from flywheel.pii._patterns import _regex, needed_literals

    gated = 0
    for rec in shared_analyzer().registry.recognizers:
        for p in getattr(rec, "patterns", []):
            need = needed_literals(p.regex, rec.global_regex_flags)
            if need is None:
                continue
            gated += 1
            rx = _regex.compile(p.regex, flags=rec.global_regex_flags)
            for text in TEXTS:
                for m in rx.finditer(text):
                    assert any(x in m.group() for x in need), (p.name, m.group())
    assert gated >= 8  # the IP, dashed SSN and e-mail shapes at least


def test_a_gated_pattern_is_skipped_only_where_it_cannot_match() -> None:
    from flywheel.pii._patterns import needed_literals

    assert needed_literals(r"\b([0-9]{3})-([0-9]{6})\b", re.I) == ("-",)
    assert needed_literals(r"(?i)ab[0-9]+", 0) is None  # a literal with a case, case-blind
    assert needed_literals(r"[0-9]{9}", re.I) is None  # no literal
    assert needed_literals(r"a\p{L}", 0) is None  # ``re`` cannot read it: always run
    rec = PatternRecognizer(
        supported_entity="X", name="Dashed", patterns=[Pattern("dash", r"\d{3}-\d{2}", 0.5)]
    )
    for text in ("123-45", "12345", "a-b 123-45"):
        assert recognizer_runner(rec)(text) == _presidio(rec, text)


@pytest.mark.parametrize("text", ["", "abc", "12345", "١٢٣٤٥", "12 ٣٤ x", "²³ 1", "9" * 13])
def test_has_digits_counts_what_isdigit_counts(text: str) -> None:
    from flywheel.pii._types import has_digits

    for n in range(15):
        assert has_digits(text, n) == (sum(c.isdigit() for c in text) >= n), n
