"""One pseudonym per identity within a trace, and never one for two identities (issue 20, build 4).

Adversarial: the same national digits in two countries, the same number in
every form a person writes it, an e-mail hidden in a URL path, a query string
and base64, a name in ``NOM Prénom`` / ``Surname, First`` order.
"""

from __future__ import annotations

import base64
import json
import re

import pytest

from flywheel.promote import Redactor, TraceStep
from flywheel.promote._pseudonyms import PhoneContext, phone_readings

TOKEN = re.compile(r"<[A-Z_]+_\d+>")


def _tokens(texts: list[str]) -> list[list[str]]:
    red = Redactor().redact_trace([TraceStep(input_text=t) for t in texts])
    return [TOKEN.findall(s.input_text or "") for s in red.steps]


def _one_each(texts: list[str]) -> list[str]:
    found = _tokens(texts)
    assert all(len(t) == 1 for t in found), (texts, found)
    return [t[0] for t in found]


@pytest.mark.parametrize(
    "forms",
    [
        ["Appelez le 06 12 34 56 78 demain.", "Portable : +33 6 12 34 56 78", "ou 0033 612345678"],
        ["Mi móvil es 612 34 56 78", "llámame al +34 612 34 56 78", "tel: +34612345678"],
        ["Handy 0171 2345678", "mobil +49 171 2345678", "Büro +49 (0)171 2345678", "0049 171 2345678"],
        ["call (415) 555-0132", "or +1 415 555 0132", "fax 415.555.0132", "dial 1-415-555-0132"],
    ],
)
def test_one_token_per_phone_across_national_and_international_forms(forms: list[str]) -> None:
    tokens = _one_each(forms)
    assert len(set(tokens)) == 1 and tokens[0].startswith("<PHONE_"), tokens


def test_same_national_digits_in_different_countries_are_different_numbers() -> None:
    """The old identity (national digits) merged these three into one person."""
    tokens = _one_each(
        ["Portable : +33 6 12 34 56 78", "móvil +34 612 34 56 78", "Mobil +49 6123 45678"]
    )
    assert len(set(tokens)) == 3, tokens


def test_a_national_number_is_read_in_the_country_the_trace_writes() -> None:
    # French grouping, and the trace's international number is French: one person;
    # the Spanish number with the same national digits stays another.
    fr, fr_intl, es = _one_each(
        ["Appelez le 06 12 34 56 78", "+33 6 12 34 56 78", "+34 612 34 56 78"]
    )
    assert fr == fr_intl != es
    # With only a Spanish international number, Spanish national grouping joins it.
    es_nat, es_intl, fr2 = _one_each(["móvil 612 34 56 78", "+34 612 34 56 78", "+33 6 12 34 56 78"])
    assert es_nat == es_intl != fr2


def test_the_region_rule() -> None:
    """The documented rule, on the parser itself: exact match, then trace country, then grouping."""
    assert phone_readings("+33 6 12 34 56 78") == (True, (("FR", "+33612345678"),))
    international, readings = phone_readings("06 12 34 56 78")
    assert not international and readings[0] == ("FR", "+33612345678")  # French grouping first
    assert ("DE", "+49612345678") in readings  # also a valid German number
    assert PhoneContext([]).identity("06 12 34 56 78") == "+33612345678"
    german = PhoneContext(["+49 6123 45678"])
    assert german.identity("06 12 34 56 78") == "+49612345678"  # exact match wins
    assert PhoneContext(["+49 30 1234567"]).identity("06 12 34 56 78") == "+49612345678"
    # What phonenumbers cannot read keeps a digits identity, apart from real numbers.
    assert PhoneContext([]).identity("+999 12").startswith("?")


def test_email_inside_a_url_gets_the_bare_emails_token_and_keeps_host_and_path() -> None:
    blob = base64.b64encode(json.dumps({"contact": "Jane.Doe@example.org"}).encode()).decode()
    red = Redactor().redact_trace(
        [
            TraceStep(input_text="Write to jane.doe@example.org today."),
            TraceStep(
                tool_name="http_get",
                arguments=json.dumps(
                    {
                        "url": "https://crm.example.com/search?email=jane.doe%40example.org&page=2",
                        "profile": "https://crm.example.com/contacts/jane.doe@example.org/edit",
                        "raw": "https://crm.example.com/find?q=Jane.Doe@example.org&sort=asc",
                        "attachment": blob,
                    }
                ),
            ),
        ]
    )
    token = TOKEN.findall(red.steps[0].input_text or "")
    assert len(token) == 1 and token[0].startswith("<EMAIL_")
    t = token[0]
    args = json.loads(red.steps[1].arguments or "")
    assert args["url"] == f"https://crm.example.com/search?email={t}&page=2"
    assert args["profile"] == f"https://crm.example.com/contacts/{t}/edit"
    assert args["raw"] == f"https://crm.example.com/find?q={t}&sort=asc"
    assert json.loads(base64.b64decode(args["attachment"])) == {"contact": t}


def test_one_token_per_person_across_name_orders() -> None:
    red = Redactor().redact_trace(
        [
            TraceStep(tool_name="crm", arguments=json.dumps({"name": "Marie Dupont"})),
            TraceStep(tool_name="crm", arguments=json.dumps({"nom": "DUPONT Marie"})),
            TraceStep(tool_name="crm", arguments=json.dumps({"holder": "Dupont, Marie"})),
            TraceStep(tool_name="crm", arguments=json.dumps({"name": "Paul Dupontel"})),
            TraceStep(input_text="Le dossier de DUPONT est complet."),
        ]
    )
    values = [next(iter(json.loads(s.arguments or "").values())) for s in red.steps[:4]]
    assert values[0] == values[1] == values[2], values
    assert values[3] != values[0]
    assert red.steps[4].input_text == f"Le dossier de {values[0]} est complet."


def test_different_people_sharing_a_surname_keep_different_tokens() -> None:
    red = Redactor().redact_trace(
        [
            TraceStep(tool_name="crm", arguments=json.dumps({"name": "Marie Dupont"})),
            TraceStep(tool_name="crm", arguments=json.dumps({"name": "Jean Dupont"})),
        ]
    )
    a, b = (json.loads(s.arguments or "")["name"] for s in red.steps)
    assert a != b
