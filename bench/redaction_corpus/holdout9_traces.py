"""holdout9: the ninth independent redaction corpus (issue 20), written blind.

Hand-written in one sitting by the helper of worktree ``corpus9`` on 3 December
2026, before any detector or redaction code ran on it (see README.md,
``### holdout9``). Every personal or secret value goes through ``t.p(TYPE,
value)``; every look-alike that must survive goes through ``t.d(value)``, with
a comment saying why a careful reviewer would call it not personal.

National ids, IBANs and cards carry valid check characters (computed and
checked with python-stdnum outside the repository); every person, street,
company and key below is invented.
"""

from __future__ import annotations

import json
from typing import Any

from _kit import Trace, b64, iban, luhn, urlenc  # noqa: F401


def _oi_llm(
    t: Trace, messages: list[tuple[str, str]], output: str, model: str = "mistral-large-2411"
) -> None:
    """An OpenInference LLM span: flattened ``llm.input_messages`` / ``llm.output_messages``."""
    attrs: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": model}
    for i, (role, content) in enumerate(messages):
        attrs[f"llm.input_messages.{i}.message.role"] = role
        attrs[f"llm.input_messages.{i}.message.content"] = content
    attrs["llm.output_messages.0.message.role"] = "assistant"
    attrs["llm.output_messages.0.message.content"] = output
    attrs["input.value"] = json.dumps(
        {"messages": [{"role": r, "content": c} for r, c in messages]}, ensure_ascii=False
    )
    attrs["input.mime_type"] = "application/json"
    t._span("ChatCompletion", attrs)


def _oi_tool(t: Trace, name: str, params: dict[str, Any], result: str) -> None:
    """An OpenInference tool span that records ``tool.parameters`` and ``output.value``."""
    t._span(
        name,
        {
            "openinference.span.kind": "TOOL",
            "tool.name": name,
            "tool.parameters": json.dumps(params, ensure_ascii=False),
            "input.value": json.dumps(params, ensure_ascii=False),
            "output.value": result,
        },
    )


def _legacy(t: Trace, prompt: str, completion: str, model: str = "command-r-plus") -> None:
    """The older flat GenAI attributes (``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``)."""
    t._span(
        f"chat {model}",
        {
            "gen_ai.system": "cohere",
            "gen_ai.request.model": model,
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": prompt,
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": completion,
        },
    )


# ----------------------------------------------------------------------------- English


def t_lockup_graphql_renewal(t: Trace) -> None:
    """en: a self-storage lease renewed through a GraphQL mutation, then paraphrased."""
    t.service = "lockup-desk"
    unit = t.d("Bay C-114")  # a storage unit's label: a place in a building
    inv = t.d("INV-2026-118204")  # the facility's invoice number
    renew = t.d("2027-01-31")  # the lease's new end date, not a birthday
    name = t.p("NAME", "Wanjiru Kamau-Otieno")
    dob = t.p("DOB", "1986-08-23")
    line1 = t.p("ADDRESS", "2218 E. 29th Ave")
    phone = t.p("PHONE", "(509) 747-2913")
    card = t.p("CARD", luhn("4532 9104 7718 230"))
    t.user(f"Renew {unit} for another year, same tenant as last time. Card on file is fine.")
    query = (
        "mutation RenewLease($input: LeaseRenewalInput!) {\n  renewLease(input: $input) {\n"
        "    lease { id unit endsOn tenant { fullName dateOfBirth phone mailingAddress { line1 line2 locality } } }\n"
        "    invoice { number total }\n  }\n}"
    )
    variables = {
        "input": {"unit": unit, "endsOn": renew, "paymentMethod": {"pan": card, "exp": "09/28"}}
    }
    t.tool(
        "graphql.storefront",
        {"query": query, "variables": variables},
        {
            "data": {
                "renewLease": {
                    "lease": {
                        "id": "TGVhc2U6OTkxMg==",
                        "unit": unit,
                        "endsOn": renew,
                        "tenant": {
                            "fullName": name,
                            "dateOfBirth": dob,
                            "phone": phone,
                            "mailingAddress": {
                                "line1": line1,
                                "line2": "Apt 6",
                                "locality": "Spokane, WA 99203",
                            },
                        },
                    },
                    "invoice": {"number": inv, "total": "1,164.00"},
                }
            }
        },
    )
    ms = t.p("NAME", "Ms Kamau-Otieno")
    born = t.p("DOB", "23 August 1986")
    t.reply(
        f"Done: {unit} is renewed until {renew} (invoice {inv}). I checked it is the same tenant, {ms}, "
        f"born {born}, still at {line1} in Spokane; the receipt text goes to {phone}."
    )


def t_narrowboat_mooring_soap(t: Trace) -> None:
    """en: a canal mooring permit checked over a SOAP service."""
    t.service = "waterways-permits"
    boat = t.d("Kingfisher Dawn")  # the boat's painted name: a vessel, not a person
    lock = t.d("Hatton Flight lock 21")  # a lock on the canal: a place
    index = t.d("CRT-517733")  # the boat's licence index number
    name = t.p("NAME", "Sinead Okonjo-Price")
    email = t.p("EMAIL", "sokonjoprice@fastmail.co.uk")
    po = t.p("ADDRESS", "PO Box 7716, Stoke-on-Trent ST4 9WA")
    dob = t.p("DOB", "1971-12-04")
    nhs = t.p("NATIONAL_ID", "485 777 3023")
    envelope = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:m="urn:moorings:v3">\n'
        " <soap:Body>\n  <m:CheckPermitResponse>\n"
        f'   <m:Vessel name="{boat}" index="{index}"/>\n'
        f"   <m:Holder><m:Name>{name}</m:Name><m:BirthDate>{dob}</m:BirthDate>"
        f"<m:Contact>{email}</m:Contact>\n    <m:Postal>{po}</m:Postal>\n"
        f"    <m:MedicalExemptionRef>{nhs}</m:MedicalExemptionRef></m:Holder>\n"
        f"   <m:Berth>{lock}, winter mooring</m:Berth>\n  </m:CheckPermitResponse>\n </soap:Body>\n</soap:Envelope>"
    )
    t.tool(
        "Moorings.CheckPermit",
        f"<m:CheckPermit><m:Index>{index}</m:Index></m:CheckPermit>",
        envelope,
        style="oi",
    )
    t.reply(
        f"{boat} ({index}) has a valid winter permit at {lock}. Post for the holder goes to the PO box "
        f"on file, not to the boat."
    )


def t_tree_surgeon_markdown_mail(t: Trace) -> None:
    """en: a tree surgeon's quote sent as a Markdown e-mail."""
    t.service = "quote-writer"
    oak = t.d("Quercus robur")  # the species being pruned
    tpo = t.d("TPO/2019/0443")  # a tree preservation order reference (public planning record)
    quote = t.d("Q-88127")  # quote number
    visit = t.d("Tuesday 12 January 2027")  # the booked visit, not a birthday
    name = t.p("NAME", "Dilrukshi Wickramasinghe")
    first = t.p("NAME", "Dilrukshi")
    addr = t.p("ADDRESS", "The Old Forge, Church Lane, Little Wenham, Suffolk IP7 6QB")
    phone = t.p("PHONE", "07834 611 290")
    sig = t.p("NAME", "Callum Fairweather-Ross")
    mob = t.p("PHONE", "+44 7700 183 442")
    t.user(f"Write up the quote for the crown reduction at {name}'s place and send it.")
    md = (
        f"**To:** {name} <dwickrama@btinternet.com>\n**Subject:** Quote {quote}: crown reduction\n\n"
        f"Hi {first},\n\nThanks for showing me round on Friday. Here is the quote for the work at\n\n"
        f"> {addr}\n\n"
        "| item | price |\n|---|---|\n"
        f"| 30% crown reduction, mature *{oak}* | £1,450 |\n| chipping and removal | £220 |\n\n"
        f"The oak is covered by **{tpo}**, so I'll apply for consent first. Pencilled in for {visit}.\n"
        f"If the gate is locked I'll ring {phone}.\n\n"
        f"Cheers,\n{sig}\nArborist, NPTC CS30/31 · mob {mob}"
    )
    t.p("EMAIL", "dwickrama@btinternet.com")
    t.tool(
        "mail.compose_markdown",
        {"to": "dwickrama@btinternet.com", "body_md": md},
        {"queued": True, "id": "msg_7f1c"},
    )
    t.reply(
        f"Sent quote {quote} to {first}; the visit is pencilled in for {visit}, subject to TPO consent."
    )


def t_cemetery_plot_ocr(t: Trace) -> None:
    """en: OCR of a typed cemetery plot application with broken line wraps."""
    t.service = "records-ocr"
    section = t.d("Section K, Row 14")  # a grave plot location in the cemetery
    fee = t.d("£2,175.00")  # the purchase fee
    ref = t.d("BUR/26/00917")  # the council's application reference
    name = t.p("NAME", "Eulalie Broussard-Nkemelu")
    addr = t.p(
        "ADDRESS",
        "41 Ravens-\nwood Crescent, Penarth CF64 3JQ",
        [
            "41 Ravens-\nwood Crescent, Penarth CF64 3JQ",
            "41 Ravens-\nwood Crescent",
            "Ravenswood Crescent",
        ],
    )
    dob = t.p("DOB", "14th Febru-\nary 1948", ["14th Febru-\nary 1948", "14th February 1948"])
    deceased = t.p("NAME", "Augustin Broussard")
    dod = t.d("3 November 2026")  # the date of death, not a birth date
    witness = t.p("NAME", "Gareth Mwangi")
    text = (
        "CITY AND COUNTY OF CARDIFF - BEREAVEMENT SERVICES\nAPPLICATION FOR EXCLUSIVE RIGHT OF BURIAL\n"
        f"Ref: {ref}\n\nI, {name}, of {addr}, (date of birth\n{dob}) apply for the exclusive right of burial in\n"
        f"plot {section} for the interment of my late hus-\nband {deceased}, who died on {dod}.\n"
        f"Fee enclosed: {fee}\n\nSigned ..........................  Witnessed by: {witness} (neighbour)\n"
    )
    t.tool(
        "ocr.extract_text",
        {"file": "scan_0041.tiff", "dpi": 300},
        {"text": text, "confidence": 0.87},
        style="spanname",
    )
    t.reply(
        f"Application {ref} is legible; plot {section}, fee {fee} enclosed. Ready for the registrar."
    )


def t_wheelchair_repair_transcript(t: Trace) -> None:
    """en: a speech-to-text call transcript for a powered wheelchair repair."""
    t.service = "mobility-dispatch"
    model = t.d("Quantum Edge 3")  # the wheelchair model
    part = t.d("motor controller MC-2201")  # a part number
    job = t.d("job 55-0912")  # the repair job number
    name = t.p("NAME", "hodan warsame")
    addr = t.p(
        "ADDRESS",
        "flat nine forty two Ashgrove Road",
        ["flat nine forty two Ashgrove Road", "forty two Ashgrove Road"],
    )
    addr2 = t.p(
        "ADDRESS",
        "4B, 42 Ashgrove Road, Bristol BS7 9LG",
        ["4B, 42 Ashgrove Road, Bristol BS7 9LG", "42 Ashgrove Road"],
    )
    dob = t.p("DOB", "the nineteenth of may nineteen eighty eight")
    phone = t.p("PHONE", "oh seven nine four six two two one three eight oh five")
    phone2 = t.p("PHONE", "07946 221380")
    transcript = (
        "[00:00:02] agent: mobility repairs desk how can I help\n"
        f"[00:00:05] caller: hi yeah my chair the {model} it just stops dead on slopes\n"
        "[00:00:11] agent: okay can I take your name and date of birth\n"
        f"[00:00:14] caller: {name} h o d a n and its {dob}\n"
        f"[00:00:22] caller: address is {addr} bristol\n"
        f"[00:00:31] caller: best number {phone}\n"
        f"[00:00:40] agent: lovely sounds like the {part} I'll book an engineer\n"
    )
    t.tool(
        "stt.transcribe",
        {"audio": "call-20261203-0915.wav", "diarize": True},
        {"transcript": transcript},
    )
    t.tool(
        "dispatch.create_job",
        {"client": name, "address": addr2, "phone": phone2, "fault": f"{part} suspected"},
        {"job": job, "eta": "Friday AM"},
    )
    t.reply(f"Booked {job}: engineer Friday morning for the {model}, {part} suspected.")


