"""Adversarial tests for the fifth redaction round's general mechanisms (issue 20).

Written for this file (no sentence, name or value is copied from a bench corpus);
each mechanism has positives in several languages and look-alikes that must survive:

- national ids: distinctive shapes whose check digits pass are ids anywhere (a Finnish
  HETU, a Belgian number as printed, a Swedish personnummer with its dash, eleven digits
  passing the Norwegian or Turkish checks, a spaced UK NINO); any scheme's check after an
  id word of many languages; numbers that fail their check stay;
- dates of birth: numeric and month-name dates in many languages (genitive months too),
  year first, two-digit years, years in words, a year alone next to a birth word; dates
  with no birth word, or after a birthday *event*, stay;
- addresses: street words of their own after the name, Nordic and Finnish suffixes, the
  street word first (French/Belgian and Polish order), units and postcodes of more
  countries; products named like streets stay;
- names: role words and lower-case titles of more languages, names in capitals, handles
  and slugs, a slash signature; a breed or a boat named like a person stays;
- secrets: passwords in prose in more languages, Basic/Bearer credentials in any value;
  public object ids and paths stay;
- codes: a lot, product or tariff code word before a number makes it no phone or IP.
"""

from __future__ import annotations

import json

import pytest

from flywheel.pii import national_id_scheme, person_like, shared_detector
from flywheel.promote import redact_trace


def _found(text: str, label: str) -> list[str]:
    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == label]


def _redacted(field: str) -> str:
    return redact_trace([{"tool_name": "t", "output_text": field}]).steps[0].output_text or ""


# -- national ids ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Asiakas 150377-124Y soitti eilen", "150377-124Y"),  # HETU, 20th century
        ("lapsen tunnus 030105A418H.", "030105A418H"),  # HETU, 21st century
        ("dossier 77.03.15-234.81 ouvert", "77.03.15-234.81"),  # Belgian number as printed
        ("kund 810715-9272 ringde", "810715-9272"),  # personnummer with its dash
        ("mannskap 15038110036 om bord", "15038110036"),  # fødselsnummer (two check digits)
        ("müşteri 31840572976 aradı", "31840572976"),  # T.C. kimlik no (two check digits)
        ("NI no. on file: JT 48 20 61 B", "JT 48 20 61 B"),  # NINO in its printed groups
    ],
)
def test_distinctive_ids_whose_check_passes_are_ids_anywhere(text: str, value: str) -> None:
    assert value in _found(text, "NATIONAL_ID"), shared_detector().detect(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Numer PESEL: 85031212343, proszę o potwierdzenie", "85031212343"),
        ("her Aadhaar is 5913 8406 2272 as printed", "5913 8406 2272"),
        ("nino JT482061B for the payroll", "JT482061B"),
        ("personnummer 8107159272 om ni behöver", "8107159272"),
    ],
)
def test_weak_schemes_after_an_id_word(text: str, value: str) -> None:
    assert value in _found(text, "NATIONAL_ID")


@pytest.mark.parametrize(
    "text",
    [
        "order 12345678901 shipped",  # eleven digits failing every strong check
        "kund 810715-9273 ringde",  # personnummer shape, Luhn fails
        "Asiakas 150377-124X soitti",  # HETU shape, check character fails
        "PESEL 85031212347 (błędny)",  # an id word, every check fails: kept
        "batch JT 48 20 61 E",  # NINO groups with a suffix past D
        "form QQ 12 34 56 C",  # a prefix HMRC never allocates
    ],
)
def test_id_look_alikes_whose_check_fails_stay(text: str) -> None:
    assert _found(text, "NATIONAL_ID") == []


def test_check_digit_schemes_of_more_countries() -> None:
    assert national_id_scheme("85031212343") == "pl.pesel"
    assert national_id_scheme("JT482061B") == "gb.nino"
    assert national_id_scheme("JT482061B", strong_only=True) is None
    assert national_id_scheme("QQ123456C") is None
    assert national_id_scheme("20251104") is None  # a date is no id under a document key


