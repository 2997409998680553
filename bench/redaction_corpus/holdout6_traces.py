"""Sixth blind redaction corpus (issue 20): 50 agent traces, hand-written in one sitting.

Written without reading the detectors, their tests or the earlier corpora's traces
(see README.md, section holdout6). Every personal or secret value goes through
``t.p(TYPE, value)``, every look-alike that must survive through ``t.d(value)``.

National ids carry check characters computed with python-stdnum 2.2 in a scratch
virtualenv outside the repository and typed in here; IBANs and cards use
``_kit.iban`` / ``_kit.luhn``. Key material is derived from a seed by ``_rand`` so that
the file stays readable; none of it is a real credential.
"""

# ruff: noqa: E501  (hand-written message text: long lines read better unbroken)
from __future__ import annotations

import hashlib
import json
import string

from _kit import Trace, b64, iban, jwt, luhn, urlenc

_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_UPPER = string.ascii_uppercase + string.digits


def _rand(seed: str, n: int, alphabet: str = _ALNUM) -> str:
    """``n`` characters of ``alphabet`` derived from ``seed`` (stands in for key material)."""
    out: list[str] = []
    i = 0
    while len(out) < n:
        digest = hashlib.sha256(f"holdout6:{seed}:{i}".encode()).digest()
        out += [alphabet[b % len(alphabet)] for b in digest]
        i += 1
    return "".join(out[:n])


def js(obj: object) -> str:
    """JSON text as a tool would embed it in a string (UTF-8 kept)."""
    return json.dumps(obj, ensure_ascii=False)


# ---------------------------------------------------------------------------------
# English
# ---------------------------------------------------------------------------------


def t_conference_visa_letters(t: Trace) -> None:
    """en: visa invitation letters for a systems conference."""
    t.service = "events-assistant"
    t.slice = "conference-ops"
    t.user(
        f"We need visa invitation letters for three speakers at {t.d('BSS-2027')} before the consulates "
        f"close for the holidays. Badge ids {t.d('BSS27-SPK-0412')}, {t.d('BSS27-SPK-0419')} and "
        f"{t.d('BSS27-SPK-0433')}. Conference dates are {t.d('19-21 May 2027')}, venue {t.d('Hala Stulecia')}."
    )
    t.tool(
        "registrations.lookup",
        {
            "event": "BSS-2027",
            "request_id": t.d("e4b7c2d9-1a3f-4c8e-9b6d-0f2e5a7c1d38"),
            "badges": ["BSS27-SPK-0412", "BSS27-SPK-0419", "BSS27-SPK-0433"],
        },
        {
            "attendees": [
                {
                    "badge": "BSS27-SPK-0412",
                    "full_name": t.p("NAME", "Adebayo Ogunleye-Bakare"),
                    "passport_no": t.p("NATIONAL_ID", "A07318842"),
                    "date_of_birth": t.p("DOB", "1986-02-19"),
                    "nationality": "NG",
                    "talk": t.d("Tail latency in Raft under GC pauses"),
                    "emergency_contact": t.p("NAME", "Nour El-Houda Haddad")
                    + ", aged 41 (born "
                    + t.p("DOB", "9 January 1985")
                    + ")",
                },
                {
                    "badge": "BSS27-SPK-0419",
                    "full_name": t.p("NAME", "Nguyễn Thị Thu Hà"),
                    "passport_no": t.p("NATIONAL_ID", "C4827391"),
                    "date_of_birth": t.p("DOB", "14/07/1992"),
                    "nationality": "VN",
                },
                {
                    "badge": "BSS27-SPK-0433",
                    "full_name": t.p("NAME", "Ayşe Gül Karadeniz"),
                    "passport_no": t.p("NATIONAL_ID", "U18427395"),
                    "date_of_birth": t.p("DOB", "03.11.1979"),
                    "nationality": "TR",
                },
            ]
        },
    )
    t.tool(
        "letters.render",
        {"template": t.d("visa-invite-v3.docx"), "count": 3, "signatory": "Programme Chair"},
        {
            "files": [
                t.d("letters/BSS27-SPK-0412.pdf"),
                "letters/BSS27-SPK-0419.pdf",
                "letters/BSS27-SPK-0433.pdf",
            ]
        },
    )
    t.reply(
        f"Done. Letters for Dr {t.p('NAME', 'Ogunleye-Bakare')}, Ms {t.p('NAME', 'Nguyễn')} and "
        f"Prof. {t.p('NAME', 'Karadeniz')} are rendered from {t.d('visa-invite-v3.docx')}; the chair, "
        f"{t.p('NAME', 'Marek Wawrzyniak')}, still has to sign them."
    )


def t_removals_quote(t: Trace) -> None:
    """en: house removals quote, UK to Portugal."""
    t.service = "quotes-bot"
    t.slice = "removals"
    t.user(
        "Hi, this is Brook Fielding. We're moving from "
        + t.p("ADDRESS", "Flat 3, 41 Cressington Terrace, Liverpool L19 2NB")
        + " to a house near Tavira in March. Roughly a 3-bed house worth of stuff plus a piano "
        "(a "
        + t.d("Yamaha U3")
        + "). You can ring me on "
        + t.p("PHONE", "07812 440 913")
        + " after 6."
    )
    t.p("NAME", "Brook Fielding")
    t.tool(
        "Quotes/CreateSurvey",
        {
            "customer": {"name": "Brook Fielding", "mobile": "07812 440 913"},
            "origin": "Flat 3, 41 Cressington Terrace, Liverpool L19 2NB",
            "destination": {
                "line1": t.p("ADDRESS", "Rua dos Pescadores 17, 8800-412 Tavira"),
                "country": "PT",
            },
            "volume_m3": t.d("38.5"),
            "items_special": [
                "upright piano",
                "Welsh dresser",
                t.d("Abbey Road 3-seater sofa"),
                t.d("Carnaby armchair"),
            ],
        },
        {
            "survey_id": t.d("SV-2026-118274"),
            "slot": t.d("2026-12-09T10:00:00Z"),
            "surveyor": t.p("NAME", "Okonkwo"),
        },
        style="oi",
    )
    t.reply(
        f"Thanks {t.p('NAME', 'Brook')} - a video survey is booked for {t.d('9 December')} at 10:00 with our surveyor Mr Okonkwo "
        f"(reference {t.d('SV-2026-118274')}). The quote will cover the piano and the {t.d('Welsh dresser')}; "
        f"customs for a move inside the EU is not needed, but the {t.d('Portugal Residence Certificate')} helps."
    )


def t_interlibrary_loan(t: Trace) -> None:
    """en: interlibrary loan desk."""
    t.service = "library-desk"
    t.slice = "ill"
    t.user(
        "patron wants a copy of a 1911 thesis, can you raise an ILL? details in the form dump below\n"
        + js(
            {
                "form": "ill-request",
                "patron": {
                    "card": t.d("29901004471823"),
                    "name": t.p("NAME", "Siobhán Ní Mhurchú"),
                    "email": t.p("EMAIL", "s.nimhurchu@postgrad.ucork.ie"),
                },
                "item": {
                    "title": t.d("Notes on the Flora of West Cork"),
                    "author": "Hart, Henry Chichester",
                    "isbn": None,
                    "oclc": t.d("ocm04417291"),
                },
                "needed_by": t.d("2027-01-15"),
            }
        )
    )
    t.tool(
        "worldshare_ill_create",
        {"oclc": "ocm04417291", "lender_string": t.d("EUM,TCD,IRL"), "max_cost": "25.00 EUR"},
        {"request_id": t.d("ILL-7734091"), "status": "SUBMITTED"},
        style="spanname",
    )
    t.reply(
        f"Raised {t.d('ILL-7734091')} to Trinity and two other lenders. I'll email {t.p('NAME', 'Siobhán')} when it lands; "
        f"note that Henry Chichester Hart died in 1908, so the 1911 item is probably a posthumous edition."
    )


def t_photo_studio(t: Trace) -> None:
    """en: portrait studio bookings and a leaked storage key."""
    t.service = "studio-ops"
    t.slice = "bookings"
    key_id = "AKIA" + _rand("photo-akid", 16, _UPPER)
    secret = _rand("photo-secret", 40, _ALNUM + "/+")
    t.user(
        f"Upload last Saturday's family shoot to the client gallery. Client is {t.p('NAME', 'Folasade Adeyemi-Ojo')}, "
        f"shoot {t.d('JOB-8812')}, {t.d('112 images')}, gallery title '{t.d('Harbour Lights Family')}'. "
        "The sync tool keeps failing, here's its env:\n"
        f"AWS_ACCESS_KEY_ID={t.p('SECRET', key_id)}\nAWS_SECRET_ACCESS_KEY={t.p('SECRET', secret)}\n"
        f"AWS_DEFAULT_REGION={t.d('eu-west-2')}"
    )
    t.tool(
        "gallery_publish",
        {
            "job": "JOB-8812",
            "prefix": "s3://studio-raw/2026/11/" + t.p("NAME", "adeyemi-ojo") + "/",
            "watermark": t.d("Lumen & Lace"),
        },
        {"gallery_url": "https://galleries.lumenlace.example/g/" + t.d("hx7Qp2"), "images": 112},
    )
    t.reply(
        "Published. Please rotate that access key today: it was pasted into chat. The gallery is live as "
        f"'Harbour Lights Family' and Mrs {t.p('NAME', 'Adeyemi-Ojo')} has the link."
    )


def t_scuba_certification(t: Trace) -> None:
    """en: dive centre certification records."""
    t.service = "dive-centre"
    t.slice = "certs"
    t.user(
        "Can you check the logbook export and tell me which of the Open Water group still need the medical form?"
    )
    csv = (
        "diver,dob,cert_level,medical_form,emergency_contact\n"
        f"{t.p('NAME', 'Sigríður Jónsdóttir')},{t.p('DOB', '1981-03-03')},OWD,yes,"
        f"{t.p('PHONE', '+354 862 4471')}\n"
        f"{t.p('NAME', 'Youssef El Amrani')},{t.p('DOB', '2001-10-27')},OWD,no,{t.p('PHONE', '+212 661-482930')}\n"
        f"{t.p('NAME', 'Harpreet Kaur Gill')},{t.p('DOB', '1983-06-08')},{t.d('AOWD')},no,"
        f"{t.p('PHONE', '+44 7700 184522')}\n"
    )
    t.tool("logbook.export", {"group": t.d("OW-NOV-B"), "format": "csv"}, csv)
    t.tool(
        "crm_customer_get",
        {"name": "Sigríður Jónsdóttir"},
        {
            "kennitala": t.p("NATIONAL_ID", "030381-3869"),
            "note": "Icelandic id on file for the boat manifest; she's the one who lent us the "
            + t.d("Shearwater Perdix")
            + " computer.",
            "buddy": {
                "name": t.p("NAME", "Håvard Solberg-Eide"),
                "fodselsnummer": t.p("NATIONAL_ID", "12047843314"),
            },
        },
        style="oi",
    )
    t.reply(
        f"Two still need the form: {t.p('NAME', 'El Amrani')} and {t.p('NAME', 'Gill')}. "
        f"{t.p('NAME', 'Sigríður')}'s is on file. The group's pool session is {t.d('Thursday 4 December')}, "
        f"so I'd chase them today. Note the logbook still lists the {t.d('PADI 10-meter')} depth limit."
    )


