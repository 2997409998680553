"""Literal gates never turn away a text their pattern matches.

Strings are generated from each gated pattern itself (hypothesis ``from_regex``),
so the property is checked on every provider format detect-secrets ships, on
our own formats and on hand-written patterns with scoped case flags, not on
a corpus.
"""

from __future__ import annotations

import re

import pytest
from flywheel.pii._gate import case_sensitive_gate, literal_gate, prefix_tree
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


#: Texts each gated scan of name and address detection matches (street lines of every shape
#: with a gate, role words and closings), and texts with none of them.
_GATED_TEXTS = [
    "Ship it to 221 Baker Street, London NW1 6XE, please.",
    "Adresse : 14, rue des Tanneurs, 75004 Paris",
    "Calle Mayor 12, 3º B, 28013 Madrid",
    "Lieferung an Hauptstraße 5, 10115 Berlin",
    "Wohnhaft Am Markt 3 seit 2019",
    "Antwort an Postfach 1234 bitte",
    "vivo in via Garibaldi 14, Torino",
    "Schönhauser Allee 118, 10437 Berlin",
    "Bor i Storgatan 7, 111 22 Stockholm",
    "ul. Mickiewicza 14/3, 00-001 Warszawa",
    "Unter den Linden 77, 10117 Berlin",
    "we moved to 12 baker street last year",
    "the driver, Oduya, called; my landlord Kasulke agreed",
    "Thanks for the help.\nRegards,\nMarta Ruiz",
    "Mit freundlichen Grüßen\nJonas Weber",
    "ticket 4471 closed by the build bot",
]


@pytest.mark.parametrize("text", _GATED_TEXTS)
def test_case_gates_change_no_detection(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """Name and address detection give the same answer with their gates as without."""
    from flywheel.pii import _people

    gated = (_people.detect_names(text), _people.detect_addresses(text))
    always = tuple(lambda t: True for _ in _people._ADDRESS_SHAPES)
    monkeypatch.setattr(_people, "_SHAPE_GATES", always)
    monkeypatch.setattr(_people, "_ROLE_GATE", lambda t: True)
    monkeypatch.setattr(_people, "_CLOSING_GATE", lambda t: True)
    assert (_people.detect_names(text), _people.detect_addresses(text)) == gated


def test_case_gates_turn_away_texts_without_their_literals() -> None:
    from flywheel.pii import _people

    text = "ticket 4471 closed by the build bot"
    assert not _people._ROLE_GATE(text) and not _people._CLOSING_GATE(text)
    assert any(not gate(text) for gate in _people._SHAPE_GATES)


def test_a_case_gate_refuses_a_case_insensitive_pattern() -> None:
    with pytest.raises(ValueError, match="case-insensitive"):
        case_sensitive_gate(re.compile(r"(?i)street"))


_PIECES = ["a", "b", "ab", "c", "[ab]", "a?", "(?:ba|a)", r"\b", "x*", "", "s", "S", "ſ", "k", "K"]
_PIECES += ["\u212a", "A", "é", "É", "(?-i:a)"]
_FRAMES = ["(?:%s)", "(?:%s)b", "x(?:%s)+", "(%s)(?:%s)?", "(?<=a)(?:%s)", "(?i:%s)b", "(?i)(?:%s)"]
_FRAMES += ["(?i)a(?-i:%s)", "(?ia)(?:%s)", "(?i)(?=%s)", "(?>%s)x"]


def test_a_prefix_tree_matches_what_its_pattern_matches() -> None:
    """Alternations joined by their first literal give the same matches and groups.

    With and without case flags, letters with three case forms, captures, look-arounds.
    """
    import random

    rnd = random.Random(7)
    joined = 0
    for _ in range(400):
        n = rnd.randint(2, 7)
        alts = ["".join(rnd.choice(_PIECES) for _ in range(rnd.randint(0, 3))) for _ in range(n)]
        source = rnd.choice(_FRAMES).replace("%s", "|".join(alts))
        try:
            rx = re.compile(source)
        except re.error:
            continue
        tree = prefix_tree(rx)
        joined += tree is not rx
        assert tree.pattern == rx.pattern and tree.flags == rx.flags and tree.groups == rx.groups
        for _ in range(6):
            text = "".join(rnd.choice("abcxsSkKA ſ\u212aéÉ") for _ in range(rnd.randint(0, 14)))
            assert [(m.span(), m.groups()) for m in tree.finditer(text)] == [
                (m.span(), m.groups()) for m in rx.finditer(text)
            ], (source, text)
    assert joined > 30


def test_the_detectors_scan_with_prefix_trees() -> None:
    from flywheel.pii import _people

    role = re.compile(_people._ROLE.pattern, _people._ROLE.flags)
    assert _people._ROLE is not role and _people._ROLE.pattern == role.pattern
    text = "spoke to the landlord, Oduya, and la doctora Arriaga; mein Nachbar Kasulke"
    spans = [m.span() for m in role.finditer(text)]
    assert spans and [m.span() for m in _people._ROLE.finditer(text)] == spans
    local = re.compile(rb"(?:ab|ac)", re.LOCALE)
    assert prefix_tree(local) is local  # a locale's case rules: left as written


_ANY_TEXTS = [
    "",
    "ref harboramber",
    "token AKIAIOSFODNN7EXAMPLE here",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "xoxb-123-456-abc and sk_live_abcdefghijklmnop1234",
    "12 Baker Street, London",
    "Hauptstraße 5, 10115 Berlin",
    "calle mayor 3, 28013 madrid",
    "PASSWORD: Hunter2 / Passwort",
]


@pytest.mark.parametrize("which", ["providers", "shapes", "mixed"])
def test_one_gate_for_many_says_what_their_gates_say(which: str) -> None:
    from flywheel.pii._gate import any_gate, gated
    from flywheel.pii._people import _ADDRESS_SHAPES

    patterns = {
        "providers": [rx for _, rx, _ in _provider_regexes()],
        "shapes": list(_ADDRESS_SHAPES),
        "mixed": [re.compile(r"(?i)secret=\w+"), re.compile(r"AKIA\w+"), re.compile(r"[a-z]+")],
    }[which]
    gate = any_gate(patterns)
    each = [literal_gate(p) for p in patterns if gated(p)]
    assert len(each) == {"mixed": 2}.get(which, len(each))
    for text in _ANY_TEXTS:
        lower = text.lower()
        assert gate(text, lower) == any(g(text, lower) for g in each), text
