"""holdout8: the eighth blind redaction corpus (issue 20), hand-written in one sitting.

Each ``t_*`` function writes one agent run (see ``_kit.py``); its docstring starts with
the trace's language. Values are planted with ``t.p`` and look-alikes that must survive
with ``t.d``. Where a value appears only in a form the bench's decoder does not undo
(HTML entities, quoted-printable), its ``parts`` hold the encoded forms as well as the
plain ones. National ids, IBANs and cards have valid check characters (python-stdnum
2.2, outside the repository; IBAN and Luhn digits by ``_kit``).
"""

# ruff: noqa: E501  (hand-written data: long literal lines are the point)
from __future__ import annotations

import html.entities
import json
import quopri

from _kit import Trace, b64, default_parts, iban, jwt, luhn, urlenc


def both(type_: str, value: str, enc) -> list[str]:
    """Leak parts of ``value`` in plain and in ``enc``'s encoding."""
    parts = set(default_parts(type_, value))
    parts |= {enc(p) for p in parts}
    return sorted(parts, key=lambda s: (-len(s), s))


def ent(text: str) -> str:
    """HTML with named entities for non-ASCII letters (numeric when there is no name)."""
    out = []
    for ch in text:
        if ch == "&":
            out.append("&amp;")
        elif ch == "'":
            out.append("&#39;")
        elif ord(ch) > 127:
            name = html.entities.codepoint2name.get(ord(ch))
            out.append(f"&{name};" if name else f"&#{ord(ch)};")
        else:
            out.append(ch)
    return "".join(out)


def qp(text: str) -> str:
    """Quoted-printable of UTF-8 text (short strings: no soft line breaks)."""
    return quopri.encodestring(text.encode()).decode().replace("=\n", "")


def span(t: Trace, name: str, attrs: dict) -> None:
    """A span with hand-made attributes (framework shapes _kit does not write)."""
    t._span(name, attrs)


def chat_completion(t: Trace, messages: list, model: str = "gpt-4o-2024-08-06") -> None:
    """An OpenAI chat-completions request recorded as one JSON attribute."""
    span(
        t,
        f"chat {model}",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": model,
            "llm.input_messages": json.dumps(messages, ensure_ascii=False),
        },
    )


def anthropic(t: Trace, blocks: list, model: str = "claude-sonnet-4-5") -> None:
    """An Anthropic Messages request: content blocks, tool_use and tool_result."""
    span(
        t,
        f"anthropic.messages {model}",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "anthropic",
            "gen_ai.request.model": model,
            "gen_ai.input.messages": json.dumps(blocks, ensure_ascii=False),
        },
    )


def mcp(text: str, is_error: bool = False) -> dict:
    """An MCP ``tools/call`` result."""
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


# ---------------------------------------------------------------- English


def t_en_optician_reorder(t: Trace) -> None:
    """en: contact-lens reorder, chat-completions array with a tool round trip."""
    t.service = "brightline-optics-bot"
    name = t.p("NAME", "Tomasi Fifita")
    dob = t.p("DOB", "3rd of March 1951")
    addr = t.p(
        "ADDRESS",
        "Flat 2, 41 Otley Old Road, Leeds LS16 6HB",
        parts=["Flat 2, 41 Otley Old Road, Leeds LS16 6HB", "41 Otley Old Road"],
    )
    surname = t.p("NAME", "Fifita")
    iso = t.p("DOB", "1951-03-03")
    caps = t.p("NAME", "FIFITA, Tomasi")
    phone = t.p("PHONE", "07700 918 442")
    mail = t.p("EMAIL", "t.fifita51@outlook.co.uk")
    order = t.d("ORD-2026-118734")
    lens = t.d("Acuvue Oasys for Astigmatism")
    due = t.d("14/05/2027")
    user_text = (
        f"hi its for my dad actually, {name}, hes the one with the toric lenses. born {dob} "
        f"if you need it. ship to {addr} pls, same as last time"
    )
    args = json.dumps({"surname": surname, "dob": iso})
    record = json.dumps(
        {
            "name": caps,
            "rx": {"sph": "-2.25", "cyl": "-0.75", "axis": 170},
            "lens": lens,
            "phone": phone,
            "email": mail,
            "next_exam": due,
        }
    )
    chat_completion(
        t,
        [
            {"role": "system", "content": "You are Brightline Optics' reorder assistant."},
            {"role": "user", "content": user_text},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_q81",
                        "type": "function",
                        "function": {"name": "find_patient", "arguments": args},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_q81", "content": record},
        ],
    )
    t.user(user_text)
    app = t.d("app 5.12.0-rc.3")
    t.reply(
        f"Done: {order} is on its way (3 boxes of {lens}). His next eye test is due {due}. ({app})"
    )


def t_en_locksmith_mcp(t: Trace) -> None:
    """en: locksmith dispatch through an MCP job server, key-safe code in the note."""
    t.service = "dispatch-agent"
    name = t.p("NAME", "Ivy Lane")
    addr = t.p("ADDRESS", "7 Marlpit Cottages, Church Road, Great Bardfield, Braintree CM7 4SQ")
    code = t.p("SECRET", "73915")
    phone = t.p("PHONE", "07931 552 804")
    tech = t.p("NAME", "Dunstan Okonkwo-Reid")
    job = t.d("LS-20931")
    lock = t.d("Avocet ABS High Security")
    t.user(
        f"Lockout tomorrow 8am. Customer is {name} (yes that's her actual name, not the street), "
        f"{addr}. Key safe by the back door, code {code}. Mobile {phone}."
    )
    t.tool(
        "jobs_create",
        {"customer": name, "site": addr, "access_note": f"key safe {code}", "contact": phone},
        mcp(f"Created {job}. Assigned: {tech}. Parts reserved: 1x {lock} cylinder 40/50."),
    )
    shop, due = t.d("Fairbrother & Sons"), t.d("31/12/2026")
    t.reply(
        f"Booked as {job}; {tech} has the {lock} cylinder in the van. Invoice from {shop}, due {due}."
    )


def t_en_balloon_ics(t: Trace) -> None:
    """en: hot-air balloon flight booking returned as ICS, weights and birth dates for the manifest."""
    t.service = "skyward-bookings"
    p1 = t.p("NAME", "Chase Banks")
    p2 = t.p("NAME", "Rosalind Achterberg")
    m1 = t.p("EMAIL", "chase.banks@fastmail.com")
    m2 = t.p("EMAIL", "ros.achterberg@gmail.com")
    d1 = t.p("DOB", "09/22/1988")
    d2 = t.p("DOB", "April 30, 1993")
    flight = t.d("20270612T043000Z")
    site = t.d("Longleat launch field")
    uid = t.d("flt-7c1e9a40-2b77-4f0e-9d5a-3e18c2a0b6f1@skyward")
    mapbox = t.p(
        "SECRET",
        "sk.eyJ1Ijoic2t5d2FyZC1vcHMiLCJhIjoiY20zeHE5azdwMGtmajJqczdldXltcW81dCJ9.Hq8vT2xL9mR4pW7nK1cY3jA",
    )
    public = t.d(
        "pk.eyJ1Ijoic2t5d2FyZCIsImEiOiJjbDk0bXp0NWEwMXZ3M3ZwZ3R5Z2Z0Z2dzIn0.x1Y2z3W4v5U6t7S8r9Q0pA"
    )
    ics = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Skyward Balloons//Bookings 4.2//EN\r\n"
        "BEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTART:{flight}\r\nSUMMARY:Sunrise flight - {site}\r\n"
        f"ATTENDEE;CN={p1};ROLE=REQ-PARTICIPANT:mailto:{m1}\r\n"
        f"ATTENDEE;CN={p2};ROLE=REQ-PARTICIPANT:mailto:{m2}\r\n"
        f"DESCRIPTION:Manifest: {p1} 84kg b. {d1}\\n{p2} 61kg b. {d2}\\nMeet 04:00\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    anniv, reg = t.d("12 June 2011"), t.d("G-OBFE")
    t.user(
        f"Send me the calendar file for our balloon ride so I can check the names are right. It's for our wedding anniversary, we married {anniv}. Is it still balloon {reg}?"
    )
    t.tool(
        "calendar.export_ics",
        {
            "booking": "SKY-55102",
            "map_tokens": {"server (secret)": mapbox, "browser (public, safe to embed)": public},
        },
        ics,
        style="oi",
    )
    t.reply(f"Here is the invite for {flight[:8]} at {site}; both passengers are listed.")


def t_en_climbing_waiver_html(t: Trace) -> None:
    """en: bouldering-gym waiver lookup, the tool returns an HTML snippet with entities."""
    t.service = "cruxhall-frontdesk"
    raw_name = "Zoë Ngata-Brennan"
    name = t.p("NAME", raw_name, parts=both("NAME", raw_name, ent))
    dob = t.p("DOB", "17 Aug 2009")
    guardian = t.p("NAME", "Mereana Ngata")
    phone = t.p("PHONE", "+44 7468 220 915")
    addr_raw = "Apartment 12, Fenwick House, 3 St Ann’s Wharf, Newcastle NE1 3DX"
    addr = t.p(
        "ADDRESS",
        addr_raw,
        parts=[
            addr_raw,
            ent(addr_raw),
            "Fenwick House, 3 St Ann’s Wharf",
            ent("Fenwick House, 3 St Ann’s Wharf"),
        ],
    )
    wall = t.d("The Cave (Font 6B+)")
    member = t.d("CH-0087731")
    snippet = (
        '<div class="waiver"><h3>Junior waiver &ndash; signed</h3><dl>'
        f"<dt>Climber</dt><dd>{ent(name)}</dd><dt>Date of birth</dt><dd>{dob}</dd>"
        f"<dt>Parent/guardian</dt><dd>{guardian} &lt;{phone}&gt;</dd>"
        f"<dt>Home address</dt><dd>{ent(addr)}</dd><dt>Member no.</dt><dd>{member}</dd></dl>"
        f"<p>Restricted from {ent(wall)} until 16.</p></div>"
    )
    kid = t.p("NAME", "Ngata-Brennan")
    t.user(f"is the junior waiver for the {kid} kid signed? she wants to try the cave")
    t.tool("waivers.lookup", {"member_no": member}, snippet, style="spanname")
    t.reply(
        f"Yes, signed by her guardian. {wall} stays off-limits until she is 16; the {t.d('Wolfgang Güllich Wall')} too."
    )


def t_en_traceback_locals(t: Trace) -> None:
    """en: a Python traceback with local variables from a billing worker (error span)."""
    t.service = "ledgerline-worker"
    pw = t.p("SECRET", "Tq9!vR2#mLx7wP")
    dsn = f"postgresql://billing_rw:{pw}@10.42.7.19:5432/ledger"
    t.p("IP", "10.42.7.19")  # written inside the DSN
    key = t.p("SECRET", "shippo_live_4f2a9c17be03d865a1e4f70c29b8d5e61a3f7c04")
    name = t.p("NAME", "Wideline Pierre-Louis")
    mail = t.p("EMAIL", "wpierrelouis@protonmail.com")
    addr = t.p("ADDRESS", "88 Ashford Street, Apt 3R, Boston, MA 02134")
    ver = t.d("ledgerline 3.14.2")
    sha = t.d("9f3c2e1a7b")
    tb = (
        "Traceback (most recent call last):\n"
        '  File "/srv/ledgerline/worker/labels.py", line 211, in buy_label\n'
        "    rate = client.rates.create(shipment)\n"
        "    Locals:\n"
        f"      customer = {{'name': '{name}', 'email': '{mail}', 'ship_to': '{addr}'}}\n"
        f"      SHIPPO_TOKEN = '{key}'\n"
        f"      db_url = '{dsn}'\n"
        "      attempt = 3\n"
        '  File "/venv/lib/python3.12/site-packages/shippo/http.py", line 88, in post\n'
        "    raise APIError(resp.status_code, resp.text)\n"
        f"shippo.error.APIError: 422 address_from is invalid (service {t.d('USPS Priority Mail Express')})\n"
        f"image {t.d('sha256:4be2c71f0a9d83e6b5f1c07a2d9e38b4f6a1c05d7e2b9f83a4c6d1e07b5f2a98')}\n"
        f"({ver}, commit {sha})"
    )
    t.error = "APIError: 422 address_from is invalid"
    t.user("the label job keeps failing overnight, what's going on?")
    t.tool(
        "sentry.get_event", {"issue": "LEDGER-4BX"}, {"exception": tb, "release": ver}, style="oi"
    )
    t.reply("The carrier rejects the sender address; the worker retries three times and gives up.")


