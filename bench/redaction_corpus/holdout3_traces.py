"""The third independent corpus (holdout3): hand-written agent runs, frozen before any detector ran on it.

Written for issue 20 by a third helper, in one sitting, without reading the
detectors (``flywheel/pii/``, ``promote/``) and before running any detector on
it. Style on purpose unlike holdout2: short chatty user turns, SMS and
voicemail transcripts, markdown tables and YAML front matter in results,
``Surname, Firstname`` and ``NACHNAME Vorname`` orders, names after roles in
four languages, addresses run into sentences, birth dates in prose, secrets in
headers, cookies, DSNs, query strings and base64 blobs, JSON inside strings.
Domains: bike-repair shop, tenant helpdesk, freight broker, school office,
beekeeping co-op, piano tuner, choir, ski school, bakery wholesale, ferry
desk, orchard, sailing club, coworking, language school, florist...

Every value was typed by hand; people, streets, companies and secrets are
invented. IBAN check digits and card Luhn digits are computed (``_kit``).
Each function's docstring starts with its language code.
Do not tune on this file.
"""

# ruff: noqa: E501
from __future__ import annotations

import json

from _kit import Trace, b64, iban, jwt, luhn, urlenc


# ------------------------------------------------------------------ English
def t_h3_en_bike_repair(t: Trace) -> None:
    """en: bike-repair shop, SMS transcript, customer named only in prose, card in a payment call."""
    t.slice = "bike-shop"
    t.service = "spokewise-counter"
    sms = (
        "[09:12] +44 7700 900418: hiya its about the cargo bike, gears slipping again\n"
        f"[09:14] shop: no worries, is this {t.p('NAME', 'Declan Moorcroft-Abiodun')}?\n"
        "[09:15] customer: yep thats me, can u pick it up from 31 Wherry Lane, Bristol BS3 4LT, I'm out till 6\n"
    )
    t.p("PHONE", "+44 7700 900418")
    t.p("ADDRESS", "31 Wherry Lane, Bristol BS3 4LT")
    t.user("Summarise the overnight texts and set up a collection.")
    t.tool("sms_inbox.fetch", {"since": "2025-11-04T00:00:00Z"}, sms, style="oi")
    card = t.p("CARD", luhn("4916 3302 7781 452"))
    t.tool(
        "till.charge_deposit",
        {"amount_gbp": t.d("25.00"), "pan": card, "exp": "08/27", "job": t.d("WO-24-3318")},
        {"status": "approved", "auth": t.d("A7Q2KX"), "model": t.d("Shimano Deore M6100")},
    )
    t.reply("Collection booked for the cargo bike (WO-24-3318); the £25.00 deposit was approved. Part likely needed: Shimano Deore M6100 shifter.")


def t_h3_en_tenant_helpdesk(t: Trace) -> None:
    """en: tenant helpdesk; a neighbour complaint with surnames after roles and a flat address."""
    t.slice = "tenants"
    t.service = "hearth-helpdesk"
    t.user(
        "Noise again from upstairs. The caretaker Mr "
        + t.p("NAME", "Pelletier-Nakamura")
        + " said he'd speak to them but nothing. I'm at "
        + t.p("ADDRESS", "Apartment 12B, 408 Larchmont Avenue, Cleveland, OH 44113", ["Apartment 12B, 408 Larchmont Avenue, Cleveland, OH 44113", "408 Larchmont Avenue"])
        + ", the people above are in 14B. My email is "
        + t.p("EMAIL", "sunniva.hargreave@postbox-mail.net")
        + " if you need it. Reference from last time was "
        + t.d("HD-2025-00719")
        + "."
    )
    t.tool(
        "Helpdesk::Tickets::Create",
        {"category": "noise", "unit": "12B", "building": t.d("Larchmont Court"), "reporter": t.p("NAME", "Sunniva Hargreave")},
        {"ticket": t.d("HD-2025-01488"), "assigned_to": "site team"},
    )
    t.reply("Logged as HD-2025-01488 for Larchmont Court. The site team will follow up within 48 hours.")


def t_h3_en_freight_broker(t: Trace) -> None:
    """en: freight broker: carrier onboarding with a TMS API key in a header map, driver phone, MC numbers as decoys."""
    t.slice = "freight"
    t.service = "loadboard-broker"
    t.user("Onboard the new carrier for lane CHI-ATL and send the rate con.")
    t.tool(
        "tms.http",
        {
            "method": "POST",
            "url": "https://api.tms-exchange.example/v3/carriers",
            "headers": {"Authorization": "Bearer " + t.p("SECRET", "tmsx_live_9fK2mQ7vR4wZ1pL8cT3nB6hY0dJ5sG"), "Content-Type": "application/json"},
            "body": json.dumps({"mc": t.d("MC-1184402"), "dot": t.d("3390571"), "dispatcher": t.p("NAME", "Ruairi Castellanos"), "cell": t.p("PHONE", "(312) 555-0176")}),
        },
        {"carrier_id": t.d("CAR-77120"), "insurance_ok": True},
    )
    t.tool("ratecon.send", {"carrier": "CAR-77120", "load": t.d("LD-5560913"), "rate_usd": t.d("2,350.00")}, {"sent": True})
    t.reply("Carrier CAR-77120 is onboarded; the rate confirmation for LD-5560913 at $2,350.00 has been sent.")


