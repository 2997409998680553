"""Detectors in several languages and encodings, and look-alikes that must survive.

Hand-written strings, none from the corpora or from a generator.
"""

from __future__ import annotations

import base64
import json
import urllib.parse

import pytest
from flywheel.pii import scan_document, shared_detector
from flywheel.promote import RedactionPolicy, Redactor, TraceStep


@pytest.fixture(scope="module")
def det():  # noqa: ANN201
    return shared_detector()


def _found(det, text: str) -> dict[str, str]:  # noqa: ANN001
    return {text[d.start : d.end]: d.label for d in det.detect(text)}


@pytest.mark.parametrize(
    ("text", "value", "label"),
    [
        ("My name is Oriane Lefebvre-Castel and I need help.", "Oriane Lefebvre-Castel", "NAME"),
        ("Bitte melden Sie sich bei Frau Gundula Hessenthaler.", "Gundula Hessenthaler", "NAME"),
        ("Me llamo Itziar Goikoetxea, gracias.", "Itziar Goikoetxea", "NAME"),
        ("Mi chiamo Fiorenza Barbagallo.", "Fiorenza Barbagallo", "NAME"),
        ("Saludos,\nNerea Olazábal", "Nerea Olazábal", "NAME"),
        ("Ship it to 77 Quarry Bank Road, Sheffield S10 2TN please", "77 Quarry Bank Road, Sheffield S10 2TN", "ADDRESS"),
        ("Adresse : 3 impasse des Glycines, 44000 Nantes.", "3 impasse des Glycines, 44000 Nantes", "ADDRESS"),
        ("Wohnhaft Kastanienallee 19, 10435 Berlin.", "Kastanienallee 19, 10435 Berlin", "ADDRESS"),
        ("Vivo en Calle de Toledo 88, 28005 Madrid.", "Calle de Toledo 88, 28005 Madrid", "ADDRESS"),
        ("She was born on 14 February 1979 in Leeds.", "14 February 1979", "DOB"),
        ("geboren am 03.11.1958 in Kassel", "03.11.1958", "DOB"),
        ("née le 21 juillet 1990 à Rennes", "21 juillet 1990", "DOB"),
        ("nacida el 2 de mayo de 1984", "2 de mayo de 1984", "DOB"),
        ("Mon mot de passe est Lavande!77 merci", "Lavande!77", "SECRET"),
        ("export OPENAI_API_KEY=sk-proj-Rz4Lq8Mx2Tn6Vb0Wc3Yd7Fe1Gh5Jk9Po", "sk-proj-Rz4Lq8Mx2Tn6Vb0Wc3Yd7Fe1Gh5Jk9Po", "SECRET"),
        ("Authorization: Bearer mF9qL2xT7vB4nK8wZ1cY6hD3", "mF9qL2xT7vB4nK8wZ1cY6hD3", "SECRET"),
        ("postgres://etl:w4Lrus-Tusk@db.example:5432/x", "w4Lrus-Tusk", "SECRET"),
        ("Rufen Sie mich an: +49 152 2899 4410", "+49 152 2899 4410", "PHONE"),
        ("iban fr14 2004 1010 0505 0001 3m02 606", "fr14 2004 1010 0505 0001 3m02 606", "IBAN"),
        ("DNI 12345678Z en el expediente", "12345678Z", "NATIONAL_ID"),
    ],
)
def test_detects(det, text: str, value: str, label: str) -> None:  # noqa: ANN001
    assert _found(det, text).get(value) == label, _found(det, text)


@pytest.mark.parametrize(
    "text",
    [
        "Release v4.12.0 (build 20251104.7) fixes ticket OPS-4410 and PR #8812.",
        "commit 3e1f2b9c0d8a7e6f5b4c3d2e1f0a9b8c7d6e5f4a, digest sha256:0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c",
        "Order A-77120-X shipped on 2025-11-04 at 10:30 from the Hamburg warehouse.",
        "Compare the Business Plan with Starter Edition, both at €49.00 per seat.",
        "Invoice RE-2025-00991 is due on 15.12.2025; VAT id DE811907980.",
        "request id 6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f took 1843 ms",
    ],
)
def test_decoys_survive(det, text: str) -> None:  # noqa: ANN001
    assert _found(det, text) == {}


def test_encoded_values_are_redacted_and_structure_kept() -> None:
    email = "quentin.abalain@example.net"
    blob = base64.b64encode(json.dumps({"contact": email, "note": "call back"}).encode()).decode()
    url = f"https://crm.example/leads/search?email={urllib.parse.quote(email)}&page=2"
    red = Redactor().redact_trace(
        [
            TraceStep(input_text=f"Write to {email}"),
            TraceStep(tool_name="fetch", arguments=json.dumps({"url": url, "attachment": blob})),
        ]
    )
    args = json.loads(red.steps[1].arguments or "")
    token = (red.steps[0].input_text or "").split()[-1]
    assert token.startswith("<EMAIL_")
    assert args["url"] == f"https://crm.example/leads/search?email={token}&page=2"
    decoded = json.loads(base64.b64decode(args["attachment"]))
    assert decoded == {"contact": token, "note": "call back"}


def test_one_pseudonym_for_national_and_international_phone_forms() -> None:
    red = Redactor().redact_trace(
        [
            TraceStep(input_text="Appelez le 06 71 22 48 90 demain."),
            TraceStep(tool_name="sms", arguments=json.dumps({"to": "+33 6 71 22 48 90"})),
            TraceStep(input_text="Mi móvil es 655 12 34 56"),
            TraceStep(tool_name="sms", arguments=json.dumps({"to": "+34 655 123 456"})),
        ]
    )
    fr = (red.steps[0].input_text or "").split()[2]
    es = (red.steps[2].input_text or "").split()[-1]
    assert json.loads(red.steps[1].arguments or "")["to"] == fr
    assert json.loads(red.steps[3].arguments or "")["to"] == es != fr


def test_scan_reports_type_and_path_never_the_value() -> None:
    doc = {"prompt": "Signed by Ysolde Kerhervé", "env": {"cookie": "sid=Qm9v8Lr2Tx4Wz6"}}
    found = scan_document(doc)
    assert {(f.path, f.entity) for f in found} == {("$.prompt", "NAME"), ("$.env.cookie", "SECRET")}
    assert "Ysolde" not in json.dumps([f.to_dict() for f in found])
    assert scan_document({"prompt": "Signed by <NAME_1>", "cookie": "<SECRET_2>"}) == []


@pytest.mark.parametrize(
    ("policy", "needle"),
    [
        ({"entities": ["EMAIL_ADDRESS", "SHOE_SIZE"]}, "SHOE_SIZE"),
        ({"deny_patterns": {"X": ["[unclosed"]}}, "[unclosed"),
        ({"key_rules": {"--": "NAME"}}, "'--' matches no key"),
        ({"key_rules": {"holder": "not a label"}}, "not a label"),
    ],
)
def test_bad_policy_is_refused_naming_the_entry(policy: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=None) as exc:
        RedactionPolicy.model_validate(policy)
    assert needle in str(exc.value)