def t_pawnbroker_sql_insert(t: Trace) -> None:
    """en: a pawnbroker's loan written as SQL INSERT statements by a code tool."""
    t.service = "pledge-ledger"
    item = t.d("Rolex Datejust 16233")  # the pledged watch model
    ticket = t.d("PT-0044817")  # the pawn ticket number
    due = t.d("2027-03-02")  # the redemption due date
    sku = t.d("ASSAY-9K-1188")  # the assay batch for a gold chain
    n1 = t.p("NAME", "Ruairí Delacroix-Mbeki")
    n2 = t.p("NAME", "Pa Nhia Vang")
    a1 = t.p("ADDRESS", "17 Hollis St Apt 3F")
    a2 = t.p("ADDRESS", "RR 3 Box 218, Eau Claire, WI 54701")
    d1 = t.p("DOB", "04/17/1969")
    d2 = t.p("DOB", "11/30/1995")
    ssn = t.p("SSN", "402-71-8836")
    lic = t.p("NATIONAL_ID", "527 183 495")
    sql = (
        "INSERT INTO pledgors (full_name, street, dob, id_type, id_number) VALUES\n"
        f"  ('{n1}', '{a1}', '{d1}', 'SSN', '{ssn}'),\n"
        f"  ('{n2}', '{a2}', '{d2}', 'SIN', '{lic}');\n"
        f"INSERT INTO pledges (ticket, item, assay, due) VALUES ('{ticket}', '{item}', '{sku}', '{due}');"
    )
    t.tool("db.exec_sql", {"dialect": "postgres", "sql": sql}, {"rows": 3})
    t.reply(f"Recorded ticket {ticket} ({item}), due {due}; two pledgors on the loan.")


def t_homeschool_protobuf_json(t: Trace) -> None:
    """en: a home-education registration sent as protobuf-JSON over gRPC."""
    t.service = "elective-home-ed"
    curr = t.d(
        "Charlotte Mason curriculum"
    )  # a teaching method named after its founder, not a party here
    form = t.d("EHE-7")  # the form code
    sess = t.d("2026/27")  # the school year
    child = t.p("NAME", "Keoni Kahananui")
    parent = t.p("NAME", "Malia Kahananui-Brooks")
    dob = t.p("DOB", "2015-06-09")
    addr = t.p(
        "ADDRESS",
        "Unit 4, 88 Ferncliffe Road, Harrogate HG2 0JH",
        ["Unit 4, 88 Ferncliffe Road, Harrogate HG2 0JH", "88 Ferncliffe Road"],
    )
    email = t.p("EMAIL", "malia.kb@proton.me")
    msg = {
        "@type": "type.googleapis.com/ehe.v1.RegisterChildRequest",
        "child": {
            "givenName": "Keoni",
            "familyName": "Kahananui",
            "birthDate": {"year": 2015, "month": 6, "day": 9},
            "displayName": child,
            "birthDateIso": dob,
        },
        "guardian": {"name": parent, "email": email, "homeAddress": {"addressLines": [addr]}},
        "formCode": form,
        "schoolYear": sess,
        "approach": curr,
    }
    t.p("NAME", "Keoni")
    t.p("NAME", "Kahananui")
    t.tool(
        "ehe.v1.Registry/RegisterChild",
        json.dumps(msg),
        {"status": "ACCEPTED", "caseId": "EHE-5521-K"},
        style="oi",
    )
    t.reply(
        f"Registered for {sess} ({form}); the council will write to the guardian's home address."
    )


def t_archery_club_toml_shell(t: Trace) -> None:
    """en: an archery club's scoring app deploy: TOML config and shell history."""
    t.service = "club-ops"
    bow = t.d("Hoyt Xceed")  # a bow riser model
    rnd = t.d("Portsmouth round")  # an archery round's name
    ver = t.d("v3.14.2-rc.1")  # the app version
    commit = t.d("9e1f4c07a2b35d8e6f1190ab3cd4e5f67a8b9c0d")  # a git commit hash
    db_pw = t.p("SECRET", "Quiver!Oak-2291")
    fly = t.p("SECRET", "fo1_Oe6Hrecn75Ii5B54qPiTM6HtEBcfnpwnBMBja9i_MZ7")
    posthog = t.p("SECRET", "phx_hvmyo5keSvrLUAZLLYQ8W1SOwgUk7G6nvMXyJmPXCbp")
    admin = t.p("EMAIL", "tamsin.o@targetline.club")
    toml = (
        f'[app]\nname = "scorecard"\nversion = "{ver}"\ndefault_round = "{rnd}"\n\n'
        f'[database]\nurl = "postgresql://scorecard:{db_pw}@db.internal:5432/scores"\n\n'
        f'[analytics]\nposthog_personal_key = "{posthog}"\n\n[club]\nsecretary = "{admin}"\n'
    )
    history = (
        f"  501  git checkout {commit}\n  502  flyctl auth token\n"
        f"  503  export FLY_API_TOKEN={fly}\n  504  flyctl deploy --build-arg BOW_DEFAULT='{bow}'\n"
        "  505  history | tail\n"
    )
    t.tool("fs.read", {"path": "config/production.toml"}, toml, style="spanname")
    t.tool("shell.history", {"lines": 5}, history, style="spanname")
    t.reply(
        f"Deployed {ver} ({commit[:9]}). The config and history hold live credentials; rotate them."
    )


def t_celery_django_logs(t: Trace) -> None:
    """en: log lines of several frameworks pasted into an incident triage."""
    t.service = "incident-triage"
    task = t.d("billing.tasks.reconcile_ledgers")  # a Celery task path
    trace = t.d("4bf92f3577b34da6a3ce929d0e0e4736")  # a W3C trace id
    uuid = t.d("0b6e4a5c-1f2d-4c8e-9a7b-3d5f6e7a8b9c")  # a job UUID
    build = t.d("build 2026.12.03.7")  # CI build number
    ip1 = t.p("IP", "198.51.100.77")
    ip2 = t.p("IP", "2001:db8:4f1c:22::7a")
    email = t.p("EMAIL", "r.achterberg@lumenfold.io")
    sess = t.p("SECRET", "j5qb88ymh58bemfhoba0s03rlx")
    rollbar = t.p("SECRET", "9c85980d80f1f02aaa9bb661a7754525")
    django_key = t.p("SECRET", "vDl%@w5N)eOvKgC9p5B#x9QJnjFq)HNGJs9Nsy0JYfjVMLqs+5")
    logs = (
        f"[2026-12-03 09:14:07,112: ERROR/ForkPoolWorker-3] Task {task}[{uuid}] raised unexpected: "
        "IntegrityError('duplicate key')\n"
        f'{ip1} - - [03/Dec/2026:09:14:08 +0000] "POST /api/invoices HTTP/1.1" 500 312 "-" "python-requests/2.32"\n'
        f"2026-12-03T09:14:08.441Z WARN  [django.request] Internal Server Error: /api/invoices user={email} "
        f"remote_addr={ip2} trace_id={trace}\n"
        f"2026-12-03T09:14:09Z DEBUG settings loaded SECRET_KEY='{django_key}' DEBUG=False\n"
        f'level=info msg="session restored" cookie=PHPSESSID={sess} legacy=true\n'
        f"rollbar: reporting with access_token={rollbar} env=production {build}\n"
    )
    t.tool("logs.search", {"query": "status:500 service:billing", "since": "1h"}, {"lines": logs})
    t.reply(
        f"The 500s come from {task} hitting a duplicate key ({build}). The settings dump leaks keys: rotate them."
    )


def t_kiln_service_tool_loop(t: Trace) -> None:
    """en: a multi-turn tool loop: a kiln service customer found by lookup, then paraphrased."""
    t.service = "kiln-care"
    kiln = t.d("Skutt KM-1027")  # the kiln model
    cone = t.d("cone 6")  # a firing temperature grade
    wo = t.d("WO-31177")  # the work order number
    name = t.p("NAME", "Gurpreet Kaur Sandhu")
    short = t.p("NAME", "Ms Sandhu")
    addr = t.p(
        "ADDRESS",
        "Studio 2, Canal Works, 9 Lock Street, Macclesfield SK11 6DR",
        [
            "Studio 2, Canal Works, 9 Lock Street, Macclesfield SK11 6DR",
            "9 Lock Street",
            "Canal Works",
        ],
    )
    addr_para = t.p("ADDRESS", "the studio at Canal Works on Lock Street")
    phone = t.p("PHONE", "01625 438 917")
    phone_para = t.p("PHONE", "01625-438917")
    t.user(f"The customer with the {kiln} that won't reach {cone}, find her and book a visit.")
    t.tool(
        "crm.lookup",
        {"q": kiln, "field": "equipment"},
        {"matches": [{"customer": name, "site": addr, "tel": phone, "since": "2021"}]},
    )
    t.tool(
        "crm.lookup",
        {"q": name, "field": "history"},
        {"jobs": [{"wo": "WO-29004", "note": "element replaced"}]},
    )
    t.tool("calendar.book", {"wo": wo, "site": addr, "slot": "2026-12-09T10:00"}, {"ok": True})
    t.reply(
        f"Found her: {short} at {addr_para}. I booked {wo} for 9 December, 10:00; the engineer will call "
        f"{phone_para} on the way. Last time (WO-29004) an element was replaced."
    )
    t.d("WO-29004")  # an older work order number


def t_clinical_trial_json_in_json(t: Trace) -> None:
    """en: clinical-trial pre-screening: a candidate record as JSON inside JSON strings."""
    t.service = "trial-prescreen"
    nct = t.d("NCT05839211")  # a public trial registry number
    drug = t.d("tirzepatide 5 mg")  # the study drug and dose
    visit = t.d("2027-02-15")  # screening visit date
    name = t.p("NAME", "Anjali Menon-Thekkekara")
    dob = t.p("DOB", "1979-03-28")
    age = t.p("DOB", "47 (born 1979)", ["47 (born 1979)"])
    addr = t.p("ADDRESS", "3902 Lindell Blvd, Apt 1204, St. Louis, MO 63108")
    phone = t.p("PHONE", "314-555-0162")
    email = t.p("EMAIL", "anjali.mt@outlook.com")
    ssn = t.p("SSN", "531-62-4097")
    inner = json.dumps(
        {
            "candidate": {
                "name": name,
                "dob": dob,
                "contact": {"addr": addr, "tel": phone, "email": email},
                "ssn_last4_verified": ssn,
            }
        },
        ensure_ascii=False,
    )
    middle = json.dumps({"source": "ehr-bridge", "payload": inner})
    t.tool("prescreen.fetch", {"study": nct}, {"record": middle, "format": "json-in-json"})
    t.reply(
        f"Candidate for {nct} ({drug}): age {age}, eligible for the screening visit on {visit}."
    )


def t_interpreter_booking_openinference(t: Trace) -> None:
    """en: a sign-language interpreter booking with OpenInference LLM and tool spans."""
    t.service = "bsl-bookings"
    venue = t.d("Royal Exchange Theatre")  # a public venue
    show = t.d("Hedda Gabler")  # a play's title character
    bk = t.d("BK-7Q2M9")  # booking reference
    client = t.p("NAME", "Tendai Mupfumira")
    interp = t.p("NAME", "Oona Strandquist")
    email = t.p("EMAIL", "tendai.m@deafconnect.org.uk")
    dob = t.p("DOB", "2nd of January 1993")
    pw = t.p("SECRET", "Ndebele#Lark77")
    t.root["flywheel.env.s0_ref"] = f"access-scheme/{email}"
    _oi_llm(
        t,
        [
            ("system", "You book interpreters for theatre access."),
            (
                "user",
                f"I'm {client}, born the {dob} if you need it for the concession. I'd like an interpreter "
                f"for {show} at the {venue}. My login for the access scheme is {email}, password {pw}.",
            ),
        ],
        f"I'll check which interpreters are free for {show}.",
    )
    _oi_tool(
        t,
        "find_interpreter",
        {"venue": venue, "show": show, "client_email": email},
        json.dumps({"available": [{"name": interp, "level": "theatre-qualified"}], "booking": bk}),
    )
    t.reply(
        f"{interp} will interpret {show} at the {venue}; booking {bk}. Please change that password, it was sent in chat."
    )