def t_en_voice_ambulance(t: Trace) -> None:
    """en: voice transcript (no punctuation) of a call to an ambulance billing line."""
    t.service = "voice-billing-assistant"
    name = t.p("NAME", "darnell okafor whitby")
    dob = t.p("DOB", "june fourth nineteen seventy nine")
    ssn = t.p("SSN", "five two six four one eight eight zero three")
    addr = t.p("ADDRESS", "twelve forty one cedar crest lane apartment b cheyenne wyoming")
    phone = t.p("PHONE", "three oh seven five five five zero one nine two")
    inv = t.d("AMB-7720-1184")
    transcript = (
        f"caller yeah hi um my name is {name} i got a bill for the ambulance back in august "
        f"agent can i get your date of birth caller {dob} agent and the last the full social "
        f"for verification caller uh {ssn} agent thank you and the service address caller "
        f"{addr} agent best callback number caller {phone} agent okay i see invoice {inv} "
        f"for eleven hundred forty dollars date of service {t.d('August 19 2026')}"
    )
    t.tool(
        "stt.transcribe",
        {"call_id": "c-99172", "lang": "en-US"},
        {"text": transcript, "confidence": 0.91},
    )
    t.user("Summarise this billing call and say whether the caller passed verification.")
    t.reply(f"Caller passed verification (DOB and SSN match). They dispute invoice {inv}.")


def t_en_langgraph_mortgage(t: Trace) -> None:
    """en: mortgage pre-qualification, a LangGraph state checkpoint as JSON."""
    t.service = "prequal-graph"
    a = t.p("NAME", "Tahmina Chowdhury")
    b = t.p("NAME", "Rashed Chowdhury")
    da = t.p("DOB", "1986-02-14")
    db = t.p("DOB", "11/03/1983")
    sa = t.p("SSN", "412-68-3097")
    sb = t.p("SSN", "538217746")
    home = t.p("ADDRESS", "3120 Kessler Blvd E Dr, Indianapolis, IN 46220")
    plaid = t.p("SECRET", "8d0f3c2b9e71a45c6f28e07d1b94aa")
    routing = t.d("021000021")
    loan = t.d("LN-2026-0448172")
    rate = t.d("6.125%")
    state = {
        "messages": [
            {
                "type": "human",
                "content": f"We're both on the application. I'm {a}, my husband is {b}.",
            },
            {
                "type": "ai",
                "content": "",
                "tool_calls": [{"name": "pull_credit", "args": {"ssn": sa}, "id": "tc_1"}],
            },
            {
                "type": "tool",
                "name": "pull_credit",
                "content": '{"score": 742, "tradelines": 11}',
                "tool_call_id": "tc_1",
            },
        ],
        "applicants": [
            {"full_name": a, "birth_date": da, "ssn": sa, "current_address": home},
            {"full_name": b, "birth_date": db, "ssn": sb, "current_address": home},
        ],
        "bank_link": {"provider": "plaid", "secret": plaid, "routing_number": routing},
        "loan": {"id": loan, "quoted_rate": rate},
        "next": ["underwrite"],
        "config": {
            "configurable": {"thread_id": t.d("thr_01JDX4Q7W2M9")},
            "metadata": {
                "langsmith_api_key": t.p(
                    "SECRET", "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"
                )
            },
        },
    }
    span(
        t,
        "LangGraph.checkpoint",
        {
            "langgraph.node": "collect_applicants",
            "langgraph.state": json.dumps(state),
            "langgraph.step": 4,
        },
    )
    t.user(
        f"Can we pre-qualify for {loan}? Both of us are on it. Do you need the {t.d('Form 1003 (URLA)')}?"
    )
    t.reply(f"Pre-qualified at {rate}; the underwriter will ask for two payslips each.")


def t_en_falconry_email_qp(t: Trace) -> None:
    """en: e-mail thread with quoted replies and a quoted-printable body (falconry gift voucher)."""
    t.service = "inbox-triage"
    sender = t.p("NAME", "Aurelia Vasquez-Huang")
    smail = t.p("EMAIL", "aurelia.vh@icloud.com")
    mum_raw = "Ottilie Sørensen"
    mum = t.p("NAME", mum_raw, parts=both("NAME", mum_raw, qp))
    born = t.p("DOB", "11 November 1956")
    addr = t.p("ADDRESS", "Rookery Barn, Hollow Lane, Wenhaston, Halesworth IP19 9DT")
    phone = t.p("PHONE", "01502 478 226")
    staff = t.p("NAME", "Pip Ferrabee")
    bird = t.d("Merlin the Harris hawk")
    owl = t.d("Sir Galahad the barn owl")
    voucher = t.d("HW-2611-0935")
    body = (
        f"Hi {staff},\r\n\r\nThe voucher is for my mum, {qp(mum)}, for her 70th =E2=80=94 she was "
        f"born {born}.\r\nPlease post it to {addr}, she doesn=E2=80=99t do email.\r\n"
        f"If the postie can=E2=80=99t get in the gate, ring {phone}.\r\n\r\nThanks, {t.p('NAME', 'Aurelia')}\r\n\r\n"
        f"> On 1 Dec 2026, at 16:02, {staff} <hawkwalks@kestrelridgefalconry.co.uk> wrote:\r\n"
        f"> Voucher {voucher} is ready; the walk with {bird} lasts about 90 minutes.\r\n"
        f"> {owl} is moulting, so no owl flights this month.\r\n> Who should we address it to?\r\n"
    )
    message = (
        f'From: "{sender}" <{smail}>\r\nTo: hawkwalks@kestrelridgefalconry.co.uk\r\n'
        f"Subject: Re: Hawk walk gift voucher {voucher}\r\nMIME-Version: 1.0\r\n"
        'Content-Type: text/plain; charset="utf-8"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n'
        + body
    )
    t.tool(
        "gmail.get_message",
        {"id": "18c2f0a9be41d7e3", "format": "raw_text"},
        {"raw": message},
        style="oi",
    )
    t.user("Draft a reply confirming the voucher posting.")
    t.reply(f"Drafted: voucher {voucher} goes out by first-class post today.")


def t_en_seed_library_vcards(t: Trace) -> None:
    """en: seed-library volunteers exported as vCards."""
    t.service = "seedbank-crm"
    n1 = t.p("NAME", "Hazel Woods")
    n2 = t.p("NAME", "Kalolaine Taufa")
    s1 = t.p("NAME", "Woods;Hazel", parts=["Woods;Hazel", "Woods", "Hazel"])
    s2 = t.p("NAME", "Taufa;Kalolaine", parts=["Taufa;Kalolaine", "Taufa", "Kalolaine"])
    adr1 = t.p(
        "ADDRESS",
        "22 Thornbury Rise;Bristol;;BS7 9QT",
        parts=["22 Thornbury Rise;Bristol;;BS7 9QT", "22 Thornbury Rise"],
    )
    adr2 = t.p(
        "ADDRESS",
        "Unit 4, 9 Ropewalk Court;Bristol;;BS1 6LX",
        parts=["Unit 4, 9 Ropewalk Court;Bristol;;BS1 6LX", "9 Ropewalk Court"],
    )
    b1 = t.p("DOB", "19870605")
    b2 = t.p("DOB", "1991-12-30")
    tel1 = t.p("PHONE", "+44 117 496 0752")
    tel2 = t.p("PHONE", "07624 381 960")
    mail2 = t.p("EMAIL", "kaloftaufa@hotmail.co.uk")
    var = t.d("Cherokee Trail of Tears")
    var2 = t.d("Mrs Cropley's Pea")
    var3 = t.d("Lazy Housewife")
    vc = (
        f"BEGIN:VCARD\nVERSION:3.0\nN:{s1};;;\nFN:{n1}\nADR;TYPE=home:;;{adr1};UK\n"
        f"TEL;TYPE=cell:{tel1}\nBDAY:{b1}\nNOTE:Keeps the {var} bean line\nEND:VCARD\n"
        f"BEGIN:VCARD\nVERSION:4.0\nN:{s2};;;\nFN:{n2}\nADR;TYPE=home:;;{adr2};UK\n"
        f"TEL;VALUE=uri:tel:{tel2}\nEMAIL:{mail2}\nBDAY:{b2}\nNOTE:Grows out {var2}\nEND:VCARD\n"
    )
    t.tool("contacts.export", {"group": "growers-2027", "format": "vcf"}, vc, style="spanname")
    t.user("Who is growing out the heritage beans and peas this year?")
    t.reply(f"Two growers: one keeps {var}, the other grows {var2}. Nobody has {var3} yet.")


def t_en_drone_pilot_csv(t: Trace) -> None:
    """en: drone-survey subcontractor list as CSV inside JSON."""
    t.service = "survey-ops"
    rows = [
        (t.p("NAME", "Sione Tupou"), t.p("DOB", "02-07-1990"), t.p("PHONE", "07412 305 886")),
        (
            t.p("NAME", "Nur Aisyah binti Kamarudin"),
            t.p("DOB", "15-01-1997"),
            t.p("PHONE", "+60 12-448 7031"),
        ),
        (t.p("NAME", "YUSUPOVA Dilnoza"), t.p("DOB", "28-09-1985"), t.p("PHONE", "07983 620 117")),
    ]
    mail = t.p("EMAIL", "nuraisyah.k@gmail.com")
    first = t.p("NAME", "Aisyah")
    drone = t.d("DJI Matrice 350 RTK")
    flyer = t.d("GVC-2025-11874")
    job = t.d("SV-4471")
    csv = "full_name,date_of_birth,mobile,cert\n" + "".join(
        f"{n},{d},{p},{flyer if i == 0 else 'A2 CofC'}\n" for i, (n, d, p) in enumerate(rows)
    )
    t.tool(
        "sheets.read_range",
        {"sheet": "pilots", "range": "A1:D4"},
        {"csv": csv, "notes": f"{first} prefers email: {mail}. Kit: {drone}."},
    )
    t.user(f"Which of our pilots can fly {job} next week?")
    t.reply(
        f"All three hold a certificate; book the {drone} for {job} at {t.d('52.4862, -1.8904')}."
    )


