"""Adversarial prose for the name, address and birth-date rules (issue 20).

Names here are in no first-name list and often alone after a role word; the
sentences are written for this file in seven languages (none is copied from a
bench corpus), and every case comes with look-alikes that must survive.
Encoded forms (base64, percent-encoding, JSON in a string) go through the
whole redactor.
"""

from __future__ import annotations

import base64
import json
import urllib.parse

import pytest

from flywheel.pii import scan_document, shared_detector
from flywheel.promote import redact_trace


def _found(text: str, label: str) -> list[str]:
    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == label]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Please loop in the adjuster, Ngata-Whitlock, before Friday.", "Ngata-Whitlock"),
        ("Can you ask Umeadi whether the crate shipped?", "Umeadi"),
        ("Our tenant Przybylska reported a leak.", "Przybylska"),
        ("The invoice went to Zoltanne Kirikmaa last week.", "Zoltanne Kirikmaa"),
        ("Mein Nachbar Oberhäuser hat das Paket angenommen.", "Oberhäuser"),
        ("Le chauffeur, Ndiayé-Rouquette, a signé le bon.", "Ndiayé-Rouquette"),
        ("La vecina Urkiaga dejó las llaves en portería.", "Urkiaga"),
        ("Il tecnico Sbarbaro arriva domani alle nove.", "Sbarbaro"),
        ("De verhuurder Hoogeveen-Baart belt morgen terug.", "Hoogeveen-Baart"),
        ("A vizinha Quintanilha recebeu a encomenda.", "Quintanilha"),
        ("Goedemorgen, ik ben Maartje van den Oudenrijn, klant sinds 2019.", "Maartje van den Oudenrijn"),
    ],
)
def test_names_in_prose_without_a_list_entry(text: str, name: str) -> None:
    assert name in _found(text, "NAME")


@pytest.mark.parametrize(
    "text",
    [
        "The Portrait of a Young Woman hangs beside Golden Age Revisited.",
        "Bitte an Müller Präzisionsteile GmbH liefern, Tor 3.",
        "She teaches at Lincoln Park Elementary near the Greenway Trail.",
        "Deploy Orion to the Mobile Platform cluster on Monday.",
        "Ansprechpartner Wareneingang, Lieferung Freitag.",
    ],
)
def test_capitalised_words_that_are_no_names_survive(text: str) -> None:
    assert _found(text, "NAME") == []


@pytest.mark.parametrize(
    ("text", "dob"),
    [
        ("Sie ist am 9. Oktober 1983 in Kiel geboren.", "9. Oktober 1983"),
        ("He was born on the 21st of March, 1970, in Cork.", "21st of March, 1970"),
        ("Nací el 02/05/1990 en Bilbao.", "02/05/1990"),
        ("Elle est née le 14 juillet 1961.", "14 juillet 1961"),
        ("Nasci em 3 de abril de 1979.", "3 de abril de 1979"),
    ],
)
def test_birth_dates_with_the_birth_word_before_or_after(text: str, dob: str) -> None:
    assert dob in _found(text, "DOB")


def test_dates_without_a_birth_word_are_not_birth_dates() -> None:
    assert _found("Delivered on 9. Oktober 1983 at the Kiel depot.", "DOB") == []


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("Send it to Unit 7, 41 Saddler Row, Derby DE1 3NP please.", "Unit 7, 41 Saddler Row, Derby DE1 3NP"),
        ("Lieferung an Holzbau Wendt GmbH, Sägewerkstraße 12, 24937 Flensburg.", "Holzbau Wendt GmbH, Sägewerkstraße 12, 24937 Flensburg"),
        ("Vivo en Calle de los Tintoreros 5, 41003 Sevilla.", "Calle de los Tintoreros 5, 41003 Sevilla"),
    ],
)
def test_address_lines_before_the_street_are_part_of_the_address(text: str, address: str) -> None:
    assert address in _found(text, "ADDRESS")


def test_a_product_named_like_a_square_is_no_address() -> None:
    assert _found("La lámpara Plaza Mayor pasa a 39,90 € desde hoy.", "ADDRESS") == []


@pytest.mark.parametrize(
    "text",
    [
        "Artikel 4711-0815 ist ausverkauft.",
        "Rechnung RE 2024/8812 und Verfahren 1184/2025.",
        "Shipment BOL 6620-4471 arrived.",
    ],
)
def test_short_references_are_no_phone_numbers(text: str) -> None:
    assert _found(text, "PHONE") == []


