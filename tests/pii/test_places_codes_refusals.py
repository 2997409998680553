"""Adversarial tests for the eighth redaction round (issue 20): over-redaction and refusals.

Each mechanism has look-alikes that must survive and the personal values next to them
that must still go, written for this file (no sentence, name or value is copied from a
bench corpus):

- a place or body whose head word comes first ("Sala ...", "Parroquia ...", "Quán ...")
  or is a saint ("San ...", "Agios ...", "Naomh ..."), a head word last in more languages
  ("... Kollégium", "... Elkartea"), more legal forms ("... Ltda", "... AB" in capitals);
- a code token right before a number (an acronym, capitals and digits) and a company's
  registration number: no phone;
- a letter glued to digits is no initial;
- a payment provider's public object id under a token key; a device's serial number
  inside a person's record;
- a URL path with a provider's object id is no random token;
- the release scanner does not refuse what redaction wrote ("Bearer <SECRET_1>") nor a
  word before a pseudonym that redaction judged before a number;
- misses of general forms: a phone number's other written forms in the same trace, keys
  with a birth word or a qualified credential word, a lock-box code a few words after the
  guard, key material as the user of a URL, a name run that ran into the next value's
  label ("... RUT 12.345.678-5");
- cards: a number in a card's layout where a payment card is named is a card whatever its
  check digit; the same layout with no payment card named stays.
"""

from __future__ import annotations

import pytest

from flywheel.pii import organisation_like, scan_document, shared_detector, thing_key
from flywheel.promote import redact_trace


def _found(text: str, label: str = "NAME") -> list[str]:
    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == label]


def _redact(**fields: str) -> dict[str, str]:
    step = redact_trace([{"tool_name": "t", **fields}]).steps[0]
    return {k: getattr(step, k) for k in fields}


# -- places and bodies ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, kept",
    [
        ("The rehearsal moved to Sala Orquídea on the second floor.", "Sala Orquídea"),
        ("Collection point: Parroquia Santa Teresita, after mass.", "Parroquia Santa Teresita"),
        ("We met at Quán Cơm Bà Tư near the market.", "Quán Cơm Bà Tư"),
        ("The ferry leaves from Agios Kirykos at nine.", "Agios Kirykos"),
        ("Our boat Naomh Pádraig needs new oars.", "Naomh Pádraig"),
        ("Tickets for San Ildefonso are sold out.", "San Ildefonso"),
        ("Hotel transfer to Lokalitet Sandvika is booked.", "Lokalitet Sandvika"),
        ("A Bethlen Kollégium kérvénye elfogadva.", "Bethlen Kollégium"),
        ("Bazkideak: Zubieta Kirol Elkartea, 40 lagun.", "Zubieta Kirol Elkartea"),
        ("Order shipped by Aras Kargo today.", "Aras Kargo"),
        ("Paid to Padaria Boa Esperança Ltda for bread.", "Padaria Boa Esperança Ltda"),
        ("Faktura från NORRA TRÄHUS AB betald.", "NORRA TRÄHUS AB"),
        ("die Stellenbosch Gimnasium-wedstryd begin om drie.", "Stellenbosch Gimnasium"),
    ],
)
def test_places_and_bodies_survive(text: str, kept: str) -> None:
    assert _redact(output_text=text)["output_text"].count(kept) == 1


@pytest.mark.parametrize(
    "text, name",
    [
        ("Please ask Sala Ferreira to sign.", "Ferreira"),  # a surname after a cue
        ("Paulina Sala Ferrer will collect the keys.", "Paulina Sala Ferrer"),
        ("Dear Santiago Ibarrola, your booking is confirmed.", "Santiago Ibarrola"),
        ("la señora Santa Cruz llamó ayer.", "Santa Cruz"),  # a surname after a title
        ("Regards,\nINGRID BERGKVIST", "INGRID BERGKVIST"),
    ],
)
def test_names_beside_place_words_still_go(text: str, name: str) -> None:
    assert name not in _redact(output_text=text)["output_text"]


def test_organisation_under_a_name_key() -> None:
    assert organisation_like("Zahnarztpraxis Lindenhof")  # a practice, a compound head
    assert organisation_like("Sala Boreal")
    assert not organisation_like("Greta Lindqvist")
    out = _redact(result='{"name": "Physiopraxis Sonnenhang", "frei": true}')["result"]
    assert "Physiopraxis Sonnenhang" in out
    assert "Greta Lindqvist" not in _redact(result='{"name": "Greta Lindqvist"}')["result"]