def t_h3_en_school_office(t: Trace) -> None:
    """en: school admin office: enrolment form with a DOB in prose, a parent in 'Surname, Firstname' order, SSN."""
    t.slice = "school"
    t.service = "front-office-helper"
    form = (
        "---\nform: enrolment\nyear_group: 4\n---\n"
        f"Pupil: {t.p('NAME', 'Oisin Thackeray')}, who was born on March 3rd, 2016 in Galway.\n"
        f"Parent/guardian: {t.p('NAME', 'THACKERAY, Rowena')} (mother). Home phone 020 7946 0925.\n"
        f"Guardian SSN for the fee waiver: {t.p('SSN', '412-58-0336')}\n"
    )
    t.p("DOB", "March 3rd, 2016")
    t.p("PHONE", "020 7946 0925")
    t.user("Process the enrolment form that came in this morning.")
    t.tool("docs.read", {"file": t.d("enrol_2025_Y4_0087.md")}, form, style="spanname")
    t.tool("mis.pupils.add", {"year": 4, "house": t.d("Kestrel"), "form_ref": "enrol_2025_Y4_0087.md"}, {"upn": t.d("K823100425017")})
    t.reply("Enrolment recorded for Year 4, Kestrel house (UPN K823100425017).")


def t_h3_en_beekeeping_coop(t: Trace) -> None:
    """en: beekeeping co-op: member payout with a lowercase IBAN, a voicemail transcript with a name and DOB."""
    t.slice = "coop"
    t.service = "hive-ledger"
    low = t.p("IBAN", iban("GB", "NWBK60161331926819").lower())
    vm = (
        "Voicemail 00:41 - Hi, it's Tamsin Okwuosa-Ferreira from the Ashdown apiary, "
        "just ringing about the honey payout. For the membership renewal you wanted my date of birth, "
        "it's the twenty-second of November 1969. Thanks, bye."
    )
    t.p("NAME", "Tamsin Okwuosa-Ferreira")
    t.p("DOB", "the twenty-second of November 1969")
    t.user("Pay out last month's honey share to the member who left a voicemail.")
    t.tool("voicemail.transcribe", {"box": 3, "msg": t.d("VM-000412")}, {"text": vm, "duration_s": 41})
    t.tool("ledger.payout", {"member": t.d("M-0193"), "account": low, "amount": t.d("312.40"), "batch": t.d("2025-10")}, {"ok": True})
    t.reply("Paid 312.40 to member M-0193 for batch 2025-10.")


def t_h3_en_piano_tuner(t: Trace) -> None:
    """en: piano-tuner booking bot; address inside a URL query string (percent-encoded), Google key in the same URL."""
    t.slice = "bookings"
    t.service = "tuning-diary"
    addr = t.p("ADDRESS", "77 Cobblestone Mews, Bath BA1 5HT")
    gkey = t.p("SECRET", "AIzaSyC8r2Lk5Vq0Wn7Tx3Bz9Hm4Pd1Fg6Ja2Es")
    url = f"https://maps.example-geo.com/api/geocode/json?address={urlenc(addr)}&key={gkey}"
    t.user(f"Mrs {t.p('NAME', 'Fitzwarren')} wants her Bechstein tuned next week, can you work out travel time?")
    t.tool("http_get", {"url": url}, {"status": "OK", "lat": t.d("51.3837"), "lng": t.d("-2.3597")})
    t.reply(f"It's about 25 minutes from the workshop. Model on file: {t.d('Bechstein A.114')}, last tuned {t.d('2024-11-18')}.")


def t_h3_en_coworking_ops(t: Trace) -> None:
    """en: coworking space ops: door controller logs with IPs, a cookie, a Stripe key in a .env, git SHA decoy."""
    t.slice = "ops"
    t.service = "deskhop-ops"
    env = (
        f"STRIPE_SECRET_KEY={t.p('SECRET', 'sk_live_51NqZ8cLm3RtY7vWp2Kx9Bd4Hf6Jg0Aa1Ss5Ee')}\n"
        f"DATABASE_URL=postgres://deskhop:{t.p('SECRET', 'Harbour!Lamp-2291')}@10.20.0.14:5432/deskhop\n"
        f"APP_VERSION={t.d('4.12.7')}\n"
        f"GIT_SHA={t.d('9b1e4c7a2f0d6b3e8c5a1f7d2e9b4c6a0f3d8e1b')}\n"
    )
    logs = (
        f"Nov 05 07:58:13 door-ctl[412]: badge ok member=ellery.vantongeren@deskhop.example from {t.p('IP', '198.51.100.42')}\n"
        f"Nov 05 07:58:14 web[88]: GET /portal Cookie: dh_session={t.p('SECRET', 's%3AqK8v2LmZ0rT5wX.9HfBn3Yc7Pd1Ga4Js6Ue8Io', ['s%3AqK8v2LmZ0rT5wX.9HfBn3Yc7Pd1Ga4Js6Ue8Io', 'qK8v2LmZ0rT5wX.9HfBn3Yc7Pd1Ga4Js6Ue8Io'])}\n"
        f"Nov 05 08:01:40 door-ctl[412]: firmware {t.d('v2.8.15-b3')} heartbeat from 2001:db8:4f::17\n"
    )
    t.p("EMAIL", "ellery.vantongeren@deskhop.example")
    t.p("IP", "2001:db8:4f::17")
    t.user("The front door let someone in at 07:58 with an expired plan - check config and logs.")
    t.tool("fs.cat", {"path": "/srv/deskhop/.env"}, env, style="oi")
    t.tool("journalctl", {"unit": "door-ctl", "since": "07:50"}, logs, style="oi")
    t.reply("The member's plan expired yesterday but the door controller cache (firmware v2.8.15-b3) was not refreshed. App 4.12.7 at 9b1e4c7a2f0d6b3e8c5a1f7d2e9b4c6a0f3d8e1b.")