def test_short_numbers_after_a_phone_word_still_are() -> None:
    assert _found("Tel. 4711-0815 (Pforte), Fax 0761/2938470", "PHONE") == ["4711-0815", "0761/2938470"]


def test_an_email_in_a_path_segment_is_found() -> None:
    assert _found("snapshots/tui.mahe@atoll-post.pf/v3", "EMAIL") == ["tui.mahe@atoll-post.pf"]


def test_a_password_with_a_hash_in_a_url_is_redacted_and_the_host_kept() -> None:
    url = "redis://worker:Lagune#7Kx@cache-2.internal:6379/0"
    out = redact_trace([{"tool_name": "cfg", "output_text": url}]).steps[0].output_text
    assert "Lagune" not in out and "7Kx" not in out
    assert "cache-2.internal:6379" in out
    assert any(f.entity == "SECRET" for f in scan_document({"v": url}))


def test_a_digitalocean_token_is_a_secret() -> None:
    tok = "dop_v1_" + "3e9a" * 16
    assert _found(f"doctl auth init -t {tok}", "SECRET") == [tok]


@pytest.mark.parametrize("encode", ["base64", "percent", "json"])
def test_prose_names_and_birth_dates_inside_encoded_strings(encode: str) -> None:
    letter = "Dear team, the courier Abiodun-Falk delivered it. Signed, Eskild Thorvaldsen, born 4 May 1981."
    if encode == "base64":
        field = json.dumps({"attachment": base64.b64encode(letter.encode()).decode()})
    elif encode == "percent":
        field = "https://forms.example/submit?note=" + urllib.parse.quote(letter, safe="")
    else:
        field = json.dumps({"payload": json.dumps({"text": letter})})
    out = redact_trace([{"tool_name": "t", "output_text": field}]).steps[0].output_text
    decoded = out
    if encode == "base64":
        decoded = base64.b64decode(json.loads(out)["attachment"]).decode()
    elif encode == "percent":
        decoded = urllib.parse.unquote(out)
    for value in ("Abiodun", "Falk", "Eskild", "Thorvaldsen", "4 May 1981"):
        assert value not in decoded, (encode, value, decoded)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Approved by R. Adeyemi-Cole, finance.", "R. Adeyemi-Cole"),
        ("Signed A. K. Oyinlola", "A. K. Oyinlola"),
        ("Dear Dr. P. Walker, thank you.", "P. Walker"),
    ],
)
def test_initials_before_a_surname(text: str, name: str) -> None:
    assert any(name in n for n in _found(text, "NAME"))


def test_initials_of_an_acronym_are_no_name() -> None:
    assert _found("See the U.S. Army rules and Plan B. Details follow.", "NAME") == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Nata a Trieste il 14/02/1979, residente altrove.", ("DOB", "14/02/1979")),
        ("fecha de nac.: 09/10/1968", ("DOB", "09/10/1968")),
        ("nacida el 2 de junio del 1983", ("DOB", "2 de junio del 1983")),
        ("Mail it to 901 Hollins Ave SE, Roanoke, VA 24013.", ("ADDRESS", "901 Hollins Ave SE, Roanoke, VA 24013")),
        ("Apt 5, 212 W 48th St, New York, NY 10036", ("ADDRESS", "Apt 5, 212 W 48th St, New York, NY 10036")),
        ("abito in via Cesare Battisti 8, Trento", ("ADDRESS", "via Cesare Battisti 8")),
        ("Avenida de la Constitución, n.º 12, 41004 Sevilla", ("ADDRESS", "Avenida de la Constitución, n.º 12, 41004 Sevilla")),
        ("Send the cheque to PO Box 7719, Duluth MN", ("ADDRESS", "PO Box 7719")),
    ],
)
def test_more_birth_date_and_address_forms(text: str, found: tuple[str, str]) -> None:
    label, value = found
    assert any(value in v for v in _found(text, label)), _found(text, label)


@pytest.mark.parametrize(
    "text",
    ["The birthday party is planned for 12/05/2024.", "Club. 12.05.2020 results", "sent via Email 2 times"],
)
def test_look_alikes_of_birth_dates_and_addresses(text: str) -> None:
    assert _found(text, "DOB") == [] and _found(text, "ADDRESS") == []
