"""Adversarial tests: streets with no street word before a postcode line, and English street
words in lower case (issue 20). No address is copied from a bench corpus."""

from __future__ import annotations

import pytest

from flywheel.pii import shared_detector


def _addresses(text: str) -> list[str]:
    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == "ADDRESS"]


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("Lieferung: Hinter den Gärten 12, 04109 Leipzig bitte", "Hinter den Gärten 12"),
        ("entregar en Cuesta de Moyano 7, 28014 Madrid", "Cuesta de Moyano 7"),
        ("my flat is at 48 tanner lane, bristol", "48 tanner lane"),
        ("envoyer à Vía Augusta 9, 08006 Barcelona", "Vía Augusta 9"),
    ],
)
def test_street_lines_found(text: str, street: str) -> None:
    assert any(street in a for a in _addresses(text)), _addresses(text)


@pytest.mark.parametrize(
    "text",
    [
        "Meetup 3, 2026 Berlin is sold out",  # a year is no postcode
        "chapter 3 of the road atlas",  # function words are no street name
        "took 2 wrong turns down the road",
        "Bitte 1 Regal Hafenstraße an Am Lindenanger 4, 99084 Erfurt",  # the product stays
    ],
)
def test_street_look_alikes(text: str) -> None:
    found = " ".join(_addresses(text))
    assert "Meetup" not in found and "of the road" not in found and "turns" not in found
    assert "Hafenstraße" not in found