def t_physio_clinic(t: Trace) -> None:
    """en: physiotherapy clinic intake e-mail."""
    t.service = "clinic-inbox"
    t.slice = "intake"
    body = (
        "From: " + t.p("EMAIL", "rowan.ashworth@fastmail.example") + "\n"
        "Subject: Referral - knee, post ACL\n\n"
        "Hello,\n\nMy GP (Dr "
        + t.p("NAME", "Venkataraman")
        + ") referred me after my ACL reconstruction on "
        + t.d("2 October 2026")
        + ". I was born on the "
        + t.p("DOB", "26th of January 1981")
        + " if you need it for the file, and my NHS number is "
        + t.p("NATIONAL_ID", "485 702 1390")
        + ". Weekday mornings suit me best.\n\n"
        "Thanks,\n"
        + t.p("NAME", "Rowan Ashworth")
        + "\n"
        + t.p("ADDRESS", "12 Lowther Street, Kendal LA9 4DH")
        + "\n"
        + t.p("PHONE", "01539 720 418")
        + "\n\n-- submitted via clinic web form from "
        + t.p("IP", "86.143.27.190")
        + " at "
        + t.d("2026-12-02 22:41:07 GMT")
    )
    t.user("New referral in the inbox, please book an assessment:\n\n" + body)
    t.tool(
        "Appointments.Search",
        {"service": t.d("MSK-ASSESS-45"), "from": t.d("2026-12-07"), "part_of_day": "am"},
        {
            "slots": [
                {
                    "id": t.d("slot_88a1c2"),
                    "start": "2026-12-08T09:15",
                    "clinician": t.p("NAME", "Tuula Räsänen"),
                }
            ]
        },
    )
    t.tool(
        "Appointments.Book",
        {
            "slot": "slot_88a1c2",
            "patient_ref": t.d("PT-004817"),
            "notify": "rowan.ashworth@fastmail.example",
        },
        {"ok": True, "confirmation": t.d("CNF-5T8K2")},
    )
    t.reply(
        f"Booked {t.p('NAME', 'Rowan')} in with {t.p('NAME', 'Tuula')} on {t.d('Tuesday 8 December at 09:15')} "
        f"(confirmation {t.d('CNF-5T8K2')}). The {t.d('Lowther Arms')} car park is closed that week."
    )


def t_payroll_bureau(t: Trace) -> None:
    """en: payroll bureau, new starter and a bank change."""
    t.service = "payroll-agent"
    t.slice = "payroll"
    t.user(
        "Two changes for the December run at Hollins & Crane:\n"
        f"1) New starter {t.p('NAME', 'Grant Mason')}, NI number {t.p('NATIONAL_ID', 'JT 48 19 27 C')}, born "
        f"{t.p('DOB', '04/09/1995')}, salary {t.d('£31,250')}, tax code {t.d('1257L')}.\n"
        f"2) {t.p('NAME', 'Priyanka Venkataraman')} changed bank - new account "
        + t.p("IBAN", iban("GB", "BARC 2004 1573 8421 96", spaced=True))
        + " from the 15th. Don't touch the "
        + t.d("P11D")
        + " stuff yet."
    )
    t.tool(
        "employees.upsert",
        js(
            {
                "employer": t.d("HC-PAYE-120/HB48817"),
                "employee": {
                    "surname": t.p("NAME", "MASON"),
                    "forenames": t.p("NAME", "GRANT"),
                    "nino": "JT481927C",
                    "dob": "1995-09-04",
                    "address": t.p("ADDRESS", "7 Pennine View, Hebden Bridge HX7 8AF"),
                },
            }
        ),
        {"employee_id": t.d("E-00418"), "status": "created"},
        style="spanname",
    )
    t.p("NATIONAL_ID", "JT481927C")
    t.p("DOB", "1995-09-04")
    t.reply(
        f"Grant is set up as {t.d('E-00418')} on code 1257L. The bank change for Ms {t.p('NAME', 'Venkataraman')} "
        f"is queued for {t.d('15 December')}; payroll closes on {t.d('19/12/2026')}."
    )
    t.p("NAME", "Grant")


def t_gift_aid_crm(t: Trace) -> None:
    """en: charity donor CRM, gift aid declarations."""
    t.service = "donor-crm"
    t.slice = "fundraising"
    t.user(
        "export the gift aid declarations we got at the sponsored walk and flag anything missing a postcode"
    )
    rows = [
        {
            "donor": t.p("NAME", "Eoghan Ó Súilleabháin"),
            "home": t.p("ADDRESS", "Apartment 9, The Maltings, Bray Road, Cabinteely, Dublin 18"),
            "amount": t.d("€40.00"),
        },
        {
            "donor": t.p("NAME", "Marietjie Oosthuizen"),
            "home": t.p("ADDRESS", "27 Kloof Nek Road, Tamboerskloof, Cape Town 8001"),
            "amount": "R350",
        },
        {"donor": t.p("NAME", "Dyfrig Rowlands"), "home": "Penrhyn, Llanbedr", "amount": "£15.00"},
    ]
    t.tool(
        "declarations_list",
        {"campaign": t.d("WALK-2026-AUT"), "status": "signed"},
        {"rows": rows},
        style="oi",
    )
    t.p("ADDRESS", "Penrhyn, Llanbedr")
    t.reply(
        f"3 declarations. {t.p('NAME', 'Rowlands')}'s has no postcode (only '{t.d('Llanbedr')}'), and "
        f"Ms {t.p('NAME', 'Oosthuizen')} is a South African taxpayer so gift aid does not apply. "
        f"Total raised on the walk: {t.d('£2,418.60')}."
    )


def t_airport_lost_found(t: Trace) -> None:
    """en: airport lost property, passport found."""
    t.service = "lost-property"
    t.slice = "airport"
    t.user(
        "Cleaner handed in a passport at gate B14. Log it and tell the airline. Scan OCR:\n"
        + js(
            {
                "mrz": [
                    t.p("NAME", "P<ZAFMTHEMBU<<THANDEKA<NOMVULA<<<<<<<<<<<<<<<"),
                    t.p("NATIONAL_ID", "M004518277ZAF9509218F31051469509210183084<60"),
                ],
                "surname": t.p("NAME", "MTHEMBU"),
                "given_names": t.p("NAME", "THANDEKA NOMVULA"),
                "passport_no": t.p("NATIONAL_ID", "M00451827"),
                "id_number": t.p("NATIONAL_ID", "9509210183084"),
                "date_of_birth": t.p("DOB", "21 SEP 1995"),
            }
        )
    )
    t.tool(
        "lost_items.create",
        {"category": "passport", "location": t.d("Gate B14"), "found_at": t.d("2026-12-02T21:47")},
        {"item_id": t.d("LP-2026-33817"), "bin": t.d("SAFE-2")},
    )
    t.tool(
        "airline_notify",
        {
            "carrier": "SA",
            "flight": t.d("SA237"),
            "message": "Passport of passenger Mthembu found at B14",
        },
        {"ack": True},
        style="spanname",
    )
    t.p("NAME", "Mthembu")
    t.tool(
        "lost_items.search",
        {"category": "id-card", "since": t.d("2026-11-25")},
        [
            {
                "item_id": t.d("LP-2026-33790"),
                "ocr": "BELGIQUE BELGIË eID "
                + t.p(
                    "NAME",
                    "VANDENBROUCKE Wouter",
                    ["VANDENBROUCKE Wouter", "VANDENBROUCKE", "Wouter"],
                )
                + " rijksregisternummer "
                + t.p("NATIONAL_ID", "85.07.30-223.32")
                + " geboren "
                + t.p("DOB", "30 JUL 1985"),
            }
        ],
    )
    t.reply(
        f"Logged as {t.d('LP-2026-33817')} in {t.d('SAFE-2')} and the handling agent for {t.d('SA237')} is told."
    )


def t_pest_control(t: Trace) -> None:
    """en: pest control job with a webhook and an address in a query string."""
    t.service = "dispatch-bot"
    t.slice = "field-jobs"
    hook = (
        "https://hooks.slack.com/services/T04"
        + _rand("pc-t", 8, _UPPER)
        + "/B07"
        + _rand("pc-b", 8, _UPPER)
        + "/"
        + _rand("pc-x", 24)
    )
    t.user(
        f"wasps nest in the soffit at {t.p('ADDRESS', '88 Larkhill Lane, Stockport SK3 8JQ')}, customer "
        f"{t.p('NAME', 'Sage Holloway')} {t.p('PHONE', '0161 480 2291')} (she's 87, DOB {t.p('DOB', '02-Mar-1939')}, "
        "so use the low-toxicity option). book the first slot and post it to the team channel"
    )
    q = (
        "address="
        + urlenc("88 Larkhill Lane, Stockport SK3 8JQ")
        + "&radius_km=15&skill="
        + t.d("WASP-L2")
    )
    t.tool(
        "http_get",
        {"url": "https://routing.internal/v2/nearest?" + q},
        {"technician": t.p("NAME", "Kowalczyk"), "eta_min": 52},
    )
    t.tool(
        "notify.slack",
        {
            "webhook": t.p("SECRET", hook),
            "text": f"Job {t.d('PC-44190')} wasps, Larkhill Lane, tech Kowalczyk",
        },
        {"ok": True},
        style="oi",
    )
    t.reply(
        f"Booked job {t.d('PC-44190')}; Kowalczyk is about 52 minutes out. Treatment is {t.d('Ficam D')} dust, "
        f"so Ms {t.p('NAME', 'Holloway')} should keep the kids inside for an hour."
    )


def t_solar_installer(t: Trace) -> None:
    """en: solar installer, grid application with SA id numbers."""
    t.service = "solar-ops"
    t.slice = "grid-applications"
    t.user(
        f"Submit the SSEG application for the Swanepoel job. Owner {t.p('NAME', 'Riaan Swanepoel')}, ID "
        f"{t.p('NATIONAL_ID', '8803145127089')}, site {t.p('ADDRESS', '14 Protea Crescent, Durbanville, 7550')}. "
        f"Inverter is a {t.d('Sunsynk 8kW')}, panels {t.d('16 x JA Solar 550W')}. Municipal account "
        f"{t.d('4417 2093 8820')}."
    )
    t.tool(
        "municipal_portal.submit",
        {
            "form": t.d("SSEG-A1"),
            "applicant": {
                "name": "Riaan Swanepoel",
                "id": "8803145127089",
                "cell": t.p("PHONE", "082 451 7730"),
            },
            "installer_reg": t.d("PV GreenCard PVGC-04417"),
        },
        {"reference": t.d("CCT-SSEG-2026-09931"), "status": "received"},
    )
    t.reply(
        f"Submitted as {t.d('CCT-SSEG-2026-09931')}. Mr {t.p('NAME', 'Swanepoel')} will get an SMS; approval usually "
        f"takes {t.d('30 working days')}. The {t.d('Sunsynk 8kW')} is on the approved list (NRS 097-2-1)."
    )


def t_escape_room(t: Trace) -> None:
    """en: escape room bookings, room names that look like people."""
    t.service = "bookings-bot"
    t.slice = "leisure"
    t.user(
        f"Group of 6 for '{t.d('The Curse of Lady Grey')}' on Saturday, or '{t.d('Professor Moriarty')}' if that's "
        f"full. Lead booker {t.p('NAME', 'Khalid bin Saeed Al-Mansoori')}, {t.p('EMAIL', 'khalid.almansoori@outlook.example')}. "
        f"One of them is a kid, {t.p('NAME', 'Omar')}, 11 years old (born {t.p('DOB', '12 Oct 2015')}), is that ok?"
    )
    t.tool(
        "rooms_availability",
        {"rooms": ["lady-grey", "moriarty", t.d("captain-nemo")], "date": t.d("2026-12-05")},
        {"lady-grey": [], "moriarty": ["14:30", "18:00"], "captain-nemo": ["11:00"]},
    )
    t.tool(
        "bookings.create",
        {"room": "moriarty", "time": "14:30", "players": 6, "lead": "Khalid bin Saeed Al-Mansoori"},
        {"booking": t.d("ER-55120"), "price": t.d("£162.00")},
        style="oi",
    )
    t.reply(
        f"Lady Grey is full, so I booked {t.d('Professor Moriarty')} at 14:30 ({t.d('ER-55120')}). Players under 12 "
        f"need an adult in the room, so Omar is fine with Mr {t.p('NAME', 'Al-Mansoori')}. "
        f"The {t.d('Captain Nemo')} room was the only other free slot."
    )


