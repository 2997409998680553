"""Adversarial tests for the tenth redaction round's date-of-birth forms (issue 20).

Each rule class has dates that must be found and look-alikes that must survive, written for
this file in several languages (no sentence, name or value is copied from a bench corpus):
a month name between hyphens with a two-digit year and an ordinal day with an apostrophe
year (the cheap gate let them through before), birthday words of more languages with
nothing but glue before the date, the genealogical asterisk, a birth word in parentheses
after the date, "coming into the world" in German and Dutch.
"""

from __future__ import annotations

import pytest

from flywheel.pii import shared_detector


def _found(text: str, label: str) -> list[str]:
    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == label]


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("patient DOB 7-Oct-61, allergies none", "7-Oct-61"),
        ("she was born 21st June '84 in Galway", "21st June '84"),
        ("anniversaire : 14 juillet 1979", "14 juillet 1979"),
        ("cumpleaños: 2 de febrero de 1966", "2 de febrero de 1966"),
        ("compleanno 9 settembre 1958", "9 settembre 1958"),
        ("Ida Brenner (* 4. Oktober 1951 in Linz) leitet den Chor", "4. Oktober 1951"),
        ("Jan de Wit, * 12-08-1947, oud-voorzitter", "12-08-1947"),
        ("Gustav Ek (* 1938) grundade firman", "1938"),
        ("DOB on the form: 1983-11-30 (date of birth)", "1983-11-30"),
        ("18/02/1971 (fecha de nacimiento)", "18/02/1971"),
        ("Unser Sohn ist am 2. März 2024 in Graz zur Welt gekommen", "2. März 2024"),
        ("onze dochter kwam op 5 juni 2023 ter wereld", "5 juni 2023"),
        # a birthday without its year, nothing but glue before it
        ("her birthday is on 9 November", "9 November"),
        ("Geburtstag: 17. Juli", "17. Juli"),
        ("anniversaire le 2 février", "2 février"),
        ("cumpleaños: 30 de agosto", "30 de agosto"),
        # a birthday word with more than glue before a birth word: the search goes on after it
        ("la fête d'anniversaire de Paul, né le 4 avril 1950, aura lieu samedi", "4 avril 1950"),
        ("the birthday lunch is for my uncle, who was born 2 March 1948", "2 March 1948"),
    ],
)
def test_birth_date_forms(text: str, date: str) -> None:
    assert date in _found(text, "DOB"), _found(text, "DOB")


@pytest.mark.parametrize(
    "text",
    [
        "* 2024-05-03 deployed the hotfix",  # a list item's asterisk at a line's start
        "anniversaire de mariage : 3 mai 1990",  # an anniversary, not a birthday
        "cumpleaños de la empresa el 3 de mayo de 2024 en la sede",
        "Kickoff on 3rd May '24 with the vendor",
        "Order 12/05/2024 (delivery)",
        "Das Update kam am 3. Mai 2024 in die Welt der Kunden",
        "birthday party on 14 March at the office",  # an event: more than glue before the date
        "version 2 of the birthday reminder ships 3 June",
    ],
)
def test_dates_that_are_no_birth_stay(text: str) -> None:
    assert _found(text, "DOB") == []
