"""The fifth independent corpus (holdout5): hand-written agent runs, frozen before any detector ran on it.

Written for issue 20 by a fifth helper (worktree ``corpus5``), in one sitting,
without reading the detectors (``flywheel/pii/``, ``promote/``), their tests,
the evaluation sets, or the earlier corpora's traces and labels (only the
first lines of one trace file, for the format), and before running any
detector on it. Weighted towards what the earlier figures show as hardest:
person names in prose with no keyed copy, dates of birth in prose in many
languages and forms, national ids of countries not used before (Czech rodné
číslo, Romanian CNP, Greek AMKA and AFM, Brazilian CPF and CNS, Irish PPSN,
Swiss AHV, Danish CPR, Norwegian fødselsnummer, Spanish DNI/NIE, Indonesian
NIK and NPWP, Australian TFN and Medicare) with check
characters computed by the helpers below, postal addresses in each
country's order, and secrets of providers not used before. Languages:
English (with Irish, Australian, New Zealand and US usage), Czech, Romanian,
Greek (Greek script and Latin transliteration), Danish, Norwegian (bokmål
and nynorsk), Catalan, Indonesian, Brazilian Portuguese, Swiss German.

Every value was written by hand, except the provider keys, which are random
strings generated once in each provider's format and pasted in; people,
streets, companies, passwords and keys are invented. Check
characters are computed; each helper was cross-checked against
python-stdnum in a scratch script outside the repository. Each function's
docstring starts with its language code. Do not tune on this file.
"""

# ruff: noqa: E501
from __future__ import annotations

import json

from _kit import Trace, b64, iban, luhn, urlenc


# ------------------------------------------------------- national-id check digits
def _luhn_digit(digits: str) -> str:
    return luhn(digits)[-1]


def rodne_cislo(yymmdd: str, serial3: str, female: bool = False) -> str:
    """Czech/Slovak birth number (after 1954): month + 50 for women, the ten digits divisible by 11."""
    mm = int(yymmdd[2:4]) + (50 if female else 0)
    base = f"{yymmdd[:2]}{mm:02d}{yymmdd[4:]}{serial3}"
    c = int(base) % 11
    return f"{base[:6]}/{base[6:]}{0 if c == 10 else c}"


def cnp(s: str, yymmdd: str, county: str, nnn: str) -> str:
    """Romanian CNP: sex/century, date, county, serial, weighted mod-11 check (10 -> 1)."""
    d = f"{s}{yymmdd}{county}{nnn}"
    c = sum(int(a) * int(b) for a, b in zip(d, "279146358279", strict=True)) % 11
    return d + ("1" if c == 10 else str(c))


def amka(ddmmyy: str, four: str) -> str:
    """Greek AMKA: date of birth, four digits, Luhn digit."""
    return ddmmyy + four + _luhn_digit(ddmmyy + four)


def afm(eight: str) -> str:
    """Greek tax number (ΑΦΜ): powers of two, mod 11, mod 10."""
    return eight + str(sum(int(c) * 2 ** (8 - i) for i, c in enumerate(eight)) % 11 % 10)


def _br(digits: str, weights: list[int] | range) -> str:
    r = sum(int(c) * w for c, w in zip(digits, weights, strict=False)) % 11
    return "0" if r < 2 else str(11 - r)


def cpf(nine: str) -> str:
    """Brazilian CPF with its two check digits, formatted."""
    d = nine + _br(nine, range(10, 1, -1))
    d += _br(d, range(11, 1, -1))
    return f"{d[:3]}.{d[3:6]}.{d[6:9]}-{d[9:]}"


def cnpj(twelve: str) -> str:
    """Brazilian company number (a decoy: a company, not a person)."""
    d = twelve + _br(twelve, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])
    d += _br(d, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])
    return f"{d[:2]}.{d[2:5]}.{d[5:8]}/{d[8:12]}-{d[12:]}"


def cns(start14: str) -> str:
    """Brazilian Cartão Nacional de Saúde (definitive, 7/8/9...): sum of digit x (15 - i) divisible by 11."""
    for last in range(10):
        d = start14 + str(last)
        if sum(int(c) * (15 - i) for i, c in enumerate(d)) % 11 == 0:
            return f"{d[:3]} {d[3:7]} {d[7:11]} {d[11:]}"
    raise ValueError(start14)


def ppsn(seven: str, second: str = "") -> str:
    """Irish PPS number: weights 8..2, the second letter weighted 9, check letter mod 23."""
    total = sum(int(c) * w for c, w in zip(seven, range(8, 1, -1), strict=True))
    if second:
        total += 9 * "WABCDEFGHIJKLMNOPQRSTUV".index(second)
    return seven + "WABCDEFGHIJKLMNOPQRSTUV"[total % 23] + second


def ahv(nine: str) -> str:
    """Swiss AHV/AVS number 756.xxxx.xxxx.xc (EAN-13 check digit)."""
    d = "756" + nine
    d += str((10 - sum(int(x) * (3 if i % 2 else 1) for i, x in enumerate(d)) % 10) % 10)
    return f"{d[:3]}.{d[3:7]}.{d[7:11]}.{d[11:]}"


def cpr(ddmmyy: str, serial3: str) -> str:
    """Danish CPR number that also passes the old modulus-11 test."""
    for last in range(10):
        d = ddmmyy + serial3 + str(last)
        if sum(int(c) * w for c, w in zip(d, [4, 3, 2, 7, 6, 5, 4, 3, 2, 1], strict=True)) % 11 == 0:
            return d[:6] + "-" + d[6:]
    raise ValueError(serial3)


def _fnr(ddmmyy: str, ind3: str) -> str:
    d = ddmmyy + ind3
    k1 = 11 - sum(int(c) * w for c, w in zip(d, [3, 7, 6, 1, 8, 9, 4, 5, 2], strict=True)) % 11
    k1 = 0 if k1 == 11 else k1
    if k1 == 10:
        raise ValueError(ind3)
    d += str(k1)
    k2 = 11 - sum(int(c) * w for c, w in zip(d, [5, 4, 3, 2, 7, 6, 5, 4, 3, 2], strict=True)) % 11
    k2 = 0 if k2 == 11 else k2
    if k2 == 10:
        raise ValueError(ind3)
    return d + str(k2)


def fnr(ddmmyy: str, ind3: str) -> str:
    """Norwegian fødselsnummer: the first individual number from ``ind3`` up with valid controls."""
    for ind in range(int(ind3), 1000):
        try:
            return _fnr(ddmmyy, f"{ind:03d}")
        except ValueError:
            continue
    raise ValueError(ind3)


def dni(eight: str) -> str:
    """Spanish DNI: eight digits and the mod-23 letter."""
    return eight + "TRWAGMYFPDXBNJZSQVHLCKE"[int(eight) % 23]


def nie(letter: str, seven: str) -> str:
    """Spanish NIE: X/Y/Z read as 0/1/2, then the DNI letter."""
    return letter + seven + "TRWAGMYFPDXBNJZSQVHLCKE"[int(str("XYZ".index(letter)) + seven) % 23]


def npwp(eight: str, rest6: str) -> str:
    """Indonesian tax number: eight digits, a Luhn digit, branch codes."""
    d = eight + _luhn_digit(eight) + rest6
    return f"{d[:2]}.{d[2:5]}.{d[5:8]}.{d[8]}-{d[9:12]}.{d[12:]}"


def nik(region6: str, ddmmyy: str, serial4: str, female: bool = False) -> str:
    """Indonesian NIK: region, birth date (day + 40 for women), serial (no check digit)."""
    return f"{region6}{int(ddmmyy[:2]) + (40 if female else 0):02d}{ddmmyy[2:]}{serial4}"


def tfn(eight: str) -> str:
    """Australian tax file number: weighted sum divisible by 11."""
    for last in range(10):
        d = eight + str(last)
        if sum(int(c) * w for c, w in zip(d, [1, 4, 3, 7, 5, 8, 6, 9, 10], strict=True)) % 11 == 0:
            return f"{d[:3]} {d[3:6]} {d[6:]}"
    raise ValueError(eight)


def medicare_au(first8: str, issue: str) -> str:
    """Australian Medicare card number: check digit from weights 1,3,7,9 and the issue number."""
    c = sum(int(x) * w for x, w in zip(first8, [1, 3, 7, 9, 1, 3, 7, 9], strict=True)) % 10
    d = first8 + str(c) + issue
    return f"{d[:4]} {d[4:9]} {d[9:]}"


# company and account numbers (decoys: not personal)
def ico(seven: str) -> str:
    """Czech company number (IČO)."""
    s = sum(int(c) * w for c, w in zip(seven, range(8, 1, -1), strict=True))
    return seven + str((11 - s % 11) % 10)


def cvr(seven: str) -> str:
    """Danish company number (CVR)."""
    for last in range(10):
        d = seven + str(last)
        if sum(int(c) * w for c, w in zip(d, [2, 7, 6, 5, 4, 3, 2, 1], strict=True)) % 11 == 0:
            return d
    raise ValueError(seven)


def orgnr(eight: str) -> str:
    """Norwegian organisation number."""
    k = 11 - sum(int(c) * w for c, w in zip(eight, [3, 2, 7, 6, 5, 4, 3, 2], strict=True)) % 11
    if k == 10:
        raise ValueError(eight)
    d = eight + str(0 if k == 11 else k)
    return f"{d[:3]} {d[3:6]} {d[6:]}"


def che_uid(eight: str) -> str:
    """Swiss enterprise number (UID)."""
    k = 11 - sum(int(c) * w for c, w in zip(eight, [5, 4, 3, 2, 7, 6, 5, 4], strict=True)) % 11
    if k == 10:
        raise ValueError(eight)
    d = eight + str(0 if k == 11 else k)
    return f"CHE-{d[:3]}.{d[3:6]}.{d[6:]}"


def kontonr(ten: str) -> str:
    """Norwegian bank account number (mod 11), used as the BBAN of an NO IBAN."""
    k = 11 - sum(int(c) * w for c, w in zip(ten, [5, 4, 3, 2, 7, 6, 5, 4, 3, 2], strict=True)) % 11
    if k == 10:
        raise ValueError(ten)
    return ten + str(0 if k == 11 else k)


def card(body: str, groups: tuple[int, ...] = (4, 4, 4, 4)) -> str:
    """A card number: hand-typed digits (a real network's prefix) completed with the Luhn digit, grouped."""
    full = luhn(body)
    out, i = [], 0
    for g in groups:
        out.append(full[i : i + g])
        i += g
    return " ".join(out)