def t_en_carshare_sql(t: Trace) -> None:
    """en: car-sharing member lookup, a psql result set."""
    t.service = "fleet-assistant"
    n1 = t.p("NAME", "Bartholomew Esiri")
    n2 = t.p("NAME", "Marisol Quispe Huamán")
    l1 = t.p("NATIONAL_ID", "ESIRI802149B99XK")
    l2 = t.p("NATIONAL_ID", "QUISP756223MH9TR")
    a1 = t.p("ADDRESS", "16 Cobden Street, Salford M6 6WF")
    a2 = t.p(
        "ADDRESS",
        "Flat 9, Beaumont Court, 220 Holloway Road, London N7 8DA",
        parts=["Flat 9, Beaumont Court, 220 Holloway Road, London N7 8DA", "220 Holloway Road"],
    )
    j1, j2 = t.d("2024-03-18"), t.d("2025-10-02")
    car = t.d("Zoe Renault E-Tech")
    table = (
        " member_id |      full_name        |    licence_no    |      home_address       |   joined\n"
        "-----------+-----------------------+------------------+-------------------------+------------\n"
        f"     48812 | {n1} | {l1} | {a1} | {j1}\n"
        f"     51907 | {n2} | {l2} | {a2} | {j2}\n"
        "(2 rows)\n"
    )
    t.tool(
        "postgres.query",
        {
            "sql": "select member_id, full_name, licence_no, home_address, joined from members where flagged"
        },
        table,
        style="oi",
    )
    gsig = t.p(
        "SECRET",
        "3f9a1c7e52b8d04a6e2f9c1b7d3a5e8f0c2b4d6a8e1f3c5b7d9a2e4f6c8b0d1a3e5f7c9b1d2e4a6c8f0b3d5e7a9c1f",
    )
    photo = (
        "https://storage.googleapis.com/fleet-damage/2026/11/29/zoe-rear.jpg?X-Goog-Algorithm=GOOG4-RSA-SHA256"
        "&X-Goog-Credential=fleet-uploader%40fleet-prod.iam.gserviceaccount.com%2F20261203%2Fauto%2Fstorage%2Fgoog4_request"
        f"&X-Goog-Date=20261203T090000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature={gsig}"
    )
    t.tool(
        "damage.photos", {"vehicle": car}, {"urls": [photo], "reported": t.d("29 Nov 2026 18:40")}
    )
    t.user(f"Who damaged the {car} last weekend? Two members are flagged.")
    t.reply(f"Two flagged members; both last drove the {car} on Saturday.")


def t_en_netrc_docker_anthropic(t: Trace) -> None:
    """en: coding agent reading dotfiles, Anthropic content blocks with tool_use/tool_result."""
    t.service = "devbox-agent"
    handle = t.p("NAME", "kgurung")
    full = t.p("NAME", "Sabina Gurung")
    mail = t.p("EMAIL", "sabina.gurung@tessellate.dev")
    heroku = t.p("SECRET", "6b1f0d3e-92ac-4e57-b8a1-4fd27c930e66")
    netlify = t.p("SECRET", "nfp_Xq7Lr2mB9vKc4Ws1Nd8Tz6Hy3Pj0Ga5Fe8Ur")
    quay = t.p("SECRET", "Q7ZP3KW1M8VXL2RN5TB0YHCJ6DGF4SAE9UQO3IKX7WMB1NZ5PLR8TV2YC0DH6GJ")
    sha = t.d("4e1d9c7a0b2f")
    img = t.d("quay.io/tessellate/api:2026.12.1")
    netrc = f"machine api.heroku.com\n  login {mail}\n  password {heroku}\nmachine git.heroku.com\n  login {mail}\n  password {heroku}\n"
    docker = json.dumps(
        {"auths": {"quay.io": {"auth": b64(f"tessellate+ci_robot:{quay}")}}, "credsStore": ""},
        indent=2,
    )
    blocks = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"why does `docker push {img}` fail on my box? I'm {full}"}
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look at your credentials files."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "read_file",
                    "input": {"path": f"/home/{handle}/.netrc"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_02",
                    "name": "read_file",
                    "input": {"path": f"/home/{handle}/.docker/config.json"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "content": [{"type": "text", "text": netrc}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_02",
                    "content": [{"type": "text", "text": docker}],
                },
                {
                    "type": "text",
                    "text": f"(the key in ~/.aws is just the docs' example {t.d('AKIAIOSFODNN7EXAMPLE')}, ignore it) also my netlify deploys use NETLIFY_AUTH_TOKEN={netlify}, is that related? last good commit {sha}",
                },
            ],
        },
    ]
    anthropic(t, blocks)
    t.reply("The robot account's token in config.json has expired; log in again with a fresh one.")


def t_en_ocr_donor_form(t: Trace) -> None:
    """en: OCR of a scanned organ-donor registration, broken spacing."""
    t.service = "forms-intake"
    name = t.p("NAME", "TEMPERANCE ABERNATHY")
    dob = t.p("DOB", "0 7 / 1 1 / 1 9 6 4")
    nhs = t.p("NATIONAL_ID", "483 917 2668")
    addr = t.p(
        "ADDRESS",
        "19 Lavender Hill Mews , London SW11 5RF",
        parts=["19 Lavender Hill Mews , London SW11 5RF", "19 Lavender Hill Mews"],
    )
    phone = t.p("PHONE", "020 7946 0381")
    kin = t.p("NAME", "Jonah Abernathy")
    form = t.d("ODR-F3 (rev. 04/2019)")
    ocr = (
        f"N H S   O r g a n   D o n o r   R e g i s t e r\n{form}\n"
        f"Full name : {name}\nD ate of B irth : {dob}\nNHS No . {nhs}\n"
        f"Ad dress : {addr}\nTel : {phone}\nN ext of kin : {kin} ( son )\n"
        "[x] kidneys [x] heart [x] lungs [ ] corneas\n"
    )
    t.tool(
        "ocr.extract_text", {"file": "scan_0047.tiff", "dpi": 200}, {"text": ocr, "mean_conf": 0.78}
    )
    t.user("Key this donor form into the register.")
    t.reply(
        f"Keyed; the form is the old {form} layout, corneas left unticked. Queries: {t.d('NHSBT 0300 123 2323')}."
    )


def t_en_ebike_chatty(t: Trace) -> None:
    """en: chatty lower-case customer with typos, e-bike subscription."""
    t.service = "pedalpass-support"
    name = t.p("NAME", "jade stone")
    mail = t.p("EMAIL", "jade.stone77@yahoo.com")
    pw = t.p("SECRET", "Blueberry!Moped88")
    addr = t.p("ADDRESS", "5 wellington terr, cheltenham gl52 2ay")
    phone = t.p("PHONE", "07834 119 027")
    bike = t.d("Cowboy 4 ST")
    sub = t.d("sub_1QkZ3tHb7YxW")
    loyalty = t.d("6337 1180 4429 5513")
    t.user(
        f"hiya its {name} here ({mail}) the app keeps loggin me out?? my pasword is {pw} if u need "
        f"to get in lol. also the {bike} has a wobbly back wheel, can someone come to {addr} "
        f"b4 friday. my number {phone} cheers x"
    )
    t.tool(
        "subscriptions.get",
        {"id": sub},
        {"status": "active", "plan": "Commuter", "bike": bike, "rewards_card": loyalty},
    )
    t.reply(
        "Never share your password with us; please reset it now. A mechanic is booked for Thursday."
    )


def t_en_parking_responses(t: Trace) -> None:
    """en: parking-charge appeal, OpenAI Responses API items with JSON-in-JSON arguments."""
    t.service = "appeals-agent"
    keeper = t.p("NAME", "Florence Paris")
    addr = t.p(
        "ADDRESS",
        "Ground Floor Flat, 31 Elm Grove, Southsea PO5 1JF",
        parts=["Ground Floor Flat, 31 Elm Grove, Southsea PO5 1JF", "31 Elm Grove"],
    )
    card = t.p("CARD", luhn("3782 822463 100"))
    mail = t.p("EMAIL", "florence.paris@btinternet.com")
    pcn = t.d("WM41827365")
    car_park = t.d("Gunwharf Quays P2")
    fee = t.d("£60.00")
    items = [
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": f"I got {pcn} at {car_park}, the machine was broken. If the appeal fails just pay the {fee} on my Amex {card}.",
                }
            ],
        },
        {
            "type": "function_call",
            "call_id": "fc_6c2",
            "name": "pcn_lookup",
            "arguments": json.dumps({"pcn": pcn}),
        },
        {
            "type": "function_call_output",
            "call_id": "fc_6c2",
            "output": json.dumps(
                {
                    "keeper": keeper,
                    "keeper_address": addr,
                    "contact": mail,
                    "site": car_park,
                    "amount": fee,
                }
            ),
        },
    ]
    span(
        t,
        "openai.responses.create",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4.1",
            "openai.responses.input": json.dumps(items, ensure_ascii=False),
        },
    )
    t.reply(
        f"Appeal lodged with photos of the broken machine (stay {t.d('08:14-10:52')}); no payment taken yet."
    )


def t_en_radio_roster_md(t: Trace) -> None:
    """en: community radio volunteer roster, a markdown table, a name in the slice."""
    t.service = "radio-rota-bot"
    t.slice = t.p("NAME", "hattie-mcgillivray")
    rows = [
        (
            t.p("NAME", "Hattie McGillivray"),
            t.d("Soul Kitchen"),
            t.p("PHONE", "07790 214 563"),
            t.p("DOB", "2008-11-02"),
        ),
        (
            t.p("NAME", "Kofi Boateng-Lamptey"),
            t.d("Highlife Hour"),
            t.p("PHONE", "07459 883 120"),
            t.p("DOB", "1972-05-19"),
        ),
        (
            t.p("NAME", "Tigist Alemayehu"),
            t.d("Addis Grooves"),
            t.p("PHONE", "07517 604 339"),
            t.p("DOB", "1999-08-08"),
        ),
    ]
    table = "| Presenter | Show | Mobile | Born |\n|---|---|---|---|\n" + "".join(
        f"| {n} | {s} | {p} | {d} |\n" for n, s, p, d in rows
    )
    icecast = t.p("SECRET", "Wh1spering-Pines-FM")
    t.tool(
        "notion.get_page",
        {"page": "rota-winter"},
        {
            "markdown": table
            + f"\nStudio B stream: source password `{icecast}`, mount {t.d('/live-128.mp3')}\n"
        },
    )
    t.user("Who needs a parental consent form on file (under 18)?")
    t.reply("Only the Soul Kitchen presenter is under 18; a consent form is needed.")


# ---------------------------------------------------------------- German


def t_de_schornsteinfeger_mail(t: Trace) -> None:
    """de: Kehrtermin per E-Mail vom Bezirksschornsteinfeger, Anschrift im Fließtext."""
    t.service = "kehrbezirk-assistent"
    name = t.p("NAME", "Arbër Krasniqi")
    herr = t.p("NAME", "Krasniqi")
    addr = t.p("ADDRESS", "Lindenweg 4a, 2. OG links, 01917 Kamenz")
    phone = t.p("PHONE", "03578 / 31 44 02")
    mail = t.p("EMAIL", "arber.krasniqi@web.de")
    meister = t.p("NAME", "Wiebke Thalheim")
    ofen = t.d("Kaminofen Justus Faro 2")
    termin = t.d("Dienstag, 12.01.2027")
    therme = t.d("Vitodens 200-W")
    kehrbuch = t.d("Kehrbuch-Nr. 7/0413")
    mailtext = (
        f"Von: {meister} <kehrbezirk7@schornsteinfeger-thalheim.de>\nAn: {name} <{mail}>\n"
        f"Betreff: Feuerstättenschau {termin}\n\nSehr geehrter Herr {herr},\n\n"
        f"für Ihre Wohnung {addr} ist die Feuerstättenschau am {termin} zwischen 8 und 10 Uhr "
        f"angesetzt ({kehrbuch}). Bitte halten Sie den Zugang zum {ofen} und zur {therme} frei. "
        f"Rückfragen gern unter Ihrer hinterlegten Nummer {phone}, wir rufen zurück.\n\n"
        f"Mit freundlichen Grüßen\n{meister}\nBevollmächtigte Bezirksschornsteinfegerin"
    )
    t.tool("mail.fetch", {"folder": "INBOX", "uid": 40127}, {"body": mailtext})
    t.user("Worum geht es in der Mail vom Schornsteinfeger und muss ich etwas tun?")
    t.reply(f"Termin zur Feuerstättenschau am {termin}; der {ofen} muss zugänglich sein.")


