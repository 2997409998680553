"""Adversarial tests for the tenth redaction round's field names (issue 20).

HTML's autofill field names (WHATWG), numbered address lines, one-time and recovery codes,
security answers; a field written as a name/value pair takes its name's label. Keys and
values are written for this file (none is copied from a bench corpus).
"""

from __future__ import annotations

import json

import pytest
from flywheel.promote import Redactor

from flywheel.pii import key_label


@pytest.mark.parametrize(
    ("key", "label"),
    [
        # HTML's autofill field names (WHATWG) and their numbered address lines
        ("one-time-code", "SECRET"),
        ("cc-csc", "SECRET"),
        ("cc-name", "NAME"),
        ("bday-year", "DOB"),
        ("address-line3", "ADDRESS"),
        ("address1", "ADDRESS"),
        ("Strasse2", "ADDRESS"),
        ("Straße und Hausnummer", "ADDRESS"),
        ("ssh_passphrase", "SECRET"),
        ("recovery_codes", "SECRET"),
        ("securityAnswer", "SECRET"),
        ("ddn", "DOB"),
        # an address's parts as field names, in several languages
        ("house_number", "ADDRESS"),
        ("nom_rue", "ADDRESS"),
        ("adresse_ligne1", "ADDRESS"),
        ("indirizzo_residenza", "ADDRESS"),
        ("calle_numero", "ADDRESS"),
        ("huisnummer", "ADDRESS"),
        # network, hardware and ledger addresses are no postal ones
        ("mac_address", None),
        ("bind_address", None),
        ("wallet_address", None),
        ("address_type", None),
        ("total2", None),
        ("email_count", None),
    ],
)
def test_form_field_keys(key: str, label: str | None) -> None:
    assert key_label(key) == label


def test_fields_written_as_name_value_pairs() -> None:
    doc = {
        "fields": [
            {"label": "Date of birth", "value": "1977-04-09"},
            {"name": "Anschrift", "value": "Lindenhof 4"},
            {"field": "mot_de_passe", "value": "Ours-brun-31"},
            {"key": "cvv", "value": "482"},
            {"label": "Name", "value": "Standard plan"},  # a thing's name stays
            {"label": "Quantity", "value": "1977"},
        ]
    }
    out, _ = Redactor().redact_document(doc)
    text = json.dumps(out, ensure_ascii=False)
    for value in ("1977-04-09", "Lindenhof 4", "Ours-brun-31", '"482"'):
        assert value not in text, text
    assert "Standard plan" in text and '"1977"' in text