def t_court_interpreter(t: Trace) -> None:
    """en: court interpreter scheduling."""
    t.service = "interpreting-desk"
    t.slice = "justice"
    t.user(
        "Need a Croatian and a Vietnamese interpreter for the hearing list below, please confirm by email to the clerk.\n"
        "| case | party | language | time |\n|---|---|---|---|\n"
        f"| {t.d('T20267731')} | {t.p('NAME', 'Marijana Šimunović')} | Croatian | 10:00 |\n"
        f"| {t.d('T20268102')} | {t.p('NAME', 'Trần Văn Khoa')} (DOB {t.p('DOB', '19870812')}) | Vietnamese | 11:30 |\n"
        f"| {t.d('S20260419')} | {t.p('NAME', 'Đặng Quốc Bảo')} | Vietnamese | 14:00 |\n"
    )
    t.tool(
        "interpreters.match",
        {
            "languages": ["hr", "vi"],
            "date": t.d("2026-12-10"),
            "court": t.d("Snaresbrook Crown Court"),
        },
        {
            "hr": {"interpreter": t.p("NAME", "Ivo Radić"), "nrpsi": t.d("NRPSI 14022")},
            "vi": {"interpreter": t.p("NAME", "Phạm Ngọc Ánh"), "nrpsi": t.d("NRPSI 16310")},
        },
    )
    t.tool(
        "mail.send",
        {
            "to": t.p("EMAIL", "listing.clerk.snaresbrook@justice.example.gov.uk"),
            "body": "Confirmed: Radić (hr) all day; Phạm (vi) 11:30 and 14:00. Ms Šimunović's OIB "
            + t.p("NATIONAL_ID", "69310458725")
            + " is on the defence bundle page 4 - please redact before it goes to the jury bundle.",
        },
        {"id": t.d("<20261203.4471@mail.justice.example>")},
    )
    t.p("NAME", "Radić")
    t.p("NAME", "Phạm")
    t.p("NAME", "Šimunović")
    t.reply("Both interpreters confirmed and the clerk has been told.")


def t_food_delivery_rider(t: Trace) -> None:
    """en: food delivery rider onboarding, Lithuanian documents."""
    t.service = "rider-onboarding"
    t.slice = "riders"
    doc = {
        "doc_type": "LT_ID_CARD",
        "given": t.p("NAME", "Rūta"),
        "surname": t.p("NAME", "Žukauskienė"),
        "personal_code": t.p("NATIONAL_ID", "48506141281"),
        "birth": t.p("DOB", "1985-06-14"),
        "card_no": "LT-ID v2021",
    }
    t.user(
        "rider application stuck on document check, payload attached: "
        + b64(js(doc))
        + f" - her phone is {t.p('PHONE', '+370 612 48 337')} and she wants to ride in {t.d('Leeds')}."
    )
    t.tool(
        "kyc.recheck",
        {"application": t.d("RA-9902114"), "doc_b64": "(omitted)"},
        {"result": "MISMATCH", "reason": "selfie vs document", "score": t.d("0.61")},
    )
    t.reply(
        f"The document itself reads fine; the failure is the selfie match ({t.d('0.61')}). I've asked "
        f"{t.p('NAME', 'Rūta Žukauskienė')} to retake it in daylight. Application {t.d('RA-9902114')} stays open."
    )


def t_game_server_admin(t: Trace) -> None:
    """en: game server admin, many tokens."""
    t.service = "server-admin"
    t.slice = "gaming"
    rcon = _rand("rcon", 18)
    tskey = "tskey-auth-k" + _rand("ts1", 11) + "CNTRL-" + _rand("ts2", 33)
    docker = "dckr_pat_" + _rand("dckr", 27, _ALNUM + "-_")
    t.user(
        "the minecraft box is lagging again. here's the compose file, fix the memory flags\n```yaml\n"
        "services:\n  mc:\n    image: "
        + t.d("itzg/minecraft-server:2025.10.1")
        + "\n    environment:\n"
        "      MEMORY: 6G\n      RCON_PASSWORD: "
        + t.p("SECRET", rcon)
        + "\n      OPS: "
        + t.p("NAME", "jukka_pekka_h")
        + ","
        + t.d("Herobrine")
        + "\n      TS_AUTHKEY: "
        + t.p("SECRET", tskey)
        + "\n```\n"
        "and docker login keeps asking, my token is " + t.p("SECRET", docker)
    )
    t.tool(
        "ssh.exec",
        {"host": t.p("IP", "185.143.222.77"), "cmd": "docker stats --no-stream mc"},
        t.d("mc  348.12%  5.91GiB / 6GiB  98.52%"),
        style="spanname",
    )
    t.tool(
        "mc.version",
        {},
        {
            "server": t.d("Paper 1.21.4.232"),
            "java": t.d("21.0.5+11-LTS"),
            "image": t.d("sha256:5c0d3b1e9f8a7d6c4b2a0e1f3d5c7b9a8e6f4d2c0b1a3e5f7d9c8b6a4e2f0d1c"),
        },
    )
    t.reply(
        f"It is at {t.d('98.52%')} of its 6 GiB. I'd raise MEMORY to 8G and add {t.d('-XX:+UseG1GC')}. Also: "
        "the RCON password, the Tailscale auth key and the Docker token were all in this chat; revoke them."
    )


def t_payments_recon(t: Trace) -> None:
    """en: payments reconciliation across PSPs."""
    t.service = "finance-agent"
    t.slice = "reconciliation"
    adyen = "AQE" + _rand("adyen1", 36, _ALNUM) + "/" + _rand("adyen2", 40, _ALNUM + "+/") + "="
    rzp_id = "rzp_live_" + _rand("rzp-id", 14)
    rzp_secret = _rand("rzp-secret", 24)
    t.user("November settlements don't match the ledger by about 1,900 EUR, find out why")
    t.tool(
        "adyen.settlement_details",
        {"batch": "1047", "merchant": t.d("NorthwindEU_ECOM")},
        {
            "header": {"X-API-Key": t.p("SECRET", adyen)},
            "rows": 2211,
            "net_payable": t.d("184,339.12 EUR"),
        },
    )
    t.tool(
        "razorpay.settlements",
        {"auth": t.p("SECRET", rzp_id) + ":" + t.p("SECRET", rzp_secret), "month": "2026-11"},
        {"count": 31, "amount_inr": t.d("₹1,62,440.00")},
        style="oi",
    )
    t.tool(
        "ledger.query",
        {
            "sql": "SELECT psp, sum(amount) FROM settlements WHERE month = %(m)s GROUP BY psp",
            "params": {"m": "2026-11"},
        },
        {
            "adyen": "184,339.12",
            "last_login_ip": t.p("IP", "2a02:1810:4d3c:8f00:9d2:ab31:71e2:5c08"),
            "razorpay": "1,789.40",
            "note": "refund "
            + t.d("ref_NWx7741")
            + " for card "
            + t.p("CARD", luhn("4539 1488 0343 646"))
            + " booked twice",
        },
    )
    t.reply(
        f"The gap is one refund booked twice ({t.d('ref_NWx7741')}), plus the INR settlement converted at the "
        f"{t.d('2026-11-28')} rate. Card numbers never belong in ledger notes; I've masked that one. Test card "
        f"{t.d('4111 1111 1111 1112')} in the sandbox rows is not a real card and fails its check."
    )


def t_mobile_release(t: Trace) -> None:
    """en: mobile app release pipeline secrets."""
    t.service = "release-bot"
    t.slice = "mobile"
    fcm = "AAAA" + _rand("fcm1", 7) + ":APA91b" + _rand("fcm2", 134, _ALNUM + "-_")
    asc_pem = (
        "-----BEGIN PRIVATE KEY-----\nMIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQg"
        + _rand("asc1", 40, _ALNUM + "+/")
        + "\n"
        + _rand("asc2", 64, _ALNUM + "+/")
        + "\n"
        + _rand("asc3", 48, _ALNUM + "+/")
        + "==\n-----END PRIVATE KEY-----"
    )
    t.user(
        f"Build {t.d('4.12.0 (4120031)')} failed at the upload step. Logs:\n"
        f"[fastlane] Using key id {t.d('2X9R4HCF3B')} issuer {t.d('69a6de70-03db-47e3-e053-5b8c7c11a4d1')}\n"
        f"[fastlane] FCM_SERVER_KEY={t.p('SECRET', fcm)}\n"
        "[fastlane] reading /Users/"
        + t.p("NAME", "oluwaseun.adeyemi", ["oluwaseun.adeyemi", "oluwaseun", "adeyemi"])
        + "/keys/AuthKey_2X9R4HCF3B.p8\n"
        "[fastlane] AuthKey.p8 contents:\n" + t.p("SECRET", asc_pem)
    )
    t.tool(
        "ci.rerun",
        {
            "remote": "https://x-access-token:"
            + t.p("SECRET", "ghs_" + _rand("ghs", 36))
            + "@github.com/harbourpress/reader-ios.git",
            "pipeline": t.d("ios-release"),
            "commit": t.d("9f3c2ab"),
            "lane": "upload_testflight",
        },
        {
            "status": "passed",
            "duration": t.d("14m07s"),
            "head": t.d("9f3c2ab41e07d5c2b88f0a9e61d3c47f2b5a8e10"),
            "artifact_sha256": t.d(
                "3b8f1e0c9d2a47f6b5e8c1d0a9f7e6b4c3d2e1f0a8b7c6d5e4f3a2b1c0d9e8f7"
            ),
        },
    )
    t.reply(
        f"Re-run passed in {t.d('14m07s')}. The first failure was Apple's 502. Please move the p8 key and the "
        f"FCM key into the CI secret store; they were printed to the log by the debug lane of {t.d('fastlane 2.226.0')}."
    )


def t_terraform_run(t: Trace) -> None:
    """en: Terraform Cloud and Pulumi run output."""
    t.service = "infra-agent"
    t.slice = "infra"
    tfc = _rand("tfc1", 14) + ".atlasv1." + _rand("tfc2", 67)
    pul = "pul-" + _rand("pul", 40, _HEX)
    dsn = (
        "sqlserver://sa:"
        + "Tr0ub4dor%263-"
        + _rand("mssql", 6)
        + "@10.20.4.15:1433?database=billing"
    )
    t.user("why does `terraform plan` want to replace the billing DB? output in the tool result")
    t.tool(
        "tfc.run_output",
        {
            "workspace": t.d("billing-prod"),
            "run": t.d("run-8xQwe3ZTnYv9Ab1c"),
            "lineage": t.d("7c1e4b2a-9d3f-4e8a-b6c5-2f0a1d9e8b7c"),
            "headers": {"Authorization": "Bearer " + t.p("SECRET", tfc)},
        },
        "  # azurerm_mssql_database.billing must be replaced\n"
        '-/+ resource "azurerm_mssql_database" "billing" {\n'
        '      ~ sku_name = "'
        + t.d("GP_S_Gen5_2")
        + '" -> "'
        + t.d("GP_Gen5_4")
        + '" # forces replacement\n'
        "      ~ connection_string = (sensitive value)\n"
        '        tags = { owner = "' + t.p("EMAIL", "jp.heikkila@northwind.example") + '" }\n',
    )
    t.tool(
        "pulumi.stack_export",
        {"stack": t.d("org/billing/prod"), "token": t.p("SECRET", pul)},
        js(
            {
                "outputs": {
                    "dbUrl": t.p("SECRET", dsn),
                    "region": t.d("westeurope"),
                    "graphUri": t.p(
                        "SECRET",
                        "neo4j+s://neo4j:"
                        + _rand("neo4j", 43, _ALNUM + "-_")
                        + "@7f3a9c21.databases.neo4j.io",
                    ),
                    "analytics": t.p(
                        "SECRET",
                        "clickhouse://reporting:"
                        + _rand("ch", 20)
                        + "@ch-prod.internal:9440/default?secure=true",
                    ),
                }
            }
        ),
        style="oi",
    )
    t.reply(
        f"The plan replaces it because {t.d('GP_S_Gen5_2')} -> {t.d('GP_Gen5_4')} moves from serverless to "
        f"provisioned. Change the sku in place via the portal or accept downtime. Owner tag is "
        f"{t.p('NAME', 'Jukka-Pekka Heikkilä')}'s address; he approves prod changes."
    )