def t_de_hebamme_langchain(t: Trace) -> None:
    """de: Hebammenpraxis, LangChain-Agent mit chat_history und intermediate_steps."""
    t.service = "hebammen-hilfe"
    mutter = t.p("NAME", "Frieda Wald")
    kind = t.p("NAME", "Ida Wald")
    geb = t.p("DOB", "28.11.2026")
    addr = t.p("ADDRESS", "Am Mühlbach 7, 83646 Bad Tölz")
    phone = t.p("PHONE", "0171 4420937")
    hebamme = t.p("NAME", "Swantje Harms")
    kvnr = t.p("NATIONAL_ID", "W284619307")
    termin = t.d("05.12.2026")
    kurs = t.d("Rückbildung Kurs B (Mi 10:00)")
    et = t.d("02.12.2026")
    haus = t.d("Geburtshaus Isarwinkel")
    vater = t.p("NAME", "Kerem Wald")
    vtel = t.p("PHONE", "+49 151 2274 9061")
    rueckruf = f"https://praxis-isarwinkel.example/rueckruf?name={urlenc(vater)}&nummer={urlenc(vtel)}&anliegen=Wochenbett"
    state = {
        "input": "Wann ist der nächste Wochenbettbesuch?",
        "chat_history": [
            {
                "type": "human",
                "data": {
                    "content": f"Hallo, hier ist {mutter}, die kleine {kind} ist am {geb} gekommen, alles gut!"
                },
            },
            {
                "type": "ai",
                "data": {
                    "content": f"Herzlichen Glückwunsch, und sogar vor dem errechneten Termin {et}! Das {haus} meldet: {hebamme} kommt zu Ihnen nach Hause."
                },
            },
        ],
        "intermediate_steps": [
            [
                {
                    "tool": "patientin_suchen",
                    "tool_input": {"telefon": phone},
                    "log": f"Suche nach Telefonnummer; Rückruf-Link für den Vater: {rueckruf}",
                },
                json.dumps(
                    {
                        "anschrift": addr,
                        "versichertennummer": kvnr,
                        "hebamme": hebamme,
                        "naechster_besuch": termin,
                    },
                    ensure_ascii=True,
                ),
            ]
        ],
    }
    t.root["flywheel.environment"] = json.dumps(
        {"praxis": "hebammen-isarwinkel", "patientin": mutter, "rueckruf": phone},
        ensure_ascii=False,
    )
    span(
        t,
        "AgentExecutor",
        {"openinference.span.kind": "CHAIN", "input.value": json.dumps(state, ensure_ascii=False)},
    )
    t.reply(f"Der nächste Besuch ist am {termin}; danach wäre {kurs} frei.")


def t_de_orgel_spende_brief(t: Trace) -> None:
    """de: Zuwendungsbestätigung für eine Orgelspende, förmlicher Brief."""
    t.service = "kirchenbuero-briefe"
    name = t.p(
        "NAME",
        "Dr. Konstantin von Wedemeyer-Lutz",
        parts=[
            "Dr. Konstantin von Wedemeyer-Lutz",
            "Konstantin von Wedemeyer-Lutz",
            "Konstantin",
            "Wedemeyer",
            "Lutz",
        ],
    )
    addr = t.p("ADDRESS", "Schloßstraße 21\n37603 Holzminden")
    steuer = t.p("NATIONAL_ID", "47 291 038 463")
    ib = t.p("IBAN", iban("DE", "43060967 4011874400", spaced=True))
    anrede = t.p("NAME", "von Wedemeyer-Lutz")
    betrag = t.d("2.500,00 €")
    opus = t.d("Furtwängler & Hammer, Opus 1127")
    datum = t.d("18. November 2026")
    brief = (
        f"Herrn\n{name}\n{addr}\n\nZuwendungsbestätigung nach § 10b EStG\n\n"
        f"Sehr geehrter Herr Dr. {anrede},\n\nwir bestätigen den Eingang Ihrer Spende über {betrag} "
        f"am {datum} für die Restaurierung der Orgel ({opus}). Die Spende wurde von Ihrem Konto "
        f"{ib} überwiesen. Ihre steuerliche Identifikationsnummer ({steuer}) haben wir für die "
        "elektronische Übermittlung vermerkt.\n\nMit herzlichem Dank\nKirchenvorstand St. Nikolai"
    )
    t.tool("docs.render_letter", {"template": "zuwendung_v3"}, {"pdf_text": brief}, style="oi")
    t.user("Bitte die Spendenquittung für die Orgelspende fertig machen.")
    t.reply(f"Die Zuwendungsbestätigung über {betrag} ist erstellt.")


def t_de_segelflug_yaml(t: Trace) -> None:
    """de: Segelflugverein, Mitgliederliste als YAML mit Kommentaren."""
    t.service = "verein-assistent"
    m = [
        (
            t.p("NAME", "Rüdiger Ostermann"),
            t.p("DOB", "1961-08-30"),
            t.p("PHONE", "+49 160 9182 4473"),
            t.p("ADDRESS", "Fliederweg 12, 34549 Edertal-Giflitz"),
        ),
        (
            t.p("NAME", "Mariam Al-Khatib"),
            t.p("DOB", "2004-01-17"),
            t.p("PHONE", "0152 2718 4409"),
            t.p("ADDRESS", "Teichstraße 3, Whg. 5, 34117 Kassel"),
        ),
    ]
    pw = t.p("SECRET", "Thermik#Kuppe2026")
    glider = t.d("ASK 21 D-1512")
    fluggelaende = t.d("Segelfluggelände Wasserkuppe")
    oldtimer = t.d("Rhönadler")
    yaml = (
        "# Vereinsflieger-Export, Passwort fürs Vereinsflieger-Konto ist "
        + pw
        + "\nmitglieder:\n"
        + "".join(
            f'  - name: {n}\n    geburtsdatum: {d}\n    telefon: "{p}"\n    anschrift: {a}\n'
            for n, d, p, a in m
        )
        + f"flugzeuge:\n  - {glider}\n  - {oldtimer}\nheimat: {fluggelaende}\n"
    )
    t.tool("files.read", {"path": "export/mitglieder.yaml"}, yaml, style="spanname")
    t.user("Wer ist unter 25 und darf die Jugendförderung bekommen?")
    t.reply(f"Eine Person ist unter 25; sie fliegt überwiegend die {glider}.")


def t_de_java_stacktrace(t: Trace) -> None:
    """de: Fahrradleasing-Backend, Java-Stacktrace mit Parametern und JDBC-URL."""
    t.service = "leasing-backend"
    pw = t.p("SECRET", "kL8$wq2Ez!r5")
    name = t.p("NAME", "Emina Hadžiselimović")
    ib = t.p("IBAN", iban("DE", "70020270 0015427738"))
    geb = t.p("DOB", "1990-04-12")
    token = t.p("SECRET", "a71c9e04f3b852d6e1074fa98c3d2b65")
    mail = t.p("EMAIL", "emina.h@posteo.de")
    rad = t.d("Riese & Müller Charger4 GT")
    vertrag = t.d("JL-2026-04417")
    treiber = t.d("mariadb-java-client 3.4.1")
    trace = (
        "org.springframework.jdbc.CannotGetJdbcConnectionException: Failed to obtain JDBC Connection\n"
        f"\tat de.radleasing.vertrag.VertragService.anlegen(VertragService.java:142) [args: Leasingnehmer[name={name}, "
        f"geburtsdatum={geb}, iban={ib}, email={mail}], Fahrrad[modell={rad}], vertrag={vertrag}]\n"
        "\tat jdk.internal.reflect.GeneratedMethodAccessor88.invoke(Unknown Source)\n"
        "Caused by: java.sql.SQLNonTransientConnectionException: Could not connect to address=(host=db-leasing.intern)(port=3306)\n"
        f"\tdriver: {treiber}\n"
        f"\tconnection url: jdbc:mariadb://db-leasing.intern:3306/leasing?user=lease_app&password={pw}\n"
        f"spring.config: sevdesk.api-token={token}\n"
        "spring.kafka.properties.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="lease-svc" password="{t.p("SECRET", "Rv5#Jt8nQe2w!Lz")}";\n'
    )
    t.error = "CannotGetJdbcConnectionException"
    t.tool(
        "logs.search",
        {"query": "VertragService ERROR", "since": "1h"},
        {"hits": [{"message": trace}]},
    )
    t.user("Warum schlagen die neuen Leasingverträge fehl?")
    t.reply(
        "Die Datenbank ist nicht erreichbar; die Verträge werden nach dem Neustart neu angelegt."
    )


def t_de_taxi_sprachtranskript(t: Trace) -> None:
    """de: Taxizentrale, Sprachtranskript ohne Satzzeichen."""
    t.service = "taxi-sprachbot"
    name = t.p("NAME", "brigitte sommer-ağaoğlu")
    addr = t.p("ADDRESS", "hauptstraße zweiundvierzig in tübingen bühl")
    phone = t.p("PHONE", "null eins fünf zwei drei acht acht vier eins zwei null sechs")
    ziel = t.d("Universitätsklinikum Tübingen Crona")
    text = (
        f"ja hallo hier ist {name} ich bräuchte morgen früh um sechs ein taxi ab {addr} zur "
        f"{ziel} ich hab einen rollator dabei also bitte ein größeres auto falls was ist meine "
        f"nummer ist {phone} danke"
    )
    t.tool(
        "asr.transcribe",
        {"audio": "vm_20261203_0612.wav", "language": "de-DE"},
        {"transcript": text},
    )
    t.user("Lege die Fahrt aus der Sprachnachricht an.")
    t.reply(
        f"Fahrt morgen 6:00 zur {ziel} angelegt ({t.d('Großraumtaxi 8 Sitze')} wegen Rollator)."
    )


def t_de_ocr_fischereischein(t: Trace) -> None:
    """de: OCR eines Fischereischein-Antrags mit zerbrochenen Abständen."""
    t.service = "buergerbuero-ocr"
    name = t.p("NAME", "CAVIEZEL , Urs-Gian")
    geb = t.p("DOB", "04.O6.1977")
    addr = t.p(
        "ADDRESS",
        "Wiesenstr . 9 , 79286 Glottertal",
        parts=["Wiesenstr . 9 , 79286 Glottertal", "Wiesenstr . 9"],
    )
    phone = t.p("PHONE", "0 76 84 / 90 71 28")
    gebuehr = t.d("Gebühr 48,00 EUR")
    pruef = t.d("Prüfungsnummer FP-2019-3318")
    az = t.d("Aktenzeichen 32.1-FS/2026/0917")
    ocr = (
        "A n t r a g  a u f  E r t e i l u n g  e i n e s  F i s c h e r e i s c h e i n s\n"
        f"Name , Vorname : {name}\nGeburtsdatum :  {geb}\nAnschrift : {addr}\nTelefon : {phone}\n"
        f"{pruef}   {gebuehr}\n{az}\nUnterschrift : ________\n"
    )
    t.tool("ocr.scan", {"file": "antrag_fischerei_0911.pdf"}, {"text": ocr})
    t.user("Antrag prüfen: ist die Fischerprüfung nachgewiesen?")
    t.reply(f"Ja, {pruef} liegt vor; {gebuehr} sind noch offen.")