def t_utilities_switch_urls(t: Trace) -> None:
    """en: a home-move utilities switch: values in URL paths, fragments and headers."""
    t.service = "movehub-agent"
    tariff = t.d("Octopus Tracker")  # an energy tariff's product name
    pkg = t.d("Fibre 500")  # a broadband package name
    ref = t.d("MH-44Z81")  # the move case reference
    move = t.d("18/12/2026")  # the move date
    email = t.p("EMAIL", "chidera.obi-hartley@gmail.com")
    name = t.p("NAME", "Chidera Obi-Hartley")
    old = t.p(
        "ADDRESS",
        "Flat 12, Marlowe House, 3 Quay Side, Newcastle NE1 3DX",
        ["Flat 12, Marlowe House, 3 Quay Side, Newcastle NE1 3DX", "3 Quay Side", "Marlowe House"],
    )
    new = t.p("ADDRESS", "27 Brough Park Way, Byker, NE6 2YF")
    new_enc = t.p(
        "ADDRESS",
        urlenc(new).replace("%20", "+").replace("%2C", ","),
        ["27+Brough+Park+Way", urlenc(new).replace("%20", "+").replace("%2C", ",")],
    )
    bearer = "Bearer " + t.p("SECRET", "rnd_QzI2hJFkg0ZHGS6RsV67pPgo3rgx")
    here = t.p("SECRET", "pg5HMaFEPRkTpu2K_j4QrcN44xZ-Fi-cTcLAX7ZBCg-")
    t.user(f"I'm moving on {move}, sort the energy and broadband. I'm {name}.")
    url1 = (
        f"https://api.movehub.example/v2/customers/{urlenc(email)}/moves/{ref}#from={urlenc(old)}"
    )
    t.tool(
        "http.get",
        {"url": url1, "headers": {"Authorization": bearer, "Accept": "application/json"}},
        {"status": 200, "tariff": tariff, "broadband": pkg},
    )
    url2 = f"https://geocode.search.hereapi.com/v1/geocode?q={new_enc}&apiKey={here}"
    t.tool(
        "http.get",
        {"url": url2},
        {"items": [{"resultType": "houseNumber", "position": {"lat": 54.98, "lng": -1.57}}]},
    )
    t.reply(
        f"Case {ref}: supply at the new place moves to {tariff} from {move}; broadband on {pkg}."
    )


def t_roof_claim_js_code(t: Trace) -> None:
    """en-AU: a storm-damage roof claim: a JS code string and legacy prompt attributes."""
    t.service = "claims-copilot"
    policy = t.d("HOM-AU-3318-0271")  # the policy number of the insurer's product line
    storm = t.d("2026-11-21")  # the storm date, not a birthday
    tile = t.d("Monier Horizon")  # a roof tile model
    name = t.p("NAME", "Bronwyn Tjakamarra")
    partner = t.p("NAME", "Lachlan Szabo-Whitlam")
    addr = t.p("ADDRESS", "RMB 2240 Kangaroo Valley Rd, Berry NSW 2535")
    dob = t.p("DOB", "09/03/1975")
    mobile = t.p("PHONE", "0428 716 305")
    honeycomb = t.p("SECRET", "hcnEmSxhuovB6iUHSfDFT6")
    code = (
        "const claim = {\n"
        f"  policy: '{policy}',\n  insured: {{ name: '{name}', dob: '{dob}', mobile: '{mobile}' }},\n"
        f"  coInsured: '{partner}',\n  risk: `{addr}`,\n  loss: {{ date: '{storm}', cause: 'hail', roof: '{tile}' }},\n"
        "};\n"
        f"const hc = new Honeycomb({{ writeKey: '{honeycomb}', dataset: 'claims' }});\n"
        "await submitClaim(claim);"
    )
    t.tool("sandbox.run_js", {"source": code}, {"ok": True, "claimId": "CLM-99120"})
    t.d("CLM-99120")  # the claim id the sandbox returned
    _legacy(
        t,
        f"Summarise the claim for {name} at {addr}.",
        f"Hail damage on {storm} to {tile} tiles under {policy}; co-insured {partner}.",
    )
    t.reply(
        f"Claim lodged under {policy} for the {storm} hail; an assessor will phone the insured."
    )


def t_airflow_connections_ini(t: Trace) -> None:
    """en: a data team's Airflow connections: INI, CLI flags and a base64 config blob."""
    t.service = "dataplat-bot"
    dag = t.d("nightly_orders_rollup")  # a DAG id
    bucket = t.d("s3://lakehouse-prod-raw/orders/")  # a bucket path
    img = t.d("apache/airflow:2.10.3-python3.12")  # a container image tag
    b2key = t.p("SECRET", "K005W06kELpR7nvve/iV2WpoFhCTuVM")
    b2id = t.p("SECRET", "005b1b21efa4a93308cb09f64")
    ch_pw = t.p("SECRET", "tundra-Lamp-5519")
    sf_pw = t.p("SECRET", "Wx!9pe#Larkspur")
    wandb = t.p("SECRET", "629cb1904e9d98ceb8dc41c4ebd1ee9725cd9113")
    owner = t.p("EMAIL", "yusuf.demirci@northwind-analytics.com")
    ini = (
        "[connections]\n"
        f"b2_raw = b2://{b2id}:{b2key.replace('/', '%2F')}@lakehouse-prod-raw\n"
        f"clickhouse_default = clickhouse://etl:{ch_pw}@ch-prod-2:9000/default\n\n"
        f"[core]\ndags_owner = {owner}\n"
    )
    t.p("SECRET", b2key.replace("/", "%2F"), [b2key.replace("/", "%2F")])
    cfg = b64(
        json.dumps(
            {
                "snowflake": {
                    "account": "xy12345.eu-central-1",
                    "user": "LOADER",
                    "password": sf_pw,
                },
                "wandb_api_key": wandb,
            }
        )
    )
    cli = (
        f"airflow connections add snowflake_loader --conn-type snowflake --conn-login LOADER "
        f"--conn-password '{sf_pw}' --conn-extra '{{\"account\": \"xy12345\"}}'"
    )
    t.tool("repo.read_file", {"path": "deploy/airflow.cfg.d/connections.ini"}, ini)
    t.tool("k8s.get_secret", {"name": "airflow-extra", "key": "config.json"}, {"data": cfg})
    t.tool("shell.run", {"cmd": cli, "image": img}, {"exit": 0})
    t.reply(
        f"{dag} reads {bucket}; the connection strings and the secret blob carry plaintext credentials."
    )


def t_rural_grant_ca(t: Trace) -> None:
    """en-CA: a wildfire recovery grant with a rural route address, form fields split."""
    t.service = "recovery-grants"
    prog = t.d("Wildfire Recovery Assistance 2026")  # programme name
    file_no = t.d("WRA-BC-004117")  # the file number
    fire = t.d("K71104")  # the wildfire's public incident number
    name = t.p("NAME", "Darlene Whitecalf")
    spouse = t.p("NAME", "Mathieu Whitecalf")
    site = t.p("ADDRESS", "Site 14, Comp 9, RR 2")
    town = t.p("ADDRESS", "Lumby, BC V0E 2G0")
    legal = t.p("ADDRESS", "4410 Creighton Valley Rd")
    sin = t.p("NATIONAL_ID", "130-457-187")
    dob = t.p("DOB", "1964-10-02")
    dob2 = t.p("DOB", "Oct 2, 1964")
    phone = t.p("PHONE", "250-547-8810")
    iban_like = t.p("IBAN", iban("GB", "BARC20038741902655", spaced=True))
    t.tool(
        "forms.submit",
        {
            "form": "WRA-1",
            "fields": {
                "applicant_name": name,
                "spouse": spouse,
                "mailing_line1": site,
                "mailing_line2": town,
                "civic_address": legal,
                "sin": sin,
                "date_of_birth": dob,
                "phone": phone,
                "overseas_account_for_deposit": iban_like,
                "fire_number": fire,
            },
        },
        {"file": file_no},
    )
    t.reply(
        f"Submitted under {prog} as {file_no}. Ms Whitecalf (born {dob2}) gets mail at the rural route, "
        f"the damage was at the civic address."
    )
    t.p("NAME", "Ms Whitecalf")


def t_laptop_rebuild_helpdesk(t: Trace) -> None:
    """en: an IT helpdesk ticket for a laptop rebuild: recovery keys, a seed phrase, app passwords, a token in a URL fragment."""
    t.service = "it-helpdesk"
    model = t.d("Latitude 7450")  # the laptop model
    asset = t.d("IT-ASSET-00917")  # the company's asset tag
    build = t.d("10.0.26100.2314")  # the Windows build number
    emp = t.p("NAME", "Sayaka Morimoto-Adeyinka")
    first = t.p("NAME", "Sayaka")
    ship = t.p(
        "ADDRESS",
        "Apt 5C, 310 W 97th St, New York, NY 10025",
        ["Apt 5C, 310 W 97th St, New York, NY 10025", "310 W 97th St"],
    )
    dob = t.p("DOB", "March 3rd, '91")
    bitlocker = t.p("SECRET", "881201-146600-911925-901186-487213-888062-724857-482555")
    seed = t.p(
        "SECRET", "orbit velvet cabin lumber frost daring pilot enroll tunnel harvest actual quiz"
    )
    apple = t.p("SECRET", "qxvt-mwra-hzpe-lkfj")
    azdo = t.p("SECRET", "ige7a7vsw2wpadrmiqh4iilcwtfg5ljnv4wagrm2cbytkainfxhu")
    vercel = t.p("SECRET", "Gma3gCVZeQ8la5FmeSq3EPaa")
    card = t.p("CARD", luhn("6011 1928 3746 510"))
    card2 = t.p("CARD", luhn("2223 1044 8917 266"))
    body = (
        f"User {emp} ({asset}, {model}, build {build}) needs a rebuild. Identity check: DOB {dob} matches HR.\n"
        f"BitLocker recovery key from the escrow: {bitlocker}\n"
        f"She also pasted her hardware-wallet recovery words 'just in case': {seed}\n"
        f"iCloud app-specific password for the mail profile: {apple}\n"
        f"Azure DevOps PAT to re-clone: {azdo}\n"
        f"Deploy dashboard link she bookmarked: https://vercel.example/dashboard#access_token={vercel}&team=web\n"
        f"Personal card to pay for the expedited shipping: {card}; the corporate one {card2} was declined.\n"
        f"Ship the replacement to {ship}."
    )
    t.tool("tickets.get", {"id": "HD-20931"}, {"subject": "Laptop rebuild", "body": body})
    t.d("HD-20931")  # helpdesk ticket id
    t.reply(
        f"Rebuild scheduled for {asset}. {first}, please never paste recovery words or keys in a ticket: "
        f"I've asked security to rotate the PAT and the app password."
    )


# ----------------------------------------------------------------------------- German