def t_h3_en_ferry_desk(t: Trace) -> None:
    """en: ferry booking desk: passenger manifest as CSV in a JSON string, passport-ish ids as NATIONAL_ID, vessel names as decoys."""
    t.slice = "ferries"
    t.service = "crossing-desk"
    csv = (
        "surname,given,dob,nationality,doc\n"
        f"{t.p('NAME', 'Achterberg')},{t.p('NAME', 'Liesbeth')},1983-06-14,NL,{t.p('NATIONAL_ID', '123456782')}\n"
        f"{t.p('NAME', 'Mwangi-Holt')},{t.p('NAME', 'Kipchoge')},1990-02-27,NL,246813568\n"
    )
    t.p("DOB", "1983-06-14")
    t.p("DOB", "1990-02-27")
    t.p("NATIONAL_ID", "246813568")
    t.user("Add the two walk-on passengers to tonight's sailing manifest.")
    t.tool("manifest.import", {"sailing": t.d("SV-2211-HARWICH"), "vessel": t.d("Stena Hollandica"), "payload": json.dumps({"format": "csv", "rows": csv})}, {"imported": 2, "manifest_rev": t.d("r37")})
    t.reply("Two passengers added to SV-2211-HARWICH (Stena Hollandica), manifest revision r37. Departure 23:00 from Harwich.")
    t.d("Harwich")


def t_h3_en_llm_gateway(t: Trace) -> None:
    """en: LLM gateway debugging: OpenAI and Anthropic keys in a curl, a JWT whose payload carries an email, request ids as decoys."""
    t.slice = "platform"
    t.service = "gateway-debugger"
    tok = t.p("SECRET", jwt({"sub": "u_88213", "email": "priya.lindqvist@orchardnet.io", "role": "admin", "exp": 1767225600}, "mX3qT9vLp2Rw8Zk5Nb1Yc7Hd4Gf0Js6Ue"))
    t.p("EMAIL", "priya.lindqvist@orchardnet.io")
    curl = (
        f"curl https://gw.internal/v1/chat -H 'Authorization: Bearer {tok}' "
        f"-H 'x-upstream-openai: {t.p('SECRET', 'sk-proj-Lq7vT2mW9xZ4pK1rB8nC5yH3dF6gJ0sA2eU7iO4qW1tR')}' "
        f"-H 'x-upstream-anthropic: {t.p('SECRET', 'sk-ant-api03-Vb5Nm2Qx8Lk4Jh7Gf1Ds9Az3Wc6Er0Ty5Ui8Op2Lk4Jh7Gf1DsAA')}'"
    )
    t.user("Users get 401 from the gateway since the 4.3 deploy; here's the curl that fails.\n" + curl)
    t.tool("gateway.logs", {"request_id": t.d("req_01JC9ZK4T8W2M5N7P3Q6R1S0V4")}, {"status": 401, "reason": "upstream key revoked", "build": t.d("gw-4.3.0+20251101.7")})
    t.reply("The upstream key was revoked (request req_01JC9ZK4T8W2M5N7P3Q6R1S0V4, build gw-4.3.0+20251101.7). Rotate it in the vault.")


def t_h3_en_florist(t: Trace) -> None:
    """en: florist delivery: recipient card message with a name in a sentence, gift note, an Irish address, decoy product names."""
    t.slice = "orders"
    t.service = "petal-post"
    t.user(
        "Order for tomorrow: the Autumn Meadow bouquet, large. Card should say 'Happy 80th, Granny Philomena!' "
        f"Deliver to {t.p('ADDRESS', '5 Glenageary Park, Dún Laoghaire, Co. Dublin A96 K2X4')}. "
        f"It's for {t.p('NAME', 'Philomena Ó Faoláin')}, she's hard of hearing so knock loudly. Call me on "
        f"{t.p('PHONE', '+353 87 555 0142')} if there's a problem."
    )
    t.p("NAME", "Philomena")
    t.tool("orders.create", {"sku": t.d("BQ-AUTMEADOW-L"), "product": t.d("Autumn Meadow"), "delivery_date": t.d("2025-11-07"), "vase": t.d("Galway Crystal")}, {"order": t.d("PP-448120")})
    t.reply("Order PP-448120 created: Autumn Meadow (large), delivery 2025-11-07.")