# ================================================================ English
def t_blood_donor_deferral(t: Trace) -> None:
    """en: blood donation centre (UK), a deferral note in prose."""
    t.service = "donor-care-agent"
    t.slice = "donor-care"
    t.user(
        f"Session note from the {t.d('Bramley Fold donor suite')}. The donor on chair 4 fainted after 380 ml; "
        f"Ms {t.p('NAME', 'Okonkwo-Hartigan')} told the nurse she was born on {t.p('DOB', '2 February 2001')}, "
        f"so the age rule is fine. Set a 12-month deferral, note {t.d('Kell negative')} and {t.d('O RhD negative')} on the record, "
        f"and text her on {t.p('PHONE', '07911 284 603')}. Her sister {t.p('NAME', 'Ifeoma')} wants to register too. "
        f"Session code {t.d('SESS-BFD-2026-1142')}, donation number {t.d('G0925 26 183744 K')}."
    )
    t.tool(
        "donor_registry.defer",
        {"session": "SESS-BFD-2026-1142", "reason": "vasovagal", "months": 12, "notify": "sms"},
        {"ok": True, "deferral_id": t.d("DEF-77310"), "next_eligible": t.d("2027-12-02")},
    )
    t.reply(
        "Deferral DEF-77310 is recorded; she can donate again from 2027-12-02. "
        "I have not registered her sister yet: that needs her own consent form."
    )


def t_funeral_home_arrangements(t: Trace) -> None:
    """en: funeral home (AU), an obituary draft and a family call."""
    t.service = "arrangements-assistant"
    t.user(
        "Draft the death notice from the family's call notes, keep it short:\n"
        f"{t.p('NAME', 'Cornelius Thistlethwaite')} passed peacefully at {t.d('Banksia Gardens')} aged 88. "
        f"Born in Ballarat on the {t.p('DOB', 'ninth of June, 1938')}. Dearly loved husband of {t.p('NAME', 'Maude')}, "
        f"father of {t.p('NAME', 'Lachlan')} and the late {t.p('NAME', 'Wynona')}. "
        f"Service in the {t.d('Jacaranda Chapel')} on {t.d('Friday 11 December 2026')} at 2 pm. "
        f"The widow, Mrs Thistlethwaite, prefers calls to the landline {t.p('PHONE', '(03) 5331 7482')}; "
        f"the son's mobile is {t.p('PHONE', '0412 873 509')}.",
        system="You write death notices for Yarrow & Finch Funerals. Never invent facts.",
    )
    t.tool(
        "notices.draft",
        {"template": t.d("classic-serif-2"), "publication": "The Courier", "words_max": 80},
        {"draft_id": t.d("NTC-2026-0418"), "price_aud": t.d("212.40")},
    )
    t.reply("Draft NTC-2026-0418 is ready for the family to approve (AUD 212.40 in The Courier).")


def t_driving_school_lessons(t: Trace) -> None:
    """en: driving school (UK), instructor chat and a licence check."""
    t.service = "lesson-scheduler"
    t.user(
        f"hiya its {t.p('NAME', 'priya raghunathan')} here, can i move thursdays lesson with mr {t.p('NAME', 'Adeyemi-Clarke')} "
        f"to the {t.d('Hendon test centre')} route? my theory cert is {t.d('THC 0447 2291')} and my provisional number is "
        f"{t.p('NATIONAL_ID', 'RAGHU956124P99YK')}. im on {t.p('PHONE', '+44 7700 184 562')} if its easier"
    )
    t.tool(
        "dvla.check_licence",
        {"licence_number": "RAGHU956124P99YK"},
        {"valid": True, "categories": ["B (provisional)"], "endorsements": 0},
        style="oi",
    )
    t.tool(
        "diary.move",
        {"from": t.d("2026-12-03T16:00"), "to": "2026-12-05T09:30", "car": t.d("Corsa-e Ultimate"), "reg": t.d("LK73 WZP")},
        {"moved": True},
    )
    t.reply("Moved to Saturday 09:30 in the Corsa-e. Your instructor has been told.")


def t_hearing_aid_clinic(t: Trace) -> None:
    """en: hearing-aid clinic (AU), intake with tax and Medicare numbers."""
    t.service = "audiology-intake"
    t.user(
        f"New client for the Fremantle clinic: Mr {t.p('NAME', 'Wirihana')}, born {t.p('DOB', '6/5/52')}, lives at "
        f"{t.p('ADDRESS', 'Unit 5/22 Wattle Street, Fremantle WA 6160')}. Medicare {t.p('NATIONAL_ID', medicare_au('42791856', '2'))}; "
        f"he gave his TFN {t.p('NATIONAL_ID', tfn('47182935'))} for the rebate form, which we should not have kept. "
        f"Fitting: {t.d('Phonak Lumity L70')} both ears, audiogram ref {t.d('AUD-23-88417')}."
    )
    t.tool(
        "pms.create_client",
        json.dumps({"client": {"title": "Mr", "family_name": "Wirihana", "mobile": t.p("PHONE", "0438 206 917"),
                               "referrer": "GP", "funding": t.d("HSP voucher")}}),
        {"client_id": t.d("CL-0093315")},
    )
    t.reply("Client CL-0093315 created. I left the tax file number out of the record; please shred the paper copy.")


def t_observatory_booking(t: Trace) -> None:
    """en: observatory visitor nights (US), names that are common words."""
    t.service = "stargazing-bookings"
    amex = card("37418520337461", (4, 6, 5))
    t.user(
        f"Group booking for the {t.d('Hale Dome')} viewing on {t.d('January 17')}: {t.p('NAME', 'June Marsh')} (organiser), "
        f"{t.p('NAME', 'Hope Fisher')}, {t.p('NAME', 'Will Gardner')} and {t.p('NAME', 'Sterling Price-Okafor')}. "
        f"We want the {t.d('Orion Nebula')} talk and the {t.d('Cassini Room')} after. "
        f"Pay with {t.p('CARD', amex)} exp 08/29, receipts to {t.p('EMAIL', 'junemarsh.astro@fastmail.com')}."
    )
    t.tool(
        "tickets.hold",
        {"event": t.d("EVT-HALE-0117"), "seats": 4, "tier": "members"},
        {"hold": t.d("HLD-5J2Q9"), "total_usd": t.d("96.00")},
    )
    t.tool("payments.charge", {"hold": "HLD-5J2Q9", "card_last4": amex[-4:]}, {"status": "succeeded", "id": t.d("ch_3QkT7fL2mN8pR4sV")})
    t.reply("Four seats held (HLD-5J2Q9) and paid; the receipt went to the organiser.")


def t_tattoo_consent(t: Trace) -> None:
    """en: tattoo studio (NZ), consent form and a reschedule by text."""
    t.service = "studio-frontdesk"
    t.user(
        "Consent form came through the website, can you file it:\n"
        + json.dumps({
            "form": "consent-v4",
            "answers": {
                "full_name": t.p("NAME", "Aroha Te Whata-Rangi"),
                "date_of_birth": t.p("DOB", "1999-10-23"),
                "design": t.d("koru sleeve, session 2 of 3"),
                "artist": t.d("Blackbird"),
                "allergies": "latex",
                "emergency": f"{t.p('NAME', 'Wiremu')} (partner) {t.p('PHONE', '021 448 3907')}",
            },
        }, ensure_ascii=False)
    )
    t.tool("bookings.reschedule", {"ref": t.d("TAT-2611-092"), "to": t.d("2026-12-14 10:00")}, {"ok": True}, style="spanname")
    t.reply("Filed against TAT-2611-092 and moved to 14 December, 10:00.")


def t_marathon_registration(t: Trace) -> None:
    """en: marathon registration (US), a CSV of entrants in a JSON string."""
    t.service = "race-ops"
    csv = (
        "bib,first,last,dob,age_group,emergency_contact,emergency_phone\n"
        f"{t.d('4471')},{t.p('NAME', 'Tenzin')},{t.p('NAME', 'Dolkar')},{t.p('DOB', '03/14/1987')},F35-39,{t.p('NAME', 'karma dolkar')},{t.p('PHONE', '(415) 608-2297')}\n"
        f"{t.d('4472')},{t.p('NAME', 'Mateus')},{t.p('NAME', 'Quaresma')},{t.p('DOB', '11/02/1979')},M45-49,{t.p('NAME', 'ines quaresma')},{t.p('PHONE', '415.733.0184')}\n"
        f"{t.d('4473')},{t.p('NAME', 'Bat-Erdene')},{t.p('NAME', 'Gankhuyag')},{t.p('DOB', '07/30/2002')},M20-24,{t.p('NAME', 'oyunaa')},{t.p('PHONE', '+1 628 204 7713')}\n"
    )
    t.user("Late entries for the Bay Bridge half, please check the age groups against the birth dates.")
    t.tool("entries.import", {"race": t.d("BBH-2027"), "corral": t.d("C2"), "payload": json.dumps({"format": "csv", "data": csv})},
           {"imported": 3, "warnings": []})
    t.reply("Three late entries imported into corral C2; the age groups match the birth dates.")




def t_elevator_maintenance(t: Trace) -> None:
    """en: lift maintenance contractor, a technician's visit report."""
    t.service = "field-service"
    t.user(
        f"Visit report, {t.d('Bishop Tower')} lift 3 ({t.d('Otis Gen2 Comfort')}, unit {t.d('EL-3-0097')}): the door operator "
        f"was replaced ({t.d('part AAA24350AL2')}). The super, Mr {t.p('NAME', 'Wojciechowski')}, let us in; "
        f"the resident on 14 who reported the fault, Mrs {t.p('NAME', 'Abernathy-Osei')}, asked for a call back on "
        f"{t.p('PHONE', '(773) 491-2086')}. "
        f"Next inspection {t.d('2027-03-09')}, certificate {t.d('CERT-IL-26-44817')}."
    )
    t.tool("cmms.close_work_order", {"wo": t.d("WO-118742"), "labour_h": 3.5, "firmware": t.d("GCS 31.7.2")}, {"closed": True})
    t.reply("Work order WO-118742 closed. I will ask the office to call the resident back.")


def t_scim_provisioning(t: Trace) -> None:
    """en: SSO/SCIM provisioning, a user pushed from the identity provider."""
    t.service = "idp-sync"
    t.slice = "scim"
    user = {
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
        "externalId": t.d("00u8f3kq2wXcT4bVz5d7"),
        "userName": t.p("EMAIL", "shirin.ghorbani@harbourfreight-logistics.com"),
        "name": {"givenName": t.p("NAME", "Shirin"), "familyName": t.p("NAME", "Ghorbani-Tehrani")},
        "phoneNumbers": [{"type": "work", "value": t.p("PHONE", "+1 206 718 4432")}],
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"employeeNumber": t.d("E-004417"), "costCenter": t.d("CC-7310")},
        "groups": [{"value": t.d("grp-finance-emea-ro")}],
    }
    t.tool(
        "scim.push_user",
        {"method": "POST", "url": "https://api.ledgerline.io/scim/v2/Users",
         "headers": {"Authorization": f"SSWS {t.p('SECRET', '00xQw7RNXSdGethKpINB0NVUJWEL1f-9qbCHDK1_HC')}",
                     "Content-Type": "application/scim+json"},
         "body": json.dumps(user)},
        {"status": 201, "id": t.d("2819c223-7f76-453a-919d-413861904646")},
    )
    t.tool(
        "entra.app_credentials",
        {"tenant": t.d("contoso-harbour.onmicrosoft.com"), "client_id": t.d("6f1c2a9e-83d4-4b7e-a1f0-5c9d2e7b3a18")},
        {"client_secret": t.p("SECRET", "uMT8Q~y9ylfIQ1CFm9RsbZVZTqwDT0nHSIr~H8q."), "expires": "2027-06-01"},
        style="oi",
    )
    t.reply("The user was created in Ledgerline (201). The app secret expires on 2027-06-01.")