# -- dates of birth -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "dob"),
    [
        ("Urodzony 12 października 1958 w Łodzi.", "12 października 1958"),
        ("Syntynyt 4. helmikuuta 1977, Oulu.", "4. helmikuuta 1977"),
        ("Född 9 januari 1983 i Umeå.", "9 januari 1983"),
        ("Født 2. juni 1969 i Bergen.", "2. juni 1969"),
        ("Született: 1981. október 23.", "1981. október 23."),
        ("Doğum tarihi 17 Nisan 1986, İzmir", "17 Nisan 1986"),
        ("Narozena 3. března 1990 v Brně.", "3. března 1990"),
        ("born on the third of May nineteen eighty-one", "the third of May nineteen eighty-one"),
        ("Patient DOB 7 Sep 79, allergic to latex", "7 Sep 79"),
        ("The date of birth in our system was entered as 11/30/1972, please fix", "11/30/1972"),
        ("syntymäaika 9.7.2018 (lapsi)", "9.7.2018"),
        ("nascimento=1979-02-14&plano=B", "1979-02-14"),
    ],
)
def test_birth_dates_in_many_languages(text: str, dob: str) -> None:
    assert dob in _found(text, "DOB")


@pytest.mark.parametrize(
    ("text", "year"),
    [
        ("Walker, male, b. 1957, found near the ridge", "1957"),
        ("she was born in 1949 in Cork", "1949"),
        ("signora Bellandi, classe 1958, residente a Prato", "1958"),
        ("Herr Quast, Jahrgang 1963, meldet sich", "1963"),
        ("kupujący, 1984 doğumlu, İstanbul", "1984"),  # Turkish: the year before its birth word
        ("urodzony w 1971 roku", "1971"),
        ("syntynyt vuonna 1964", "1964"),
    ],
)
def test_a_year_alone_next_to_a_birth_word(text: str, year: str) -> None:
    assert year in _found(text, "DOB")


@pytest.mark.parametrize(
    "text",
    [
        "The wedding is on 14 June 2026 at the old mill.",
        "Born in Leeds. Her appointment is on 2026-05-01.",
        "The birthday party is booked for 3 May 2026.",
        "Erstzulassung 03/2021, 84.000 km",
        "Release 1.4 shipped 2026-02-11; born-again build 1987",
        "the newborn ward reopens 12.03.2026",
        "Spring 2026 term starts Monday",
    ],
)
def test_dates_that_are_no_birth_dates_stay(text: str) -> None:
    assert _found(text, "DOB") == []


def test_birth_date_keys_of_more_languages() -> None:
    record = {"syntymaaika": "1.2.1990", "fodelsedatum": "1990-02-01", "data_urodzenia": "01.02.1990"}
    out = json.loads(_redacted(json.dumps(record)))
    assert all("1990" not in v for v in out.values()), out


# -- addresses -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "street"),
    [
        ("Bitte an Karl-Marx Allee 72, 10243 Berlin liefern.", "Allee 72"),
        ("Cím: Budapest, Petőfi utca 9. III/2, 1052", "Petőfi utca 9"),
        ("Osoite: Kivikatu 12 A 4, 33100 Tampere.", "Kivikatu 12"),
        ("Adress: Storvägen 3, 831 40 Östersund", "Storvägen 3"),
        ("Adresse: Rue du Marché 41, 5000 Namur.", "Rue du Marché 41"),
        ("Adres: ul. Kościuszki 8/12, 31-109 Kraków.", "ul. Kościuszki 8/12"),
        ("Adres: Bağdat Caddesi No: 218/4, 34728 Kadıköy", "Bağdat Caddesi No: 218"),
    ],
)
def test_street_lines_of_more_countries(text: str, street: str) -> None:
    found = _found(text, "ADDRESS")
    assert any(street in f for f in found), found