def t_de_at_zulassung_mcp(t: Trace) -> None:
    """de-AT: Zulassungsstelle, MCP-Ergebnis mit Anschrift in getrennten Feldern."""
    t.service = "zulassung-termine"
    vor = t.p("NAME", "Ludmila")
    nach = t.p("NAME", "Hrdlička-Pammer")
    strasse = t.p("ADDRESS", "Gumpendorfer Straße 81/2/14")
    geb = t.p("DOB", "19. Jänner 1968")
    mail = t.p("EMAIL", "l.hrdlicka-pammer@gmx.at")
    phone = t.p("PHONE", "+43 664 318 2270")
    vorgang = t.d("2026-ZUL-118842")
    evb = t.d("eVB A7K2M9P")
    termin = t.d("14.12.2026, 09:20")
    payload = {
        "vorname": vor,
        "nachname": nach,
        "strasse": strasse,
        "plz": "1060",
        "ort": "Wien",
        "kontakt": {"mail": mail, "mobil": phone},
        "vorgang": vorgang,
        "versicherung": evb,
    }
    text = (
        f"Termin bestätigt: {termin}. Antragstellerin {vor} {nach}, geboren am {geb}. "
        f"Daten: {json.dumps(payload, ensure_ascii=False)}"
    )
    t.tool("zulassung_termin_buchen", {"vorgang": vorgang}, mcp(text))
    t.user("Hab ich den Termin für die Ummeldung schon?")
    t.reply(f"Ja: {termin}, Vorgang {vorgang}. Bring die Versicherungsbestätigung {evb} mit.")


def t_de_chatops_kubeconfig(t: Trace) -> None:
    """de: Chat-Ops, kubeconfig und Hetzner-Token in einem Chatverlauf."""
    t.service = "ops-chat-agent"
    ip = t.p("IP", "10.20.0.15")
    tok = t.p(
        "SECRET",
        "eyJhbGciOiJSUzI1NiIsImtpZCI6Ik1xR2w0In0.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6Y2k6ZGVwbG95ZXIifQ.Vg3kT9QyR2zM8pLwX1nB5cF7dH0jK4sA6eU2iO9rY3tWq",
    )
    key_pem = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB3k9Q2vXz7LmR8pW4nT1cY6hJ0sA5dF3gK9eU2iO7rYoAoGCCqGSM49\nAwEHoUQDQgAE4kQ9mZ1pR7xL2vN8wT3cY5hJ0sA6dF1gK4eU7iO2rYb9Qz3Lm8Wn\nX5cV1dH7jK0sA2eU4iO6rY8tWq3Mz9Lp1Q==\n-----END EC PRIVATE KEY-----\n"
    ckd = t.p("SECRET", b64(key_pem))
    hetzner = t.p("SECRET", "hZ4kQ9vW2xL7mR1pT8nB5cY3jF6dG0sA4eU9iO2rK7tZ1qX8wV5bN3mH6yJ0pLc")
    handle = t.p("NAME", "lennart.hoffmann")
    kube = (
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://" + ip + ":6443\n"
        "  name: prod-fsn1\nusers:\n- name: deployer\n  user:\n    token: " + tok + "\n"
        "    client-key-data: " + ckd + "\n"
    )
    ver = t.d("k3s v1.31.4+k3s1")
    digest = t.d("sha256:9e0b5d7c1a3f68e2b4d0c9a7f5e3b1d8c6a4f2e0b9d7c5a3f1e8b6d4c2a0f9e7")
    chat = [
        {
            "user": handle,
            "ts": "09:41",
            "text": "kubectl hängt bei prod, hier meine config:\n```\n" + kube + "```",
        },
        {
            "user": "ops-bot",
            "ts": "09:41",
            "text": f"Cluster-Version {ver}, letztes Image {digest}.",
        },
        {"user": handle, "ts": "09:43", "text": f"und der hcloud token falls nötig: {hetzner}"},
    ]
    t.tool("mattermost.channel_history", {"channel": "ops-prod", "limit": 3}, {"posts": chat})
    t.user("Fass zusammen, warum kubectl bei prod hängt.")
    t.reply(
        "Der API-Server ist nur aus dem internen Netz erreichbar; bitte die VPN-Verbindung prüfen. Zugangsdaten bitte rotieren."
    )


def t_de_schwimmverein_csv(t: Trace) -> None:
    """de: Schwimmverein, SEPA-Mandate als CSV mit Semikolon."""
    t.service = "vereinskasse"
    rows = [
        (
            t.p("NAME", "Kowalczyk-Brenner, Jannik"),
            t.p("DOB", "09.03.2013"),
            t.p("IBAN", iban("DE", "10010010 0814721903")),
            t.p("EMAIL", "kowalczyk-brenner@t-online.de"),
        ),
        (
            t.p("NAME", "Osei, Abena"),
            t.p("DOB", "21.10.2011"),
            t.p("IBAN", iban("DE", "50010517 5407324185")),
            t.p("EMAIL", "abena.osei@gmx.net"),
        ),
        (
            t.p("NAME", "Vogel, Marlene"),
            t.p("DOB", "30.06.1954"),
            t.p("IBAN", iban("DE", "76050101 0011223344")),
            t.p("EMAIL", "m.vogel54@arcor.de"),
        ),
    ]
    mandat = t.d("MND-SV-2026-0193")
    glaeubiger = t.d("DE98ZZZ09999999999")
    bonus = t.d("4711 0815 2233 4456")
    csv = "Name;Geburtsdatum;IBAN;E-Mail\n" + "".join(f"{n};{d};{i};{e}\n" for n, d, i, e in rows)
    t.tool(
        "kasse.export_mandate",
        {"format": "csv", "sep": ";"},
        {
            "csv": csv,
            "glaeubiger_id": glaeubiger,
            "sammelmandat": mandat,
            "bonuskarte_verein": bonus,
        },
    )
    t.user("Welche Kinder brauchen den Jugendbeitrag?")
    t.reply("Zwei Mitglieder sind unter 18 und zahlen den Jugendbeitrag.")


def t_de_musikschule_anthropic(t: Trace) -> None:
    """de: Musikschule, Eltern-Anfrage als Anthropic-Content-Blocks."""
    t.service = "musikschule-assistent"
    eltern = t.p("NAME", "Chidinma Okonjo-Brandt")
    kind = t.p("NAME", "Malik")
    geb = t.p("DOB", "3. Juni 2017")
    addr = t.p("ADDRESS", "Bahnhofstr. 12 a, 3. Stock, 71638 Ludwigsburg")
    pw = t.p("SECRET", "Gitarre-Sonne-42")
    phone = t.p("PHONE", "07141 / 98 22 305")
    lehrer = t.p("NAME", "Herr Quaderer", parts=["Herr Quaderer", "Quaderer"])
    instr = t.d("Yamaha C40 Konzertgitarre 3/4")
    blocks = [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": (
                        f"Guten Tag, ich bin {eltern}. Mein Sohn {kind} (geboren am {geb}) möchte Gitarre lernen. "
                        f"Wir wohnen {addr}. Das Passwort fürs Elternportal ist {pw}, da kommen wir nicht mehr rein. "
                        f"Erreichbar bin ich unter {phone}."
                    ),
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_m1",
                    "name": "leihinstrument_suchen",
                    "input": {"instrument": instr},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_m1",
                    "content": f"verfügbar: 1x {instr}, Betreuung {lehrer}",
                },
            ],
        },
    ]
    anthropic(t, blocks)
    t.reply(
        f"Eine {instr} ist frei, passend für {t.d('Rockschool Grade 1')}. Bitte ändern Sie das Passwort über 'Passwort vergessen'."
    )


# ---------------------------------------------------------------- French


def t_fr_fromagerie_chat(t: Trace) -> None:
    """fr: abonnement fromager, tableau de messages chat-completions."""
    t.service = "cremerie-en-ligne"
    name = t.p("NAME", "Gwenaëlle Le Goff")
    addr = t.p(
        "ADDRESS",
        "Résidence Les Tilleuls, bâtiment B, 3e étage, 12 rue Amiral-Ronarc'h, 29200 Brest",
        parts=[
            "Résidence Les Tilleuls, bâtiment B, 3e étage, 12 rue Amiral-Ronarc'h, 29200 Brest",
            "12 rue Amiral-Ronarc'h",
        ],
    )
    card = t.p("CARD", "4974 0213 7741 5625")
    phone = t.p("PHONE", "06 71 48 22 93")
    mail = t.p("EMAIL", "gwen.legoff@laposte.net")
    f1 = t.d("Saint-Nectaire fermier")
    f2 = t.d("Comté 24 mois")
    f3 = t.d("Abbaye de Tamié")
    box = t.d("CMD-FR-882731")
    user_text = (
        f"Bonjour, c'est {name}. Pour la box de décembre je voudrais remplacer le {f2} par un "
        f"{f1}. Livraison : {addr}. Vous pouvez débiter la carte {card}. Tél. {phone}."
    )
    chat_completion(
        t,
        [
            {
                "role": "system",
                "content": "Tu es l'assistante de la crèmerie. Réponds en français.",
            },
            {"role": "user", "content": user_text},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_b2",
                        "type": "function",
                        "function": {
                            "name": "modifier_box",
                            "arguments": json.dumps(
                                {"commande": box, "retirer": f2, "ajouter": f1, "email": mail},
                                ensure_ascii=False,
                            ),
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_b2",
                "content": json.dumps(
                    {"ok": True, "commande": box, "suggestion": f3}, ensure_ascii=False
                ),
            },
        ],
        model="gpt-4o-mini",
    )
    t.reply(f"C'est noté pour {box} ; je vous suggère aussi le {f3}.")


def t_fr_orthophonie_email_qp(t: Trace) -> None:
    """fr: cabinet d'orthophonie, courriel quoted-printable avec réponse citée."""
    t.service = "secretariat-ortho"
    enfant_raw = "Noé Rakotomalala"
    enfant = t.p("NAME", enfant_raw, parts=both("NAME", enfant_raw, qp))
    ne_raw = "14 février 2019"
    ne = t.p("DOB", ne_raw, parts=[ne_raw, qp(ne_raw)])
    mere = t.p("NAME", "Haingotiana Rakotomalala")
    mmail = t.p("EMAIL", "haingo.rakoto@orange.fr")
    nir_ = t.p("NATIONAL_ID", "2 88 07 75 116 042 47")
    addr_raw = "4 impasse des Glycines, 31500 Toulouse"
    addr = t.p("ADDRESS", addr_raw)
    phone = t.p("PHONE", "+33 6 12 40 87 55")
    bilan = t.d("bilan orthophonique AMO 30,5")
    rdv = t.d("mardi 8 décembre à 17h15")
    body = (
        f"Bonjour,\r\n\r\nJe souhaite inscrire mon fils {qp(enfant)}, n=C3=A9 le {qp(ne)}, pour un "
        f"{qp(bilan)}.\r\nNum=C3=A9ro de s=C3=A9curit=C3=A9 sociale de l'assur=C3=A9e : {nir_}.\r\n"
        f"Adresse : {addr}. T=C3=A9l : {phone}.\r\n\r\n{qp(mere)}\r\n\r\n"
        f"> Le 30 nov. 2026 =C3=A0 11:20, {t.d('Cabinet Lavande')} a =C3=A9crit :\r\n"
        f"> Ordonnance du {t.d('21/11/2026')} bien re=C3=A7ue.\r\n"
        f"> Nous pouvons vous proposer le {qp(rdv)}.\r\n"
    )
    raw = (
        f"From: {mere} <{mmail}>\r\nTo: contact@cabinet-lavande-ortho.fr\r\nSubject: Re: Demande de bilan\r\n"
        "Content-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
        + body
    )
    t.tool("imap.fetch", {"uid": 2291}, {"rfc822": raw}, style="oi")
    t.user("Réponds à cette maman pour confirmer le rendez-vous.")
    t.reply(f"Brouillon prêt : confirmation du {rdv}, pensez à l'ordonnance.")