def t_crash_report(t: Trace) -> None:
    """en: crash reporting, an event with user context and breadcrumbs."""
    t.service = "triage-bot"
    event = {
        "event_id": t.d("9f2c4e7a1b3d4c5e8f6a7b9c0d1e2f3a"),
        "release": t.d("checkout@4.18.2+build.7731"),
        "user": {"ip_address": t.p("IP", "203.0.113.77"), "email": t.p("EMAIL", "k.nakashima-ruiz@inbox.lv"), "id": t.d("u_58213")},
        "breadcrumbs": [
            {"category": "navigation", "data": {"to": "/checkout?step=address&name=" + urlenc(t.p("NAME", "Kenji Nakashima-Ruiz"))
                                                + "&street=" + urlenc(t.p("ADDRESS", "Via Larga 31, 20122 Milano MI", ["Via Larga 31"]))}},
            {"category": "xhr", "data": {"url": "https://api.parcelwise.eu/v1/quote", "status_code": 502,
                                         "request_headers": {"Cookie": "connect.sid=" + t.p("SECRET", "s%3Adz4pKk8M4fct3gKFf0uRpiTtWaqabYm2.KBEIR8cZXDTJoCmktlZa5ne1MifL6GZpCv08wPvndjN"), "Accept-Language": "it-IT"}}},
        ],
        "fingerprint": [t.d("a41f09c2e7d35b6f")],
        "exception": {"values": [{"type": "TypeError", "value": "Cannot read properties of undefined (reading 'postcode')"}]},
    }
    t.tool("sentry.get_event", {"org": t.d("parcelwise"), "project": "web-checkout", "event": "9f2c4e7a1b3d4c5e8f6a7b9c0d1e2f3a",
                                "auth": "Bearer " + t.p("SECRET", "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")},
           json.dumps(event))
    t.reply("The crash is a missing postcode in the quote response (502 from the quote API) in release checkout@4.18.2+build.7731.")


def t_wireguard_vpn(t: Trace) -> None:
    """en: VPN setup for a remote office, WireGuard and age keys."""
    t.service = "netops-agent"
    conf = (
        "[Interface]\n"
        f"PrivateKey = {t.p('SECRET', 'q7gOTfdHwKj5/wc2Liy6qC6ex1avdka1d95jIUBO1aw=')}\n"
        "Address = 10.44.0.7/32\n"
        "DNS = 10.44.0.1\n\n"
        "[Peer]\n"
        f"PublicKey = {t.d('xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=')}\n"
        f"PresharedKey = {t.p('SECRET', '3eNAD9fmCQbALyDSAL4EoKrbhVwKw4UNB9y7JwyJWZA=')}\n"
        f"Endpoint = {t.p('IP', '198.51.100.203')}:51820\n"
        "AllowedIPs = 10.44.0.0/16\n"
        "PersistentKeepalive = 25\n"
    )
    t.user(f"Push this to the Tromsø office router and keep a copy encrypted for me: {conf}")
    t.tool("files.encrypt", {"path": "wg0.conf", "recipients": [t.d("age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p")],
                             "identity_for_tests": t.p("SECRET", "AGE-SECRET-KEY-1HAZWUMT6CSLP2XH37C7YFNE27N7R7MR4RGC4HQZMGZ2NJSCESL980VM9J4")},
           {"written": "wg0.conf.age", "sha256": t.d("3b7e0c1f9a5d2e8b4c6f0a1d7e3b9c5f2a8d4e6b0c1f7a3d9e5b2c8f4a6d0e1b")})
    t.tool("router.apply", {"device": t.d("rtr-tos-01"), "file": "wg0.conf"}, {"handshake": "ok", "rx_bytes": 18244})
    t.reply("The tunnel is up (handshake ok). I kept only the encrypted copy, wg0.conf.age.")


def t_warehouse_query(t: Trace) -> None:
    """en: data warehouse, a query result as a markdown table in a string."""
    t.service = "analytics-copilot"
    table = (
        "| member_id | member | born | plan | city |\n|---|---|---|---|---|\n"
        f"| {t.d('M-208841')} | {t.p('NAME', 'Oluwaseun Adébáyọ̀')} | {t.p('DOB', '1991-08-04')} | {t.d('Gold Annual')} | {t.d('Lagos')} |\n"
        f"| {t.d('M-208842')} | {t.p('NAME', 'Nino Beridze')} | {t.p('DOB', '1984-12-19')} | Gold Annual | {t.d('Tbilisi')} |\n"
        f"| {t.d('M-208843')} | {t.p('NAME', 'Anahit Petrosyan')} | {t.p('DOB', '2000-02-29')} | {t.d('Student Flex')} | {t.d('Yerevan')} |\n"
    )
    t.user("Which Gold members in the Caucasus cohort have lapsed? Use the warehouse.")
    t.tool("databricks.sql", {"warehouse": t.d("wh-4f7a19c2e0b3"), "statement": "select member_id, member, born, plan, city from members where lapsed",
                              "token": t.p("SECRET", "dapi59408b7fbdb1dfc76341eb6c1efebc95-3")},
           {"query_id": t.d("01ef-7c3a-9d2b-4e18"), "result_markdown": table})
    t.reply("Three lapsed members: M-208841, M-208842 (Gold Annual) and M-208843 (Student Flex).")


def t_mail_server_logs(t: Trace) -> None:
    """en: mail relay, postfix logs pasted for a bounce investigation."""
    t.service = "postmaster-agent"
    logs = (
        f"Dec  2 09:14:07 mx2 postfix/smtpd[22817]: {t.d('4XkL2m0QZ3z9')}: client=unknown[{t.p('IP', '192.0.2.146')}], "
        f"sasl_method=PLAIN, sasl_username={t.p('EMAIL', 'hodan.warsame@tidewater-clinic.org')}\n"
        f"Dec  2 09:14:08 mx2 postfix/cleanup[22820]: 4XkL2m0QZ3z9: message-id=<{t.d('20261202091407.7f3a@tidewater-clinic.org')}>\n"
        f"Dec  2 09:14:09 mx2 postfix/smtp[22831]: 4XkL2m0QZ3z9: to=<{t.p('EMAIL', 'l.ferreira.souza@uol.com.br')}>, relay=mx.uol.com.br[198.51.100.14]:25, "
        f"status=bounced (550 5.7.1 {t.d('POL-UOL-0042')})\n"
        f"Dec  2 09:15:40 mx2 postfix/smtpd[22817]: {t.d('4XkL2q3Hn7yB')}: client=mail-relay[10.20.0.9]\n"
    )
    t.user(f"Why did this bounce? {logs}")
    t.tool("smtp.test_auth", {"host": "mx2.tidewater-clinic.org", "user": "hodan.warsame@tidewater-clinic.org",
                              "password": t.p("SECRET", "Dhow-Mombasa!2019")}, {"auth": "235 2.7.0 ok"})
    t.reply("The receiving side rejects by policy (POL-UOL-0042): the sender's domain has no DMARC record. Authentication itself works.")


def t_feature_flags(t: Trace) -> None:
    """en: feature flag service, an audit export and a secrets manager token."""
    t.service = "release-captain"
    t.root["flywheel.environment"] = json.dumps({"env": "prod-eu", "oncall": t.p("NAME", "Marisol Etxeberria"),
                                                 "oncall_phone": t.p("PHONE", "+34 688 214 907")})
    t.user(
        f"Roll back {t.d('checkout-v2-rollout')} and {t.d('pricing.dynamic-fx')} to the state before yesterday's change "
        f"by {t.p('NAME', 'm.abernathy')}? The audit is attached."
    )
    t.tool("flags.audit", {"project": t.d("webshop"), "since": t.d("2026-12-01T00:00Z")},
           json.dumps({"entries": [{"flag": "checkout-v2-rollout", "by": "m.abernathy", "from": "25%", "to": "100%",
                                    "client_ip": t.p("IP", "2001:db8:4c2a:17::8e3")},
                                   {"flag": "pricing.dynamic-fx", "by": t.d("svc-deploybot"), "from": "off", "to": "on"}]}))
    t.tool("secrets.get", {"name": "FLAGS_ADMIN_TOKEN", "via": "doppler", "service_token": t.p("SECRET", "dp.st.prd.XVEBirzjxzUSec1Hb4yVPAMbPrpN76BGYTl5F1RLRPn")},
           {"value": "(redacted by tool)"}, style="oi")
    t.reply("Both flags are back to their previous state (25% and off).")


def t_gaa_club_registration(t: Trace) -> None:
    """en: Irish GAA club, underage registration by e-mail (Irish English)."""
    t.service = "club-secretary"
    t.user(
        "Hi, forwarding this from the registrar, can you put it into the system for the U15s?\n\n"
        "---------- Forwarded message ----------\n"
        f"From: {t.p('NAME', 'Siobhán Ní Bhriain')} <{t.p('EMAIL', 'siobhan.nibhriain@eircom.net')}>\n"
        "Subject: Registration for our young lad\n\n"
        f"Hello, our son {t.p('NAME', 'Tadhg Ó Briain')} was born the {t.p('DOB', '17th of March 2012')}, a proper Paddy's Day baby. "
        f"His PPS is {t.p('NATIONAL_ID', ppsn('4827153'))}. We moved to {t.p('ADDRESS', 'Knockanore, Ballyduff, Co. Kerry V92 H6C4', ['Knockanore, Ballyduff'])} "
        f"in the summer. He'd love to see the {t.d('Sam Maguire')} when it visits. His grandad, {t.p('NAME', 'Donncha Ó Briain')}, "
        "will do most of the collections.\n"
        f"Go raibh maith agat,\nSiobhán\n{t.p('PHONE', '087 284 1937')}"
    )
    t.tool("foireann.register", {"club": t.d("CLG Cill Chuáin"), "grade": "U15", "season": 2027, "fee_eur": t.d("60.00")},
           {"member_no": t.d("KY-04417-27")}, style="spanname")
    t.reply(f"Registered as KY-04417-27. I did not store the PPS number; the club system does not need it. Good luck at {t.d('Austin Stack Park')}!")


def t_turf_delivery(t: Trace) -> None:
    """en: turf and heating-oil delivery (Ireland), an order by phone transcript."""
    t.service = "yard-orders"
    t.user(
        "Transcript of this morning's call, please make the order:\n"
        f"CALLER: It's Mrs {t.p('NAME', 'Mulcahy')} out past the creamery, I'll want two trailers of the {t.d('Bord na Móna')} briquettes "
        "and 500 litres of kerosene.\n"
        "YARD: Grand, what's the address for the driver?\n"
        f"CALLER: {t.p('ADDRESS', 'Carrigeen Cross, Lisheen, Thurles, Co. Tipperary E41 K7F2', ['Carrigeen Cross, Lisheen'])}, the yellow gate. "
        f"Pay out of the account like last year, {t.p('IBAN', iban('IE', 'AIBK93115271806418', spaced=True))}.\n"
        f"YARD: And a number?\nCALLER: {t.p('PHONE', '+353 504 21 847')}, or my son {t.p('NAME', 'Eamon')} on {t.p('PHONE', '086 417 3320')}."
    )
    t.tool("orders.create", {"product": [t.d("BNM-BRQ-TRL"), t.d("KERO-500")], "route": t.d("Route 7 Thurles North"), "slot": "2026-12-04"},
           {"order": t.d("YO-26-19073"), "total_eur": t.d("684.50")})
    t.reply("Order YO-26-19073 is booked for Friday on Route 7 (EUR 684.50), paid by direct debit.")