def t_steinmetz_auftrag_ini(t: Trace) -> None:
    """de: ein Grabstein-Auftrag beim Steinmetz als INI-Export."""
    t.service = "steinmetz-auftraege"
    nr = t.d("ST-2026-0419")  # Auftragsnummer
    stein = t.d("Nero Impala")  # Granitsorte
    tod = t.d("03.10.2026")  # Sterbedatum auf dem Stein, kein Geburtsdatum
    kundin = t.p("NAME", "Renate Vogelsang-Adeyemi")
    verst = t.p("NAME", "Hans-Dieter Vogelsang")
    geb = t.p("DOB", "12.05.1944")
    anschrift = t.p("ADDRESS", "Hinter der Mauer 7, Hinterhaus 2. OG, 99084 Erfurt")
    tel = t.p("PHONE", "0361 / 64 21 88 07")
    mail = t.p("EMAIL", "r.vogelsang-adeyemi@t-online.de")
    ini = (
        f"[Auftrag]\nNummer={nr}\nAuftraggeberin={kundin}\nAnschrift={anschrift}\nTelefon={tel}\nMail={mail}\n\n"
        f"[Inschrift]\nZeile1={verst}\nZeile2=* {geb}   \u2020 {tod}\nZeile3=Unvergessen\n\n"
        f"[Material]\nSorte={stein}\nOberflaeche=poliert\nPreis=3.480,00 EUR\n"
    )
    t.tool("auftrag_export", {"nr": nr, "format": "ini"}, ini, style="spanname")
    t.reply(
        f"Auftrag {nr} ist vollständig: {stein} poliert, Inschrift für {verst} mit Geburts- und Sterbedatum. "
        f"Die Rechnung geht an Frau Vogelsang-Adeyemi."
    )
    t.p("NAME", "Frau Vogelsang-Adeyemi")


def t_brunnenbau_xrechnung(t: Trace) -> None:
    """de: eine XRechnung (UBL) für eine Brunnenbohrung an eine Privatperson."""
    t.service = "rechnungseingang"
    rnr = t.d("RE-2026-00873")  # Rechnungsnummer
    leitweg = t.d("Projekt BB-2026-17")  # Projektnummer des Brunnenbauers
    tiefe = t.d("Bohrtiefe 38 m")  # technische Angabe
    name = t.p("NAME", "Thorsten Engelhardt")
    strasse = t.p("ADDRESS", "Am Mühlgraben 3a")
    ort = t.p("ADDRESS", "Ortsteil Wendhausen, Hof Nr. 3")
    konto = t.p("IBAN", "DE44500105175407324931")
    mail = t.p("EMAIL", "thorsten@engelhardt-familie.de")
    xml = (
        '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">\n'
        f"  <cbc:ID>{rnr}</cbc:ID>\n  <cbc:BuyerReference>{leitweg}</cbc:BuyerReference>\n"
        "  <cac:AccountingCustomerParty><cac:Party>\n"
        f"    <cac:PartyName><cbc:Name>{name}</cbc:Name></cac:PartyName>\n"
        f"    <cac:PostalAddress><cbc:StreetName>{strasse}</cbc:StreetName>"
        f"<cbc:AdditionalStreetName>{ort}</cbc:AdditionalStreetName>"
        "<cbc:CityName>Schöppenstedt</cbc:CityName><cbc:PostalZone>38170</cbc:PostalZone></cac:PostalAddress>\n"
        f"    <cac:Contact><cbc:ElectronicMail>{mail}</cbc:ElectronicMail></cac:Contact>\n"
        "  </cac:Party></cac:AccountingCustomerParty>\n"
        f"  <cac:PaymentMeans><cbc:PaymentMeansCode>59</cbc:PaymentMeansCode><cac:PayeeFinancialAccount>"
        f"<cbc:ID>{konto}</cbc:ID></cac:PayeeFinancialAccount></cac:PaymentMeans>\n"
        f"  <cac:InvoiceLine><cbc:Note>{tiefe}, Brunnenausbau DN 125</cbc:Note></cac:InvoiceLine>\n</Invoice>"
    )
    t.tool("erechnung.validate", {"xml": xml}, {"valid": True, "profile": "XRechnung 3.0"})
    t.reply(f"{rnr} ist gültig (XRechnung 3.0). Lastschrift vom Konto des Kunden, {tiefe}.")


def t_tierpension_sprachnachricht(t: Trace) -> None:
    """de: eine transkribierte Sprachnachricht an eine Tierpension, dann die Buchung."""
    t.service = "tierpension-assistent"
    hund = t.d("Frau Holle")  # der Name der Hündin (ein Märchen), kein Mensch
    rasse = t.d("Berner Sennenhund")  # Hunderasse
    zeit = t.d("vom 22. bis 29. Dezember")  # Betreuungszeitraum
    name = t.p("NAME", "jonas fuchs")
    name2 = t.p("NAME", "Jonas Fuchs")
    adr = t.p("ADDRESS", "am lindenhof drei a zweiter stock links")
    adr2 = t.p(
        "ADDRESS",
        "Am Lindenhof 3a, 2. OG links, 34131 Kassel",
        ["Am Lindenhof 3a, 2. OG links, 34131 Kassel", "Am Lindenhof 3a"],
    )
    geb = t.p("DOB", "vierten juli neunzehnhundertneunzig")
    tel = t.p("PHONE", "null eins sieben sechs vier fünf zwei acht null neun eins drei")
    tel2 = t.p("PHONE", "0176 45280913")
    text = (
        f"ja hallo hier ist {name} ähm ich wollt unsere {hund} anmelden also die {rasse} {zeit} "
        f"für den vertrag meine adresse {adr} in kassel geboren bin ich am {geb} "
        f"und erreichen können sie mich unter {tel} danke tschüss"
    )
    t.tool("voicemail.transkribieren", {"datei": "vm_0412.ogg", "sprache": "de-DE"}, {"text": text})
    t.tool(
        "buchung.anlegen",
        {"kunde": name2, "adresse": adr2, "telefon": tel2, "tier": hund, "rasse": rasse},
        {"buchung": "TP-4471"},
    )
    t.d("TP-4471")  # Buchungsnummer der Pension
    t.reply(
        f"Buchung TP-4471 für {hund} ({rasse}) {zeit} angelegt; Bestätigung per SMS an Herrn Fuchs."
    )
    t.p("NAME", "Herrn Fuchs")


def t_sportboot_anmeldung_ocr(t: Trace) -> None:
    """de: OCR eines handschriftlich ausgefüllten Anmeldebogens für den Sportbootführerschein."""
    t.service = "bootsschule-ocr"
    kurs = t.d("SBF See Kurs 7")  # Kursbezeichnung
    pruef = t.d("Prüfungstermin 14.03.2027")  # Prüfungstermin, kein Geburtstag
    revier = t.d("Kieler Förde")  # Fahrtrevier
    name = t.p("NAME", "SCHÄFER-ÖZTÜRK, Leyla")
    geb = t.p("DOB", "07.09.1998")
    adr = t.p(
        "ADDRESS",
        "Ückendorfer Str. 112, App. 4.07\n45886 Gelsenkirchen",
        ["Ückendorfer Str. 112, App. 4.07\n45886 Gelsenkirchen", "Ückendorfer Str. 112"],
    )
    tel = t.p("PHONE", "0209 / 3 87 41 56")
    mail = t.p("EMAIL", "leyla.s.oe@web.de")
    idnr = t.p("NATIONAL_ID", "65809173486")
    ocr = (
        "ANMELDUNG ZUM SPORTBOOTFÜHRERSCHEIN\n"
        f"Kurs: {kurs}   Revier: {revier}\n"
        f"Name, Vorname: {name}\nGeburtsdatum / -ort: {geb} in Gelsen-\nkirchen\n"
        f"Anschrift: {adr}\nTelefon: {tel}   E-Mail: {mail}\n"
        f"Steuer-ID (für Rechnung an Arbeitgeber): {idnr}\n{pruef}\n"
        "Unterschrift: ________ (unleserlich)\n"
    )
    t.tool("Formular.OCR", {"bild": "anmeldung_117.jpg"}, {"text": ocr}, style="oi")
    t.reply(f"Anmeldung für {kurs} gelesen; {pruef}. Die Teilnehmerin ist volljährig.")


def t_waermepumpe_foerderantrag(t: Trace) -> None:
    """de: ein Förderantrag für eine Wärmepumpe mit deutschen JSON-Schlüsseln."""
    t.service = "foerder-lotse"
    geraet = t.d("Vaillant aroTHERM plus VWL 75/6")  # Gerätemodell
    vorgang = t.d("BEG-EM-2026-771204")  # Vorgangsnummer des Förderprogramms
    jaz = t.d("JAZ 4,1")  # Jahresarbeitszahl
    name = t.p("NAME", "Zofia Kaczmarczyk-Bauer")
    geb = t.p("DOB", "1958-11-19")
    adr = t.p(
        "ADDRESS",
        "Seitenflügel links, 3. OG, Kopenhagener Straße 41, 10437 Berlin",
        [
            "Seitenflügel links, 3. OG, Kopenhagener Straße 41, 10437 Berlin",
            "Kopenhagener Straße 41",
        ],
    )
    post = t.p("ADDRESS", "Postfach 10 07 45, 20005 Hamburg")
    stid = t.p("NATIONAL_ID", "47190325586")
    konto = t.p("IBAN", "DE09 7602 6000 0193 8472 65")
    tel = t.p("PHONE", "+49 30 4471 2290")
    body = {
        "antragsteller": {
            "name": name,
            "geburtsdatum": geb,
            "anschrift": adr,
            "postanschrift": post,
            "steuerliche_identifikationsnummer": stid,
            "telefon": tel,
        },
        "bankverbindung": {"iban": konto, "kontoinhaberin": name},
        "massnahme": {"geraet": geraet, "jaz": jaz},
        "vorgang": vorgang,
    }
    t.tool("antrag.einreichen", body, {"status": "eingegangen", "vorgang": vorgang})
    t.reply(
        f"Antrag {vorgang} ist eingegangen ({geraet}, {jaz}); der Bescheid kommt an das Postfach."
    )


def t_genossenschaft_mail_reply(t: Trace) -> None:
    """de: eine E-Mail mit zitierter Antwort an eine Wohnungsgenossenschaft."""
    t.service = "wg-postfach"
    wohn = t.d(
        "Wohnanlage Friedrich Ebert"
    )  # Name der Wohnanlage nach einem Politiker, keine Privatperson
    whg = t.d("WE 14/3")  # Wohnungseinheit
    termin = t.d("Montag, 11. Januar")  # Besichtigungstermin
    name = t.p("NAME", "Měrćin Nowak")
    kurz = t.p("NAME", "Herr Nowak")
    alt = t.p(
        "ADDRESS",
        "c/o Familie Šołćina, Bautzener Straße 12, 02625 Bautzen",
        ["c/o Familie Šołćina, Bautzener Straße 12, 02625 Bautzen", "Bautzener Straße 12"],
    )
    fam = t.p("NAME", "Familie Šołćina")
    geb = t.p("DOB", "3. Februar 1987")
    tel = t.p("PHONE", "03591 48 22 07")
    sb = t.p("NAME", "Henrike Wolff")
    mail = (
        f"Sehr geehrte Frau Wolff,\n\nvielen Dank für die Zusage. Wie gewünscht meine Angaben: ich bin am {geb} "
        f"geboren und derzeit erreichbar {alt}, Tel. {tel}.\n\nMit freundlichen Grüßen\n{name}\n\n"
        f"> Am 02.12.2026 schrieb {sb}:\n> Sehr geehrter {kurz}, die Wohnung {whg} in der {wohn} ist frei.\n"
        f"> Besichtigung am {termin}?\n"
    )
    t.tool("mail.lesen", {"ordner": "Eingang", "id": 8812}, {"body": mail})
    t.reply(f"{kurz} bestätigt {whg} in der {wohn}; Besichtigung {termin}.")
    t.p("NAME", "Frau Wolff")
    t.d("02.12.2026")  # Datum der zitierten Mail
    _ = fam


def t_schuetzenverein_csv(t: Trace) -> None:
    """de: eine Mitgliederliste eines Schützenvereins als CSV mit Semikolons."""
    t.service = "verein-kasse"
    verein = t.d("SV Tell 1889 e.V.")  # Vereinsname (Wilhelm Tell: eine Sagengestalt)
    ev = t.d("Königsschießen 2027")  # Veranstaltung
    vr = t.d("VR 2147")  # Vereinsregisternummer
    rows = [
        ("Aksoy", "Bünyamin", "1972-01-30", "Lange Reihe 9", "Telgte"),
        ("Brandt", "Anneliese", "12.06.1951", "Hof Große Kettler 2", "Ostbevern"),
        ("Oberschulte-Ilić", "Dragan", "30.8.1990", "Kapellenweg 1b", "Westbevern"),
    ]
    lines = ["Nachname;Vorname;Geburtsdatum;Strasse;Ort;Eintritt"]
    for i, (nn, vn, gd, st, ort) in enumerate(rows):
        t.p(
            "NAME", f"{nn};{vn}", [f"{nn};{vn}", nn, *[w for w in nn.split("-") if len(w) >= 3], vn]
        )
        t.p("DOB", gd)
        t.p("ADDRESS", f"{st};{ort}", [f"{st};{ort}", st])
        lines.append(f"{nn};{vn};{gd};{st};{ort};{['2001', '1988', '2019'][i]}")
    t.tool(
        "csv_export", {"liste": "mitglieder", "trenner": ";"}, "\n".join(lines), style="spanname"
    )
    konto = t.p("IBAN", "DE67 4005 0150 0084 7126 39")
    t.reply(
        f"{verein} ({vr}): drei Mitglieder für {ev} gemeldet, Startgeld per Lastschrift von {konto}."
    )


