# ruff: noqa: E501 (hand-written corpus data: long literal lines are the data)
"""Tenth hand-written redaction corpus (holdout10): written blind to the detectors.

See README.md, section "holdout10". Every personal or secret value goes through
``t.p(TYPE, value)``; every look-alike that must survive goes through ``t.d(value)``
with a comment saying why it is not personal. Rules as in holdout9: a private
person's home, postal, billing or delivery address is planted, a business's or
public office's address is neither planted nor a decoy; dates that are not birth
dates are decoys; each written form of a person or an address in a trace (a
paraphrase by the model, a title and surname, a lower-case handle) is its own
value. National ids, IBANs and cards carry valid check characters (checked with
python-stdnum outside the repository).
"""

from __future__ import annotations

import json

from _kit import Trace, b64, jwt, luhn, urlenc


def _flat_chat(t: Trace, messages: list[tuple[str, str]], completion: str, model: str) -> None:
    """A chat span in the older flat convention: ``gen_ai.prompt.N.*`` / ``gen_ai.completion.0.*``."""
    attrs: dict[str, object] = {"gen_ai.system": "openai", "gen_ai.request.model": model}
    for i, (role, content) in enumerate(messages):
        attrs[f"gen_ai.prompt.{i}.role"] = role
        attrs[f"gen_ai.prompt.{i}.content"] = content
    attrs["gen_ai.completion.0.role"] = "assistant"
    attrs["gen_ai.completion.0.content"] = completion
    t._span("openai.chat", attrs)


def _oi_chat(t: Trace, messages: list[tuple[str, str]], output: str, model: str) -> None:
    """A chat span in OpenInference's flattened form: ``llm.input_messages.N.message.*``."""
    attrs: dict[str, object] = {"openinference.span.kind": "LLM", "llm.model_name": model}
    for i, (role, content) in enumerate(messages):
        attrs[f"llm.input_messages.{i}.message.role"] = role
        attrs[f"llm.input_messages.{i}.message.content"] = content
    attrs["llm.output_messages.0.message.role"] = "assistant"
    attrs["llm.output_messages.0.message.content"] = output
    t._span("ChatCompletion", attrs)


# ---------------------------------------------------------------------------- en
def t_sleep_lab_hl7_referral(t: Trace) -> None:
    """en: a sleep lab receives an HL7 v2 ADT message and books a polysomnography night."""
    t.service, t.slice = "sleep-lab-intake", "referrals"
    pid_name = t.p("NAME", "KHOURY^NADIM^ELIAS", ["KHOURY^NADIM^ELIAS", "KHOURY", "NADIM", "ELIAS"])
    pid_dob = t.p("DOB", "19720315")
    pid_addr = t.p(
        "ADDRESS",
        "418 Larchmont Terrace^Apt 3C^Dayton^OH^45419",
        ["418 Larchmont Terrace^Apt 3C^Dayton^OH^45419", "418 Larchmont Terrace"],
    )
    pid_phone = t.p("PHONE", "(937)224-6180")
    pid_ssn = t.p("SSN", "412-68-3097")
    ref = t.p("NAME", "OYELARAN^TEMITOPE^A", ["OYELARAN^TEMITOPE^A", "OYELARAN", "TEMITOPE"])
    nk1 = t.p(
        "NAME", "KHOURY-ABBOUD^RANIA", ["KHOURY-ABBOUD^RANIA", "KHOURY-ABBOUD", "ABBOUD", "RANIA"]
    )
    nk1_phone = t.p("PHONE", "(937)410-2276")
    ts = t.d("20261201083012")  # the message's own timestamp (MSH-7), not a birth date
    ctrl = t.d("MSG00417")  # message control id
    icd = t.d("G47.33")  # ICD-10 code for obstructive sleep apnoea: a diagnosis code, no person
    cpt = t.d("95810")  # CPT procedure code for attended polysomnography
    hl7 = (
        f"MSH|^~\\&|EPICADT|MVH|SLEEPLAB|DSC|{ts}||ADT^A04|{ctrl}|P|2.5.1\r"
        f"PID|1||00731842^^^MVH^MR||{pid_name}||{pid_dob}|M|||{pid_addr}||{pid_phone}^PRN^PH"
        f"||EN|M||ACCT7731|{pid_ssn}\r"
        f"NK1|1|{nk1}|SPO|||{nk1_phone}\r"
        f"PV1|1|O|SLP^^^DSC||||{ref}^^^^MD|||||||||||V88142\r"
        f"DG1|1||{icd}^Obstructive sleep apnea^I10\r"
    )
    t.user(
        "New referral came through the interface engine, can you get them booked for a PSG night?"
    )
    t.tool("hl7.inbox.next", {"channel": "ADT_IN", "ack": True}, {"raw": hl7, "bytes": len(hl7)})
    t.tool(
        "scheduler.find_slot",
        {"resource": "PSG-room-2", "procedure": cpt, "earliest": "2026-12-08"},
        {"slots": [{"start": "2026-12-09T20:30:00", "room": "PSG-room-2"}]},
    )
    nadim = t.p("NAME", "Nadim Khoury")
    dob_p = t.p("DOB", "March 15, 1972")
    spouse = t.p("NAME", "Rania")
    doc = t.p("NAME", "Dr. Oyelaran")
    t.reply(
        f"Booked {nadim} (born {dob_p}) into PSG room 2 for the night of Wednesday 9 December, "
        f"arrival 8:30 pm, CPT {cpt}. Referral from {doc} for suspected {icd}. His wife {spouse} "
        "is listed as next of kin; the confirmation letter goes to the address on the ADT message."
    )


def t_password_vault_migration(t: Trace) -> None:
    """en: a helpdesk agent moves a retired teacher's passwords from a browser CSV export to a vault."""
    t.service, t.slice = "home-it-helpdesk", "support"
    t.root["flywheel.env.s0_ref"] = "vault-import://" + t.p(
        "EMAIL", "bev.whitlock51@btinternet.com"
    )
    who = t.p("NAME", "Beverley Ossei-Whitlock")
    user_mail = "bev.whitlock51@btinternet.com"
    p1 = t.p("SECRET", "Marmalade&Crumpet1951")
    p2 = t.p("SECRET", "tW9!kQ2v#Lr7xZp4")
    p3 = t.p("SECRET", "CoventryCity*Sky-Blue88")
    p4 = t.p("SECRET", "Bxq7-Wmz2-Tkd9-Hpl4")
    totp = t.p("SECRET", "JBSWY3DPEHPK3PXPQ7RWK4ZTGA2DC5LN")
    pin = t.p("SECRET", "4719")
    bev = t.p("NAME", "Bev")  # the Windows profile folder
    path = f"C:/Users/{bev}/Downloads/Chrome Passwords.csv"
    site = t.d("https://www.nationwide.co.uk/login")  # a bank's public login page
    csv = (
        "name,url,username,password,note\n"
        f"Nationwide,{site},{user_mail},{p1},\n"
        f"Ocado,https://www.ocado.com,{user_mail},{p2},\n"
        f"Sky Sports,https://www.sky.com,bevw51,{p3},\n"
        f"Apple ID app password,https://appleid.apple.com,{user_mail},{p4},\n"
        f"Premium Bonds,https://www.nsandi.com,{user_mail},,TOTP {totp}\n"
        f"Post Office card,,,,PIN {pin}\n"
    )
    t.user(
        f"Hi it's {who}, my grandson set up that vault thing, can you move my passwords into it?"
    )
    t.tool("files.read", {"path": path}, {"text": csv}, style="oi")
    t.tool(
        "vault.import",
        {"format": "chrome-csv", "items": 6, "folder": "Imported 2026-12-03"},
        {"imported": 5, "skipped": [{"row": 6, "reason": "no url or username"}]},
        style="oi",
    )
    t.tool("files.secure_delete", {"path": path, "passes": 1}, {"ok": True}, style="oi")
    t.reply(
        f"All done, {t.p('NAME', 'Beverley')}. Five logins are in the vault, and I deleted the CSV from "
        "Downloads. The card PIN row was skipped on purpose: a PIN shouldn't live in a password file. "
        "Please change the Nationwide password, since it was sitting in a plain file."
    )


def t_package_registry_dotfiles(t: Trace) -> None:
    """en: a build agent audits a contractor's laptop for registry credentials before offboarding."""
    t.service, t.slice = "offboarding-audit", "security"
    dev = t.p("NAME", "Kwabena Asantewaa-Mills")
    gitc = t.p("SECRET", "ghu_R8vK2mQ9xT4wL7zN1pB5sD3fH6jY0cA2eG8i")
    pipi = t.p("SECRET", "AKCp8nzqWv3Lk2PmR7tX9yB4cD6fG1hJ5kM8nQ2sT4vW6xZ9aC3eF7gH1jK5mN8pR2tV")
    mvn = t.p("SECRET", "Sonatype-Fjord!kettle-58")
    nuget = t.p("SECRET", "oy2b7kqx3mzlwr4tp9vn6cdj8fhs2aeg5yu1io0pqwe3rty")
    gem = t.p("SECRET", "rubygems_4c1f9e07b2d8a6c53e19f0b7d2a48c6e1f3b9d07a25c8e41")
    npmrc = t.p("SECRET", "npm_Qm7xK2vR9tL4wZ8nB1pD5sF3hJ6yC0aE2gI8")
    sha = t.d("9f3c2b1e7a6d")  # a short commit hash
    ver = t.d("4.12.0-rc.3")  # a package version
    art = t.d("artifacts.norrland-tools.io/artifactory/api/pypi/pypi-local/simple")  # registry URL
    files = {
        "~/.git-credentials": f"https://kasantewaa:{gitc}@github.com\n",
        "~/.config/pip/pip.conf": f"[global]\nextra-index-url = https://kasantewaa:{pipi}@{art}\n",
        "~/.m2/settings.xml": (
            "<settings><servers><server><id>ossrh</id><username>kasantewaa</username>"
            f"<password>{mvn}</password></server></servers></settings>"
        ),
        "~/.nuget/NuGet/NuGet.Config": f'<apikeys><add key="https://api.nuget.org/v3/index.json" value="{nuget}" /></apikeys>',
        "~/.gem/credentials": f"---\n:rubygems_api_key: {gem}\n",
        "~/.npmrc": f"//registry.npmjs.org/:_authToken={npmrc}\n",
    }
    t.user(
        f"{dev} leaves Friday. List every registry credential on his laptop so we can revoke them."
    )
    for path, text in files.items():
        t.tool(
            "endpoint.read_file",
            {"device": "LT-0442", "path": path},
            {"text": text},
            style="spanname",
        )
    t.tool(
        "git.log",
        {"repo": "norrland-cli", "author": "kasantewaa", "n": 1},
        f"commit {sha}\nAuthor: {dev} <k.asantewaa-mills@norrland-tools.io>\n\n    release {ver}\n",
        style="spanname",
    )
    t.p("EMAIL", "k.asantewaa-mills@norrland-tools.io")
    t.reply(
        "Six credentials to revoke: a GitHub user-to-server token in .git-credentials, an Artifactory key in "
        "pip.conf (it reaches the internal PyPI too), the Sonatype password in settings.xml, a NuGet API key, a "
        f"RubyGems key and an npm token. His last release was {ver} ({sha}); nothing else references these."
    )


def t_crypto_exchange_kyc(t: Trace) -> None:
    """en: a compliance agent reviews a crypto exchange's KYC escalation (OpenAI-style message array)."""
    t.service, t.slice = "kyc-review", "compliance"
    nm = t.p("NAME", "Yehonatan Ben-Ami Tzur")
    idn = t.p("NATIONAL_ID", "031827462")
    dob = t.p("DOB", "14.05.1987")
    adr = t.p(
        "ADDRESS",
        "Rehov HaNevi'im 38, apt 12, Haifa 3310401",
        ["Rehov HaNevi'im 38, apt 12, Haifa 3310401", "Rehov HaNevi'im 38"],
    )
    ip = t.p("IP", "93.172.41.208")
    ph = t.p("PHONE", "+972 54-718-2290")
    api_key = t.p("SECRET", "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A")
    api_sec = t.p("SECRET", "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j")
    tx = t.d(
        "0x8f2c4e1a9b7d3f60c5e2a18b4d97f3c06e1b2a5d8c4f7e90a3b6d1c2e5f8a7b9"
    )  # a public on-chain tx hash
    wallet = t.d(
        "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"
    )  # a public deposit address (the exchange's)
    case = t.d("KYC-ESC-20417")  # a case number
    msgs = [
        {
            "role": "system",
            "content": "You review KYC escalations. Quote the evidence you rely on.",
        },
        {
            "role": "user",
            "content": f"Case {case}: user uploaded ID, selfie failed liveness twice.",
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "kyc.get_case", "arguments": json.dumps({"case": case})},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": json.dumps(
                {
                    "id_document": {
                        "type": "teudat_zehut",
                        "number": idn,
                        "name": nm,
                        "birth": dob,
                    },
                    "proof_of_address": {"text": adr},
                    "signup": {"ip": ip, "phone": ph},
                    "support_chat": "user: here are my api details so you can see my history "
                    f"key={api_key} secret={api_sec}",
                    "deposits": [{"tx": tx, "to": wallet, "btc": "0.4182"}],
                },
                ensure_ascii=False,
            ),
        },
    ]
    out = (
        f"Approve with conditions. The teudat zehut number {idn} passes its check digit and matches the name "
        f"{t.p('NAME', 'Yehonatan Ben-Ami')} and birth date {t.p('DOB', '14 May 1987')}. The liveness failures look like lighting. "
        "But the user pasted a live API key and secret into the support chat: revoke both and tell them why."
    )
    t._span(
        "chat gpt-4.1",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4.1",
            "gen_ai.input.messages": json.dumps(msgs, ensure_ascii=False),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": out}]),
        },
    )


def t_home_automation_config(t: Trace) -> None:
    """en: a home-automation agent fixes a broken config for a family; secrets.yaml and person entities."""
    t.service, t.slice = "smart-home-assistant", "home"
    llat = t.p(
        "SECRET",
        jwt(
            {"iss": "4f1c9e2a7b3d48e6a0c5f21b9d7e3a64", "iat": 1764700000, "exp": 2080060000},
            "m3Kq9vX2LpR7tZ4wB8nY1cD6fH0jS5aE3gU9iO2k",
        ),
    )
    mqtt = t.p("SECRET", "broker-Pw_Hedgehog-2291")
    tuya_id = t.d("bf3a9c21e07d4f5a8bq1")  # a Tuya device id: identifies a plug, not a person
    tuya_key = t.p("SECRET", "7c2e9f41ab08d365")
    lat = t.d(
        "latitude: 43.0731"
    )  # the city centre's latitude in an example block (Madison's capitol)
    home = t.p("ADDRESS", "5811 Cottonwood Knoll Ct, Fitchburg, WI 53711")
    p1 = t.p("NAME", "Ayesha Rahimi-Holt")
    p2 = t.p("NAME", "Bram Holt")
    slug1 = t.p(
        "NAME", "person.ayesha_rahimi_holt", ["person.ayesha_rahimi_holt", "ayesha_rahimi_holt"]
    )
    slug2 = t.p("NAME", "person.bram_holt", ["person.bram_holt", "bram_holt"])
    ph = t.p("PHONE", "+1 608 271 4490")
    secrets_yaml = (
        f"ha_token: {llat}\nmqtt_password: {mqtt}\ntuya_local_key: {tuya_key}\n"
        f'home_street: "{home}"\nnotify_sms_to: "{ph}"\n'
    )
    cfg = (
        "homeassistant:\n  name: Home\n  # example from the docs:\n  # " + lat + "\n"
        "  latitude: !secret home_lat\n  longitude: !secret home_lon\n"
        "mqtt:\n  password: !secret mqtt_password\n"
        "tuya_local:\n  devices:\n    - id: "
        + tuya_id
        + "\n      local_key: !secret tuya_local_key\n"
    )
    t.user(
        f"Config check fails after the update. I'm {p1}; my husband {p2} is the other person in HA."
    )
    t.tool("ha.files.read", {"path": "/config/configuration.yaml"}, {"text": cfg})
    t.tool("ha.files.read", {"path": "/config/secrets.yaml"}, {"text": secrets_yaml})
    t.tool("ha.check_config", {}, {"result": "invalid", "errors": ["Secret home_lat not defined"]})
    t.tool(
        "ha.states",
        {"domain": "person"},
        {
            "states": [
                {"entity_id": slug1, "state": "home"},
                {"entity_id": slug2, "state": "not_home"},
            ]
        },
    )
    t.reply(
        "The check fails because configuration.yaml asks for `home_lat`/`home_lon` but secrets.yaml only has "
        f"the street address. Add the two coordinates to secrets.yaml and it will pass. {slug1} and {slug2} are "
        f"set up correctly; {t.p('NAME', 'Bram')}'s phone tracker is reporting away, which is expected."
    )