def t_stable_entries(t: Trace) -> None:
    """en: racing stable (Ireland), entries where horses are named like people."""
    t.service = "entries-clerk"
    t.user(
        f"Enter {t.d('Lady Fionnuala')} and {t.d('Master Tadhg')} for {t.d('Punchestown')} on the 28th. "
        f"Owner is Mr {t.p('NAME', 'Ó Dálaigh')} (syndicate {t.d('Blackstairs Partnership')}); claim the 7 lb for the "
        f"apprentice, {t.p('NAME', 'Ciarán Breathnach')}, born {t.p('DOB', '30 August 2007')}, so he's only 19. "
        f"Colours: {t.d('emerald, white sash, quartered cap')}. The vet, Ms {t.p('NAME', 'Keohane')}, has the passports "
        f"({t.d('UELN 372004000159731')})."
    )
    t.tool("hri.enter", {"meeting": t.d("PUN-2026-12-28"), "horses": ["Lady Fionnuala", "Master Tadhg"], "allowance_lb": 7,
                         "licence": t.d("APP-IE-2291")}, {"entered": 2}, style="oi")
    t.reply("Both entered for the 28th with the 7 lb claim.")


def t_payments_webhook(t: Trace) -> None:
    """en: payments, a webhook replay with provider keys and a card in a log line."""
    t.service = "payments-ops"
    visa = card("453291730264851")
    t.user(
        "The Square and Mollie webhooks failed overnight, replay them. Log excerpt:\n"
        f"2026-12-02T03:12:44Z ERROR webhook square sig mismatch payment={t.d('sq_pmt_7Yb2kR9wQ3')} "
        f"card={t.p('CARD', visa)} cardholder=\"{t.p('NAME', 'Florentyna Achterberg')}\"\n"
        f"2026-12-02T03:12:51Z ERROR webhook mollie 401 payment={t.d('tr_WDqYK6vllg')}"
    )
    t.tool("http.request", {"method": "POST", "url": "https://connect.squareup.com/v2/webhooks/replay",
                            "headers": {"Authorization": "Bearer " + t.p("SECRET", "EAAA8cfjkkFx_4vsqOehM3qEF0BKGLjSIk2ULXV3Isk-RO3LHp8xScNiNRmGVXPR"),
                                        "Square-Version": t.d("2026-10-16")}}, {"status": 200})
    t.tool("http.request", {"method": "POST", "url": "https://api.mollie.com/v2/payments/tr_WDqYK6vllg/replay",
                            "headers": {"Authorization": "Bearer " + t.p("SECRET", "live_yS2DosPqT1rycxThlQkl9uIzHu7aCr")}}, {"status": 401})
    t.reply("Square replayed; Mollie still returns 401, so its API key in the vault is probably revoked.")


def t_terraform_state(t: Trace) -> None:
    """en: infrastructure, a Terraform state excerpt and Helm values in YAML."""
    t.service = "infra-agent"
    state = {
        "version": 4, "terraform_version": t.d("1.9.8"), "serial": 412,
        "resources": [
            {"type": "planetscale_password", "name": "app", "instances": [{"attributes": {
                "id": t.d("pw-7h2k9q4m1x"), "plain_text": t.p("SECRET", "pscale_pw_109i8AxLecj6eMr0WmZGupjjIOxtuGuhbDR0gVt4T13"),
                "branch": "main"}}]},
            {"type": "grafana_cloud_access_policy_token", "name": "metrics_read", "instances": [{"attributes": {
                "token": t.p("SECRET", "glc_eyJvIjoiMTU3MTM2MCIsIm4iOiJzdGFjay02MTQ2OTItaG0tcmVhZC1jNSIsImsiOiJaaVBVQmRWdlo3Y09Ud2ZpalZ5ZzhrWE4iLCJtIjp7InIiOiJwcm9kLWV1LXdlc3QtMiJ9fQ=="),
                "region": "prod-eu-west-2"}}]},
        ],
    }
    values = (
        "image:\n"
        f"  repository: ghcr.io/tidewater/api\n  tag: {t.d('v2.31.0')}\n  digest: {t.d('sha256:4d1f6a0e93b27c85e1a4f7d20c6b93e58a17f40d2e9c3b65a8f01d7e24c9b3a6')}\n"
        "newrelic:\n"
        f"  licenseKey: {t.p('SECRET', 'NRAK-2YDB0TPX1G03QAVK1L8UXLWCYGU')}\n"
        "smtp:\n  host: smtp.eu.mailgun.org\n"
        f"  password: \"{t.p('SECRET', 'Gannet-Rockall-47')}\"\n"
    )
    t.user(f"Why does the api chart keep restarting? values.yaml:\n{values}")
    t.tool("terraform.show", {"workspace": t.d("prod-eu"), "json": True}, json.dumps(state))
    docker = {"auths": {
        "registry.gitlab.com": {"auth": b64("deploy-bot:" + t.p("SECRET", "gldt-uBgSVfJYIgMRgZ3noSfH"))},
        "ghcr.io": {"auth": b64("tidewater-ci:" + t.p("SECRET", "Cormorant_Lundy_3318"))},
    }, "credsStore": t.d("desktop"), "currentContext": t.d("colima")}
    t.tool("node.read_file", {"path": "/home/runner/.docker/config.json"}, json.dumps(docker), style="oi")
    t.tool("node.read_file", {"path": "/home/runner/.vault-token"}, t.p("SECRET", "hvs.HpUvheSM6xpfCrfbVXwGATahcX35zLodm7BdzbHzSOHTZ-i6sii3lPqqC9EFPTQ8d0beuUEhZuutoreVlCFvMqRBjw"), style="oi")
    t.reply("The pods restart because the readiness probe hits /healthz before migrations finish; unrelated to the credentials.")


def t_llm_gateway_keys(t: Trace) -> None:
    """en: LLM gateway, provider keys in a config and a system prompt carrying a name."""
    t.service = "gateway-admin"
    t.user(
        "Rotate the keys in this router config, they were pasted in a public channel:\n"
        + json.dumps({
            "providers": {
                "groq": {"api_key": t.p("SECRET", "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"), "model": t.d("llama-3.3-70b-versatile")},
                "replicate": {"token": t.p("SECRET", "r8_DtwZ5koz8B2JGrGYsL1iawFYEeXeRUN5d4yHR")},
                "perplexity": {"key": t.p("SECRET", "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"), "model": t.d("sonar-pro")},
                "pinecone": {"api_key": t.p("SECRET", "pcsk_05KdL_edZ9WwkPgNiFzdCLrJFUFZX15ttcbUm0pHy9hPwSbFGERKQGjLihAZXrBsnT"), "index": t.d("kb-prod-768")},
            },
            "route": {"default": "groq", "fallback": ["perplexity"]},
        }),
        system=f"You are the gateway admin assistant for {t.p('NAME', 'Thandiwe Mahlangu')}, platform lead. Escalate to her at {t.p('PHONE', '+27 82 519 4406')}.",
    )
    t.tool("keys.revoke_all", {"providers": ["groq", "replicate", "perplexity", "pinecone"], "ticket": t.d("SEC-2291")}, {"revoked": 4},
           style="spanname")
    t.reply("All four keys are revoked under SEC-2291; new ones are in the vault.")


def t_vet_practice_prose(t: Trace) -> None:
    """en: equine vet (US), dictated notes with surnames only after role words."""
    t.service = "vet-scribe"
    t.user(
        f"Dictation: farm call at {t.d('Willow Bend Stables')}. The barn manager, {t.p('NAME', 'Delacroix-Hayes')}, held the mare "
        f"({t.d('Duchess')}, {t.d('Hanoverian')}, chip {t.d('985141000637210')}). Owner {t.p('NAME', 'Augustina Bramblewood')} "
        f"was not present; her husband, Dr {t.p('NAME', 'Featherstonhaugh')}, will pay by card. Farrier {t.p('NAME', 'Quillfeather')} "
        f"to reshoe on {t.d('Dec 9')}. Coggins {t.d('CG-26-114093')} negative. Owner's social for the payment plan, which she insisted on "
        f"giving: {t.p('SSN', '529-31-4478')}."
    )
    t.tool("pms.invoice", {"client": t.d("C-44197"), "items": [t.d("EXAM-FARM"), t.d("XRAY-LIMB-2V")], "total": t.d("418.00")}, {"invoice": t.d("INV-90133")})
    t.reply("Invoice INV-90133 (418.00) is ready. I left the social security number out of the record.")


def t_hr_reference_letter(t: Trace) -> None:
    """en: HR, a reference letter with a signature block and a birth year."""
    t.service = "hr-writer"
    t.user(
        f"Polish this reference. Candidate: {t.p('NAME', 'Aigerim Nurlanovna Seitkali')}, b. {t.p('DOB', '12.vii.1989')}, worked with us "
        f"on the {t.d('Meridian Ledger')} project from {t.d('2019')} to {t.d('2024')}. She reported to me and to {t.p('NAME', 'Rasmus Holmgaard')}.\n\n"
        "Kind regards,\n"
        f"{t.p('NAME', 'Evangeline Coldwater-Pike')}\nHead of Engineering, {t.d('Northgate Analytics Ltd')}\n"
        f"M {t.p('PHONE', '+44 (0)7823 510 664')} | {t.p('EMAIL', 'e.coldwaterpike@northgate-analytics.co.uk')}\n"
        f"{t.d('Company No. 09822134')}"
    )
    t.reply("Here is a tightened version that keeps the dates (2019 to 2024) and the Meridian Ledger project.")


def t_insurance_ssn_claims(t: Trace) -> None:
    """en: health insurance claims (US), social security numbers in three layouts."""
    t.service = "claims-assistant"
    t.user(
        f"Match these three claims to members. {t.p('NAME', 'Delphine Okafor')}, SSN {t.p('SSN', '612 40 9183')}, "
        f"claim {t.d('CLM-2026-771204')}; {t.p('NAME', 'Rutger Vanderslice')}, SSN {t.p('SSN', '287459033')}, claim {t.d('CLM-2026-771205')}; "
        f"and the third has only the group number {t.d('GRP 00419-B')} and NPI {t.d('1447382910')}."
    )
    t.tool("members.match", {"claims": ["CLM-2026-771204", "CLM-2026-771205"], "plan": t.d("PPO Silver 3500")}, {"matched": 2})
    t.reply("Two claims matched; the third needs a member id.")


