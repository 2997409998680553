"""Credentials written the ways people write them (issue 20): no verb, curl flags,
one-case generated keys, passwords before a host; and look-alikes that stay."""

from __future__ import annotations

import pytest

from flywheel.pii import shared_detector


def _secrets(text: str) -> list[str]:
    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == "SECRET"]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Entra con el usuario soporte y la clave Gaviota71 por favor.", "Gaviota71"),
        ("Bitte mit Passwort Zugspitze8 anmelden.", "Zugspitze8"),
        ("curl -u deploy:9d1c0b7a6e5f4d3c2b1a0f9e8d7c6b5a https://ci.example/api", "9d1c0b7a6e5f4d3c2b1a0f9e8d7c6b5a"),
        ("the relay key is key-7bq2xnmr41kd8hzs5tc926vwjyupeq3a", "key-7bq2xnmr41kd8hzs5tc926vwjyupeq3a"),
        ("mongodb+srv://reports:Otter-Lake-51@cluster7.qz3fd.mongodb.net/app", "Otter-Lake-51"),
    ],
)
def test_credentials_without_a_verb_or_a_key(text: str, secret: str) -> None:
    assert secret in _secrets(text)


@pytest.mark.parametrize(
    "text",
    [
        "Click password reset, then choose a password with 12 characters.",
        "digest sha256:4f2a9c1e7b3d5f8a0c6e2b4d9f1a3c5e7b9d0f2a4c6e8b1d3f5a7c9e0b2d4f6a",
        "commit 4f2a9c1e7b3d5f8a0c6e2b4d9f1a3c5e7b9d0f2a merged",
        "request 6f1c2a9e-4b7d-4e3a-9c5f-1a2b3c4d5e6f took 41 ms",
        "La clave del éxito es la constancia.",
    ],
)
def test_look_alikes_are_no_credentials(text: str) -> None:
    assert _secrets(text) == []