@pytest.mark.parametrize(
    "text",
    [
        "New in the catalogue: the Rue Royale lamp and the Plaza Mayor rug.",
        "Rue Royale 3-seater sofa, oak legs",
        "The Spring 2026 collection and the String 12 guitar",
        "Watergate 3 times in the film",
        "delegate 3 tasks to the bot",
        "Der Weg 3 Tage lang war steil",
        "Sofa Lindenallee in grey",
    ],
)
def test_products_and_prose_named_like_streets_stay(text: str) -> None:
    assert _found(text, "ADDRESS") == []


# -- names -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Przyjdzie pani Wróblewska o dziesiątej.", "Wróblewska"),
        ("Rozmawiałem z panem Dąbrowskim wczoraj.", "Dąbrowskim"),
        ("Il preventivo è del dott. Lanzafame, domani.", "Lanzafame"),
        ("Falei com o mestre Albergaria ontem.", "Albergaria"),
        ("Skiführerin Mairhofer meldet Lawinengefahr.", "Mairhofer"),
        ("Rezept von Dr. med. vet. Ühlein: Amoxicillin", "Ühlein"),
        ("Kaptan Yazıcıoğlu saat onda geliyor.", "Yazıcıoğlu"),
        ("Hoitaja Kettunen soittaa huomenna.", "Kettunen"),
        ("thanks Chukwuemeka! the build is green", "Chukwuemeka"),
    ],
)
def test_role_words_and_lower_case_titles_of_more_languages(text: str, name: str) -> None:
    found = _found(text, "NAME")
    assert any(name in f for f in found), found  # a role word opening the sentence may go too


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("09:12 ISSUE Paracetamol pt ADEYEMI, FOLASADE ward 4", "ADEYEMI, FOLASADE"),
        ("consignee: NOWICKA HALINA, 12 cartons", "NOWICKA HALINA"),
        ("pt GRZYBOWSKI-LOTT, K. (transfer)", "GRZYBOWSKI-LOTT, K."),
    ],
)
def test_names_in_capitals(text: str, name: str) -> None:
    assert name in _found(text, "NAME")


@pytest.mark.parametrize(
    "text",
    [
        "ERROR DISPENSE FAILED on WARD 4",
        "HTTP GET /api returned NOT FOUND",
        "ASAP, T. said the vendor",
        "MSC ORIANA leaves at 10",
    ],
)
def test_capitals_that_are_no_names_stay(text: str) -> None:
    assert _found(text, "NAME") == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('{"user": "@t.okonkwo", "text": "merged"}', "t.okonkwo"),
        ("@ilse.vermeulen-draaisma approved it", "ilse.vermeulen"),
        ("slice: support-chidera-obiano", "chidera-obiano"),
        ("Ring mich an, 0171 2345678 /Ingvild", "Ingvild"),
    ],
)
def test_handles_slugs_and_slash_signatures(text: str, name: str) -> None:
    found = _found(text, "NAME")
    assert any(name in f for f in found), found


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens release.notes slack.history get_weather deploys.status",
        "grace-period and the left-hand side",
        "the driver left-hand side",
        "Biscuit the Cavalier King Charles was groomed",
        "Charter on the Gulet Deniz Yildizi from Bodrum",
    ],
)
def test_identifiers_breeds_and_boats_are_no_names(text: str) -> None:
    assert _found(text, "NAME") == []


def test_a_register_in_lower_case_under_a_person_column() -> None:
    table = "ticket,driver,net_t\nT-1,chinonso adebayo-okeke,1.2\nT-2,walk-in,0.3"
    out = _redacted(json.dumps({"csv": table}))
    assert "chinonso" not in out and "adebayo" not in out
    assert "walk-in" in out and "T-1" in out
    assert person_like("chinonso adebayo-okeke") and not person_like("scrap metal")


