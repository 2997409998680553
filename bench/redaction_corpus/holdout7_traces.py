"""holdout7: the seventh independent redaction corpus (issue 20), written blind.

51 agent runs, mostly English, German, French and Spanish (a few Italian, Dutch,
Danish, Czech), shaped like an outside evaluator's set: personal data and
secrets in prose with no keyed copy, in nested JSON, JSON in strings, URLs and
query strings, headers, connection strings, base64 and percent-encoded blobs,
and look-alikes that must survive. National ids carry check characters
computed with python-stdnum (outside the repository); IBANs and cards are
completed by ``_kit.iban`` / ``_kit.luhn``. Key material is spelled by
``_k`` (a hash of a seed, so it is stable and looks random).

Rule for addresses: a private person's home, delivery or billing address is
planted; the published address of a business is neither planted nor a decoy
(it is not scored). Dates that are not someone's birth date are decoys.
"""

from __future__ import annotations

import hashlib
import json

from _kit import Trace, b64, iban, jwt, luhn, urlenc

_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_HEX = "0123456789abcdef"


def _k(seed: str, n: int, alpha: str = _B62) -> str:
    """``n`` characters of ``alpha`` drawn from SHA-256 of ``seed`` (stable key material)."""
    out, i = "", 0
    while len(out) < n:
        for byte in hashlib.sha256(f"{seed}:{i}".encode()).digest():
            out += alpha[byte % len(alpha)]
        i += 1
    return out[:n]


def _llm(t: Trace, prompt: str, completion: str) -> None:
    """A span with the older flat GenAI attributes (``gen_ai.prompt`` / ``gen_ai.completion``)."""
    t._span(
        "llm.completion",
        {"gen_ai.system": "openai", "gen_ai.prompt": prompt, "gen_ai.completion": completion},
    )


def _pem(seed: str, kind: str = "RSA PRIVATE KEY") -> tuple[str, str]:
    """A PEM block and its second body line (the part whose survival counts as a leak)."""
    body = b64(_k(seed, 540))
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    pem = f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----"
    return pem, lines[1]


# ---------------------------------------------------------------------------- en


def t_carshare_damage(t: Trace) -> None:
    """en: car-sharing fleet, a damage report after a trip"""
    t.service = "fleet-ops-agent"
    t.slice = "carshare/damage"
    name = t.p("NAME", "Tomasz Wierzbicki")
    t.user(
        f"Hi, this is {name}. I returned the car at 18:40 and only then saw the scratch on the "
        f"rear bumper, I didn't do it. Booking {t.d('BK-20251114-0071')}. You can reach me on "
        f"{t.p('PHONE', '07700 914382')} or {t.p('EMAIL', 'tomek.wierzbicki@fastmail.co.uk')}."
    )
    t.tool(
        "fleet.lookup_booking",
        {"booking_ref": "BK-20251114-0071"},
        {
            "vehicle": {"model": t.d("Ford Puma ST-Line"), "fleet_no": "FP-0418", "firmware": t.d("v4.12.0-rc3")},
            "member": {"display": "T. W.", "since": "2022-03-01", "licence_checked": True},
            "trip": {"start": "2025-11-14T16:05:00Z", "end": "2025-11-14T18:40:00Z",
                     "end_geohash": "gcnhtj", "ended_at": "Clifton Down car park"},
        },
    )
    addr = t.p("ADDRESS", "Flat 3, 27 Cranbrook Road, Bristol BS6 7BS", ["Flat 3, 27 Cranbrook Road, Bristol BS6 7BS", "27 Cranbrook Road"])
    born = t.p("DOB", "14/02/1991")
    t.tool(
        "maps_static_image",
        {"url": "https://maps.googleapis.com/maps/api/staticmap?center=51.4659,-2.6102&zoom=17&key="
         + t.p("SECRET", "AIzaSy" + _k("carshare-gmaps", 33))},
        "image/png; 48213 bytes",
        style="oi",
    )
    t.reply(
        f"I've opened damage case {t.d('DMG-2025-118834')}. The member on file lives at {addr} "
        f"and was born {born}, which matches the licence check. Photos from the previous trip "
        f"(ended {t.d('14 Nov 2025')} 09:12) show the bumper was already marked, so I'm not charging "
        "the excess."
    )


def t_ev_charging(t: Trace) -> None:
    """en: EV charging subscription, a failed card and a switch to direct debit"""
    t.service = "charge-desk"
    name = t.p("NAME", "Priya Raghunathan")
    card = t.p("CARD", luhn("4929 1837 2045 661"))
    t.user(
        f"my card {card} keeps being declined at the charger {t.d('GB*CHG*E40921')} on the A14, "
        "can you move me to direct debit instead"
    )
    t.tool(
        "BillingAPI.GetCustomer",
        {"query": "priya"},
        json.dumps({"results": [{"customer": {"full_name": name, "plan": t.d("Rapid Plus 2025"),
                                               "sessions_this_month": 14, "kwh": t.d("412.6")}}]}),
    )
    acct = t.p("IBAN", iban("GB", "NWBK60161331926819"))
    t.tool(
        "BillingAPI.CreateMandate",
        {"account_holder": "P Raghunathan", "iban": acct,
         "billing_address": t.p("ADDRESS", "18 Holly Walk, Leamington Spa CV32 4JB")},
        {"mandate": "MD-7781-2025", "status": "pending_confirmation"},
    )
    t.tool(
        "config.read",
        {"path": "/srv/charge-desk/.env"},
        "PAYMENTS_PROVIDER=stripe\nSTRIPE_SECRET_KEY=" + t.p("SECRET", "sk_live_51" + _k("evc-stripe", 96))
        + "\nOCPP_VERSION=" + t.d("1.6J") + "\nLOG_LEVEL=info\n",
        style="spanname",
    )
    t.reply(
        "Done: a Direct Debit mandate is waiting for your confirmation by e-mail. Your last session, "
        f"{t.d('412.6')} kWh this month, is unaffected. Raghunathan account notes updated."
    )
    t.p("NAME", "Raghunathan")  # surname alone in the reply


def t_optician(t: Trace) -> None:
    """en: online optician, a varifocal order with an NHS voucher"""
    t.service = "eyewear-orders"
    full = t.p("NAME", "Adaeze Okonkwo")
    sur = "Okonkwo"
    t.user(
        f"Ordering for my mum, Mrs {sur}. She's 67, date of birth {t.p('DOB', '03 Nov 1958')}, and "
        f"she has an NHS voucher. Frame: {t.d('Lindberg Morten 1824')} in gunmetal."
    )
    t.tool(
        "patients/find",
        {"surname": sur, "nhs_number": t.p("NATIONAL_ID", "485 739 2615")},
        {"match": {"name": full, "last_eye_test": t.d("2025-09-17"), "rx": {"R": "+2.25 / -0.50 x 95", "L": "+2.00"}}},
        style="oi",
    )
    t.tool(
        "orders/create",
        {"sku": t.d("RB5154 Clubmaster 51-21"), "lens": "varifocal 1.6",
         "ship_to": {"line1": t.p("ADDRESS", "42 Beech Grove, Harrogate HG2 0EU"), "country": "GB"},
         "contact": {"email": t.p("EMAIL", "adaeze.okonkwo58@btinternet.com"), "tel": t.p("PHONE", "01423 567 204")}},
        {"order": "EW-550912", "eta": t.d("12 December 2025")},
    )
    t.reply(f"Order EW-550912 is in for Mrs {sur}; the voucher covers the lenses.")
    t.p("NAME", sur)


def t_student_housing(t: Trace) -> None:
    """en: student accommodation maintenance chat"""
    t.service = "halls-helpdesk"
    t.user(
        f"hey its {t.p('NAME', 'liam oshaughnessy')} from {t.d('Hufflepuff House')} block C room 214, the "
        "heater's dead again and the wifi keeps dropping. btw my flatmate changed the router "
        f"password to {t.p('SECRET', 'Kettle-Harbour-77')} if the tech needs it"
    )
    t.tool(
        "maintenance.createJob",
        {"location": "Block C / 214", "category": "heating", "reporter_phone": t.p("PHONE", "+44 7911 302 846"),
         "access": "tenant present after 14:00"},
        {"job": "MJ-44120", "sla_hours": 48},
    )
    t.tool(
        "network.deviceStatus",
        {"ap": t.d("AP-C2-0214"), "client_ip": t.p("IP", "10.41.214.37")},
        {"rssi": -79, "last_seen": "2025-11-20T09:02:11Z", "controller": t.d("UniFi 8.6.9")},
    )
    t.reply(
        "Heating job MJ-44120 is booked (48 h). The access point outside your room is weak; we'll move "
        "you to the 5 GHz network once the engineer is in."
    )