def t_ci_pipeline_chat_de(t: Trace) -> None:
    """de: ein Team-Chat über eine kaputte CI-Pipeline, mit Zugangsdaten in Variablen und Befehlen."""
    t.service = "devops-bot"
    job = t.d("build:arm64")  # Job-Name der Pipeline
    runner = t.d("runner-hetzner-fsn1-07")  # Name eines Build-Runners
    sha = t.d("3f9a2c1e")  # Kurz-Hash eines Commits
    ver = t.d("2.41.0-beta.3")  # Versionsnummer
    bb = t.p("SECRET", "ATBBGA0jMnxknfaaYDzs8zPhUGrrbScR9B5F8CB3")
    circ = t.p("SECRET", "CCIPAT_Mg3Qy8gE7gn7pSVm3WI1TO_905587da1284764367c1dece4c5591d216c9f170")
    sonar = t.p("SECRET", "squ_ba23ce2e3d19d2a28d55d461a050050e0b3c208d")
    pm = t.p("SECRET", "PMAK-9ca8d43bb8d685b55e514036-fdaac5acf3f481588178d41f99577482be")
    pw = t.p("SECRET", "Brezel&Radler_19")
    ip = t.p("IP", "203.0.113.58")
    ip2 = t.p("IP", "192.0.2.214")
    wer = t.p("NAME", "Malte Grünewald")
    wer2 = t.p("NAME", "Büşra")
    chat = (
        f"[09:02] {wer}: {job} auf {runner} ist wieder rot seit {sha}\n"
        f"[09:03] {wer2}: liegt am Bitbucket-Mirror, das App-Passwort ist abgelaufen. Neues: {bb}\n"
        f"[09:04] {wer}: ok, und Sonar? SONAR_TOKEN={sonar}\n"
        f"[09:05] {wer2}: Staging-Server {ip} — das Passwort für root lautet {pw} (bitte nicht weitergeben)\n"
        f"[09:06] {wer}: circleci context add: circleci context store-secret ci-shared TOKEN --value {circ}\n"
        f"[09:07] {wer2}: Postman-Collection läuft mit x-api-key: {pm} gegen {ip2}\n"
    )
    t.tool("chat.verlauf", {"kanal": "#ci-kaputt", "seit": "09:00"}, {"nachrichten": chat})
    t.reply(
        f"{job} für {ver} scheitert seit {sha} am Mirror. Im Kanal stehen mehrere Zugangsdaten im Klartext."
    )


def t_kurantrag_svnr_at(t: Trace) -> None:
    """de-AT: ein Kurantrag mit Sozialversicherungsnummer, Adresse mit Stiege und Tür."""
    t.service = "kur-assistent"
    haus = t.d("Kurhaus Bad Gleichenberg")  # Kurhaus, ein Ort
    ind = t.d("Indikation BSE")  # Kurindikation (Stütz- und Bewegungsapparat)
    frist = t.d("bis 31.01.2027")  # Einreichfrist
    name = t.p("NAME", "Karl-Heinz Oberhuber")
    svnr = t.p("NATIONAL_ID", "4188 120570")
    geb = t.p("DOB", "12. Mai 1970")
    adr = t.p("ADDRESS", "Reindorfgasse 19, Stiege 3, Tür 11, 1150 Wien")
    tel = t.p("PHONE", "+43 664 218 7730")
    arzt = t.p("NAME", "Dr. Vesna Marković")
    konto = t.p("IBAN", "AT74 2011 1829 4710 3365")
    t.user(
        f"Bitte den Kurantrag für meinen Vater fertig machen: {name}, SVNR {svnr}, geboren am {geb}, "
        f"wohnt {adr}, Telefon {tel}. Zuweisung von {arzt}."
    )
    t.tool(
        "pva.kurantrag",
        {
            "versicherter": name,
            "svnr": svnr,
            "anschrift": adr,
            "zuweisung": arzt,
            "wunschort": haus,
            "indikation": ind,
            "konto_fahrtkosten": konto,
        },
        {"eingangsnummer": "KA-W-2026-55013"},
    )
    t.d("KA-W-2026-55013")  # Eingangsnummer des Antrags
    t.reply(f"Der Antrag ist eingereicht ({ind}, Wunschort {haus}), Frist {frist} eingehalten.")


# ----------------------------------------------------------------------------- French


def t_pension_equestre_boucle(t: Trace) -> None:
    """fr: une pension équestre : la propriétaire trouvée par un outil, puis reformulée par le modèle."""
    t.service = "ecurie-assistant"
    cheval = t.d("Quartz du Bocage")  # nom d'un cheval inscrit au SIRE
    box = t.d("box 17")  # numéro de box dans l'écurie
    sire = t.d("25012345X")  # numéro SIRE du cheval (identifie l'animal)
    vermif = t.d("15/01/2027")  # date du prochain vermifuge, pas une naissance
    nom = t.p("NAME", "Solène Castagnède")
    adr = t.p("ADDRESS", "Le Moulin d'en Bas, 24250 Cénac-et-Saint-Julien")
    adr_para = t.p("ADDRESS", "au Moulin d'en Bas, à Cénac")
    tel = t.p("PHONE", "06 71 48 22 95")
    tel_para = t.p("PHONE", "+33 6 71 48 22 95")
    naiss = t.p("DOB", "1984-07-26")
    naiss_para = t.p("DOB", "26 juillet 1984")
    nir = t.p("NATIONAL_ID", "2 84 07 33 063 128 68")
    t.user(
        f"À qui appartient {cheval} au {box} ? Il faut la prévenir pour le vermifuge du {vermif}."
    )
    t.tool(
        "registre.chercher",
        {"cheval": cheval},
        {
            "proprietaire": {
                "nom": nom,
                "adresse": adr,
                "tel": tel,
                "naissance": naiss,
                "nir_assurance_rc": nir,
            },
            "sire": sire,
        },
    )
    t.tool("sms.envoyer", {"a": tel, "texte": f"Vermifuge de {cheval} le {vermif}."}, {"ok": True})
    madame = t.p("NAME", "Mme Castagnède")
    t.reply(
        f"{cheval} ({box}, SIRE {sire}) appartient à {madame}, qui habite {adr_para} ; née le {naiss_para}. "
        f"Je l'ai prévenue par SMS au {tel_para}."
    )


def t_reliure_lettre_ocr_be(t: Trace) -> None:
    """fr-BE: la lettre d'une cliente d'un atelier de reliure, passée à l'OCR avec des coupures."""
    t.service = "atelier-reliure"
    livre = t.d("Les Fleurs du mal")  # titre d'un livre
    ed = t.d("édition Poulet-Malassis de 1857")  # édition ancienne (un éditeur du XIXe siècle)
    devis = t.d("devis n° 2026/118")  # numéro de devis
    nom = t.p("NAME", "Aurore Delmas-Nsengiyumva")
    adr = t.p(
        "ADDRESS",
        "Rue de la Brasserie 44 bte 2\n1050 Ixelles",
        ["Rue de la Brasserie 44 bte 2\n1050 Ixelles", "Rue de la Brasserie 44"],
    )
    nn = t.p("NATIONAL_ID", "88.04.19-217.22")
    naiss = t.p("DOB", "19 avril\n1988", ["19 avril\n1988", "19 avril 1988"])
    tel = t.p("PHONE", "0478 21 93 06")
    iban_be = t.p("IBAN", "BE63 0016 4728 3908")
    ocr = (
        f"{nom}\n{adr}\n\nIxelles, le 28 novembre 2026\n\nMadame, Monsieur,\n\nJe vous confie mon exemplaire des {livre}\n"
        f"({ed}) pour une restauration de la reliure. Comme l'assurance l'exige, voici mon numéro\nnational : {nn} "
        f"(née le {naiss}). Vous pouvez me joindre au {tel} ;\nle remboursement éventuel se fera sur {iban_be}.\n\n"
        "Veuillez agréer, Madame, Monsieur, mes salutations distinguées.\n"
    )
    t.tool(
        "ocr_page",
        {"scan": "lettre_cliente.pdf", "page": 1},
        {"texte": ocr, "langue": "fr"},
        style="spanname",
    )
    t.reply(f"Lettre lue : {livre}, {ed}, à rattacher au {devis}.")
    t.d("28 novembre 2026")  # date de la lettre


def t_interim_graphql_fr(t: Trace) -> None:
    """fr: une agence d'intérim : requête GraphQL et réponse avec les fiches des intérimaires."""
    t.service = "interim-matching"
    poste = t.d("cariste CACES R489 cat. 3")  # intitulé de poste et certification
    site = t.d("entrepôt Lyon Saint-Exupéry")  # site du client (un aéroport)
    mission = t.d("MIS-2026-4410")  # numéro de mission
    n1 = t.p("NAME", "Noureddine Belkacem")
    n2 = t.p("NAME", "Thi Lan Phạm")
    d1 = t.p("DOB", "03/11/1958")
    d2 = t.p("DOB", "1996-02-14")
    a1 = t.p(
        "ADDRESS",
        "Bât. C, esc. 2, 5e étage, porte 512, 18 rue des Tanneurs, 69007 Lyon",
        [
            "Bât. C, esc. 2, 5e étage, porte 512, 18 rue des Tanneurs, 69007 Lyon",
            "18 rue des Tanneurs",
        ],
    )
    a2 = t.p(
        "ADDRESS",
        "Résidence Les Glycines, appt 31, 7 impasse Berthelot, 69100 Villeurbanne",
        [
            "Résidence Les Glycines, appt 31, 7 impasse Berthelot, 69100 Villeurbanne",
            "7 impasse Berthelot",
            "Résidence Les Glycines",
        ],
    )
    nir = t.p("NATIONAL_ID", "158076912304759")
    e2 = t.p("EMAIL", "thilan.pham96@laposte.net")
    query = (
        'query { interimaires(filtre: {poste: "' + poste + '", dispo: true}) '
        "{ nom dateNaissance adresse nir email } }"
    )
    resp = {
        "data": {
            "interimaires": [
                {"nom": n1, "dateNaissance": d1, "adresse": a1, "nir": nir, "email": None},
                {"nom": n2, "dateNaissance": d2, "adresse": a2, "nir": None, "email": e2},
            ]
        }
    }
    t.tool("graphql", {"query": query}, resp, style="oi")
    t.reply(f"Deux profils pour {mission} ({poste}, {site}) : M. Belkacem et Mme Phạm.")
    t.p("NAME", "M. Belkacem")
    t.p("NAME", "Mme Phạm")