# ------------------------------------------------------------------ German
def t_h3_de_fahrradwerkstatt(t: Trace) -> None:
    """de: Fahrradwerkstatt, Kundin im Fließtext in Nachname-Vorname-Reihenfolge, Adresse im Satz, Telefon national."""
    t.slice = "werkstatt"
    t.service = "kettenblatt-agent"
    t.user(
        f"Auftrag von Frau {t.p('NAME', 'Wendelgard Üffing-Rasmussen')}: E-Bike Inspektion, Akku lädt nicht mehr voll. "
        f"Abholung bei ihr in der {t.p('ADDRESS', 'Kastanienweg 17a, 48149 Münster')} am Freitag. Erreichbar unter "
        f"{t.p('PHONE', '0251 98765432')}. Rahmennummer {t.d('WBK2231904')}, Modell {t.d('Riese & Müller Charger4')}."
    )
    t.tool("werkstatt.auftrag_anlegen", {"kunde": "ÜFFING-RASMUSSEN Wendelgard", "leistung": t.d("Inspektion L"), "preis_eur": t.d("89,00")}, {"auftrag": t.d("WA-2025-1142")})
    t.p("NAME", "ÜFFING-RASMUSSEN Wendelgard")
    t.reply("Auftrag WA-2025-1142 angelegt (Inspektion L, 89,00 €). Abholung Freitag.")


def t_h3_de_mieterservice(t: Trace) -> None:
    """de: Mieterservice, Hausmeister nur mit Nachname, Geburtsdatum in Prosa, IBAN mit Leerzeichen, Steuer-ID."""
    t.slice = "mieter"
    t.service = "wohnbau-service"
    ib = t.p("IBAN", iban("DE", "50010517 0648213579", spaced=True))
    t.user(
        "Guten Tag, ich ziehe zum 1. Dezember in die Wohnung 3. OG links ein. Für den Mietvertrag: "
        f"ich heiße {t.p('NAME', 'Korbinian Streckenbach')}, geboren am 2. November 1958 in Passau, "
        f"meine Steuer-ID ist {t.p('NATIONAL_ID', '57 183 402 910')}. Die Miete bitte von {ib} abbuchen. "
        f"Herr {t.p('NAME', 'Pfisterer')} vom Hausmeisterdienst hat mir die Schlüssel schon gezeigt."
    )
    t.p("DOB", "2. November 1958")
    t.tool("Mietvertrag.Entwurf", {"objekt": t.d("WE-0304-L"), "beginn": t.d("2025-12-01"), "kaltmiete": t.d("740,00")}, {"entwurf": t.d("MV-88213"), "vorlage": t.d("Standard 2025/2")}, style="oi")
    t.reply("Der Vertragsentwurf MV-88213 für WE-0304-L (Beginn 2025-12-01, 740,00 € kalt) ist erstellt.")


def t_h3_de_spedition(t: Trace) -> None:
    """de: Spedition, Fahrer in Base64-JSON, Basic-Auth im Header, Kennzeichen und Sendungsnummern als Köder."""
    t.slice = "spedition"
    t.service = "frachtbörse-agent"
    fahrer = json.dumps({"fahrer": "Dragoslav Wieczorek", "handy": "+49 171 5550193", "geb": "14.07.1977"})
    t.p("NAME", "Dragoslav Wieczorek")
    t.p("PHONE", "+49 171 5550193")
    t.p("DOB", "14.07.1977")
    basic = t.p("SECRET", b64("dispo-ffm:Lagerhalle#7Tor"))
    t.user("Bitte den Fahrer für Tour 4471 an den Verlader melden.")
    t.tool(
        "VerladerPortal/avis",
        {"headers": {"Authorization": "Basic " + basic}, "tour": t.d("T-4471"), "lkw": t.d("F-KX 2207"), "fahrer_b64": b64(fahrer)},
        {"avis": t.d("AV-20251106-0032"), "rampe": 7},
    )
    t.p("SECRET", "Lagerhalle#7Tor")
    t.reply("Avis AV-20251106-0032 für Tour T-4471 gesendet, Rampe 7.")


def t_h3_de_schulsekretariat(t: Trace) -> None:
    """de: Schulsekretariat, Krankmeldung per E-Mail, Name in Signatur, Klassenbezeichnungen und Raumnummern als Köder."""
    t.slice = "schule"
    t.service = "sekretariat-assistent"
    mail = (
        "Betreff: Krankmeldung 7c\n\nSehr geehrte Damen und Herren,\n"
        "mein Sohn Jannik fehlt heute und morgen wegen Fieber. Bitte informieren Sie Frau "
        f"{t.p('NAME', 'Oberhollenzer')} (Klassenleitung).\n\nMit freundlichen Grüßen\n"
        f"{t.p('NAME', 'Gesine Vandrey-Kolb')}\n{t.p('ADDRESS', 'Am Lindenhügel 4, 01309 Dresden')}\n"
        f"Tel. {t.p('PHONE', '0351 4408127')} · {t.p('EMAIL', 'g.vandrey-kolb@familienpost.de')}"
    )
    t.p("NAME", "Jannik")
    t.user("Neue Krankmeldungen bitte ins Klassenbuch eintragen.")
    t.tool("Postfach.lesen", {"ordner": "Krankmeldungen"}, {"mails": [{"id": t.d("MSG-7C-1106"), "text": mail}]})
    t.tool("Klassenbuch.eintragen", {"klasse": t.d("7c"), "raum": t.d("B-214"), "tage": 2, "grund": "krank"}, {"ok": True})
    t.reply("Krankmeldung für die 7c (Raum B-214) für zwei Tage eingetragen. Die Klassenleitung wurde informiert.")