# -- numbers that are codes ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "provider NPI 1679576722 on file",
        "my exam cert is QXT 0812 5521 and",
        "sample number K4471 31 220918 B.",
        "Company No. 07340912",
        "Registration number 4471 2290 13",
    ],
)
def test_code_before_a_number_is_no_phone(text: str) -> None:
    assert _found(text, "PHONE") == []


@pytest.mark.parametrize(
    "text, phone",
    [
        ("CALL ME ON 07700 900461 PLEASE", "07700 900461"),
        ("TEL 0161 496 0721", "0161 496 0721"),
        ("Mob: 07700 900 388", "07700 900 388"),
        ("UK 07700 900514", "07700 900514"),
        ("ring Lucía 612 345 907 after six", "612 345 907"),
    ],
)
def test_phones_after_phone_words_and_common_words_stay_found(text: str, phone: str) -> None:
    assert phone in _found(text, "PHONE")


def test_letter_glued_to_digits_is_no_initial() -> None:
    text = "tiene el DNI 52814706K. Ensayos los martes."
    assert _found(text) == []
    assert "52814706K" not in _redact(output_text=text)["output_text"]
    assert _found("Signed by K. Adebayo yesterday") == ["K. Adebayo"]


# -- keys ------------------------------------------------------------------------------


def test_public_object_id_under_a_token_key() -> None:
    out = _redact(result='{"token": "tok_1RbT7vHq2MxN9kLp"}')["result"]
    assert "tok_1RbT7vHq2MxN9kLp" in out
    for secret in ("in_Winter2025", "pi_3Rb8x2eZvKYlo2C0_secret_Q7mVx2kLp9", "ghp_" + "a1B2" * 9):
        assert secret not in _redact(result=f'{{"token": "{secret}"}}')["result"]


def test_serial_number_in_a_person_record() -> None:
    assert thing_key("serial_no") and thing_key("Seriennummer") and not thing_key("account")
    doc = (
        '{"customer": {"name": "Tobias Wendler", "phone": "0911 4471 203", '
        '"boiler": {"model": "Ecotherm 24", "serial_no": "8841029937716502"}, '
        '"account": "55019934271608"}}'
    )
    out = _redact(result=doc)["result"]
    assert "8841029937716502" in out and "55019934271608" not in out  # serial stays, account goes
    assert "Tobias Wendler" not in out and "0911 4471 203" not in out


def test_url_path_with_an_object_id_is_no_token() -> None:
    url = "https://api.payments.example/v2/payments/tr_Xk7Qm2vLp9/refunds"
    assert _found(url, "SECRET") == []
    # a generated token in a path still is one
    assert _found("https://hooks.example/v1/keys/aB3dE5fG7hJ9kL1mN3pQ5rS7xY", "SECRET")


# -- the release scanner and what redaction wrote -------------------------------------------


def test_scanner_does_not_refuse_a_redacted_authorization() -> None:
    assert scan_document({"input": "GET /a HTTP/2\nAuthorization: Bearer <SECRET_1>\n"}) == []
    assert scan_document({"headers": {"Authorization": "Bearer <SECRET_2>"}}) == []
    found = scan_document({"headers": {"Authorization": "Bearer abc123DEF456ghi789"}})
    assert [f.entity for f in found] == ["SECRET"]
    raw = scan_document({"input": "GET /a HTTP/2\nAuthorization: Bearer abc123DEF456ghi789\n"})
    assert "SECRET" in {f.entity for f in raw}


def test_scanner_judges_a_word_before_a_pseudonym_as_before_a_number() -> None:
    assert scan_document({"input": "Pagad con mi Visa <CARD_1>, caduca pronto."}) == []
    assert scan_document({"input": "Pagad con mi Visa 4111 1111 1111 1111, caduca pronto."})

# -- misses: general forms -------------------------------------------------------------