def t_logement_etudiant_form(t: Trace) -> None:
    """fr: une demande de logement étudiant : corps de formulaire percent-encodé et JSON dans JSON."""
    t.service = "crous-demarches"
    res = t.d("Résidence Jean Zay")  # résidence universitaire nommée d'après un ministre
    dossier = t.d("DSE-2027-0081142")  # numéro de dossier social étudiant
    rentree = t.d("01/09/2027")  # date de rentrée
    nom = t.p("NAME", "Maëva Tetuanui")
    naiss = t.p("DOB", "17/05/2007")
    adr = t.p("ADDRESS", "BP 4172, 98713 Papeete")
    adr2 = t.p("ADDRESS", "PK 12,5 côté mer, Punaauia")
    mail = t.p("EMAIL", "maeva.tetuanui@mail.pf")
    tel = t.p("PHONE", "+689 87 21 44 90")
    form = (
        f"nom={urlenc(nom)}&date_naissance={urlenc(naiss)}&adresse_postale={urlenc(adr)}"
        f"&adresse_geo={urlenc(adr2)}&courriel={urlenc(mail)}&tel={urlenc(tel)}&residence={urlenc(res)}"
    )
    t.tool(
        "http.post",
        {
            "url": "https://messervices.example/dse/form",
            "content_type": "application/x-www-form-urlencoded",
            "body": form,
        },
        {"status": 302},
    )
    wrapped = json.dumps(
        {
            "event": "dse.submitted",
            "data": json.dumps({"dossier": dossier, "etudiante": nom, "naissance": naiss}),
        },
        ensure_ascii=False,
    )
    t.tool("webhook.recu", {"payload": wrapped}, {"ack": True})
    t.reply(f"Dossier {dossier} envoyé pour la {res}, rentrée le {rentree}.")


def t_osteo_dictee(t: Trace) -> None:
    """fr: une dictée vocale d'ostéopathe transcrite, puis un compte rendu."""
    t.service = "cabinet-dictee"
    tech = t.d("technique de Jones")  # technique nommée d'après son inventeur
    acte = t.d("séance 3 sur 5")  # suivi des séances
    rdv = t.d("jeudi 7 janvier à 18 h")  # prochain rendez-vous
    nom = t.p("NAME", "inès benhamou")
    nom2 = t.p("NAME", "Inès Benhamou")
    naiss = t.p("DOB", "dix-sept mai mil neuf cent quatre-vingt-douze")
    naiss2 = t.p("DOB", "17.05.1992")
    adr = t.p("ADDRESS", "vingt-deux boulevard de la villette escalier b")
    nir = t.p("NATIONAL_ID", "292057511221458")
    dictee = (
        f"patiente {nom} née le {naiss} domiciliée {adr} "
        f"lombalgie basse depuis trois semaines {acte} j'ai utilisé la {tech} bonne réponse point"
    )
    t.tool("dictee.transcrire", {"audio": "dictee_1812.m4a"}, {"texte": dictee})
    t.tool(
        "dossier.compte_rendu",
        {"patiente": nom2, "naissance": naiss2, "nir": nir, "texte": dictee[:80]},
        {"ok": True},
    )
    t.reply(f"Compte rendu rédigé ({acte}, {tech}). Prochain rendez-vous {rdv}.")


def t_colonie_csv(t: Trace) -> None:
    """fr: une liste d'inscrits à une colonie de vacances en CSV à points-virgules."""
    t.service = "colo-inscriptions"
    sejour = t.d("Les Écureuils du Vercors")  # nom du séjour
    dates = t.d("du 12 au 25 juillet 2027")  # dates du séjour
    agr = t.d("agrément DDETS 038ORG0412")  # numéro d'agrément de l'organisateur
    rows = [
        ("Hoareau", "Jean-Baptiste", "2015-03-02", "Mme Hoareau", "0692 41 87 30"),
        ("Fournier-Dubreuil", "Émeline", "08/10/2016", "M. Fournier", "07 68 22 19 54"),
        ("Vasseur", "Corentin", "2014-12-21", "Mme Vasseur", "06.12.44.87.03"),
    ]
    lines = ["nom;prénom;date_naissance;responsable;tél_responsable;régime"]
    for nn, pn, dn, resp, tel in rows:
        t.p("NAME", f"{nn};{pn}", [f"{nn};{pn}", *[w for w in nn.split("-")], pn, *pn.split("-")])
        t.p("DOB", dn)
        t.p("NAME", resp)
        t.p("PHONE", tel)
        lines.append(f"{nn};{pn};{dn};{resp};{tel};sans porc")
    t.tool("inscriptions.export_csv", {"sejour": sejour, "separateur": ";"}, "\n".join(lines))
    t.reply(
        f"{sejour}, {dates} ({agr}) : trois enfants inscrits, tous les responsables joignables."
    )


def t_laravel_logs_fr(t: Trace) -> None:
    """fr: des journaux Laravel et Monolog collés dans un ticket, avec clés et cookies."""
    t.service = "support-dev"
    route = t.d("POST /commandes/{id}/valider")  # route de l'application
    req = t.d("req_01JDF3K8W9Z2Q4M7XB")  # identifiant de requête
    paquet = t.d("laravel/framework v11.34.2")  # version du framework
    app_key = t.p("SECRET", "base64:Lz2IesQBmG5r465hgyPbrF3SdnsIqe0QOKUc4HHxRqs=")
    sess = t.p("SECRET", "BPEx7zvNAfikNDY7ZOek64Ep3KOuZ40wkANWia73")
    ably = t.p("SECRET", "Ggicsv.Z6ZR6Q:7FmFXXxay1PdaHM3itx__U-o1XGn6GhEM94e7ItOvLg")
    clerk = t.p("SECRET", "sk_live_3Xll2M1WAKDmOK8ASG8b1Jto0mvongff7jELTrnl")
    meili = t.p("SECRET", "khLSiAGSbgwzATedgYmkVhKeMXzJOETtbxC0OGJMdVm")
    ip = t.p("IP", "86.247.113.19")
    mail = t.p("EMAIL", "corinne.abitbol@orange.fr")
    logs = (
        f'[2026-12-03 08:41:12] production.ERROR: SQLSTATE[23000] sur {route} {{"userId":4471,"email":"{mail}","ip":"{ip}"}} [{req}]\n'
        f"[2026-12-03 08:41:12] production.DEBUG: Cookie: laravel_session={sess}; XSRF-TOKEN=eyJpdiI6\n"
        f"[2026-12-03 08:41:13] production.INFO: broadcast via ably key={ably}\n"
        f"#7 /var/www/vendor/laravel/framework/src/Illuminate/Foundation/Application.php(1188) env: APP_KEY={app_key} "
        f"CLERK_SECRET_KEY={clerk} MEILISEARCH_KEY={meili}\n"
    )
    t.tool(
        "ticket.lire",
        {"id": "SUP-3319"},
        {"description": "Erreur 500 à la validation", "logs": logs},
    )
    t.d("SUP-3319")  # numéro de ticket
    t.reply(
        f"L'erreur vient d'une contrainte unique sur {route} ({paquet}). Les journaux exposent des secrets : à changer."
    )


def t_conciergerie_genai_parts(t: Trace) -> None:
    """fr: une conciergerie de location courte durée, messages au format GenAI récent (parts)."""
    t.service = "conciergerie-ia"
    logement = t.d("Studio Petite France")  # nom commercial d'un logement (un quartier)
    resa = t.d("HMZ4K2P8XQ")  # code de réservation de la plateforme
    arrivee = t.d("vendredi 18 décembre")  # date d'arrivée
    voyageur = t.p("NAME", "Yannick Nsengiyumva")
    code = t.p("SECRET", "boîte à clés 7 3 1 9", ["boîte à clés 7 3 1 9", "7 3 1 9"])
    wifi = t.p("SECRET", "Cigogne-Tarte-42!")
    proprio = t.p("NAME", "Pierre-Emmanuel Lapierre")
    adr = t.p(
        "ADDRESS",
        "3e étage gauche, 9 quai Saint-Nicolas, 67000 Strasbourg",
        ["3e étage gauche, 9 quai Saint-Nicolas, 67000 Strasbourg", "9 quai Saint-Nicolas"],
    )
    tel = t.p("PHONE", "+33 7 82 16 40 59")
    msgs = [
        {
            "role": "system",
            "parts": [{"type": "text", "content": f"Tu réponds aux voyageurs pour {proprio}."}],
        },
        {
            "role": "user",
            "parts": [
                {
                    "type": "text",
                    "content": f"Bonjour, c'est {voyageur} ({resa}), j'arrive {arrivee}. Code et wifi ?",
                }
            ],
        },
    ]
    out = [
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "text",
                    "content": f"Bienvenue ! {logement}, {adr}. Le code de la {code}, wifi « {wifi} ». En cas de souci : {tel}.",
                }
            ],
            "finish_reason": "stop",
        }
    ]
    t._span(
        "chat mistral-small",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "mistral_ai",
            "gen_ai.input.messages": json.dumps(msgs, ensure_ascii=False),
            "gen_ai.output.messages": json.dumps(out, ensure_ascii=False),
        },
    )
    t.reply(f"Instructions d'arrivée envoyées pour {resa}.")


# ----------------------------------------------------------------------------- Spanish


def t_albergue_parte_viajeros(t: Trace) -> None:
    """es: un albergue del Camino comunica el parte de viajeros en XML."""
    t.service = "albergue-recepcion"
    alb = t.d("Albergue San Roque")  # nombre del albergue (un santo)
    etapa = t.d("etapa Sarria-Portomarín")  # etapa del Camino
    lote = t.d("lote 20261203-0007")  # número de lote del envío
    n1 = t.p("NAME", "Consuelo Prado Etxeberria")
    n2 = t.p("NAME", "Jürgen Achterholt")
    dni = t.p("NATIONAL_ID", "53019874K")
    nie = t.p("NATIONAL_ID", "Y4827136W")
    f1 = t.p("DOB", "1961-04-09")
    f2 = t.p("DOB", "1977-09-30")
    dom1 = t.p(
        "ADDRESS",
        "Avda. de Zumalakarregi 61, 4º dcha., 20008 Donostia",
        ["Avda. de Zumalakarregi 61, 4º dcha., 20008 Donostia", "Avda. de Zumalakarregi 61"],
    )
    dom2 = t.p(
        "ADDRESS",
        "Urb. Los Pinos, portal 3, bajo A, 03590 Altea",
        ["Urb. Los Pinos, portal 3, bajo A, 03590 Altea", "Urb. Los Pinos, portal 3"],
    )
    xml = (
        "<comunicacion><establecimiento>" + alb + "</establecimiento><lote>" + lote + "</lote>\n"
        f" <persona><nombre>{n1}</nombre><tipoDocumento>NIF</tipoDocumento><numeroDocumento>{dni}</numeroDocumento>"
        f"<fechaNacimiento>{f1}</fechaNacimiento><direccion>{dom1}</direccion></persona>\n"
        f" <persona><nombre>{n2}</nombre><tipoDocumento>NIE</tipoDocumento><numeroDocumento>{nie}</numeroDocumento>"
        f"<fechaNacimiento>{f2}</fechaNacimiento><direccion>{dom2}</direccion></persona>\n</comunicacion>"
    )
    t.tool("hospedajes.enviar_parte", xml, {"codigo": "OK", "lote": lote}, style="oi")
    t.reply(f"Parte enviado ({lote}) para dos peregrinos de la {etapa} en el {alb}.")


def t_gestoria_nie_bucle(t: Trace) -> None:
    """es: una gestoría de extranjería: el expediente sale de una herramienta y el modelo lo resume con otras palabras."""
    t.service = "gestoria-extranjeria"
    exp = t.d("EX-15 expediente 2026/31877")  # número de expediente y modelo de formulario
    tasa = t.d("tasa 790-012")  # modelo de tasa
    cita = t.d("cita el 19 de enero a las 9:40")  # cita en comisaría, no un nacimiento
    nombre = t.p("NAME", "Rojda Demir Aslan")
    nie = t.p("NATIONAL_ID", "X2947318Y")
    fn = t.p("DOB", "1990-06-15")
    fn_para = t.p("DOB", "15 de junio de 1990")
    dom = t.p("ADDRESS", "C/ de Sepúlveda, 143, ático 2ª, 08011 Barcelona")
    dom_para = t.p("ADDRESS", "en el ático de Sepúlveda 143")
    tel = t.p("PHONE", "612 44 90 38")
    t.tool(
        "expedientes.buscar",
        {"tramite": "NIE"},
        {
            "titular": nombre,
            "nie": nie,
            "nacimiento": fn,
            "domicilio": dom,
            "movil": tel,
            "expediente": exp,
        },
    )
    t.tool(
        "citas.reservar",
        {"expediente": exp, "oficina": t.d("Comisaría de Sant Martí")},  # oficina pública, un lugar
        {"cita": "2027-01-19T09:40"},
    )
    senora = t.p("NAME", "la señora Demir")
    t.reply(
        f"Tengo a {senora}, nacida el {fn_para}, que vive {dom_para}. Le he pedido {cita} y hay que pagar la {tasa} antes; "
        f"le aviso por WhatsApp."
    )