def t_h3_de_chor(t: Trace) -> None:
    """de: Chorverwaltung, Mitgliederliste als Markdown-Tabelle, Kartennummer, Köder: Werktitel und Komponisten."""
    t.slice = "verein"
    t.service = "chor-kasse"
    tabelle = (
        "| Stimme | Name | Beitrag |\n|---|---|---|\n"
        f"| Sopran | {t.p('NAME', 'Hildegunde Maierhöfer')} | bezahlt |\n"
        f"| Bass | {t.p('NAME', 'Quirin Ebersberger')} | offen |\n"
    )
    karte = t.p("CARD", luhn("5275 1903 6648 012"))
    t.user(f"Herr Ebersberger will seinen Beitrag mit Karte {karte} zahlen, bitte buchen. Probe heute: {t.d('Brahms Requiem')} op. 45.")
    t.tool("mitglieder.liste", {"stimme": "alle"}, tabelle, style="spanname")
    t.tool("kasse.karte_belasten", {"betrag": t.d("60,00"), "zweck": t.d("Jahresbeitrag 2026")}, {"beleg": t.d("KB-0611-19")})
    t.reply("Jahresbeitrag 2026 (60,00 €) gebucht, Beleg KB-0611-19.")


def t_h3_de_imkerei_ops(t: Trace) -> None:
    """de: Webshop einer Imkerei, GitLab-Token und SendGrid-Key in einer docker-compose-Datei, Server-IP, Versionsnummern."""
    t.slice = "ops"
    t.service = "honigshop-ops"
    compose = (
        "services:\n  shop:\n"
        f"    image: registry.example/honigshop:{t.d('3.4.1')}\n"
        "    environment:\n"
        f"      - GITLAB_DEPLOY_TOKEN={t.p('SECRET', 'glpat-Xr7Kq2Lm9Vt4Wz1Bn8Pc')}\n"
        f"      - SENDGRID_API_KEY={t.p('SECRET', 'SG.Hq3Lm8Vt2Rz7Kx1Bn5Pc9W.Fy4Jd0Ga6Se2Ui8Oq3Tr7Lk1Mn5Bv9Cx3Zw7Ha2Ds')}\n"
        f"      - SMTP_RELAY={t.p('IP', '185.199.44.23')}\n"
        f"      - BUILD_ID={t.d('20251104.12')}\n"
    )
    t.user("Seit dem Update auf 3.4.1 gehen keine Bestellbestätigungen mehr raus.")
    t.tool("repo.datei", {"pfad": "deploy/docker-compose.yml"}, compose, style="oi")
    t.reply("Im Build 20251104.12 zeigt SMTP_RELAY auf einen alten Server; bitte Relay-Adresse aktualisieren.")


# ------------------------------------------------------------------ French
def t_h3_fr_cabinet_veterinaire(t: Trace) -> None:
    """fr: cabinet vétérinaire, propriétaire en « NOM Prénom », adresse 'bis', date de naissance du propriétaire pour l'assurance."""
    t.slice = "veto"
    t.service = "clinique-des-tilleuls"
    t.user(
        f"Bonjour, c'est pour le chat Moustache, propriétaire {t.p('NAME', 'DELACOURTIE Apolline')}. "
        f"Elle habite {t.p('ADDRESS', '14 bis, impasse des Tanneurs, 69005 Lyon', ['14 bis, impasse des Tanneurs, 69005 Lyon', 'impasse des Tanneurs'])} et l'assurance demande sa date de naissance : "
        f"née le 23 août 1990. Son portable : {t.p('PHONE', '06 12 48 73 95')}."
    )
    t.p("DOB", "23 août 1990")
    t.tool("dossiers.animal.maj", {"animal": t.d("CHAT-2291"), "puce": t.d("250268731204418"), "vaccin": t.d("Purevax RCP")}, {"ok": True})
    t.reply("Dossier CHAT-2291 mis à jour ; rappel Purevax RCP prévu.")


def t_h3_fr_agence_location(t: Trace) -> None:
    """fr: gestion locative, maître d'ouvrage après le titre, IBAN FR dans une phrase, numéro de sécurité sociale."""
    t.slice = "location"
    t.service = "syndic-assistant"
    ib = t.p("IBAN", iban("FR", "30004008210001234567842"))
    t.user(
        f"Le locataire, M. {t.p('NAME', 'Bérenger Quatrefages')}, nous a transmis son RIB ({ib}) et son numéro de sécu "
        f"{t.p('NATIONAL_ID', '1 84 07 75 116 043 01')}. Le plombier, Maître artisan {t.p('NAME', 'Lemarchal')}, passera jeudi. "
        f"Le bail porte la référence {t.d('BAIL-2025-0418')}."
    )
    t.tool("Baux/ajouter_rib", {"bail": "BAIL-2025-0418", "lot": t.d("Lot 12")}, {"mandat_sepa": t.d("RUM-FR-000771")})
    t.reply("Mandat SEPA RUM-FR-000771 créé pour le bail BAIL-2025-0418 (Lot 12).")