# -- secrets ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Wifi-lösenordet är Fjällräv#Kiruna19 för gäster", "Fjällräv#Kiruna19"),
        ("Hasło do skrzynki to Jesion!Krakow88", "Jesion!Krakow88"),
        ("Salasana on Pakkanen%Rovaniemi5", "Pakkanen%Rovaniemi5"),
        ("Misafir ağı şifresi: Lodos+Bodrum31", "Lodos+Bodrum31"),
        ("Passordet er Fjord&Bryggen72", "Fjord&Bryggen72"),
        ('{"X-Upstream-Authorization": "Basic dXNlcjpwYXNzd29yZDEyMw=="}', "dXNlcjpwYXNzd29yZDEyMw=="),
        ("irc: oauth:q8w2e7r4t1y9u3i6o0p5a2s8d4f7g1", "q8w2e7r4t1y9u3i6o0p5a2s8d4f7g1"),
    ],
)
def test_secrets_in_more_languages_and_places(text: str, secret: str) -> None:
    assert secret in _found(text, "SECRET")


@pytest.mark.parametrize(
    "text",
    [
        '{"charge": "ch_3Zx9Lm2Qw8Er4Ty6Ui0P", "customer": "cus_Q7r2Ws9Xe4Rt1Y"}',
        '{"key": "2027/wk02/offer-ABX12.pdf"}',
        "the bearer of this letter is my cousin",
        "Basic plan, 3 seats",
    ],
)
def test_public_ids_paths_and_prose_are_no_secrets(text: str) -> None:
    assert _found(text, "SECRET") == []


# -- codes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "dispensed NDC 0071-0155-23 x30",
        "Charge LOT 2027-03-1182 verwendet",
        "kod CN 0901 21 00, cło 0,00",
        "agent build=4.2.117.9 started",
        "ref: 0612 884 213",
    ],
)
def test_a_code_word_before_a_number_makes_it_no_phone_or_ip(text: str) -> None:
    assert _found(text, "PHONE") == [] and _found(text, "IP") == []


@pytest.mark.parametrize(
    "text", ["call me on 0612 884 213", "Tel: +49 30 2084 7713", "order line +44 20 7946 0018"]
)
def test_phones_stay_phones(text: str) -> None:
    assert _found(text, "PHONE") != []


def test_a_digest_holding_a_nir_shaped_run_is_no_national_id() -> None:
    # 385860340496297 passes the NIR's mod-97 key; inside a hex digest it is no id
    assert _found("deadbeef385860340496297cafe", "NATIONAL_ID") == []
    assert _found("NIR 385860340496297", "NATIONAL_ID") == ["385860340496297"]


# -- things and organisations under name keys ------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        {"nombre": "Pimienta", "raza": "Galgo español", "edad": "4 años"},
        {"name": "Dorrit", "species": "cat", "microchip": "941000019283746"},
        {"name": "Nordlys", "imo": "IMO 9412087", "flag": "NO"},
        {"practice": {"name": "Lindqvist Dental Group", "city": "Malmö"}},
        {"payee": "Quernmoor & Daughters Ltd"},
    ],
)
def test_a_things_or_an_organisations_name_under_a_name_key_stays(record: dict) -> None:
    assert json.loads(_redacted(json.dumps(record))) == record


@pytest.mark.parametrize(
    ("record", "gone"),
    [
        ({"nombre": "Eulalia Berrocal", "telefono": "612 84 73 09"}, "Berrocal"),
        ({"name": "Ottoline Brackwater-Sims", "breed": "Vizsla"}, "Brackwater"),  # a person, read as text
        ({"payee": "Ottoline Brackwater"}, "Brackwater"),
    ],
)
def test_a_persons_name_under_a_name_key_still_goes(record: dict, gone: str) -> None:
    assert gone not in _redacted(json.dumps(record))


def test_the_release_witness_agrees_on_things_and_organisations() -> None:
    from flywheel.evalset._source_values import collect  # the witness's own walk

    found: dict[str, str] = {}
    collect("animal", {"nombre": "Pimienta", "raza": "Galgo"}, found)
    collect("payee", "Quernmoor & Daughters Ltd", found)
    collect("contact", {"nombre": "Eulalia Berrocal"}, found)
    assert "Pimienta" not in found and "Quernmoor & Daughters Ltd" not in found
    assert found.get("Eulalia Berrocal") == "NAME"