def test_phone_written_twice_in_other_forms_shares_the_redaction() -> None:
    from flywheel.promote import redact_trace as _rt

    steps = [
        {"tool_name": "t", "input_text": "Port my line +34 611 72 90 48 to you, please."},
        {"tool_name": "port", "arguments": '{"line": "611729048", "e164": "34611729048"}'},
    ]
    out = _rt(steps).steps
    assert "611729048" not in (out[1].arguments or "") and "34611729048" not in (out[1].arguments or "")
    # an unrelated number with other digits stays
    steps[1]["arguments"] = '{"line": "611729048", "order": "611729049"}'
    assert "611729049" in (_rt(steps).steps[1].arguments or "")


@pytest.mark.parametrize(
    "key, value",
    [("nato_il", "14/03/1981"), ("born_on", "1981-03-14"), ("password_temporal", "Limon-5521-Marte"),
     ("pin_initial", "4471")],
)
def test_qualified_birth_and_credential_keys(key: str, value: str) -> None:
    assert value not in _redact(result=f'{{"{key}": "{value}"}}')["result"]


@pytest.mark.parametrize(
    "key, value",
    [("nato_il", "Roma"), ("password_policy", "min 12 chars"), ("password_expires", "2026-01-01"),
     ("token_type", "Bearer")],
)
def test_keys_about_a_birth_or_credential_keep_their_facts(key: str, value: str) -> None:
    assert value in _redact(result=f'{{"{key}": "{value}"}}')["result"]


def test_lockbox_code_a_few_words_after_the_guard() -> None:
    text = "The key is in the lockbox by the side gate, code 5831. See you!"
    assert "5831" not in _redact(output_text=text)["output_text"]
    kept = "The door code is 5831 for couriers."  # a door code is handed out with the address
    assert "5831" in _redact(output_text=kept)["output_text"]


def test_key_as_the_user_of_a_url() -> None:
    dsn = "DSN=https://9c2e4b7a1f3d4e6a8b0c2d4e6f8a0b1c@o11873.ingest.example.io/42"
    assert "9c2e4b7a1f3d4e6a8b0c2d4e6f8a0b1c" not in _redact(output_text=dsn)["output_text"]
    kept = "clone ssh://deploy-bot@git.example.org/repo and https://status.example.org/v2"
    assert _redact(output_text=kept)["output_text"] == kept


def test_name_run_stops_at_the_label_of_the_next_value() -> None:
    text = "2. payer Rosario Ibáñez Quiroga RUT 12.345.678-5 -> payee Tomás Echeverría CPF 529.982.247-25"
    out = _redact(output_text=text)["output_text"]
    assert "Ibáñez" not in out and "Echeverría" not in out
    assert "Orbea Orca M30" in _redact(output_text="The Orbea Orca M30 is back in stock.")["output_text"]


# -- cards: a mistyped number where a payment card is named --------------------------------


@pytest.mark.parametrize(
    "text, number",
    [
        ("please charge my card 4539 1488 0343 6468 today", "4539 1488 0343 6468"),
        ("con mi tarjeta de crédito 5500 0000 0000 0005.", "5500 0000 0000 0005"),
        ("paid with Amex 3714 496353 98432 yesterday", "3714 496353 98432"),
        ("meine Kreditkarte: 4012888888881882", "4012888888881882"),
    ],
)
def test_card_numbers_where_a_payment_card_is_named_go_whatever_their_check_digit(
    text: str, number: str
) -> None:
    assert number not in _redact(output_text=text)["output_text"]


@pytest.mark.parametrize(
    "text, number",
    [
        ("Test card 4111 1111 1111 1112 was declined in staging.", "4111 1111 1111 1112"),
        ("loyalty number 6034 1187 2290 4413 on the receipt", "6034 1187 2290 4413"),
        ("SIM ICCID 8934 0712 3456 7890 12 activated", "8934 0712 3456 7890 12"),
        ("boiler serial 7571 2345 0012 3457, card reader fitted", "7571 2345 0012 3457"),
    ],
)
def test_card_layout_without_a_payment_card_named_stays(text: str, number: str) -> None:
    assert number in _redact(output_text=text)["output_text"]


def test_ordinal_day_before_the_month_without_of() -> None:
    text = "Speaking now: Moira Keane, born twenty-third March 1977, at the branch."
    assert "twenty-third March 1977" not in _redact(output_text=text)["output_text"]
    kept = "The migration ran on the twenty-third March 2026 without errors."
    assert "twenty-third March 2026" in _redact(output_text=kept)["output_text"]