def t_h3_fr_ecole_de_langues(t: Trace) -> None:
    """fr: école de langues, inscription envoyée en formulaire urlencoded, e-mail et téléphone international encodés."""
    t.slice = "inscriptions"
    t.service = "lingua-bureau"
    body = (
        f"nom={urlenc('Nkemelu-Vasseur')}&prenom=Ad%C3%A9la%C3%AFde&email={urlenc('adelaide.nv@courriel-perso.fr')}"
        f"&tel={urlenc('+33 6 71 24 58 09')}&niveau=B2&session={t.d('AUT-2025-B2')}"
    )
    t.p("NAME", "Nkemelu-Vasseur")
    t.p("NAME", "Adélaïde")
    t.p("EMAIL", "adelaide.nv@courriel-perso.fr")
    t.p("PHONE", "+33 6 71 24 58 09")
    t.user("Traite la nouvelle inscription reçue sur le site.")
    t.tool("formulaire.recu", {"content_type": "application/x-www-form-urlencoded"}, body, style="oi")
    t.reply("Inscription enregistrée en session AUT-2025-B2 (niveau B2). Début des cours le 10 novembre, salle Voltaire.")
    t.d("salle Voltaire")


def t_h3_fr_boulangerie_gros(t: Trace) -> None:
    """fr: boulangerie en gros, devis avec jeton Slack et clé Mailgun dans la config, IP client, SIRET et références produit en leurres."""
    t.slice = "grossiste"
    t.service = "fournil-commandes"
    cfg = json.dumps({
        "notif": {"slack_bot": t.p("SECRET", "xoxb-5521938470-7734109928-Hq8vLm2Tz5Kx9Rb1Wn4Pc7Yd"), "canal": "#commandes"},
        "mail": {"mailgun_key": t.p("SECRET", "key-3f9a2c7e1b8d4f6a0c5e9b2d7f1a4c8e")},
        "siret": t.d("83214578900027"),
    })
    t.user(f"Le client de la Brasserie du Port (IP {t.p('IP', '92.184.105.77')}) veut 40 baguettes tradition par jour. Prépare le devis.")
    t.tool("config.lire", {"cle": "integrations"}, {"valeur": cfg})
    t.tool("devis.creer", {"produit": t.d("BAG-TRAD-250"), "quantite": 40, "prix_unitaire": t.d("0,95")}, {"devis": t.d("DV-25-1107")})
    t.reply("Devis DV-25-1107 : 40 × BAG-TRAD-250 à 0,95 € pour la Brasserie du Port.")
    t.d("Brasserie du Port")


def t_h3_fr_club_voile(t: Trace) -> None:
    """fr: club de voile, licence avec date de naissance « né le », moniteur après son rôle, coordonnées GPS en leurres."""
    t.slice = "club"
    t.service = "capitainerie-bot"
    t.user(
        f"Licence à renouveler pour {t.p('NAME', 'Gwenaël Kerbiriou')}, né le 9 février 2004 à Brest. "
        f"Son moniteur, {t.p('NAME', 'Le Guennec')}, valide le niveau 4. Bateau : {t.d('Laser 4.7')} n° {t.d('FRA 211947')}. "
        f"Rendez-vous à la cale, position {t.d('48.3829 N, 4.4950 W')}."
    )
    t.p("DOB", "9 février 2004")
    t.tool("ffv.licence.renouveler", {"niveau": 4, "saison": t.d("2026")}, {"licence": t.d("L-0912-44871")}, style="spanname")
    t.reply("Licence L-0912-44871 renouvelée pour la saison 2026.")


# ------------------------------------------------------------------ Spanish
def t_h3_es_taller_bicis(t: Trace) -> None:
    """es: taller de bicis, cliente con dos apellidos en prosa, dirección 'C/ ... nº', teléfono nacional, DNI."""
    t.slice = "taller"
    t.service = "radios-y-cadenas"
    t.user(
        f"Ha llamado {t.p('NAME', 'Itziar Goikoetxea Barandiarán')} por la Orbea que dejó el martes. Quiere que se la "
        f"llevemos a {t.p('ADDRESS', 'C/ Arbolantxa 23, 2º izda, 48007 Bilbao')}. Su móvil es {t.p('PHONE', '688 41 27 93')} "
        f"y para la factura su DNI {t.p('NATIONAL_ID', '30675214E')}."
    )
    t.tool("taller.ordenes.buscar", {"marca": t.d("Orbea Orca M30"), "entrada": t.d("2025-11-04")}, {"orden": t.d("OT-5519"), "total": t.d("143,50")})
    t.reply("La orden OT-5519 (Orbea Orca M30) está lista; total 143,50 €. Programo la entrega.")