def t_estate_agent_vcard(t: Trace) -> None:
    """en: estate agent, an e-mail with a base64 vCard attachment and a CRM reference."""
    t.service = "lettings-inbox"
    t.root["flywheel.env.s0_ref"] = "crm://contacts/" + t.p("EMAIL", "gwendolyn.achebe-marsh@btinternet.com")
    vcard = (
        "BEGIN:VCARD\r\nVERSION:3.0\r\n"
        f"N:{t.p('NAME', 'Achebe-Marsh;Gwendolyn', ['Achebe-Marsh;Gwendolyn', 'Achebe', 'Marsh', 'Gwendolyn'])};;;\r\n"
        "FN:Gwendolyn Achebe-Marsh\r\n"
        f"TEL;TYPE=CELL:{t.p('PHONE', '+447402918337')}\r\n"
        f"ADR;TYPE=HOME:;;{t.p('ADDRESS', 'Flat 2, 19 Pemberton Road;Hove;;BN3 4QL;UK', ['Flat 2, 19 Pemberton Road', '19 Pemberton Road'])}\r\n"
        f"BDAY:{t.p('DOB', '19830722')}\r\n"
        "END:VCARD\r\n"
    )
    t.user(
        "New applicant e-mail for the viewing list:\n"
        "From: lettings@seafrontlets.co.uk\nSubject: Fwd: viewing for 4 Regency Mews\n"
        "Content-Type: multipart/mixed; boundary=\"b1_7f3a\"\n\n--b1_7f3a\nContent-Type: text/plain\n\n"
        f"Please book her for {t.d('4 Regency Mews')} ({t.d('listing SFL-2291')}, {t.d('£1,675 pcm')}) on Saturday.\n"
        "--b1_7f3a\nContent-Type: text/vcard; name=applicant.vcf\nContent-Transfer-Encoding: base64\n\n"
        f"{b64(vcard)}\n--b1_7f3a--"
    )
    t.tool("notion.append_row", {"database": t.d("f3b1c2d4e5a64789b0c1d2e3f4a5b6c7"), "token": t.p("SECRET", "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"),
                                 "row": {"listing": "SFL-2291", "slot": t.d("Sat 10:30")}}, {"ok": True}, style="spanname")
    t.reply("Booked for Saturday 10:30 at 4 Regency Mews.")


# ================================================================ Czech
def t_cs_lazne_rezervace(t: Trace) -> None:
    """cs: lázeňský dům, rezervace pobytu s rodným číslem."""
    t.service = "rezervace-lazne"
    t.user(
        f"Dobrý den, chtěla bych objednat pobyt v {t.d('Lázně Mlýnské')} pro maminku. Paní {t.p('NAME', 'Kočková')} se narodila "
        f"{t.p('DOB', '14. října 1957')}, rodné číslo {t.p('NATIONAL_ID', rodne_cislo('571014', '418', female=True))}, pojišťovna "
        f"{t.d('VZP 111')}. Bydlí na adrese {t.p('ADDRESS', 'Vinohradská 1543/84, 120 00 Praha 2')}. Procedury: {t.d('Vřídelní koupel')} a "
        f"{t.d('pitná kúra Mlýnský pramen')}, termín od {t.d('12. 1. 2027')}. Můj telefon {t.p('PHONE', '+420 603 418 772')}, "
        f"jsem {t.p('NAME', 'Pavla Kočková')} mladší."
    )
    t.tool("rezervace.vytvor", {"objekt": t.d("LD Vltava"), "noci": 14, "strava": "plná penze", "poukaz": t.d("K1-2027/00418")},
           {"cislo": t.d("RZ-27-03318"), "cena_czk": t.d("38 640")})
    t.tool("portal.ucet", {"login": "kockova.pavla", "heslo_docasne": "heslo je " + t.p("SECRET", "Vltava#Kocour77")}, {"ok": True}, style="oi")
    t.reply("Rezervace RZ-27-03318 je vytvořena, cena 38 640 Kč. Heslo do portálu si prosím po přihlášení změňte.")


def t_cs_sklarna_objednavka(t: Trace) -> None:
    """cs: sklárna, objednávka lustrů e-mailem s podpisem."""
    t.service = "obchod-sklarna"
    t.user(
        "Přeposílám objednávku:\n\n"
        f"Vážený pane {t.p('NAME', 'Vráno')},\n"
        f"objednáváme 6 lustrů {t.d('Maria Terezie 12ramenný')} a 40 sklenic řady {t.d('Bohemia Rhapsody')} podle nabídky {t.d('NAB-2026-1187')}. "
        f"Dodací adresa: {t.p('ADDRESS', 'Náměstí Míru 1207/12, 602 00 Brno')}. Fakturujte na {t.d('IČO ' + ico('2741938'))}, "
        f"platba z účtu {t.p('IBAN', iban('CZ', '03000000002718281828'))}.\n\n"
        "S pozdravem\n"
        f"Ing. {t.p('NAME', 'Radmila Šťastná')}\nvedoucí nákupu\n{t.p('PHONE', '737 219 804')}\n{t.p('EMAIL', 'radmila.stastna@hotelpodspilberkem.cz')}"
    )
    t.tool("erp.zakazka", {"nabidka": "NAB-2026-1187", "polozky": 2, "sklad": t.d("Nový Bor")}, {"zakazka": t.d("ZK-5521")})
    t.tool("outlook.reply[radmila.stastna@hotelpodspilberkem.cz]", {"sablona": t.d("potvrzeni-objednavky-v3"), "priloha": "ZK-5521.pdf"}, {"sent": True},
           style="spanname")
    t.reply("Zakázka ZK-5521 je založena; lustry Maria Terezie expedujeme z Nového Boru.")


def t_cs_hasici_clenove(t: Trace) -> None:
    """cs: sbor dobrovolných hasičů, seznam členů v YAML a zpráva v chatu."""
    t.service = "sdh-evidence"
    yaml = (
        "jednotka: JPO V\n"
        f"vozidla: [{t.d('Tatra 815 CAS 32')}, {t.d('Ford Transit DA-L1Z')}]\n"
        "clenove:\n"
        f"  - jmeno: {t.p('NAME', 'Jiří Dvořák')}\n    nar: {t.p('DOB', '3. 2. 1990')}\n    rc: {t.p('NATIONAL_ID', rodne_cislo('900203', '772'))}\n    funkce: velitel\n"
        f"  - jmeno: {t.p('NAME', 'Zdeněk Svoboda')}\n    nar: {t.p('DOB', '17.09.1961')}\n    rc: {t.p('NATIONAL_ID', rodne_cislo('610917', '035'))}\n    funkce: strojník\n"
    )
    t.user(
        f"Ahoj, posílám seznam na školení u {t.d('HZS Středočeského kraje')} v {t.d('Kolíně')}. Ještě přidej syna pana {t.p('NAME', 'Svobody')}, "
        f"narodil se {t.p('DOB', 'prvního května 2008')}, ať může na soutěž {t.d('Plamen 2027')}.\n{yaml}"
    )
    t.reply("Seznam je odeslán na HZS; syn je přidán do kategorie dorost pro Plamen 2027.")


# ================================================================ Romanian
def t_ro_culegatori_vie(t: Trace) -> None:
    """ro: podgorie, statul de plată al culegătorilor (CSV în JSON, nume cu MAJUSCULE)."""
    t.service = "salarizare-crama"
    csv = (
        "NUME Prenume;CNP;IBAN;zile;suma_lei\n"
        f"{t.p('NAME', 'POPESCU Ioana')};{t.p('NATIONAL_ID', cnp('2', '700422', '29', '116'))};{t.p('IBAN', iban('RO', 'INGB0000999901842716'))};{t.d('12')};{t.d('2.160,00')}\n"
        f"{t.p('NAME', 'LUPU Marin-Costel')};{t.p('NATIONAL_ID', cnp('1', '790223', '12', '047'))};{t.p('IBAN', iban('RO', 'BTRLRONCRT0CV4827193', spaced=True))};{t.d('9')};{t.d('1.620,00')}\n"
    )
    t.user(
        f"Generează ordinele de plată pentru culesul de {t.d('Fetească Neagră')} din {t.d('Dealu Mare')}, parcela {t.d('P-14')}. "
        f"Tanti {t.p('NAME', 'Veta')}, cea mai în vârstă din echipă (născută în {t.p('DOB', '1948')}), vrea banii în mână, nu în cont."
    )
    t.tool("banca.ordine_plata", {"platitor_cui": t.d("RO 18472634"), "lot": t.d("CULES-2026-09"), "fisier": json.dumps({"sep": ";", "csv": csv}, ensure_ascii=False)},
           {"ordine": 2, "status": "trimise"})
    t.reply("Am trimis 2 ordine de plată (lotul CULES-2026-09). Plata în numerar pentru tanti se face la cramă.")


def t_ro_outsourcing_it(t: Trace) -> None:
    """ro: firmă de outsourcing IT, onboarding prin chat cu parolă în proză."""
    t.service = "onboarding-bot"
    t.user(
        f"salut, sunt noul coleg din echipa {t.d('Carpați')} (proiect {t.d('HR-4412')}). domnul {t.p('NAME', 'Lupașcu')} mi-a zis să-ți scriu. "
        f"contul de Jira e creat, parola este {t.p('SECRET', 'Zmeura!2019Brasov')} și tokenul de API e "
        f"{t.p('SECRET', 'ATATT3xFfGF0TxyftjyDPt-LAt50JhwbpcbNwpHXQZ8kvTvPcIpA-A1hZT1xYjpfYj72vMS-kGs6jm2xxE6PcE55yJ5IcwYv-szNVHWPQemvvdHGqn1mXndnjxuGa7dEul8ErRUAR6qxWNpVJZFFUEu1-3gcxP-7PjNS8HUE_Pfz=N5HS4TC0')}. "
        f"laptopul {t.d('ThinkPad T14 Gen 5')} îl ridic de la sediu, {t.p('ADDRESS', 'Str. Avram Iancu nr. 17, bl. C4, sc. B, ap. 32, sector 3, București 031282', ['Str. Avram Iancu nr. 17'])}? "
        f"nu, asta e adresa mea de acasă, scuze. telefon {t.p('PHONE', '0722 418 903')}."
    )
    t.tool("jira.verify_token", {"site": t.d("carpati-dev.atlassian.net"), "email": t.p("EMAIL", "andrei.cozma@carpatisoft.ro")}, {"valid": True},
           style="spanname")
    t.reply("Tokenul funcționează. Te rog schimbă parola acum, a fost scrisă în chat.")


