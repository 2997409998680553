"""Adversarial tests for the sixth redaction round's mechanisms (issue 20): tables that cover
languages nobody wrote a rule for, and shapes that do not depend on a language.

Each mechanism has positives and look-alikes that must survive, written for this file
(no sentence, name or value is copied from a bench corpus):

- dates of birth: month names of every CLDR language (``data/month_names.txt.gz``), birth
  words of more languages, a one-letter Nordic/Finnish birth abbreviation right before a
  date, keys holding a birth stem;
- secrets: password words of more languages followed, a few words on, by the first
  password-shaped word; a key word then generated key material (``SECRET_IF_RANDOM``);
  public keys stay;
- national ids: id words read from ``python-stdnum``'s scheme names, distinctive shapes
  (Swiss AHV, Romanian CNP, Irish PPS) checked anywhere, id-word table columns;
- names: lower-case titles, honorifics of more languages, a particle after a title, the
  members of a list of people, a first name and a surname in lower case, runs before a
  place word or holding a compound organisation word stay, name-part columns;
- addresses: street words of more languages, units and town-then-postcode tails, a place
  line ending in a postcode of distinctive shape;
- phones: phone words of more languages, the longest reading across regions.
"""

from __future__ import annotations

import json

import pytest
from flywheel.promote import redact_trace
from stdnum import ean
from stdnum.ie import pps
from stdnum.ro import cnp

from flywheel.pii import credential_shaped, key_label, shared_detector
from flywheel.pii._ids import national_id_scheme, scheme_id_words
from flywheel.pii._people import _lone_first_names


def _found(text: str, label: str) -> list[str]:
    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == label]


def _redacted(field: str) -> str:
    return redact_trace([{"tool_name": "t", "output_text": field}]).steps[0].output_text or ""


# -- dates of birth ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("El soci, nascut el 4 de març de 1979, paga la quota.", "4 de març de 1979"),
        ("Pacienta, data nașterii: 12.05.1984, revine luni.", "12.05.1984"),
        ("Peserta lahir 3 Mei 1991 di Medan.", "3 Mei 1991"),
        ("Ο πελάτης γεννήθηκε στις 5 Μαρτίου 1975 στη Λάρισα.", "5 Μαρτίου 1975"),
        ("Član je rojen 14. junija 1968 v Celju.", "14. junija 1968"),
        ("Medlem: Asta Juhl (f. 03.07.1961), have 12.", "03.07.1961"),
        ("Dr Hans isch gebore am 2.4.81 z Bärn.", "2.4.81"),
        ("Jäsen s. 21.9.1977, liittynyt 2019.", "21.9.1977"),
    ],
)
def test_birth_dates_in_more_languages(text: str, date: str) -> None:
    assert date in _found(text, "DOB")


@pytest.mark.parametrize(
    "text",
    [
        "Factura del 3 de novembre del 2016, pagada.",  # a date with no birth word
        "born 12 Main 1990",  # a word where the month goes that is no month of any language
        "Release f. 12 2024 notes",  # one letter and a dot, then no date
        "Kontoen s. 14 viser 2024",  # a page reference
        "Geburtshaus-Museum: open 14.03.2026",  # a birth word inside another word
    ],
)
def test_dates_without_a_birth_context_stay(text: str) -> None:
    assert _found(text, "DOB") == []


def test_keys_holding_a_birth_stem_are_birth_dates() -> None:
    assert [key_label(k) for k in ("data_nasc", "dt_nascimento", "tgl_lahir", "fodselsdag")] == [
        "DOB"
    ] * 4
    out = redact_trace([{"tool_name": "t", "output_text": json.dumps({"dt_nasc": "1980-03-04"})}])
    assert "1980-03-04" not in out.steps[0].output_text