def t_trial_screening(t: Trace) -> None:
    """en: clinical trial recruitment, a pre-screening call summary"""
    t.service = "trial-recruit"
    t.slice = "oncology/prescreen"
    nm = t.p("NAME", "Darnell Whitfield")
    t.user(
        "Summarise the pre-screen call and tell me if he's eligible for "
        + t.d("NCT05712384") + ". Notes:\n"
        f"Spoke with {nm}, 58, born on the {t.p('DOB', '2nd of May, 1967')}. Lives at "
        f"{t.p('ADDRESS', '4127 Linden Ave, Apt 2B, Evanston, IL 60201')}. Prior chemo ended March 2023. "
        f"Callback {t.p('PHONE', '(847) 392-6618')}. Insurance asked for SSN {t.p('SSN', '512-48-7391')}, "
        "which I said we don't need for screening."
    )
    t.tool(
        "ctms_eligibility_check",
        {"protocol": "NCT05712384", "age": 58, "ecog": 1, "prior_lines": 2},
        {"eligible": True, "visit_window": t.d("2025-12-08 to 2025-12-19"), "site": "Northwestern site 014"},
        style="spanname",
    )
    _llm(
        t,
        "Draft a short callback script for the coordinator.",
        f"Hello Mr Whitfield, this is the study team calling about {t.d('NCT05712384')}...",
    )
    t.p("NAME", "Whitfield")
    t.reply("Eligible on paper (ECOG 1, two prior lines). Screening visit window 8-19 December. Do not store the SSN.")


def t_locksmith(t: Trace) -> None:
    """en: emergency locksmith call-out and payment"""
    t.service = "locksmith-dispatch"
    t.user(
        "Locked out, key snapped in the lock. I'm at "
        + t.p("ADDRESS", "9 Ashgrove Terrace, Leeds LS6 3PJ")
        + " — name's Femi Adeyemi-Clarke, phone "
        + t.p("PHONE", "0113 496 0781")
    )
    t.p("NAME", "Femi Adeyemi-Clarke")
    t.tool(
        "dispatch.nearest_engineer",
        {"postcode": "LS6", "lock": t.d("Yale Keyless Connect"), "cylinder": t.d("Chubb 3G114")},
        {"engineer": "van 7", "eta_min": 35},
    )
    t.tool(
        "payments.take_deposit",
        {"amount_gbp": "65.00", "card_number": t.p("CARD", luhn("5355 0421 8876 103")), "exp": "09/28", "cvc": "***"},
        {"auth": "approved", "ref": t.d("PAY-000481-LS")},
    )
    t.reply("An engineer is 35 minutes away. Deposit of £65.00 taken; the rest is charged after the job.")


def t_self_storage(t: Trace) -> None:
    """en: self-storage unit rental in Texas"""
    t.service = "storage-leasing"
    name = t.p("NAME", "Marisol Gutiérrez-Vega")
    t.user(
        f"I want to rent a 10x10. I'm {name}, my email is {t.p('EMAIL', 'marisol.gv@outlook.com')}."
    )
    t.tool(
        "LeaseTool",
        {"unit": t.d("Unit B-118"), "size": "10x10", "climate": True,
         "tenant": {"dl_state": "TX", "dl_number": t.p("NATIONAL_ID", "41907265"),
                    "mobile": t.p("PHONE", "+1 512 847 3390"),
                    "home": t.p("ADDRESS", "2210 E Cesar Chavez St, Austin, TX 78702")}},
        {"lease": "L-3381", "gate_code": t.p("SECRET", "7352#"), "first_month_usd": t.d("129.00")},
        style="oi",
    )
    t.reply(
        "Your unit B-118 is reserved and the gate code has been texted to you. The facility office, "
        "open 9-6, is on Springdale Rd."
    )


def t_chess_club(t: Trace) -> None:
    """en: junior chess club registrations (a spreadsheet pasted as CSV)"""
    t.service = "club-admin"
    csv = (
        "player,dob,guardian,guardian_email,rating\n"
        f"{t.p('NAME', 'Aarav Sharma')},{t.p('DOB', '2013-09-23')},{t.p('NAME', 'Kavita Sharma')},"
        f"{t.p('EMAIL', 'kavita.sharma.home@gmail.com')},1284\n"
        f"{t.p('NAME', 'Oliwia Nowak')},{t.p('DOB', '2012-01-07')},{t.p('NAME', 'Piotr Nowak')},"
        f"{t.p('EMAIL', 'p.nowak77@wp.pl')},{t.d('1517')}\n"
    )
    t.user("Import these juniors for the winter league:\n" + csv)
    t.tool("sheets.append_rows", {"sheet": "Juniors 2025/26", "csv": csv}, {"appended": 2})
    t.reply(
        f"Both imported. Pairings for round 1 go out on {t.d('6 January 2026')}; the board prize this "
        f"year is named after {t.d('Beth Harmon')}, as the kids voted."
    )


def t_ticket_resale(t: Trace) -> None:
    """en: ticket resale fraud review"""
    t.service = "trust-safety"
    seller = t.p("NAME", "Connor McAllister")
    t.user(
        f"Review listing {t.d('LST-88120455')} for {t.d('The Phantom of the Opera')} (Row K Seat 22). "
        "The buyer says the barcode was already scanned."
    )
    t.tool(
        "risk/listing_signals",
        {"listing": "LST-88120455"},
        {
            "seller": {"name": seller, "email": t.p("EMAIL", "cmcallister.tix@proton.me"),
                       "signup_ip": t.p("IP", "86.143.77.201"), "payout_card_last4": "4417"},
            "buyer": {"ip": t.p("IP", "2a02:c7c:5e31:9a00:1d4b:8e2f:77a0:31c6")},
            "session": {"cookie": "tx_sess=" + t.p("SECRET", _k("resale-cookie", 48, _HEX))},
            "barcode_hash": t.d("9f2c41d07ab3e6f58c1d2e4a7b90f3d1"),
        },
    )
    t.tool(
        "alerts.telegram_send",
        {"endpoint": "https://api.telegram.org/bot" + t.p("SECRET", "7412093385:AA" + _k("resale-tg", 33, _B62 + "-_"))
         + "/sendMessage", "chat_id": t.d("-1002214880913"), "text": "listing LST-88120455 flagged"},
        {"ok": True},
        style="spanname",
    )
    t.reply(f"Seller account suspended pending review; refund issued to the buyer. {seller} had two prior disputes.")


def t_violin_school(t: Trace) -> None:
    """en: music school in Toronto, lesson enrolment and a new teacher's payroll"""
    t.service = "music-school-office"
    t.user(
        "Enrol my daughter for Saturday violin: "
        + t.p("NAME", "Hana Yoshida-Park")
        + ", she was born 19 August 2015. Parent contact "
        + t.p("PHONE", "416-782-0193")
    )
    t.p("DOB", "19 August 2015")
    t.tool(
        "enrol",
        {"course": t.d("Suzuki Book 2 - Saturday 10:00"), "repertoire": t.d("Vivaldi Concerto in A minor")},
        {"ok": True, "room": t.d("Studio Stradivarius")},
        style="spanname",
    )
    teacher = t.p("NAME", "Rukhsana Qureshi")
    t.tool(
        "payroll.add_contractor",
        {"legal_name": teacher, "sin": t.p("NATIONAL_ID", "546 829 151"),
         "address": t.p("ADDRESS", "88 Harbord St, Unit 5, Toronto, ON M5S 1G5"),
         "start": t.d("2026-01-10")},
        {"employee_no": "C-0192"},
    )
    t.tool(
        "http_request",
        {"method": "POST", "url": "https://payroll-gw.example.ca/v2/sync",
         "headers": {"Authorization": "Basic " + b64("office:" + t.p("SECRET", "Allegro-ma-non-troppo-42"))}},
        {"status": 200},
        style="spanname",
    )
    t.reply("Enrolled; the first lesson is 10 January. The new teacher is set up in payroll.")


def t_crowdfund_refund(t: Trace) -> None:
    """en: crowdfunding campaign, a backer asks for a refund (Irish)"""
    t.service = "backer-support"
    body = {
        "from": t.p("EMAIL", "saoirse.nimhaolain@eircom.net"),
        "subject": "refund for pledge " + t.d("PLG-2025-004411"),
        "text": (
            "Dia dhuit, the board game never shipped and it's been 14 months. Please refund to my "
            f"account {t.p('IBAN', iban('IE', 'AIBK93115212345678', spaced=True))}. "
            f"Saoirse Ní Mhaoláin, {t.p('ADDRESS', 'Apartment 12, Castle Court, Kilkenny R95 X2F4')}"
        ),
    }
    t.p("NAME", "Saoirse Ní Mhaoláin")
    t.user(json.dumps(body, ensure_ascii=False))
    t.tool(
        "pledges.lookup",
        {"pledge": "PLG-2025-004411"},
        {"reward": t.d("Castles of Burgundy Deluxe"), "amount_eur": "89.00", "status": "unfulfilled"},
    )
    t.reply("Refund approved; it reaches your bank in 3-5 working days.")


def t_hackathon(t: Trace) -> None:
    """en: hackathon registration bot and a leaked token in a team's repo"""
    t.service = "hack-ops"
    lead = t.p("NAME", "Chukwuemeka Obi")
    q = "name=" + urlenc(lead) + "&email=" + urlenc(t.p("EMAIL", "emeka.obi@uniben.edu")) + "&shirt=L"
    t.user(f"Team {t.d('Gandalf the Grey')} wants to register, form posted from ?{q}")
    t.tool(
        "http_get",
        {"url": "https://register.hackweek.example/api/signup?" + q},
        {"status": 201, "team_id": "T-72"},
        style="oi",
    )
    log = (
        f"commit {t.d('4e1f0c9a2b7d83e6f5a14c20b9d7e318a6c4f2d1')}\n"
        f"Author: {lead} <emeka.obi@uniben.edu>\n\n    add config\n\n"
        "+GITHUB_TOKEN=" + t.p("SECRET", "ghp_" + _k("hack-ghp", 36)) + "\n"
        "+OPENAI_API_KEY=" + t.p("SECRET", "sk-proj-" + _k("hack-oai", 132)) + "\n"
        "+//registry.npmjs.org/:_authToken=" + t.p("SECRET", "npm_" + _k("hack-npm", 36)) + "\n"
    )
    t.tool("repo_scan", {"repo": "team-72/app", "since": t.d("2025-11-28")}, log)
    t.reply("Registered team T-72. Their repo has two live keys in a commit; I've asked them to rotate both.")