def t_fr_parapente_ics(t: Trace) -> None:
    """fr: école de parapente, invitations ICS et dates de naissance pour l'assurance."""
    t.service = "parapente-resa"
    p1 = t.p("NAME", "Bastien Oyono-Mvondo")
    p2 = t.p("NAME", "Solène Trégouët")
    m1 = t.p("EMAIL", "bastien.oyono@free.fr")
    d1 = t.p("DOB", "22/06/1979")
    d2 = t.p(
        "DOB", "née le 3 septembre 2002", parts=["née le 3 septembre 2002", "3 septembre 2002"]
    )
    tel = t.p("PHONE", "07 81 26 49 03")
    when = t.d("20270703T081500Z")
    deco = t.d("Col de la Forclaz")
    vol = t.d("Biplace découverte 20 min")
    ics = (
        "BEGIN:VCALENDAR\nPRODID:-//Aile Libre//Réservations//FR\nBEGIN:VEVENT\n"
        f"DTSTART:{when}\nSUMMARY:{vol} - décollage {deco}\n"
        f'ATTENDEE;CN="{p1}":mailto:{m1}\n'
        f"DESCRIPTION:Passagers : {p1} (date de naissance : {d1}) et {p2}\\, {d2}\\, "
        f"joignable au {tel}. Poids max 95 kg.\nEND:VEVENT\nEND:VCALENDAR\n"
    )
    t.tool("agenda.exporter", {"reservation": "AL-7719"}, ics, style="spanname")
    windy = t.p("SECRET", "wK7pQ2xZ9mT4vN8rB3cL6yH1dF5gJ0sA")
    t.tool(
        "meteo.prevision",
        {"site": deco, "key": windy},
        {"vent": "NO 12 km/h", "modele": t.d("ICON-D2 run 06z")},
    )
    t.user("Les deux passagers sont-ils bien assurés pour le vol de juillet ?")
    t.reply(f"Oui, les deux sont inscrits pour le {vol} au {deco}.")


def t_fr_mutuelle_lettre(t: Trace) -> None:
    """fr: lettre formelle de résiliation de mutuelle."""
    t.service = "courrier-assistant"
    name = t.p("NAME", "Marie-Josèphe Ndiaye-Fontaine")
    ne = t.p("DOB", "1er avril 1947")
    addr = t.p(
        "ADDRESS",
        "27, avenue Jean-Jaurès, appartement 54, 94200 Ivry-sur-Seine",
        parts=[
            "27, avenue Jean-Jaurès, appartement 54, 94200 Ivry-sur-Seine",
            "27, avenue Jean-Jaurès",
        ],
    )
    nir_ = t.p("NATIONAL_ID", "2 47 04 99 341 127 54")
    ib = t.p("IBAN", iban("FR", "10278 06010 00020437914 71", spaced=True))
    code = t.p("SECRET", "Mutu-7741-Iv")
    adherent = t.d("adhérent n° 00418827")
    contrat = t.d("contrat Sérénité Senior 3")
    lettre = (
        f"{name}\n{addr}\n\nObjet : résiliation du {contrat}, {adherent}\n\nMadame, Monsieur,\n\n"
        f"Je soussignée {name}, née le {ne} à Dakar, numéro de sécurité sociale {nir_}, vous prie de "
        f"bien vouloir résilier mon {contrat} à compter du 1er janvier 2027. Merci de cesser les "
        f"prélèvements sur le compte {ib}.\n\nMon code d'accès à l'espace adhérent est {code} si "
        "besoin de vérifier.\n\nVeuillez agréer, Madame, Monsieur, mes salutations distinguées."
    )
    t.user(
        "Mets cette lettre au propre et envoie-la en recommandé électronique.",
        system="Assistant de courrier. Ne jamais demander de mot de passe.",
    )
    t.tool(
        "ar24.envoyer_lre",
        {"destinataire": "resiliation@mutuelle-exemple.fr", "corps": lettre},
        {"statut": "déposée", "preuve": "LRE-26-09912"},
    )
    t.reply(f"Lettre envoyée en recommandé électronique (preuve {t.d('LRE-26-09912')}).")


def t_fr_plombier_transcription(t: Trace) -> None:
    """fr: dépannage plomberie, transcription vocale sans ponctuation."""
    t.service = "standard-vocal"
    nom = t.p("NAME", "thibault-nguyen")
    full = t.p("NAME", "lucas thibault-nguyen")
    addr = t.p("ADDRESS", "huit rue des trois rois à colmar au deuxième étage porte de gauche")
    tel = t.p("PHONE", "zéro six douze trente-quatre cinquante-six soixante-dix-huit")
    texte = (
        f"oui bonjour c'est monsieur {nom} enfin {full} j'ai une fuite sous l'évier depuis ce matin "
        f"c'est au {addr} vous pouvez me rappeler au {tel} merci au revoir"
    )
    t.tool("stt", {"audio": "msg_0417.ogg", "langue": "fr-FR"}, {"texte": texte, "duree_s": 23})
    t.user("Crée l'intervention à partir du message vocal.")
    t.reply(
        f"Intervention urgente créée : fuite sous évier, prévoir un {t.d('mitigeur Grohe Eurosmart')}, rappel client demandé."
    )


def t_fr_php_stacktrace(t: Trace) -> None:
    """fr: boutique Symfony, exception avec arguments et variables d'environnement."""
    t.service = "boutique-symfony"
    pw = t.p("SECRET", "Zf4!ouq9Lm")
    mj = t.p("SECRET", "c3e81f0a57d94b26a0f7e5c3b18d92e4")
    nom = t.p("NAME", "Santoni")
    prenom = t.p("NAME", "Ghjuvan-Petru")
    mail = t.p("EMAIL", "gp.santoni@sfr.fr")
    addr = t.p(
        "ADDRESS",
        "Lieu-dit Funtanella, route de Sartène, 20100 Foce",
        parts=["Lieu-dit Funtanella, route de Sartène, 20100 Foce", "Lieu-dit Funtanella"],
    )
    ip = t.p("IP", "92.184.105.37")
    ver = t.d("symfony/mailer v7.1.6")
    cmd = t.d("commande #FR-20261203-0078")
    trace = (
        "Symfony\\Component\\Mailer\\Exception\\HttpTransportException: Unable to send an email: "
        "Unauthorized (code 401).\n"
        f"#0 src/Service/Confirmation.php(57): App\\Service\\Confirmation->envoyer(App\\Entity\\Client "
        f'{{nom: "{nom}", prenom: "{prenom}", email: "{mail}", adresse_livraison: "{addr}", '
        f'ip: "{ip}"}}, "{cmd}")\n'
        "#1 vendor/symfony/http-kernel/HttpKernel.php(181): ...\n"
        f'[env] DATABASE_URL="mysql://boutique:{pw}@127.0.0.1:3306/boutique?serverVersion=8.0"\n'
        f"[env] MAILER_DSN=mailjet+api://4b1d0e7c99a2f3e6d8c5b7a1e0f4c2d3:{mj}@default\n"
        f"({ver})"
    )
    t.error = "HttpTransportException 401"
    t.tool("logs.tail", {"fichier": "var/log/prod.log", "lignes": 40}, trace, style="oi")
    t.user("Pourquoi les clients ne reçoivent plus le mail de confirmation ?")
    t.reply("Mailjet refuse la clé (401) : la clé secrète a été révoquée, il faut la régénérer.")


def t_fr_costumes_html(t: Trace) -> None:
    """fr: location de costumes de théâtre, fiche HTML avec entités et lien signé."""
    t.service = "costumerie-agent"
    raw = "Héloïse Dartigues-Bénazet"
    name = t.p("NAME", raw, parts=both("NAME", raw, ent))
    araw = "Appartement 6, 19 quai de la Fosse, 44000 Nantes"
    addr = t.p("ADDRESS", araw, parts=[araw, ent(araw), "19 quai de la Fosse"])
    phone = t.p("PHONE", "02 40 71 93 58")
    sig = t.p("SECRET", "7b3f2a9c4e1d86f05a2c7e9b1d4f3a6c8e0b2d5f7a9c1e3b5d7f9a2c4e6b8d0f")
    c1 = t.d("Cyrano de Bergerac (habit complet)")
    c2 = t.d("Marquise de Merteuil, robe à paniers")
    caution = t.d("caution 350 €")
    url = (
        "https://costumerie-photos.s3.eu-west-3.amazonaws.com/essayages/2026/cyrano-03.jpg"
        "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAZ7QW2NPL5EXAMPLE%2F20261203%2Feu-west-3%2Fs3%2Faws4_request"
        f"&X-Amz-Date=20261203T101500Z&X-Amz-Expires=604800&X-Amz-SignedHeaders=host&X-Amz-Signature={sig}"
    )
    html_ = (
        f'<section class="fiche"><h2>R&eacute;servation</h2><p>Locataire : <b>{ent(name)}</b></p>'
        f"<p>Adresse : {ent(addr)}</p><p>T&eacute;l. {phone}</p>"
        f"<ul><li>{ent(c1)}</li><li>{ent(c2)}</li></ul><p>{ent(caution)}</p>"
        f'<img src="{url.replace("&", "&amp;")}" alt="essayage"></section>'
    )
    t.tool("fiche_reservation", {"id": "RES-3381"}, html_, style="spanname")
    t.user("Qu'est-ce que la compagnie a loué pour la tournée ?")
    t.reply(f"Deux costumes : {c1} et {c2}, avec {caution}.")


def t_fr_ludotheque_sql(t: Trace) -> None:
    """fr: ludothèque, résultat SQL avec colonnes nom et prénom séparées."""
    t.service = "ludo-gestion"
    rows = [
        (
            t.p("NAME", "Lefebvre-Ouali"),
            t.p("NAME", "Inès"),
            t.p("DOB", "2018-05-27"),
            t.p("EMAIL", "ines.parent.lo@gmail.com"),
        ),
        (
            t.p("NAME", "Kergoat"),
            t.p("NAME", "Maël"),
            t.p("DOB", "2016-12-09"),
            t.p("EMAIL", "famille.kergoat@wanadoo.fr"),
        ),
        (
            t.p("NAME", "Diallo"),
            t.p("NAME", "Aïssatou"),
            t.p("DOB", "2020-02-29"),
            t.p("EMAIL", "a.diallo.maman@yahoo.fr"),
        ),
    ]
    j1 = t.d("Les Aventuriers du Rail")
    j2 = t.d("Docteur Maboul")
    j3 = t.d("Monsieur Patate")
    res = (
        "nom | prenom | date_naissance_enfant | email_parent\n"
        + "".join(f"{n} | {p} | {d} | {e}\n" for n, p, d, e in rows)
        + "(3 lignes)"
    )
    odbc = t.p("SECRET", "Dés-à-coudre-12")
    t.tool(
        "sql.executer",
        {
            "connexion": f"Driver={{MariaDB ODBC 3.1}};Server=ludo-db;Database=ludo;Uid=ludo_ro;Pwd={odbc};",
            "requete": "SELECT nom, prenom, date_naissance_enfant, email_parent FROM adherents WHERE retard > 30",
        },
        {"resultat": res},
    )
    t.user(f"Qui n'a pas rendu {j1}, {j2} ou {j3} ?")
    t.reply("Trois familles ont un jeu en retard de plus de 30 jours ; je prépare les relances.")