def t_skydiving_waiver(t: Trace) -> None:
    """en: a skydiving centre's agent files tandem waivers signed through an e-signature envelope."""
    t.service, t.slice = "dropzone-manifest", "bookings"
    j1 = t.p(
        "NAME",
        "Nurul Izzati binti Kamarulzaman",
        ["Nurul Izzati binti Kamarulzaman", "Nurul", "Izzati", "Kamarulzaman"],
    )
    ic = t.p("NATIONAL_ID", "880214-14-5567")
    j1_dob = t.p("DOB", "14 Feb 1988")
    j1_mail = t.p("EMAIL", "izzati.kamarul88@yahoo.com.my")
    ec = t.p("NAME", "Faizal Hakimi")
    ec_ph = t.p("PHONE", "+60 12-384 7719")
    j2 = t.p("NAME", "Lachlan Pemberton-Quaye")
    j2_dob = t.p("DOB", "03/09/2007")
    guard = t.p("NAME", "Harriet Pemberton-Quaye")
    card = t.p("CARD", luhn("4539 2817 4403 126"))
    dbx = t.p(
        "SECRET",
        "sl.u.AFbK7Qm2xR9vL4tZ8wN1pB5dC3fH6jY0sE2gU9iO7kA4qW8eR1tY5uI3oP6aS9dF2gH5jK8lZ0xC3vB6nM",
    )
    env = t.d("a3f9c2e1-7b4d-4e8a-9c0f-5d2b1e6a8f47")  # the e-signature envelope id (random UUID)
    alt = t.d("13,000 ft")  # exit altitude
    weight = t.d("max 100 kg")  # the centre's weight limit
    envelope = {
        "envelopeId": env,
        "status": "completed",
        "recipients": {
            "signers": [
                {
                    "name": j1,
                    "email": j1_mail,
                    "tabs": {
                        "textTabs": [
                            {"tabLabel": "IC / Passport No", "value": ic},
                            {"tabLabel": "Date of birth", "value": j1_dob},
                            {"tabLabel": "Emergency contact", "value": f"{ec} (husband) {ec_ph}"},
                        ]
                    },
                },
                {
                    "name": guard,
                    "email": "h.pquaye@outlook.co.nz",
                    "roleName": "Parent/guardian of minor",
                    "tabs": {
                        "textTabs": [
                            {"tabLabel": "Jumper name", "value": j2},
                            {"tabLabel": "Jumper DOB", "value": j2_dob},
                        ]
                    },
                },
            ]
        },
    }
    t.p("EMAIL", "h.pquaye@outlook.co.nz")
    t.user(
        "Pull the two completed waivers for the 2pm tandem load, file them and take the balance on the card on file."
    )
    t.tool("esign.envelopes.get", {"envelopeId": env, "include": "recipients,tabs"}, envelope)
    t.tool(
        "dropbox.files.upload",
        {"path": f"/waivers/2026-12/{env}.pdf", "mode": "add"},
        {"id": "id:Qm7xK2vR9tA", "rev": "0161f2a9"},
        style="oi",
    )
    t._span(
        "HTTP POST",
        {
            "http.request.method": "POST",
            "url.full": "https://content.dropboxapi.com/2/files/upload",
            "http.request.header.authorization": f"Bearer {dbx}",
        },
    )
    t.tool(
        "payments.charge",
        {"card": card, "amount_nzd": 349.0, "description": f"Tandem {alt}"},
        {"status": "approved"},
    )
    t.reply(
        f"Both waivers are filed. {t.p('NAME', 'Nurul Izzati')} is good to go at {alt}. {t.p('NAME', 'Lachlan')} is 19 now, "
        f"so the parental section signed by {t.p('NAME', 'Ms Pemberton-Quaye')} isn't needed, but it does no harm. "
        f"Remind both about the {weight} limit. Balance of $349 charged to the Visa ending "
        f"{t.d('1269')}."  # only the last four digits: not enough to identify a card
    )


def t_golf_club_renewals(t: Trace) -> None:
    """en: a golf club secretary's agent processes membership renewals from an e-mail thread (markdown)."""
    t.service, t.slice = "club-secretary", "membership"
    m1 = t.p("NAME", "Hamish Achterberg")
    m1_dob = t.p("DOB", "7th Nov 1956")
    m1_adr = t.p(
        "ADDRESS",
        "The Old Forge, Kirk Wynd, Kinross KY13 8EW",
        ["The Old Forge, Kirk Wynd, Kinross KY13 8EW", "The Old Forge", "Kirk Wynd"],
    )
    m2 = t.p("NAME", "Ngozi Okonkwo-Reid")
    m2_dob = t.p("DOB", "29/02/2012")
    m2_par = t.p("NAME", "Adaeze Okonkwo-Reid")
    m2_adr = t.p(
        "ADDRESS",
        "3F2, 17 Marchmont Crescent, Edinburgh EH9 1HN",
        ["3F2, 17 Marchmont Crescent, Edinburgh EH9 1HN", "17 Marchmont Crescent"],
    )
    m2_ph = t.p("PHONE", "0131 667 2408")
    card = t.p("CARD", luhn("5425 2334 1097 418"))
    hcp = t.d("handicap index 14.2")  # a golf handicap
    trophy = t.d("Old Tom Morris Quaich")  # a club trophy named after a 19th-century golfer
    locker = t.d("locker 118")  # a locker number
    fee = t.d("£1,140")  # the senior subscription
    thread = (
        f"**From:** {m1} <hamish.achterberg@btopenworld.com>\n**Subject:** Renewal\n\n"
        f"Renewing as before please. I turn seventy this year (born {m1_dob}) so I believe I move to the "
        f"senior rate. Still at {m1_adr}. Pay by card {card}, exp 08/28. Keep {locker}.\n\n---\n"
        f"**From:** {m2_par} <adaeze.or@gmail.com>\n**Subject:** Junior membership\n\n"
        f"Hi, {m2} would like to join the juniors. She was born on {m2_dob} (yes, a leap-day baby!) and has "
        f"a {hcp}. We're at {m2_adr}, phone {m2_ph}.\n"
    )
    t.p("EMAIL", "hamish.achterberg@btopenworld.com")
    t.p("EMAIL", "adaeze.or@gmail.com")
    t.user("Process this week's renewals from the shared inbox.")
    t.tool(
        "mail.thread",
        {"folder": "Renewals", "since": "2026-11-27", "render": "markdown"},
        {"markdown": thread},
        style="oi",
    )
    t.tool(
        "members.update",
        {"member": "M-0419", "category": "Senior 70+", "fee": fee},
        {"ok": True},
        style="oi",
    )
    t.tool(
        "members.create",
        {"category": "Junior", "guardian_email": "adaeze.or@gmail.com", "handicap": 14.2},
        {"member": "J-0118"},
        style="oi",
    )
    t.reply(
        f"Two done. {t.p('NAME', 'Mr Achterberg')} moves to Senior 70+ at {fee} (he turns 70 on "
        f"{t.p('DOB', '7 November')}) and keeps {locker}; the card payment needs his CVC, so I've asked him to "
        f"ring. {t.p('NAME', 'Ngozi')} is a new junior (J-0118) with {hcp}; she's eligible for the "
        f"{trophy} next season."
    )


def t_podcast_studio_settings_diff(t: Trace) -> None:
    """en: a code-review agent at a podcast production studio reads a pull request that adds integrations."""
    t.service, t.slice = "code-review-bot", "engineering"
    el = t.p("SECRET", "sk_3f9a1c7e2b8d4f60a5c9e1b7d3f28a4c6e0b9d1f7a3c5e82")
    dg = t.p("SECRET", "4c1f9e07b2d8a6c53e19f0b7d2a48c6e1f3b9d07")
    aai = t.p("SECRET", "b7d2a48c6e1f3b9d07a25c8e41f9e0c3")
    rs = t.p("SECRET", "re_Kq7xM2vR_9tL4wZ8nB1pD5sF3hJ6yC0aE")
    ic = t.p("SECRET", "dG9rOjQxZjdjOWUyXzg4YjNfNGQ2MV9hMWM1XzZlMmY5YjBkN2E0ODoxOjA=")
    ld = t.p("SECRET", "sdk-8e41f9e0-c3b7-4d2a-98c6-e1f3b9d07a25")
    author = t.p("NAME", "Saoirse Nakamura-Flynn")
    reviewer = t.p("NAME", "Obinna Eze")
    pr = t.d("#1184")  # pull-request number
    sha = t.d("e7c41a9")  # short commit hash
    flag = t.d("auto-chapters-v2")  # a feature-flag key
    model = t.d("eleven_multilingual_v2")  # a voice model's name
    voice = t.d(
        "voice_id=EXAVITQu4vr4xnSDxMaL"
    )  # a public stock voice id from the provider's library
    diff = (
        "diff --git a/studio/settings.py b/studio/settings.py\n--- a/studio/settings.py\n+++ b/studio/settings.py\n"
        "@@ -41,6 +41,14 @@ TRANSCRIPTION = {\n"
        f'+ELEVENLABS_API_KEY = "{el}"\n+ELEVENLABS_MODEL = "{model}"  # {voice}\n'
        f'+DEEPGRAM_API_KEY = os.getenv("DEEPGRAM_API_KEY", "{dg}")\n'
        f'+ASSEMBLYAI_KEY = "{aai}"\n+RESEND_API_KEY = "{rs}"\n'
        f'+INTERCOM_ACCESS_TOKEN = "{ic}"\n+LAUNCHDARKLY_SDK_KEY = "{ld}"\n+CHAPTERS_FLAG = "{flag}"\n'
    )
    t.user(f"Review PR {pr} please.")
    t.tool(
        "github.pulls.get",
        {"repo": "studio/backend", "number": 1184},
        {
            "title": "Add TTS + transcription providers",
            "user": {"name": author},
            "head": {"sha": sha},
            "diff": diff,
        },
        style="oi",
    )
    t.tool(
        "github.pulls.review",
        {
            "number": 1184,
            "event": "REQUEST_CHANGES",
            "body": "Six live credentials are hard-coded; move them to the secret store and rotate.",
        },
        {"state": "CHANGES_REQUESTED", "reviewers_notified": [reviewer]},
        style="oi",
    )
    t.reply(
        f"Requested changes on {pr} ({sha}) by {t.p('NAME', 'Saoirse')}: six provider credentials are committed in "
        f"settings.py (ElevenLabs, Deepgram, AssemblyAI, Resend, Intercom, LaunchDarkly). The model name {model} and "
        f"the flag {flag} are fine to keep in code. I pinged {reviewer} to check the keys get rotated."
    )


def t_allergy_clinic_fhir(t: Trace) -> None:
    """en: an allergy clinic's agent reads a FHIR Patient and AllergyIntolerance bundle (OpenInference)."""
    t.service, t.slice = "allergy-clinic-agent", "clinic"
    given = t.p("NAME", "Siosaia", ["Siosaia"])
    family = t.p("NAME", "Vainikolo-Latu", ["Vainikolo-Latu", "Vainikolo", "Latu"])
    dob = t.p("DOB", "2011-06-27")
    line = t.p("ADDRESS", "77 Kereru Grove", ["77 Kereru Grove"])
    mob = t.p("PHONE", "+64 21 448 3917")
    mum = t.p("NAME", "Mele Vainikolo-Latu")
    mum_mail = t.p("EMAIL", "mele.vlatu@xtra.co.nz")
    snomed = t.d("91935009")  # SNOMED CT concept "allergy to peanut": a terminology code
    loinc = t.d("6206-7")  # LOINC code for a peanut IgE test
    pid = t.d("Patient/af3e21c0-7b5e-4d0b-9a1e-52c6d0f4e119")  # a resource id, random UUID
    bundle = {
        "resourceType": "Bundle",
        "type": "searchset",
        "entry": [
            {
                "resource": {
                    "resourceType": "Patient",
                    "id": pid.split("/")[1],
                    "name": [{"use": "official", "family": family, "given": [given]}],
                    "birthDate": dob,
                    "address": [
                        {
                            "use": "home",
                            "line": [line],
                            "city": "Lower Hutt",
                            "postalCode": "5010",
                            "country": "NZ",
                        }
                    ],
                    "telecom": [{"system": "phone", "value": mob, "use": "mobile"}],
                    "contact": [
                        {
                            "relationship": [{"text": "mother"}],
                            "name": {"text": mum},
                            "telecom": [{"system": "email", "value": mum_mail}],
                        }
                    ],
                }
            },
            {
                "resource": {
                    "resourceType": "AllergyIntolerance",
                    "code": {"coding": [{"system": "http://snomed.info/sct", "code": snomed}]},
                    "patient": {"reference": pid},
                    "reaction": [
                        {"severity": "severe", "manifestation": [{"text": "anaphylaxis"}]}
                    ],
                }
            },
        ],
    }
    t.tool(
        "fhir.search",
        {
            "resource": "Patient",
            "_id": pid.split("/")[1],
            "_revinclude": "AllergyIntolerance:patient",
        },
        bundle,
        style="oi",
    )
    t.tool(
        "labs.order",
        {"patient": pid, "loinc": loinc, "priority": "routine"},
        {"order": "LAB-26-118204", "status": "placed"},
        style="oi",
    )
    first = t.p("NAME", "Siosaia Vainikolo-Latu")
    kid_dob = t.p("DOB", "27 June 2011")
    _oi_chat(
        t,
        [
            ("system", "You summarise allergy records for the nurse."),
            ("user", "Summarise for the oral food challenge list."),
        ],
        f"{first}, born {kid_dob}, severe peanut allergy ({snomed}), anaphylaxis on record. "
        f"Specific IgE ordered ({loinc}). Mother: {mum}, reachable by e-mail only. "
        f"Home: {line}, Lower Hutt.",
        "claude-3-5-haiku",
    )


def t_voip_pbx_provisioning(t: Trace) -> None:
    """en: an IT agent provisions SIP extensions for a small accountancy office (flat gen_ai.prompt spans)."""
    t.service, t.slice = "pbx-provisioner", "it-ops"
    sec1 = t.p("SECRET", "Tq8#vLm2!pXr93zE")
    sec2 = t.p("SECRET", "h7Kd9Wq2mZs4Lx8N")
    ami = t.p("SECRET", "amiP4ss-Ruby-Kettle-71")
    trunk = t.p("SECRET", "Zk3mQ8rT1vWx6Yp2")
    who1 = t.p("NAME", "Priyanka Raghunathan")
    who2 = t.p("NAME", "Callum Drysdale")
    did1 = t.d(
        "+44 161 496 0731"
    )  # the office's published DID (Ofcom drama range), a business line
    ext = t.d("ext 2042")  # an internal extension number
    mob = t.p("PHONE", "07700 915 482")
    ip_home = t.p("IP", "86.142.77.203")
    conf = (
        "[2041]\ntype=endpoint\ncontext=office\nauth=2041-auth\naors=2041\n"
        f'callerid="{who1}" <2041>\n\n[2041-auth]\ntype=auth\nauth_type=userpass\nusername=2041\n'
        f"password={sec1}\n\n[2042]\ntype=endpoint\ncontext=office\nauth=2042-auth\n"
        f'callerid="{who2}" <2042>\n\n[2042-auth]\ntype=auth\nauth_type=userpass\nusername=2042\n'
        f"password={sec2}\n\n[sipgate-trunk]\ntype=registration\nserver_uri=sip:sipgate.co.uk\n"
        f"client_uri=sip:3917204e0@sipgate.co.uk\n\n[sipgate-auth]\ntype=auth\nusername=3917204e0\npassword={trunk}\n"
    )
    _flat_chat(
        t,
        [
            ("system", "You manage the Asterisk box at the office. Never echo passwords back."),
            (
                "user",
                f"Add desk phones for {who1} and {who2}. {t.p('NAME', 'Priyanka')} also wants her mobile {mob} on the ring group.",
            ),
        ],
        "I'll write the pjsip entries and reload.",
        "gpt-4o-2024-08-06",
    )
    t.tool(
        "ssh.write_file",
        {"host": "pbx01.lan", "path": "/etc/asterisk/pjsip_custom.conf", "content": conf},
        {"ok": True, "bytes": len(conf)},
    )
    t.tool(
        "asterisk.ami",
        {"action": "Login", "username": "flywheel", "secret": ami},
        {"Response": "Success", "Message": "Authentication accepted"},
    )
    t.tool(
        "asterisk.cli",
        {"command": "pjsip show contacts"},
        "  Contact:  2041/sip:2041@192.168.20.41:5060           Avail     12.402\n"
        f"  Contact:  2042/sip:2042@{ip_home}:49152;ob           Avail     38.117\n",
        style="spanname",
    )
    rg = t.d("ringgroup 600")  # an internal ring-group number
    _flat_chat(
        t,
        [("user", "Done? Anything odd?")],
        f"Both extensions are registered. {t.p('NAME', 'Callum')}'s phone ({ext}) is registering from a home "
        f"broadband address, {ip_home}, so he is probably working from home. I added {mob} to {rg} "
        f"behind the main number {did1}.",
        "gpt-4o-2024-08-06",
    )


def t_wallbox_installer_har(t: Trace) -> None:
    """en: a support agent debugs a failed EV-charger install booking from a HAR file the installer uploaded."""
    t.service, t.slice = "installer-portal-support", "support"
    owner = t.p("NAME", "Tadhg Brannigan")
    street = t.p(
        "ADDRESS",
        "Hollybrook Lodge, 9 Castlepark Drive, Killiney",
        [
            "Hollybrook Lodge, 9 Castlepark Drive, Killiney",
            "Hollybrook Lodge",
            "9 Castlepark Drive",
        ],
    )
    eircode = t.d("install_window=AM")  # a form field naming a booking window
    ph = t.p("PHONE", "+353 86 274 1193")
    mail = t.p("EMAIL", "tadhg.brannigan@eircom.net")
    sess = t.p(
        "SECRET", "s%3AQm9vbGVhbi1GaXJlZmx5LTQ0MjE.x7Jb2kQ0pR9wLm4TzV8nHc1sDe6fYg3aUo5iKj2Wq0"
    )
    bearer = t.p(
        "SECRET",
        "eyJraWQiOiJ3YngtMjAyNiJ9.eyJzdWIiOiJpbnN0YWxsZXItNDQxIiwic2NwIjoiYm9va2luZ3MifQ.Vb8pR2xQ9mT4kL7wZ1nC5sE3hJ6dF0gA",
    )
    form = "&".join(
        [
            f"customer_name={urlenc(owner)}",
            f"address={urlenc(street)}",
            f"phone={urlenc(ph)}",
            f"email={urlenc(mail)}",
            "charger_model=Zappi+v2.1+7kW",
            eircode,
        ]
    )
    har = {
        "log": {
            "version": "1.2",
            "creator": {"name": "Firefox", "version": "133.0"},
            "entries": [
                {
                    "startedDateTime": "2026-11-30T10:14:22.118Z",
                    "request": {
                        "method": "POST",
                        "url": "https://portal.voltfit.ie/api/v2/bookings",
                        "headers": [
                            {"name": "Authorization", "value": f"Bearer {bearer}"},
                            {"name": "Cookie", "value": f"connect.sid={sess}"},
                            {"name": "Content-Type", "value": "application/x-www-form-urlencoded"},
                        ],
                        "postData": {"mimeType": "application/x-www-form-urlencoded", "text": form},
                    },
                    "response": {"status": 422, "content": {"text": '{"error":"mpan_required"}'}},
                }
            ],
        }
    }
    model = t.d("Zappi v2.1 7kW")  # a charger model name
    mpan = t.d("MPRN field")  # the name of a missing form field
    t.user("Installer says bookings keep failing, HAR attached. What's going on?")
    t.tool(
        "attachments.read",
        {"id": "att_7Hq2", "as": "text"},
        {"name": "portal.har", "text": json.dumps(har)},
    )
    t.reply(
        f"The portal rejects the booking with 422 `mpan_required`: the form never sends the {mpan}. "
        f"The rest of the request (customer {owner}, {model}) is fine. Note the HAR also holds the "
        "installer's session cookie and bearer token, so ask them to log out to revoke it."
    )