def t_mortgage_factfind(t: Trace) -> None:
    """en: mortgage broker fact-find, transcribed from a call"""
    t.service = "broker-assist"
    t.user(
        "Transcript excerpt:\nADVISER: Can I take full names and dates of birth?\n"
        f"CLIENT: Yes, I'm {t.p('NAME', 'Grace Adeyinka Bello')}, born twenty-first June 1984, and my "
        f"partner is {t.p('NAME', 'Rhys Pritchard')}, born on 9/11/1982.\n"
        f"ADVISER: And your National Insurance number?\nCLIENT: {t.p('NATIONAL_ID', 'JT 48 21 93 B')}.\n"
        f"ADVISER: Current address?\nCLIENT: {t.p('ADDRESS', '61 Wellington Crescent, Cardiff CF5 1AZ')}, "
        "we rent.\n"
    )
    t.p("DOB", "twenty-first June 1984")
    t.p("DOB", "9/11/1982")
    t.tool(
        "affordability.calc",
        {"income_1": 48500, "income_2": 39200, "deposit": 42000, "product": t.d("2 Year Fixed 4.29% FTB")},
        {"max_loan": 392000, "ltv": 0.9, "valid_until": t.d("31/01/2026")},
    )
    t.tool(
        "bank.verify_account",
        {"iban": t.p("IBAN", iban("GB", "BARC20325373198764"))},
        {"valid": True, "bank": "Barclays"},
    )
    t.reply("They can borrow up to £392,000 on the 2-year fix; I've sent the DIP request.")


def t_pet_sitting(t: Trace) -> None:
    """en: pet-sitting marketplace, a booking handover"""
    t.service = "petsit-market"
    t.user(
        f"Booking for {t.d('Sir Reginald Fluffington')} (our Maine Coon) and {t.d('Biscuit')} the beagle, "
        "20-27 Dec. The sitter is Ngozi. Key is in the lockbox by the back door, code "
        f"{t.p('SECRET', '2719')}. Address is {t.p('ADDRESS', '14 Orchard Lane, Didsbury, Manchester M20 2LB')}."
    )
    t.p("NAME", "Ngozi")
    t.tool(
        "Marketplace.ConfirmBooking",
        {"sitter_id": "S-5581", "owner": {"name": t.p("NAME", "Hannah Leclerc-Brown"),
                                          "phone": t.p("PHONE", "07823 441 907")}},
        {"booking": "PB-20251220-19", "insurance": t.d("Policy PSI-44-2025")},
    )
    tok = t.p("SECRET", _k("petsit-discord", 68, _B62 + "-_"))
    t.tool(
        "notify",
        {"channel": "discord", "url": f"https://discord.com/api/webhooks/{t.d('1183920457712640021')}/{tok}",
         "content": "new booking PB-20251220-19"},
        {"status": 204},
        style="oi",
    )
    t.reply("Booked. The sitter can see the lockbox note; it is hidden from everyone else.")


