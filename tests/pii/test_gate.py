"""Literal gates never turn away a text their pattern matches.

Strings are generated from each gated pattern itself (hypothesis ``from_regex``),
so the property is checked on every provider format detect-secrets ships, on
our own formats and on hand-written patterns with scoped case flags, not on
a corpus.
"""

from __future__ import annotations

import re

import pytest
from flywheel.pii._gate import literal_gate
from flywheel.pii._secrets import _EXTRA_FORMATS, _PROSE, _provider_regexes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_GATED = [(name, rx) for name, rx, _ in _provider_regexes()] + [
    ("extra", _EXTRA_FORMATS),
    ("prose", _PROSE),
]


@pytest.mark.parametrize(("name", "rx"), _GATED, ids=[f"{n}-{i}" for i, (n, _) in enumerate(_GATED)])
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_gate_admits_every_string_its_pattern_matches(name: str, rx: re.Pattern[str], data) -> None:  # noqa: ANN001
    gate = literal_gate(rx)
    s = data.draw(st.from_regex(rx))
    if rx.search(s):
        assert gate(s, s.lower()), (name, s)


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (r"x(?i:password)=\w+", "xPASSWORD=abc"),  # scoped flag on a case-sensitive pattern
        (r"(?i)ab(?-i:CD)", "ABCD"),  # and off on a case-insensitive one
        (r"(?:ghp|gho)_[A-Za-z0-9]{4}", "gho_abcd"),  # either alternative
        (r"(?i)token:\s*\w+", "ToKeN: x"),
        (r"[a-z]+", "anything"),  # no literal: no gate
    ],
)
def test_hand_written_patterns(pattern: str, text: str) -> None:
    rx = re.compile(pattern)
    assert rx.search(text)
    assert literal_gate(rx)(text, text.lower())


def test_a_gate_turns_away_a_text_without_its_literal() -> None:
    gate = literal_gate(re.compile(r"AKIA[0-9A-Z]{16}"))
    assert not gate("no key here", "no key here")