def t_colegio_mayor_mail(t: Trace) -> None:
    """es: un correo en Markdown de un colegio mayor con la admisión y los datos del residente."""
    t.service = "colegio-mayor"
    cm = t.d("Colegio Mayor Santa María del Pino")  # nombre de la institución
    curso = t.d("curso 2027-2028")  # curso académico
    hab = t.d("habitación 214, planta 2")  # habitación de la residencia
    nombre = t.p("NAME", "Amparo Soler Villanueva")
    madre = t.p("NAME", "Rosario Villanueva")
    fn = t.p("DOB", "8/9/2008")
    dom = t.p("ADDRESS", "Camino de la Ermita s/n, 44564 Ladruñán (Teruel)")
    dni = t.p("NATIONAL_ID", "20845137-F")
    tel = t.p("PHONE", "978 84 21 06")
    cuenta = t.p("IBAN", "ES76 0081 0236 1300 0618 4732")
    md = (
        f"## Admisión {curso}\n\nEstimada **{madre}**:\n\nNos alegra comunicarle que *{nombre}* (nacida el {fn}, "
        f"DNI {dni}) ha sido admitida en el {cm}.\n\n- Dirección familiar: {dom}\n- Teléfono: {tel}\n"
        f"- Domiciliación: `{cuenta}`\n- {hab}\n\nUn saludo,\nSecretaría"
    )
    t.tool(
        "correo.enviar", {"para": "familia", "formato": "markdown", "cuerpo": md}, {"enviado": True}
    )
    t.reply(f"Admisión comunicada: {hab}, {curso}.")


def t_autocaravana_llamada(t: Trace) -> None:
    """es: la transcripción de una llamada para alquilar una autocaravana, con la tarjeta dictada."""
    t.service = "autocaravanas-voz"
    modelo = t.d("Benimar Tessoro 494")  # modelo de autocaravana
    matr = t.d("matrícula 4417 LMK")  # matrícula del vehículo de la empresa
    fechas = t.d("del 3 al 10 de abril")  # fechas del alquiler
    nombre = t.p("NAME", "gonzalo iturriaga")
    fn = t.p("DOB", "nací el ocho de septiembre del setenta y uno")
    dom = t.p("ADDRESS", "calle mayor cuarenta y dos tercero izquierda")
    tarjeta = t.p("CARD", luhn("5371 6402 9811 447"))
    cad = t.d("caduca en el veintiocho")  # la caducidad de la tarjeta no identifica a nadie
    carnet = t.p("NATIONAL_ID", "71460329L")
    texto = (
        f"agente: buenas tardes autocaravanas del norte\ncliente: hola quería la {modelo} {fechas}\n"
        f"agente: perfecto me da su nombre\ncliente: {nombre} y {fn}\ncliente: vivo en {dom} en logroño\n"
        f"agente: el carnet de conducir\ncliente: es el dni {carnet}\n"
        f"cliente: la tarjeta es la {tarjeta} {cad}\n"
    )
    t.tool("voz.transcribir", {"grabacion": "llamada_7781.wav"}, {"texto": texto})
    t.reply(f"Reserva de la {modelo} ({matr}) {fechas}; la tarjeta se dictó en la llamada.")


def t_cooperativa_python_dict(t: Trace) -> None:
    """es: la nómina de temporeros de una cooperativa escrita como código Python por el agente."""
    t.service = "coop-nominas"
    finca = t.d("Finca Los Almendros")  # nombre de una finca
    camp = t.d("campaña 2026/27")  # campaña agrícola
    conv = t.d("convenio del campo de Almería")  # convenio colectivo
    n1 = t.p("NAME", "Oumar Sangaré")
    n2 = t.p("NAME", "Ionela Pătrașcu")
    n3 = t.p("NAME", "Esperanza Cortés Heredia")
    d1 = t.p("ADDRESS", "Diseminado Las Norias 42, 04716 El Ejido")
    d2 = t.p("ADDRESS", "Cortijo El Romeral, Paraje Cañada Onda, Níjar")
    d3 = t.p("ADDRESS", "C/ Jaén 8, 1º B, 04700 El Ejido")
    iban2 = t.p("IBAN", "ES6720859301390330471926")
    fn1 = t.p("DOB", "12-03-1994")
    fn3 = t.p("DOB", "2001/07/27")
    code = (
        "temporeros = [\n"
        f"    {{'nombre': '{n1}', 'domicilio': '{d1}', 'f_nac': '{fn1}', 'iban': None}},\n"
        f"    {{'nombre': '{n2}', 'domicilio': '{d2}', 'f_nac': None, 'iban': '{iban2}'}},\n"
        f"    {{'nombre': '{n3}', 'domicilio': '{d3}', 'f_nac': '{fn3}', 'iban': None}},\n"
        "]\n"
        f"for t in temporeros:\n    nomina(t, finca='{finca}', campana='{camp}')\n"
    )
    t.tool("python.ejecutar", {"codigo": code}, {"stdout": "3 nóminas generadas"})
    t.reply(f"Tres nóminas de la {camp} en {finca} según el {conv}.")


def t_express_logs_es(t: Trace) -> None:
    """es: registros de una API Express.js en un canal de guardia, con tokens en URLs y cabeceras."""
    t.service = "guardia-bot"
    svc = t.d("pagos-api@4.7.1")  # servicio y versión
    pedido = t.d("pedido 880-21377")  # número de pedido
    corr = t.d("x-correlation-id: 7d1e0c2a-5b3f-4e8d-9c6a-2f4b8e1d0a93")  # id de correlación
    gc = t.p("SECRET", "live_Y8oqTZDFzFcnHFIaW8O8iYocDvUrggIh2EAM27_S")
    ups = t.p("SECRET", "AVZLkEOXanhavzpNFmV4RTsfZXC5Eu7xRU5XaTHUHarfxE5EIdjwOTYvFeK0fOjG4a28Qwc")
    one = t.p("SECRET", "os_v2_app_z4srmce4t2gj7nju2wun73pysaqjl7sb2dow4t3hn7mqojvrpsju")
    mtx = t.p("SECRET", "syt_pxpT5oXnA9O8_ys4PPXbsRuzGLh34rypo_p5RJuH")
    ip = t.p("IP", "83.59.201.146")
    mail = t.p("EMAIL", "maripaz.lorente@telefonica.net")
    logs = (
        f'{ip} - - [03/Dec/2026:10:02:11 +0100] "GET /v1/webhooks/gocardless?access_token={gc} HTTP/1.1" 401 44\n'
        f"express:router dispatching POST /v1/cobros {pedido} {corr}\n"
        f"Error: ECONNREFUSED redis://default:{ups}@eu2-fine-heron-31877.upstash.io:6379\n"
        f"    at notificar (/app/src/notificar.js:88:11) {{ cliente: '{mail}', push: 'Authorization: Key {one}' }}\n"
        f"matrix-bot: PUT https://matrix.example.org/_matrix/client/v3/rooms/!guardia/send?access_token={mtx}\n"
    )
    t.tool("registros.consultar", {"servicio": svc, "nivel": "error"}, {"lineas": logs})
    t.reply(
        f"{svc}: el cobro del {pedido} falla porque Redis rechaza la conexión. Rotad las credenciales del log."
    )


def t_ong_voluntariado_mx(t: Trace) -> None:
    """es-MX: una ONG registra voluntarias con CURP por GraphQL."""
    t.service = "ong-voluntariado"
    prog = t.d("Brigada Tláloc")  # nombre de un programa (deidad mexica)
    sede = t.d("Centro Comunitario Iztapalapa")  # sede pública
    folio = t.d("VOL-MX-2026-1187")  # folio de registro
    nombre = t.p("NAME", "Ana Morales Garza")
    curp = t.p("NATIONAL_ID", "MOGA750914MDFRRN07")
    fn = t.p("DOB", "14 de septiembre de 1975")
    dom = t.p(
        "ADDRESS",
        "Andador 7, Mz 14 Lt 22, U.H. Vicente Guerrero, 09200 CDMX",
        ["Andador 7, Mz 14 Lt 22, U.H. Vicente Guerrero, 09200 CDMX", "Andador 7, Mz 14 Lt 22"],
    )
    apdo = t.p("ADDRESS", "Apartado Postal 118, 09001 Iztapalapa")
    cel = t.p("PHONE", "55 4187 2290")
    mutation = (
        f'mutation {{ registrarVoluntaria(input: {{nombreCompleto: "{nombre}", curp: "{curp}", '
        f'fechaNacimiento: "{fn}", domicilio: "{dom}", correspondencia: "{apdo}", celular: "{cel}", '
        f'programa: "{prog}"}}) {{ folio }} }}'
    )
    t.tool(
        "graphql.mutate", {"query": mutation}, {"data": {"registrarVoluntaria": {"folio": folio}}}
    )
    t.reply(f"Registrada en {prog} con folio {folio}; se presentará en el {sede}.")


# ----------------------------------------------------------------------------- Italian, Portuguese, Dutch, Slovene, Latvian


def t_liutaio_restauro(t: Trace) -> None:
    """it: il restauro di un violino: scheda cliente con chiavi italiane e indirizzo spezzato in campi."""
    t.service = "bottega-liuteria"
    strum = t.d(
        "violino Guarneri copia 1742"
    )  # modello di strumento (copia di un liutaio del Settecento)
    lav = t.d("rifacimento anima e ponticello")  # lavorazione
    cons = t.d("consegna prevista 20/02/2027")  # data di consegna
    nome = t.p("NAME", "Marco Ferraris")
    cf = t.p("NATIONAL_ID", "FRRMRC50C21E715L")
    nascita = t.p("DOB", "21/03/1950")
    via = t.p("ADDRESS", "Via dei Fossi 18")
    resto = t.p("ADDRESS", "scala B, interno 7, 55100 Lucca")
    cel = t.p("PHONE", "347 218 9904")
    pec = t.p("EMAIL", "marco.ferraris@pec.it")
    scheda = {
        "cliente": {
            "nome_cognome": nome,
            "codice_fiscale": cf,
            "data_di_nascita": nascita,
            "indirizzo": {"via_e_civico": via, "dettagli": resto},
            "cellulare": cel,
            "pec": pec,
        },
        "strumento": strum,
        "lavorazione": lav,
        "consegna": cons,
    }
    t.tool("schede.salva", scheda, {"id": "LT-0392"})
    t.d("LT-0392")  # numero di scheda del laboratorio
    t.reply(
        f"Scheda salvata: {strum}, {lav}, {cons}. Il cliente è nato a Lucca nel marzo del 1950."
    )
    t.p("DOB", "nel marzo del 1950")


def t_patronato_curl_it(t: Trace) -> None:
    """it: un patronato invia una domanda di pensione con curl: header Basic, corpo in base64."""
    t.service = "patronato-invii"
    pratica = t.d("pratica PEN-2026-88412")  # numero di pratica
    ente = t.d("gestione ex-INPDAP")  # gestione previdenziale
    decor = t.d("decorrenza 01/06/2027")  # decorrenza della pensione
    nome = t.p("NAME", "Giulia Bruno")
    cf = t.p("NATIONAL_ID", "BRNGLI62C44G713R")
    nascita = t.p(
        "DOB", "nata a Pistoia il 4 marzo 1962", ["nata a Pistoia il 4 marzo 1962", "4 marzo 1962"]
    )
    ind = t.p("ADDRESS", "Località Poggio Alto 3, 53024 Montalcino (SI)")
    cc = t.p("IBAN", "IT44E0306909606100000063178")
    basic_pw = t.p("SECRET", "Patronato.Siena#2026")
    basic = b64(f"operatore07:{basic_pw}")
    body = b64(
        json.dumps(
            {
                "richiedente": nome,
                "cf": cf,
                "nascita": nascita,
                "residenza": ind,
                "iban_accredito": cc,
            },
            ensure_ascii=False,
        )
    )
    cmd = (
        f"curl -sS -X POST https://servizi.example.it/pensioni/domande -H 'Authorization: Basic {basic}' "
        f"-H 'Content-Type: application/json;base64' --data '{body}'"
    )
    t.tool(
        "shell",
        {"comando": cmd},
        {"exit_code": 0, "stdout": '{"esito":"ACCETTATA"}'},
        style="spanname",
    )
    t.reply(f"Domanda inviata per la {pratica} ({ente}), {decor}.")