def t_fr_trottinette_chatty(t: Trace) -> None:
    """fr: client bavard en minuscules avec fautes, réparation de trottinette."""
    t.service = "sav-trottinettes"
    nom = t.p("NAME", "nadir soilihi")
    pw = t.p("SECRET", "trotti-2024!!")
    addr = t.p("ADDRESS", "5 allée des peupliers 2eme etage 69120 vaulx-en-velin")
    tel = t.p("PHONE", "07 58 14 92 06")
    mail = t.p("EMAIL", "nadir.soil@hotmail.fr")
    modele = t.d("Xiaomi Pro 2")
    t.root["flywheel.env.s0_ref"] = f"crm://clients/{mail}"
    t.user(
        f"slt c {nom} ma {modele} fai un bruit bizare qd je frene. mon mdp sur lappli c {pw} si "
        f"vs voulez regarder. jsuis au {addr}, tel {tel} ou {mail}. merci d avance"
    )
    t.tool(
        "tickets.creer",
        {"client": nom, "produit": modele, "symptome": "bruit au freinage"},
        {"ticket": "SAV-55813"},
    )
    t.reply(
        f"Ticket SAV-55813 créé ({t.d('firmware DRV 1.7.3')}). Ne communiquez jamais votre mot de passe : changez-le dans l'appli."
    )


def t_fr_rando_yaml(t: Trace) -> None:
    """fr: club de randonnée, YAML avec nom et prénom séparés."""
    t.service = "club-rando"
    m = [
        (
            t.p("NAME", "BERTHELOT-KASSAB"),
            t.p("NAME", "Anaïs"),
            t.p("DOB", "1958-03-09"),
            t.p("PHONE", "06 33 18 72 40"),
        ),
        (
            t.p("NAME", "Rivière"),
            t.p("NAME", "Jean-Baptiste"),
            t.p("DOB", "1949-11-21"),
            t.p("PHONE", "04 76 52 19 88"),
        ),
    ]
    certif = t.d("2026-09-14")
    sortie = t.d("Tour du Mont Aiguille")
    yaml = (
        "membres:\n"
        + "".join(
            f'  - nom: {n}\n    prenom: {p}\n    date_naissance: {d}\n    telephone: "{tel}"\n    certificat_medical: {certif}\n'
            for n, p, d, tel in m
        )
        + f"prochaine_sortie: {sortie}\n"
    )
    t.tool("fichiers.lire", {"chemin": "membres.yaml"}, yaml)
    t.user(f"Qui a plus de 75 ans pour le {sortie} ? Il faut un avis médical.")
    t.reply("Un membre a plus de 75 ans ; son certificat médical date de septembre.")


def t_fr_be_traiteur_dataurl(t: Trace) -> None:
    """fr-BE: traiteur, fiche contact en data: URL (vCard base64)."""
    t.service = "traiteur-devis"
    name = t.p("NAME", "Loïc Vandenheede")
    addr = t.p("ADDRESS", "Rue de la Brasserie 14 bte 3, 1050 Ixelles")
    bday = t.p("DOB", "1985-07-14")
    nn_ = t.p("NATIONAL_ID", "85.07.14-263.84")
    tel = t.p("PHONE", "+32 478 21 96 40")
    ib = t.p("IBAN", iban("BE", "310 1804221 10"))
    menu = t.d("Menu Brueghel (waterzooi)")
    vcard = (
        f"BEGIN:VCARD\nVERSION:3.0\nFN:{name}\nADR;TYPE=home:;;{addr};;;;BE\nTEL:{tel}\nBDAY:{bday}\n"
        f"NOTE:NN {nn_} - facture sur {ib}\nEND:VCARD\n"
    )
    data_url = "data:text/vcard;base64," + b64(vcard)
    t.tool("crm.contact_lien", {"devis": "DV-2026-311"}, {"contact": data_url, "menu": menu})
    t.user(f"Prépare le devis du {menu} pour 40 personnes, client {name}.")
    t.reply(
        f"Devis DV-2026-311 prêt : {menu}, 40 couverts, {t.d('TVA 12 %')} sur le repas, livraison près du {t.d('Manneken Pis')}."
    )


# ---------------------------------------------------------------- Spanish


def t_es_baile_whatsapp(t: Trace) -> None:
    """es: academia de baile, registro de WhatsApp exportado."""
    t.service = "academia-baile-bot"
    a = t.p("NAME", "Rocío Fajardo Benítez")
    b = t.p("NAME", "Sergi Ahumada")
    dni_ = t.p("NATIONAL_ID", "47293815L")
    addr = t.p("ADDRESS", "C/ Pintor Sorolla 23, 4º izda, 46002 València")
    phone = t.p("PHONE", "+34 611 48 20 97")
    card = t.p("CARD", "5132 8870 2219 0342")
    clase = t.d("Salsa cubana nivel 2")
    sala = t.d("Sala Celia Cruz")
    log = (
        f"[12/11/26, 19:04] {a}: hola!! me apunto a {clase} los jueves\n"
        f"[12/11/26, 19:05] {b}: genial, pásame DNI y dirección para la ficha\n"
        f"[12/11/26, 19:09] {a}: {dni_}, vivo en {addr}. mi móvil {phone}\n"
        f"[12/11/26, 19:10] {a}: la matrícula pagadla con la tarjeta {card} porfa\n"
        f"[12/11/26, 19:12] {b}: hecho, te toca la {sala} 👍 y de calentamiento {t.d('Chan Chan de Compay Segundo')}\n"
    )
    t.tool("whatsapp.exportar_chat", {"chat": "Secretaría"}, {"txt": log})
    t.user("Da de alta a la alumna nueva del chat.")
    t.reply(f"Alta hecha en {clase}, jueves en la {sala}.")


def t_es_regantes_carta(t: Trace) -> None:
    """es: comunidad de regantes, escrito formal con domicilio rural."""
    t.service = "regantes-secretaria"
    name = t.p(
        "NAME",
        "D. Anselmo Pérez de la Fuente",
        parts=[
            "D. Anselmo Pérez de la Fuente",
            "Anselmo Pérez de la Fuente",
            "Anselmo",
            "Pérez",
            "Fuente",
        ],
    )
    dni_ = t.p("NATIONAL_ID", "33861402-C")
    nac = t.p("DOB", "2 de noviembre de 1949")
    addr = t.p(
        "ADDRESS",
        "Polígono 7, Parcela 112, Paraje Los Almendros, 30840 Alhama de Murcia",
        parts=[
            "Polígono 7, Parcela 112, Paraje Los Almendros, 30840 Alhama de Murcia",
            "Polígono 7, Parcela 112",
        ],
    )
    ib = t.p("IBAN", iban("ES", "2085 9371 48 0331207764", spaced=True))
    phone = t.p("PHONE", "968 63 12 07")
    turno = t.d("turno de riego nº 14")
    acequia = t.d("Acequia de los Frailes")
    carta = (
        f"A LA JUNTA DE GOBIERNO\n\n{name}, con DNI {dni_}, nacido el {nac}, con domicilio en {addr}, "
        f"teléfono {phone},\n\nEXPONE: Que es comunero titular del {turno} de la {acequia} y "
        f"\nSOLICITA: Que las derramas se carguen en la cuenta {ib}.\n\nEn Alhama de Murcia, a 1 de diciembre de 2026."
    )
    t.tool(
        "registro.entrada",
        {"tipo": "instancia"},
        {"texto": carta, "registro": "RE-2026-0712"},
        style="oi",
    )
    t.user("Registra la instancia del comunero y dime qué pide.")
    t.reply(f"Pide domiciliar las derramas del {turno}. Registrada como {t.d('RE-2026-0712')}.")


def t_es_podologia_langgraph(t: Trace) -> None:
    """es: clínica podológica, estado de LangGraph con historial."""
    t.service = "podologia-citas"
    name = t.p("NAME", "Yupanqui Mamani Condori")
    nac = t.p("DOB", "04/10/1968")
    nie_ = t.p("NATIONAL_ID", "Y3814702M")
    tel = t.p("PHONE", "634 21 88 05")
    addr = t.p("ADDRESS", "Av. de la Albufera 118, 6º C, 28038 Madrid")
    plantilla = t.d("Plantillas Dr. Scholl Gel Activ")
    cita = t.d("2026-12-17T10:30")
    state = {
        "values": {
            "paciente": {
                "nombre_completo": name,
                "fecha_nacimiento": nac,
                "nie": nie_,
                "telefono": tel,
                "domicilio": addr,
            },
            "motivo": "dolor en el talón, usa "
            + plantilla
            + ", pedir "
            + t.d("ortesis 3/4 con talonera"),
            "cita_propuesta": cita,
        },
        "next": ["confirmar_cita"],
        "metadata": {
            "step": 3,
            "source": "loop",
            "writes": {"buscar_hueco": {"cita_propuesta": cita}},
        },
    }
    span(
        t,
        "LangGraph",
        {"openinference.span.kind": "CHAIN", "output.value": json.dumps(state, ensure_ascii=True)},
    )
    t.user("Confírmale la cita al paciente por SMS.")
    t.reply(f"SMS enviado con la cita del {cita[:10]} a las 10:30.")


def t_es_ar_camping(t: Trace) -> None:
    """es-AR: alquiler de equipo de camping, voseo, CUIT y clave en prosa."""
    t.service = "alquileres-patagonia"
    name = t.p("NAME", "Agustina Lértora")
    cuit_ = t.p("NATIONAL_ID", "27-31874926-9")
    dni_ = t.p("NATIONAL_ID", "31.874.926")
    addr = t.p("ADDRESS", "Av. Corrientes 4512, piso 3, depto. B, C1195 CABA")
    card = t.p("CARD", "5167 4921 0038 4616")
    phone = t.p("PHONE", "+54 9 11 4738-2915")
    clave = t.p("SECRET", "Fitz.Roy-1952")
    carpa = t.d("Carpa Doite Himalaya 3")
    t.user(
        f"Hola, soy {name} (DNI {dni_}). Quiero alquilar la {carpa} del 3 al 10 de enero. "
        f"Facturame a CUIT {cuit_}, domicilio {addr}. Cobrame con la {card}. Mi cel {phone}. "
        f"Si necesitás entrar a mi cuenta la clave es {clave}."
    )
    t.tool(
        "reservas.crear",
        {"equipo": carpa, "desde": "2027-01-03", "hasta": "2027-01-10", "cuit": cuit_},
        {"reserva": "PAT-9921", "total": t.d("ARS 184.000")},
    )
    t.reply("Reserva PAT-9921 creada. No compartas tu clave: cambiala cuando puedas.")


def t_es_grua_transcripcion(t: Trace) -> None:
    """es: asistencia en carretera, transcripción de llamada sin puntuación."""
    t.service = "asistencia-grua"
    name = t.p("NAME", "pilar calle mayor")
    nac = t.p(
        "DOB",
        "el quince de marzo del ochenta y uno",
        parts=["el quince de marzo del ochenta y uno", "quince de marzo del ochenta y uno"],
    )
    addr = t.p("ADDRESS", "avenida de los descubrimientos veinte en mojácar")
    tel = t.p("PHONE", "seis cero nueve treinta y uno cuarenta y ocho veintidós")
    poliza = t.d("póliza 0081-772-4419")
    texto = (
        f"sí mire soy {name} tengo el coche parado en la autovía a siete kilómetro doscientos catorce "
        f"la {poliza} está a mi nombre nací {nac} por si me lo pide y cuando lo arreglen que me lo "
        f"lleven a casa {addr} mi teléfono es {tel}"
    )
    t.tool("transcribir_llamada", {"id": "LL-44120"}, {"texto": texto}, style="spanname")
    t.user("Abre el servicio de grúa con los datos de la llamada.")
    t.reply(f"Servicio abierto con la {poliza}: grúa hacia el kilómetro 214 de la {t.d('A-7')}.")