def t_school_district_ldif(t: Trace) -> None:
    """en: an identity agent migrates school-district staff from OpenLDAP to a cloud directory (LDIF)."""
    t.service, t.slice = "directory-migration", "it-ops"
    cn1 = t.p("NAME", "Marisela Cuxil Tzoc")
    sn1 = t.p("NAME", "Cuxil Tzoc", ["Cuxil Tzoc", "Cuxil", "Tzoc"])
    adr1 = t.p(
        "ADDRESS",
        "2207 Willow Bend Rd$Greeley, CO 80634",
        ["2207 Willow Bend Rd$Greeley, CO 80634", "2207 Willow Bend Rd"],
    )
    tel1 = t.p("PHONE", "970-351-8824")
    m1 = t.p("EMAIL", "mcuxiltzoc@weld-sd6.example.org")
    cn2 = t.p("NAME", "Dorian Whitehorse")
    adr2 = t.p(
        "ADDRESS", "PO Box 1184$Evans, CO 80620", ["PO Box 1184$Evans, CO 80620", "PO Box 1184"]
    )
    tel2 = t.p("PHONE", "(970) 506-4471")
    bind = t.p("SECRET", "Gr33ley!Bind#2026")
    emp = t.d(
        "employeeNumber: 40417"
    )  # a staff number, assigned by the district (an attribute line)
    ou = t.d("ou=Maplewood Elementary")  # a school's organisational unit
    oc = t.d("objectClass: inetOrgPerson")  # a schema class name
    ldif = (
        f"dn: uid=mcuxil,{ou},dc=weld-sd6,dc=org\n{oc}\n"
        f"cn: {cn1}\nsn: {sn1}\ngivenName: {t.p('NAME', 'Marisela')}\nmail: {m1}\n"
        f"homePostalAddress: {adr1}\nhomePhone: {tel1}\n{emp}\n\n"
        f"dn: uid=dwhitehorse,ou=Transportation,dc=weld-sd6,dc=org\n{oc}\n"
        f"cn: {cn2}\nsn: {t.p('NAME', 'Whitehorse')}\ngivenName: {t.p('NAME', 'Dorian')}\nhomePostalAddress: {adr2}\nmobile: {tel2}\n"
        "employeeNumber: 40962\n"
    )
    t.user("Export the two staff records that failed the sync and tell me why.")
    t.tool(
        "ldap.search",
        {
            "uri": "ldaps://ldap1.weld-sd6.org",
            "bind_dn": "cn=sync,dc=weld-sd6,dc=org",
            "bind_pw": bind,
            "filter": "(|(uid=mcuxil)(uid=dwhitehorse))",
        },
        {"ldif": ldif, "count": 2},
    )
    t.tool(
        "entra.users.create",
        {
            "userPrincipalName": t.p("EMAIL", "mcuxil@weld-sd6.org"),
            "displayName": cn1,
            "streetAddress": t.p("ADDRESS", "2207 Willow Bend Rd"),
        },
        {
            "error": {
                "code": "Request_BadRequest",
                "message": "Property streetAddress has an invalid value: '$' is not allowed",
            }
        },
    )
    t.reply(
        f"Both failures come from the LDAP postal format: homePostalAddress uses `$` as the line separator "
        f"(RFC 4517), and the cloud directory rejects it. {t.p('NAME', 'Ms Cuxil Tzoc')} and "
        f"{t.p('NAME', 'Mr Whitehorse')} need the `$` turned into line breaks; his "
        "PO box also has to go to a different field."
    )


def t_pigeon_racing_entries(t: Trace) -> None:
    """en: a pigeon-racing federation's agent checks race entries and loft locations (span-name-only tools)."""
    t.service, t.slice = "racing-pigeon-federation", "club-admin"
    f1 = t.p("NAME", "Ewan MacAskill")
    loft1 = t.p(
        "ADDRESS",
        "Tigh na Mara, 14 Shore Road, Carradale, PA28 6SF",
        ["Tigh na Mara, 14 Shore Road, Carradale, PA28 6SF", "Tigh na Mara", "14 Shore Road"],
    )
    f2 = t.p("NAME", "Wiremu Ngata-Pryor")
    loft2 = t.p(
        "ADDRESS",
        "Flat 1/2, 33 Kelvinhaugh Street, Glasgow G3 8NU",
        ["Flat 1/2, 33 Kelvinhaugh Street, Glasgow G3 8NU", "33 Kelvinhaugh Street"],
    )
    ph1 = t.p("PHONE", "01583 431 772")
    ph2 = t.p("PHONE", "07418 302 956")
    ring1 = t.d("GB25N04512")  # a bird's leg-ring number: identifies a pigeon
    ring2 = t.d("GB24D17730")  # another pigeon's ring number
    race = t.d("Race 14 Thurso")  # a race named after its liberation point
    coords = t.d("58.5936, -3.5220")  # the race's public liberation point at Thurso harbour
    vel = t.d("1,412.337 ypm")  # a bird's velocity in yards per minute
    csv = f'ring,fancier,loft,phone\n{ring1},{f1},"{loft1}",{ph1}\n{ring2},{f2},"{loft2}",{ph2}\n'
    t.user(f"Check the entries for {race} and flag anything that breaks the loft-distance rule.")
    t.tool("entries.export", {"race": race, "format": "csv"}, {"csv": csv}, style="spanname")
    t.tool(
        "distance.calc",
        {"from": coords, "to_entry": ring1},
        {"miles": 276.41, "yards": 486481},
        style="spanname",
    )
    _oi_chat(
        t,
        [("user", "Who breaks the rule?")],
        f"{t.p('NAME', 'Mr Ngata-Pryor')} entered {ring2} from a tenement flat in Glasgow ({t.p('ADDRESS', '33 Kelvinhaugh Street')}); "
        f"the rules need a registered loft, so his entry is provisional. {t.p('NAME', 'Ewan')}'s bird {ring1} "
        f"is fine: 276.41 miles from Thurso, best recorded velocity {vel}.",
        "mistral-large-2411",
    )


def t_flight_school_voicemail(t: Trace) -> None:
    """en: a flight school's front-desk agent transcribes a voicemail from a new student pilot."""
    t.service, t.slice = "flight-school-desk", "front-desk"
    tail = t.d("N7342K")  # an aircraft's tail number (registration of a Cessna)
    t.user("There's a voicemail from a new student, can you set up her file?")
    vm = (
        "hi this is dana kealoha-brightwater calling about the private pilot course um i filled "
        "the form online but it timed out so here's everything my date of birth is the eleventh "
        "of august nineteen ninety six i live at forty two ridgecrest circle in bend oregon nine "
        "seven seven oh two my cell is five four one three eight two zero nine one seven "
        "and for the TSA thing my social is five three eight two one four four six zero "
        "i flew with your instructor on the discovery flight in november it was two hours "
        "uh the airplane was november seven three four two kilo thanks bye"
    )
    name_vm = t.p(
        "NAME",
        "dana kealoha-brightwater",
        ["dana kealoha-brightwater", "dana", "kealoha", "brightwater"],
    )
    dob_vm = t.p("DOB", "the eleventh of august nineteen ninety six")
    adr_vm = t.p(
        "ADDRESS",
        "forty two ridgecrest circle in bend oregon nine seven seven oh two",
        [
            "forty two ridgecrest circle in bend oregon nine seven seven oh two",
            "forty two ridgecrest circle",
        ],
    )
    ph_vm = t.p("PHONE", "five four one three eight two zero nine one seven")
    ssn_vm = t.p("SSN", "five three eight two one four four six zero")
    assert all(v in vm for v in (name_vm, dob_vm, adr_vm, ph_vm, ssn_vm))
    t.tool(
        "voicemail.transcribe",
        {"mailbox": "frontdesk", "msg": 31},
        {"text": vm, "confidence": 0.87},
        style="oi",
    )
    name = t.p("NAME", "Dana Kealoha-Brightwater")
    dob = t.p("DOB", "08/11/1996")
    adr = t.p("ADDRESS", "42 Ridgecrest Cir, Bend, OR 97702")
    ph = t.p("PHONE", "541-382-0917")
    ssn = t.p("SSN", "538-21-4460")
    hrs = t.d("2.0 hrs dual")  # logged flight time
    t.tool(
        "students.create",
        {
            "name": name,
            "dob": dob,
            "address": adr,
            "phone": ph,
            "tsa": {"citizenship": "US", "ssn": ssn},
            "course": "PPL-Part61",
            "prior_time": hrs,
            "aircraft": tail,
        },
        {"student_id": "STU-2026-0419", "status": "pending_medical"},
    )
    t.reply(
        f"File created for {name} (STU-2026-0419). I converted the spoken details: born {dob}, "
        f"{adr}, {ph}. Her discovery flight ({hrs}) was in {tail}. She still needs a third-class "
        "medical before solo; the TSA citizenship check has what it needs."
    )


def t_au_pair_matching(t: Trace) -> None:
    """en: an au pair agency matches candidates to a host family; profiles come back as YAML."""
    t.service, t.slice = "au-pair-matching", "placements"
    c1 = t.p(
        "NAME", "Ña Arami Benítez Ortiz", ["Ña Arami Benítez Ortiz", "Arami", "Benítez", "Ortiz"]
    )
    c1_dob = t.p("DOB", "2003-02-19")
    c1_mail = t.p("EMAIL", "arami.benitez.o@gmail.com")
    c2 = t.p("NAME", "Kanokwan Srisawat")
    c2_dob = t.p("DOB", "1999-11-08")
    c2_pin = t.p("NATIONAL_ID", "1-1037-01842-15-6")
    host1 = t.p("NAME", "Gideon Farrow-Lindqvist")
    host2 = t.p("NAME", "Imogen Farrow-Lindqvist")
    home = t.p("ADDRESS", "1190 Quail Hollow Lane, Chapel Hill, NC 27514")
    kid = t.p("NAME", "Theo")
    kid_dob = t.p("DOB", "2021-04-30")
    host_ph = t.p("PHONE", "+1 919 442 0863")
    lang = t.d("Guaraní")  # a language the candidate speaks, not a name
    visa = t.d("J-1")  # a visa category
    fee = t.d("$10,995")  # the agency's programme fee
    yaml = (
        "candidates:\n"
        f"  - name: {c1}\n    dob: {c1_dob}\n    country: PY\n    languages: [es, {lang}, en-B2]\n"
        f"    email: {c1_mail}\n    infant_experience: true\n"
        f"  - name: {c2}\n    dob: {c2_dob}\n    country: TH\n    national_id: {c2_pin}\n"
        "    languages: [th, en-C1]\n    driving: international permit\n"
        "host_family:\n"
        f'  parents: [{host1}, {host2}]\n  address: {home}\n  phone: "{host_ph}"\n'
        f"  children:\n    - {{name: {kid}, born: {kid_dob}}}\n"
        f'  programme: {{visa: {visa}, fee: "{fee}"}}\n'
    )
    t.user(f"Which candidate fits the {t.p('NAME', 'Farrow-Lindqvist')} family best?")
    t.tool("crm.export_profiles", {"family": "FL-2026-118", "format": "yaml"}, yaml)
    t.reply(
        f"{t.p('NAME', 'Arami')} is the better fit: she has infant experience and {kid}"
        f" is only four. She turns 24 on {t.p('DOB', 'February 19')} — within the {visa} age limit. "
        f"{t.p('NAME', 'Kanokwan')} drives, but the family did not ask for a driver."
    )


def t_mealkit_dsar_export(t: Trace) -> None:
    """en: a privacy agent assembles a data-subject access export for a meal-kit subscriber (base64 JSON)."""
    t.service, t.slice = "privacy-requests", "privacy"
    subj = t.p("NAME", "Oluwadamilare Ashby-Nwosu")
    mail = t.p("EMAIL", "dami.ashbynwosu@protonmail.com")
    dob = t.p("DOB", "1990-12-02")
    ship = t.p(
        "ADDRESS",
        "Flat 6, Pelham Court, 41 Tivoli Road, Brighton BN1 5BH",
        [
            "Flat 6, Pelham Court, 41 Tivoli Road, Brighton BN1 5BH",
            "Pelham Court",
            "41 Tivoli Road",
        ],
    )
    bill = t.p("ADDRESS", "12a Coldean Lane, Brighton BN1 9GD")
    ph = t.p("PHONE", "+447911204386")
    ip1 = t.p("IP", "2a00:23c7:8e14:5d01:9c4a:1f2e:77b0:41d3")
    ip2 = t.p("IP", "81.98.203.114")
    reset = t.p("SECRET", "prt_7vQ2mX9kLr4Tz8Wc1NbY6hJd3Fs0Pa5E")
    plan = t.d("Family Box 4x3")  # a subscription plan name
    order = t.d("ORD-8841-2207")  # an order number
    event = t.d("Order Completed")  # an analytics event name
    sub = {
        "profile": {
            "full_name": subj,
            "email": mail,
            "date_of_birth": dob,
            "phone": ph,
            "marketing_opt_in": False,
            "plan": plan,
        },
        "addresses": [{"type": "delivery", "text": ship}, {"type": "billing", "text": bill}],
        "logins": [
            {"at": "2026-11-28T19:02:11Z", "ip": ip1, "ua": "Firefox/133"},
            {"at": "2026-10-03T07:44:51Z", "ip": ip2, "ua": "MealKitApp/5.12.0 (iOS 18.1)"},
        ],
        "security": {"pending_password_reset_token": reset, "mfa": "sms"},
        "analytics": [
            {"type": "identify", "traits": {"email": mail, "plan": plan}},
            {"type": "track", "event": event, "properties": {"order_id": order, "revenue": 62.49}},
        ],
    }
    blob = b64(json.dumps(sub, ensure_ascii=False))
    t.user(
        "DSAR for ticket PRV-3391 is due Friday. Build the export and check it before it goes out."
    )
    t.tool(
        "warehouse.dsar_collect",
        {"subject_email": mail, "ticket": "PRV-3391"},
        {"file": "dsar-PRV-3391.json", "encoding": "base64", "data": blob},
    )
    t.tool(
        "dsar.lint",
        {"ticket": "PRV-3391", "rules": ["no-internal-secrets", "no-third-party-data"]},
        {
            "findings": [
                {"rule": "no-internal-secrets", "path": "security.pending_password_reset_token"}
            ]
        },
    )
    t.reply(
        f"The export for {subj} is ready except for one finding: it contains a live password-reset token "
        f"({reset}). I'll drop the security block and invalidate the token before sending. Everything else "
        f"is theirs to see: both addresses (delivery at {t.p('ADDRESS', '41 Tivoli Road')}), the login history "
        f"from {ip1} and {ip2}, the plan ({plan}) and the analytics events ({event}, {order})."
    )


# ---------------------------------------------------------------------------- de


def t_elterngeld_antrag(t: Trace) -> None:
    """de: ein Assistent füllt einen Elterngeldantrag aus; die Daten kommen als XML aus dem Formularserver."""
    t.service, t.slice = "elterngeld-assistent", "familie"
    mutter = t.p("NAME", "Svenja Krawczyk-Oberländer")
    vater = t.p("NAME", "Dragan Oberländer")
    kind = t.p("NAME", "Ida Malin")
    kind_geb = t.p("DOB", "2026-10-17")
    m_geb = t.p("DOB", "1991-03-08")
    v_geb = t.p("DOB", "1988-12-22")
    idnr1 = t.p("NATIONAL_ID", "47183029465")
    idnr2 = t.p("NATIONAL_ID", "39514702838")
    iban_ = t.p("IBAN", "DE53 3704 0044 0532 8719 04")
    adr = t.p(
        "ADDRESS",
        "Vorgebirgstraße 118, 50969 Köln",
        ["Vorgebirgstraße 118, 50969 Köln", "Vorgebirgstraße 118"],
    )
    mail = t.p("EMAIL", "svenja.krawczyk@posteo.de")
    az = t.d("EG-2026-0048817")  # Aktenzeichen der Elterngeldstelle
    zeitraum = t.d("17.10.2026 bis 16.10.2027")  # Bezugszeitraum, kein Geburtsdatum
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<antrag xmlns="urn:xoev-de:elterngeld:2.1">'
        f"<kind><vorname>{kind}</vorname><familienname>{t.p('NAME', 'Oberländer')}</familienname><geburtsdatum>{kind_geb}</geburtsdatum></kind>"
        f'<elternteil rolle="1"><name>{mutter}</name><geburtsdatum>{m_geb}</geburtsdatum><steuerId>{idnr1}</steuerId></elternteil>'
        f'<elternteil rolle="2"><name>{vater}</name><geburtsdatum>{v_geb}</geburtsdatum><steuerId>{idnr2}</steuerId></elternteil>'
        f"<anschrift>{adr}</anschrift><bankverbindung><iban>{iban_}</iban></bankverbindung>"
        f"<kontakt><email>{mail}</email></kontakt><bezug>{zeitraum}</bezug></antrag>"
    )
    t.user("Kannst du prüfen, ob unser Elterngeldantrag vollständig ist, bevor ich ihn abschicke?")
    t.tool(
        "formserver.entwurf_laden",
        {"formular": "elterngeld-nrw", "entwurf": "d-7731"},
        {"xml": xml},
    )
    t.tool(
        "elster.idnr_pruefen", {"idnr": [idnr1, idnr2]}, {"gueltig": [True, True]}, style="spanname"
    )
    t.reply(
        f"Der Antrag ist fast vollständig. Für {t.p('NAME', 'Ida Malin Oberländer')} (geboren am "
        f"{t.p('DOB', '17. Oktober 2026')}) fehlt nur noch die Geburtsbescheinigung als Anhang. "
        f"Beide Steuer-IDs sind formal gültig, das Konto {iban_} läuft auf {t.p('NAME', 'Frau Krawczyk-Oberländer')}. "
        f"Bezugszeitraum {zeitraum}; vorläufiges Aktenzeichen {az}."
    )