def t_cms_migration(t: Trace) -> None:
    """en: CMS migration with search and media keys."""
    t.service = "web-agent"
    t.slice = "cms"
    cf = "CFPAT-" + _rand("cfpat", 43, _ALNUM + "-_")
    algolia = _rand("algolia", 32, _HEX)
    cld = (
        "cloudinary://"
        + _rand("cldk", 15, "0123456789")
        + ":"
        + _rand("clds", 27, _ALNUM + "-_")
        + "@harbour-press"
    )
    t.user(
        "Move the author pages from Contentful to the new site. Config: "
        + js(
            {
                "contentful": {"cma_token": t.p("SECRET", cf), "space": t.d("7hgp2ykq9d1m")},
                "algolia": {"app_id": t.d("QX41N7ZP0A"), "admin_key": t.p("SECRET", algolia)},
                "media": t.p("SECRET", cld),
            }
        )
    )
    sess = _rand("cms-sess", 48, _ALNUM + "-_")
    t.tool(
        "http.replay",
        "GET /admin/authors/export HTTP/1.1\r\nHost: " + t.d("cms.harbourpress.example") + "\r\n"
        "Cookie: __Host-cms_session=" + t.p("SECRET", sess) + "; theme=dark; lang=en-GB\r\n"
        "Authorization: ApiKey "
        + t.p("SECRET", b64(_rand("es-id", 20) + ":" + _rand("es-key", 22)))
        + "\r\n\r\n",
        {"status": 200, "bytes": 48211},
        style="spanname",
    )
    t.tool(
        "contentful.entries",
        {"content_type": "author", "limit": 3},
        {
            "items": [
                {
                    "slug": t.p("NAME", "mererid-prysor"),
                    "bio": "Poet; born in Cardiff in " + t.p("DOB", "1964") + ".",
                },
                {"slug": t.d("editorial-board"), "bio": t.d("Our editors since 2011.")},
                {
                    "slug": t.p("NAME", "itziar-etxeberria"),
                    "bio": t.p("NAME", "Itziar Etxeberria Goikoetxea") + " writes on Basque food.",
                },
            ]
        },
    )
    t.reply(
        f"3 author pages migrated. Note the {t.d('editorial-board')} entry is not a person. Prysor's bio "
        f"keeps her birth year - do you want that public?"
    )
    t.p("NAME", "Prysor")


def t_email_marketing(t: Trace) -> None:
    """en: newsletter platform, bounces and an API key in a curl."""
    t.service = "newsletter-agent"
    t.slice = "marketing"
    mg = "key-" + _rand("mailgun", 32, _HEX)
    pm = (
        "a3f1c2d4-"
        + _rand("pm1", 4, _HEX)
        + "-4"
        + _rand("pm2", 3, _HEX)
        + "-9"
        + _rand("pm3", 3, _HEX)
        + "-"
        + _rand("pm4", 12, _HEX)
    )
    t.user(
        "clean the bounce list before Friday's send. I tested it with\n"
        f"curl -s --user 'api:{t.p('SECRET', mg)}' https://api.eu.mailgun.net/v3/{t.d('news.harbourpress.example')}/bounces\n"
        f"and for transactional we're on Postmark, header X-Postmark-Server-Token: {t.p('SECRET', pm)}"
    )
    t.tool(
        "mailgun_bounces",
        {"domain": "news.harbourpress.example", "limit": 4},
        {
            "items": [
                {
                    "address": t.p("EMAIL", "b.akesson@telia.example.se"),
                    "code": 550,
                    "error": t.d("5.1.1 user unknown"),
                },
                {
                    "address": t.p("EMAIL", "zeynep.celikkaya@ttmail.example.com.tr"),
                    "code": 552,
                    "error": "mailbox full",
                },
                {
                    "address": "postmaster@harbourpress.example",
                    "code": 421,
                    "error": t.d("4.7.0 try again later"),
                },
            ]
        },
    )
    t.tool(
        "gdpr.requests",
        {"status": "open"},
        [
            {
                "ticket": t.d("DSR-0192"),
                "text": "Slet venligst alle mine data. "
                + t.p("NAME", "Jytte Kjærgaard Holm")
                + ", CPR "
                + t.p("NATIONAL_ID", "230559-2008")
                + ", abonnent siden 2019",
            }
        ],
        style="oi",
    )
    t.reply(
        f"Removed {t.d('2 hard bounces')}; the 421 from our own postmaster is transient. Campaign "
        f"{t.d('NL-2026-48')} can go Friday. The template id {t.d('a3f1c2d4')} in the footer is fine to keep."
    )


def t_lpg_booking(t: Trace) -> None:
    """en: LPG cylinder booking in India, Aadhaar-linked."""
    t.service = "gas-agency-bot"
    t.slice = "bookings-in"
    t.user(
        f"Hello sir, cylinder not delivered for 12 days. Consumer no {t.d('7100 0423 1188 6')} booked on "
        f"{t.d('19-11-2026')}. Name {t.p('NAME', 'Sundaramoorthy Lakshmi Narayanan')}, Aadhaar {t.p('NATIONAL_ID', '4837 2916 0544')}, "
        f"mobile {t.p('PHONE', '+91 98401 22735')}. Address {t.p('ADDRESS', 'No. 14, 3rd Cross Street, Kalakshetra Colony, Besant Nagar, Chennai 600090')}"
    )
    t.tool(
        "dealer.order_status",
        {"consumer": "7100 0423 1188 6", "booking": t.d("BK2611190447")},
        {
            "status": "OUT_FOR_DELIVERY",
            "delivery_boy": t.p("NAME", "Murugan"),
            "cash_memo": t.d("CM-88419"),
            "kyc_holder": {
                "name": t.p("NAME", "Lakshmi Narayanan Meenakshi"),
                "aadhaar": t.p("NATIONAL_ID", "7319 0482 6653"),
            },
        },
    )
    t.tool(
        "dealer_chat.post",
        {
            "webhook": t.p(
                "SECRET",
                "https://chat.googleapis.com/v1/spaces/AAAA"
                + _rand("gc-space", 7)
                + "/messages?key=AIzaSy"
                + _rand("gc-key", 33, _ALNUM + "-_")
                + "&token="
                + _rand("gc-tok", 43, _ALNUM + "-_"),
            ),
            "text": "Refill BK2611190447 escalated: 12 days pending",
        },
        {"ok": True},
    )
    t.tool(
        "sms.send",
        {
            "to": "+91 98401 22735",
            "text": f"Dear {t.p('NAME', 'Narayanan')}, your refill (BK2611190447) is out for delivery today.",
        },
        {"queued": True},
        style="spanname",
    )
    t.reply(
        f"Your refill {t.d('BK2611190447')} is out for delivery today with cash memo {t.d('CM-88419')}. "
        f"The subsidy is credited to the bank account linked to your Aadhaar within {t.d('3 days')}."
    )


def t_remittance(t: Trace) -> None:
    """en: remittance compliance check, Chile and Brazil."""
    t.service = "remit-compliance"
    t.slice = "kyc"
    t.user(
        "Two transfers held by screening, please review:\n"
        "1. sender "
        + t.p("NAME", "Catalina Ignacia Fuentealba")
        + " RUT "
        + t.p("NATIONAL_ID", "14.562.309-K")
        + " -> receiver "
        + t.p("NAME", "Thiago Nascimento Albuquerque")
        + " CPF "
        + t.p("NATIONAL_ID", "418.267.093-04")
        + ", amount "
        + t.d("USD 2,400.00")
        + "\n"
        "2. sender "
        + t.p("NAME", "Ignacio Pérez Cotapos")
        + " RUT "
        + t.p("NATIONAL_ID", "9.873.104-0")
        + ", receiver company "
        + t.d("Café Três Corações Ltda")
        + " CNPJ "
        + t.d("27.845.192/0001-93")
    )
    t.tool(
        "screening.hits",
        {"transfers": [t.d("TRF-00918831"), t.d("TRF-00918840")]},
        {
            "TRF-00918831": {"hit": "name similarity 0.82", "list": t.d("OFAC SDN")},
            "TRF-00918840": {"hit": "high-risk corridor", "list": None},
        },
    )
    t.tool(
        "customer.profile",
        {"rut": "14.562.309-K"},
        {
            "born": t.p("DOB", "1979-04-02"),
            "phone": t.p("PHONE", "+56 9 8421 3307"),
            "iban_like": t.d("CL-ACC-000771-33"),
        },
        style="oi",
    )
    t.reply(
        f"TRF-00918831 is a false positive: Ms {t.p('NAME', 'Fuentealba')}'s date of birth differs from the "
        f"listed person. TRF-00918840 needs the invoice from {t.d('Café Três Corações Ltda')}."
    )


def t_currach_club(t: Trace) -> None:
    """en: Irish rowing club membership renewals."""
    t.service = "club-secretary"
    t.slice = "clubs"
    t.user(
        "renewals came in by text over the weekend, can you tidy them into the members sheet?\n"
        "- 'renewing for me and the young lad, padraig o conchubhair, 087 319 4420'\n"
        "- 'Niamh Ní Fhlatharta here, same as last year, new address "
        + t.p("ADDRESS", "Cnoc na Cathrach, Bearna, Co. na Gaillimhe, H91 X2R7")
        + "'\n"
        "- 'caoimhe mac giolla phadraig, under 18s, dob 3/4/2010, mam will pay'"
    )
    t.p("NAME", "padraig o conchubhair", ["padraig o conchubhair", "padraig", "conchubhair"])
    t.p("PHONE", "087 319 4420")
    t.p("NAME", "Niamh Ní Fhlatharta")
    t.p(
        "NAME",
        "caoimhe mac giolla phadraig",
        ["caoimhe mac giolla phadraig", "caoimhe", "giolla", "phadraig"],
    )
    t.p("DOB", "3/4/2010")
    t.tool(
        "sheets.append_rows",
        {
            "sheet": t.d("Members 2027"),
            "rows": [
                ["Pádraig Ó Conchubhair", "senior", "087 319 4420"],
                [
                    "Niamh Ní Fhlatharta",
                    "senior",
                    "Cnoc na Cathrach, Bearna, Co. na Gaillimhe, H91 X2R7",
                ],
                ["Caoimhe Mac Giolla Phádraig", "U18", "2010-04-03"],
            ],
        },
        {"updatedRange": t.d("'Members 2027'!A118:C120")},
    )
    t.p("NAME", "Pádraig Ó Conchubhair")
    t.p("NAME", "Caoimhe Mac Giolla Phádraig")
    t.p("DOB", "2010-04-03")
    t.reply(
        f"Added 3 rows. The boat '{t.d('Naomh Bríd')}' is booked for the {t.d('Christmas Day')} paddle."
    )


def t_pottery_studio(t: Trace) -> None:
    """en: pottery studio, kiln firing log and a password in prose."""
    t.service = "studio-assistant"
    t.slice = "makers"
    t.user(
        f"The kiln controller app won't log in. The account is studio@clayworks.example and the password is "
        f"{t.p('SECRET', 'Glaze&Grog-2291')}. Also, rhiannon llewelyn asked whether her casserole dish from the "
        f"{t.d('cone 6')} firing is out; her number is {t.p('PHONE', '01970 612 883')}."
    )
    t.p("NAME", "rhiannon llewelyn")
    t.tool(
        "kilnlink.login",
        {"user": "studio@clayworks.example", "password": "Glaze&Grog-2291"},
        {"ok": True, "kilns": [t.d("Skutt KM-1027"), t.d("Nabertherm Top 60")]},
    )
    t.tool(
        "kilnlink.firings",
        {"kiln": "Skutt KM-1027", "last": 2},
        {
            "firings": [
                {
                    "id": t.d("F-2026-311"),
                    "program": "Cone 6 slow glaze",
                    "unloaded": t.d("2026-12-01"),
                }
            ]
        },
        style="oi",
    )
    t.reply(
        f"Logged in. Firing {t.d('F-2026-311')} was unloaded on 1 December, so {t.p('NAME', 'Rhiannon')}'s dish "
        f"should be on the collection shelf. Change the kiln password, it was typed here in clear."
    )


# ---------------------------------------------------------------------------------
# Polish
# ---------------------------------------------------------------------------------


