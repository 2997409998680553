"""Adversarial tests for the tenth redaction round's secret shapes in prose (issue 20).

Each rule class has secrets that must be found and look-alikes that must survive, written for
this file in several languages (no sentence, name or value is copied from a bench corpus): a
login written as a pair after a credentials word, the short password words (pw, pwd, pass),
PIN and TAN numbers, one-time and card security codes, recovery codes, Wi-Fi keys, passwords
on the command line of mysql/sshpass/redis-cli, licence keys in groups, a password word
followed by words about the password (a hint, a policy).
"""

from __future__ import annotations

import pytest

from flywheel.pii import shared_detector


def _found(text: str, label: str) -> list[str]:
    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == label]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("credentials: kiosk7 / mango!Tree4", "mango!Tree4"),
        ("Zugangsdaten: hbauer / herbst#Laub9", "herbst#Laub9"),
        ("identifiants : mlefort:soleil2027", "soleil2027"),
        ("pw: tulip$42x", "tulip$42x"),
        ("user ops2 pass trombone88", "trombone88"),
        ("PIN code 7731 for the card", "7731"),
        ("Ihre pushTAN: 583102", "583102"),
        ("Your verification code is 604 218", "604 218"),
        ("votre code de vérification est 771204", "771204"),
        ("el código de seguridad de la tarjeta: 917", "917"),
        ("backup codes: 4kx9-2mpq, 7wz3-8hrt", "7wz3-8hrt"),
        ("Wiederherstellungscode: 88QF-K2LM-Z7XP", "88QF-K2LM-Z7XP"),
        ("Wi-Fi: network Kiosk-Guest, key lemonade!77", "lemonade!77"),
        ("clave del wifi: naranjo2031", "naranjo2031"),
        ("run mysql -u admin -pquartz9Lake shop", "quartz9Lake"),
        ("sshpass -p 'Heron!53' ssh backup@nas", "Heron!53"),
        ("licence key 4RTX9-KQ2PW-7MZ3B-H8VND-2JC6Y for ci", "4RTX9-KQ2PW-7MZ3B-H8VND-2JC6Y"),
        ("the spare key is in the key box by the door, code 5519", "5519"),
        ("the code to the lockbox is 2864", "2864"),
        # a product's name after the password word says whose password it is
        ("the password of the Grafana Manager is kelp!Forest8", "kelp!Forest8"),
    ],
)
def test_secret_forms(text: str, secret: str) -> None:
    assert secret in _found(text, "SECRET"), _found(text, "SECRET")


@pytest.mark.parametrize(
    "text",
    [
        "Your booking confirmation code is 482913",  # a reference, no one-time code
        "Login / Logout buttons moved, see PR 4821",
        "pass the salt to table 12",
        "pin 12 on the GPIO header, pin 13 for ground",
        "TAN lines 2024 collection",
        "OTP release 26.1 shipped to 4 nodes",
        "CVV check passed for order 4821",
        "backup codes were regenerated on 2024-05-03",
        "mysql -h db.internal -P 3306 -u reader",
        "password policy: at least 12 chars",
        "Passwort vergessen? Dann hier klicken.",
        "Password manager: Bitwarden, 12 seats",
        "ticket ABCDE-12345-FGHIJ-67890 closed",
    ],
)
def test_secret_look_alikes_stay(text: str) -> None:
    assert _found(text, "SECRET") == []