def t_erbschein_nachlass(t: Trace) -> None:
    """de: eine Kanzlei-Assistenz bereitet einen Erbscheinsantrag vor (Gesprächsnotiz, dann Tabelle der Erben)."""
    t.service, t.slice = "kanzlei-nachlass", "recht"
    erbl = t.p("NAME", "Walburga Pfefferkorn")
    tod = t.d("verstorben am 2. September 2026")  # Sterbedatum: kein Geburtsdatum
    e1 = t.p("NAME", "Reinhold Pfefferkorn")
    e1_geb = "geb. " + t.p("DOB", "11.06.1959")
    e1_adr = t.p(
        "ADDRESS",
        "Am Mühlgraben 4a, 97318 Kitzingen",
        ["Am Mühlgraben 4a, 97318 Kitzingen", "Am Mühlgraben 4a"],
    )
    e2 = t.p("NAME", "Gudrun Esposito-Pfefferkorn")
    e2_geb = "geb. " + t.p("DOB", "30.01.1963")
    e2_adr = t.p(
        "ADDRESS",
        "Hinter der Kirche 7, 36088 Hünfeld-Mackenzell",
        ["Hinter der Kirche 7, 36088 Hünfeld-Mackenzell", "Hinter der Kirche 7"],
    )
    e3 = t.p("NAME", "Lukas Pfefferkorn")
    e3_geb = "am " + t.p("DOB", "3.10.1990") + " geboren"
    e3_tel = t.p("PHONE", "0170 / 482 91 36")
    nr = t.d("VI 418/26")  # Aktenzeichen des Nachlassgerichts
    wert = t.d("ca. 212.000 €")  # geschätzter Nachlasswert
    haus = t.d("Flurstück 1183/2")  # ein Grundstück im Grundbuch, keine Person
    notiz = (
        f"Telefonnotiz 28.11.: {t.p('NAME', 'Herr Pfefferkorn')} ruft an wegen Nachlass seiner Mutter {erbl}, {tod}. "
        f"Testament gibt es keins, also gesetzliche Erbfolge: er selbst, die Schwester und der Sohn des "
        f"vorverstorbenen Bruders ({e3}, der ist {e3_geb}, Handy {e3_tel}). Nachlass {wert}, dazu {haus}."
    )
    tabelle = (
        "| Erbe | Geburtsdatum | Anschrift | Quote |\n|---|---|---|---|\n"
        f"| {e1} | {e1_geb} | {e1_adr} | 1/3 |\n"
        f"| {e2} | {e2_geb} | {e2_adr} | 1/3 |\n"
        f"| {e3} | {t.p('DOB', '03.10.1990')} | c/o Kanzlei | 1/3 |\n"
    )
    t.user(f"Bitte den Erbscheinsantrag im Fall {nr} vorbereiten.")
    t.tool("akte.notizen", {"az": nr}, {"notizen": [notiz]}, style="oi")
    t.tool("akte.erben_tabelle", {"az": nr, "format": "markdown"}, {"tabelle": tabelle}, style="oi")
    t.reply(
        f"Entwurf steht: drei Erben zu je einem Drittel nach {t.p('NAME', 'Frau Pfefferkorn')}. Für den Enkel "
        "fehlt noch eine Meldeadresse, in der Tabelle steht nur die Kanzlei. Danach kann der Antrag ans "
        f"Nachlassgericht ({nr})."
    )


def t_sperrmuell_termin(t: Trace) -> None:
    """de: ein Abfall-Chatbot bucht eine Sperrmüllabholung; die Bürgerin schreibt formlos im Chat."""
    t.service, t.slice = "abfallberatung-bot", "buergerservice"
    nm = t.p("NAME", "Heike Szymaniak")
    adr = t.p(
        "ADDRESS",
        "Wilhelm-Leuschner-Str. 27, Hinterhof, 64347 Griesheim",
        ["Wilhelm-Leuschner-Str. 27, Hinterhof, 64347 Griesheim", "Wilhelm-Leuschner-Str. 27"],
    )
    tel = t.p("PHONE", "06155 / 8 47 21")
    sofa = t.d("Ecksofa Lindholm")  # ein Möbelname aus dem Katalog, keine Person
    termin = t.d("Dienstag, 15.12.2026")  # Abholtermin
    t.user(
        f"hallo ich bins {nm.lower()} ich wohn in der wilhelm-leuschner-str 27 im hinterhof und hab ein "
        f"{sofa} und zwei matratzen die wegmüssen. tel {tel}",
        system="Du bist der Chatbot des Zweckverbands Abfall. Sprich die Leute mit Namen an.",
    )
    t.p("NAME", nm.lower(), [nm.lower(), "heike", "szymaniak"])
    t.p("ADDRESS", "wilhelm-leuschner-str 27", ["wilhelm-leuschner-str 27"])
    t.tool(
        "sperrmuell.termine",
        {"plz": "64347", "volumen_m3": 3},
        {"frei": [termin, "Freitag, 18.12.2026"]},
    )
    t.tool(
        "sperrmuell.buchen",
        {
            "name": nm,
            "anschrift": adr,
            "telefon": tel,
            "gegenstaende": [sofa, "2 Matratzen"],
            "termin": termin,
        },
        {"auftrag": "SPM-26-44817", "hinweis": "bis 6 Uhr an die Straße stellen"},
    )
    t.reply(
        f"Liebe {t.p('NAME', 'Frau Szymaniak')}, Ihr Sperrmüll wird am {termin} abgeholt (Auftrag SPM-26-44817). "
        "Bitte stellen Sie alles bis 6 Uhr an die Straße, nicht in den Hinterhof."
    )


def t_tagespflege_vertrag(t: Trace) -> None:
    """de: eine Tagesmutter lässt einen Betreuungsvertrag aus einem gescannten Formular übernehmen (OCR)."""
    t.service, t.slice = "kindertagespflege", "vertraege"
    kind = t.p("NAME", "Emil Aydın-Hauschild")
    geb = t.p("DOB", "5. April 2024")
    m = t.p("NAME", "Derya Aydın-Hauschild")
    v = t.p("NAME", "Jannik Hauschild")
    adr = t.p(
        "ADDRESS",
        "Lortzingstraße 9, 3. OG rechts, 04105 Leipzig",
        ["Lortzingstraße 9, 3. OG rechts, 04105 Leipzig", "Lortzingstraße 9"],
    )
    tel = t.p("PHONE", "0341 / 56 20 87 14")
    tel2 = t.p("PHONE", "0176 2294 8830")
    iban_ = t.p("IBAN", "DE51 4306 0967 1142 8733 00")
    abh = t.p("NAME", "Oma Gülten", ["Oma Gülten", "Gülten"])
    gutschein = t.d("KTP-LE-2026/0831")  # Nummer des Betreuungsbescheids der Stadt
    stunden = t.d("35 Wochenstunden")  # Betreuungsumfang, eine Stundenzahl
    ocr = (
        "BETREUUNGSVERTRAG Kindertagespflege\n"
        f"Name des Kindes: {kind}    geboren am: {geb}\n"
        f"Erziehungsberechtigte: {m} / {v}\n"
        f"Anschrift: {adr}\nTelefon: {tel} Mobil: {tel2}\n"
        f"Abholberechtigt außer den Eltern: {abh} (Großmutter)\n"
        f"Bescheid-Nr.: {gutschein}   Umfang: {stunden}\n"
        f"SEPA-Lastschrift Essensgeld: IBAN {iban_}\n"
    )
    t.user(
        "Hab den Vertrag von Familie Aydın-Hauschild eingescannt, trag bitte alles ins Kinderbuch ein."
    )
    t.p("NAME", "Aydın-Hauschild")
    t.tool(
        "scan.ocr", {"datei": "vertrag_2026-12-01.pdf", "sprache": "deu"}, {"text": ocr}, style="oi"
    )
    t.tool(
        "kinderbuch.anlegen",
        {
            "kind": kind,
            "geburtsdatum": "2024-04-05",
            "eltern": [m, v],
            "abholberechtigt": [abh],
            "bescheid": gutschein,
        },
        {"ok": True, "id": "K-07"},
        style="oi",
    )
    t.p("DOB", "2024-04-05")
    t.reply(
        f"Eingetragen: {t.p('NAME', 'Emil')} ist ab Januar bei dir, {stunden} laut Bescheid {gutschein}. Abholen dürfen "
        f"die Eltern und {abh}. Das Essensgeld wird per Lastschrift eingezogen."
    )


def t_ansible_inventar_chat(t: Trace) -> None:
    """de: ein Ops-Assistent in einem Team-Chat soll ein Ansible-Inventar reparieren; jemand postet es mit Passwörtern."""
    t.service, t.slice = "ops-chat-bot", "infrastruktur"
    a1 = t.p("NAME", "Thorsten Węglarz")
    a2 = t.p("NAME", "Malte Brinkhaus")
    pw1 = t.p("SECRET", "Kaffee-Tasse!17-Tonne")
    pw2 = t.p("SECRET", "Wq8#zL2m@Rt5")
    snmp = t.p("SECRET", "nrw-m0n1t0r-ro-8841")
    idrac = t.p("SECRET", "calvin-Ostsee7")
    ip1 = t.p("IP", "85.214.132.17")
    ip2 = t.p("IP", "2a02:8070:a181:3c00::8")
    ver = t.d("ansible-core 2.17.6")  # Versionsangabe
    host = t.d("db-buchhaltung-02")  # Hostname: bezeichnet einen Server
    inv = (
        "[datenbanken]\n"
        f"{host} ansible_host={ip1} ansible_user=deploy ansible_password={pw1} ansible_become_pass={pw2}\n\n"
        "[datenbanken:vars]\n"
        f"snmp_community={snmp}\nidrac_password={idrac}\nidrac_host=[{ip2}]\n"
    )
    chat = [
        {
            "user": "t.weglarz",
            "display": a1,
            "text": "kann der bot mal schauen warum das playbook hängt? inventar anbei",
        },
        {"user": "t.weglarz", "display": a1, "text": "```ini\n" + inv + "```"},
        {
            "user": "m.brinkhaus",
            "display": a2,
            "text": "thorsten, bitte keine passwörter in den channel 🙈",
        },
    ]
    t.p("NAME", "thorsten", ["thorsten"])
    t.tool("mattermost.thread", {"channel": "ops-infra", "root": "p8x2k"}, {"posts": chat})
    t.tool(
        "ansible.ping",
        {"inventory": "inline", "limit": host},
        f"{host} | UNREACHABLE! => ssh: connect to host {ip1} port 22: Connection timed out\n{ver}",
        style="spanname",
    )
    t.reply(
        f"Das Playbook hängt nicht am Inventar: {host} ist per SSH auf {ip1} nicht erreichbar (Timeout). "
        f"{t.p('NAME', 'Malte')} hat recht, die Passwörter aus dem Post sind jetzt im Chatverlauf: bitte das "
        "deploy-Passwort, das become-Passwort, die SNMP-Community und das iDRAC-Passwort rotieren und in "
        "ansible-vault verschieben."
    )


def t_meldezettel_wien(t: Trace) -> None:
    """de-AT: eine Hausverwaltungs-Assistenz liest einen Meldezettel (OCR) für einen neuen Mieter ein."""
    t.service, t.slice = "hausverwaltung-wien", "mieter"
    fam = t.p("NAME", "HOLZKNECHT", ["HOLZKNECHT"])
    vorn = t.p("NAME", "Ferdinand Maximilian", ["Ferdinand Maximilian", "Ferdinand", "Maximilian"])
    geb = t.p("DOB", "14.05.1981")
    ort = t.d("Geburtsort: Bruck an der Mur")  # ein Ort, keine Person
    svnr = t.p("NATIONAL_ID", "4824 140581")
    adr = t.p(
        "ADDRESS",
        "Hasnerstraße 61/2/14, 1160 Wien",
        ["Hasnerstraße 61/2/14, 1160 Wien", "Hasnerstraße 61/2/14"],
    )
    vorher = t.p(
        "ADDRESS",
        "Grazer Straße 12, 8600 Bruck an der Mur",
        ["Grazer Straße 12, 8600 Bruck an der Mur", "Grazer Straße 12"],
    )
    tel = t.p("PHONE", "+43 664 1829 447")
    top = t.d("Top 14")  # Nummer einer Wohnung im Haus, ohne Adresse
    ocr = (
        "MELDEZETTEL  für Hauptwohnsitz\n"
        f"FAMILIENNAME: {fam}   VORNAME: {vorn}\n"
        f"Geburtsdatum: {geb}   {ort}   Geschlecht: m\n"
        "Staatsangehörigkeit: Österreich   Reisepass Nr.: —\n"
        f"ANMELDUNG der Unterkunft in: {adr}\n"
        f"Hauptwohnsitz bisher: {vorher}\n"
        "Unterkunftgeber: Hausverwaltung Gruber & Partner   Datum: 01.12.2026\n"
    )
    t.user(
        f"Neuer Mieter für {top} in der Hasnerstraße, Meldezettel liegt bei. Bitte Mieterstamm anlegen."
    )
    t.tool("dokumente.ocr", {"datei": "meldezettel.jpg"}, {"text": ocr, "konfidenz": 0.91})
    t.tool(
        "mieterstamm.anlegen",
        {"name": f"{vorn} {fam}", "einheit": top, "svnr": svnr, "telefon": tel},
        {"mieter_nr": "M-16-0442"},
    )
    t.reply(
        f"Angelegt: {t.p('NAME', 'Herr Holzknecht')} (geb. am {t.p('DOB', '14. Mai 1981')}) für {top}, "
        "Mieternummer M-16-0442. Den Meldezettel habe ich als unterschrieben markiert."
    )


def t_krankenkasse_wechsel(t: Trace) -> None:
    """de-CH: ein Vergleichsportal-Assistent bereitet einen Krankenkassenwechsel für eine Familie vor (JSON in JSON)."""
    t.service, t.slice = "praemienvergleich", "versicherung"
    p1 = t.p("NAME", "Reto Caduff-Zgraggen")
    p2 = t.p("NAME", "Sabrina Zgraggen")
    k1 = t.p("NAME", "Nina")
    ahv1 = t.p("NATIONAL_ID", "756.4183.2775.10")
    geb1 = t.p("DOB", "22.11.1984")
    geb3 = t.p("DOB", "09.07.2016")
    adr = t.p(
        "ADDRESS",
        "Rebhaldenstrasse 3, 8853 Lachen SZ",
        ["Rebhaldenstrasse 3, 8853 Lachen SZ", "Rebhaldenstrasse 3"],
    )
    tel = t.p("PHONE", "079 418 22 93")
    mail = t.p("EMAIL", "reto.caduff@bluewin.ch")
    praemie = t.d("CHF 412.85")  # Monatsprämie
    franchise = t.d("Franchise 2500")  # Selbstbehalt eines Tarifs in Franken
    modell = t.d("Telmed Plus")  # Name eines Versicherungsmodells
    personen = json.dumps(
        [
            {"name": p1, "geburtsdatum": geb1, "ahv": ahv1, "franchise": 2500},
            {"name": p2, "geburtsdatum": t.p("DOB", "1986"), "franchise": 300},
            {"name": f"{k1} Caduff", "geburtsdatum": geb3, "franchise": 0},
        ],
        ensure_ascii=False,
    )
    t.p("NAME", f"{k1} Caduff")
    t.tool(
        "offerte.anfrage",
        {
            "plz": "8853",
            "haushalt": personen,
            "kontakt": json.dumps({"adresse": adr, "tel": tel, "mail": mail}),
        },
        {
            "offerten": [
                {"kasse": "Sanacare", "modell": modell, "praemie": praemie, "franchise": franchise}
            ]
        },
    )
    t.reply(
        f"Günstigstes Angebot für Familie {t.p('NAME', 'Caduff-Zgraggen')}: {modell} bei {praemie} im Monat, "
        f"{franchise} für {t.p('NAME', 'Reto')}. Für {k1} gilt die Kinderprämie. Die Kündigung der alten Kasse "
        "muss bis 30. November eingegangen sein; dafür ist es dieses Jahr zu spät."
    )


def t_schachverein_turnier(t: Trace) -> None:
    """de: ein Vereinsassistent prüft Anmeldungen zur Jugend-Stadtmeisterschaft eines Schachvereins."""
    t.service, t.slice = "schachverein-assistent", "verein"
    s1 = t.p("NAME", "Konstantin Reschetnikow")
    s1_geb = t.p("DOB", "17.08.2012")
    s2 = t.p("NAME", "Mai Linh Trautwein")
    s2_geb = t.p("DOB", "2014-01-03")
    s3 = t.p("NAME", "Jonte Ahlers")
    s3_geb = t.p("DOB", "Jg. 2009", ["Jg. 2009", "2009"])
    e1 = t.p("NAME", "Olga Reschetnikowa")
    e1_tel = t.p("PHONE", "0152-27448193")
    e1_mail = t.p("EMAIL", "olga.reschetnikowa@web.de")
    eroeff1 = t.d("Caro-Kann")  # eine Eröffnung, nach zwei Schachspielern des 19. Jh. benannt
    eroeff2 = t.d("Sizilianisch, Najdorf-Variante")  # Eröffnungsvariante
    dwz = t.d("DWZ 1412")  # Wertungszahl
    ak = t.d("U14")  # Altersklasse
    csv = (
        "Name;Geburtsdatum;DWZ;Verein;Kontakt\n"
        f"{s1};{s1_geb};1412;SK Turm Bremen;{e1} {e1_tel}\n"
        f"{s2};{s2_geb};1088;SK Turm Bremen;\n"
        f"{s3};{s3_geb};1630;SV Werder;\n"
    )
    t.user(f"Sind alle drei Anmeldungen für die {ak} zulässig?")
    t.tool(
        "turnier.anmeldungen",
        {"turnier": "JSM-2027", "format": "csv"},
        {"csv": csv, "kontakt_mail": e1_mail},
    )
    t.tool(
        "dsb.spielersuche",
        {"name": s3},
        {"treffer": [{"name": s3, "verein": "SV Werder", "dwz": 1630}]},
        style="spanname",
    )
    t.reply(
        f"Nein: {t.p('NAME', 'Jonte')} ist {s3_geb} und damit zu alt für die {ak}. {t.p('NAME', 'Konstantin')} ({dwz}) und "
        f"{t.p('NAME', 'Mai Linh')} sind zulässig. Für die Analyse am Samstag stehen {eroeff1} und "
        f"{eroeff2} auf dem Plan."
    )