def t_pl_mleczarnia(t: Trace) -> None:
    """pl: spółdzielnia mleczarska, wypłaty dla dostawców."""
    t.service = "spoldzielnia-agent"
    t.slice = "rolnicy"
    t.user(
        "Proszę przygotować listę wypłat za mleko za listopad. Dwóch nowych dostawców:\n"
        f"- {t.p('NAME', 'Grzegorz Brzęczyszczykiewicz')}, PESEL {t.p('NATIONAL_ID', '61110307515')}, "
        f"konto {t.p('IBAN', iban('PL', '1090 1014 0000 0712 1981 2874', spaced=True))}, "
        f"gospodarstwo {t.p('ADDRESS', 'Chrząszczyżewoszyce 14, 99-314 Łękołody')}\n"
        f"- {t.p('NAME', 'Agnieszka Kołodziej')}, PESEL {t.p('NATIONAL_ID', '87081246802')}, urodzona "
        f"{t.p('DOB', '12 sierpnia 1987 r.')}, tel. {t.p('PHONE', '601 234 578')}\n"
        f"Cena bazowa {t.d('2,31 zł/l')}, klasa {t.d('ekstra')}. NIP spółdzielni {t.d('526-104-82-09')}, REGON {t.d('362819047')}."
    )
    t.tool(
        "rozliczenia.oblicz",
        {"miesiac": "2026-11", "cena_bazowa": "2.31", "dostawcy": ["D-0412", "D-0413"]},
        {
            "D-0412": {"litry": t.d("18 440"), "kwota": t.d("42 596,40 zł")},
            "D-0413": {"litry": "9 120", "kwota": "21 067,20 zł"},
        },
    )
    t.reply(
        f"Lista gotowa. Pan {t.p('NAME', 'Brzęczyszczykiewicz')} dostarczył {t.d('18 440')} l, "
        f"pani {t.p('NAME', 'Kołodziej')} 9 120 l. Przelewy pójdą {t.d('10 grudnia')} z rachunku spółdzielni."
    )


def t_pl_parafia(t: Trace) -> None:
    """pl: kancelaria parafialna, odpis aktu chrztu."""
    t.service = "kancelaria-bot"
    t.slice = "parafia"
    msg = (
        "Szczęść Boże, potrzebuję odpisu aktu chrztu do ślubu. Zostałam ochrzczona w waszej parafii, "
        f"nazywam się {t.p('NAME', 'Małgorzata Wójcik-Szymańska')} (z domu {t.p('NAME', 'Wójcik')}), "
        f"ur. {t.p('DOB', '3 marca 1994')} w Krakowie. "
        f"Rodzice: {t.p('NAME', 'Wiesław')} i {t.p('NAME', 'Halina Wójcik')}. Ślub mamy {t.d('14 czerwca 2027')} "
        f"w parafii {t.d('św. Floriana')}. Mój e-mail {t.p('EMAIL', 'gosia.wojcik.szym@wp.example.pl')}"
    )
    t.user(msg)
    t.tool(
        "ksiegi.szukaj",
        {"rodzaj": "chrzty", "rok": 1994, "nazwisko": "Wójcik"},
        {
            "wpisy": [
                {
                    "akt": t.d("nr 117/1994"),
                    "tom": t.d("XXIV"),
                    "chrzestni": t.p("NAME", "Przemysław Żółtowski")
                    + ", "
                    + t.p("NAME", "Ewa Pietrzyk"),
                }
            ]
        },
        style="oi",
    )
    t.reply(
        f"Odnaleźliśmy akt {t.d('nr 117/1994')} (tom {t.d('XXIV')}). Odpis będzie do odbioru w kancelarii "
        f"w godzinach {t.d('9:00-11:00')}; ofiara dowolna. Data ślubu {t.d('14 czerwca 2027')} zapisana."
    )


def t_pl_stolarnia(t: Trace) -> None:
    """pl: stolarnia, zamówienie i płatność online."""
    t.service = "stolarnia-sklep"
    t.slice = "zamowienia"
    crc = _rand("p24crc", 16, _HEX)
    t.user(
        "Klient zgłasza, że płatność za stół nie przeszła. Dane z formularza:\n"
        "imie="
        + urlenc(t.p("NAME", "Bartłomiej"))
        + "&nazwisko="
        + urlenc(t.p("NAME", "Szczepankiewicz"))
        + "&telefon=%2B48%20509%20771%20204"
        + "&produkt="
        + urlenc(t.d("Stół Dębowy Kraków 180"))
        + "&kwota="
        + t.d("4290.00")
        + "&pesel_do_faktury="
        + t.p("NATIONAL_ID", "03221709532")
        + "\nKonfiguracja bramki: merchantId="
        + t.d("238114")
        + ", klucz CRC "
        + t.p("SECRET", crc)
        + ", a hasło do panelu P24 to "
        + t.p("SECRET", "Dab#Jesion77!")
        + "."
    )
    t.p("PHONE", "+48 509 771 204", ["+48 509 771 204", "%2B48%20509%20771%20204"])
    t.tool(
        "p24.transaction_status",
        {"sessionId": t.d("ZAM-2026-1187"), "merchantId": 238114},
        {
            "status": "REJECTED",
            "reason": t.d("ERR_CARD_EXPIRED"),
            "card_mask": t.d("4***********1842"),
        },
    )
    t.reply(
        f"Bramka odrzuciła płatność: karta wygasła ({t.d('ERR_CARD_EXPIRED')}). Wyślę panu "
        f"{t.p('NAME', 'Szczepankiewiczowi')} nowy link do zamówienia {t.d('ZAM-2026-1187')} ({t.d('Stół Dębowy Kraków 180')}). Proszę zmienić "
        "hasło do panelu, bo trafiło do czatu."
    )


# ---------------------------------------------------------------------------------
# Swedish
# ---------------------------------------------------------------------------------


def t_sv_hemtjanst(t: Trace) -> None:
    """sv: hemtjänst, schemaläggning och anhöriga."""
    t.service = "hemtjanst-planering"
    t.slice = "omsorg"
    t.user(
        "Ny brukare från måndag, lägg in besöken morgon och kväll. Uppgifter från biståndsbeslutet:\n"
        f"Namn: {t.p('NAME', 'Signe Lindqvist')}\nPersonnummer: {t.p('NATIONAL_ID', '560823-2426')}\n",
        system="Du är planeringsassistent för hemtjänsten i Jönköpings kommun. Vid avvikelser, ring samordnaren "
        + t.p("NAME", "Leila Mahmoudi")
        + " på "
        + t.p("PHONE", "036-10 52 40")
        + ".",
    )
    t.tool(
        "insatser.skapa",
        {
            "brukare": "Signe Lindqvist",
            "adress": t.p("ADDRESS", "Östra Storgatan 27 B lgh 1102, 553 21 Jönköping"),
            "portkod": "4471",
            "anhorig": {
                "namn": t.p("NAME", "Björn Åkesson"),
                "relation": "son",
                "tel": t.p("PHONE", "070-318 44 92"),
            },
            "insatser": [t.d("Tillsyn 07:30"), t.d("Kvällsmåltid 18:00")],
        },
        {"beslut": t.d("BIS-2026-04417"), "team": t.d("Team Råslätt 2")},
    )
    t.reply(
        f"Insatserna är inlagda under {t.d('BIS-2026-04417')}. Hon är född {t.p('DOB', '23 augusti 1956')}, "
        f"så hon får även erbjudande om {t.d('influensavaccin')}. Sonen {t.p('NAME', 'Björn')} har fått sms."
    )


def t_sv_bastuforening(t: Trace) -> None:
    """sv: bastuförening, medlemsavgifter via Swish."""
    t.service = "forening-kassor"
    t.slice = "foreningar"
    t.user(
        "Kan du stämma av årsavgifterna? Swish-exporten är bifogad som CSV. Certifikatlösenordet till "
        f"Swish-handel är {t.p('SECRET', 'Bastu!Ved2026')}, och lösenordet till Bankgirot är "
        f"{t.p('SECRET', 'kallbad-Hav-93')} om du behöver det.\n"
        "Datum;Avsändare;Nummer;Belopp;Meddelande\n"
        f"2026-11-02;{t.p('NAME', 'EBBA SUNDSTRÖM')};{t.p('PHONE', '46703182207')};450,00;Årsavgift {t.d('Isvaken')} pnr {t.p('NATIONAL_ID', '780412-3383')}\n"
        f"2026-11-03;{t.p('NAME', 'INGRID BERGKVIST')};{t.p('IBAN', iban('SE', '5000 0000 0583 9825 7466'))};450,00;Årsavgift\n"
        f"2026-11-04;{t.p('NAME', 'AMINA HASSAN WARSAME')};{t.p('PHONE', '46762904418')};450,00;medlem {t.p('NATIONAL_ID', '199109274424')}\n"
        f"2026-11-09;{t.d('VASA BASTUBYGGARE AB')};{t.d('1236620418')};2 300,00;{t.d('Faktura 1187')}\n"
    )
    t.tool(
        "medlemsregister.matcha",
        {"ar": 2026, "belopp": "450,00"},
        {"betalda": 2, "saknas": [t.p("NAME", "Olle Wiklund"), t.p("NAME", "Pirjo Niskanen")]},
        style="oi",
    )
    t.reply(
        f"Två har betalt. {t.p('NAME', 'Wiklund')} och {t.p('NAME', 'Niskanen')} saknas. Betalningen från "
        f"{t.d('VASA BASTUBYGGARE AB')} är leverantörens faktura, inte en avgift. Byt gärna lösenorden."
    )


# ---------------------------------------------------------------------------------
# Finnish
# ---------------------------------------------------------------------------------


def t_fi_paliskunta(t: Trace) -> None:
    """fi: paliskunta, poroerotuksen kirjaukset."""
    t.service = "paliskunta-avustaja"
    t.slice = "porotalous"
    t.user(
        "Kirjaa eilisen erotuksen merkit. Omistajat:\n"
        f"- {t.p('NAME', 'Aino Väisänen')} (hetu {t.p('NATIONAL_ID', '020307A324Y')}), korvamerkki {t.d('Pykälä-Haarukka')}, 14 vasaa\n"
        f"- {t.p('NAME', 'Eetu Kärkkäinen')}, syntynyt {t.p('DOB', '15.6.1984')}, merkki {t.d('Lovi-Reikä 2')}, 9 vasaa\n"
        f"Erotuspaikka {t.d('Lokan aita')}, päivä {t.d('2.12.2026')}."
    )
    t.tool(
        "poroerotus.kirjaa",
        {
            "paliskunta": t.d("Sattanen"),
            "omistajat": [
                {"hetu": "020307A324Y", "vasat": 14},
                {"hetu": t.p("NATIONAL_ID", "150684-263N"), "vasat": 9},
            ],
        },
        {"kirjaus": t.d("ER-2026-771"), "yhteensa": 23},
    )
    t.reply(
        f"Kirjattu {t.d('ER-2026-771')}: 23 vasaa. {t.p('NAME', 'Väisänen')} on alaikäinen (s. "
        f"{t.p('DOB', '2.3.2007')}), joten huoltajan allekirjoitus tarvitaan lomakkeeseen."
    )


def t_fi_junior_hockey(t: Trace) -> None:
    """fi: junioriseura, turnausilmoittautuminen ja maksut."""
    t.service = "seura-botti"
    t.slice = "urheilu"
    secret = _rand("paytrail", 32, _ALNUM)
    t.user(
        "Ilmoita U13-joukkue Kalevan turnaukseen ja lähetä maksulinkki vanhemmille. Paytrailin merchant id "
        f"{t.d('695861')}, salainen avain {t.p('SECRET', secret)}.\n"
        "Pelaajat (nimi, syntymäaika, huoltajan puhelin):\n"
        f"{t.p('NAME', 'Onni Heikkinen')}, {t.p('DOB', '04.02.2014')}, {t.p('PHONE', '040 718 2264')}\n"
        f"{t.p('NAME', 'Veeti Mäkelä')}, {t.p('DOB', '19.09.2013')}, {t.p('PHONE', '+358 50 331 9087')}\n"
    )
    t.tool(
        "turnaus.ilmoita",
        {
            "turnaus": t.d("Kalevan Kiekko Cup 2027"),
            "sarja": t.d("U13 AA"),
            "joukkue": t.d("Kiekko-Veikot Valkoinen"),
        },
        {"ilmoittautuminen": t.d("KKC27-U13-019"), "maksu": t.d("450,00 €")},
    )
    t.reply(
        f"Joukkue on ilmoitettu ({t.d('KKC27-U13-019')}). Maksulinkki lähti {t.p('NAME', 'Heikkisen')} ja "
        f"{t.p('NAME', 'Mäkelän')} huoltajille. Turnaus pelataan {t.d('16.-18.1.2027')}."
    )