def t_ro_medic_familie(t: Trace) -> None:
    """ro: cabinet de medicină de familie, programare prin SMS."""
    t.service = "cabinet-programari"
    t.user(
        "SMS primit:\n"
        f"\"Buna ziua, sunt d-na {t.p('NAME', 'Munteanu')}, pacienta dr. {t.p('NAME', 'Bălănescu')}. Data nasterii {t.p('DOB', '07.11.1963')}, "
        f"CNP {t.p('NATIONAL_ID', cnp('2', '631107', '40', '218'))}. As vrea o trimitere la "
        f"{t.d('Spitalul Colentina')} pentru analize, si reteta compensata pentru {t.d('Metformin 850')}. Ma puteti suna la {t.p('PHONE', '+40 21 312 4470')}.\"\n"
        f"Nepotul ei, {t.p('NAME', 'Ștefan-Radu Ionescu')}, născut {t.p('DOB', '15 septembrie 2002')}, cere și el o adeverință pentru facultate "
        f"(CNP {t.p('NATIONAL_ID', cnp('5', '020915', '05', '331'))})."
    )
    t.tool("dosar_pacient_Munteanu.citeste", {"campuri": ["alergii", "tratament_cronic"]}, {"alergii": "penicilina", "tratament_cronic": "Metformin 850"},
           style="spanname")
    t.tool("sipe.programare", {"data": t.d("2026-12-07 10:20"), "tip": "consultatie", "cod_diagnostic": t.d("E11")}, {"id": t.d("PRG-88104")}, style="oi")
    t.reply("Programarea PRG-88104 e pe 7 decembrie la 10:20. Adeverința pentru facultate se eliberează la cabinet.")


# ================================================================ Greek (Greek script and Latin)
def t_el_frontistirio(t: Trace) -> None:
    """el: φροντιστήριο, εγγραφή μαθητή από γονέα."""
    t.service = "frontistirio-grammateia"
    t.user(
        f"Καλησπέρα σας, θα ήθελα να γράψω τον γιο μου, {t.p('NAME', 'Νικόλαο Παπαδάκη')}, στο τμήμα {t.d('Πανελλήνιες 2027')} "
        f"(Θετική Κατεύθυνση, {t.d('Τμήμα Β2')}). Γεννήθηκε στις {t.p('DOB', '12 Μαρτίου 2009')}, ΑΜΚΑ {t.p('NATIONAL_ID', amka('120309', '0417'))}. "
        f"Μένουμε στη {t.p('ADDRESS', 'Λεωφόρο Κηφισίας 218, 151 24 Μαρούσι', ['Λεωφόρο Κηφισίας 218'])}. Το κινητό μου είναι "
        f"{t.p('PHONE', '697 412 5583')}. Με εκτίμηση, {t.p('NAME', 'Ευαγγελία Σταυροπούλου')}"
    )
    t.tool("mitroo.eggrafi", {"tmima": "Β2", "didaktra_eur": t.d("1.450"), "vivlia": [t.d("Μαθηματικά Προσανατολισμού Γ΄ Λυκείου")]},
           {"arithmos_mitroou": t.d("ΦΡ-27-0318")})
    t.reply("Η εγγραφή ολοκληρώθηκε με αριθμό μητρώου ΦΡ-27-0318. Η κυρία Σταυροπούλου θα λάβει τον λογαριασμό με e-mail.")


def t_el_elaiolado_export(t: Trace) -> None:
    """el: εξαγωγέας ελαιολάδου, παραλαβή από παραγωγό με ΑΦΜ και κωδικό."""
    t.service = "exagoges-elaiolado"
    t.user(
        f"Παραλάβαμε 2.400 κιλά {t.d('Κορωνέικη')} από τον κ. {t.p('NAME', 'Γεωργιάδη')}, παρτίδα {t.d('ΚΑΛ-26-0917')}, {t.d('Καλαμάτα ΠΟΠ')}, "
        f"οξύτητα {t.d('0,28%')}. Πληρωμή στον λογαριασμό του {t.p('IBAN', iban('GR', '01720350005035068142731'))}, ΑΦΜ {t.p('NATIONAL_ID', afm('04728315'))}, "
        f"ΔΟΥ {t.d('Καλαμάτας')}. Για το portal του τελωνείου ο κωδικός είναι {t.p('SECRET', 'Elia#Messinia2026')} και ο χρήστης {t.d('exagogi_kal01')}."
    )
    t.tool("icisnet.declaration", {"eori": t.d("GR094718263"), "hs": t.d("1509 20 00"), "dest": "DE", "kg": 2400}, {"mrn": t.d("26GR000310004418E7")})
    t.reply("Η διασάφηση εξαγωγής κατατέθηκε (MRN 26GR000310004418E7). Αλλάξτε τον κωδικό του portal, γράφτηκε σε μήνυμα.")


def t_el_domatia_greeklish(t: Trace) -> None:
    """el: ενοικιαζόμενα δωμάτια, chat σε greeklish (λατινικοί χαρακτήρες)."""
    t.service = "domatia-kratiseis"
    t.slice = "kratiseis-" + t.p("NAME", "chrysoula-anagnostaki")
    t.user(
        f"kalispera! to onoma mou einai {t.p('NAME', 'Chrysoula Anagnostaki')}, thelw ena diklino apo {t.d('10 ews 17 Iouliou')} sto {t.d('Villa Ariadne')} "
        f"konta ston {t.d('Agios Nikolaos')}. gennithika {t.p('DOB', '3 Iouniou 1982')} kai exw ekptwsi melous {t.d('Club Kriti Gold')}. "
        f"tilefwno {t.p('PHONE', '+30 694 308 1275')}, email {t.p('EMAIL', 'chrysanagn82@yahoo.gr')}. "
        f"tha erthei kai o adelfos mou o {t.p('NAME', 'Stelios')} me tin {t.d('Vespa GTS 300')} tou."
    )
    t.tool("pms.availability", {"property": "Villa Ariadne", "from": t.d("2027-07-10"), "to": t.d("2027-07-17"), "room_type": t.d("DBL-SEA")},
           {"available": True, "rate_eur": t.d("96")})
    t.reply("Yparxei diathesimo diklino me thea thalassa, 96 eurw ti vradia.")


def t_el_hotel_checkin_latin(t: Trace) -> None:
    """el: ξενοδοχείο, check-in με στοιχεία διαβατηρίου σε λατινικά κεφαλαία."""
    t.service = "hotel-checkin"
    t.user(
        "Guest registration scanned at reception (Greek passport, Latin fields):\n"
        + json.dumps({
            "surname": t.p("NAME", "KARAGIANNI"),
            "given_names": t.p("NAME", "ANASTASIA-MYRTO"),
            "date_of_birth": t.p("DOB", "05 SEP 74"),
            "amka": t.p("NATIONAL_ID", amka("050974", "1182")),
            "home": t.p("ADDRESS", "ODOS TSIMISKI 71, 546 22 THESSALONIKI", ["ODOS TSIMISKI 71"]),
            "room": t.d("412"),
            "rate_code": t.d("BAR-FLEX"),
            "booking": t.d("HB-77310-GR"),
        })
    )
    t.tool("police.guest_report", {"property_mhte": t.d("0933K014A0187100"), "nights": 3}, {"submitted": True})
    t.reply("Guest report submitted for room 412, three nights.")


# ================================================================ Danish
def t_da_vindmoelle_service(t: Trace) -> None:
    """da: servicefirma for vindmøller, vagtplan og adgang til parken."""
    t.service = "service-planlaegning"
    t.user(
        f"Vagtplan for uge 50 på {t.d('Horns Rev 3')}: montør {t.p('NAME', 'Bonde')} og {t.p('NAME', 'Kasper Juul Mikkelsen')} tager {t.d('WTG-17')} "
        f"og {t.d('WTG-22')} ({t.d('Vestas V164-8.0')}). Kasper har CPR {t.p('NATIONAL_ID', cpr('240358', '412'))} til GWO-kurset hos {t.d('Maersk Training')}. "
        f"Adgangskoden til servicebåden er {t.p('SECRET', 'Skagerrak-Hav-2026')}. Ring til {t.p('PHONE', '+45 28 91 47 33')} hvis vejret ændrer sig."
    )
    t.tool("gwo.booking", {"kursus": t.d("GWO BST Refresher"), "dato": t.d("2026-12-15"), "virksomhed_cvr": t.d(cvr("3718452"))}, {"booking": t.d("MT-44183")})
    t.reply("Kurset er booket (MT-44183). Jeg har ikke gemt CPR-nummeret i planen.")


def t_da_efterskole_ansoegning(t: Trace) -> None:
    """da: efterskole, ansøgning fra en forælder med barnets fødselsdato."""
    t.service = "efterskole-optagelse"
    t.user(
        f"Hej. Vores datter {t.p('NAME', 'Freja Lykke Søndergaard')} søger ind på {t.d('Vestjyllands Idrætsefterskole')} til skoleåret {t.d('2026/27')}. "
        f"Hun er født den {t.p('DOB', '9. juli 2010')}, CPR {t.p('NATIONAL_ID', cpr('090710', '418'))}. Vi bor på "
        f"{t.p('ADDRESS', 'Nørrebrogade 112, 3. tv., 2200 København N', ['Nørrebrogade 112'])}. Linje: {t.d('Fodbold & Friluft')}. "
        f"Mvh {t.p('NAME', 'Mette Skovgaard-Holm')}, mor, {t.p('PHONE', '31 64 20 58')}, {t.p('EMAIL', 'mette.s.holm@mail.dk')}"
    )
    t.tool("optagelse.opret", {"linje": "Fodbold & Friluft", "statstilskud_sats": t.d("sats 4"), "depositum_dkk": t.d("2.500")},
           {"elevnr": t.d("VIE-27-0412")}, style="oi")
    t.tool("betaling.depositum", {"kort": t.p("CARD", card("501971528830614")), "kortholder": "mor", "beloeb": "2.500"}, {"status": "godkendt"})
    t.reply("Ansøgningen er registreret som VIE-27-0412. Depositum på 2.500 kr. er betalt med Dankort.")


def t_da_kolonihave(t: Trace) -> None:
    """da: kolonihaveforening, medlemsliste og kontingent."""
    t.service = "haveforening-kasserer"
    t.user(
        f"Opdatér listen for {t.d('Haveforeningen Rosenly')}: have {t.d('nr. 47')} overgår fra {t.p('NAME', 'Birthe Bach')} (f. {t.p('DOB', '24.12.1958')}, "
        f"hun er flyttet på plejehjem) til {t.p('NAME', 'Ole Lund-Thygesen')}. Kontingentet på {t.d('1.850 kr.')} trækkes fra {t.p('IBAN', iban('DK', '52950010874213'))}. "
        f"Formanden, fru {t.p('NAME', 'Kjærsgaard')}, vil gerne have hans mail: {t.p('EMAIL', 'olelund.t@webspeed.dk')}. "
        f"Ole er født i {t.p('DOB', '1939')}, så han får seniorrabat."
    )
    t.tool("medlemmer.overdrag", {"have": 47, "vurdering_dkk": t.d("118.000"), "vurderingsmand": t.d("Kolonihaveforbundet kreds 3")}, {"ok": True})
    t.reply("Have nr. 47 er overdraget, og seniorrabatten er sat.")