def t_getraenke_lieferdienst(t: Trace) -> None:
    """de: ein Getränke-Lieferdienst prüft Bestellungen mit Altersnachweis und richtet die Fahrer-App ein."""
    t.service, t.slice = "getraenke-lieferdienst", "bestellungen"
    k1 = t.p("NAME", "Levin Schimmelpfennig")
    k1_geb = t.p("DOB", "02.03.2009")
    k1_adr = t.p(
        "ADDRESS", "Eulenkamp 14b, 22049 Hamburg", ["Eulenkamp 14b, 22049 Hamburg", "Eulenkamp 14b"]
    )
    k2 = t.p("NAME", "Annegret Wohlfahrt-Ilić")
    k2_geb = t.p("DOB", "Geburtstag 23.9.1948", ["Geburtstag 23.9.1948", "23.9.1948"])
    k2_adr = t.p(
        "ADDRESS",
        "Am Stadtrand 52, Haus 3, Klingel Ilić, 22047 Hamburg",
        ["Am Stadtrand 52, Haus 3, Klingel Ilić, 22047 Hamburg", "Am Stadtrand 52"],
    )
    k2_tel = t.p("PHONE", "040 / 69 44 18 27")
    fahrer = t.p("NAME", "Kemal Doğrusöz")
    lex = t.p("SECRET", "lxo_Zk3mQ8rT1vWx6Yp2Nb7Hc4Js9Lf5Dg0Ae3")
    kasse = t.p("SECRET", "Apfelschorle#Sprudel71")
    tablet = t.p("SECRET", "58 41 93")
    kiste = t.d("Kiste Fritz-Kola 24x0,33")  # ein Produkt
    pils = t.d("Jever Pilsener 20x0,5")  # ein Produkt
    tour = t.d("Tour Bramfeld-Nord")  # Name einer Liefertour
    bestellungen = [
        {"kunde": k1, "geburtsdatum": k1_geb, "lieferadresse": k1_adr, "artikel": [pils]},
        {
            "kunde": k2,
            "notiz": k2_geb,
            "lieferadresse": k2_adr,
            "telefon": k2_tel,
            "artikel": [kiste],
        },
    ]
    t.user(f"Prüf die Bestellungen für die {tour} und richte {fahrer} die Fahrer-App ein.")
    t.tool("shop.bestellungen", {"tour": tour, "status": "offen"}, {"bestellungen": bestellungen})
    t.tool(
        "lexoffice.rechnungen",
        {"api_key": lex, "kunden": [k1, k2]},
        {"angelegt": 1, "abgelehnt": 1},
        style="spanname",
    )
    t.tool(
        "fahrerapp.konto",
        {"fahrer": fahrer, "kassensystem_passwort": kasse},
        {"ok": True, "tablet_pin": tablet},
        style="spanname",
    )
    t.reply(
        f"Die Bestellung von {t.p('NAME', 'Levin')} habe ich storniert: laut Geburtsdatum ist er 17 und darf kein "
        f"{pils} bekommen. {t.p('NAME', 'Frau Wohlfahrt-Ilić')} bekommt ihre {kiste}; bitte bei {t.p('NAME', 'Ilić')} klingeln. "
        f"{t.p('NAME', 'Kemal')} kann sich anmelden, das Passwort fürs Kassensystem lautet {kasse}, "
        f"die Tablet-PIN ist {tablet}."
    )


# ---------------------------------------------------------------------------- fr


def t_commissaire_de_justice(t: Trace) -> None:
    """fr: un assistant d'étude de commissaire de justice prépare une signification (recouvrement)."""
    t.service, t.slice = "etude-recouvrement", "juridique"
    deb = t.p("NAME", "Guénolé Le Bihan-Quéré")
    deb_nais = t.p(
        "DOB", "né le 4 juin 1977 à Quimperlé", ["né le 4 juin 1977 à Quimperlé", "4 juin 1977"]
    )
    adr = t.p("ADDRESS", "Kerhuel, 29300 Rédené", ["Kerhuel, 29300 Rédené", "Kerhuel"])
    adr2 = t.p("ADDRESS", "7 impasse des Mouettes, 56100 Lorient")
    tel = t.p("PHONE", "06 71 28 44 90")
    iban_ = t.p("IBAN", "FR76 1027 8000 2100 0204 8175 217")
    cred = t.d("SARL Menuiserie de l'Aven")  # le créancier est une société
    dossier = t.d("dossier 26/1184")  # numéro de dossier de l'étude
    montant = t.d("3 482,17 €")  # montant de la créance
    titre = t.d("jugement du 12 mars 2026")  # date d'un jugement, pas une naissance
    fiche = (
        f"DÉBITEUR : {deb}, {deb_nais}\n"
        f"Dernier domicile connu : {adr}\n"
        f"Enquête voisinage : aurait déménagé chez sa compagne, {adr2} (à vérifier)\n"
        f"Tél. relevé sur un devis : {tel}\nCompte saisi : {iban_}\n"
        f"Créancier : {cred} — titre : {titre} — {montant}"
    )
    t.user(f"Prépare la signification pour le {dossier}, on part sur quelle adresse ?")
    t.tool("etude.fiche_dossier", {"ref": dossier}, {"fiche": fiche}, style="oi")
    t.tool(
        "ficoba.consultation",
        {"iban": iban_},
        {"titulaire_confirme": True, "domiciliation": "CMB Lorient"},
        style="oi",
    )
    t.reply(
        f"Je propose de signifier d'abord à Lorient, au {t.p('ADDRESS', '7 impasse des Mouettes')} : le compte de "
        f"{t.p('NAME', 'M. Le Bihan-Quéré')} est domicilié à l'agence CMB de Lorient, ce qui conforte l'enquête de voisinage. "
        f"Si personne, procès-verbal de recherches infructueuses à {t.p('ADDRESS', 'Kerhuel')}. Somme due : {montant} ({titre})."
    )


def t_dossier_mdph_xfdf(t: Trace) -> None:
    """fr: une assistante sociale fait vérifier un formulaire Cerfa MDPH exporté en XFDF."""
    t.service, t.slice = "assistante-sociale", "social"
    enf = t.p("NAME", "Anaïs Ratsimbazafy")
    nais = t.p("DOB", "21/09/2015")
    nir = t.p("NATIONAL_ID", "2 08 08 31 555 041 53")
    par = t.p("NAME", "Hery Ratsimbazafy")
    adr = t.p(
        "ADDRESS",
        "Résidence Les Tilleuls, bât. D, 12 chemin de Lasbordes, 31130 Balma",
        [
            "Résidence Les Tilleuls, bât. D, 12 chemin de Lasbordes, 31130 Balma",
            "Résidence Les Tilleuls",
            "12 chemin de Lasbordes",
        ],
    )
    tel = t.p("PHONE", "+33 (0)6 52 19 83 07")
    med = t.p("NAME", "Dr Castagné-Vidal")
    cerfa = t.d("Cerfa 15692*01")  # numéro du formulaire
    aeeh = t.d("AEEH")  # nom d'une allocation
    caf = t.d("article L541-1 du code de la sécurité sociale")  # un article de loi
    xfdf = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<xfdf xmlns="http://ns.adobe.com/xfdf/"><fields>'
        f'<field name="A1_nom_prenom"><value>{enf}</value></field>'
        f'<field name="A1_date_naissance"><value>{nais}</value></field>'
        f'<field name="A1_num_secu"><value>{nir}</value></field>'
        f'<field name="B2_representant"><value>{par}</value></field>'
        f'<field name="B2_adresse"><value>{adr}</value></field>'
        f'<field name="B2_tel"><value>{tel}</value></field>'
        f'<field name="F_certificat_medecin"><value>{med}</value></field>'
        f'<field name="G_demande"><value>{aeeh}</value></field>'
        "</fields></xfdf>"
    )
    t.user(f"Tu peux vérifier le {cerfa} de la famille avant dépôt ? Base : {caf}.")
    t.tool(
        "pdf.exporter_champs",
        {"fichier": "mdph_ratsimbazafy.pdf", "format": "xfdf"},
        {"xfdf": xfdf},
    )
    t.tool(
        "nir.verifier_cle",
        {"nir": nir},
        {
            "valide": False,
            "raison": "le NIR indique une naissance en 2008, la date saisie est 2015",
        },
        style="spanname",
    )
    t.reply(
        f"Un problème bloquant : le numéro de sécurité sociale saisi pour {t.p('NAME', 'Anaïs')} ne correspond pas à sa "
        f"date de naissance ({t.p('DOB', '21 septembre 2015')}). C'est sans doute le NIR de sa sœur aînée ou une "
        f"erreur de saisie ; il faut celui de l'attestation de {t.p('NAME', 'M. Ratsimbazafy')}. Le reste "
        f"(demande d'{aeeh}, certificat du {med}) est complet."
    )


def t_indemnisation_retard_train(t: Trace) -> None:
    """fr: un agent de service client traite une demande d'indemnisation après un train très en retard."""
    t.service, t.slice = "relation-client-ferroviaire", "reclamations"
    v1 = t.p("NAME", "Jeanne-Aïssatou Diarra-Leclerc")
    v2 = t.p("NAME", "Ousmane Diarra-Leclerc")
    nais = t.p("DOB", "12/01/1958")
    mail = t.p("EMAIL", "ja.diarra-leclerc@laposte.net")
    iban_ = t.p("IBAN", "FR76 1007 8006 2300 0316 4820 536")
    adr = t.p(
        "ADDRESS",
        "18 bis rue Pierre-Sémard, 21000 Dijon",
        ["18 bis rue Pierre-Sémard, 21000 Dijon", "18 bis rue Pierre-Sémard"],
    )
    pnr = t.d("QXKT7P")  # référence de dossier de voyage
    train = t.d("TGV INOUI 6703")  # numéro de train
    carte = t.d("Carte Avantage Senior")  # nom d'un abonnement
    retard = t.d("2 h 47")  # durée du retard
    gare = t.d("Paris Gare de Lyon")  # une gare
    form = {
        "reference": pnr,
        "voyageurs": [
            {"nom": v1, "date_naissance": nais, "carte": carte},
            {"nom": v2, "carte": None},
        ],
        "trajet": {"train": train, "depart": gare, "arrivee": "Dijon Ville", "date": "2026-11-22"},
        "remboursement": {"iban": iban_, "titulaire": v1},
        "contact": {"email": mail, "adresse_postale": adr},
    }
    t.user(f"Réclamation G30 pour le {train} du 22 novembre, retard de {retard}.")
    t.tool(
        "reclamations.lire",
        {"canal": "formulaire-web", "id": "G30-2611-44817"},
        {"json": json.dumps(form, ensure_ascii=False)},
    )
    t.tool(
        "circulation.retard_constate",
        {"train": train, "date": "2026-11-22"},
        {"retard_min": 167, "cause": "heurt d'animal"},
    )
    t.reply(
        f"Retard confirmé ({retard}) : 50 % du prix des billets de {t.p('NAME', 'Mme Diarra-Leclerc')} et de "
        f"{t.p('NAME', 'M. Diarra-Leclerc')} seront versés sur l'IBAN fourni. Dossier {pnr}, départ {gare}."
    )


def t_deneigement_contrat(t: Trace) -> None:
    """fr-CA: un assistant d'entreprise de déneigement renouvelle des contrats résidentiels à Montréal."""
    t.service, t.slice = "deneigement-contrats", "clients"
    c1 = t.p("NAME", "Maude Tremblay-Ouellet")
    a1 = t.p(
        "ADDRESS",
        "4517, rue De Lanaudière, app. 2, Montréal (Québec) H2J 3P6",
        ["4517, rue De Lanaudière, app. 2, Montréal (Québec) H2J 3P6", "4517, rue De Lanaudière"],
    )
    t1 = t.p("PHONE", "(514) 529-7730")
    c2 = t.p("NAME", "Jean-Sébastien Kakwa")
    a2 = t.p(
        "ADDRESS",
        "2290, boulevard Gouin Est, Montréal H2B 1X3",
        ["2290, boulevard Gouin Est, Montréal H2B 1X3", "2290, boulevard Gouin Est"],
    )
    t2 = t.p("PHONE", "438-881-0426")
    carte = t.p("CARD", luhn("4917 6104 3382 917"))
    saison = t.d("saison 2026-2027")  # saison d'hiver, pas une date de naissance
    prix = t.d("589,00 $ + taxes")  # prix du contrat
    camion = t.d("Tracteur 14")  # un véhicule de la flotte
    sms = (
        f"[SMS de {t1}] Bonjour c'est {t.p('NAME', 'Maude')} du 4517 De Lanaudière, on renouvelle pour la "
        f"{saison}, même entrée double. Merci!\n"
        f"[SMS de {t2}] allo ici jean-sébastien kakwa, 2290 gouin est, je paye par carte {carte} exp 04/29"
    )
    t.p("NAME", "jean-sébastien kakwa", ["jean-sébastien kakwa", "jean", "sébastien", "kakwa"])
    t.p("ADDRESS", "2290 gouin est", ["2290 gouin est"])
    t.p("ADDRESS", "4517 De Lanaudière", ["4517 De Lanaudière"])
    t.tool("sms.boite_reception", {"depuis": "2026-11-25"}, {"messages": sms}, style="oi")
    t.tool(
        "contrats.renouveler",
        {
            "clients": [c1, c2],
            "adresses": [a1, a2],
            "saison": saison,
            "prix": prix,
            "route": camion,
        },
        {"ok": 2},
        style="oi",
    )
    t.reply(
        f"Deux contrats renouvelés pour la {saison} à {prix}, route du {camion}. {t.p('NAME', 'M. Kakwa')} a envoyé son numéro de carte par "
        "texto : il faudrait le rappeler pour le prendre par téléphone et effacer le message."
    )


def t_recensement_citoyen(t: Trace) -> None:
    """fr: l'assistant d'une mairie enregistre un recensement citoyen (parcours « 16 ans »)."""
    t.service, t.slice = "mairie-etat-civil", "mairie"
    j = t.p("NAME", "Lenaïg Péresse-Nwachukwu")
    nais = t.p("DOB", "3 novembre 2010")
    lieu = t.d("Saint-Brieuc (22)")  # lieu de naissance: une ville
    nir = t.p("NATIONAL_ID", "156076938811296")
    m = t.p("NAME", "Chidinma Nwachukwu")
    p_ = t.p("NAME", "Yannick Péresse")
    adr = t.p(
        "ADDRESS",
        "La Ville-Neuve, 22400 Lamballe-Armor",
        ["La Ville-Neuve, 22400 Lamballe-Armor", "La Ville-Neuve"],
    )
    mail = t.p("EMAIL", "chidi.nwachukwu22@orange.fr")
    jdc = t.d("JDC")  # Journée défense et citoyenneté
    delai = t.d(
        "dans les trois mois qui suivent le 16e anniversaire"
    )  # règle générale, pas une date
    t.user(
        f"Bonjour, je viens faire recenser ma fille {j}, née le {nais} à {lieu}. Je suis sa mère, {m}. "
        f"Son père {p_} est d'accord. On habite au lieu-dit {adr}. Mail : {mail}",
        system="Tu es l'agent d'accueil numérique de la mairie. Rappelle la règle : le recensement se fait "
        + delai
        + ".",
    )
    t.tool(
        "etat_civil.recensement.creer",
        {
            "recense": j,
            "date_naissance": "2010-11-03",
            "nir_parent": nir,
            "adresse": adr,
            "representant": m,
        },
        {"attestation": "REC-22093-2026-00418"},
    )
    t.p("DOB", "2010-11-03")
    t.reply(
        f"C'est fait : {t.p('NAME', 'Lenaïg')} est recensée (attestation REC-22093-2026-00418). Gardez bien "
        f"l'attestation, elle sera demandée pour le bac et le permis. La convocation à la {jdc} arrivera par "
        "courrier."
    )


def t_vide_grenier_registre(t: Trace) -> None:
    """fr: un comité des fêtes vérifie le registre des exposants d'un vide-grenier avant la préfecture."""
    t.service, t.slice = "comite-des-fetes", "associations"
    e1 = t.p("NAME", "Rosine Abbadie-Larrouy")
    e1_cni = t.p("NATIONAL_ID", "CNI 180964301527", ["CNI 180964301527", "180964301527"])
    e1_adr = t.p(
        "ADDRESS",
        "12 chemin de Pédebernade, 64300 Orthez",
        ["12 chemin de Pédebernade, 64300 Orthez", "12 chemin de Pédebernade"],
    )
    e1_nais = t.p("DOB", "1966-08-14")
    e2 = t.p("NAME", "Ghislain Mbemba-Nkounkou")
    e2_cni = t.p("NATIONAL_ID", "X4RTBPFW4")
    e2_adr = t.p(
        "ADDRESS",
        "Appt 24, 3 allée des Cigognes, 64000 Pau",
        ["Appt 24, 3 allée des Cigognes, 64000 Pau", "3 allée des Cigognes"],
    )
    e2_nais = t.p("DOB", "1989-03-27")
    e2_tel = t.p("PHONE", "07 88 41 29 63")
    stand = t.d("stand B-17")  # emplacement sur le terrain
    metrage = t.d("4 ml")  # mètres linéaires
    lot = t.d("Lot de 6 verres Duralex Picardie")  # un objet vendu
    csv = (
        "nom;date_naissance;piece;adresse;tel;emplacement\n"
        f"{e1};{e1_nais};{e1_cni};{e1_adr};;B-16\n"
        f"{e2};{e2_nais};CNI {e2_cni};{e2_adr};{e2_tel};{stand.split()[1]}\n"
    )
    t.user("Le registre doit partir en préfecture lundi, il est complet ?")
    t.tool(
        "tableur.exporter", {"feuille": "Exposants 2026", "format": "csv", "sep": ";"}, {"csv": csv}
    )
    t.tool(
        "annonces.lire",
        {"exposant": e2},
        {"annonce": f"{lot}, 8 €, et vinyles. Emplacement {stand}, {metrage}."},
    )
    t.reply(
        f"Presque : il manque le téléphone de {t.p('NAME', 'Mme Abbadie-Larrouy')} (B-16). Les pièces d'identité et "
        "les dates de naissance sont là pour les deux exposants, les particuliers n'ayant droit qu'à deux "
        f"vide-greniers par an. {t.p('NAME', 'M. Mbemba-Nkounkou')} est au {stand}."
    )