# -- secrets ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("la contrasenya és Pruna.Verda#12 i l'usuari", "Pruna.Verda#12"),
        ("contul nou, parola este Munte!2020Iasi si", "Munte!2020Iasi"),
        ("s Passwort für s Portal isch Bärgli1999x, merci", "Bärgli1999x"),
        ("kata sandi saya Kopi_Tubruk88 ya", "Kopi_Tubruk88"),
        ("heslo k wifi je Kolo*2024 dole", "Kolo*2024"),
    ],
)
def test_password_words_of_more_languages_then_a_password_shape(text: str, secret: str) -> None:
    assert secret in _found(text, "SECRET")


@pytest.mark.parametrize(
    "text",
    [
        "password for vpn-gw-01 changed yesterday",  # a host name in lower case
        "password policy requires 12 characters",
        "the password reset mail for ana.moura@example.org is on its way",
        "heslo vyprší 2026-12-01",  # a date
    ],
)
def test_password_words_without_a_password_stay(text: str) -> None:
    assert _found(text, "SECRET") == []


def test_key_words_take_generated_values_only() -> None:
    assert key_label("licenseKey") == key_label("subscription_key") == "SECRET_IF_RANDOM"
    assert key_label("publicKey") is None and key_label("key") is None
    assert key_label("dedup_key") is None and key_label("api_key") == "SECRET"
    assert credential_shaped("9f8e7d6c5b4a39281716a5b4c3d2e1f0")
    assert credential_shaped("QXRZ-7H2KD9WQ4M1PL0XV3BN8TY")
    assert not credential_shaped("2819c223-7f76-453a-919d-413861904646")  # a UUID: an id
    assert not credential_shaped("chk-42-20261202")
    assert not credential_shaped("Enter")
    doc = {
        "license_key": "QXRZ-7H2KD9WQ4M1PL0XV3BN8TY",
        "sort_key": "2026-01-02",
        "key": "Enter",
        "idempotency_key": "2819c223-7f76-453a-919d-413861904646",
        "routing_key": "orders.created",
    }
    out = json.loads(_redacted(json.dumps(doc)))
    assert out["license_key"].startswith("<SECRET_")
    assert {k: out[k] for k in doc if k != "license_key"} == {
        k: v for k, v in doc.items() if k != "license_key"
    }


def test_a_key_word_then_its_value_in_prose() -> None:
    text = "Fire integration_key 9f8e7d6c5b4a39281716a5b4c3d2e1f0, dedup_key chk-42-20261202"
    assert _found(text, "SECRET") == ["9f8e7d6c5b4a39281716a5b4c3d2e1f0"]
    digest = "sha256 " + "3c" * 32
    assert _found(digest, "SECRET") == []


def test_public_keys_stay_private_keys_go() -> None:
    text = (
        "[Peer]\nPublicKey = Zm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWo=\n"
        "[Interface]\nPrivateKey = cXV4QmF6Rm9vMTIzNDU2Nzg5MGFiY2RlZkdISUpLTG0=\n"
    )
    assert _found(text, "SECRET") == ["cXV4QmF6Rm9vMTIzNDU2Nzg5MGFiY2RlZkdISUpLTG0="]


# -- national ids ---------------------------------------------------------------------------


def test_id_words_come_from_the_schemes() -> None:
    words = scheme_id_words()
    assert {"pps", "cnp", "amka", "oib", "kennitala"} <= words
    assert not {"pin", "codice", "number", "lithuanian"} & words  # everyday words alone


def _cnp() -> str:
    body = "185030412345"  # a man born 1985-03-04, county 12, serial 345
    return body + cnp.calc_check_digit(body)


def _pps_letter(digits: str) -> str:
    """The PPS check letter (weights 8..2, modulo 23)."""
    return "WABCDEFGHIJKLMNOPQRSTUV"[sum(int(d) * (8 - i) for i, d in enumerate(digits)) % 23]


def _pps() -> str:
    value = "8271634" + _pps_letter("8271634")
    assert pps.is_valid(value)
    return value


