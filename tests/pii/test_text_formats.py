"""Adversarial tests: values inside text formats with their own syntax are read decoded (issue 20).

HTML character references, quoted-printable e-mail bodies, vCard and iCalendar
properties, tables as database clients print them (psql, MySQL, bare ``|``),
objects as code and its logs write them (bare keys, quoted values), signed-URL
signatures, regional CLDR month names and caregiver role keys. Every value here
was written for this file; none is copied from a bench corpus. Look-alikes: text
with an ampersand that is no reference, ``=`` in ordinary text, a vCard's product
fields, table rows under columns no rule knows, HTML attributes, a signature
that is a sign-off, rewritten output that decodes to the same text.
"""

from __future__ import annotations

import html
import quopri

import pytest
from flywheel.promote import redact_trace

from flywheel.pii import segments
from flywheel.pii._birth import MONTHS
from flywheel.pii._keys import key_label


def _redacted(field: str) -> str:
    return redact_trace([{"tool_name": "t", "output_text": field}]).steps[0].output_text or ""


def test_html_references_are_decoded_and_written_back_as_references() -> None:
    text = "<p>Titulaire : <b>Ga&euml;lle Marchet-Ribou&#x00E9;</b> &amp; co</p>\n<p>ok</p>"
    out = _redacted(text)
    assert "Marchet" not in out and "Ga&euml;lle" not in out, out
    assert html.unescape(out).endswith("& co</p>\n<p>ok</p>")
    assert "<p>ok</p>" in out  # a line with no reference is not touched


@pytest.mark.parametrize(
    "text",
    [
        "Terms & conditions; see AT&T's offer; x&y;z",  # ampersands that are no reference
        "price &euro; 12 and &copy; 2026 Fabrikam",  # references, nothing personal
    ],
)
def test_html_look_alikes_stay_as_written(text: str) -> None:
    assert _redacted(text) == text


def test_quoted_printable_body_is_decoded_and_re_encoded_line_for_line() -> None:
    body = (
        "Bonjour,\r\n\r\nMa fille Oc=C3=A9ane Vasseur-Kerbrat, n=C3=A9e le 3 ao=C3=BBt 2017, "
        "commence le stage de voile AMO 30,5.\r\nCordialement\r\n"
    )
    out = _redacted("Content-Transfer-Encoding: quoted-printable\r\n\r\n" + body)
    decoded = quopri.decodestring(out.encode()).decode()
    assert "Vasseur" not in decoded and "2017" not in decoded, decoded
    assert "stage de voile AMO 30,5" in out  # no soft line breaks moved the rest
    assert "\r\nCordialement\r\n" in out


@pytest.mark.parametrize(
    "text",
    [
        "a=1&b=2 and x=FF y=C3 z",  # '=' and hex in ordinary text: no encoded UTF-8 pair
        "ratio=3D printing, budget=AB",
    ],
)
def test_quoted_printable_look_alikes_are_no_segment(text: str) -> None:
    assert not [g for g in segments(text) if g.kind == "qp"]


VCARD = (
    "BEGIN:VCARD\r\nVERSION:4.0\r\nN:Arbogast;Philippa;;;\r\nFN:Philippa Arbogast\r\n"
    "ADR;TYPE=home:;;Kettering Lane 41;Dunmore;;FK2 8QA;UK\r\n"
    "TEL;VALUE=uri:tel:+44-1324-555-019\r\nBDAY:19790314\r\nORG:Harbour Seed Exchange\r\n"
    "NOTE:Grows the Kentucky Wonder bean\\, see list\r\n"
    "END:VCARD\r\n"
)


def test_vcard_properties_are_redacted_by_what_they_are() -> None:
    out = _redacted(VCARD)
    for v in ("Arbogast", "Philippa", "Kettering Lane", "1324-555", "19790314"):
        assert v not in out, out
    for kept in ("ORG:Harbour Seed Exchange", "Kentucky Wonder bean\\, see list", "VERSION:4.0"):
        assert kept in out, out


def test_icalendar_common_names_are_read_as_contacts() -> None:
    ics = (
        "BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:Launch window briefing\n"
        'ATTENDEE;CN="Tomasz Wrzesniak";ROLE=REQ-PARTICIPANT:mailto:t.wrz@example.pl\n'
        "ATTENDEE;CUTYPE=ROOM;CN=Room Kestrel:mailto:kestrel@rooms.example.com\n"
        "END:VEVENT\nEND:VCALENDAR\n"
    )
    out = _redacted(ics)
    assert "Wrzesniak" not in out and "t.wrz@example.pl" not in out, out
    assert "Launch window briefing" in out and "Room Kestrel" in out


def test_vcard_in_a_base64_data_url() -> None:
    import base64

    url = "data:text/vcard;base64," + base64.b64encode(VCARD.encode()).decode()
    out = _redacted(f'{{"contact": "{url}"}}')
    decoded = base64.b64decode(out.split("base64,")[1].split('"')[0]).decode()
    assert "Arbogast" not in decoded and "Harbour Seed Exchange" in decoded


@pytest.mark.parametrize(
    "table",
    [
        # psql
        " id |     full_name      |   city\n----+--------------------+---------\n"
        "  7 | Odalys Brankovic   | Split\n(1 row)",
        # MySQL client
        "+----+------------------+-------+\n| id | full_name        | city  |\n"
        "+----+------------------+-------+\n|  7 | Odalys Brankovic | Split |\n"
        "+----+------------------+-------+",
        # bare bars
        "nachname | vorname | ort\nBrankovic | Odalys | Split",
    ],
)
def test_database_client_tables_follow_their_column_keys(table: str) -> None:
    out = _redacted(table)
    assert "Brankovic" not in out and "Odalys" not in out, out
    assert "Split" in out