def t_taxi_conventionne_appel(t: Trace) -> None:
    """fr: un standard de taxis conventionnés transcrit un appel et réserve un transport vers la dialyse."""
    t.service, t.slice = "taxi-conventionne", "reservations"
    n1 = t.p("NAME", "albert quinquis", ["albert quinquis", "albert", "quinquis"])
    d1 = t.p("DOB", "le vingt-neuf février mille neuf cent quarante-quatre")
    a1 = t.p(
        "ADDRESS",
        "onze rue du docteur roux à vernon",
        ["onze rue du docteur roux à vernon", "onze rue du docteur roux"],
    )
    ph = t.p("PHONE", "zéro six trente-huit quarante-quatre dix-neuf zéro deux")
    fille = t.p("NAME", "laurence", ["laurence"])
    tr = (
        "opérateur: taxis du val bonjour\n"
        f"appelante: oui bonjour c'est pour mon père monsieur {n1} il a la dialyse à partir "
        "de lundi trois fois par semaine\n"
        "opérateur: d'accord sa date de naissance\n"
        f"appelante: {d1}\n"
        "opérateur: et l'adresse de prise en charge\n"
        f"appelante: {a1} au rez-de-chaussée\n"
        "opérateur: un numéro pour vous joindre\n"
        f"appelante: {ph} je suis sa fille {fille}\n"
    )
    t.tool(
        "telephonie.transcription", {"appel": "c-20261202-0931"}, {"texte": tr}, style="spanname"
    )
    nom = t.p("NAME", "Albert Quinquis")
    nais = t.p("DOB", "29/02/1944")
    adr = t.p(
        "ADDRESS",
        "11 rue du Docteur-Roux, 27200 Vernon",
        ["11 rue du Docteur-Roux, 27200 Vernon", "11 rue du Docteur-Roux"],
    )
    tel = t.p("PHONE", "06 38 44 19 02")
    nir = t.p("NATIONAL_ID", "1 44 02 27 681 412 20")
    centre = t.d("centre de dialyse AURA Évreux")  # un établissement
    bon = t.d("bon de transport Cerfa 11574*04")  # nom d'un formulaire
    t.tool(
        "transports.reserver",
        {
            "patient": nom,
            "naissance": nais,
            "nir": nir,
            "depart": adr,
            "destination": centre,
            "jours": ["lun", "mer", "ven"],
            "contact": tel,
            "justificatif": bon,
        },
        {"reservation": "TC-4471", "statut": "en attente du bon"},
    )
    t.reply(
        f"Transport réservé pour {t.p('NAME', 'M. Quinquis')} (TC-4471), lundi, mercredi et vendredi vers le {centre}. "
        f"Il faudra le {bon} signé par le néphrologue ; j'ai prévenu sa fille {t.p('NAME', 'Laurence')} par SMS."
    )


def t_atelier_patisserie_paiements(t: Trace) -> None:
    """fr: l'assistant d'un atelier de pâtisserie rapproche des paiements et configure un terminal."""
    t.service, t.slice = "atelier-patisserie", "paiements"
    gerante = t.p("NAME", "Clémence Vandewalle")
    pp = t.p("SECRET", "sk_live_4QpX7mK2vR9tLwZ8nB1dC5sF")
    qonto = t.p("SECRET", "qonto-slug-atelier-7731:3e9c1f7a2b8d4f60a5c9e1b7d3f2")
    mdp = t.p("SECRET", "Chouquette!Amande-48")
    cliente = t.p("NAME", "Armelle Duchesne-Touré")
    carte = t.p("CARD", luhn("3782 822463 1000"))
    tel = t.p("PHONE", "+33 6 84 21 57 30")
    cours = t.d("Atelier Paris-Brest")  # nom d'un cours (une pâtisserie)
    cours2 = t.d("Saint-Honoré du dimanche")  # un gâteau, pas une personne
    prix = t.d("95,00 €")  # prix d'un cours
    fact = t.d("FA-2026-0412")  # numéro de facture de l'atelier
    t.user(
        f"C'est {gerante}. Une cliente, {cliente}, a réservé l'{cours} par téléphone ({tel}) et m'a dicté sa carte {carte}. "
        f"Encaisse-la sur PayPlug, la clé est {pp}. Et le mot de passe provisoire de l'espace pro c'est {mdp}, change-le "
        "après."
    )
    t.tool(
        "payplug.payments.create",
        {"amount": 9500, "currency": "EUR", "card": carte, "metadata": {"course": cours}},
        {"id": "pay_5iHMDxy4ABR4YBVW4UscIn", "is_paid": True},
    )
    t.tool(
        "qonto.transactions",
        {"authorization": qonto, "since": "2026-11-01"},
        {"transactions": [{"label": "PAYPLUG", "amount": 95.0, "reference": fact}]},
        style="spanname",
    )
    t.reply(
        f"Encaissé : {prix} pour l'{cours} ({fact}), visible dans Qonto. Il reste une place au {cours2}. "
        f"{t.p('NAME', 'Madame Duchesne-Touré')} recevra le reçu par SMS. Pense à changer le mot de passe provisoire."
    )


def t_voyage_scolaire_liste(t: Trace) -> None:
    """fr: une agence de voyages scolaires finalise la liste d'un séjour à Édimbourg (tableur et API de réservation)."""
    t.service, t.slice = "voyages-scolaires", "sejours"
    e1 = t.p("NAME", "Maëlys Fontanel")
    e1_nais = t.p("DOB", "14/03/2012")
    e1_pass = t.p("NATIONAL_ID", "22AV48193")
    e2 = t.p("NAME", "Noé Kerbrat-Lambert")
    e2_nais = t.p("DOB", "né le 30 décembre 2011", ["né le 30 décembre 2011", "30 décembre 2011"])
    e2_par = t.p("NAME", "Sandrine Kerbrat")
    e2_adr = t.p(
        "ADDRESS",
        "2 ter, rue des Glycines, 44230 Saint-Sébastien-sur-Loire",
        ["2 ter, rue des Glycines, 44230 Saint-Sébastien-sur-Loire", "2 ter, rue des Glycines"],
    )
    e2_tel = t.p("PHONE", "06.48.27.93.10")
    prof = t.p("NAME", "M. Aït-Benhaddou", ["M. Aït-Benhaddou", "Aït-Benhaddou", "Benhaddou"])
    fam = t.p(
        "ADDRESS",
        "14 Comely Bank Avenue, Edinburgh EH4 1EW",
        ["14 Comely Bank Avenue, Edinburgh EH4 1EW", "14 Comely Bank Avenue"],
    )
    api = "Bearer " + t.p("SECRET", "vsc_live_8KqX2mR9vT4zL7wN1bP5dC3f")
    groupe = t.p("SECRET", "Chardon-Ecosse-2027!")
    college = t.d("collège Jules-Verne")  # établissement scolaire, nommé d'après un écrivain
    sejour = t.d("du 22 au 27 mars 2027")  # dates du séjour
    vol = t.d("vol EZY4417")
    tableur = (
        "nom;naissance;passeport;responsable;adresse;tel\n"
        f"{e1};{e1_nais};{e1_pass};;;\n"
        f"{e2};{e2_nais};;{e2_par};{e2_adr};{e2_tel}\n"
    )
    t.user(
        f"Pour le séjour du {college} ({sejour}) : vérifie la liste, et le mot de passe du compte groupe c'est {groupe}. "
        f"Le professeur accompagnateur est {prof}."
    )
    t.tool("tableur.lire", {"fichier": "liste_edimbourg.csv"}, {"csv": tableur}, style="oi")
    t.tool(
        "reservations.familles",
        {"headers": {"Authorization": api}, "sejour": "EDI-2027-03"},
        {"familles": [{"eleves": [e2], "adresse": fam, "vol": vol}]},
        style="oi",
    )
    t.reply(
        f"Deux problèmes : pour {t.p('NAME', 'Noé')}, la date a été saisie en toutes lettres, et le numéro de passeport "
        f"manque ; pour {t.p('NAME', 'Maëlys')}, il manque le responsable légal. Famille d'accueil de Noé : {fam}. "
        f"Départ sur le {vol}."
    )


# ---------------------------------------------------------------------------- es


def t_banda_musica_remesa_sepa(t: Trace) -> None:
    """es: la tesorera de una banda de música revisa la remesa SEPA de cuotas (pain.008 en XML)."""
    t.service, t.slice = "tesoreria-banda", "asociaciones"
    s1 = t.p("NAME", "Begoña Zubiri Catalán")
    s1_iban = t.p("IBAN", "ES81 2100 4618 9802 0184 9337")
    s2 = t.p("NAME", "Aitor Mancebo Ruiz de Gauna")
    s2_iban = t.p("IBAN", "ES7100491518452710382295")
    s2_dni = t.p("NATIONAL_ID", "48213907L")
    s2_adr = t.p(
        "ADDRESS",
        "C/ Portal de Castilla 41, 5º izq., 01007 Vitoria-Gasteiz",
        ["C/ Portal de Castilla 41, 5º izq., 01007 Vitoria-Gasteiz", "C/ Portal de Castilla 41"],
    )
    mandato = t.d("MNDT-BANDA-0117")  # referencia de mandato SEPA
    acreedor = t.d("ES21000G01234567")  # identificador de acreedor de la asociación (pública)
    importe = t.d("45.00")  # importe de la cuota
    xml = (
        '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.008.001.02"><CstmrDrctDbtInitn>'
        f"<PmtInf><CdtrSchmeId><Id><PrvtId><Othr><Id>{acreedor}</Id></Othr></PrvtId></Id></CdtrSchmeId>"
        f'<DrctDbtTxInf><InstdAmt Ccy="EUR">{importe}</InstdAmt><DrctDbtTx><MndtRltdInf><MndtId>{mandato}</MndtId>'
        f"</MndtRltdInf></DrctDbtTx><Dbtr><Nm>{s1}</Nm></Dbtr><DbtrAcct><Id><IBAN>{s1_iban}</IBAN></Id></DbtrAcct></DrctDbtTxInf>"
        f'<DrctDbtTxInf><InstdAmt Ccy="EUR">{importe}</InstdAmt><DrctDbtTx><MndtRltdInf><MndtId>MNDT-BANDA-0118</MndtId>'
        f"</MndtRltdInf></DrctDbtTx><Dbtr><Nm>{s2}</Nm><PstlAdr><AdrLine>{s2_adr}</AdrLine></PstlAdr>"
        f"<Id><PrvtId><Othr><Id>{s2_dni}</Id></Othr></PrvtId></Id></Dbtr>"
        f"<DbtrAcct><Id><IBAN>{s2_iban}</IBAN></Id></DbtrAcct></DrctDbtTxInf></PmtInf></CstmrDrctDbtInitn></Document>"
    )
    t.user("Antes de mandar la remesa de diciembre al banco, ¿está bien el fichero?")
    t.tool("remesas.generar", {"mes": "2026-12", "formato": "pain.008.001.02"}, {"xml": xml})
    t.tool(
        "banco.validar_fichero",
        {"xml_len": len(xml)},
        {"errores": [{"linea": 1, "error": "IBAN con espacios en DbtrAcct"}]},
        style="spanname",
    )
    t.reply(
        f"Hay un error: el IBAN de {t.p('NAME', 'Begoña')} ({s1_iban}) va con espacios en el XML y el banco lo "
        f"rechaza. Quita los espacios en su ficha de socia y regenera la remesa. El mandato {mandato} está vigente."
    )


def t_academia_oposiciones(t: Trace) -> None:
    """es: una academia de oposiciones matricula a una alumna a partir de un correo reenviado."""
    t.service, t.slice = "academia-matriculas", "secretaria"
    al = t.p("NAME", "Yurena Betancor Cabrera")
    nac = t.p(
        "DOB",
        "nacida el 2 de febrero del 1995",
        ["nacida el 2 de febrero del 1995", "2 de febrero del 1995"],
    )
    dni = t.p("NATIONAL_ID", "71638244-Y")
    tel = t.p("PHONE", "+34 611 48 29 07")
    mail = t.p("EMAIL", "yurenabc95@hotmail.es")
    adr = t.p(
        "ADDRESS",
        "C/ León y Castillo 212, 3ºD, 35004 Las Palmas de Gran Canaria",
        ["C/ León y Castillo 212, 3ºD, 35004 Las Palmas de Gran Canaria", "C/ León y Castillo 212"],
    )
    opo = t.d("Auxiliar Administrativo del Estado")  # nombre de una oposición
    boe = t.d("BOE-A-2026-18842")  # referencia de una convocatoria publicada
    precio = t.d("89 €/mes")  # precio del curso
    correo = (
        "---------- Forwarded message ---------\n"
        f"De: {al} <{mail}>\nAsunto: matrícula\n\n"
        f"Hola! Quiero apuntarme al curso de {opo} ({boe}). Mis datos: {al}, {nac}, DNI {dni}, "
        f"vivo en {adr}. Mi móvil es el {tel}. Gracias!!\n"
    )
    t.user("Mira el correo reenviado y dale de alta.")
    t.tool("correo.leer", {"id": "fw-2211"}, {"texto": correo}, style="oi")
    t.tool(
        "alumnos.alta",
        {"nombre": al, "dni": dni.replace("-", ""), "curso": opo, "cuota": precio},
        {"alumno": "A-26-0418"},
        style="oi",
    )
    t.p("NATIONAL_ID", "71638244Y")
    t.reply(
        f"Alta hecha: {t.p('NAME', 'Yurena')} empieza en el grupo de tarde de {opo}, {precio}. Le he mandado el "
        "enlace de pago al correo que indicó."
    )


def t_cooperativa_ahorro_quito(t: Trace) -> None:
    """es-EC: un asistente de una cooperativa de ahorro y crédito en Quito precalifica un microcrédito."""
    t.service, t.slice = "cooperativa-credito", "creditos"
    so = t.p("NAME", "Wilmer Tipantuña Tupiza")
    ci = t.p("NATIONAL_ID", "1718439027")
    nac = t.p(
        "DOB", "fecha de nacimiento 05-ago-1979", ["fecha de nacimiento 05-ago-1979", "05-ago-1979"]
    )
    adr = t.p(
        "ADDRESS",
        "Av. Mariscal Sucre S23-114 y Pasaje Los Cedros, sector La Magdalena",
        [
            "Av. Mariscal Sucre S23-114 y Pasaje Los Cedros, sector La Magdalena",
            "Av. Mariscal Sucre S23-114 y Pasaje Los Cedros",
        ],
    )
    cel = t.p("PHONE", "099 812 4471")
    cony = t.p("NAME", "Rosa Elvira Chicaiza")
    garante = t.p("NAME", "Segundo Pilataxi")
    g_cel = t.p("PHONE", "+593 98 630 2157")
    monto = t.d("USD 3.500")  # monto del crédito
    tasa = t.d("tasa 15,9 % anual")  # tasa de interés
    producto = t.d("Microcrédito Minorista")  # nombre de un producto
    ficha = (
        f"SOCIO: {so} | C.I. {ci} | {nac}\nDOMICILIO: {adr} (casa esquinera, portón verde)\n"
        f"CEL: {cel} | CÓNYUGE: {cony}\nGARANTE: {garante}, cel {g_cel}\n"
        f"SOLICITA: {producto} {monto} a 24 meses para compra de horno (panadería)"
    )
    t.user("Precalifica esta solicitud que llegó por la agencia Chillogallo.")
    t.tool("socios.ficha", {"agencia": "Chillogallo", "solicitud": "SOL-77128"}, {"ficha": ficha})
    t.tool("buro.consultar", {"cedula": ci}, {"score": 712, "deudas_vencidas": 0})
    t.reply(
        f"Precalificado: {t.p('NAME', 'don Wilmer')} tiene score 712 y nada vencido. {producto} por {monto}, "
        f"{tasa}. Falta la firma de {t.p('NAME', 'doña Rosa Elvira')} como cónyuge y la copia de cédula del garante."
    )


def t_inscripcion_nacimiento(t: Trace) -> None:
    """es: el asistente de un hospital comunica un nacimiento al Registro Civil (formulario en JSON dentro de JSON)."""
    t.service, t.slice = "hospital-admision", "registro-civil"
    bebe = t.p("NAME", "Candela Ferreiro Iturriaga")
    nac = t.p("DOB", "2026-11-29T04:17")
    nac2 = t.p("DOB", "29 de noviembre de 2026")
    madre = t.p("NAME", "Itziar Iturriaga Basterra")
    m_dni = t.p("NATIONAL_ID", "Y4418027V")
    padre = t.p("NAME", "Brais Ferreiro Lamas")
    m_nac = t.p("DOB", "13/04/1993")
    dom = t.p(
        "ADDRESS",
        "Rúa do Hórreo 57, 2º esq., 15702 Santiago de Compostela",
        ["Rúa do Hórreo 57, 2º esq., 15702 Santiago de Compostela", "Rúa do Hórreo 57"],
    )
    tel = t.p("PHONE", "(+34) 981 56 44 71")
    peso = t.d("3.240 g")  # peso al nacer: una medida, no identifica
    hosp = t.d("Hospital Clínico Universitario de Santiago")  # el centro, público
    cie = t.d("Z38.0")  # código CIE-10 de nacido vivo
    formulario = {
        "tipo": "comunicacion_nacimiento",
        "datos": json.dumps(
            {
                "nacido": {"nombre": bebe, "fecha_hora": nac, "peso": peso, "cie10": cie},
                "progenitora": {"nombre": madre, "nie": m_dni, "fecha_nacimiento": m_nac},
                "progenitor": {"nombre": padre},
                "domicilio_familiar": dom,
                "telefono": tel,
                "centro": hosp,
            },
            ensure_ascii=False,
        ),
    }
    t.user("Envía la comunicación de nacimiento de la habitación 412 al Registro Civil.")
    t.tool(
        "registro_civil.comunicar",
        formulario,
        {"estado": "recibido", "justificante": "RC-15078-2026-118834"},
    )
    t.reply(
        f"Enviado. {t.p('NAME', 'Candela')} nació el {nac2} en el {hosp} ({peso}). Los padres, "
        f"{t.p('NAME', 'Itziar')} y {t.p('NAME', 'Brais')}, recibirán el aviso para descargar el certificado en la sede electrónica."
    )