def t_fi_kirjasto(t: Trace) -> None:
    """fi: kirjasto, kaukolaina ja asiakastiedot."""
    t.service = "kirjasto-avustaja"
    t.slice = "kirjasto"
    t.user(
        f"asiakas {t.p('NAME', 'sirpa lehtonen')} soitti, hänen kirjastokorttinsa {t.d('2420 0981 7713 4')} on hukassa. "
        f"hetu {t.p('NATIONAL_ID', '300958-117B')}? ei, se oli hänen miehensä {t.p('NAME', 'Kalevi Lehtonen')}. "
        f"sirpan oma osoite {t.p('ADDRESS', 'Hämeenkatu 21 A 14, 33200 Tampere')}. hän kertoi puhelimessa "
        f"verkkokirjaston salasanansa, se on {t.p('SECRET', 'Muumilaakso#77')}, vaikka ei olisi tarvinnut."
    )
    t.tool(
        "asiakas.hae",
        {"nimi": "Sirpa Lehtonen", "postinumero": t.d("33200")},
        {
            "asiakas": t.d("A-118204"),
            "syntymavuosi": t.p("DOB", "1961"),
            "sahkoposti": t.p("EMAIL", "sirpa.lehtonen@kolumbus.example.fi"),
        },
        style="spanname",
    )
    t.p("NAME", "Sirpa Lehtonen")
    t.p("NAME", "sirpan", ["sirpan"])
    t.tool(
        "lainat." + t.p("NAME", "lehtonen-sirpa") + ".lista",
        {"asiakas": "A-118204"},
        {"lainat": 3},
        style="spanname",
    )
    t.reply(
        f"Kortti {t.d('2420 0981 7713 4')} on suljettu ja uusi odottaa {t.d('Metso')}-pääkirjastossa. "
        f"Lainoja on 3, eräpäivä {t.d('19.12.2026')}."
    )


# ---------------------------------------------------------------------------------
# Turkish
# ---------------------------------------------------------------------------------


def t_tr_hali_ihracat(t: Trace) -> None:
    """tr: halı ihracatı, gümrük ve ödeme."""
    t.service = "ihracat-asistani"
    t.slice = "ihracat"
    iyz_api = _rand("iyz-a", 32)
    iyz_sec = _rand("iyz-s", 32)
    t.user(
        f"Almanya'ya giden {t.d('Hereke ipek halı')} (Hereke fabrikası {t.d('1843')} yılında kuruldu) siparişi için proforma hazırla. Alıcı ödemesini iyzico ile yaptı; "
        f"API anahtarı {t.p('SECRET', iyz_api)} ve gizli anahtar {t.p('SECRET', iyz_sec)}. Göndericimiz "
        f"{t.p('NAME', 'Mehmet Emin Özdemir')} (T.C. kimlik no {t.p('NATIONAL_ID', '31820574662')}), "
        f"firmanın vergi numarası {t.d('4720183658')}."
    )
    t.tool(
        "gumruk.beyanname_taslak",
        {
            "gtip": t.d("5701.10.10.00.00"),
            "miktar": "1 adet",
            "deger": t.d("€12.400"),
            "ihracatci": {
                "unvan": t.d("Anadolu Halıcılık Ltd. Şti."),
                "adres": t.p(
                    "ADDRESS", "Kapalıçarşı Takkeciler Sokak No: 41, 34126 Fatih/İstanbul"
                ),
            },
        },
        {"taslak": t.d("26341300EX00041817"), "durum": "hazır"},
    )
    t.tool(
        "banka.iban_dogrula",
        {"iban": t.p("IBAN", iban("TR", "0006 2000 1470 0006 2981 92", spaced=True))},
        {"gecerli": True, "banka": t.d("Garanti BBVA")},
        style="spanname",
    )
    t.reply(
        f"Proforma ve beyanname taslağı ({t.d('26341300EX00041817')}) hazır. {t.p('NAME', 'Mehmet Bey', ['Mehmet Bey', 'Mehmet'])}'in imzası "
        "gerekiyor. iyzico anahtarlarını sohbete yazdığınız için yenilemenizi öneririm."
    )


def t_tr_hamam(t: Trace) -> None:
    """tr: hamam rezervasyonu, WhatsApp mesajları."""
    t.service = "rezervasyon-botu"
    t.slice = "turizm"
    t.user(
        "whatsapp'tan gelen mesajları rezervasyona çevir:\n"
        f"[09:14] {t.p('PHONE', '+90 532 418 77 06')}: merhaba yarın 4 kişi kese köpük istiyoruz, adım "
        f"{t.p('NAME', 'elif şahin')}\n"
        f"[09:20] {t.p('PHONE', '0 (542) 309 12 48')}: Hüseyin Ağaoğlu, 2 kişi, kadınlar bölümü değil erkekler, "
        f"saat {t.d('16:30')} olur mu, kapora için kartım {t.p('CARD', luhn('9792 0304 5517 882'))}\n"
        f"[09:31] {t.p('PHONE', '+90 505 771 20 93')}: Ben {t.p('NAME', 'Zeynep Çelikkaya')}, 1990 doğumluyum ama "
        "öğrenci indirimi var mı? Öğrenci kartım " + t.d("ÖĞR-2026-88123")
    )
    t.p("NAME", "Hüseyin Ağaoğlu")
    t.p("DOB", "1990")
    t.tool(
        "rezervasyon.olustur",
        {"tarih": t.d("2026-12-04"), "paket": t.d("Sultan Paketi"), "kisi": 4, "ad": "Elif Şahin"},
        {"no": t.d("HMM-8841"), "sadakat_karti": t.d("6034 1187 2290 4412")},
    )
    t.p("NAME", "Elif Şahin")
    t.reply(
        f"Rezervasyonlar oluşturuldu ({t.d('HMM-8841')} ve diğerleri). {t.p('NAME', 'Zeynep Hanım', ['Zeynep Hanım', 'Zeynep'])}'a öğrenci "
        f"indiriminin {t.d('26 yaş')} altı için geçerli olduğunu yazdım. {t.d('Sultan Paketi')} 4 kişi için {t.d('₺9.800')}."
    )


def t_tr_kargo(t: Trace) -> None:
    """tr: e-ticaret kargo takibi ve müşteri şikâyeti."""
    t.service = "eticaret-destek"
    t.slice = "kargo"
    t.root["flywheel.env.s0_ref"] = (
        "crm://musteriler/"
        + t.p("EMAIL", "hulya.karakas@superonline.example.com.tr")
        + "/siparisler"
    )
    t.user(
        "Müşteri şikâyeti: 'Siparişim 6 gündür dağıtımda görünüyor. Ad soyad: Hülya Karakaş, "
        "adres Bağdat Caddesi No: 214 D: 7, 34728 Kadıköy/İstanbul, T.C. 50773318284. "
        "Doğum tarihi: 12.05.1983. Hesap şifrem "
        + t.p("SECRET", "Moda.1453!kedi")
        + ", belki lazım olur. Kartımdan iki kez çekim yapıldı, kart numarası "
        + luhn("5406 6750 0012 584")
        + "'"
    )
    t.p("NAME", "Hülya Karakaş")
    t.p("DOB", "12.05.1983")
    t.p("ADDRESS", "Bağdat Caddesi No: 214 D: 7, 34728 Kadıköy/İstanbul")
    t.p("NATIONAL_ID", "50773318284")
    t.p("CARD", luhn("5406 6750 0012 584"))
    t.tool(
        "kargo.takip",
        {"takip_no": t.d("7300418829104"), "firma": t.d("Yurtiçi Kargo")},
        {
            "durum": "Dağıtımda",
            "sube": t.d("Kadıköy Moda Şube"),
            "kurye": t.p("NAME", "Serkan Yıldırım"),
        },
    )
    t.tool(
        "odeme.islemler",
        {"siparis": t.d("SP-2026-1188342")},
        {
            "islemler": [
                {"id": t.d("TRX-77120"), "tutar": t.d("1.249,90 TL")},
                {"id": t.d("TRX-77121"), "tutar": "1.249,90 TL", "durum": "iade edilecek"},
            ]
        },
        style="oi",
    )
    t.reply(
        f"{t.p('NAME', 'Hülya Hanım', ['Hülya Hanım', 'Hülya'])}, çift çekim ({t.d('TRX-77121')}) iade edilecek; 3-7 iş günü içinde kartınıza "
        "yansır. Kargonuz Moda şubesinde, kurye bugün tekrar deneyecek."
    )


# ---------------------------------------------------------------------------------
# Hungarian
# ---------------------------------------------------------------------------------


def t_hu_pinceszet(t: Trace) -> None:
    """hu: pincészet, borkóstoló foglalások."""
    t.service = "pince-foglalas"
    t.slice = "borturizmus"
    t.root["flywheel.environment"] = js(
        {
            "pince": "Szépasszony-völgy",
            "ugyeletes": t.p("NAME", "Hegyi Márton"),
            "tel": t.p("PHONE", "06 20 771 3048"),
        }
    )
    t.user(
        "Foglalási kérések a honlapról, kérlek rögzítsd őket a naptárba:\n"
        + js(
            [
                {
                    "nev": t.p("NAME", "Szabó Réka"),
                    "email": t.p("EMAIL", "szabo.reka@freemail.example.hu"),
                    "letszam": 6,
                    "csomag": t.d("Kadarka & Kékfrankos"),
                    "datum": t.d("2026. december 12."),
                },
                {
                    "nev": t.p("NAME", "Bíró Levente"),
                    "telefon": t.p("PHONE", "+36 30 418 2275"),
                    "letszam": 2,
                    "csomag": t.d("Bikavér Grand Superior"),
                    "megjegyzes": "a feleségem, "
                    + t.p("NAME", "Fekete Ildikó")
                    + " ma ünnepli a születésnapját, "
                    + t.p("DOB", "1976. december 12-én")
                    + " született",
                },
            ]
        )
    )
    t.tool(
        "naptar.esemeny",
        {
            "cim": "Kóstoló - Szabó (6 fő)",
            "kezdes": "2026-12-12T15:00",
            "hely": t.d("Szépasszony-völgyi présház"),
        },
        {"id": t.d("evt_5cbb12")},
    )
    t.p("NAME", "Szabó")
    t.reply(
        f"Mindkét foglalás rögzítve. {t.p('NAME', 'Bíróék')} kapnak egy üveg {t.d('Egri Csillag')}ot a "
        "születésnapra. A december 12-i délután így betelt."
    )


def t_hu_neptun(t: Trace) -> None:
    """hu: egyetemi tanulmányi osztály, hallgatói adatmódosítás."""
    t.service = "tanulmanyi-osztaly"
    t.slice = "egyetem"
    t.user(
        "Hallgatói kérvény érkezett a Neptunban, adatmódosítás. Kérvény szövege:\n"
        f"'Tisztelt Tanulmányi Osztály! Kovács Bence vagyok (Neptun-kód: {t.d('QX7K2M')}), született "
        f"{t.p('DOB', '1991. szeptember 27-én')} Debrecenben. Kérem a lakcímem módosítását erre: "
        f"{t.p('ADDRESS', '1092 Budapest, Ráday utca 34. 2. em. 5.')} Adóazonosító jelem "
        f"{t.p('NATIONAL_ID', '8455594276')}, TAJ-számom {t.p('NATIONAL_ID', '048 319 267')}. "
        "Köszönettel: Kovács Bence'"
    )
    t.p("NAME", "Kovács Bence")
    t.tool(
        "neptun.kervenyek.jovahagy",
        {
            "kervenyAzonosito": t.d("KRV-2026/11-0442"),
            "ugyintezo": t.p("NAME", "dr. Hegedűs Ákos", ["dr. Hegedűs Ákos", "Hegedűs", "Ákos"]),
        },
        {"statusz": "Elfogadva", "modositva": t.d("2026.12.03 08:14")},
        style="oi",
    )
    t.reply(
        f"A kérvény ({t.d('KRV-2026/11-0442')}) elfogadva. A {t.d('Ráday Kollégium')} bérleti szerződését nem érinti."
    )