# ================================================================ Norwegian (bokmål, nynorsk)
def t_nb_lakseoppdrett(t: Trace) -> None:
    """nb: lakseoppdrett, mannskapsliste og lønn via Vipps."""
    t.service = "mannskap-havbruk"
    t.user(
        f"Ny røkter på {t.d('Lokalitet Hamnholmen')} fra mandag: {t.p('NAME', 'Sigrun Strand')}, fødselsnummer {t.p('NATIONAL_ID', fnr('110886', '214'))}. "
        f"Hun bor i {t.p('ADDRESS', 'Kjelsåsveien 17 H0203, 0488 Oslo', ['Kjelsåsveien 17 H0203'])} til hun finner noe i {t.d('Hitra')}. "
        f"Lønn til konto {t.p('IBAN', iban('NO', kontonr('1503418720')))}. Skiftleder er {t.p('NAME', 'Strøm')}, og røkter Strand går på {t.d('merd 6')} "
        f"med {t.d('Polarcirkel 500')}-båten. Mobil {t.p('PHONE', '917 24 583')}."
    )
    t.tool("vipps.payout", {"merchant": t.d(orgnr("98217364")), "ocp_apim_subscription_key": t.p("SECRET", "3aafcdb1d8fc8f79749bd736b2d3598c"),
                            "reference": t.d("LONN-2026-12")}, {"status": "queued"}, style="oi")
    t.reply("Hun er lagt inn i mannskapslisten for Hamnholmen. Lønnskjøringen LONN-2026-12 er satt i kø.")


def t_nb_skiklubb(t: Trace) -> None:
    """nb: skiklubb, påmelding av barn med fødselsdato nær 17. mai."""
    t.service = "skiklubb-pamelding"
    t.user(
        f"Hei! Jeg vil melde på {t.p('NAME', 'Ingvild Haugen Lie')} til {t.d('Holmenkollen Skimaraton')} barneløp og {t.d('Tine Skikarusell')}. "
        f"Hun er født {t.p('DOB', '17. mai 2014')}, så hun går i klasse J12. Fødselsnummeret er {t.p('NATIONAL_ID', fnr('170514', '547'))}. "
        f"Hun går sammen med {t.d('17. mai-toget')} fra skolen, så hun kan ikke trene den dagen. "
        f"Hilsen {t.p('NAME', 'Torgeir Haugen')}, {t.p('PHONE', '+47 22 41 08 77')}"
    )
    t.tool("minidrett.pamelding", {"arrangement": t.d("HSM-2027-BARN"), "klasse": "J12", "lisens": False, "avgift_nok": t.d("150")},
           {"id": t.d("MI-8830172")})
    t.reply("Påmeldt (MI-8830172), avgift 150 kr.")


def t_nn_jaktkort(t: Trace) -> None:
    """nb: jakt- og fiskekort på nynorsk, med passord i klartekst."""
    t.service = "fjellstyre-kort"
    t.user(
        f"Hei, eg vil kjøpe småviltkort for {t.d('Vågå statsallmenning')} for {t.d('sesongen 2026/27')}. Eg heiter {t.p('NAME', 'Aslaug Tveit')}, "
        f"fødd {t.p('DOB', '2. januar 1993')}, jegernummer {t.d('JN 2210473')}. Brukaren min på inatur er {t.p('EMAIL', 'aslaug.tveit@online.no')} "
        f"og passordet er {t.p('SECRET', 'Rypejakt_Lesja93')}, kan du logge inn og fikse det? Adresse: "
        f"{t.p('ADDRESS', 'Øvre Tveitvegen 4, 2680 Vågå', ['Øvre Tveitvegen 4'])}."
    )
    t.tool("inatur.kjop", {"produkt": t.d("SMV-VAAGA-SES"), "pris_nok": t.d("1 100")}, {"kortnr": t.d("IN-26-551902")}, style="spanname")
    t.reply("Kortet er kjøpt (IN-26-551902). Eg har ikkje lagra passordet ditt; endre det gjerne no.")


def t_nb_driftshendelse(t: Trace) -> None:
    """nb: driftshendelse hos en nettbutikk, runbook med nøkler og break-glass-konto."""
    t.service = "hendelse-koordinator"
    t.user(
        f"Vi har en P1 på {t.d('kassen i nettbutikken')}. Hendelsesleder er {t.p('NAME', 'Håkon Kvalheim')}, vakttelefon {t.p('PHONE', '+47 934 18 205')}. "
        "Følg runbooken:\n"
        f"1. Utløs PagerDuty: routing_key {t.p('SECRET', '5b1f2a5cf2ddc45a4faddd84aa2e9d67')}, dedup_key {t.d('chk-p1-20261202')}\n"
        f"2. Tøm cachen: curl -H \"Authorization: Bearer {t.p('SECRET', '89grZm-1TyUSLGaeJ_ZqUd73MgfXG-HkZpYv4NAZ')}\" "
        f"https://api.cloudflare.com/client/v4/zones/{t.d('4f1e2d3c4b5a69788796a5b4c3d2e1f0')}/purge_cache\n"
        f"3. Opprett sak i Linear med nøkkelen {t.p('SECRET', 'lin_api_twvRT51XVX8bsC6lxIe6ktEiwRJjJfzUeHe2Izdq')}\n"
        f"4. Break-glass-kontoen: brukernavn {t.d('breakglass-ops')}, passord {t.p('SECRET', 'Fjordhest*Lyngen*2026')}, "
        f"TOTP otpauth://totp/Nettbutikk:breakglass-ops?secret={t.p('SECRET', 'FJRCIKFCDEYZO7KOGPYMIADHXMGQ2YRQ')}&issuer=Nettbutikk\n"
    )
    t.tool("pagerduty.trigger", {"summary": "Checkout 5xx > 20 %", "severity": "critical", "source": t.d("chk-api-7c9f4d-x2lq")}, {"status": "success"})
    t.tool("linear.create_issue", {"team": t.d("CHK"), "title": t.d("P1: checkout 5xx etter utrulling 4.18.2")}, {"identifier": t.d("CHK-1187")})
    t.reply("PagerDuty er utløst og CHK-1187 er opprettet. Bytt passordet og TOTP-hemmeligheten for break-glass-kontoen, de sto i klartekst i chatten.")


# ================================================================ Catalan
def t_ca_castellers(t: Trace) -> None:
    """ca: colla castellera, alta de socis i assegurança."""
    t.service = "colla-secretaria"
    t.user(
        f"Bon dia! Doneu d'alta a la colla en {t.p('NAME', 'Jordi Puig i Serra')} i la seva filla, la {t.p('NAME', 'Martina')}, que farà d'enxaneta. "
        f"La nena va néixer el {t.p('DOB', '3 de novembre del 2016')}. En Jordi, nascut l'{t.p('DOB', '11 d’abril de 1981')}, té el DNI "
        f"{t.p('NATIONAL_ID', dni('47812396'))}. Assajos a la {t.d('Plaça de Sant Jaume')} els dimecres; volem provar el {t.d('3 de 9 amb folre')} "
        f"per la {t.d('Diada de Sant Fèlix')}. Camisa talla {t.d('M')}, color {t.d('verd ampolla')}."
    )
    t.tool("assegurances.alta", {"polissa": t.d("FCC-2027-00418"), "persones": 2, "quota_eur": t.d("45,00")}, {"ok": True})
    t.reply("Alta feta a la pòlissa FCC-2027-00418. Benvinguts a la colla!")


def t_ca_cooperativa(t: Trace) -> None:
    """ca: cooperativa agrícola, liquidació de la collita a un soci."""
    t.service = "cooperativa-liquidacions"
    t.user(
        f"Liquida la collita d'ametlla {t.d('Marcona')} i {t.d('Vairo')} d'en {t.p('NAME', 'Pere Roca')} (soci {t.d('núm. 1187')}): "
        f"{t.d('3.420 kg')} a {t.d('4,15 €/kg')}. Compte {t.p('IBAN', iban('ES', '21003872050201458736', spaced=True))}. "
        f"L'adreça fiscal és {t.p('ADDRESS', 'Carrer Major, 23, 2n 1a, 25300 Tàrrega', ['Carrer Major, 23'])}. "
        f"Per entrar a l'aplicació de la cooperativa, la contrasenya és {t.p('SECRET', 'Ametller.Urgell#58')} (me l'ha dit ell mateix per telèfon). "
        f"El seu mòbil: {t.p('PHONE', '689 21 47 30')}."
    )
    t.tool("erp.liquidacio", {"campanya": t.d("2026"), "parcel·la": t.d("SIGPAC 25:218:0:0:14:77"), "retencio_irpf": t.d("2%")},
           {"document": t.d("LIQ-26-0911")})
    t.reply("Liquidació LIQ-26-0911 feta. Si us plau, que canviï la contrasenya.")


def t_ca_urgencies(t: Trace) -> None:
    """ca: urgències d'un hospital comarcal, triatge d'una pacient estrangera."""
    t.service = "triatge-urgencies"
    t.user(
        f"Triatge box 3: la senyora {t.p('NAME', 'Lindiwe Dube-Ferrer')}, resident amb NIE {t.p('NATIONAL_ID', nie('Y', '3841275'))}. "
        f"Data de naixement: {t.p('DOB', '29/02/1972')}. Nivell {t.d('MAT 3')}, dolor toràcic, {t.d('ECG 08:41')} normal. "
        f"Contacte: el marit, {t.p('NAME', 'Gerard')}, {t.p('PHONE', '+34 934 127 855')}. Metgessa: la doctora {t.p('NAME', 'Vilaseca')}."
    )
    t.tool("hces.episodi", {"centre": t.d("Hospital de Sant Bernabé"), "codi_triatge": "MAT-3", "sintoma": t.d("R07.4")}, {"episodi": t.d("URG-26-118830")})
    t.reply("Episodi URG-26-118830 obert. La pacient queda en observació.")


# ================================================================ Indonesian
def t_id_sekolah_selancar(t: Trace) -> None:
    """id: sekolah selancar di Bali, data instruktur dan kunci Midtrans."""
    t.service = "surf-school-admin"
    t.user(
        f"Tolong daftarkan instruktur baru: {t.p('NAME', 'I Wayan Sudarsana')}, lahir {t.p('DOB', '17 Agustus 1984')} di Gianyar, "
        f"NIK {t.p('NATIONAL_ID', nik('510403', '170884', '0031'))}. Dia menggantikan {t.p('NAME', 'Ketut')} yang pindah ke {t.d('Uluwatu')}. "
        f"Alamat: {t.p('ADDRESS', 'Jl. Raya Ubud No. 27, Banjar Kutuh, Ubud, Gianyar, Bali 80571', ['Jl. Raya Ubud No. 27'])}. "
        f"WA {t.p('PHONE', '0812-3845-2271')}. Libur kantor saat {t.d('HUT RI 17 Agustus')} dan {t.d('Nyepi')}. Papan: {t.d('Softech 8ft')}."
    )
    t.tool("midtrans.create_payout_beneficiary", {"server_key": t.p("SECRET", "Mid-server-4XGCuppe-5bO3EfAkAGyZ4Pl"),
                                                  "bank": t.d("bca"), "account": t.d("SKS-PAYROLL")}, {"status": "ok"}, style="oi")
    t.reply("Instruktur baru sudah terdaftar dan rekening gaji sudah ditambahkan.")


