"""Adversarial tests for the seventh redaction round's secret mechanisms (issue 20).

Written for this file (no sentence or value is copied from a bench corpus):

- the word key (secret, token) of many languages a few words before generated key material
  or 16+ hex digits; English "key" alone stays a word of other things (sort key, issue key);
- API keys with a live/test mode marker (``xyz_live_...``);
- incoming-webhook URLs (Teams, Discord, Zapier) whole;
- a password word as the head of a compound (Nordic, German, Dutch, Finnish);
- codes that disarm an alarm or open a safe or key box (many languages); door codes, dates,
  postcodes, error codes and promo codes stay;
- typed object ids with a hyphen (``run-...``) are judged by their body;
- a dated business reference under a credential key (``sessionId``) is no secret, in
  redaction and in the release scan alike.
"""

from __future__ import annotations

import json

import pytest

from flywheel.pii import shared_detector


def _found(text: str) -> list[str]:
    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == "SECRET"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Schlüssel für die Signatur: 5be0c41f9a7d2e63", "5be0c41f9a7d2e63"),
        ("klucz HMAC 7f3e9c21ab04d85e6f10 w panelu", "7f3e9c21ab04d85e6f10"),
        ("API-nøgle (Dinero): 0c7d1e9b44a2f3856e1d0b9c7a5e3f21d4c6b8a0", "0c7d1e9b44a2f3856e1d0b9c7a5e3f21d4c6b8a0"),
        ("salainen avain Qm7kT2vXp9LsR4wN8bYd, älä jaa", "Qm7kT2vXp9LsR4wN8bYd"),
        ("clé secrète du webhook : 9d41ee07b3c25a18", "9d41ee07b3c25a18"),
    ],
)
def test_key_word_of_any_language_before_key_material(text: str, value: str) -> None:
    assert value in _found(text)


@pytest.mark.parametrize(
    "text",
    [
        "sort key 5be0c41f9a7d2e63 is the row's first column",
        "commit 0c7d1e9b44a2f3856e1d0b9c7a5e3f21d4c6b8a0 fixed it",
        "Schlüssel Nummer 12 hängt am Brett",  # no key material
        "token bucket refill 1500000000000000 per day",  # digits only
    ],
)
def test_key_words_without_key_material_stay(text: str) -> None:
    assert _found(text) == []


def test_mode_marked_api_keys() -> None:
    assert _found("pay with paystk_live_Hq2Wm8ZrYt5KcVa1 in prod") == ["paystk_live_Hq2Wm8ZrYt5KcVa1"]
    assert _found("client: abc_test_Ttqw1XoP9aLmNz3R") == ["abc_test_Ttqw1XoP9aLmNz3R"]


def test_webhook_urls_whole() -> None:
    teams = (
        "https://contoso.webhook.office.com/webhookb2/1b2c3d4e-0000-4a4a-8b8b-123456789abc@"
        "9f8e7d6c-1111-4c4c-9d9d-abcdef012345/IncomingWebhook/0a1b2c3d4e5f60718293a4b5c6d7e8f9/"
        "77777777-2222-4e4e-aeae-0123456789ab"
    )
    assert _found(f"post to {teams} when done") == [teams]
    discord = "https://discord.com/api/webhooks/1187412207751234567/Xy9_kLm-Qp2RsTuVwXyZ0aBcD"
    assert _found(f"alerts: {discord}") == [discord]
    assert _found("docs: https://learn.microsoft.com/webhooks/overview") == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Routerlösenordet är Gran!t2025 om någon frågar", "Gran!t2025"),
        ("Das Druckerpasswort lautet kaffee#Maschine7 seit Montag", "kaffee#Maschine7"),
        ("het Wifiwachtwoord is zomer-Terras42", "zomer-Terras42"),
        ("Verkkosalasana on Tunturi_88x", "Tunturi_88x"),
    ],
)
def test_compound_password_words(text: str, value: str) -> None:
    assert value in _found(text)


