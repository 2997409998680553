"""Adversarial tests for the seventh redaction round's date and number mechanisms (issue 20).

Each mechanism has values that must be found and look-alikes that must survive, written
for this file (no sentence, name or value is copied from a bench corpus):

- dates of birth: compact dates (``19910415``), a month name between hyphens
  (``07-Jun-1948``), month names with a case ending (Estonian, Basque, Hungarian), numbers
  with a case ending, the Vietnamese ``tháng`` form, a year a few words after a birth verb,
  an inflected birth word after a year, the birth column of a list written as text;
- one birth date written in two numeric forms in a trace gets one pseudonym;
- phones: a number before a colon (a chat log's sender), digits grouped in fours are no
  phone (cards that fail their check, meters, loyalty cards), a number ending in a date
  (a date range), an organisation's number after its scheme's name (``python-stdnum``);
- e-mail: a message id in angle brackets is no mailbox.
"""

from __future__ import annotations

import pytest
from flywheel.promote import redact_trace
from flywheel.promote._pseudonyms import date_forms
from stdnum import luhn
from stdnum.pl import nip
from stdnum.se import orgnr

from flywheel.pii import shared_detector


def _found(text: str, label: str) -> list[str]:
    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == label]


# -- dates of birth ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("Patient record: DOB 19910415, allergies none.", "19910415"),
        ("geb. 15041991 laut Ausweis", "15041991"),
        ("resident (DOB 07-Jun-1948) asked for a ramp", "07-Jun-1948"),
        ("born 11/Nov/1972 in Cork", "11/Nov/1972"),
        ("Liige sündinud 3. märtsil 1981, Tartu.", "3. märtsil 1981"),
        ("Ikaslea 2001eko martxoaren 4an jaio zen.", "2001eko martxoaren 4an"),
        ("A nagymama 1949. május 30-án született Pécsen.", "1949. május 30-án"),
        ("Ông ấy sinh ngày 2 tháng 11 năm 1960 tại Huế.", "2 tháng 11 năm 1960"),
        ("Our founder was born in Bristol in 1931.", "1931"),
        ("Hy is in Durban gebore in 1984.", "1984"),
        ("Merhaba, 1985 doğumluyum ve öğrenciyim.", "1985"),
    ],
)
def test_birth_dates_in_more_forms(text: str, date: str) -> None:
    assert date in _found(text, "DOB")


@pytest.mark.parametrize(
    "text",
    [
        "Build 20260412 shipped; invoice 15041991 paid.",  # compact dates with no birth word
        "Release on 07-Jun-2026 at the plant.",
        "A gyár 1998. május 30-án nyitott.",  # a factory opened: no birth word
        "Born in the USA tour: moved to Leeds in 1990 and stayed.",  # the year is 4+ words on
        "Our birthday sale in 2026 starts Monday.",
        "born in Leeds, then moved to a farm near York in 1990",
    ],
)
def test_dates_without_a_birth_stay(text: str) -> None:
    assert _found(text, "DOB") == []


def test_birth_column_of_a_list() -> None:
    text = (
        "Kids (name, date of birth, guardian):\n"
        "Ava Lind, 02.03.2015, Mira Lind\n"
        "Leo Berg, 2014-11-30, Jon Berg\n"
        "\n"
        "Tournament 14.-16.3.2027, hall B"
    )
    assert _found(text, "DOB") == ["02.03.2015", "2014-11-30"]
    table = "| child | DOB | room |\n|---|---|---|\n| Ava | 5 May 2016 | 2 |\n| Leo | n/a | 3 |"
    assert _found(table, "DOB") == ["5 May 2016"]


def test_list_without_a_birth_column_keeps_its_dates() -> None:
    text = "Events (name, date, hall):\nGala, 02.03.2027, A\nFair, 2027-04-30, B"
    assert _found(text, "DOB") == []


def test_one_birth_date_in_two_numeric_forms_is_one_pseudonym() -> None:
    steps = [
        {"tool_name": "notes", "output_text": "child's dob 5/6/2012, prefers mornings"},
        {"tool_name": "sheet", "output_text": '[["Row 7", "junior", "2012-06-05"]]'},
    ]
    out = redact_trace(steps).steps
    assert "2012-06-05" not in (out[1].output_text or "")
    assert "<DOB_1>" in (out[0].output_text or "") and "<DOB_1>" in (out[1].output_text or "")


def test_date_forms_keep_to_the_readings() -> None:
    assert "2012-06-05" in date_forms("5/6/2012") and "2012-05-06" in date_forms("5/6/2012")
    assert date_forms("25.12.1990")[0] == "1990-12-25"
    assert "1990-25-12" not in date_forms("25.12.1990")  # no month 25
    assert date_forms("12 May 1990") == [] and date_forms("2026-13-40") == []


# -- phones -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "phone"),
    [
        ("[14:02] +48 512 334 918: hi, is the room free?", "+48 512 334 918"),
        ("[14:05] 0 (312) 447 20 91: yes", "0 (312) 447 20 91"),
        ("call 0161 496 0732: ask for the desk", "0161 496 0732"),
    ],
)
def test_phone_before_a_colon(text: str, phone: str) -> None:
    assert phone in _found(text, "PHONE")


@pytest.mark.parametrize(
    "text",
    [
        "Meter 5521 0934 7718 on the north wall.",
        "Loyalty card 3081 2297 4410 5 expired.",
        "Test card 4242 4242 4242 4241 fails its check.",
        "Library card 6620 1184 3391 0472 renewed.",
        "Cup played 21.-23.4.2027 in the old hall.",
        "Room booked 3-5/6/2027 for the group.",
        "at 10:30 the job ran",
    ],
)
def test_number_layouts_that_are_no_phone(text: str) -> None:
    assert _found(text, "PHONE") == []


def test_card_with_its_check_is_still_a_card() -> None:
    body = "979212345678901"
    text = f"paid with 9792 1234 5678 901{luhn.calc_check_digit(body)} today"
    assert _found(text, "CARD") == [f"9792 1234 5678 901{luhn.calc_check_digit(body)}"]


def test_organisation_number_after_its_scheme_name_is_no_phone() -> None:
    number = next(nip.format(f"123456321{d}") for d in range(10) if nip.is_valid(f"123456321{d}"))
    assert _found(f"NIP firmy {number}, dziękujemy.", "PHONE") == []
    assert _found(f"kontakt {number}", "PHONE") == [number]  # no scheme name: a phone
    bad = number[:-1] + str((int(number[-1]) + 1) % 10)
    assert _found(f"NIP firmy {bad}", "PHONE") == [bad]  # the check fails: not that number
    org = orgnr.format("5560360793")
    assert _found(f"Orgnr {org}, ring 070-123 45 67", "PHONE") == ["070-123 45 67"]


# -- e-mail -----------------------------------------------------------------------------


def test_message_id_is_no_mailbox() -> None:
    assert _found('{"id": "<20270101.5512@mx.court.example>"}', "EMAIL") == []
    assert _found("Message-ID: <CAJx9Lq2w@mail.example.com>", "EMAIL") == []
    assert _found("From: Ola <ola.berg@example.org>", "EMAIL") == ["ola.berg@example.org"]
    assert _found("MAIL FROM:<88213377@qq.example>", "EMAIL") == ["88213377@qq.example"]