def t_hu_felujitas(t: Trace) -> None:
    """hu: lakásfelújítás, árajánlat és webhook."""
    t.service = "felujitas-crm"
    t.slice = "epitoipar"
    teams = (
        "https://northwindhu.webhook.office.com/webhookb2/"
        + _rand("tm1", 8, _HEX)
        + "-"
        + _rand("tm2", 4, _HEX)
        + "-4"
        + _rand("tm3", 3, _HEX)
        + "-a"
        + _rand("tm4", 3, _HEX)
        + "-"
        + _rand("tm5", 12, _HEX)
        + "@"
        + _rand("tm6", 8, _HEX)
        + "-1f2e-4d3c-8b7a-"
        + _rand("tm7", 12, _HEX)
        + "/IncomingWebhook/"
        + _rand("tm8", 32, _HEX)
        + "/"
        + _rand("tm9", 8, _HEX)
        + "-77aa-4c1d-9e2f-"
        + _rand("tm10", 12, _HEX)
    )
    t.user(
        "tóth zsuzsanna írt emailben, fürdőszoba felújítás, kérlek küldj neki ajánlatot és szólj a csapatnak a Teams-csatornán. "
        f"A jelszava az ügyfélportálhoz állítólag {t.p('SECRET', 'Csempe2026!')} - ezt ne küldd vissza neki. "
        f"Teams webhook: {t.p('SECRET', teams)}"
    )
    t.p("NAME", "tóth zsuzsanna")
    t.tool(
        "portal.naplo",
        {"ugyfel": "Tóth Zsuzsanna", "utolso": 2},
        "2026-12-01 19:02:44 bejelentkezés OK forrás "
        + t.p("IP", "84.236.71.18")
        + " böngésző "
        + t.d("Firefox 133.0")
        + "\n2026-12-02 07:15:09 fizetés átutalással, számla "
        + t.p("IBAN", iban("HU", "1177 3016 1112 2337 0000 0000", spaced=True)),
        style="spanname",
    )
    t.tool(
        "ajanlat.keszit",
        {
            "ugyfel": "Tóth Zsuzsanna",
            "cim": t.p("ADDRESS", "Szeged, Kárász u. 9. fsz. 2."),
            "tetelek": [t.d("Zalakerámia padlólap 30x60"), t.d("Grohe Euphoria 260")],
            "afa": "27%",
        },
        {"ajanlat": t.d("AJ-2026-0931"), "brutto": t.d("1 842 500 Ft")},
    )
    t.p("NAME", "Tóth Zsuzsanna")
    t.reply(
        f"Ajánlat {t.d('AJ-2026-0931')} elküldve {t.p('NAME', 'Zsuzsannának')}, bruttó {t.d('1 842 500 Ft')}. "
        "A csapat értesítve."
    )


# ---------------------------------------------------------------------------------
# Vietnamese
# ---------------------------------------------------------------------------------


def t_vi_giao_pho(t: Trace) -> None:
    """vi: quán phở, đơn giao hàng và thanh toán."""
    t.service = "quan-pho-bot"
    t.slice = "giao-hang"
    vnp_secret = _rand("vnpay", 32, string.ascii_uppercase)
    momo_key = _rand("momo", 32)
    t.user(
        "đơn mới từ app nè, ship giúp em:\n"
        f"tên: {t.p('NAME', 'vo thi hong nhung')}\nsđt: {t.p('PHONE', '0903 418 227')}\n"
        f"địa chỉ: {t.p('ADDRESS', '123/45 Nguyễn Đình Chiểu, Phường 6, Quận 3, TP. Hồ Chí Minh')}\n"
        f"quán khai trương ngày {t.d('14/02/2019')}, món: 2 {t.d('Phở Tái Nạm')}, 1 {t.d('Phở Lý Quốc Sư')} đặc biệt\n"
        f"cấu hình thanh toán: vnp_TmnCode={t.d('PHOLQS01')} vnp_HashSecret={t.p('SECRET', vnp_secret)} "
        f"momo secretKey={t.p('SECRET', momo_key)}\n"
        f"client_ip: {t.p('IP', '113.161.74.202')}, app {t.d('v3.8.1')}"
    )
    t.tool(
        "ahamove.tao_don",
        {
            "diem_lay": t.d("Quán Phở Bà Sáu"),
            "diem_giao": "123/45 Nguyễn Đình Chiểu, Phường 6, Quận 3, TP. Hồ Chí Minh",
            "nguoi_nhan": "Võ Thị Hồng Nhung",
            "sdt": "0903418227",
        },
        {
            "ma_don": t.d("AHM-26120388417"),
            "tai_xe": t.p("NAME", "Lê Quang Tuấn"),
            "phi": t.d("32.000đ"),
        },
    )
    t.p("NAME", "Võ Thị Hồng Nhung")
    t.p("PHONE", "0903418227")
    t.reply(
        f"Đơn {t.d('AHM-26120388417')} đã tạo, tài xế anh {t.p('NAME', 'Tuấn')} sẽ giao trong khoảng 25 phút. "
        f"Phí ship {t.d('32.000đ')}. Chị {t.p('NAME', 'Nhung')} thanh toán qua MoMo."
    )


def t_vi_dich_vu_visa(t: Trace) -> None:
    """vi: dịch vụ làm visa, hồ sơ khách hàng."""
    t.service = "visa-agency"
    t.slice = "ho-so"
    t.user(
        "Kiểm tra hồ sơ xin visa Schengen cho khách, thiếu gì thì báo nhé. Mật khẩu tài khoản VFS của khách là "
        + t.p("SECRET", "Hanoi@2026vfs")
        + ". Dữ liệu OCR:\n"
        + js(
            {
                "ho_ten": t.p("NAME", "HOÀNG ĐỨC THẮNG"),
                "ngay_sinh": t.p("DOB", "03/01/1989"),
                "so_cccd": t.p("NATIONAL_ID", "001089027735"),
                "ho_chieu": t.p("NATIONAL_ID", "C7741920"),
                "noi_thuong_tru": t.p(
                    "ADDRESS", "Số 12 ngõ 85 phố Láng Hạ, phường Thành Công, quận Ba Đình, Hà Nội"
                ),
            }
        )
        + f"\nVợ anh ấy là {t.p('NAME', 'Bùi Thị Mai Phương')}, sinh ngày {t.p('DOB', '14 tháng 7 năm 1992')}, CCCD "
        f"{t.p('NATIONAL_ID', '079192004817')}."
    )
    t.tool(
        "lich_hen.dat",
        {"lanh_su_quan": t.d("Đại sứ quán Pháp"), "loai": t.d("Schengen C"), "so_nguoi": 2},
        {"lich": t.d("09/12/2026 08:30"), "ma": t.d("VFS-HAN-771204")},
        style="oi",
    )
    t.reply(
        f"Hồ sơ anh {t.p('NAME', 'Thắng')} còn thiếu sao kê ngân hàng 3 tháng. Lịch hẹn {t.d('09/12/2026 08:30')}, "
        f"mã {t.d('VFS-HAN-771204')}. Phí {t.d('90 EUR')}/người."
    )


def t_vi_may_do(t: Trace) -> None:
    """vi: tiệm may đo Hội An, đơn đặt may và email."""
    t.service = "tiem-may"
    t.slice = "ban-le"
    t.user(
        "Khách nước ngoài đặt may áo dài, gửi email xác nhận giúp mình. Ghi chú từ sổ:\n"
        f"- Khách: {t.p('NAME', 'Fatima Zahra Bennani')}, email {t.p('EMAIL', 'fz.bennani@gmail.example.com')}\n"
        f"- Số đo: ngực 86, eo 68, mông 92\n"
        f"- Vải: {t.d('lụa Vạn Phúc')} màu {t.d('xanh ngọc')}\n"
        f"- Thợ may: chị {t.p('NAME', 'Huỳnh Thị Lài')}\n"
        f"- Đặt cọc bằng thẻ {t.p('CARD', luhn('3741 592086 3317'))} hạn 08/28"
    )
    t.tool(
        "email.gui",
        {
            "den": "fz.bennani@gmail.example.com",
            "tieu_de": "Ao dai order " + t.d("HA-2026-0417"),
            "noi_dung": "Dear Ms Bennani, your áo dài will be ready for fitting on "
            + t.d("5 December")
            + ". Tailor: Ms Lài.",
        },
        {"ok": True},
    )
    t.p("NAME", "Bennani")
    t.p("NAME", "Lài")
    t.reply(
        f"Đã gửi email xác nhận đơn {t.d('HA-2026-0417')}. Hẹn thử đồ ngày {t.d('5 December')}."
    )


# ---------------------------------------------------------------------------------
# Portuguese (Portugal)
# ---------------------------------------------------------------------------------


def t_pt_cortica(t: Trace) -> None:
    """pt-PT: produtor de cortiça, faturação e fornecedores."""
    t.service = "cortica-erp"
    t.slice = "faturacao"
    t.user(
        "Emite a fatura da tiragem de agosto ao fornecedor novo. Dados que ele mandou por e-mail:\n"
        "---\n"
        f"Nome: {t.p('NAME', 'João Pedro Magalhães')}\nNIF: {t.p('NATIONAL_ID', '234815795')}\n"
        f"Morada: {t.p('ADDRESS', 'Herdade do Monte Novo, 7480-211 Avis')}\n"
        f"IBAN: {t.p('IBAN', iban('PT', '0035 0651 0000 4178 3025 4', spaced=True))}\n"
        f"Telemóvel: {t.p('PHONE', '912 447 306')}\n"
        "Cumprimentos,\nJ. P. Magalhães\n---\n"
        f"Quantidade: {t.d('318 arrobas')} a {t.d('42,50 €')}/arroba. Nosso NIPC {t.d('509183743')}."
    )
    t.p("NAME", "Magalhães")
    t.tool(
        "faturacao.emitir",
        {
            "serie": "FT 2026/",
            "nif_cliente": "234815795",
            "linhas": [{"desc": t.d("Cortiça amadia 1.ª"), "qtd": 318, "preco": 42.5}],
        },
        {"numero": t.d("FT 2026/1187"), "atcud": t.d("JJ4TK8M3-1187"), "total": t.d("16.625,87 €")},
    )
    t.reply(
        f"Fatura {t.d('FT 2026/1187')} emitida com ATCUD {t.d('JJ4TK8M3-1187')}. O pagamento ao sr. "
        f"{t.p('NAME', 'João Pedro')} segue por transferência na {t.d('sexta-feira')}."
    )


def t_pt_casa_de_fados(t: Trace) -> None:
    """pt-PT: casa de fados, reservas e credenciais da plataforma."""
    t.service = "reservas-fado"
    t.slice = "restauracao"
    token = jwt(
        {
            "sub": "staff-17",
            "email": "ines.carvalhal@tascadofado.example.pt",
            "role": "gerente",
            "iat": 1764700000,
        },
        _rand("fado-sig", 43, _ALNUM + "-_"),
    )
    t.user(
        f"Reserva para sábado: 8 pessoas em nome de {t.p('NAME', 'Maria do Rosário Antunes')}, telefone "
        f"{t.p('PHONE', '+351 217 460 932')}. É o aniversário da mãe dela, que nasceu a "
        f"{t.p('DOB', '23 de agosto de 1946')} e faz 80 anos. A palavra-passe do TheFork Manager é "
        f"{t.p('SECRET', 'Saudade#Alfama1')}; o token da API ficou em {t.p('SECRET', token)}"
    )
    t.p("EMAIL", "ines.carvalhal@tascadofado.example.pt")
    t.tool(
        "thefork.reservas.criar",
        {"data": t.d("2026-12-05"), "hora": t.d("20:30"), "pessoas": 8, "mesa": t.d("Sala Amália")},
        {
            "id": t.d("TF-88319204"),
            "estado": "confirmada",
            "fatura_nif": t.p("NATIONAL_ID", "196543207"),
        },
        style="spanname",
    )
    t.reply(
        f"Reserva {t.d('TF-88319204')} confirmada na {t.d('Sala Amália')}. Avisei a cozinha do bolo para a "
        f"D. {t.p('NAME', 'Rosário')}."
    )


# ---------------------------------------------------------------------------------
# Afrikaans
# ---------------------------------------------------------------------------------