def _ahv() -> str:
    body = "756" + "301298446"
    return f"{body[:3]}.{body[3:7]}.{body[7:11]}.{body[11:]}{ean.calc_check_digit(body)}"


def test_distinctive_ids_anywhere() -> None:
    for value in (_cnp(), _pps(), _ahv()):
        assert _found(f"ref: {value} (see file)", "NATIONAL_ID") == [value], value


def test_id_shapes_that_fail_their_check_stay() -> None:
    barcode = "4006381333931"  # a valid EAN-13 whose "date" (00-63-81) is none
    assert ean.is_valid(barcode)
    wrong = "8271634" + ("A" if _pps_letter("8271634") != "A" else "B")
    for text in (f"EAN {barcode} in stock", f"order {wrong} shipped"):
        assert _found(text, "NATIONAL_ID") == [], text


def test_czech_and_slovak_birth_numbers_of_ten_digits_after_an_id_word() -> None:
    body = next(f"850612{n:04d}" for n in range(10000) if int(f"850612{n:04d}") % 11 == 0)
    value = f"{body[:6]}/{body[6:]}"
    assert _found(f"rodné číslo {value}, pojišťovna 111", "NATIONAL_ID") == [value]
    assert national_id_scheme("850612100") is None  # nine digits: a date, no check
    assert _found("rodné číslo 850612100, pojišťovna 111", "NATIONAL_ID") == []
    assert _found(f"objednávka {value} odeslána", "NATIONAL_ID") == []  # no id word


def test_a_table_column_named_by_an_id_word() -> None:
    assert key_label("CNP") == key_label("PPS") == "CHECKED_ID"
    assert key_label("uid") is None
    table = f"nume;CNP;oras\nIonescu;{_cnp()};Iasi\nPopa;1234;Arad\n"
    out = _redacted(table)
    assert _cnp() not in out and "1234" in out


# -- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("spoke with mr Oyelaran-Whitby about the roof", "Oyelaran-Whitby"),
        ("domnul Vasilescu a sunat azi", "Vasilescu"),
        ("ho ha confirmat la senyora Puigdollers", "Puigdollers"),
        ("tolong hubungi pak Hartono besok", "Hartono"),
        ("the tenant is Mrs Ní Mhurchú since May", "Ní Mhurchú"),
        ("Ich rief Herrn von Weizenbeck an", "von Weizenbeck"),
        ("hey its anjali venkataraman here, quick question", "anjali venkataraman"),
    ],
)
def test_titles_honorifics_and_lower_case(text: str, name: str) -> None:
    assert name in _found(text, "NAME")


def test_a_slug_in_the_same_text_keeps_the_lower_case_names() -> None:
    """A handle or slug anywhere in a text once replaced the lower-case names found before it."""
    for tail in ("", ", see docs.example_page", "; logs in build-cache"):
        text = "hey its anjali venkataraman here" + tail
        assert "anjali venkataraman" in _found(text, "NAME"), text


def test_members_of_a_list_of_people() -> None:
    text = "Attendees: Maeve Lorcan (chair), Tobias Wren, Will Baker and Rafe Morrow, all in."
    found = _found(text, "NAME")
    assert {"Maeve Lorcan", "Tobias Wren", "Will Baker", "Rafe Morrow"} <= set(found)


@pytest.mark.parametrize(
    "text",
    [
        "Stops: New York, Long Beach and Los Angeles this week.",  # no member is a name
        "we stayed at Austin Hollow Park for two nights",  # a run before a place word
        "the trophy goes to Willow Creek Stables again",
        "enrolled at Lindholm Idrætsskole from August",  # a compound school word
        "la cliente de la Panadería del Sol pidió pan",  # a particle after a role: a place
        "transfer to Spitalul Județean for tests",  # an inflected hospital word
        "the nginx ingress controller restarted",  # lower-case words, no first name
        "run apt install imagemagick first",
    ],
)
def test_places_bodies_and_lower_case_prose_stay(text: str) -> None:
    assert _found(text, "NAME") == []


