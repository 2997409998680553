"""Adversarial tests: labelled fields written in text get their label's key rule (issue 20).

A JSON or Python pair pasted into prose, a ``Label: value`` line and a form body written
as one line of a longer text are redacted as the same field under a JSON key would be,
when a key rule knows the label. No sentence, name or value is copied from a bench corpus.
Look-alikes: a ``Name:`` line about a thing (read as a name only when person-like), a
one-value field followed by more text on its line, a library "card" number, labels no
rule knows.
"""

from __future__ import annotations

import pytest

from flywheel.pii import segments
from flywheel.promote import redact_trace


def _redacted(field: str) -> str:
    return redact_trace([{"tool_name": "t", "output_text": field}]).steps[0].output_text or ""


@pytest.mark.parametrize(
    ("text", "values"),
    [
        # a JSON object pasted after prose: capitals the name rules alone would not take
        (
            'OCR of the card:\n{"surname": "OKWUOSA", "given_names": "IFEYINWA ADAKU", "nr": 7}',
            ["OKWUOSA", "IFEYINWA", "ADAKU"],
        ),
        # a Python repr in a log line
        ("payload={'nachname': 'Wexhäuser', 'vorname': 'Ilsabe'} sent", ["Wexhäuser", "Ilsabe"]),
        # JSON escapes inside the value
        ('rec {"nom": "Ba\\u00e9t\\u00e9 Quillier"} ok', ["Quillier"]),
        # label lines, list items, lower-case values of a name column
        ("Anfrage:\nNachname: Quellmalz\nOrt: Halle", ["Quellmalz"]),
        ("- apellidos: zubelzu arrieta\n- edad: 41", ["zubelzu arrieta"]),
        ("Adresse: 14 rue des Tanneurs, Lyon\nmerci", ["14 rue des Tanneurs, Lyon"]),
        # a form body as one line of a message
        (
            "Formulardaten:\nvorname=Ilsabe&nachname=Wexh%C3%A4user&plz=06108\nbitte prüfen",
            ["Ilsabe", "Wexh%C3%A4user"],
        ),
    ],
)
def test_labelled_fields_in_text_follow_their_key_rule(text: str, values: list[str]) -> None:
    out = _redacted(text)
    for v in values:
        assert v not in out, out


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Name: Standard plan\nPrice: 12 EUR", ["Standard plan"]),  # no person
        ("client_ip: 10.20.30.40, app v3.8.1", ["app v3.8.1"]),  # one value per field
        ('details {"card": "29901004471823", "form": "ill-request"}', ["29901004471823", "ill-request"]),
        ("Status: shipped\nCarrier: Nordic Freight", ["shipped", "Nordic Freight"]),  # no rule
        ("see https://example.org/a?b=c\nsize=3&colour=red\n", ["size=3&colour=red"]),
    ],
)
def test_labelled_look_alikes_stay(text: str, kept: list[str]) -> None:
    out = _redacted(text)
    for v in kept:
        assert v in out, out


def test_pairs_only_for_labels_a_rule_knows() -> None:
    text = 'log: {"sku": "AB-12", "surname": "Quellmalz"}'
    kinds = [(s.kind, text[s.start : s.end]) for s in segments(text)]
    assert ("pair", "Quellmalz") in kinds
    assert not any(v == "AB-12" for _, v in kinds)