def t_airflow_pipeline(t: Trace) -> None:
    """en: data pipeline failure triage (scheduler logs)"""
    t.service = "data-oncall"
    pw = t.p("SECRET", "Qm7v!rT2zL#pw8")
    log = (
        f"[2025-11-30 02:14:07] {{taskinstance.py:2890}} ERROR - Task failed dag_id=nightly_sales "
        f"run_id={t.d('scheduled__2025-11-30T02:00:00+00:00')}\n"
        f"sqlalchemy.exc.OperationalError: connection to server at \"10.8.3.21\" failed for "
        f"postgresql://etl_writer:{pw}@warehouse-pg.internal:5432/sales\n"
        f"AWS_ACCESS_KEY_ID={t.p('SECRET', 'AKIA' + _k('airflow-akid', 16, '234567ABCDEFGHIJKLMNOPQRSTUVWXYZ'))}\n"
        f"AWS_SECRET_ACCESS_KEY={t.p('SECRET', _k('airflow-sak', 40))}\n"
        f"worker pod {t.d('airflow-worker-7d9f8c6b5-x2kqp')} image {t.d('apache/airflow:2.10.3-python3.11')}\n"
    )
    t.user("nightly_sales failed again, what's wrong?\n" + log)
    hook = t.p("SECRET", "https://hooks.slack.com/services/T04" + _k("af-t", 8, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
               + "/B07" + _k("af-b", 8, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") + "/" + _k("af-hook", 24))
    t.tool("notify_slack", {"webhook": hook, "text": "nightly_sales failed: warehouse-pg auth"}, "ok", style="spanname")
    t.tool("net.whois_ip", {"ip": t.p("IP", "203.0.113.77")}, {"owner": "office NAT"}, style="oi")
    t.reply("The password for etl_writer was rotated on the database but not in the connection. Rotate the AWS keys too, they are in the log.")


def t_saas_sso(t: Trace) -> None:
    """en: SaaS support, an SSO login loop"""
    t.service = "saas-support"
    token = jwt({"sub": "auth0|66f1a2", "email": "r.castellanos@brightpath-logistics.com",
                 "name": "Rafael Castellanos", "exp": 1764500000}, _k("sso-sig", 43, _B62 + "-_"))
    t.p("NAME", "Rafael Castellanos")
    t.p("EMAIL", "r.castellanos@brightpath-logistics.com")
    t.p("SECRET", token)
    t.user(
        "Our users get stuck in a login loop after SSO. HAR excerpt:\n"
        f"GET /app/home HTTP/2\nAuthorization: Bearer {token}\n"
        f"Cookie: appSession={t.p('SECRET', _k('sso-cookie', 64, _B62 + '-_'))}; theme=dark\n"
        f"X-Forwarded-For: {t.p('IP', '198.51.100.24')}\n"
        f"X-Request-Id: {t.d('7f3b2c1e-9a4d-4e8b-b6f0-2d5c8a1e4f93')}\n"
    )
    t.tool(
        "tenant_config",
        {"tenant": t.d("brightpath-prod")},
        {"auth0": {"domain": "brightpath.eu.auth0.com", "client_id": t.d("x7Qp2RkL9mNv4TaB"),
                   "client_secret": t.p("SECRET", _k("sso-auth0-secret", 64, _B62 + "-_"))}},
    )
    t.reply("The callback URL is missing the /app prefix, so the session cookie is set on the wrong path.")


def t_cleaning_service(t: Trace) -> None:
    """en: home cleaning booking in Melbourne"""
    t.service = "clean-bookings"
    t.user(
        "need a deep clean before we move out on the 12th, 2 bed unit. "
        + t.p("NAME", "Thanh Huong Pham")
        + " / "
        + t.p("PHONE", "0438 271 905")
    )
    t.tool(
        "quote.create",
        {"job": "end of lease", "bedrooms": 2,
         "address": t.p("ADDRESS", "Unit 4/18 Wattle St, Fitzroy VIC 3065"),
         "extras": [t.d("Oven Pro Pack"), "windows"]},
        {"quote_aud": t.d("389.00"), "slot": t.d("12 Dec 2025 08:00")},
        style="oi",
    )
    t.tool(
        "payments.save_card",
        {"pan": t.p("CARD", luhn("3782 822463 1000")), "holder": "T H PHAM"},
        {"token": t.d("tok_1QxR8fGz2LmN0pQs")},
    )
    t.p("NAME", "PHAM")
    t.reply("Booked for 12 December 08:00, $389 quoted.")


def t_crm_import(t: Trace) -> None:
    """en: CRM contact import from a trade-show scanner"""
    t.service = "crm-assistant"
    rows = [
        [t.p("NAME", "Siddharth Menon"), t.p("EMAIL", "sid.menon@kestrelworks.io"), t.p("PHONE", "+1 (415) 602-7731"), "Booth A"],
        [t.p("NAME", "Ingrid Solberg"), t.p("EMAIL", "ingrid.solberg@fjordtek.no"), t.p("PHONE", "+47 915 62 048"), "Booth A"],
        [t.p("NAME", "Kwame Asante"), t.p("EMAIL", "kwame@asante-design.co.uk"), t.p("PHONE", "+44 20 7946 0318"), "Talk"],
    ]
    csv = "name,email,phone,source\n" + "\n".join(",".join(r) for r in rows)
    t.user("Import the badge scans from " + t.d("SaaStr Europa 2025") + ", file attached as base64: " + b64(csv))
    t.tool(
        "hubspot.contacts.batch_create",
        {"headers": {"Authorization": "Bearer " + t.p("SECRET", "pat-na1-" + _k("crm-hs", 36, _HEX)[:8] + "-" + _k("crm-hs2", 4, _HEX) + "-4" + _k("crm-hs3", 3, _HEX) + "-a" + _k("crm-hs4", 3, _HEX) + "-" + _k("crm-hs5", 12, _HEX))},
         "count": 3},
        {"created": 3, "batch": t.d("batch_01JD8ZQ4V6")},
    )
    pem, line = _pem("crm-gcp-sa", "PRIVATE KEY")
    sa = {"type": "service_account", "project_id": t.d("leadsync-prod-418207"),
          "private_key_id": t.p("SECRET", _k("crm-gcp-kid", 40, _HEX)), "private_key": pem + "\n",
          "client_email": "leadsync@leadsync-prod-418207.iam.gserviceaccount.com"}
    t.p("SECRET", pem, [pem, line])
    t.tool("gcs.upload_backup", {"credentials_json": json.dumps(sa), "bucket": "crm-backups"}, {"ok": True})
    t.reply("3 contacts created and added to the list 'Europa 2025 leads'.")


# ---------------------------------------------------------------------------- de


def t_kfz_zulassung(t: Trace) -> None:
    """de: Kfz-Zulassungsstelle, Termin und SEPA-Mandat für die Kfz-Steuer"""
    t.service = "buergerservice-bot"
    t.user(
        "Ich möchte meinen gebrauchten Wagen ummelden. Ich heiße Sebastian Kowalczyk, geb. "
        f"{t.p('DOB', '07.04.1979')}, wohne in der {t.p('ADDRESS', 'Schwabstraße 48, 70197 Stuttgart')}. "
        f"Fahrzeug: {t.d('VW Golf VII Variant')}, FIN {t.d('WVWZZZAUZFP512847')}, "
        f"Schlüsselnummer {t.d('0603/BGM')}."
    )
    t.p("NAME", "Sebastian Kowalczyk")
    t.tool(
        "termin_buchen",
        {"dienststelle": "Zulassungsstelle Stuttgart", "anliegen": "Umschreibung",
         "kontakt": {"telefon": t.p("PHONE", "0711 6583 2290"), "mail": t.p("EMAIL", "s.kowalczyk@web.de")}},
        {"termin": t.d("Di, 16.12.2025, 10:20 Uhr"), "vorgangsnummer": t.d("ZL-2025-884120")},
    )
    t.tool(
        "sepa_mandat_kfzsteuer",
        {"kontoinhaber": "Kowalczyk, Sebastian", "iban": t.p("IBAN", iban("DE", "600501010002348761", spaced=True))},
        {"mandatsreferenz": t.d("KFZ-STG-0048812")},
        style="oi",
    )
    t.p("NAME", "Kowalczyk, Sebastian")
    t.reply("Ihr Termin ist am 16.12.2025 um 10:20 Uhr. Bitte bringen Sie die Zulassungsbescheinigung Teil II mit.")


def t_hebamme(t: Trace) -> None:
    """de: Hebammenvermittlung, Anfrage einer Schwangeren"""
    t.service = "hebammen-suche"
    t.user(
        f"Hallo, ich bin {t.p('NAME', 'Elif Demirci')}, ET ist der {t.d('14.05.2026')}, erstes Kind. "
        "Ich suche eine Hebamme für die Nachsorge in Kreuzberg. Ich bin am "
        f"{t.p('DOB', '22. Oktober 1993')} geboren und bei der TK versichert."
    )
    t.tool(
        "hebammen.suche",
        {"plz": "10961", "leistung": ["Nachsorge", "Rückbildung"], "ab": "2026-05"},
        {"treffer": [{"name": t.d("Hebammenpraxis Sonnenkind"), "frei": True}]},
    )
    t.tool(
        "anfrage.senden",
        {"an": "Hebammenpraxis Sonnenkind",
         "text": (f"Anfrage von Frau Demirci, {t.p('ADDRESS', 'Bergmannstr. 102, 10961 Berlin')}, "
                  f"Tel. {t.p('PHONE', '+49 176 4418 2093')}, Versichertennummer "
                  f"{t.p('NATIONAL_ID', 'K381046278')}")},
        {"gesendet": True},
    )
    t.p("NAME", "Demirci")
    t.reply("Die Anfrage ist raus. Die Praxis meldet sich in der Regel innerhalb einer Woche.")


def t_heizungswartung(t: Trace) -> None:
    """de: Heizungsbauer, Wartungstermin und Fernzugriff auf die Therme"""
    t.service = "sanitaer-heizung-ki"
    kunde = t.p("NAME", "Hans-Jürgen Pöhlmann")
    t.tool(
        "kundenstamm.suchen",
        {"suchbegriff": "Pöhlmann"},
        {"kunde": {"name": kunde, "anschrift": t.p("ADDRESS", "Am Lindenhof 7, 91054 Erlangen"),
                   "telefon": t.p("PHONE", "09131 812 447"),
                   "anlage": {"typ": t.d("Vitodens 200-W B2HF"), "serien_nr": t.d("7571234500123456"),
                              "baujahr": t.d("2016")}}},
        style="spanname",
    )
    t.p("NAME", "Pöhlmann")
    t.user(
        "Der Kunde hat angerufen, Störung F4. Er hat gesagt, das WLAN-Passwort für das Gateway lautet "
        f"{t.p('SECRET', 'Amsel!Fichte2019')}, und die Vitoconnect hat die IP {t.p('IP', '192.168.178.54')}."
    )
    t.tool(
        "fernzugriff",
        {"gateway_ip": "192.168.178.54", "fehlercode": "F4"},
        {"diagnose": "Flammenüberwachung", "letzte_wartung": t.d("03.11.2024")},
    )
    t.reply("F4 ist die Flammenüberwachung. Ich plane einen Techniker für Donnerstag ein.")


def t_jobrad(t: Trace) -> None:
    """de: Dienstrad-Leasing über die Personalabteilung"""
    t.service = "hr-benefits"
    t.user(
        "Bitte den Überlassungsvertrag für Frau Aleksandra Petrović anlegen, Personalnummer "
        f"{t.d('PN-004417')}, Rad: {t.d('Cube Kathmandu Hybrid EXC 750')}, Preis {t.d('4.299,00 €')}."
    )
    t.p("NAME", "Aleksandra Petrović")
    t.tool(
        "lohn.stammdaten",
        {"personalnummer": "PN-004417"},
        {"name": "Petrović, Aleksandra", "steuer_id": t.p("NATIONAL_ID", "57138049564"),
         "geburtsdatum": t.p("DOB", "1988-11-30"), "steuerklasse": 4,
         "bank": {"iban": t.p("IBAN", iban("DE", "120300000019284736"))}},
    )
    t.p("NAME", "Petrović, Aleksandra")
    t.tool(
        "leasing.vertrag_erstellen",
        {"laufzeit_monate": 36, "umwandlung_brutto": t.d("118,42"), "versicherung": t.d("Premium Plus")},
        {"vertrag": "DR-2025-11-0931"},
    )
    t.reply("Vertrag DR-2025-11-0931 ist angelegt und an die Mitarbeiterin zur Signatur geschickt.")


def t_schornsteinfeger(t: Trace) -> None:
    """de-AT: Rauchfangkehrer in Wien, Terminvereinbarung"""
    t.service = "rauchfang-termine"
    t.user(
        f"Grüß Gott, {t.p('NAME', 'Mag. Ingrid Hofstätter-Lang', ['Mag. Ingrid Hofstätter-Lang', 'Ingrid', 'Hofstätter', 'Lang'])} hier. "
        "Die Überprüfung der Gastherme ist fällig. Ich wohne "
        f"{t.p('ADDRESS', 'Favoritenstraße 112/3/14, 1100 Wien')} und bin unter "
        f"{t.p('PHONE', '+43 664 381 2907')} erreichbar. Beim letzten Mal hat der "
        f"{t.d('Stephansdom')}-Blick vom Dach alle begeistert."
    )
    t.tool(
        "kehrbezirk.lookup",
        {"bezirk": "10"},
        {"betrieb": "Rauchfangkehrermeister Bezirk 10", "intervall": "jährlich"},
    )
    t.tool(
        "rechnung.vorbereiten",
        {"kunde": "Hofstätter-Lang", "svnr": t.p("NATIONAL_ID", "5834 120378"), "betrag": t.d("€ 94,80")},
        {"rechnung": t.d("RK-10-2025-3318")},
        style="oi",
    )
    t.p("NAME", "Hofstätter-Lang")
    t.reply("Termin am Montag zwischen 8 und 12 Uhr.")


def t_fussballverein(t: Trace) -> None:
    """de: Fußballverein, Mitgliedsantrag für ein Kind"""
    t.service = "vereinsverwaltung"
    form = {
        "mitglied": {"vorname": t.p("NAME", "Luca"), "nachname": t.p("NAME", "Brandstätter"),
                     "geburtsdatum": t.p("DOB", "03.03.2014")},
        "erziehungsberechtigt": {"name": t.p("NAME", "Miriam Brandstätter-Yıldız"),
                                  "email": t.p("EMAIL", "miriam.by@gmx.de"),
                                  "anschrift": t.p("ADDRESS", "Kirchweg 3a, 48161 Münster")},
        "sepa": {"iban": t.p("IBAN", iban("DE", "400501500034928107")), "beitrag": t.d("12,50 € monatlich")},
        "mannschaft": t.d("E-Jugend (U11)"),
    }
    t.user("Neuer Antrag über das Webformular: " + json.dumps(json.dumps(form, ensure_ascii=False), ensure_ascii=False))
    t.tool("mitglieder.anlegen", form, {"mitgliedsnummer": t.d("SV-1920-4471"), "spielerpass": "beantragt"})
    t.reply(
        "Luca ist angelegt. Er wurde am 3. März 2014 geboren und spielt damit in der E-Jugend. "
        f"Erstes Training: {t.d('Dienstag, 6. Januar 2026')}."
    )
    t.p("DOB", "3. März 2014")


def t_mietwagen(t: Trace) -> None:
    """de-CH: Autovermietung in Zürich, Buchung mit Fahrerdaten"""
    t.service = "mietwagen-ch"
    t.user(
        f"Grüezi, ich brauche vom {t.d('22.12.2025')} bis {t.d('2.1.2026')} einen Kombi ab Zürich Flughafen. "
        "Fahrer: Reto Zimmerli-Baumgartner, AHV-Nr. "
        f"{t.p('NATIONAL_ID', '756.4817.3092.59')}, Führerausweis seit 2004."
    )
    t.p("NAME", "Reto Zimmerli-Baumgartner")
    t.tool(
        "vehicles.search",
        {"pickup": "ZRH", "category": "estate"},
        [{"model": t.d("Opel Astra Sports Tourer"), "rate_chf": t.d("CHF 1'184.50")}],
    )
    t.tool(
        "booking.create",
        {"driver": {"birth_date": t.p("DOB", "1981-06-17"), "phone": t.p("PHONE", "+41 79 418 23 65"),
                    "home": t.p("ADDRESS", "Seefeldstrasse 214, 8008 Zürich")},
         "card": t.p("CARD", luhn("5168 4412 0937 285"))},
        {"booking": t.d("ZRH-77K-0412"), "deposit_chf": "1500"},
    )
    t.reply("Gebucht: Opel Astra Sports Tourer, Abholung 22.12.2025 am Flughafen.")


def t_wohngeld(t: Trace) -> None:
    """de: Wohngeldantrag, Haushaltsmitglieder aus einem PDF gelesen"""
    t.service = "antrags-assistent"
    ocr = (
        "Haushaltsmitglieder:\n"
        f"1. {t.p('NAME', 'Yusuf Haddad')}, geboren {t.p('DOB', '12.09.1986')}, Steuer-IdNr. {t.p('NATIONAL_ID', '82640193872')}\n"
        f"2. {t.p('NAME', 'Rania Haddad')}, geboren {t.p('DOB', '28.02.1990')}\n"
        f"3. {t.p('NAME', 'Amir Haddad')}, geboren {t.p('DOB', '15.07.2019')}\n"
        f"Wohnung: {t.p('ADDRESS', 'Hegelstraße 19, 39104 Magdeburg')}, 3. OG links\n"
        f"Miete: {t.d('742,00 EUR')} warm\n"
    )
    t.tool("pdf.ocr", {"file": "wohngeld_antrag_scan.pdf", "pages": [2]}, ocr, style="spanname")
    t.user("Prüf bitte, ob der Antrag vollständig ist.")
    t.tool(
        "wohngeld.pruefen",
        {"aktenzeichen": t.d("2025-WG-004871"), "haushaltsgroesse": 3},
        {"fehlend": ["Einkommensnachweis"], "stichtag": t.d("01.01.2026")},
    )
    t.reply("Es fehlt der Einkommensnachweis für Herrn Haddad; sonst ist der Antrag vollständig.")
    t.p("NAME", "Haddad")


def t_handyvertrag(t: Trace) -> None:
    """de: Mobilfunkvertrag mit Rufnummernmitnahme"""
    t.service = "mobilfunk-shop"
    t.user(
        "Ich will meine Nummer mitnehmen: " + t.p("PHONE", "0157 3829 1164")
        + ". Tarif " + t.d("Allnet Flat 40 GB") + ". Mein Kundenkennwort beim alten Anbieter ist "
        + t.p("SECRET", "Rotkehlchen88") + "."
    )
    t.tool(
        "vertrag.anlegen",
        {"kunde": {"anrede": "Herr", "name": t.p("NAME", "Dimitrios Papadopoulos"),
                   "geburtstag": t.p("DOB", "1975-02-14"),
                   "email": t.p("EMAIL", "d.papadopoulos75@t-online.de")},
         "zahlung": {"iban": t.p("IBAN", iban("DE", "370400440532013000"))},
         "hardware": t.d("Galaxy A55 5G 128GB")},
        {"vertragsnummer": t.d("MV-2025-1207-5532"), "portierung": t.d("05.12.2025")},
    )
    t.reply("Vertrag angelegt; die Portierung ist für den 05.12.2025 geplant.")


def t_gitlab_ci_de(t: Trace) -> None:
    """de: Entwicklerteam, fehlgeschlagene Pipeline und geleakte Zugangsdaten"""
    t.service = "devops-assistent"
    log = (
        f"Running with gitlab-runner {t.d('17.5.2')} (3f7a2b1c)\n"
        "$ docker login -u ci-bot -p " + t.p("SECRET", "dckr_pat_" + _k("de-dckr", 27, _B62 + "-_")) + " registry.example.de\n"
        "$ export DATABASE_URL=mysql://shop:" + t.p("SECRET", "Brezel&Senf2024") + "@db-stage.intern:3306/shop\n"
        "$ export SENTRY_DSN=https://" + t.p("SECRET", _k("de-sentry", 32, _HEX)) + "@o45021.ingest.sentry.io/6120447\n"
        f"ERROR: Job failed: exit code 1 (pipeline {t.d('#184220')}, commit {t.d('b7c41e09f3a2')})\n"
    )
    t.tool("gitlab.job_log", {"project": "shop/backend", "job": 9918274}, log)
    t.user(
        "Warum ist die Pipeline rot? Der Commit ist von "
        + t.p("NAME", "Jonas Weißmüller")
        + " <" + t.p("EMAIL", "jonas.weissmueller@example-shop.de") + ">. Er nutzt sein Token "
        + t.p("SECRET", "glpat-" + _k("de-glpat", 20, _B62 + "-_")) + " für die API."
    )
    t.reply("Der Job scheitert am Datenbank-Login. Bitte die drei Zugangsdaten aus dem Log sofort rotieren.")


# ---------------------------------------------------------------------------- fr


def t_mutuelle(t: Trace) -> None:
    """fr: mutuelle santé, demande de remboursement"""
    t.service = "mutuelle-assistant"
    t.user(
        "Bonjour, je n'ai toujours pas été remboursée pour mes lunettes. Je suis "
        f"{t.p('NAME', 'Camille Rousseau-Diallo')}, née le {t.p('DOB', '5 mai 1985')}, numéro de "
        f"sécu {t.p('NATIONAL_ID', '2 85 05 75 112 084 46')}. Merci de virer sur mon nouveau compte "
        f"{t.p('IBAN', iban('FR', '30004005830001234567832', spaced=True))}."
    )
    t.tool(
        "adherents.get",
        {"nir": "2850575112084 46"},
        {"adherent": {"numero": t.d("ADH-0093381"), "formule": t.d("Confort Plus 3"),
                      "adresse": t.p("ADDRESS", "appartement 14, 8 allée des Tilleuls, 44300 Nantes",
                                     ["appartement 14, 8 allée des Tilleuls, 44300 Nantes", "8 allée des Tilleuls"])}},
    )
    t.p("NATIONAL_ID", "2850575112084 46")
    t.tool(
        "remboursements.lister",
        {"adherent": "ADH-0093381", "depuis": t.d("2025-09-01")},
        [{"acte": "optique", "date_soins": t.d("18/09/2025"), "montant": t.d("245,00 €"), "statut": "en attente RIB"}],
    )
    t.reply("Le remboursement optique de 245,00 € était bloqué faute de RIB ; il part sous 48 h sur le nouveau compte.")


def t_covoiturage(t: Trace) -> None:
    """fr: covoiturage, un passager signale un conducteur absent"""
    t.service = "covoit-support"
    t.user(
        f"Le conducteur ne s'est jamais présenté à {t.d('Gare de Lyon-Part-Dieu')} hier à 7h. Il s'appelle "
        f"Mathieu, son numéro c'est le {t.p('PHONE', '06 12 48 93 57')}. Remboursez-moi svp, j'ai payé avec la "
        f"carte {t.p('CARD', luhn('4974 0187 6623 940'))}."
    )
    t.p("NAME", "Mathieu")
    t.tool(
        "trajets.detail",
        {"trajet": t.d("TRJ-LYO-GRE-20251201-0700")},
        {"conducteur": {"prenom": "Mathieu", "nom": t.p("NAME", "Vasseur"), "note": 4.6},
         "passager": {"nom_complet": t.p("NAME", "Inès Bouaziz"), "mail": t.p("EMAIL", "ines.bouaziz@laposte.net")}},
        style="oi",
    )
    t.reply("Remboursement intégral lancé (5 à 7 jours). Le compte du conducteur est suspendu le temps de l'enquête.")


def t_interim(t: Trace) -> None:
    """fr: agence d'intérim, dossier d'un intérimaire"""
    t.service = "interim-rh"
    nom = t.p("NAME", "Karim Benali")
    t.user(
        f"Nouveau dossier : {nom}, né le {t.p('DOB', '1er février 1978')} à Lyon, cariste CACES 3 et 5. "
        f"Il habite {t.p('ADDRESS', '27 bis rue Paul Bert, 69003 Lyon')}. Portable {t.p('PHONE', '+33 7 81 44 20 96')}."
    )
    t.tool(
        "dossier.creer",
        {"nom": "BENALI", "prenom": "Karim", "nir": t.p("NATIONAL_ID", "178096938114206"),
         "rib": t.p("IBAN", iban("FR", "20041010050500013M02606"))},
        {"matricule": t.d("INT-69-004812"), "visite_medicale": t.d("09/12/2025")},
    )
    t.p("NAME", "BENALI")
    t.p("NAME", "Karim")
    t.reply(f"Dossier créé. Première mission possible chez {t.d('Entrepôt Saint-Priest Nord')} dès lundi.")


def t_conservatoire(t: Trace) -> None:
    """fr: conservatoire municipal, inscriptions en cours"""
    t.service = "conservatoire-inscriptions"
    body = (
        "nom_eleve=" + urlenc(t.p("NAME", "Léa Nguyen-Fabre"))
        + "&date_naissance=" + urlenc(t.p("DOB", "17/03/2016"))
        + "&instrument=violoncelle&responsable=" + urlenc(t.p("NAME", "Sophie Fabre"))
        + "&courriel=" + urlenc(t.p("EMAIL", "sophie.fabre@orange.fr"))
        + "&tel=" + urlenc(t.p("PHONE", "+33 6 71 02 58 34"))
        + "&qf=" + t.d("QF4")
    )
    t.tool("http.post", {"url": "https://conservatoire.example.fr/inscription", "body": body}, {"status": 200}, style="spanname")
    t.user("Est-ce que l'inscription de ma fille est bien passée ? C'est pour le violoncelle.")
    t.reply(
        f"Oui, l'inscription est enregistrée. Le premier cours a lieu le {t.d('mercredi 7 janvier 2026')} ; "
        f"l'audition de fin d'année portera sur {t.d('Le Carnaval des animaux')}."
    )


def t_pressing(t: Trace) -> None:
    """fr: pressing, tickets et client en majuscules"""
    t.service = "pressing-caisse"
    t.tool(
        "tickets.rechercher",
        {"client": "DUPONT-MOREAU"},
        {"lignes": [
            {"ticket": t.d("Ticket n° 004512"), "client": t.p("NAME", "DUPONT-MOREAU Hélène"),
             "articles": ["robe soie", t.d("manteau Max Mara Manuela")], "tel": t.p("PHONE", "04 91 37 62 08")},
        ]},
    )
    t.user("La cliente DUPONT-MOREAU demande si son manteau est prêt, elle passe à 18h.")
    t.p("NAME", "DUPONT-MOREAU")
    t.reply("Oui, le manteau et la robe sont prêts, total 38,50 €.")


def t_vide_grenier(t: Trace) -> None:
    """fr-BE: brocante de quartier à Ixelles, inscription d'un exposant"""
    t.service = "brocante-inscriptions"
    t.user(
        "Inscription exposant pour la brocante de la " + t.d("Place Flagey")
        + " : Monsieur Olivier Vandermeulen, numéro national "
        + t.p("NATIONAL_ID", "85.07.30-214.41") + ", domicilié "
        + t.p("ADDRESS", "Rue de la Brasserie 27 boîte 3, 1050 Ixelles")
        + ". Il vend surtout des figurines " + t.d("Tintin") + " et des albums de "
        + t.d("Gaston Lagaffe") + "."
    )
    t.p("NAME", "Olivier Vandermeulen")
    t.tool(
        "emplacements.attribuer",
        {"metres": 4, "gsm": t.p("PHONE", "0476 38 21 94"), "email": t.p("EMAIL", "o.vandermeulen@skynet.be")},
        {"emplacement": t.d("F-17"), "prix": t.d("20,00 €")},
    )
    t.reply("Emplacement F-17 attribué à M. Vandermeulen, 4 mètres.")
    t.p("NAME", "Vandermeulen")


def t_centre_equestre(t: Trace) -> None:
    """fr: centre équestre, stage de vacances"""
    t.service = "poney-club"
    _llm(
        t,
        "Réponds à ce message de parent : « Bonjour, je voudrais inscrire ma fille Chloé Lefèvre (née le "
        + t.p("DOB", "30.04.2014") + ") au stage galop 3 des vacances de février. Elle monte d'habitude "
        + t.d("Jolly Jumper") + ". Je suis joignable au " + t.p("PHONE", "06 84 27 19 50") + ". Aurélie Lefèvre »",
        "Bonjour Madame Lefèvre, c'est noté pour Chloé : stage galop 3 du " + t.d("16 au 20 février 2026")
        + ". Elle aura " + t.d("Ourasi du Bocage") + " ou Jolly Jumper selon les disponibilités.",
    )
    t.p("NAME", "Chloé Lefèvre")
    t.p("NAME", "Aurélie Lefèvre")
    t.p("NAME", "Lefèvre")
    t.tool("planning.reserver", {"stage": "galop3-fev", "cavaliere": "Chloé"}, {"places_restantes": 2})
    t.p("NAME", "Chloé")
    t.user("Inscris Chloé au stage de février.")
    t.reply("Inscription faite, il reste deux places.")


def t_marketplace_litige(t: Trace) -> None:
    """fr: petites annonces, litige entre acheteur et vendeur"""
    t.service = "annonces-moderation"
    t.user(
        "J'ai payé un vélo 350 € et le vendeur a disparu. Il m'a dit de le contacter sur "
        f"{t.p('EMAIL', 'bastien.lemaire84@gmail.com')}. Moi je me connecte normalement, mon mot de "
        f"passe c'est {t.p('SECRET', 'Chouquette_2025!')} si vous devez vérifier."
    )
    t.tool(
        "annonces.historique",
        {"annonce": t.d("ANN-5580213")},
        {"vendeur": {"pseudo": "velo_rando_84", "nom": t.p("NAME", "Bastien Lemaire"),
                     "ip_creation": t.p("IP", "90.112.45.18"),
                     "adresse": t.p("ADDRESS", "3 impasse des Vignes, 84000 Avignon")},
         "objet": t.d("Vélo Peugeot PX-10 1974"), "prix": t.d("350 €")},
    )
    t.tool(
        "paiements.rechercher",
        {"headers": {"Cookie": "sid=" + t.p("SECRET", _k("fr-lbc-sid", 40, _B62))}},
        {"paiement": "PAY-FR-99120", "iban_vendeur": t.p("IBAN", iban("FR", "30066100410001057380116"))},
        style="oi",
    )
    t.reply("Nous bloquons le paiement et ouvrons un litige. Changez votre mot de passe : ne le communiquez jamais, même à nous.")


def t_camping_car(t: Trace) -> None:
    """fr-CH: location de camping-car à Lausanne"""
    t.service = "vanlife-location"
    t.user(
        f"Bonjour, réservation d'un fourgon du {t.d('4 au 18 juillet 2026')}. Conducteur principal : "
        f"{t.p('NAME', 'Nathalie Perrenoud')}, née le {t.p('DOB', '09.12.1979')}, n° AVS "
        f"{t.p('NATIONAL_ID', '756.9304.1528.75')}. Domicile : {t.p('ADDRESS', 'Chemin des Roches 11, 1009 Pully')}."
    )
    t.tool(
        "flotte.disponibilite",
        {"modele": t.d("Pössl Roadcar 601"), "depuis": "Lausanne"},
        {"dispo": True, "tarif": t.d("CHF 165.-/jour")},
        style="spanname",
    )
    t.tool(
        "caution.bloquer",
        {"carte": t.p("CARD", luhn("5413 3309 8871 426")), "montant": "2000", "tel": t.p("PHONE", "+41 21 729 44 18")},
        {"ok": True},
    )
    t.reply("Réservé. La caution de CHF 2000 est bloquée sur la carte.")


def t_fr_dev_secrets(t: Trace) -> None:
    """fr: startup, audit des secrets d'un dépôt avant ouverture du code"""
    t.service = "audit-depot"
    cfg = (
        "# config/production.yml\n"
        "scaleway:\n  access_key: " + t.p("SECRET", "SCW" + _k("fr-scw-ak", 17, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")) + "\n"
        "  secret_key: " + t.p("SECRET", _k("fr-scw-sk1", 8, _HEX) + "-" + _k("fr-scw-sk2", 4, _HEX) + "-4" + _k("fr-scw-sk3", 3, _HEX) + "-9" + _k("fr-scw-sk4", 3, _HEX) + "-" + _k("fr-scw-sk5", 12, _HEX)) + "\n"
        "mistral:\n  api_key: " + t.p("SECRET", _k("fr-mistral", 32)) + "\n"
        "brevo:\n  api_key: " + t.p("SECRET", "xkeysib-" + _k("fr-brevo", 64, _HEX) + "-" + _k("fr-brevo2", 16)) + "\n"
        f"mongo_uri: mongodb+srv://app:{t.p('SECRET', 'Crepe-Suzette-91')}@cluster0.ab12c.mongodb.net/prod\n"
        f"version: {t.d('2.14.0')}\n"
    )
    t.user("Avant de rendre le dépôt public, liste-moi tout ce qui ressemble à un secret dans ce fichier :\n" + cfg)
    key, line = _pem("fr-deploy-key", "OPENSSH PRIVATE KEY")
    t.tool("fs.read", {"path": "deploy/id_ed25519"}, key, style="oi")
    t.p("SECRET", key, [key, line])
    t.tool(
        "git.log",
        {"n": 1},
        f"commit {t.d('e3a9f1c07b25d6e84f0c1a7b3d9e2f5086c4a1b7')}\nAuthor: "
        f"{t.p('NAME', 'Aurélien Marchetti')} <{t.p('EMAIL', 'aurelien@pixel-et-fromage.fr')}>\n",
    )
    t.reply("Six secrets trouvés (Scaleway, Mistral, Brevo, MongoDB, une clé SSH). Révoquez-les avant publication.")


# ---------------------------------------------------------------------------- es


def t_padel(t: Trace) -> None:
    """es: club de pádel, reserva y socio nuevo"""
    t.service = "club-padel"
    t.user(
        f"Hola, soy {t.p('NAME', 'Javier Ortega Salcedo')}. Quiero reservar la {t.d('Pista 4')} el sábado a las "
        f"11 y darme de alta como socio. Mi DNI es {t.p('NATIONAL_ID', '48293716H')} y mi móvil "
        f"{t.p('PHONE', '612 48 37 90')}."
    )
    t.tool(
        "reservas.crear",
        {"pista": 4, "fecha": t.d("2025-12-13"), "hora": "11:00",
         "jugadores": ["Javier Ortega", t.p("NAME", "Lucía Fernández Pinto"), t.p("NAME", "Wei Chen")]},
        {"reserva": t.d("RSV-4-20251213-1100"), "precio": t.d("24,00 €")},
    )
    t.p("NAME", "Javier Ortega")
    t.tool(
        "socios.alta",
        {"email": t.p("EMAIL", "javi.ortega.salcedo@hotmail.es"), "pala": t.d("Bullpadel Vertex 04")},
        {"socio": t.d("S-2025-0931")},
        style="oi",
    )
    t.reply("Reserva hecha para la pista 4 el sábado a las 11:00 y alta de socio tramitada.")


def t_gestoria(t: Trace) -> None:
    """es: gestoría, alta de autónomo"""
    t.service = "gestoria-ia"
    t.user(
        "Necesito darme de alta como autónoma (diseño gráfico). Me llamo María José Albarracín Ruiz, "
        f"nací el {t.p('DOB', '23 de julio de 1990')} en Albacete y vivo en "
        f"{t.p('ADDRESS', 'C/ de Sagunto 14, 2º 1ª, 46009 València')}. DNI {t.p('NATIONAL_ID', '07351942S')}."
    )
    t.p("NAME", "María José Albarracín Ruiz")
    t.tool(
        "hacienda.modelo036",
        {"nif": "07351942S", "epigrafe_iae": t.d("844"), "fecha_inicio": t.d("01/01/2026")},
        {"borrador": "036-2025-88412"},
    )
    t.tool(
        "seguridad_social.reta",
        {"titular": "ALBARRACIN RUIZ, MARIA JOSE", "cuenta": t.p("IBAN", iban("ES", "21000418450200051332", spaced=True)),
         "base_cotizacion": t.d("960,60")},
        {"estado": "pendiente de firma"},
        style="spanname",
    )
    t.p("NAME", "ALBARRACIN RUIZ, MARIA JOSE")
    t.reply("Tienes el borrador del 036 y el alta en el RETA listos para firmar con tu certificado digital.")


def t_taller(t: Trace) -> None:
    """es: taller mecánico, presupuesto de reparación por WhatsApp"""
    t.service = "taller-bot"
    chat = (
        "[09:12] +34 655 21 48 73: buenas, el " + t.d("Seat León 1.5 TSI") + " hace un ruido al frenar\n"
        "[09:13] Taller: ¿nombre y matrícula?\n"
        "[09:15] +34 655 21 48 73: " + t.p("NAME", "Rubén Castaño") + ", la matrícula os la paso luego\n"
    )
    t.p("PHONE", "+34 655 21 48 73")
    t.user(chat)
    t.tool(
        "recambios.buscar",
        {"ref": t.d("1K0 615 301 AA"), "descripcion": "disco freno delantero"},
        {"stock": 4, "pvp": t.d("62,90 €")},
    )
    t.tool(
        "cliente.ficha",
        {"telefono": "655214873"},
        {"cliente": {"nombre": "Rubén", "apellidos": "Castaño Ibáñez",
                     "domicilio": t.p("ADDRESS", "Avda. de la Constitución 88, 4º D, 41001 Sevilla"),
                     "tarjeta": t.p("CARD", luhn("4548 8120 3390 157"))}},
    )
    t.p("PHONE", "655214873")
    t.p("NAME", "Rubén")
    t.p("NAME", "Castaño Ibáñez")
    t.reply("Presupuesto: discos y pastillas delanteras, 214,50 € con mano de obra. ¿Le va bien el jueves?")


def t_banco_alimentos(t: Trace) -> None:
    """es: banco de alimentos, alta de una familia"""
    t.service = "banco-alimentos"
    t.user(
        "Alta de familia derivada por servicios sociales. La titular es Fatoumata Diallo, NIE "
        f"{t.p('NATIONAL_ID', 'Y4028517N')}, vive en {t.p('ADDRESS', 'calle Lavapiés 31, 3º izq., 28012 Madrid')} "
        f"con sus dos hijos, Moussa (nacido el {t.p('DOB', '11/06/2017')}) y Awa (nacida el "
        f"{t.p('DOB', '2 de marzo de 2020')}). Teléfono {t.p('PHONE', '631 904 227')}."
    )
    t.p("NAME", "Fatoumata Diallo")
    t.p("NAME", "Moussa")
    t.p("NAME", "Awa")
    t.tool(
        "familias.registrar",
        {"miembros": 3, "alergias": ["frutos secos"], "punto_reparto": t.d("Parroquia San Lorenzo")},
        {"familia": t.d("FAM-MAD-2025-0412"), "primer_reparto": t.d("jueves 11 de diciembre")},
    )
    t.reply(f"Familia registrada. Primer reparto el jueves 11 de diciembre; el lote incluye {t.d('Cola Cao')} y leche.")


def t_academia_baile(t: Trace) -> None:
    """es-MX: academia de baile en la Ciudad de México"""
    t.service = "academia-danza"
    t.user(
        f"Quiero inscribir a mi hija a ballet. Ella es {t.p('NAME', 'Ximena Gómez Alcántara')}, su CURP es "
        f"{t.p('NATIONAL_ID', 'GOMA920814MDFNRL02')}... ay no, ese es el mío, perdón. Yo soy "
        f"{t.p('NAME', 'Alejandra Gómez Morales')}. Vivimos en "
        f"{t.p('ADDRESS', 'Calle Tehuantepec 142, Int. 5, Col. Roma Sur, 06760 Ciudad de México')}."
    )
    t.tool(
        "grupos.disponibles",
        {"disciplina": "ballet", "edad": 7},
        [{"grupo": t.d("Ballet Infantil B"), "salon": t.d("Sala Macondo"), "horario": "L y M 17:00"}],
    )
    t.tool(
        "cobros.registrar",
        {"whatsapp": t.p("PHONE", "+52 55 4187 2930"), "mensualidad": t.d("$1,250.00 MXN"),
         "correo": t.p("EMAIL", "ale.gomez.mor@yahoo.com.mx")},
        {"folio": t.d("INS-2026-0117")},
        style="oi",
    )
    t.reply("Inscrita en Ballet Infantil B, lunes y miércoles a las 17:00.")


def t_regantes(t: Trace) -> None:
    """es: comunidad de regantes, recibos domiciliados"""
    t.service = "regantes-admin"
    t.tool(
        "padron.exportar",
        {"sector": 3},
        json.dumps({"comuneros": [
            {"nombre": t.p("NAME", "Andrés Lozano Peñalver"), "dni": t.p("NATIONAL_ID", "53918274H"),
             "iban": t.p("IBAN", iban("ES", "30580154720720000123")), "parcela": t.d("Polígono 12, Parcela 87")},
            {"nombre": t.p("NAME", "Encarnación Molina Sáez"), "dni": t.p("NATIONAL_ID", "20647813T"),
             "iban": t.p("IBAN", iban("ES", "21003814110200168432")), "parcela": t.d("Polígono 9, Parcela 214")},
        ]}, ensure_ascii=False),
    )
    t.user(
        "La señora Molina dice que le han cobrado dos veces el recibo del " + t.d("tercer trimestre de 2025")
        + ". Llama desde el " + t.p("PHONE", "968 41 27 39") + "."
    )
    t.p("NAME", "Molina")
    t.reply("Correcto, hay un cargo duplicado de 86,40 €. Lo devolvemos en la próxima remesa.")


def t_portabilidad(t: Trace) -> None:
    """es: operadora, portabilidad de una línea y duplicado de SIM"""
    t.service = "telco-atencion"
    t.user(
        f"Quiero traer mi línea {t.p('PHONE', '+34 699 81 42 35')} a vuestra compañía. Soy "
        f"{t.p('NAME', 'Khadija El Idrissi')}, NIE {t.p('NATIONAL_ID', 'X7719362X')}, fecha de nacimiento "
        f"{t.p('DOB', '04/10/1987')}."
    )
    t.tool(
        "portabilidad.solicitar",
        {"linea": "699814235", "operador_donante": "Movistar", "icc": t.d("8934 0712 3456 7890 12"),
         "tarifa": t.d("Fibra 600Mb + Móvil 50GB")},
        {"ventana": t.d("10/12/2025 02:00-06:00"), "solicitud": "PORT-ES-448120"},
    )
    t.p("PHONE", "699814235")
    t.tool(
        "cliente.credenciales",
        {"accion": "crear_acceso_web", "usuario": t.p("EMAIL", "khadija.elidrissi@gmail.com")},
        {"password_temporal": t.p("SECRET", "Naranja-7421-Lunes"), "expira": "24h"},
    )
    t.reply("Portabilidad solicitada para el 10/12. Te hemos enviado una contraseña temporal por SMS.")


def t_es_api_keys(t: Trace) -> None:
    """es: equipo de producto, revisión de un .env filtrado en un ticket"""
    t.service = "soporte-plataforma"
    env = (
        "ANTHROPIC_API_KEY=" + t.p("SECRET", "sk-ant-api03-" + _k("es-ant", 93, _B62 + "-_") + "AA") + "\n"
        "TWILIO_ACCOUNT_SID=" + "AC" + _k("es-tw-sid", 32, _HEX) + "\n"
        "TWILIO_AUTH_TOKEN=" + t.p("SECRET", _k("es-tw-tok", 32, _HEX)) + "\n"
        "REDIS_URL=redis://default:" + t.p("SECRET", _k("es-redis", 32)) + "@redis-14021.c250.eu-central-1-1.ec2.cloud.redislabs.com:14021\n"
        "APP_VERSION=3.8.1-beta.2\n"
    )
    t.user(
        "Un cliente nos ha pegado esto en el ticket " + t.d("#48213") + " (lo abrió "
        + t.p("NAME", "Gonzalo Iturriaga") + "). Está en base64 porque venía de un adjunto: " + b64(env)
    )
    t.tool(
        "secrets.revoke",
        {"provider": "twilio", "requested_by": t.p("EMAIL", "gonzalo.iturriaga@lacasadelosdatos.es")},
        {"revoked": True},
        style="spanname",
    )
    t.tool("deploy.status", {"service": "api"}, {"version": t.d("3.8.1-beta.2"), "region": "eu-west-3"})
    t.reply("He revocado el token de Twilio. Hay que rotar la clave de Anthropic y la contraseña de Redis.")


# ---------------------------------------------------------------------------- it, nl, da, cs


def t_agriturismo(t: Trace) -> None:
    """it: agriturismo in Toscana, prenotazione con registrazione ospiti"""
    t.service = "agriturismo-booking"
    t.user(
        f"Buongiorno, vorrei prenotare dal {t.d('27 al 30 dicembre')} per due persone. Sono Marco Rossi, "
        f"codice fiscale {t.p('NATIONAL_ID', 'RSSMRC79A01H501D')}, abito in "
        f"{t.p('ADDRESS', 'Via dei Mille 24, 50131 Firenze')}, cellulare {t.p('PHONE', '+39 347 218 9043')}."
    )
    t.p("NAME", "Marco Rossi")
    t.tool(
        "camere.disponibili",
        {"arrivo": "2025-12-27", "notti": 3},
        [{"camera": t.d("Suite Chianti Classico"), "prezzo": t.d("€ 145,00")}],
    )
    t.tool(
        "alloggiati_web.schedina",
        {"ospite": "ROSSI MARCO", "nato_il": t.p("DOB", "01/01/1979"), "luogo_nascita": "Roma",
         "carta": t.p("CARD", luhn("4023 6009 1128 734"))},
        {"ricevuta": t.d("AW-2025-55128")},
        style="oi",
    )
    t.p("NAME", "ROSSI MARCO")
    t.reply("Prenotato: Suite Chianti Classico per tre notti.")


def t_corso_cucina(t: Trace) -> None:
    """it: scuola di cucina, iscrizione a un corso"""
    t.service = "scuola-cucina"
    t.user(
        "Mi iscrivo al corso di pasta fresca. Giulia Bianchi, nata il "
        f"{t.p('DOB', '12 giugno 1984')} a Milano, CF {t.p('NATIONAL_ID', 'BNCGLI84H52F205F')}, mail "
        f"{t.p('EMAIL', 'giulia.bianchi84@libero.it')}."
    )
    t.p("NAME", "Giulia Bianchi")
    t.tool(
        "corsi.iscrivi",
        {"corso": t.d("Pasta Fresca della Nonna"), "data": t.d("sabato 17 gennaio 2026"),
         "pagamento": {"iban": t.p("IBAN", iban("IT", "X0542811101000000123456"))}},
        {"posto": 9},
    )
    t.reply("Iscritta! Il corso inizia alle 10:00; grembiule incluso.")


def t_zwemles(t: Trace) -> None:
    """nl: zwembad, aanmelding voor zwemles"""
    t.service = "zwembad-aanmelding"
    t.user(
        f"Ik wil mijn zoon {t.p('NAME', 'Daan de Vries')} aanmelden voor zwemles (diploma A). Hij is "
        f"geboren op {t.p('DOB', '3 maart 2016')}. BSN {t.p('NATIONAL_ID', '714028538')}. Wij wonen op "
        f"{t.p('ADDRESS', 'Kerkstraat 14-2, 1017 GM Amsterdam')}. Groet, {t.p('NAME', 'Sanne Bakker')}"
    )
    t.tool(
        "lessen.plaatsen",
        {"niveau": "A", "voorkeur": "woensdag", "telefoon": t.p("PHONE", "06-41827390")},
        {"groep": t.d("Waterrat 3"), "start": t.d("14 januari 2026")},
    )
    t.reply("Daan staat op de wachtlijst voor woensdag; de eerste les is naar verwachting 14 januari.")
    t.p("NAME", "Daan")


def t_campingplads(t: Trace) -> None:
    """da: campingplads, sæsonplads og betaling"""
    t.service = "camping-booking"
    t.user(
        f"Hej, jeg vil gerne leje en sæsonplads fra {t.d('1. april 2026')}. Jeg hedder "
        f"{t.p('NAME', 'Mette Sørensen')}, CPR {t.p('NATIONAL_ID', '140387-2110')}, og bor på "
        f"{t.p('ADDRESS', 'Nørrebrogade 44, 2. th., 2200 København N')}. Tlf. {t.p('PHONE', '+45 21 43 87 65')}."
    )
    t.tool(
        "pladser.ledige",
        {"type": "sæson", "strøm": True},
        [{"plads": t.d("Plads 112 Bøgelunden"), "pris": t.d("14.900 kr.")}],
    )
    t.tool("betaling.opret", {"reg_konto": "Konto " + t.p("IBAN", iban("DK", "50510001234567"))}, {"ok": True}, style="spanname")
    t.reply("Plads 112 er reserveret til dig fra 1. april.")


def t_eshop_reklamace(t: Trace) -> None:
    """cs: e-shop, reklamace pračky"""
    t.service = "eshop-reklamace"
    t.user(
        f"Dobrý den, reklamuji pračku {t.d('Bosch Serie 6 WGG244A0BY')}, objednávka {t.d('OBJ-2025-771204')}. "
        f"Jsem {t.p('NAME', 'Tereza Nováková')}, rodné číslo {t.p('NATIONAL_ID', '915712/4174')}, bydlím "
        f"{t.p('ADDRESS', 'Vinohradská 1511/230, 100 00 Praha 10')}, telefon {t.p('PHONE', '+420 731 482 956')}. "
        f"Peníze prosím na účet {t.p('IBAN', iban('CZ', '08000000192000145399', spaced=True))}."
    )
    t.tool(
        "reklamace.zalozit",
        {"objednavka": "OBJ-2025-771204", "zavada": "neotáčí buben"},
        {"cislo": t.d("RK-55120"), "lhuta": t.d("30 dní")},
    )
    t.reply("Reklamace RK-55120 je založena, kurýr si pračku vyzvedne do tří pracovních dnů.")


WRITERS = [
    t_carshare_damage, t_ev_charging, t_optician, t_student_housing, t_trial_screening, t_locksmith,
    t_self_storage, t_chess_club, t_ticket_resale, t_violin_school, t_crowdfund_refund, t_hackathon,
    t_mortgage_factfind, t_pet_sitting, t_airflow_pipeline, t_saas_sso, t_cleaning_service, t_crm_import,
    t_kfz_zulassung, t_hebamme, t_heizungswartung, t_jobrad, t_schornsteinfeger, t_fussballverein,
    t_mietwagen, t_wohngeld, t_handyvertrag, t_gitlab_ci_de,
    t_mutuelle, t_covoiturage, t_interim, t_conservatoire, t_pressing, t_vide_grenier,
    t_centre_equestre, t_marketplace_litige, t_camping_car, t_fr_dev_secrets,
    t_padel, t_gestoria, t_taller, t_banco_alimentos, t_academia_baile, t_regantes, t_portabilidad,
    t_es_api_keys,
    t_agriturismo, t_corso_cucina, t_zwemles, t_campingplads, t_eshop_reklamace,
]  # fmt: skip