def t_hosting_soporte_filezilla(t: Trace) -> None:
    """es: el soporte de un hosting ayuda a un cliente que adjunta su sitemanager.xml de FileZilla."""
    t.service, t.slice = "hosting-soporte", "soporte"
    cli = t.p("NAME", "Teodoro Garmendia")
    ftp_pw = t.p("SECRET", "Tx9-mar.Ocho.Cebolla")
    db_pw = t.p("SECRET", "Rm4$kQ8z!Lw2")
    cp_tok = t.p("SECRET", "K7QX2M9RLT4WZ8NB1PD5SF3HJ6YC0AE2")
    ip_cli = t.p("IP", "88.27.146.201")
    dominio = t.d("ferreteria-garmendia.es")  # dominio de un comercio
    ver = t.d("FileZilla 3.68.1")  # versión de un programa
    php = t.d("PHP 8.3.14")  # versión de PHP
    site = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<FileZilla3 version="3.68.1"><Servers><Server>'
        f"<Host>ftp.{dominio}</Host><Port>21</Port><Protocol>0</Protocol><User>tgarmendia</User>"
        f'<Pass encoding="base64">{b64(ftp_pw)}</Pass><Name>tienda</Name></Server></Servers></FileZilla3>'
    )
    t.user(
        f"Buenas, soy {cli}, la web da error de conexión a la base de datos desde ayer. Os adjunto mi configuración del FileZilla."
    )
    t.tool(
        "tickets.adjunto",
        {"ticket": "HS-99218", "nombre": "sitemanager.xml"},
        {"contenido": site},
        style="oi",
    )
    t.tool(
        "ssh.exec",
        {"host": "web14", "cmd": "grep -n DB_ /home/tgarmendia/public_html/wp-config.php"},
        f"32:define( 'DB_NAME', 'tgar_wp' );\n33:define( 'DB_USER', 'tgar_wp' );\n34:define( 'DB_PASSWORD', '{db_pw}' );\n",
        style="oi",
    )
    t.tool(
        "cpanel.api",
        {"endpoint": "Mysql/list_users", "header": f"Authorization: cpanel tgarmendia:{cp_tok}"},
        {"data": [{"user": "tgar_wp"}], "errors": None, "login_ip": ip_cli},
        style="oi",
    )
    t.reply(
        f"{t.p('NAME', 'Teodoro')}, el usuario tgar_wp existe pero la contraseña de wp-config.php no coincide desde "
        f"el cambio que hiciste ayer desde {ip_cli}. La he puesto igual en MySQL y la web vuelve a funcionar "
        f"({php}). Por cierto, el fichero de {ver} lleva tu contraseña FTP en base64, que no es cifrado: cámbiala."
    )


def t_app_citas_moderacion(t: Trace) -> None:
    """es: un agente de moderación de una app de citas revisa un chat denunciado (exportado como texto)."""
    t.service, t.slice = "moderacion-citas", "confianza-seguridad"
    u1 = t.p("NAME", "maripaz_lozano", ["maripaz_lozano"])
    u2 = t.p("NAME", "iker.sagasti", ["iker.sagasti"])
    ph = t.p("PHONE", "622 18 40 95")
    n2 = t.p("NAME", "iker sagasti", ["iker sagasti", "iker", "sagasti"])
    a2 = t.p(
        "ADDRESS",
        "calle urbieta 14 3 izda en donosti",
        ["calle urbieta 14 3 izda en donosti", "calle urbieta 14 3 izda"],
    )
    n1 = t.p("NAME", "maripaz lozano", ["maripaz lozano", "maripaz", "lozano"])
    cumple = t.p("DOB", "el 17 de mayo", ["el 17 de mayo", "17 de mayo"])
    chat = (
        f"[21:04] {u2}: oye pasame tu insta o mejor tu numero\n"
        f"[21:05] {u1}: jaja vale es el {ph} pero no me llames tarde\n"
        f"[21:07] {u2}: yo me llamo {n2} de verdad, vivo en la {a2}\n"
        f"[21:09] {u1}: yo soy {n1}, cumplo 30 {cumple} jeje\n"
        f"[21:12] {u2}: si no vienes el sabado te busco, se que trabajas en la farmacia de la avenida\n"
    )
    regla = t.d("norma 4.2 (amenazas)")  # una regla de la comunidad
    motivo = t.d("Acoso / amenaza")  # categoría de denuncia
    t.user(f"Denuncia D-55812: {motivo}. Revisa el chat y decide.")
    t.tool("moderacion.chat_denunciado", {"denuncia": "D-55812"}, {"texto": chat})
    t.tool(
        "moderacion.accion",
        {"usuario": u2, "accion": "suspension_permanente", "regla": regla},
        {"ok": True},
    )
    t.reply(
        f"Suspendido {u2} por la {regla}: el último mensaje es una amenaza («te busco»). Aviso a {u1} con los "
        "recursos de ayuda; en el chat dio su número y su cumpleaños, le recomendamos no compartir datos."
    )


def t_centro_estetica_laser(t: Trace) -> None:
    """es: el asistente de un centro de depilación láser revisa fichas de clientas y la integración de citas."""
    t.service, t.slice = "centro-estetica", "citas"
    c1 = t.p("NAME", "Naiara Olabarrieta Goñi")
    c1_nac = t.p("DOB", "F. nac.: 11-09-2008", ["F. nac.: 11-09-2008", "11-09-2008"])
    c1_madre = t.p("NAME", "Edurne Goñi")
    c1_dom = t.p(
        "ADDRESS",
        "Avda. de Bayona 37, 6º B, 31011 Pamplona",
        ["Avda. de Bayona 37, 6º B, 31011 Pamplona", "Avda. de Bayona 37"],
    )
    c2 = t.p("NAME", "Marisol Echeverría Pardo")
    c2_nac = t.p(
        "DOB",
        "cumpleaños 4 de diciembre, del 86",
        ["cumpleaños 4 de diciembre, del 86", "4 de diciembre, del 86"],
    )
    c2_dom = t.p(
        "ADDRESS",
        "Travesía Monasterio de Irache 12, bajo, 31011 Pamplona",
        [
            "Travesía Monasterio de Irache 12, bajo, 31011 Pamplona",
            "Travesía Monasterio de Irache 12",
        ],
    )
    c2_tel = t.p("PHONE", "648 27 19 03")
    booksy = t.p("SECRET", "bk_prod_7Hq2mX9kLr4Tz8Wc1NbY6hJd")
    holded = t.p("SECRET", "9c4a1f2e77b041d38e14c5d0f21b9d7e")
    wifi = t.p("SECRET", "Laser-Navarra_2024")
    maquina = t.d("Soprano Titanium")  # modelo de una máquina de láser
    zona = t.d("Piernas completas + ingles")  # zona de tratamiento
    bono = t.d("bono 6 sesiones 249 €")
    fichas = json.dumps(
        [
            {
                "clienta": c1,
                "nacimiento": c1_nac,
                "autoriza": c1_madre,
                "domicilio": c1_dom,
                "tratamiento": zona,
            },
            {
                "clienta": c2,
                "nota": c2_nac,
                "domicilio": c2_dom,
                "movil": c2_tel,
                "tratamiento": bono,
            },
        ],
        ensure_ascii=False,
    )
    t.user(
        f"Revisa las fichas de mañana. Por cierto, la clave del wifi de la sala de espera es {wifi}, por si "
        "lo pregunta alguien."
    )
    t.tool(
        "booksy.citas", {"api_key": booksy, "fecha": "2026-12-04"}, {"fichas": fichas}, style="oi"
    )
    t.tool(
        "holded.contactos.actualizar", {"key": holded, "contactos": [c1, c2]}, {"ok": 2}, style="oi"
    )
    t.reply(
        f"{t.p('NAME', 'Naiara')} es menor (18 años en septiembre): tiene la autorización firmada por su madre, "
        f"{c1_madre}, así que puede hacer el tratamiento con la {maquina}. {t.p('NAME', 'Marisol')} tiene el {bono}, "
        "le quedan dos sesiones."
    )


def t_huerto_comunitario_riego(t: Trace) -> None:
    """es: el bot de un huerto urbano gestiona el sistema de riego y la lista de hortelanos (logs y YAML)."""
    t.service, t.slice = "huerto-urbano", "socios"
    h1 = t.p("NAME", "Ramiro Azcárate Villalba")
    h1_dom = t.p(
        "ADDRESS",
        "C/ del Doctor Fourquet 22, 1º int. izda., 28012 Madrid",
        ["C/ del Doctor Fourquet 22, 1º int. izda., 28012 Madrid", "C/ del Doctor Fourquet 22"],
    )
    h1_nac = t.p("DOB", "1951-07-09")
    h2 = t.p("NAME", "Xiomara Blandón")
    h2_dom = t.p(
        "ADDRESS",
        "Calle de Embajadores 141, ático, 28045 Madrid",
        ["Calle de Embajadores 141, ático, 28045 Madrid", "Calle de Embajadores 141"],
    )
    h2_tel = t.p("PHONE", "+34 699 402 815")
    mqtt = t.p("SECRET", "riego-Tomatera-73!")
    cand = t.p("SECRET", "cand4d0-Huert0-Lavapies")
    ip = t.p("IP", "83.45.201.77")
    parcela = t.d("parcela 17")  # número de una parcela del huerto
    valvula = t.d("valve-07")  # identificador de una electroválvula
    tomate = t.d("Corazón de Buey")  # variedad de tomate
    yaml = (
        "hortelanos:\n"
        f'  - nombre: {h1}\n    fecha_nacimiento: {h1_nac}\n    domicilio: "{h1_dom}"\n    parcela: 17\n'
        f'  - nombre: {h2}\n    domicilio: "{h2_dom}"\n    telefono: "{h2_tel}"\n    parcela: 18\n'
    )
    log = (
        f"2026-12-02 06:00:01 mosquitto: New client connected from {ip}:51822 as riego-esp32 (u'huerto', p'{mqtt}')\n"
        f"2026-12-02 06:00:03 riego: {valvula} open 12 min ({parcela})\n"
    )
    t.user(
        f"¿Ha funcionado el riego esta mañana? Y apunta que el candado nuevo de la puerta es {cand}."
    )
    t.tool("logs.tail", {"servicio": "mosquitto,riego", "lineas": 2}, log, style="spanname")
    t.tool("socios.listar", {"formato": "yaml"}, yaml, style="spanname")
    t.reply(
        f"Sí: {valvula} se abrió 12 minutos en la {parcela}, la de {t.p('NAME', 'Ramiro')}. Ojo: el log de mosquitto "
        "escribe la contraseña del cliente en claro, conviene cambiarla. He guardado la clave del candado en la "
        f"nota de socios. {t.p('NAME', 'Xiomara')} pregunta si puede plantar {tomate} en la 18."
    )


# ---------------------------------------------------------------------------- it


def t_visura_catastale(t: Trace) -> None:
    """it: uno studio di geometri legge una visura catastale e prepara una pratica di successione."""
    t.service, t.slice = "studio-geometra", "catasto"
    p1 = t.p("NAME", "LOMBARDI Giorgio", ["LOMBARDI Giorgio", "LOMBARDI", "Giorgio"])
    cf1 = t.p("NATIONAL_ID", "LMBGRG77B03A662P")
    n1 = t.p(
        "DOB", "nato a BARI (BA) il 03/02/1977", ["nato a BARI (BA) il 03/02/1977", "03/02/1977"]
    )
    p2 = t.p("NAME", "FERRARO Chiara", ["FERRARO Chiara", "FERRARO", "Chiara"])
    cf2 = t.p("NATIONAL_ID", "FRRCHR89M45D969G")
    n2 = t.p(
        "DOB",
        "nata a GENOVA (GE) il 05/08/1989",
        ["nata a GENOVA (GE) il 05/08/1989", "05/08/1989"],
    )
    imm = t.p(
        "ADDRESS",
        "VIA DELLE ROBINIE n. 14 Piano 2 Interno 5",
        ["VIA DELLE ROBINIE n. 14 Piano 2 Interno 5", "VIA DELLE ROBINIE n. 14"],
    )
    res = t.p(
        "ADDRESS",
        "Salita Santa Maria della Costa 9/3, 16137 Genova",
        ["Salita Santa Maria della Costa 9/3, 16137 Genova", "Salita Santa Maria della Costa 9/3"],
    )
    fg = t.d("Foglio 27 Particella 1184 Sub. 9")  # identificativo catastale di un immobile
    cat = t.d("Categoria A/2")  # categoria catastale
    rend = t.d("Rendita Euro 619,75")  # rendita catastale dell'immobile
    visura = (
        "Visura per immobile - Situazione degli atti informatizzati al 01/12/2026\n"
        f"Comune di MONOPOLI (F376) - {fg} - {cat} - Classe 3 - Consistenza 5,5 vani - {rend}\n"
        f"Indirizzo: {imm}\n"
        "INTESTATI\n"
        f"1 {p1} {n1} {cf1} Proprieta' per 1/2\n"
        f"2 {p2} {n2} {cf2} Proprieta' per 1/2\n"
    )
    t.user(
        "Serve la visura dell'appartamento di Monopoli per la successione, poi dimmi cosa manca."
    )
    t.tool(
        "sister.visura",
        {"comune": "F376", "foglio": 27, "particella": 1184, "sub": 9},
        {"testo": visura},
    )
    t.tool("anagrafe.residenza", {"cf": cf2}, {"residenza": res})
    t.reply(
        f"La visura indica due intestate al 50%: {t.p('NAME', 'il signor Lombardi')} (il de cuius) e "
        f"{t.p('NAME', 'la signora Ferraro')}, che risiede a Genova. Per la successione servono il certificato di morte e "
        f"lo stato di famiglia; l'immobile è {cat}, {rend}."
    )


def t_noleggio_gommoni_whatsapp(t: Trace) -> None:
    """it: un noleggio gommoni in Sardegna riceve prenotazioni da un webhook WhatsApp Business."""
    t.service, t.slice = "noleggio-gommoni", "prenotazioni"
    wa = t.p("PHONE", "393475128890")
    nm = t.p("NAME", "Efisio Porcu")
    nasc = "nato a Oristano il " + t.p("DOB", "30/06/82")
    res = t.p(
        "ADDRESS",
        "via Is Mirrionis 118, 09121 Cagliari",
        ["via Is Mirrionis 118, 09121 Cagliari", "via Is Mirrionis 118"],
    )
    cf_f = t.p("NATIONAL_ID", "MRNLCU19L22F205E")
    figlio = t.p("NAME", "Luca Marini")
    compagna = t.p("NAME", "Roberta Marini")
    card = t.p("CARD", luhn("2223 0031 2204 816"))
    gommone = t.d("Joker Boat Clubman 24")  # modello di gommone
    cala = t.d("Cala Goloritzé")  # una caletta, luogo pubblico
    waba = t.d("106540352242922")  # id dell'account WhatsApp Business del noleggio
    token = t.p(
        "SECRET", "EAAGm0PX4ZCpsBAKZBq7Zx9hT2vLmR8wQ4nYkC1dF6sJ3gH0pZBe5aUoWiXcZCvB8nM2rT7yK"
    )
    hook = {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": waba,
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "contacts": [{"profile": {"name": nm}, "wa_id": wa}],
                            "messages": [
                                {
                                    "from": wa,
                                    "type": "text",
                                    "text": {
                                        "body": (
                                            f"Buongiorno, vorrei il {gommone} per sabato, andiamo a {cala}. Sono {nm}, {nasc}, residente in "
                                            f"{res}. Con me la mia compagna {compagna} e suo figlio {figlio} (7 anni, cf {cf_f}) per l'assicurazione. "
                                            f"Pago la caparra con la carta {card}."
                                        )
                                    },
                                }
                            ],
                        },
                    }
                ],
            }
        ],
    }
    t.user("Gestisci le prenotazioni WhatsApp arrivate stanotte.")
    t.tool(
        "whatsapp.webhook_log", {"since": "2026-12-02T22:00"}, {"events": [hook]}, style="spanname"
    )
    t.tool(
        "whatsapp.send",
        {
            "to": wa,
            "auth": f"Bearer {token}",
            "text": "Prenotazione ricevuta, la confermiamo entro le 10.",
        },
        {"messages": [{"id": "wamid.7f3a9c21e07d4f5a"}]},
        style="spanname",
    )
    t.reply(
        f"Una prenotazione: {t.p('NAME', 'il signor Porcu')} vuole il {gommone} sabato per {cala}, tre persone. "
        "Ha scritto il numero della carta in chiaro su WhatsApp: la caparra la prendo con un link di pagamento "
        "e gli chiedo di cancellare il messaggio."
    )


# ---------------------------------------------------------------------------- nl


def t_verhuizing_brp(t: Trace) -> None:
    """nl: een gemeentelijke assistent verwerkt een adreswijziging (verhuizing) voor een gezin in de BRP."""
    t.service, t.slice = "gemeente-verhuizing", "burgerzaken"
    a = t.p("NAME", "Femke Oosterhuis-Bakırcı")
    a_bsn = t.p("NATIONAL_ID", "271463909")
    a_geb = t.p("DOB", "geb. 12-04-1983", ["geb. 12-04-1983", "12-04-1983"])
    b = t.p("NAME", "Yusuf Bakırcı")
    k = t.p("NAME", "Noor Bakırcı")
    k_geb = t.p("DOB", "3 mei 2019")
    oud = t.p(
        "ADDRESS",
        "Van Speijkstraat 88-2, 1057 HK Amsterdam",
        ["Van Speijkstraat 88-2, 1057 HK Amsterdam", "Van Speijkstraat 88-2"],
    )
    nieuw = t.p(
        "ADDRESS",
        "Laan van Nieuw-Guinea 21 bis, 3531 JG Utrecht",
        ["Laan van Nieuw-Guinea 21 bis, 3531 JG Utrecht", "Laan van Nieuw-Guinea 21 bis"],
    )
    tel = t.p("PHONE", "06-28417352")
    ingang = t.d("ingangsdatum 15 december 2026")  # verhuisdatum, geen geboortedatum
    zaak = t.d("zaaknummer Z-2026-188419")  # zaaknummer van de gemeente
    t.user(
        f"Wij verhuizen! Ik ben {a} ({a_geb}), BSN {a_bsn}. Mee verhuizen mijn man {b} en onze dochter {k} "
        f"(geboren {k_geb}). Van {oud} naar {nieuw}, {ingang}. Bereikbaar op {tel}.",
        system="Je bent de digitale balie van de gemeente Utrecht.",
    )
    t.tool(
        "brp.adreswijziging",
        {"bsn": a_bsn, "meeverhuizers": 2, "nieuw_adres": nieuw, "ingang": "2026-12-15"},
        {"status": "in behandeling", "zaak": zaak.split()[1]},
    )
    t.reply(
        f"Bedankt, {t.p('NAME', 'mevrouw Oosterhuis', ['mevrouw Oosterhuis', 'Oosterhuis'])}. Uw verhuizing staat geregistreerd ({zaak}). Binnen vijf "
        "werkdagen krijgt de hoofdbewoner van het nieuwe adres een brief om toestemming te geven."
    )