def test_table_columns_no_rule_knows_stay() -> None:
    table = " sku | product_title\n-----+---------------------\n 11 | Kettle Harbour Blend\n(1 row)"
    assert "Kettle Harbour Blend" in _redacted(table)


@pytest.mark.parametrize(
    ("text", "values"),
    [
        (
            '#0 Mailer->send(Customer {surname: "Oyelaran", email: "b.oye@example.ng"}, 3)',
            ["Oyelaran", "b.oye@"],
        ),
        (
            "Guest(first_name='Ingibjörg', phone='+354 555 0199') not found",
            ["Ingibjörg", "555 0199"],
        ),
        ('{:lastname => "Vukovic-Amara"}', ["Vukovic-Amara"]),
    ],
)
def test_bare_keys_with_quoted_values_follow_their_key_rule(text: str, values: list[str]) -> None:
    out = _redacted(text)
    for v in values:
        assert v not in out, out


@pytest.mark.parametrize(
    "text",
    [
        '<input type="text" name="email" placeholder="you@…">',  # a field's name, not a person
        "title='Quarterly report' status=\"draft\"",
        'cfg.name = "ingest-worker"',  # a dotted path: a setting, not a record
    ],
)
def test_bare_key_look_alikes_stay(text: str) -> None:
    assert _redacted(text) == text


def test_signed_url_signatures_are_secrets_sign_offs_are_not() -> None:
    sig = "5e0c9a7f13b2d48e6a1f0c3b7d9e2a4f6c8b1d3e5f7a9c0b2d4e6f8a1c3e5b7d"
    url = f"https://bucket.example/a.jpg?X-Amz-Date=20261203T101500Z&X-Amz-Expires=900&X-Amz-Signature={sig}"
    out = _redacted(url)
    assert sig not in out and "X-Amz-Expires=900" in out, out
    assert (
        key_label("X-Goog-Signature") == "SECRET_IF_RANDOM"
        and key_label("sig") == "SECRET_IF_RANDOM"
    )
    kept = '{"email_signature": "Kind regards, the front desk"}'
    assert "Kind regards, the front desk" in _redacted(kept)


def test_regional_month_names_and_caregiver_keys() -> None:
    assert "jänner" in MONTHS  # Austrian German (CLDR de_AT)
    assert {"das", "par"}.isdisjoint(MONTHS)  # regional abbreviations are not taken
    assert key_label("hebamme") == "AUTO" and key_label("midwife") == "AUTO"
    out = _redacted('{"hebamme": "Gesche Albrecht", "hebamme_id": "H-22"}')
    assert "Gesche" not in out and "H-22" in out, out


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("app.props: billing.api-token=0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a\nnext", "0d9c8b7a6f5e"),
        ("level=warn msg=retry password=Vq8!tt3Rk user=ops", "Vq8!tt3Rk"),
        ("deploy --client-secret=cs_4f3e2d1c0b9a8877 --region=eu", "cs_4f3e2d1c0b9a8877"),
        ("Credentials[user=svc, password=Pw-7731-Kx]", "Pw-7731-Kx"),
    ],
)
def test_unquoted_credential_pairs_are_secrets(text: str, secret: str) -> None:
    assert secret not in _redacted(text)


@pytest.mark.parametrize(
    "text",
    [
        "token_count=1234 max_tokens=4096 temperature=0.2",  # counts, not credentials
        "key=value sort_key=created_at idempotency_key=retry-1",  # words and names of things
        "region=eu-west-3 user=ops level=info",  # keys no credential rule names
    ],
)
def test_unquoted_pair_look_alikes_stay(text: str) -> None:
    assert _redacted(text) == text


def test_uk_driving_licence_numbers_by_the_birth_date_they_hold() -> None:
    from flywheel.pii._ids import find_strong_ids

    assert find_strong_ids("licence MORGA753116SM9IJ on file") == [(8, 24)]
    assert find_strong_ids("LEE99751120J99AB") == [(0, 16)]  # a short surname, 9-padded
    # the same shape with no valid month or day inside, or one character too many
    for text in ("MORGA713416SM9IJ", "MORGA773116SM9IJ", "MORGA753116SM9IJ7", "ABCDE123456789XY"):
        assert find_strong_ids(text) == [], text


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        (
            "ja hallo meine nummer ist null eins sieben zwei vier acht acht drei sieben neun "
            "eins und ich wohne lindenweg siebenundzwanzig in marburg",
            ["null eins sieben", "lindenweg siebenundzwanzig"],
        ),
        (
            "alors mon numéro c est zéro sept quarante et un dix-huit vingt-deux trente-trois "
            "merci",
            ["zéro sept quarante"],
        ),
        (
            "sure you can call me back on oh seven nine double four one two three eight six five",
            ["seven nine double four"],
        ),
    ],
)
def test_numbers_spoken_in_words_in_transcripts(text: str, gone: list[str]) -> None:
    out = _redacted(text)
    for g in gone:
        assert g not in out, out


@pytest.mark.parametrize(
    "text",
    [
        "Count with me: one two three four five six seven eight nine ten, and breathe.",
        "We need two tables, three chairs, four lamps, one rug and six cushions for the hall.",
        "zwei Kaffee, drei Tee, ein Kuchen, vier Gabeln und fünf Teller bitte",
    ],
)
def test_counting_aloud_is_no_phone(text: str) -> None:
    assert _redacted(text) == text