def t_agriturismo_whatsapp_it(t: Trace) -> None:
    """it: una chat di prenotazione di un agriturismo con carta, casella postale e codice della cassetta."""
    t.service = "agriturismo-chat"
    camera = t.d("camera Brunello")  # nome di una camera (un vino)
    cena = t.d("cena del 31 dicembre")  # evento, non un compleanno
    pren = t.d("PR-7781")  # numero di prenotazione
    ospite = t.p("NAME", "Francesca Lo Giudice")
    nome_breve = t.p("NAME", "Franci")
    casella = t.p("ADDRESS", "Casella Postale 88, 90133 Palermo Centro")
    carta = t.p("CARD", luhn("3782 190461 8822"))
    cassetta = t.p(
        "SECRET", "il codice della cassetta è 0412", ["il codice della cassetta è 0412", "0412"]
    )
    nato = t.p(
        "DOB",
        "compio 40 anni il 2 gennaio, sono del 1987",
        ["compio 40 anni il 2 gennaio, sono del 1987", "2 gennaio", "1987"],
    )
    chat = (
        f"[28/11 21:04] {ospite}: Buonasera, vorrei la {camera} per la {cena}. Per la fattura usate {casella}\n"
        f"[28/11 21:05] Agriturismo: Certo {nome_breve}! Serve una carta a garanzia.\n"
        f"[28/11 21:07] {ospite}: {carta} scad 11/29. Ah, {nato}, festeggiamo lì 🎉\n"
        f"[28/11 21:09] Agriturismo: Perfetto, prenotazione {pren}. Arrivo dopo le 22? {cassetta}\n"
    )
    t.tool("whatsapp.export", {"chat": "prenotazioni"}, {"testo": chat})
    t.reply(f"Prenotazione {pren}: {camera}, {cena}.")


def t_azulejos_http_pt(t: Trace) -> None:
    """pt: um pedido HTTP cru de uma oficina de azulejos, com cookie, NIF e morada."""
    t.service = "azulejos-loja"
    padrao = t.d("padrão Viúva Lamego")  # padrão de azulejo (nome de uma fábrica histórica)
    enc = t.d("ENC-2026-3318")  # número de encomenda
    fatura = t.d("FT 2026/1187")  # número de fatura
    nome = t.p("NAME", "Joaquim Tavares Nhela")
    nif = t.p("NATIONAL_ID", "236418076")
    morada = t.p("ADDRESS", "Rua do Almada 412, 3.º Esq., 4050-036 Porto")
    nasc = t.p(
        "DOB",
        "nascido a 1 de março de 1966",
        ["nascido a 1 de março de 1966", "1 de março de 1966"],
    )
    tel = t.p("PHONE", "+351 912 447 083")
    cookie = t.p(
        "SECRET", "s%3AqT9x2LmZp4RkW7vB1nC8dE3fG6hJ0aS5.Kd7%2Bq2mN9xP4rT1vW8yZ3bC6eF0hJ5lO2sU7wA4gI"
    )
    nasc_key = t.p("DOB", "1966-03-01")
    req = (
        "POST /api/encomendas HTTP/1.1\r\nHost: loja.azulejos.example\r\n"
        f"Cookie: connect.sid={cookie}; consent=1\r\nContent-Type: application/json\r\n\r\n"
        + json.dumps(
            {
                "cliente": nome,
                "nif": nif,
                "morada": morada,
                "data_nascimento": nasc_key,
                "telemovel": tel,
                "produto": padrao,
            },
            ensure_ascii=False,
        )
    )
    t.tool("http.replay", {"raw": req}, {"status": 201, "encomenda": enc})
    t.reply(f"Encomenda {enc} ({padrao}) criada; {fatura} emitida em nome do cliente, {nasc}.")


def t_casa_repouso_br(t: Trace) -> None:
    """pt-BR: admissão numa casa de repouso: ficha com CPF e endereço com bloco e apartamento."""
    t.service = "residencial-senior"
    ala = t.d("Ala Ipê Amarelo")  # nome de uma ala (uma árvore)
    plano = t.d("plano Bem-Estar Plus")  # plano de cuidados
    adm = t.d("admissão em 05/01/2027")  # data de admissão
    nome = t.p(
        "NAME",
        "Dona Benedita Aparecida dos Santos",
        ["Dona Benedita Aparecida dos Santos", "Benedita", "Aparecida", "Santos"],
    )
    cpf = t.p("NATIONAL_ID", "318.426.905-15")
    nasc = t.p("DOB", "26/10/1938")
    end = t.p(
        "ADDRESS",
        "Rua Voluntários da Pátria, 2210, apto 84, bloco B, Santana, São Paulo - SP, 02011-300",
        [
            "Rua Voluntários da Pátria, 2210, apto 84, bloco B, Santana, São Paulo - SP, 02011-300",
            "Rua Voluntários da Pátria, 2210",
        ],
    )
    filho = t.p("NAME", "Cláudio dos Santos Ribeiro")
    cel = t.p("PHONE", "(11) 97214-3308")
    mail = t.p("EMAIL", "claudio.sribeiro@uol.com.br")
    ficha = (
        f"FICHA DE ADMISSÃO\nResidente: {nome}\nCPF: {cpf}   Nascimento: {nasc} (88 anos)\n"
        f"Endereço anterior: {end}\nResponsável: {filho} — {cel} — {mail}\n{ala} · {plano} · {adm}\n"
    )
    t.tool("ficha_admissao", {"formato": "texto"}, ficha, style="spanname")
    t.reply(f"Ficha pronta: {ala}, {plano}, {adm}. O responsável será avisado.")


def t_fietsenstalling_kafka_nl(t: Trace) -> None:
    """nl: een abonnement op een fietsenstalling als Kafka-bericht met headers en geneste JSON."""
    t.service = "stalling-abonnementen"
    stalling = t.d("Stalling Jaarbeursplein")  # naam van een openbare fietsenstalling (een plein)
    abo = t.d("ABO-NL-558120")  # abonnementsnummer
    pas = t.d("fietskluis 118")  # nummer van een fietskluis in de stalling
    naam = t.p("NAME", "Sjoerd Hoekstra")
    bsn = t.p("NATIONAL_ID", "217630480")
    gebd = t.p("DOB", "14-07-1985")
    adres = t.p("ADDRESS", "Prinsengracht 447-III, 1016 HP Amsterdam")
    post = t.p("ADDRESS", "Postbus 2041, 3500 GA Utrecht")
    rek = t.p("IBAN", "NL29ABNA0417283950")
    msg = {
        "headers": {"ce_type": "abonnement.aangemaakt", "ce_source": "stalling/utrecht"},
        "key": abo,
        "value": json.dumps(
            {
                "houder": {
                    "naam": naam,
                    "bsn": bsn,
                    "geboortedatum": gebd,
                    "woonadres": adres,
                    "correspondentieadres": post,
                },
                "incasso": rek,
                "stalling": stalling,
                "pas": pas,
            },
            ensure_ascii=False,
        ),
        "partition": 3,
        "offset": 771204,
    }
    t.tool("kafka.consume", {"topic": "abonnementen", "max": 1}, {"records": [msg]})
    t.reply(f"{abo} voor {stalling} staat erin; incasso maandelijks.")


def t_ijsbaan_env_nl(t: Trace) -> None:
    """nl: de ledenadministratie van een ijsbaan: een .properties-bestand en een wachtwoord in een chat."""
    t.service = "ijsbaan-beheer"
    baan = t.d("IJsbaan De Uithof")  # naam van een ijsbaan
    seizoen = t.d("seizoen 2026-2027")  # seizoen
    app = t.d("ledenportaal 5.2.0")  # softwareversie
    bunq = t.p("SECRET", "ad158d907e59c34f5d3dc0a646aee894cdd6700248d2ba4ed3eb0f25ad2bd14d")
    smtp = t.p("SECRET", "Schaats&Koek_88")
    wachtwoord = t.p("SECRET", "Elfsteden1963!")
    secretaris = t.p("NAME", "Femke de Wit-Boukhari")
    mail = t.p("EMAIL", "femke.dewit@ijsclub-uithof.nl")
    props = f"app.version={app}\npayments.bunq.apiKey={bunq}\nmail.smtp.user={mail}\nmail.smtp.password={smtp}\n"
    t.tool("config.lezen", {"bestand": "portal.properties"}, props)
    t.tool(
        "chat.geschiedenis",
        {"kanaal": "bestuur"},
        {
            "berichten": [
                f"{secretaris}: het nieuwe wachtwoord voor het ledenportaal is {wachtwoord}, niet doorsturen aub"
            ]
        },
    )
    t.reply(
        f"{baan}, {seizoen}: de configuratie en de bestuurschat bevatten wachtwoorden in platte tekst."
    )


def t_planinska_koca_sl(t: Trace) -> None:
    """sl: rezervacija planinske koče: klepet z EMŠO in naslovom."""
    t.service = "koca-rezervacije"
    koca = t.d("Koča na Kriški gori")  # ime planinske koče (kraj)
    nocitev = t.d("nočitev 16. 1. 2027")  # datum nočitve, ne rojstni dan
    rez = t.d("REZ-4411")  # številka rezervacije
    ime = t.p("NAME", "Urška Kavčič Zupan")
    emso = t.p("NATIONAL_ID", "1203984505126")
    roj = t.p("DOB", "12. 3. 1984")
    naslov = t.p("ADDRESS", "Trubarjeva cesta 23, 1000 Ljubljana")
    tel = t.p("PHONE", "041 328 774")
    rac = t.p("IBAN", "SI56 1910 0000 0123 438")
    t.user(
        f"Pozdravljeni, sem {ime}, rada bi rezervirala ležišče v {koca}, {nocitev}. Za člansko izkaznico PZS: "
        f"EMŠO {emso}, rojena {roj}, naslov {naslov}, tel. {tel}. Akontacijo nakažem z računa {rac}."
    )
    t.tool("rezervacija.ustvari", {"koca": koca, "gost": ime, "tel": tel}, {"rezervacija": rez})
    t.reply(f"Rezervacija {rez} v {koca} je potrjena za {nocitev}.")


def t_dzivoklis_ire_lv(t: Trace) -> None:
    """lv: dzīvokļa īres līgums e-pastā ar personas kodu un adresi."""
    t.service = "ires-aģents"
    ligums = t.d("līgums Nr. ĪL-2026/114")  # līguma numurs
    termins = t.d("no 2027. gada 1. februāra")  # īres sākums, ne dzimšanas diena
    maksa = t.d("420 EUR mēnesī")  # īres maksa
    ire = t.p("NAME", "Ilze Bērziņa-Kalniņa")
    pk = t.p("NATIONAL_ID", "150376-10454")
    dz = t.p("DOB", "1976. gada 15. martā")
    adrese = t.p("ADDRESS", "Brīvības iela 121-14, Rīga, LV-1001")
    konts = t.p("IBAN", "LV51PARX0007441820936")
    tel = t.p("PHONE", "+371 29 418 836")
    vestule = (
        f"Labdien!\n\nNosūtu datus līgumam {ligums}: īrniece {ire}, personas kods {pk}, dzimusi {dz}. "
        f"Dzīvoklis: {adrese}, {termins}, {maksa}. Īres maksu pārskaitīs no {konts}. Tālrunis {tel}.\n\nAr cieņu"
    )
    t.tool("epasts.lasit", {"mape": "Iesūtne"}, {"teksts": vestule})
    t.reply(f"{ligums}: dati ir pilnīgi, {termins}.")


WRITERS = [f for n, f in list(globals().items()) if n.startswith("t_")]