def t_hondenuitlaatservice(t: Trace) -> None:
    """nl: een hondenuitlaatservice plant de week; klantgegevens staan in een Airtable-export."""
    t.service, t.slice = "hondenuitlaat-planning", "planning"
    k1 = t.p("NAME", "Wietske de Haan-Pranoto")
    k1_adr = t.p(
        "ADDRESS",
        "Oudegracht aan de Werf 212, souterrain, Utrecht",
        ["Oudegracht aan de Werf 212, souterrain, Utrecht", "Oudegracht aan de Werf 212"],
    )
    k1_code = "sleutelkastje " + t.p("SECRET", "0917")
    k2 = t.p("NAME", "Sjoerd Hoekstra")
    k2_adr = t.p(
        "ADDRESS",
        "Prins Hendriklaan 3, 3583 EA Utrecht",
        ["Prins Hendriklaan 3, 3583 EA Utrecht", "Prins Hendriklaan 3"],
    )
    k2_tel = t.p("PHONE", "+31 6 1847 2093")
    at = t.p(
        "SECRET",
        "patQm7xK2vR9tL4wZ.8c1f9e07b2d8a6c53e19f0b7d2a48c6e1f3b9d07a25c8e41b6d0f2a9c3e7b5d18",
    )
    hond1 = t.d("Professor Bommel")  # naam van een hond (teckel), geen persoon
    hond2 = t.d("Sien")  # naam van een hond
    park = t.d("Wilhelminapark")  # een openbaar park
    rows = {
        "records": [
            {
                "id": "rec8Kq2",
                "fields": {"Klant": k1, "Adres": k1_adr, "Toegang": k1_code, "Hond": hond1},
            },
            {
                "id": "rec9Wz7",
                "fields": {"Klant": k2, "Adres": k2_adr, "Telefoon": k2_tel, "Hond": hond2},
            },
        ]
    }
    t.user("Maak de planning voor maandag.")
    t.tool(
        "airtable.list",
        {"base": "appUitlaat", "table": "Klanten", "headers": {"Authorization": f"Bearer {at}"}},
        rows,
        style="oi",
    )
    t.reply(
        f"Maandag 9:00 ophalen bij {t.p('NAME', 'Wietske')} ({hond1}), sleutel uit het kastje, daarna {hond2} bij "
        f"{t.p('NAME', 'meneer Hoekstra', ['meneer Hoekstra', 'Hoekstra'])} en samen naar het {park}. Terug rond 10:30."
    )


# ---------------------------------------------------------------------------- pt


def t_atestado_residencia(t: Trace) -> None:
    """pt: o assistente de uma junta de freguesia emite um atestado de residência (testemunhas e Cartão de Cidadão)."""
    t.service, t.slice = "junta-freguesia", "atestados"
    req = t.p("NAME", "Graciete Mendonça Falcão")
    cc = t.p("NATIONAL_ID", "14825036 0 ZX0")
    nif = t.p("NATIONAL_ID", "248160370")
    nasc = t.p(
        "DOB",
        "nascida a 9 de outubro de 1961",
        ["nascida a 9 de outubro de 1961", "9 de outubro de 1961"],
    )
    morada = t.p(
        "ADDRESS",
        "Travessa do Cabeço 7, r/c dto., 4450-112 Matosinhos",
        ["Travessa do Cabeço 7, r/c dto., 4450-112 Matosinhos", "Travessa do Cabeço 7"],
    )
    t1 = t.p("NAME", "Albano Teixeira Rebelo")
    t2 = t.p("NAME", "Maria do Céu Valente")
    tel = t.p("PHONE", "+351 229 381 046")
    fim = t.d("para efeitos de candidatura a habitação municipal")  # finalidade do atestado
    taxa = t.d("3,50 €")  # taxa do atestado
    pedido = (
        f"Requerente: {req}, {nasc}, CC n.º {cc}, NIF {nif}\n"
        f"Morada: {morada}\nContacto: {tel}\n"
        f"Testemunhas (recenseadas na freguesia): {t1}; {t2}\nFinalidade: {fim}"
    )
    t.user("Chegou um pedido de atestado pelo balcão online, podes tratar?")
    t.tool("balcao.pedido", {"id": "AT-2026-1184"}, {"texto": pedido}, style="oi")
    t.tool(
        "recenseamento.verificar", {"nomes": [t1, t2]}, {"recenseados": [True, True]}, style="oi"
    )
    t.reply(
        f"Atestado emitido para a {t.p('NAME', 'D. Graciete')}, {fim}. As duas testemunhas estão recenseadas. "
        f"Taxa de {taxa}, paga no levantamento."
    )


def t_loja_online_mbway(t: Trace) -> None:
    """pt: uma loja online de cerâmica investiga um pagamento MB WAY falhado (logs do gateway e referência Multibanco)."""
    t.service, t.slice = "loja-ceramica", "pagamentos"
    cli = t.p("NAME", "Rúben Caldeira Sampaio")
    mb = t.p("PHONE", "351#912843107", ["351#912843107", "912843107"])
    mail = t.p("EMAIL", "ruben.sampaio@sapo.pt")
    entrega = t.p(
        "ADDRESS",
        "Rua Dr. Alberto Souto 41, 3.º esq., 3800-148 Aveiro",
        ["Rua Dr. Alberto Souto 41, 3.º esq., 3800-148 Aveiro", "Rua Dr. Alberto Souto 41"],
    )
    iban_ = t.p("IBAN", "PT50 0035 0097 0004 7182 3910 9")
    chave = t.p("SECRET", "AP-7Q2M9XKL4TZ8WN")
    bo = t.p("SECRET", "8f3c2b1e7a6d4f90c5e2a18b4d97f3c0")
    ent = t.d("Entidade 21547")  # entidade Multibanco do comerciante
    ref = t.d("Ref. 418 207 335")  # referência Multibanco de uma encomenda
    enc = t.d("encomenda #PT-10442")
    prato = t.d("Prato Couve Bordallo")  # um produto (faiança de Bordallo Pinheiro)
    log = (
        f"2026-12-02T18:41:07Z mbway.request orderId=PT-10442 mobile={mb} amount=64.90 antiPhishingKey={chave}\n"
        "2026-12-02T18:45:09Z mbway.callback status=EXPIRED reason=user_did_not_confirm\n"
        f"2026-12-02T18:45:10Z fallback.multibanco {ent} {ref} amount=64.90\n"
    )
    t.user(f"O cliente da {enc} diz que pagou e nós não vemos nada.")
    t.tool("gateway.logs", {"order": "PT-10442", "backoffice_key": bo}, log, style="spanname")
    t.tool(
        "encomendas.ver",
        {"id": "PT-10442"},
        {
            "cliente": cli,
            "email": mail,
            "entrega": entrega,
            "itens": [prato],
            "reembolso_iban": iban_,
        },
        style="spanname",
    )
    t.reply(
        f"O pedido MB WAY expirou sem confirmação na app; a seguir foi gerada a {ref} ({ent}). Se o "
        f"{t.p('NAME', 'Sr. Rúben')} pagou por Multibanco, o pagamento aparece até amanhã. O {prato} continua reservado."
    )


# ---------------------------------------------------------------------------- bg


def t_kurierska_dostavka(t: Trace) -> None:
    """bg: асистент на куриерска фирма пренасочва пратка с наложен платеж към нов адрес."""
    t.service, t.slice = "kurier-obsluzhvane", "dostavki"
    pol = t.p("NAME", "Цветомира Гешева")
    pol_lat = t.p("NAME", "Tsvetomira Gesheva")
    adr = t.p(
        "ADDRESS",
        "ж.к. Младост 1, бл. 34, вх. Б, ет. 5, ап. 18, 1784 София",
        ["ж.к. Младост 1, бл. 34, вх. Б, ет. 5, ап. 18, 1784 София", "ж.к. Младост 1"],
    )
    nov = t.p(
        "ADDRESS",
        "ул. „Кораб планина“ 9, ет. 2, 1612 София",
        ["ул. „Кораб планина“ 9, ет. 2, 1612 София", "ул. „Кораб планина“ 9"],
    )
    tel = t.p("PHONE", "0888 417 239")
    mail = t.p("EMAIL", "tsveti.gesheva@abv.bg")
    izp = t.d("Магазин „Пчелица“ ООД")  # подателят е фирма
    tov = t.d("товарителница 1051 4428 8730")  # номер на пратка
    nal = t.d("наложен платеж 74,90 лв.")  # сума на наложения платеж
    ofis = t.d("офис Младост 4")  # офис на куриера
    t.user(
        f"Здравейте, аз съм {pol}. Чакам пратка ({tov}) от {izp}, но няма да съм на адреса. "
        f"Може ли да я пренасочите на {nov}? Тел. {tel}",
        system="Ти си асистентът на куриерската фирма. Отговаряй на български.",
    )
    t.tool(
        "shipments.get",
        {"waybill": "105144288730"},
        {"receiver": {"name": pol_lat, "address": adr, "phone": tel, "email": mail}, "cod": nal},
    )
    t.tool(
        "shipments.redirect",
        {"waybill": "105144288730", "new_address": nov, "fee_bgn": 3.5},
        {"ok": True},
    )
    t.reply(
        f"Готово, {t.p('NAME', 'г-жо Гешева')}. Пратката ще бъде доставена на новия адрес утре, {nal} плюс 3,50 лв. "
        f"за пренасочване. Ако предпочитате, можете да я вземете и от {ofis}."
    )


def t_trudov_dogovor(t: Trace) -> None:
    """bg: HR асистент подготвя трудови договори и уведомления до НАП за двама нови служители."""
    t.service, t.slice = "hr-asistent", "personal"
    s1 = t.p("NAME", "Стоян Илиев Вълчанов")
    egn1 = t.p("NATIONAL_ID", "6703124260")
    r1 = t.p("DOB", "роден на 12 март 1967 г.", ["роден на 12 март 1967 г.", "12 март 1967"])
    a1 = t.p(
        "ADDRESS",
        "гр. Пловдив, ул. „Капитан Райчо“ № 56, ет. 3, ап. 7",
        ["гр. Пловдив, ул. „Капитан Райчо“ № 56, ет. 3, ап. 7", "ул. „Капитан Райчо“ № 56"],
    )
    iban1 = t.p("IBAN", "BG65 UNCR 7000 1524 8933 17")
    s2 = t.p("NAME", "Десислава Ангелова Кирова")
    egn2 = t.p("NATIONAL_ID", "8809047131")
    r2 = t.p("DOB", "04.09.1988")
    tel2 = t.p("PHONE", "+359 32 64 18 27")
    eik = t.d("ЕИК 175421936")  # номер на работодателя (фирма) в Търговския регистър
    nkpd = t.d("НКПД 7231 3005")  # код на длъжност по класификатора
    zaplata = t.d("1 850 лв.")  # основна заплата: сума
    dog = t.d("ТД-118/01.12.2026")  # номер на договор с дата на сключване
    data = json.dumps(
        {
            "rabotodatel": eik,
            "dogovori": [
                {
                    "nomer": dog,
                    "sluzhitel": s1,
                    "egn": egn1,
                    "adres": a1,
                    "iban": iban1,
                    "dlazhnost": nkpd,
                    "zaplata": zaplata,
                },
                {
                    "nomer": "ТД-119/01.12.2026",
                    "sluzhitel": s2,
                    "egn": egn2,
                    "data_razhdane": r2,
                    "telefon": tel2,
                },
            ],
        },
        ensure_ascii=False,
    )
    t.user(
        f"Пусни уведомленията по чл. 62 за новите монтьори. Стоян е {r1}, данните са в системата."
    )
    t.p("NAME", "Стоян")
    t.tool("hr.dogovori", {"status": "novi"}, {"json": data}, style="oi")
    t.tool(
        "nap.uvedomlenie_chl62",
        {"egn": [egn1, egn2], "eik": "175421936"},
        {"vhodiasht_nomer": ["2626118840031", "2626118840032"]},
        style="oi",
    )
    t.reply(
        f"Уведомленията са подадени. {t.p('NAME', 'Вълчанов')} и {t.p('NAME', 'Кирова')} са с договори от 01.12.2026 "
        f"({dog} и ТД-119/01.12.2026), {zaplata} основна заплата."
    )


# ---------------------------------------------------------------------------- lt


def t_krepsinio_stovykla(t: Trace) -> None:
    """lt: krepšinio stovyklos asistentas registruoja vaiką; tėvai atsiunčia anketą el. paštu."""
    t.service, t.slice = "krepsinio-stovykla", "registracija"
    vaikas = t.p("NAME", "Dovydas Žemaitis")
    ak = t.p("NATIONAL_ID", "51305142189")
    gim = t.p(
        "DOB",
        "Gimęs 2013 m. gegužės 14 d.",
        ["Gimęs 2013 m. gegužės 14 d.", "2013 m. gegužės 14 d."],
    )
    mama = t.p("NAME", "Rūta Žemaitienė")
    mama_ak = t.p("NATIONAL_ID", "48202270935")
    adr = t.p(
        "ADDRESS",
        "Žirmūnų g. 112-45, LT-09121 Vilnius",
        ["Žirmūnų g. 112-45, LT-09121 Vilnius", "Žirmūnų g. 112-45"],
    )
    tel = t.p("PHONE", "+370 612 48 731")
    mail = t.p("EMAIL", "ruta.zemaitiene@gmail.com")
    iban_ = t.p("IBAN", "LT76 7300 0101 4728 1936")
    centras = t.d("Sabonio krepšinio centras")  # organizacijos pavadinimas, ne asmuo
    pamaina = t.d("II pamaina, liepos 6–17 d.")  # stovyklos datos, ne gimimo data
    kaina = t.d("390 Eur")  # stovyklos kaina
    anketa = (
        f"Vaiko vardas, pavardė: {vaikas}\nAsmens kodas: {ak}\n{gim}\n"
        f"Tėvų kontaktai: {mama} (a. k. {mama_ak}), tel. {tel}, {mail}\n"
        f"Adresas: {adr}\nPamaina: {pamaina}\nGrąžinimui: {iban_}\n"
        "Alergijos: riešutai"
    )
    t.user("Užregistruok vaiką iš šito laiško.")
    t.tool(
        "pastas.laiskas", {"id": "msg-4471"}, {"tema": "Registracija į stovyklą", "tekstas": anketa}
    )
    t.tool(
        "stovykla.registruoti",
        {"vaikas": vaikas, "pamaina": "II", "kaina": kaina, "vieta": centras},
        {"nr": "KS-2027-0331"},
    )
    t.reply(
        f"{t.p('NAME', 'Dovydas')} užregistruotas į {pamaina} ({centras}), kaina {kaina}. Pažymėjau alergiją riešutams. "
        f"Patvirtinimą išsiunčiau {t.p('NAME', 'Rūtai Žemaitienei')}."
    )


def t_silumos_saskaita_skundas(t: Trace) -> None:
    """lt: šilumos tiekėjo asistentas nagrinėja gyventojos skundą dėl sąskaitos (pokalbis ir sąskaitos PDF tekstas)."""
    t.service, t.slice = "silumos-klientai", "skundai"
    gy = t.p("NAME", "Vaida Kazlauskaitė")
    ak = t.p("NATIONAL_ID", "49007223183")
    gim = t.p("DOB", "1990-07-22")
    adr = t.p(
        "ADDRESS",
        "Savanorių pr. 178-12, Kaunas",
        ["Savanorių pr. 178-12, Kaunas", "Savanorių pr. 178-12"],
    )
    tel = t.p("PHONE", "8 612 34 567")
    kaim = t.p("NAME", "Algirdas Petrauskas")
    kaim_adr = t.p("ADDRESS", "Savanorių pr. 178-11", ["Savanorių pr. 178-11"])
    mok = t.d("mokėtojo kodas 300418822")  # mokėtojo kodas: buto sąskaitos numeris
    suma = t.d("148,37 Eur")  # sąskaitos suma
    kwh = t.d("1,214 MWh")  # suvartota šiluma
    sask = f"SĄSKAITA 2026-11\nMokėtojas: {gy}\nAdresas: {adr}\n{mok}\nSuvartota: {kwh}\nMokėti: {suma}\n"
    t.user(
        f"Laba diena, aš {gy}, gim. data {gim}, a. k. {ak}. Sąskaita už lapkritį {suma}, dvigubai daugiau nei "
        f"kaimyno {kaim} ({kaim_adr}), nors butai vienodi. Tel. {tel}",
        system="Tu esi šilumos tiekėjo klientų aptarnavimo asistentas.",
    )
    t.tool(
        "saskaitos.pdf_tekstas", {"mokėtojas": "300418822", "mėnuo": "2026-11"}, {"tekstas": sask}
    )
    t.tool("skaitikliai.rodmenys", {"butas": "178-12"}, {"daliklis": "neveikia nuo 2026-10-03"})
    t.reply(
        f"Gerb. {t.p('NAME', 'Vaida')}, jūsų buto šilumos daliklis neveikia nuo spalio 3 d., todėl sąskaita "
        "paskaičiuota pagal vidurkį. Atsiųsime meistrą ir perskaičiuosime sąskaitą."
    )


WRITERS = [f for name, f in list(globals().items()) if name.startswith("t_")]