def t_af_rugbyklub(t: Trace) -> None:
    """af: rugbyklub, lidmaatskap en spelerregistrasie."""
    t.service = "klub-sekretaris"
    t.slice = "sport"
    t.user(
        "Registreer asseblief die twee nuwe o/19-spelers by die unie. Besonderhede:\n"
        f"1. {t.p('NAME', 'Pieter du Toit')}, gebore op {t.p('DOB', '14 Maart 2008')}, ID-nommer "
        f"{t.p('NATIONAL_ID', '0803145731086')}, pa se sel {t.p('PHONE', '083 612 4471')}\n"
        f"2. {t.p('NAME', 'Sipho Ndlovu')}, ID {t.p('NATIONAL_ID', '0711025944085')} (dus gebore "
        f"{t.p('DOB', '2 November 2007')}), adres {t.p('ADDRESS', 'Kerkstraat 41, Stellenbosch, 7600')}\n"
        f"Die unie se portaal se wagwoord is {t.p('SECRET', 'Bokke!Skrum2027')}."
    )
    t.tool(
        "unie_portaal.registreer",
        {"klub": t.d("Eikestad RK"), "afdeling": t.d("o/19 A"), "spelers": 2, "seisoen": "2027"},
        {"verwysing": t.d("WPRU-REG-55107"), "fooi": t.d("R1 240,00")},
    )
    t.reply(
        f"Albei is geregistreer ({t.d('WPRU-REG-55107')}). {t.p('NAME', 'Ndlovu')} se mediese vorm is nog uitstaande; "
        f"die afrigter, {t.p('NAME', 'Jaco van der Merwe')}, sal dit opvolg voor die {t.d('Paarl Gimnasium')}-wedstryd."
    )


def t_af_boerdery_betaalstaat(t: Trace) -> None:
    """af: boerdery, seisoenwerkers se betaalstaat."""
    t.service = "plaas-administrasie"
    t.slice = "landbou"
    t.user(
        "Maak die betaalstaat vir die druiwe-oes klaar. Uit die WhatsApp-groep:\n"
        f"'Annelie hier - {t.p('NAME', 'Thabo Mokoena')} se bankrekening het verander, hy is by Capitec nou. "
        f"Sy ID is {t.p('NATIONAL_ID', '7908285312085')}, gebore {t.p('DOB', '28/08/1979')}. En tannie "
        f"{t.p('NAME', 'Griet')} is 63, gebore in 1963 - {t.p('NATIONAL_ID', '6305170126087')} - sy werk net halwe dae.'"
    )
    t.p("NAME", "Annelie")
    t.p("DOB", "1963")
    t.tool(
        "betaalstaat.bereken",
        {"periode": t.d("2026-W48"), "tarief_per_krat": t.d("R6,80"), "werkers": 37},
        {"totaal": t.d("R184 552,40"), "uif": t.d("R1 845,52"), "lêer": t.d("betaalstaat_W48.csv")},
        style="oi",
    )
    t.reply(
        f"Betaalstaat vir {t.d('2026-W48')} is klaar: {t.d('R184 552,40')} bruto. {t.p('NAME', 'Mokoena')} se nuwe "
        f"rekening moet nog deur {t.p('NAME', 'Annelie Botha')} goedgekeur word. Die {t.d('Hanepoot')}-blok is klaar geoes."
    )


# ---------------------------------------------------------------------------------
# Basque
# ---------------------------------------------------------------------------------


def t_eu_pilota_elkartea(t: Trace) -> None:
    """eu: pilota elkartea, frontoi erreserbak eta bazkideak."""
    t.service = "elkarte-laguntzailea"
    t.slice = "kirola"
    t.user(
        "Kaixo! Bazkide berri bat dugu, erregistratu mesedez. Bere datuak:\n"
        f"Izena: {t.p('NAME', 'Garazi Urkiola Mendizabal')}\n"
        f"Jaiotze data: {t.p('DOB', '2004/05/17')}\n"
        f"Helbidea: {t.p('ADDRESS', 'Kale Nagusia 14, 3. ezk., 20800 Zarautz')}\n"
        f"Telefonoa: {t.p('PHONE', '688 41 27 90')}\n"
        f"Gainera, {t.p('NAME', 'Koldo Arrizabalaga')} entrenatzaileak dio {t.d('Beotibar')} frontoia larunbatean "
        f"libre dagoela {t.d('10:00etatik 12:00etara')}."
    )
    t.tool(
        "bazkideak.sortu",
        {"izena": "Garazi Urkiola Mendizabal", "kuota": t.d("Gazteak-B"), "urtea": 2027},
        {"bazkide_zk": t.d("PE-2027-0088"), "kuota_eur": t.d("45,00 €")},
    )
    t.tool(
        "frontoia.erreserbatu",
        {"frontoia": "Beotibar", "eguna": t.d("2026-12-05"), "modalitatea": "pala"},
        {"erreserba": t.d("FR-4419")},
        style="spanname",
    )
    t.reply(
        f"{t.p('NAME', 'Garazi')} bazkide gisa erregistratuta dago ({t.d('PE-2027-0088')}). Frontoia erreserbatuta: "
        f"{t.d('FR-4419')}. {t.p('NAME', 'Arrizabalagari')} jakinarazi diot."
    )


def t_eu_txokoa(t: Trace) -> None:
    """eu: elkarte gastronomikoa, kontuak eta sarbide-kodeak."""
    t.service = "txoko-kudeaketa"
    t.slice = "elkarteak"
    t.user(
        "Abenduko kontuak itxi behar ditut. Bankuko atarian sartzeko pasahitza "
        f"{t.p('SECRET', 'Txakoli-Getaria88')} da, eta alarmako kodea {t.p('SECRET', '4471-9920')}. "
        "Zorrak dituzten bazkideak:\n"
        + js(
            {
                "zordunak": [
                    {
                        "izena": t.p("NAME", "Iñaki Agirre Zubizarreta"),
                        "zorra": t.d("128,40 €"),
                        "kontua": t.p("IBAN", iban("ES", "2095 0611 04 1061834127")),
                    },
                    {
                        "izena": t.p("NAME", "Maite Zubeldia"),
                        "zorra": t.d("46,00 €"),
                        "jaioa": t.p("DOB", "1958ko urriaren 9an"),
                    },
                ]
            }
        )
    )
    t.tool(
        "kontabilitatea.itxi",
        {
            "hilabetea": "2026-12",
            "txokoa": t.d("Gure Txokoa Elkartea"),
            "ardoa": t.d("Txomin Etxaniz 2025"),
        },
        {"saldoa": t.d("3.218,55 €"), "egoera": "itxita"},
    )
    t.reply(
        f"Kontuak itxita: saldoa {t.d('3.218,55 €')}. {t.p('NAME', 'Agirre')} jaunari eta {t.p('NAME', 'Zubeldia')} "
        "andreari gogorarazpena bidali diet. Aldatu pasahitza eta alarmako kodea, mesedez."
    )


# ---------------------------------------------------------------------------------
# Welsh
# ---------------------------------------------------------------------------------


def t_cy_eisteddfod(t: Trace) -> None:
    """cy: eisteddfod leol, ceisiadau cystadleuwyr."""
    t.service = "swyddfa-eisteddfod"
    t.slice = "diwylliant"
    t.user(
        "Mae tri chais newydd wedi dod drwy'r ffurflen. Rho nhw yn y rhestr, os gweli di'n dda:\n"
        f"- {t.p('NAME', 'Cerys Llwyd')}, unawd dan 12, dyddiad geni: {t.p('DOB', '02/06/2015')}, "
        f"rhiant: {t.p('NAME', 'Aneurin Pugh')} {t.p('PHONE', '07968 441 208')}\n"
        f"- {t.p('NAME', 'Gwilym ap Dafydd')}, llefaru agored, e-bost {t.p('EMAIL', 'gwilym.apdafydd@btinternet.example')}\n"
        f"- {t.p('NAME', 'Eirlys Prys')}, cyfansoddi emyn, ganwyd ar {t.p('DOB', '12 Mehefin 1945')}"
    )
    t.tool(
        "rhestr_cystadleuwyr.ychwanegu",
        {
            "eisteddfod": t.d("Eisteddfod Gadeiriol Llanbrynmair 2027"),
            "cystadlaethau": [t.d("Unawd dan 12"), t.d("Llefaru Agored"), t.d("Emyn-dôn")],
        },
        {"rhifau": [t.d("C-117"), t.d("C-118"), t.d("C-119")]},
    )
    t.reply(
        f"Wedi'u hychwanegu: C-117 i C-119. Bydd {t.p('NAME', 'Mrs Prys', ['Mrs Prys', 'Prys'])} yn cael ei gwahodd i "
        f"seremoni'r Cadeirio os bydd hi'n ennill. Dyddiad yr eisteddfod yw {t.d('6 Mawrth 2027')}."
    )


def t_cy_treialon_cwn_defaid(t: Trace) -> None:
    """cy: treialon cŵn defaid, cofrestru a thaliadau."""
    t.service = "treialon-cwn"
    t.slice = "amaeth-" + t.p("NAME", "tegid-owen")
    stripe = "sk_live_51" + _rand("stripe-cy", 97)
    t.user(
        "Dyma'r cofrestriadau ar gyfer y treialon. Mae'r cyfrinair i'r wefan yn newid bob mis; y mis yma y "
        f"cyfrinair yw {t.p('SECRET', 'Defaid-Mynydd-12')}.\n"
        "trinwr,ci,cofrestr_ISDS,cyfeiriad\n"
        f"{t.p('NAME', 'Tegid Owen')},{t.d('Fly')} (cofrestrwyd {t.d('03/04/2021')}),{t.d('ISDS 341288')},{t.p('ADDRESS', 'Tŷ Gwyn, Ffordd y Capel, Llanrhaeadr-ym-Mochnant, SY10 0JU')}\n"
        f"{t.p('NAME', 'Gwenllian Morgan-Rees')},{t.d('Moss')},{t.d('ISDS 339017')},{t.p('ADDRESS', 'Fferm Pen-y-Bryn, Betws Gwerful Goch, LL21 9PY')}\n"
    )
    t.tool(
        "taliadau.stripe",
        {
            "api_key": t.p("SECRET", stripe),
            "amount": 2500,
            "currency": "gbp",
            "description": t.d("Treialon Bala 2027 - cofrestru"),
        },
        {"id": t.d("pi_3QkX9L2eZvKYlo2C1b7Yp4nd"), "status": "succeeded"},
        style="oi",
    )
    t.reply(
        f"Dau gofrestriad. Mae {t.p('NAME', 'Mr Owen', ['Mr Owen', 'Owen'])} wedi talu ({t.d('£25.00')}). "
        f"Mae {t.d('Moss')} wedi'i gofrestru ddwywaith yn {t.d('ISDS 339017')} - gwiria hynny."
    )


# ---------------------------------------------------------------------------------
# Estonian
# ---------------------------------------------------------------------------------


def t_et_ettevotte_asutamine(t: Trace) -> None:
    """et: e-residentsus, osaühingu asutamine."""
    t.service = "asutamise-abi"
    t.slice = "ettevotlus"
    lhv = _rand("lhv", 40, _HEX)
    t.user(
        "Aita osaühing registreerida. Asutajad:\n"
        f"1) {t.p('NAME', 'Kadri Tamm')}, isikukood {t.p('NATIONAL_ID', '49207180277')}, sündinud "
        f"{t.p('DOB', '18. juulil 1992')}, elukoht {t.p('ADDRESS', 'Tartu mnt 84a-12, 10112 Tallinn')}\n"
        f"2) {t.p('NAME', 'Mart Saar')}, isikukood {t.p('NATIONAL_ID', '37503014216')}\n"
        f"Panga API võti (LHV Connect): {t.p('SECRET', lhv)}, portaali parool on {t.p('SECRET', 'Kalev-Spordi#55')}."
    )
    t.tool(
        "ariregister.avaldus",
        {
            "arinimi": t.d("Põhjatäht Digital OÜ"),
            "osakapital": t.d("2500 EUR"),
            "emtak": t.d("62011"),
        },
        {"registrikood": t.d("12839044"), "olek": "registreeritud"},
    )
    t.tool(
        "pank.konto_avamine",
        {
            "registrikood": "12839044",
            "esindaja": "Kadri Tamm",
            "e_post": t.p("EMAIL", "kadri.tamm@eesti.example.ee"),
        },
        {"iban": t.p("IBAN", iban("EE", "7700 7710 0318 2265")), "olek": "avatud"},
        style="oi",
    )
    t.reply(
        f"{t.d('Põhjatäht Digital OÜ')} on registreeritud (registrikood {t.d('12839044')}). Juhatuse liige on "
        f"{t.p('NAME', 'Kadri')}; {t.p('NAME', 'Mart')} on osanik. Vaheta parool, see jäi vestlusesse."
    )


WRITERS = [f for name, f in list(globals().items()) if name.startswith("t_") and callable(f)]