def t_id_koperasi_kopi(t: Trace) -> None:
    """id: koperasi kopi, setoran petani dan kunci Xendit."""
    t.service = "koperasi-kopi"
    t.user(
        f"Pak {t.p('NAME', 'Sutrisno')} setor {t.d('412 kg')} gelondong merah {t.d('Arabika Gayo')}, lot {t.d('GAYO-26-1187')}, kadar air {t.d('12,5%')}. "
        f"NPWP beliau {t.p('NATIONAL_ID', npwp('04812739', '421000'))}. Bayar ke rekening BRI atas nama istrinya, Ibu {t.p('NAME', 'Siti Nurhaliza Harahap')}. "
        f"Kata sandinya untuk aplikasi koperasi {t.p('SECRET', 'kopigayo#Takengon88')}, tolong jangan disebar. Tahun lahirnya {t.p('DOB', '1975')}, kata beliau."
    )
    t.tool("xendit.disbursement", {"api_key": t.p("SECRET", "xnd_production_Jhd2ie6FtHGKYZGYq375KSiymEY52tBt31jEfC0oJw02dOw3Hg"),
                                   "external_id": t.d("KOP-SETOR-0911"), "amount": t.d("3605600"), "bank_code": "BRI"}, {"status": "PENDING"})
    t.reply("Pembayaran Rp 3.605.600 sedang diproses (KOP-SETOR-0911).")


def t_id_sewa_motor(t: Trace) -> None:
    """id: sewa motor, hasil OCR KTP dalam JSON."""
    t.service = "rental-motor"
    ktp = {
        "NIK": t.p("NATIONAL_ID", nik("517101", "080391", "0007", female=True)),
        "Nama": t.p("NAME", "NI MADE AYU PRADNYANI"),
        "Tempat/Tgl Lahir": "DENPASAR, " + t.p("DOB", "08-03-1991"),
        "Alamat": t.p("ADDRESS", "JL. GATOT SUBROTO TIMUR GG. MAWAR NO. 9", ["JL. GATOT SUBROTO TIMUR GG. MAWAR NO. 9"]),
        "RT/RW": "004/002",
        "Kel/Desa": "TONJA",
        "Pekerjaan": "KARYAWAN SWASTA",
    }
    t.user("Scan KTP penyewa untuk motor " + t.d("Honda Vario 160") + ", plat " + t.d("DK 4821 AB") + ". Hasil OCR: " + json.dumps(ktp))
    t.tool("rental.kontrak", {"motor": "Honda Vario 160", "hari": 7, "deposit_idr": t.d("500000"), "kontak": t.p("PHONE", "+62 361 974 218")},
           {"kontrak": t.d("SM-26-0412")}, style="spanname")
    t.reply("Kontrak SM-26-0412 sudah dibuat untuk 7 hari.")


# ================================================================ Brazilian Portuguese
def t_br_capoeira(t: Trace) -> None:
    """pt-BR: academia de capoeira, matrícula e mensalidade por Pix."""
    t.service = "academia-secretaria"
    t.user(
        f"Oi! Quero matricular meu filho na turma infantil do {t.d('Grupo Cordão de Ouro Lapa')}. Ele se chama {t.p('NAME', 'Davi Lucca Nascimento')}, "
        f"nascido em {t.p('DOB', '22/04/2015')}, CPF {t.p('NATIONAL_ID', cpf('384271905'))}. O apelido que o professor deu é Gafanhoto. "
        f"Eu sou a {t.p('NAME', 'Flor de Liz Conceição')}, a chave Pix para a mensalidade é meu celular {t.p('PHONE', '(21) 99734-8210')}. "
        f"Ele vai na {t.d('Roda de sábado')} com o Contramestre Jacaré."
    )
    t.tool("financeiro.cobranca", {"plano": t.d("Infantil 2x semana"), "valor_brl": t.d("140,00"), "recebedor_cnpj": t.d(cnpj("274193580001"))},
           {"cobranca": t.d("COB-2026-4471")})
    t.reply("Matrícula feita! A cobrança COB-2026-4471 de R$ 140,00 chega pelo Pix.")


def t_br_motorista_app(t: Trace) -> None:
    """pt-BR: cadastro de motorista de aplicativo, com token do Mercado Pago e cartão Elo."""
    t.service = "cadastro-motoristas"
    elo = card("636368120447591")
    t.user(
        f"Cadastro do motorista {t.p('NAME', 'Josué Bezerra da Silva')}, CPF {t.p('NATIONAL_ID', cpf('517093286'))}, data de nascimento "
        f"{t.p('DOB', '30 de junho de 1988')}. Endereço: {t.p('ADDRESS', 'Rua Augusta, 1502, apto 74, Consolação, São Paulo - SP, 01304-001', ['Rua Augusta, 1502'])}. "
        f"Carro {t.d('Onix Plus 2023')}, placa RIO2A18, RENAVAM 01287465390. A senha do app é {t.p('SECRET', 'Corinthians@1910josue')}, "
        f"e o cartão para a taxa é o Elo {t.p('CARD', elo)}."
    )
    t.tool("mercadopago.connect", {"access_token": t.p("SECRET", "APP_USR-2967851505465751-944308-09a76ffbe2d51d4248d3aeb8311269a4-391681403"),
                                   "collector_id": t.d("391681403")}, {"ok": True})
    t.reply("Cadastro enviado para análise. Peça ao motorista para trocar a senha, que foi enviada em texto.")


def t_br_telemedicina(t: Trace) -> None:
    """pt-BR: telemedicina, resumo de consulta com CNS e médica."""
    t.service = "telemedicina-resumo"
    t.user(
        f"Resumo da teleconsulta: paciente {t.p('NAME', 'Raimunda Quitéria Alves')}, nasceu no dia {t.p('DOB', '1º de dezembro de 1959')}, "
        f"CNS {t.p('NATIONAL_ID', cns('70048127391035'))}. Atendida pela Dra. {t.p('NAME', 'Arruda Cavalcanti')} ({t.d('CRM-PE 24871')}). "
        f"Hipótese {t.d('CID-10 I10')} e {t.d('E11.9')}. Receita de {t.d('Losartana 50 mg')}. Mora em {t.p('ADDRESS', 'Rua do Bom Jesus, 183, Recife Antigo, Recife - PE, 50030-170', ['Rua do Bom Jesus, 183'])}; "
        f"e-mail da filha: {t.p('EMAIL', 'quiteria.alves.filha@gmail.com')}."
    )
    t.tool("prontuario.salvar", {"consulta": t.d("TC-26-118204"), "duracao_min": 18, "cid": ["I10", "E11.9"]}, {"ok": True}, style="oi")
    t.reply("Resumo salvo no prontuário (TC-26-118204).")


# ================================================================ Swiss German
def t_gsw_uhrmacher(t: Trace) -> None:
    """gsw: Uhrmacher-Atelier, Revision per Chat auf Schweizerdeutsch."""
    t.service = "atelier-revisione"
    t.user(
        f"Grüezi mitenand, ich bi de {t.p('NAME', 'Reto Gerber')} und han mini {t.d('Omega Speedmaster')} ({t.d('Kaliber 321')}, {t.d('Ref. 105.003')}) "
        f"bi öich zur Revision. Chönd Sie mer d Rächnig a {t.p('ADDRESS', 'Bahnhofstrasse 12a, 8400 Winterthur', ['Bahnhofstrasse 12a'])} schicke? "
        f"Für d Garantie bruuchet er mini AHV-Nummere, hät de Herr {t.p('NAME', 'Bühlmann')} gseit: {t.p('NATIONAL_ID', ahv('431872091'))}. "
        f"Und s Passwort für s Kundeportal isch {t.p('SECRET', 'Sächsilüüte1968!')}. Am beschte erreichet Sie mi unter {t.p('PHONE', '079 418 27 63')}."
    )
    t.tool("werkstatt.auftrag", {"auftrag": t.d("REV-26-0933"), "uid": t.d(che_uid("41738205")), "preis_chf": t.d("1'250.–")}, {"status": "in Arbeit"})
    t.reply("Merci vilmal! Ihre Uhr ist unter REV-26-0933 in Arbeit, Kostenvoranschlag CHF 1'250.–.")


def t_gsw_guggenmusik(t: Trace) -> None:
    """gsw: Guggenmusik, Mitgliederliste und Jahresbeitrag."""
    t.service = "gugge-kassier"
    t.user(
        f"Hoi zäme, für d {t.d('Fasnacht 2027')} bruuchi no d Liste für d Versicherig. Neu debii: d {t.p('NAME', 'Vreni Brunner-Zürcher')} "
        f"(Jahrgang {t.p('DOB', '1952')}, spielt {t.d('Pauke')}) und de {t.p('NAME', 'Beat Frei')}, gebore am {t.p('DOB', '1.3.77')}, AHV "
        f"{t.p('NATIONAL_ID', ahv('902417365'))}. De Beat zahlt de Biitrag vo {t.d('CHF 180')} vo sim Konto "
        f"{t.p('IBAN', iban('CH', '00700110004186293', spaced=True))}. Treffpunkt {t.d('Morgestraich')} am {t.d('Barfüsserplatz')}, 04:00. "
        f"Fragä a {t.p('EMAIL', 'vreni.brunner@bluewin.ch')}."
    )
    t.tool("versicherig.meldig", {"verein": t.d("Gugge Rätschbäse 1983"), "mitglieder": 2, "police": t.d("MOB-44-771203")}, {"ok": True}, style="oi")
    t.reply("D Versicherig isch gmäldet (MOB-44-771203).")


WRITERS = [
    t_blood_donor_deferral,
    t_funeral_home_arrangements,
    t_driving_school_lessons,
    t_hearing_aid_clinic,
    t_observatory_booking,
    t_tattoo_consent,
    t_marathon_registration,
    t_elevator_maintenance,
    t_scim_provisioning,
    t_crash_report,
    t_wireguard_vpn,
    t_warehouse_query,
    t_mail_server_logs,
    t_feature_flags,
    t_gaa_club_registration,
    t_turf_delivery,
    t_stable_entries,
    t_payments_webhook,
    t_terraform_state,
    t_llm_gateway_keys,
    t_vet_practice_prose,
    t_hr_reference_letter,
    t_insurance_ssn_claims,
    t_estate_agent_vcard,
    t_cs_lazne_rezervace,
    t_cs_sklarna_objednavka,
    t_cs_hasici_clenove,
    t_ro_culegatori_vie,
    t_ro_outsourcing_it,
    t_ro_medic_familie,
    t_el_frontistirio,
    t_el_elaiolado_export,
    t_el_domatia_greeklish,
    t_el_hotel_checkin_latin,
    t_da_vindmoelle_service,
    t_da_efterskole_ansoegning,
    t_da_kolonihave,
    t_nb_lakseoppdrett,
    t_nb_skiklubb,
    t_nn_jaktkort,
    t_nb_driftshendelse,
    t_ca_castellers,
    t_ca_cooperativa,
    t_ca_urgencies,
    t_id_sekolah_selancar,
    t_id_koperasi_kopi,
    t_id_sewa_motor,
    t_br_capoeira,
    t_br_motorista_app,
    t_br_telemedicina,
    t_gsw_uhrmacher,
    t_gsw_guggenmusik,
]