def t_es_subasta_email(t: Trace) -> None:
    """es: casa de subastas, hilo de correo con respuestas citadas."""
    t.service = "subastas-correo"
    name = t.p("NAME", "Maricel Dimaculangan Soriano")
    mail = t.p("EMAIL", "maricel.dsoriano@gmail.com")
    card = t.p("CARD", "4573 8820 1743 9662")
    addr = t.p("ADDRESS", "1420 Brickell Bay Dr, Apt 2907, Miami, FL 33131")
    ssn = t.p("SSN", "261-47-9830")
    experto = t.p("NAME", "Íñigo Zubiaurre")
    sr = t.p("NAME", "Zubiaurre")
    lote = t.d("Lote 47: Bodegón con membrillos (escuela sevillana)")
    pintor = t.d("Francisco de Zurbarán")
    remate = t.d("remate 4.800 €")
    hilo = (
        f"De: {name} <{mail}>\nPara: {experto} <pujas@subastasduran-ejemplo.es>\nAsunto: RE: {lote}\n\n"
        f"Estimado Sr. {sr}: confirmo la adjudicación ({remate}). Paguen con mi Visa {card} y "
        f"envíen el cuadro a {addr}. Para el formulario fiscal de EE. UU., mi SSN es {ssn}.\n\n"
        f"El 30 nov 2026, a las 10:12, {experto} escribió:\n> Enhorabuena, su puja por el {lote} "
        f"> ha resultado ganadora con un {remate}.\n> Obra atribuida al taller de {pintor}.\n"
    )
    t.tool("correo.leer_hilo", {"hilo": "th-55102"}, {"mensajes": [hilo]})
    t.user("¿Qué pide la compradora del lote 47?")
    t.reply(
        "Pide el cargo en su tarjeta y el envío a Miami; también manda un dato fiscal que no deberíamos guardar por correo."
    )


def t_es_node_stacktrace(t: Trace) -> None:
    """es: pasarela de pago en Node.js, traza con variables locales."""
    t.service = "tienda-pagos"
    clave = t.p("SECRET", "Hq3Xv8Lm2Pz7Nw4Rt9Ks6Bd1Fy5Gc0Jh")
    card = t.p("CARD", "4548812044973351")
    name = t.p("NAME", "Xosé Manoel Fandiño")
    mail = t.p("EMAIL", "xmfandino@correo.gal")
    tel = t.p("PHONE", "+34 699 41 27 83")
    ip = t.p("IP", "83.45.201.17")
    cookie = t.p(
        "SECRET", "s%3AqR7vLk2Zp9Wm4Tx8Nc1Bf6Hy3Jd5Gs0.Kq2Lw8Pz3Xv7Mn1Rt4Yb6Fc9Hd0Js5Ng2Ve8Ua7"
    )
    merchant = t.d("999008881")
    pedido = t.d("pedido 2026TPV004417")
    node = t.d("node v20.18.1")
    traza = (
        "TypeError: Cannot read properties of undefined (reading 'Ds_Signature')\n"
        "    at firmarPeticion (/app/src/redsys.js:88:31)\n    at async pagar (/app/src/checkout.js:142:5)\n"
        "Variables locales (pagar):\n"
        f"  cliente = {{ nombre: '{name}', email: '{mail}', bizum: '{tel}', ip: '{ip}' }}\n"
        f"  tarjeta = '{card}'\n  merchantCode = '{merchant}'\n  order = '{pedido}'\n"
        f"  REDSYS_SECRET_KEY = '{clave}'\n"
        f"  req.headers.cookie = 'connect.sid={cookie}; lang=es'\n"
        f"  process.version = '{node}'\n"
    )
    t.error = "TypeError: Cannot read properties of undefined"
    t.tool(
        "registros.buscar",
        {"servicio": "checkout", "nivel": "error"},
        {"entradas": [traza]},
        style="oi",
    )
    t.user(f"¿Por qué falló el {pedido}?")
    t.reply("La respuesta de la pasarela llega sin firma; falta la comprobación antes de leerla.")


def t_es_padel_csv(t: Trace) -> None:
    """es: club de pádel, CSV con nombre y apellidos en columnas separadas."""
    t.service = "club-padel"
    rows = [
        (
            t.p("NAME", "Covadonga"),
            t.p("NAME", "Menéndez Argüelles"),
            t.p("DOB", "17/08/1994"),
            t.p("EMAIL", "cova.menendez@hotmail.es"),
        ),
        (
            t.p("NAME", "Jhon Fredy"),
            t.p("NAME", "Mosquera Palacios"),
            t.p("DOB", "02/01/1988"),
            t.p("EMAIL", "jfmosquera88@gmail.com"),
        ),
        (
            t.p("NAME", "Leire"),
            t.p("NAME", "Goikoetxea Uribe"),
            t.p("DOB", "30/11/2001"),
            t.p("EMAIL", "leiregoiko@outlook.es"),
        ),
    ]
    pista = t.d("Pista 3 World Padel Tour")
    torneo = t.d("Torneo Navidad 2026")
    csv = "nombre,apellidos,fecha_nac,email\n" + "".join(
        f"{n},{a},{d},{e}\n" for n, a, d, e in rows
    )
    bearer = t.p(
        "SECRET",
        jwt(
            {
                "sub": "usr_88213",
                "email": "gestion@clubpadel-norte.es",
                "role": "admin",
                "exp": 1798761600,
            },
            "p3Yc8Qw1Lm9Tz4Rk7Xv2Nb6Hs0Fd5Ja",
        ),
    )
    t.tool(
        "hoja.leer",
        {"hoja": "inscritos", "headers": {"Authorization": f"Bearer {bearer}"}},
        {"csv": csv, "pista_final": pista, "evento": torneo},
    )
    t.user(f"¿Quién juega en categoría sub-25 en el {torneo}?")
    t.reply("Una jugadora entra en sub-25; los otros dos van a absoluta.")


def t_es_itv_html(t: Trace) -> None:
    """es: cita de ITV, confirmación en HTML con entidades."""
    t.service = "citas-itv"
    raw = "Begoña Ruiz-Tagle Ibáñez"
    name = t.p("NAME", raw, parts=both("NAME", raw, ent))
    dni_ = t.p("NATIONAL_ID", "52918374C")
    mail = t.p("EMAIL", "bego.ruiztagle@yahoo.es")
    cita = t.d("15/01/2027 09:40")
    estacion = t.d("Estación ITV Alcobendas")
    localizador = t.d("ITV-MD-7731902")
    html_ = (
        f"<table><tr><th>Titular</th><td>{ent(name)}</td></tr><tr><th>DNI</th><td>{dni_}</td></tr>"
        f"<tr><th>Correo</th><td>{mail}</td></tr><tr><th>Cita</th><td>{cita}</td></tr>"
        f"<tr><th>Estaci&oacute;n</th><td>{ent(estacion)}</td></tr><tr><th>Localizador</th><td>{localizador}</td></tr></table>"
        f'<form method="post"><input type="hidden" name="JSESSIONID" value="{t.p("SECRET", "9C4E2A7F1B8D3E6A0F5C2B9D4E7A1F3C")}"></form>'
    )
    t.tool("itv.confirmacion", {"localizador": localizador}, html_)
    t.user("¿Cuándo tengo la ITV?")
    t.reply(f"El {cita} en la {estacion}; lleva el {localizador}.")


# ---------------------------------------------------------------- other languages


def t_sk_cukraren(t: Trace) -> None:
    """sk: cukráreň, objednávka svadobnej torty."""
    t.service = "cukraren-objednavky"
    name = t.p("NAME", "Zuzana Kováčiková")
    nar = t.p("DOB", "17. februára 1985")
    rc_ = t.p("NATIONAL_ID", "855217/3410")
    addr = t.p("ADDRESS", "Hlavná 112/7, 040 01 Košice")
    tel = t.p("PHONE", "0905 318 447")
    ib = t.p("IBAN", iban("SK", "0900 0000 0051 2938 4471", spaced=True))
    card = t.p("CARD", "4213 6608 1425 0979")
    heslo = t.p("SECRET", "Marcipan.Ruza77")
    torta = t.d("Dobošova torta")
    t2 = t.d("torta Sacher")
    svadba = t.d("sobota 19. júna 2027")
    t.user(
        f"Dobrý deň, objednávam {torta} a {t2} na svadbu ({svadba}). Objednávateľka: {name}, nar. {nar}, "
        f"r. č. {rc_}, {addr}, tel. {tel}. Zálohu zaplatím kartou {card}, preplatok vráťte na {ib}. "
        f"Heslo do môjho účtu v e-shope je {heslo}."
    )
    t.tool(
        "objednavky.vytvor", {"produkty": [torta, t2], "datum": svadba}, {"cislo": "OBJ-2026-0417"}
    )
    t.reply("Objednávka OBJ-2026-0417 prijatá. Heslo nám prosím nikdy neposielajte.")


def t_gl_marisqueo(t: Trace) -> None:
    """gl: confraría, permiso de marisqueo a pé."""
    t.service = "confraria-permisos"
    name = t.p("NAME", "Xiana Lodeiro Outeiral")
    dni_ = t.p("NATIONAL_ID", "76204519E")
    nac = t.p("DOB", "23/05/1974")
    addr = t.p("ADDRESS", "Rúa do Cruceiro 4, baixo, 15960 Ribeira")
    tel = t.p("PHONE", "981 87 43 12")
    ib = t.p("IBAN", iban("ES", "0182 6104 11 0201583366"))
    zona = t.d("zona II-07 Praia de Coroso")
    confraria = t.d("Confraría de Pescadores San Bartolomé")
    texto = (
        f"Solicitude de permiso de marisqueo a pé. Nome: {name}. DNI: {dni_}. Data de nacemento: {nac}. "
        f"Enderezo: {addr}. Teléfono: {tel}. Conta para a cota: {ib}. Zona: {zona}."
    )
    t.tool("rexistro.solicitude", {"entidade": confraria}, {"texto": texto, "estado": "pendente"})
    t.user("Revisa a solicitude da mariscadora e dime se falta algo.")
    t.reply(f"Está completa; falta só o visto da {confraria} para a {zona}.")


def t_hr_rentacar(t: Trace) -> None:
    """hr: najam automobila, rezervacija s OIB-om."""
    t.service = "rentacar-split"
    name = t.p("NAME", "Ivana Perišić-Kralj")
    oib_ = t.p("NATIONAL_ID", "84061739250")
    rod = t.p("DOB", "9. listopada 1992.", parts=["9. listopada 1992.", "9. listopada 1992"])
    addr = t.p("ADDRESS", "Ulica Domovinskog rata 41, 21000 Split")
    tel = t.p("PHONE", "+385 91 447 2108")
    card = t.p("CARD", "2223 0063 1078 9452")
    mail = t.p("EMAIL", "ivana.pk@net.hr")
    auto = t.d("Škoda Octavia Combi 2.0 TDI")
    rez = t.d("RZ-2026-15530")
    t.user(
        f"Pozdrav, ja sam {name}, rođena {rod}, OIB {oib_}. Trebam {auto} od 2. do 9. siječnja. "
        f"Adresa: {addr}. Mob: {tel}, mail {mail}. Platit ću karticom {card}."
    )
    t.tool(
        "rezervacije.nova",
        {"vozilo": auto, "oib": oib_},
        {
            "rezervacija": rez,
            "polog": t.d("300 EUR"),
            "preuzimanje": t.d("Zračna luka Split, šalter 4"),
        },
    )
    t.reply(f"Rezervacija {rez} potvrđena za {auto}.")


WRITERS = [f for n, f in list(globals().items()) if n.startswith("t_")]