def test_compound_password_words_need_a_password() -> None:
    assert _found("Das Passwortfeld ist leer, bitte neu laden.") == []
    assert _found("Lösenordsbyte sker på https://example.org/reset-2025") == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The alarm code is 5517, reset after the visit.", "5517"),
        ("Der Alarmcode lautet 3390#.", "3390#"),
        ("código de la alarma 8842-1107", "8842-1107"),
        ("kod do sejfu 41 77 02", "41 77 02"),
        ("Larmkoden är 1847.", "1847"),
        ("key safe code 2C91 by the back door", "2C91"),
    ],
)
def test_codes_that_disarm_or_open_a_safe(text: str, value: str) -> None:
    assert value in _found(text)


@pytest.mark.parametrize(
    "text",
    [
        "postal code 10435, Berlin",
        "error code 502 from the gateway",
        "promo code SUMMER25 at checkout",
        "the alarm code changes on 2027-01-15",
        "alarm code 12",
        "Code porte 7C22, 2e étage",  # a door code goes to the courier with the address
        "Türcode 4821 für den Paketdienst",
    ],
)
def test_other_codes_stay(text: str) -> None:
    assert _found(text) == []


def test_typed_object_id_with_a_hyphen() -> None:
    assert _found('{"run": "run-Kq2vX9mTzR4pLs7N"}') == []
    assert _found('{"ws": "ws-8HhQ2mWcZ1xYt5Ra"}') == []
    long_body = "key-" + "q7Xz2Lm9Tp4Rk8Nv3Wc6Yb1Hs5Gd0Jf"
    assert _found(f"MAILGUN={long_body}") == [long_body]


def test_dated_reference_under_a_session_key_is_no_secret() -> None:
    from flywheel.pii import scan_document, value_label
    from flywheel.promote import redact_trace

    assert value_label("SECRET", "PO-2026-00417") is None
    assert value_label("SECRET", "q8Zr-2026-0417") == "SECRET"  # not in capitals: a password
    assert value_label("SECRET", "s3cr3t-Pass") == "SECRET"
    doc = {"sessionId": "PO-2026-00417", "password": "Tr0ub4dor&3"}
    out = redact_trace([{"tool_name": "pay", "input_text": json.dumps(doc)}]).steps[0].input_text
    assert "PO-2026-00417" in out and "Tr0ub4dor&3" not in out
    assert [f.path for f in scan_document(doc)] == ["$.password"]



@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Mon code d'accès au portail client est Loire-5531-Ka, merci.", "Loire-5531-Ka"),
        ("Der Zugangscode fürs Kundenkonto lautet fjord-88Tal", "fjord-88Tal"),
        ("el código de acceso de la web es pinar77-Sur", "pinar77-Sur"),
        ("mon mdp pour le site c Lavande1987 au cas ou", "Lavande1987"),
    ],
)
def test_access_codes_and_the_french_abbreviation_shaped_like_passwords(text: str, value: str) -> None:
    assert value in _found(text)


@pytest.mark.parametrize(
    "text",
    [
        "The access code for the side gate is 4471, ring twice.",  # a door code of digits
        "code d'accès du portail : 2580B",  # upper-case keypad code, no password shape
        "We solve the MDP with discount gamma=0.95 and horizon h=20.",  # an MDP is no password
        "le mot de passe est dans le coffre de l'accueil",  # where it is kept
        "the password is with the caretaker until Monday",
        "das Passwort ist unter der Tastatur",
    ],
)
def test_access_code_and_password_look_alikes_stay(text: str) -> None:
    assert _found(text) == []


def test_a_public_token_by_its_documented_prefix_stays_and_its_secret_sibling_does_not() -> None:
    import base64

    def seg(d: str) -> str:
        return base64.urlsafe_b64encode(d.encode()).decode().rstrip("=")

    body = seg('{"u":"harbourmaps","a":"ckq81zx0a0b1c2d3e4f5g6h7i"}') + ".Zr8Kq2mW5tY7uP1oL3nB6x"
    text = f'{{"web_embed": "pk.{body}", "server": "sk.{body}", "again": "xpk.{body}"}}'
    starts = [d.start for d in shared_detector().detect(text) if d.label == "SECRET"]
    assert starts and all(s > text.index('"server"') for s in starts)  # sk. and xpk. only
    assert any(s > text.index('"again"') for s in starts)