def test_a_listed_first_name_alone_inside_a_sentence() -> None:
    assert _found("the form was signed, then Thandiwe posted it", "NAME") == ["Thandiwe"]
    for text in (
        "we shipped it via Hermes to Berlin",  # in a word list
        "Bestellung an Lindner Maschinenbau GmbH, bitte",  # a capitalised word beside it
    ):
        assert _found(text, "NAME") == [], text
    # after a capitalised word the lone rule says nothing (runs are judged as runs)
    assert _lone_first_names("entered Lord Aigerim and Master Nkechi") == []


def test_speaker_labels_of_a_transcript() -> None:
    chat = "Anja: can you check the van?\nTomasz: sure, on it\n[10:02] Inés Barroso: ok"
    assert set(_found(chat, "NAME")) >= {"Anja", "Tomasz", "Inés Barroso"}
    assert _found("Grace: hi\nOwen: hello", "NAME") == ["Grace", "Owen"]
    for text in (
        "Status: ok\nTotal: 12\nError: timeout\nNote: none",
        "Kubernetes: 1.29\nPostgres: 16",  # in no word list, and no first name
        "Grace: period of 30 days",  # one label: a first name that is a word stays
        "Release Notes: v2\nFinal Answer: 42",
    ):
        assert _found(text, "NAME") == [], text


def test_name_part_columns() -> None:
    for key in ("first", "NUME Prenume", "emergency_contact"):
        assert key_label(key) == "AUTO", key
    assert key_label("customer_id") is None
    doc = {"first": 10, "last": "2026-01-02", "fornavn": "Sølvi"}
    doc["emergency_contact"] = "Odalys Brennick"
    out = json.loads(_redacted(json.dumps(doc)))
    assert out["first"] == 10 and out["last"] == "2026-01-02"
    assert out["fornavn"].startswith("<NAME_") and out["emergency_contact"].startswith("<NAME_")


# -- addresses ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "address"),
    [
        (
            "Envieu-ho a Carrer de la Rosa, 14, 3r 2a, 08001 Barcelona. Gràcies",
            "Carrer de la Rosa, 14, 3r 2a, 08001 Barcelona",
        ),
        (
            "Adresa: Str. Florilor nr. 8, bl. A2, ap. 5, Cluj-Napoca 400001.",
            "Str. Florilor nr. 8, bl. A2, ap. 5, Cluj-Napoca 400001",
        ),
        ("Kirim ke Jl. Merdeka No. 12, Bandung", "Jl. Merdeka No. 12"),
        ("Adrese: Lāčplēša iela 5, Rīgā", "Lāčplēša iela 5"),
        ("Flytter til Storgata 12 H0304, 0155 Oslo i mai", "Storgata 12 H0304, 0155 Oslo"),
        (
            "We live at Drumkeeran, Ballinamore, Co. Leitrim N41 F2X9 now",
            "Drumkeeran, Ballinamore, Co. Leitrim N41 F2X9",
        ),
    ],
)
def test_addresses_in_more_languages(text: str, address: str) -> None:
    assert address in _found(text, "ADDRESS")


@pytest.mark.parametrize(
    "text",
    ["Gang 2 starts at 9", "Build 12-345 shipped", "Diagonal 3 of the grid"],
)
def test_street_words_that_are_ordinary_words_stay(text: str) -> None:
    assert _found(text, "ADDRESS") == []


# -- phones ---------------------------------------------------------------------------------


def test_phone_words_of_more_languages() -> None:
    assert _found("Ring ham på mobil 412 55 678 i kveld", "PHONE") == ["412 55 678"]
    assert _found("puh. 040 123 4567", "PHONE") == ["040 123 4567"]
    assert _found("Lot 412 55 678 shipped", "PHONE") == []  # no phone word


def test_the_longest_reading_across_regions() -> None:
    assert _found("Handy 0171 2345678", "PHONE") == ["0171 2345678"]