def t_h3_es_ayuda_inquilinos(t: Trace) -> None:
    """es: ayuda a inquilinos, la administradora por apellido, fecha de nacimiento en prosa, IBAN español."""
    t.slice = "inquilinos"
    t.service = "vecinos-ayuda"
    ib = t.p("IBAN", iban("ES", "01822370420201504433", spaced=True))
    t.user(
        "Hola, la administradora, la señora " + t.p("NAME", "Valdeolivas") + ", me pidió los datos para la fianza. "
        f"Me llamo {t.p('NAME', 'Nuria Sempere Ollé')}, nací el 5 de enero de 1983 y la cuenta es {ib}. "
        f"El piso es el de la {t.p('ADDRESS', 'Avenida del Cid 88, 5º C, 46018 Valencia')}."
    )
    t.p("DOB", "5 de enero de 1983")
    t.tool("fianzas.registrar", {"contrato": t.d("CTR-VLC-2025-3312"), "importe": t.d("1.600,00")}, {"resguardo": t.d("IVIVA-88-20251105")})
    t.reply("Fianza de 1.600,00 € registrada para CTR-VLC-2025-3312, resguardo IVIVA-88-20251105.")


def t_h3_es_agencia_cargas(t: Trace) -> None:
    """es: agencia de cargas, token de Twilio y de GitHub en un registro de consola, IP en X-Forwarded-For, decoys de contenedores."""
    t.slice = "cargas"
    t.service = "bodega-despacho"
    log = (
        f"[2025-11-05 11:02:41] POST /sms via twilio sid=AC4f9b2e7a1c8d3f6e0b5a9c2d7e1f4a8b auth={t.p('SECRET', '7d2f9a4c1e8b3f6a0d5c9e2b7f1a4d8c')}\n"
        f"[2025-11-05 11:02:42] X-Forwarded-For: {t.p('IP', '88.27.193.4')}, 10.0.3.9\n"
        f"[2025-11-05 11:02:43] git push token={t.p('SECRET', 'ghp_Rm4Kx8Lq2Vz7Tn1Bw5Pc9Yh3Fd6Gs0JaXe2U')}\n"
        f"[2025-11-05 11:02:44] contenedor {t.d('MSKU 7734102')} estado=en_aduana booking={t.d('BKG-VLC-0098231')}\n"
    )
    t.user("¿Por qué no se mandó el SMS de aviso al consignatario?")
    t.tool("consola.registros", {"servicio": "notificador", "ultimas": 4}, log, style="oi")
    t.reply("El SMS se envió pero el contenedor MSKU 7734102 sigue en aduana (booking BKG-VLC-0098231).")


def t_h3_es_secretaria_colegio(t: Trace) -> None:
    """es: secretaría de colegio, ficha de alumno en JSON dentro de texto, nombre mexicano con 'Col.', tutor por apellido."""
    t.slice = "colegio"
    t.service = "secretaria-virtual"
    ficha = json.dumps({
        "alumno": "Emiliano Tlapanco Ruvalcaba",
        "fecha_nacimiento": "2013-10-19",
        "domicilio": "Calle Jacarandas 412, Col. Del Valle, 03100 Ciudad de México",
        "tutor_email": "familia.tlapanco@correo-mx.com",
    }, ensure_ascii=False)
    t.p("NAME", "Emiliano Tlapanco Ruvalcaba")
    t.p("DOB", "2013-10-19")
    t.p("ADDRESS", "Calle Jacarandas 412, Col. Del Valle, 03100 Ciudad de México")
    t.p("EMAIL", "familia.tlapanco@correo-mx.com")
    t.user(f"El profesor {t.p('NAME', 'Zurbarán-Quiroga')} pide la ficha del alumno nuevo de 6º B.")
    t.tool("expedientes.obtener", {"grupo": t.d("6º B"), "ciclo": t.d("2025-2026")}, {"ficha": ficha, "matricula": t.d("SEP-09DPR2841X")})
    t.reply("Ficha enviada al profesor; matrícula SEP-09DPR2841X, ciclo 2025-2026.")


def t_h3_es_escuela_esqui(t: Trace) -> None:
    """es: escuela de esquí, reserva con tarjeta AmEx, cookie de sesión, nombres de pistas y estaciones como señuelos."""
    t.slice = "reservas"
    t.service = "nieve-reservas"
    amex = t.p("CARD", luhn("3714 496353 9842"))
    t.user(
        f"Reserva de clase particular para {t.p('NAME', 'Bruno Echevarría')} el sábado en {t.d('Baqueira Beret')}, pista {t.d('Escornacrabes')}. "
        f"Paga con la Amex {amex}."
    )
    t.tool(
        "pasarela_pago",
        {"headers": {"Cookie": "nv_sess=" + t.p("SECRET", "eyJ1aWQiOjkxMjJ9.ZkT4qW.r8Lm2Vx7Kp1Bn5Hc9Yd3Fg0Js6"), "User-Agent": t.d("NieveApp/5.2.0 (iOS 18.1)")}, "importe": t.d("95,00")},
        {"operacion": t.d("OP-2025-118827"), "estado": "autorizada"},
    )
    t.reply("Clase reservada en Baqueira Beret; operación OP-2025-118827 autorizada por 95,00 €.")


# ------------------------------------------------------------------ Italian
def t_h3_it_frutteto(t: Trace) -> None:
    """it: azienda agricola (frutteto), nome in prosa con 'nata il', codice fiscale, indirizzo 'via ... n.', PEC."""
    t.slice = "agricola"
    t.service = "frutteto-gestione"
    t.user(
        f"La nuova raccoglitrice è la signora {t.p('NAME', 'Ornella Scarpellini')}, nata il 30 novembre 1971 a Trento, "
        f"codice fiscale {t.p('NATIONAL_ID', 'SCRRLL71S70L378G')}, residente in {t.p('ADDRESS', 'via dei Meleti 9, 38057 Pergine Valsugana')}. "
        f"Scrivile alla PEC {t.p('EMAIL', 'ornella.scarpellini@pec-privati.it')}. Varietà in raccolta: {t.d('Golden Delicious')}, lotto {t.d('LT-2025-GD-07')}."
    )
    t.p("DOB", "30 novembre 1971")
    t.tool("Personale.assumi", {"mansione": "raccolta", "contratto": t.d("OTD-2025-114")}, {"matricola": t.d("0441")}, style="oi")
    t.reply("Assunzione registrata (contratto OTD-2025-114, matricola 0441).")


def t_h3_it_coworking_iban(t: Trace) -> None:
    """it: coworking a Bologna, IBAN italiano e telefono fisso nel testo di una fattura base64."""
    t.slice = "fatture"
    t.service = "spazio-comune"
    fattura = (
        "FATTURA n. 2025/0318\n"
        f"Intestatario: {t.p('NAME', 'Ludovico Ferraresi-Bassani')}\n"
        f"Pagamento su {t.p('IBAN', iban('IT', 'K0306909606100000063718'))}\n"
        f"Tel. {t.p('PHONE', '051 644 2871')}\n"
        f"Totale: {t.d('366,00')} EUR (IVA 22%)\n"
    )
    t.user("Controlla la fattura allegata e registrala.")
    t.tool("allegati.scarica", {"id": t.d("ALL-8812")}, {"mime": "text/plain", "base64": b64(fattura)})
    t.reply("Fattura 2025/0318 registrata, totale 366,00 EUR.")
    t.d("2025/0318")


# ------------------------------------------------------------------ Dutch
def t_h3_nl_fietsenmaker(t: Trace) -> None:
    """nl: fietsenmaker, klant met tussenvoegsel, adres met postcode, geboren op, IBAN NL, token in URL-query."""
    t.slice = "fietsen"
    t.service = "trapper-service"
    ib = t.p("IBAN", iban("NL", "RABO0312746589"))
    t.user(
        f"Meneer {t.p('NAME', 'Jeroen van Oosterwijk')} (geboren op 8 juni 2001) wil een lease-fiets. "
        f"Adres: {t.p('ADDRESS', 'Zeemanlaan 41, 2313 SW Leiden')}. Incasso van {ib}."
    )
    t.p("DOB", "8 juni 2001")
    tok = t.p("SECRET", "lk_prod_Tz8Qm3Vr1Lx6Wn9Bp4Kc2Hy7Ds5Gf0Ja")
    t.tool("http_get", {"url": f"https://lease.example-fiets.nl/api/offer?model={t.d('Gazelle Ultimate C380')}&access_token={tok}"}, {"offerte": t.d("OF-2025-00923"), "maandbedrag": t.d("39,95")})
    t.reply("Offerte OF-2025-00923 voor een Gazelle Ultimate C380: 39,95 per maand.")


def t_h3_nl_huurdersloket(t: Trace) -> None:
    """nl: huurdersloket, BSN, e-mail en mobiel in een chatbericht, AWS-sleutels in een ticketbijlage."""
    t.slice = "huur"
    t.service = "woonloket"
    t.user(
        f"Mijn BSN is {t.p('NATIONAL_ID', '111222333')}, mail me op {t.p('EMAIL', 'fenna.dijkhuizen@mijnpost.nl')} "
        f"of bel {t.p('PHONE', '06-12345678')}. Mevrouw {t.p('NAME', 'Dijkhuizen')} dus, van de Lange Nieuwstraat."
    )
    ini = (
        "[default]\n"
        f"aws_access_key_id = {t.p('SECRET', 'AKIAQ3TZ7LMW2RX9VKPE')}\n"
        f"aws_secret_access_key = {t.p('SECRET', 'r7Hq2Lm9Vt4Wz1Bn8Pc5Yd3Fg6Js0Ka2Ue7Io4T')}\n"
        f"region = {t.d('eu-west-1')}\n"
    )
    t.tool("TicketBijlage.ophalen", {"ticket": t.d("WL-20251105-17")}, {"bestand": "credentials", "inhoud_b64": b64(ini)})
    t.reply("Ticket WL-20251105-17: de bijlage bevatte serverreferenties; die zijn doorgestuurd naar IT.")


WRITERS = [v for k, v in sorted(globals().items()) if k.startswith("t_") and callable(v)]
