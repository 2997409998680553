"""The second independent corpus (holdout2): hand-written agent runs, frozen before any tuning.

Written for issue 20 by a different helper than ``frozen_traces.py``, in one
sitting, before reading any detector's rules in detail and before running
any detector on it. Style on purpose unlike the first corpora: other agent
domains (veterinary, freight, legal intake, tenancy, recruiting, utilities,
pharmacy, observability, CI/CD, school admin, museum loans...), tool names
in dotted, CamelCase and slash forms, PII in long prose with no keyed copy,
surnames alone after a role word ("ask Okonkwo" style), names that are in
no common first-name list, addresses written in each language's order,
birth dates in prose, credentials of many providers inside headers,
connection strings, YAML, shell history and logs, base64 and percent
encoding, JSON in strings, and look-alike decoys (versions, build ids,
hashes, order numbers, timestamps, product codes, capitalised non-names,
street-like product names).

Every value was typed by hand; names, streets, companies and secrets are
invented. IBAN check digits and card Luhn digits are computed (``_kit``);
the Spanish DNI letter by its published mod-23 rule (``_dni``).
Each function's docstring starts with its language code.
Do not tune on this file.
"""

# ruff: noqa: E501
from __future__ import annotations

import json

from _kit import Trace, b64, iban, jwt, luhn, urlenc


def _dni(number: str) -> str:
    return number + "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23]


# ------------------------------------------------------------------ English
def t_h2_en_vet_intake(t: Trace) -> None:
    """en: veterinary clinic intake, owner name and address only in a long prose message."""
    t.slice = "vet-intake"
    t.service = "pawcare-assistant"
    t.user(
        "Hi there - our spaniel Biscuit has been limping since Sunday after the Greenway Trail walk. "
        f"The account should be under {t.p('NAME', 'Ifeoluwa Brannigan-Soto')}; we moved last month to "
        f"{t.p('ADDRESS', '1187 Quarry Bend Road, Missoula, MT 59801')} so the old address on file is wrong. "
        f"Best number is {t.p('PHONE', '406-555-0193')}. Microchip {t.d('985112004471203')} if that helps.",
        system="You are PawCare, the front-desk agent of a veterinary practice.",
    )
    t.tool(
        "PawCare.Patients.Search",
        {"species": "dog", "pet_name": "Biscuit", "chip": "985112004471203"},
        {"matches": [{"patient": t.d("VET-00981"), "breed": "Cocker Spaniel", "last_visit": t.d("2025-08-19T10:40:00-06:00")}]},
    )
    t.tool("PawCare.Appointments.Book", {"patient": "VET-00981", "slot": t.d("2025-11-06T15:20:00-07:00"), "reason": "lameness, front left"}, {"booking": t.d("APT-77310"), "vet": "Dr. Halloran"})
    t.p("NAME", "Halloran")
    t.reply(f"Booked Biscuit with Dr. Halloran on Thursday at 3:20 pm (booking APT-77310). Please bring the vaccination card.")


def t_h2_en_freight_claims(t: Trace) -> None:
    """en: freight damage claim, surname-only references after roles, consignee in JSON."""
    t.slice = "freight"
    t.service = "haulage-claims-bot"
    t.user(
        "Pallet 3 of shipment BOL 7730-1192 arrived crushed. The driver, "
        f"{t.p('NAME', 'Mbeki-Larkin')}, noted it on the POD. Please ask {t.p('NAME', 'Oduya')} in the Reno depot to hold the pallet for inspection "
        "and loop in our claims lead Ms " + t.p("NAME", "Quartermaine") + "."
    )
    t.d("7730-1192")
    t.tool(
        "freight/claims/open",
        {
            "bol": "7730-1192",
            "consignee": {"contact_person": t.p("NAME", "Tobiah Quartermaine"), "dock_phone": t.p("PHONE", "+1 (775) 555-0148"), "site": "Reno RDC-2"},
            "damage": {"pallets": [3], "photos": 4},
        },
        {"claim": t.d("CLM-2025-040117"), "sla_hours": 72, "carrier_ref": t.d("HX9-558201")},
    )
    t.reply("Claim CLM-2025-040117 is open; the depot will hold pallet 3 until the adjuster visits.")


def t_h2_en_legal_intake(t: Trace) -> None:
    """en: legal intake, DOB and SSN written as a paralegal would, case numbers as decoys."""
    t.slice = "legal"
    t.service = "intake-paralegal"
    t.user(
        f"New client: {t.p('NAME', 'Marisol Achterhof')}. She was born on the 4th of July, 1979 "
        f"and her social is {t.p('SSN', '523-61-0947')}. Opposing counsel is Kessler & Vane LLP, docket {t.d('2:25-cv-01184')}. "
        "She's available Tuesdays after 2."
    )
    t.p("DOB", "4th of July, 1979")
    t.tool(
        "clio.matters.create",
        {"client": {"first": "Marisol", "last": "Achterhof"}, "practice_area": "employment", "docket": "2:25-cv-01184"},
        {"matter_id": t.d("MAT-8841"), "conflict_check": "clear", "opened": t.d("2025-10-30")},
        style="oi",
    )
    t.reply("Matter MAT-8841 opened; conflict check is clear.")


def t_h2_en_tenancy_email(t: Trace) -> None:
    """en: tenancy agent reading an email thread; names after 'landlord', UK address with flat."""
    t.slice = "tenancy"
    t.service = "letting-agent"
    thread = (
        "From: lettings desk\nTo: tenant\n\n"
        f"The landlord, {t.p('NAME', 'Haverkamp')}, has agreed to replace the boiler at "
        f"{t.p('ADDRESS', 'Flat 4, 22 Tannery Close, Leeds LS6 2QW')} next week. "
        f"Your deposit reference is {t.d('DPS-1107-55823')}.\n\n"
        f"Kind regards,\n{t.p('NAME', 'Wilhelmina Szabo-Grieve')}\nLettings Coordinator"
    )
    t.user("What did the letting agency say about the boiler?")
    t.tool("MailboxReader", {"folder": "INBOX", "query": "boiler"}, {"messages": [{"id": t.d("msg-0c8e4f7a"), "body": thread}]}, style="oi")
    t.reply("They say the boiler will be replaced next week.")


def t_h2_en_recruiting(t: Trace) -> None:
    """en: recruiting pipeline, a CV in base64, candidate email and phone inside it."""
    t.slice = "recruiting"
    t.service = "talent-scout"
    cv = (
        f"{t.p('NAME', 'Anwuli Fairweather-Diallo')}\n"
        f"{t.p('EMAIL', 'anwuli.fd@quillmail.org')} | {t.p('PHONE', '+44 20 7946 0381')}\n"
        f"{t.p('ADDRESS', '9 Cobbler Row, Norwich NR2 4PH')}\n"
        "Experience: 6 years data engineering (Spark, Airflow, dbt)."
    )
    t.user("Screen the latest applicant for the Senior Data Engineer role and summarise.")
    t.tool(
        "ats.v2.attachments.get",
        {"application": t.d("APP-55-20931"), "kind": "resume"},
        {"mime": "text/plain", "data": b64(cv), "size": len(cv)},
    )
    t.tool("ats.v2.applications.note", {"application": "APP-55-20931", "note": "strong dbt background; schedule tech screen"}, {"ok": True})
    t.reply("The applicant has six years of data engineering; I scheduled a tech screen.")


def t_h2_en_observability(t: Trace) -> None:
    """en: observability agent: logs with emails, client IPs, bearer tokens; trace ids are decoys."""
    t.slice = "sre"
    t.service = "oncall-copilot"
    tok = t.p("SECRET", "ya29.a0AfB_byC3kLmQ9xTz7RwVp2HsN8dYe4JuG6oFi1Ba5Qc0Mt")
    log = (
        f"2025-11-03T02:14:07.311Z INFO  req={t.d('7f3c9a12e4b05d68')} user={t.p('EMAIL', 'rupert.okafor@lumenbridge.co')} ip={t.p('IP', '203.0.113.87')} path=/v1/export status=200\n"
        f"2025-11-03T02:14:09.002Z WARN  upstream retry auth=\"Bearer {tok}\" attempt=2\n"
        f"2025-11-03T02:14:11.870Z ERROR pod=export-worker-{t.d('6d9f8b7c5-xk2lp')} oom_killed=true rss_mb=2048\n"
    )
    t.user("Why did the export worker crash at 02:14 UTC?")
    t.tool("LogQL.query", {"expr": '{app="export-worker"} |= "ERROR"', "since": "1h"}, log)
    t.reply(f"The export worker pod was OOM-killed at 02:14:11 (trace {t.d('4a1e9c2b7d3f8e60a5b2c9d1e7f3a804')}).")


def t_h2_en_cicd_yaml(t: Trace) -> None:
    """en: CI agent reading a workflow YAML and a shell history with many provider keys."""
    t.slice = "cicd"
    t.service = "pipeline-doctor"
    yaml_text = (
        "name: release\non: push\nenv:\n"
        f"  NPM_TOKEN: {t.p('SECRET', 'npm_Zk3q9RtLm2Wx7Vb4Nc8Yp1Hd6Gs0Ja5Fe2U')}\n"
        f"  SLACK_WEBHOOK: https://hooks.slack.com/services/{t.p('SECRET', 'T04QX7LMN/B06RZ2KPD/q8Lm3Vz1Xc7Tr5Wn2Hy9Pb4K')}\n"
        f"  DOCKERHUB_PASSWORD: {t.p('SECRET', 'wintry-Ochre-4417-lark')}\n"
        f"  IMAGE_TAG: {t.d('2025.11.2-rc3')}\n"
    )
    history = (
        f"  501  export HF_TOKEN={t.p('SECRET', 'hf_QpLw2Zr8Tk4Xm7Vn1Bc9Yd3Fs6Gh0JaKuEi')}\n"
        f"  502  curl -H 'X-Shopify-Access-Token: {t.p('SECRET', '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')}' https://acme-store.myshopify.com/admin/api/2024-07/orders.json\n"
        f"  503  doctl auth init -t {t.p('SECRET', 'dop_v1_7c2e9f4a1b8d3e6c0f5a9b2d7e1c4f8a3b6d0e9c2f5a8b1d4e7c0f3a6b9d2e5c8f')}\n"
        f"  504  git rev-parse HEAD  # {t.d('c0ffee5e1a2b3c4d5e6f708192a3b4c5d6e7f809')}\n"
    )
    t.user("The release workflow fails at the publish step, can you look?")
    t.tool("repo.read_file", {"path": ".github/workflows/release.yml", "ref": "main"}, yaml_text)
    t.tool("shell.history", {"host": "build-agent-07", "lines": 4}, history)
    t.reply("The publish step fails because NPM_TOKEN was revoked; rotate it in the repository secrets.")


def t_h2_en_pharmacy(t: Trace) -> None:
    """en: pharmacy refill; DOB 'DOB:' short form, prescriber surname after Dr, Rx numbers as decoys."""
    t.slice = "pharmacy"
    t.service = "refill-helper"
    t.user(
        f"Refill for {t.p('NAME', 'Cordelia Vantongeren')}, DOB: {t.p('DOB', '02/11/1969')}, Rx {t.d('RX-6612093')}. "
        f"Prescriber is Dr {t.p('NAME', 'Abernethy-Oyelowo')}. Deliver to the usual place please."
    )
    t.tool("RxHub.Refill", {"rx": "RX-6612093", "qty": 30, "ndc": t.d("0093-7146-56")}, {"status": "queued", "eta": t.d("2025-11-05"), "copay": "12.50"})
    t.reply("Refill queued; it should arrive on 5 November. Copay is $12.50.")


def t_h2_en_museum_loans(t: Trace) -> None:
    """en: museum loan agreement, capitalised non-names and artwork titles as decoys, one real name."""
    t.slice = "collections"
    t.service = "registrar-assistant"
    t.user(
        f"Draft the loan agreement for {t.d('Portrait of a Young Woman in Blue')} ({t.d('Acc. 1932.17.4')}) going to the "
        f"{t.d('Rijksmuseum')} for the {t.d('Golden Age Revisited')} show. Courier will be {t.p('NAME', 'Evander Pyrgos')}; "
        f"crate dimensions {t.d('142 x 118 x 36 cm')}. Insurance value {t.d('EUR 2,400,000')}."
    )
    t.tool("Loans.DraftAgreement", {"object": "1932.17.4", "borrower": "Rijksmuseum", "exhibition": "Golden Age Revisited", "courier": "Evander Pyrgos"}, {"draft": t.d("LA-2025-0193"), "pages": 14})
    t.reply("Draft LA-2025-0193 is ready for review.")


def t_h2_en_utility_billing(t: Trace) -> None:
    """en: energy utility: account holder in prose, meter ids and tariff names as decoys, card last digits."""
    t.slice = "billing"
    t.service = "gridline-care"
    card = luhn("5425 2334 3010 910")
    t.user(
        f"I'm calling for my mother, {t.p('NAME', 'Philippa Dunmore-Akande')}, whose bill went up. Meter {t.d('MPAN 1200023305963')} "
        f"on the {t.d('Fixed Saver 24')} tariff. Please put the arrears on my card {t.p('CARD', card)} exp {t.d('09/28')}."
    )
    t.tool("billing.accounts.lookup", {"mpan": "1200023305963"}, {"account": t.d("GL-40019233"), "holder": "Philippa Dunmore-Akande", "balance": -143.27, "tariff": "Fixed Saver 24"})
    t.reply("The arrears of 143.27 GBP were paid; account GL-40019233 is back to zero.")


def t_h2_en_school_admin(t: Trace) -> None:
    """en: school admin: pupil's date of birth 'born 14.09.2014' style, guardian phone with extension."""
    t.slice = "school"
    t.service = "front-office"
    t.user(
        f"Enrol {t.p('NAME', 'Kestrel Amankwah')} in Year 5. Born {t.p('DOB', '14 September 2014')}. Guardian: {t.p('NAME', 'Yaw Amankwah')}, "
        f"work number {t.p('PHONE', '(312) 555-0177 ext. 42')}. Previous school: {t.d('Lincoln Park Elementary')}."
    )
    t.tool("sis.enrol", {"grade": 5, "homeroom": t.d("5B"), "start": t.d("2025-11-10")}, {"student_id": t.d("S-2025-4471"), "locker": t.d("L-118")})
    t.reply("Enrolled, student S-2025-4471, homeroom 5B from 10 November.")


def t_h2_en_crypto_support(t: Trace) -> None:
    """en: exchange support: API key and secret pasted in chat, withdrawal address and tx hashes as decoys."""
    t.slice = "exchange-support"
    t.service = "ledgerly-support"
    t.user(
        f"My bot stopped trading. Key {t.p('SECRET', 'LGR-9xK2mQ7vT4pW8zR1nB5cY3hJ6dF0aE2s')} secret "
        f"{t.p('SECRET', 'Rk8Zq2Lm7Tx4Vn1Pw9Yb3Hc6Fd0Gs5JaQe2Uo8Mi3')}. The last tx was "
        f"{t.d('0x5e1d3a7c9b2f4e6a8c0d1b3f5a7e9c2d4b6f8a0c1e3d5b7f9a2c4e6d8b0f1a3c')}."
    )
    t.tool("ExchangeAdmin.KeyStatus", {"key_prefix": "LGR-9xK2", "ticket": t.d("SUP-220931")}, {"status": "disabled", "reason": "ip whitelist mismatch", "seen_from": t.p("IP", "198.51.100.244")})
    t.reply("Your key was disabled because requests came from an address outside its whitelist. Please create a new key; never share the secret in chat.")


# ------------------------------------------------------------------ German
def t_h2_de_hausverwaltung(t: Trace) -> None:
    """de: Hausverwaltung, Mieter nur in Prosa, Anschrift in deutscher Reihenfolge, Hausmeister nur mit Nachnamen."""
    t.slice = "hausverwaltung"
    t.service = "verwalter-assistent"
    t.user(
        f"Hallo, hier schreibt {t.p('NAME', 'Ottilie Brennecke-Yilmaz')} aus der {t.p('ADDRESS', 'Eichendorffstraße 23, 04277 Leipzig')}, "
        f"Wohnung 3 links. Seit Freitag tropft die Decke im Bad. Der Hausmeister, Herr {t.p('NAME', 'Wübbenhorst')}, "
        "ist leider nicht erreichbar. Können Sie jemanden schicken?"
    )
    t.tool("Schadensmeldung.Anlegen", {"objekt": t.d("OBJ-LE-0417"), "einheit": "3L", "kategorie": "Wasserschaden"}, {"vorgang": t.d("VG-2025-11873"), "handwerker": "Sanitär Krüger GmbH"})
    t.reply("Der Vorgang VG-2025-11873 ist angelegt; die Firma Sanitär Krüger GmbH meldet sich heute.")


def t_h2_de_personal(t: Trace) -> None:
    """de: Personalabteilung, Geburtsdatum ausgeschrieben in Prosa und unter Schlüssel, Steuer-ID, Gehaltskonto."""
    t.slice = "personal"
    t.service = "hr-bot"
    konto = iban("DE", "370400440532013000")
    t.user(
        f"Bitte lege {t.p('NAME', 'Tjark Oltmanns')} als neuen Mitarbeiter an. Er ist am {t.p('DOB', '3. Februar 1991')} in Emden geboren, "
        f"Steuer-ID {t.p('NATIONAL_ID', '57 549 285 017')}, Gehaltskonto {t.p('IBAN', konto)}."
    )
    t.tool(
        "PersonalStamm/anlegen",
        {"person": {"vorname": "Tjark", "nachname": "Oltmanns", "geburtsdatum": t.p("DOB", "03.02.1991")}, "eintritt": t.d("01.12.2025"), "kostenstelle": t.d("KST 4711")},
        {"personalnummer": t.d("PN-008812"), "status": "angelegt"},
    )
    t.reply("Tjark ist mit Personalnummer PN-008812 angelegt, Eintritt am 01.12.2025.")


def t_h2_de_werkstatt(t: Trace) -> None:
    """de: Autowerkstatt, Kennzeichen und Fahrgestellnummer als Köder, Handynummer national."""
    t.slice = "werkstatt"
    t.service = "autohaus-termine"
    t.user(
        f"Moin, mein Passat ({t.d('HH-KL 4417')}, FIN {t.d('WVWZZZ3CZLE012345')}) braucht neue Bremsen. "
        f"Ich bin {t.p('NAME', 'Henning Roloff')}, erreichbar unter {t.p('PHONE', '0171 4829305')}."
    )
    t.tool("Werkstatt.TerminBuchen", {"leistung": "Bremsen VA", "datum": t.d("2025-11-12"), "teile": [t.d("1K0 615 301 AA")]}, {"auftrag": t.d("WA-33918"), "preis": "389,00 EUR"})
    t.reply("Ihr Termin am 12.11. ist gebucht, Auftrag WA-33918.")


def t_h2_de_arztbrief(t: Trace) -> None:
    """de: Arztbrief als JSON im String im JSON, Versichertennummer, Geburtsdatum 'geb.'."""
    t.slice = "praxis"
    t.service = "praxis-assistent"
    brief = json.dumps(
        {
            "patient": f"{t.p('NAME', 'Gesine Pohlmann-Ekwueme')}, geb. {t.p('DOB', '21.06.1958')}",
            "kasse": {"name": "AOK Nordost", "versichertennummer": t.p("NATIONAL_ID", "T482915037")},
            "befund": "Kontrolle in 6 Wochen, HbA1c 7,1 %",
            "icd": t.d("E11.9"),
        },
        ensure_ascii=False,
    )
    t.user("Fasse den letzten Arztbrief zusammen.")
    t.tool("Dokumente.Lesen", {"id": t.d("DOC-2025-5531")}, json.dumps({"mime": "application/json", "content": brief}, ensure_ascii=False))
    t.reply("Kontrolle in sechs Wochen, HbA1c 7,1 % (E11.9).")


def t_h2_de_it_zugang(t: Trace) -> None:
    """de: IT-Zugang, Passwort in Prosa ('lautet'), Proxy-Authorization Basic, interne IPs."""
    t.slice = "it-support"
    t.service = "it-helpdesk"
    basic_pw = t.p("SECRET", "Fjord#Lachs-2291")
    t.user(
        f"Mein VPN geht nicht. Das Passwort lautet {t.p('SECRET', 'Kormoran!77zeh')} und der Proxy ist 10.12.4.9:3128."
    )
    t.p("IP", "10.12.4.9")
    t.tool(
        "netdiag.probe",
        {"target": "intranet.firma.local", "headers": {"Proxy-Authorization": "Basic " + b64(f"m.roloff:{basic_pw}")}},
        {"status": 407, "via": t.p("IP", "10.12.4.1"), "client_version": t.d("5.2.1184")},
    )
    t.reply("Der Proxy lehnt die Anmeldung ab (407). Bitte das Passwort im Self-Service zurücksetzen.")


def t_h2_de_lieferschein(t: Trace) -> None:
    """de: Lieferschein mit Anschrift 'Am Lindenanger', Ansprechpartnerin, Köder mit Straßen-ähnlichen Produktnamen."""
    t.slice = "logistik"
    t.service = "lager-agent"
    t.user(
        f"Bitte 2 Stück {t.d('Sofa Lindenallee')} und 1 {t.d('Regal Hafenstraße')} an {t.p('ADDRESS', 'Am Lindenanger 4, 99084 Erfurt')} liefern. "
        f"Ansprechpartnerin vor Ort ist Frau {t.p('NAME', 'Dörthe Schimmelpfennig')}."
    )
    t.tool("WMS/auftrag/anlegen", {"positionen": [{"sku": t.d("MOB-LA-220"), "menge": 2}, {"sku": t.d("MOB-HS-090"), "menge": 1}], "lieferfenster": t.d("KW 47")}, {"lieferschein": t.d("LS-2025-88120")})
    t.reply("Lieferschein LS-2025-88120 ist erstellt, Lieferung in KW 47.")


def t_h2_de_kuendigung(t: Trace) -> None:
    """de: Kündigung per Formular (URL-kodiert), E-Mail mit Umlaut-Transkription, Telefonnummer +49 kodiert."""
    t.slice = "vertraege"
    t.service = "vertragsbot"
    email = t.p("EMAIL", "g.schroeder-kuehn@posteo.de")
    phone = t.p("PHONE", "+49 30 40817752")
    body = f"vertrag={t.d('VTR-2210-77')}&email={urlenc(email)}&telefon={urlenc(phone)}&grund=Umzug"
    t.user("Bitte die Kündigung abschicken.")
    t.tool("http.post", {"url": "https://kundenportal.example/kuendigung", "content_type": "application/x-www-form-urlencoded", "body": body}, {"status": 202, "eingang": t.d("EG-55102")})
    t.reply("Die Kündigung ist eingegangen (EG-55102).")


def t_h2_de_verein(t: Trace) -> None:
    """de: Vereinsverwaltung, Mitgliederliste als CSV in einem String, Namen ohne Anrede."""
    t.slice = "verein"
    t.service = "vereinsbot"
    csv = (
        "mitgliedsnr;name;eintritt;beitrag\n"
        f"{t.d('M-0193')};{t.p('NAME', 'Jördis Kasulke')};{t.d('2019-04-01')};48,00\n"
        f"{t.d('M-0207')};{t.p('NAME', 'Lambert Quendt')};2021-09-15;48,00\n"
    )
    t.user("Wer hat den Beitrag für 2025 noch nicht bezahlt?")
    t.tool("Vereinsregister.Export", {"format": "csv"}, csv)
    t.reply("Beide Mitglieder der Liste haben noch nicht bezahlt.")


# ------------------------------------------------------------------ French
def t_h2_fr_notaire(t: Trace) -> None:
    """fr: étude notariale, adresse française avec bis, date de naissance en lettres, maître + nom."""
    t.slice = "notariat"
    t.service = "etude-assistant"
    t.user(
        f"Bonjour, je prépare l'acte pour {t.p('NAME', 'Gwenaëlle Kerbrat')}, née le {t.p('DOB', '12 mars 1988')} à Quimper, domiciliée "
        f"{t.p('ADDRESS', '14 bis, allée des Tilleuls, 35000 Rennes')}. Maître {t.p('NAME', 'Lefranc-Diouf')} signera le {t.d('18 novembre 2025')}."
    )
    t.tool("Actes.Preparer", {"type": "vente", "lot": t.d("LOT-35-2291"), "prix": "245 000 EUR"}, {"projet": t.d("ACT-2025-0441")})
    t.reply("Le projet d'acte ACT-2025-0441 est prêt pour relecture.")


def t_h2_fr_mutuelle(t: Trace) -> None:
    """fr: mutuelle, NIR espacé, téléphone 06 et +33 du même numéro, courriel dans une URL."""
    t.slice = "mutuelle"
    t.service = "mutuelle-conseil"
    email = t.p("EMAIL", "loic.marechal-tounkara@laposte.net")
    t.user(
        f"Je suis {t.p('NAME', 'Loïc Maréchal-Tounkara')}, numéro de sécu {t.p('NATIONAL_ID', '1 84 06 75 112 048 93')}. "
        f"Rappelez-moi au {t.p('PHONE', '06 71 28 49 30')} s'il vous plaît."
    )
    t.tool("crm.contact.get", {"url": f"https://crm.mutuelle.example/contacts?mail={urlenc(email)}&fmt=json"}, {"tel_international": t.p("PHONE", "+33 6 71 28 49 30"), "contrat": t.d("MUT-44-00918")})
    t.reply("Votre conseiller vous rappellera demain matin.")


def t_h2_fr_recrutement(t: Trace) -> None:
    """fr: recrutement, clés françaises nom/prénom/adresse, date de naissance JJ/MM/AAAA sous clé, salaire en leurre."""
    t.slice = "recrutement"
    t.service = "rh-recrutement"
    t.user("Ajoute la candidate retenue au registre du personnel.")
    t.tool(
        "SIRH.Salarie.Creer",
        {
            "nom": t.p("NAME", "Ravelojaona"),
            "prenom": t.p("NAME", "Héloïse"),
            "date_de_naissance": t.p("DOB", "05/08/1992"),
            "adresse": t.p("ADDRESS", "3 impasse du Moulin-Vert, 69007 Lyon"),
            "salaire_brut": t.d("42 500"),
            "convention": t.d("Syntec 3018"),
        },
        {"matricule": t.d("MAT-000731"), "statut": "créé"},
        style="oi",
    )
    t.reply("Héloïse est enregistrée sous le matricule MAT-000731.")


def t_h2_fr_banque_prose(t: Trace) -> None:
    """fr: virement dicté en prose: IBAN FR en minuscules, bénéficiaire, motif, montant en leurre."""
    t.slice = "banque"
    t.service = "banque-en-ligne"
    fr_iban = iban("FR", "30004000031234567890143", spaced=True)
    t.user(
        f"Fais un virement de 780 euros à mon propriétaire {t.p('NAME', 'Amaury Desgrange')}, sur le compte {t.p('IBAN', fr_iban.lower())}, "
        f"motif « loyer novembre {t.d('LOY-11-2025')} »."
    )
    t.tool("Virements.Creer", {"iban": fr_iban.replace(" ", ""), "montant": "780.00", "devise": "EUR"}, {"id": t.d("VIR-9921-004"), "etat": "en attente"})
    t.p("IBAN", fr_iban.replace(" ", ""))
    t.reply("Virement VIR-9921-004 en attente de validation.")


def t_h2_fr_cles_api(t: Trace) -> None:
    """fr: agent d'intégration, clé Stripe restreinte, secret de webhook, jeton GitHub à grain fin, cookie de session."""
    t.slice = "integrations"
    t.service = "integrateur"
    t.user(
        f"La synchro des paiements échoue. Clé restreinte : {t.p('SECRET', 'rk_live_51QxT8vLm2Kp9Zr4Wy7Bc3Nd6Fh1Gs5Jk')}, "
        f"secret du webhook {t.p('SECRET', 'whsec_Jq4Lm8Tz2Xv7Nc1Pb5Yd9Hs3Fg6Kw0Ra')}."
    )
    t.tool(
        "GitHubRepo.dispatch",
        {"repo": "acme/paiements", "workflow": "sync.yml", "auth": f"token {t.p('SECRET', 'github_pat_11AQX7LMN0q8Lm3Vz1Xc7T_r5Wn2Hy9Pb4KqZt6Rm8Sv1Ux3Ya5Cb7De9Fg2Hi4Jk6Lm8No0Pq')}"},
        {"status": 204},
    )
    t.tool(
        "http.get",
        {"url": "https://dashboard.paiements.example/api/events?limit=20", "headers": {"Cookie": f"__Host-sess={t.p('SECRET', 'bW9kZT1hZG1pbiZ1aWQ9ODgxMg.Zx9Lq2Tm7Vr4Wn8Pb1Yc')}; lang=fr"}},
        {"events": [{"id": t.d("evt_3QxT8v2Kp9Zr4Wy7"), "type": "charge.failed"}]},
    )
    t.reply("Les paiements échouent côté Stripe (charge.failed) ; régénérez la clé restreinte.")


def t_h2_fr_livraison_prose(t: Trace) -> None:
    """fr: livraison, adresse sur plusieurs lignes dans un message, code porte et étage en leurres."""
    t.slice = "livraison"
    t.service = "livreur-bot"
    t.user(
        "Pour la livraison de demain :\n"
        f"{t.p('NAME', 'Solène Abitbol-Garnier')}\n{t.p('ADDRESS', '27 rue de la Pépinière')}\n75008 Paris\n"
        f"Code porte {t.d('4B19')}, 3e étage. Colis {t.d('COL-FR-771204')}."
    )
    t.tool("Tournee.Ajouter", {"colis": "COL-FR-771204", "creneau": t.d("08:00-12:00")}, {"ok": True, "position": 14})
    t.reply("Ajouté à la tournée de demain matin.")


def t_h2_fr_assurance_jwt(t: Trace) -> None:
    """fr: assurance, JWT dans un en-tête avec le courriel dans sa charge utile, numéro de sinistre en leurre."""
    t.slice = "sinistres"
    t.service = "assur-agent"
    email = t.p("EMAIL", "m.nguyen-fabre@free.fr")
    token = t.p("SECRET", jwt({"sub": "cli-7731", "email": email, "role": "assure"}, "Xq9Lm2Tz7Rw4Vp8Hs1Nd6Ye3Ju5Gc0Ok"))
    t.user("Où en est mon sinistre ?")
    t.tool("Sinistres.Statut", {"headers": {"Authorization": f"Bearer {token}"}, "sinistre": t.d("SIN-2025-118804")}, {"etat": "expertise planifiée", "date": t.d("2025-11-21")})
    t.reply("L'expertise est planifiée pour le 21 novembre.")


# ------------------------------------------------------------------ Spanish
def t_h2_es_clinica_dental(t: Trace) -> None:
    """es: clínica dental, nombre y fecha de nacimiento en prosa, dirección con piso, DNI."""
    t.slice = "dental"
    t.service = "citas-dental"
    t.user(
        f"Buenas, soy {t.p('NAME', 'Itziar Etxeberria Goikoetxea')}, nacida el {t.p('DOB', '7 de octubre de 1975')}. "
        f"Vivo en {t.p('ADDRESS', 'Calle de la Almudena 12, 3º B, 28005 Madrid')} y mi DNI es {t.p('NATIONAL_ID', _dni('48213067'))}. "
        "Quería pedir cita para una limpieza."
    )
    t.tool("Agenda.Reservar", {"tratamiento": "limpieza", "gabinete": t.d("G-2"), "fecha": t.d("2025-11-14T17:30:00+01:00")}, {"cita": t.d("CIT-10442")})
    t.reply("Tiene cita el 14 de noviembre a las 17:30 (CIT-10442).")


def t_h2_es_inmobiliaria(t: Trace) -> None:
    """es: inmobiliaria, claves españolas nombre/apellidos/domicilio, teléfono móvil sin prefijo y con +34."""
    t.slice = "alquileres"
    t.service = "inmo-agente"
    t.user("Registra al nuevo inquilino del piso de Chamberí.")
    t.tool(
        "CRM_Inquilinos_Alta",
        {
            "nombre": t.p("NAME", "Xabier"),
            "apellidos": t.p("NAME", "Zubizarreta Olano"),
            "domicilio_anterior": t.p("ADDRESS", "Avda. de Burgos 41, 28036 Madrid"),
            "movil": t.p("PHONE", "612 48 73 95"),
            "contacto_urgencia": {"nombre_completo": t.p("NAME", "Maialen Olano Arrieta"), "tel": t.p("PHONE", "+34 688 21 47 03")},
            "referencia_piso": t.d("CHB-0419"),
        },
        {"contrato": t.d("ALQ-2025-0077"), "fianza": "2 meses"},
        style="oi",
    )
    t.reply("Inquilino registrado con el contrato ALQ-2025-0077.")


def t_h2_es_soporte_tecnico(t: Trace) -> None:
    """es: soporte técnico, contraseña en prosa ('es'), cadena de conexión MySQL, clave de Google."""
    t.slice = "soporte"
    t.service = "soporte-ti"
    pw = t.p("SECRET", "Ribera_Seca!39")
    t.user(
        f"No puedo entrar al panel; mi contraseña es {t.p('SECRET', 'Albaricoque#2023')} y el técnico, el señor {t.p('NAME', 'Arizmendi')}, me dijo que la cambiara."
    )
    t.tool(
        "config.leer",
        {"archivo": "/etc/panel/app.ini"},
        f"[database]\nurl = mysql://panel_rw:{pw}@10.20.0.15:3306/panel\n[maps]\nkey = {t.p('SECRET', 'AIzaSyB7xQ2LmTz9Rv4Wp1Nc8Hd3Yf6Gs0JkUaE')}\nversion = {t.d('4.18.2')}\n",
    )
    t.p("IP", "10.20.0.15")
    t.reply("He restablecido su acceso; recibirá un correo para elegir una contraseña nueva.")


def t_h2_es_reclamacion_base64(t: Trace) -> None:
    """es: reclamación adjunta en base64 (JSON), con correo, teléfono y dirección mexicana."""
    t.slice = "reclamaciones"
    t.service = "atencion-clientes"
    doc = json.dumps(
        {
            "reclamante": t.p("NAME", "Yaretzi Quispe Mamani"),
            "correo": t.p("EMAIL", "yaretzi.qm@correo-andino.mx"),
            "telefono": t.p("PHONE", "+52 55 4817 2930"),
            "domicilio": t.p("ADDRESS", "Av. Insurgentes Sur 1602, Col. Crédito Constructor, 03940 Ciudad de México"),
            "pedido": t.d("PED-MX-55821"),
        },
        ensure_ascii=False,
    )
    t.user("Procesa la reclamación que llegó por el formulario.")
    t.tool("Formularios.Adjunto", {"id": t.d("FRM-9920")}, {"contenido_b64": b64(doc), "tipo": "application/json"})
    t.reply("Reclamación registrada para el pedido PED-MX-55821.")


def t_h2_es_nomina(t: Trace) -> None:
    """es: nómina, número de la Seguridad Social, IBAN ES en minúsculas sin espacios, fecha de nacimiento dd-mm-aaaa."""
    t.slice = "nominas"
    t.service = "nominas-bot"
    es_iban = iban("ES", "21000418450200051332")
    t.user(
        f"Da de alta a {t.p('NAME', 'Eulalia Barquín Sotomayor')} en nómina. Fecha de nacimiento {t.p('DOB', '23-01-1980')}, "
        f"NSS {t.p('NATIONAL_ID', '28 10448293 57')}, cuenta {t.p('IBAN', es_iban.lower())}."
    )
    t.tool("Nomina.Alta", {"categoria": t.d("Grupo 3"), "convenio": t.d("99000585011981"), "alta": t.d("2025-12-01")}, {"expediente": t.d("EXP-20931")})
    t.reply("Alta tramitada, expediente EXP-20931.")


def t_h2_es_webhook_twilio(t: Trace) -> None:
    """es: webhook de SMS con credenciales de Twilio en la URL y el cuerpo, y el mensaje del cliente."""
    t.slice = "sms"
    t.service = "sms-gateway"
    sid = t.p("SECRET", "AC7f3e9a1c5b2d8e4f6a0c9b3d7e1f5a2c")
    auth = t.p("SECRET", "9c4e1f7a3b8d2e6c0f5a1b9d4e8c2f7a")
    t.user("¿Por qué no llegan los SMS de confirmación?")
    t.tool(
        "Integraciones.Probar",
        {"endpoint": f"https://{sid}:{auth}@api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json", "To": urlenc(t.p("PHONE", "+34 622 90 18 47")), "Body": "Su cita es mañana"},
        {"code": 20003, "message": "Authenticate", "more_info": "https://www.twilio.com/docs/errors/20003"},
    )
    t.reply("Twilio rechaza las credenciales (error 20003); hay que renovar el token.")


def t_h2_es_decoys(t: Trace) -> None:
    """es: señuelos: referencias, versiones, horarios, nombres de productos con 'Calle' y 'Plaza'."""
    t.slice = "catalogo"
    t.service = "catalogo-bot"
    t.user(
        f"Actualiza el catálogo: la lámpara {t.d('Plaza Mayor')} pasa a {t.d('49,90 €')}, el sofá {t.d('Gran Vía')} (ref. {t.d('SOF-GV-3P')}) "
        f"se agota, y la versión del catálogo es {t.d('v7.3.0')} del {t.d('2025-11-02')} a las {t.d('09:45')}. Lote {t.d('L2025-4471')}."
    )
    t.tool("Catalogo.Actualizar", {"cambios": 2, "version": "v7.3.0", "checksum": t.d("sha256:9b74c9897bac770ffc029102a200c5de4c1e9ed8f6d0a7f7c3e1b2a4d6f8e0c1")}, {"ok": True, "publicado": t.d("2025-11-02T09:47:13Z")})
    t.reply("Catálogo v7.3.0 publicado.")


# ------------------------------------------------------------------ Italian, Dutch, Portuguese
def t_h2_it_condominio(t: Trace) -> None:
    """it: amministratore di condominio, nome in prosa, indirizzo, data di nascita, codice fiscale."""
    t.slice = "condominio"
    t.service = "amministratore-bot"
    t.user(
        f"Buongiorno, sono {t.p('NAME', 'Cosimo Santangelo-Rinaldi')}, nato il {t.p('DOB', '9 maggio 1966')}, proprietario dell'interno 7 in "
        f"{t.p('ADDRESS', 'Via dei Gelsomini 27, 40125 Bologna')}. Il mio codice fiscale è {t.p('NATIONAL_ID', 'SNTCSM66E09A944K')}."
    )
    t.tool("Condominio.Rate", {"unita": t.d("INT-7"), "anno": 2025}, {"rate": [{"scadenza": t.d("2025-12-31"), "importo": "312,40"}]})
    t.reply("La prossima rata di 312,40 EUR scade il 31 dicembre.")


def t_h2_nl_gemeente(t: Trace) -> None:
    """nl: gemeente, vergunning, naam en adres in proza, BSN, geboortedatum, wachtwoord."""
    t.slice = "gemeente"
    t.service = "loket-assistent"
    t.user(
        f"Goedemiddag, mijn naam is {t.p('NAME', 'Fenna Bakhuizen')}, geboren op {t.p('DOB', '17 maart 1992')}, wonend op "
        f"{t.p('ADDRESS', 'Lindenlaan 7, 3581 AB Utrecht')}. Mijn BSN is {t.p('NATIONAL_ID', '111222333')}. "
        f"Het wachtwoord voor mijn account is {t.p('SECRET', 'Tulpenveld_88')}."
    )
    t.tool("Vergunningen/Aanvraag", {"soort": "dakkapel", "zaak": t.d("Z-2025-004419")}, {"status": "ontvangen", "termijn": "8 weken"})
    t.reply("Uw aanvraag Z-2025-004419 is ontvangen.")


def t_h2_pt_ginasio(t: Trace) -> None:
    """pt: ginásio, inscrição com morada, data de nascimento, NIF e telemóvel."""
    t.slice = "ginasio"
    t.service = "ginasio-bot"
    t.user(
        f"Olá, o meu nome é {t.p('NAME', 'Joaquim Valadares Teixeira')}, nascido em {t.p('DOB', '30 de junho de 1985')}. Moro na "
        f"{t.p('ADDRESS', 'Rua das Flores 118, 2º Esq., 4050-262 Porto')}, NIF {t.p('NATIONAL_ID', '245718392')}, telemóvel {t.p('PHONE', '912 384 506')}."
    )
    t.tool("Socios.Inscrever", {"plano": t.d("Plano Anual Plus"), "inicio": t.d("2025-11-15")}, {"socio": t.d("SOC-8841")})
    t.reply("Inscrição concluída, sócio SOC-8841.")


# ------------------------------------------------------------------ structured and mixed
def t_h2_mixed_k8s_secret(t: Trace) -> None:
    """en: kubernetes agent reading a Secret manifest (base64 values) and an RSA private key."""
    t.slice = "platform"
    t.service = "kube-agent"
    pg_pw = t.p("SECRET", "Quokka-Marble-6620")
    rsa = t.p(
        "SECRET",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAw7Zq2Lm9Tx4Vn8Rb1Yc6Hd3Fg0Js5Ka2Eu8Mi3Ro7Pq1Sw4Xz9\nBv2Nc6Hd0Fg3Js7Ka1Eu5Mi9Ro2Pq6Sw0Xz3Bv7Nc1Hd4Fg8Js2Ka6Eu0Mi4Ro8Pq2\n-----END RSA PRIVATE KEY-----",
    )
    manifest = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: orders-db\n  namespace: prod\ntype: Opaque\ndata:\n"
        f"  username: {b64('orders_app')}\n  password: {b64(pg_pw)}\n"
        f"  tls.key: {b64(rsa)}\n"
    )
    t.user("Is the orders-db secret in prod the same as in staging?")
    t.tool("kubectl", {"args": ["get", "secret", "orders-db", "-n", "prod", "-o", "yaml"]}, manifest, style="spanname")
    t.reply(f"They differ: prod was rotated at revision {t.d('rev-00417')}.")


def t_h2_mixed_aws_cli(t: Trace) -> None:
    """en: AWS credentials file and STS output, session token, account id as decoy."""
    t.slice = "cloud"
    t.service = "cloud-ops"
    creds = (
        "[default]\n"
        f"aws_access_key_id = {t.p('SECRET', 'AKIAZ4Q7LMN2RTX9WBP3')}\n"
        f"aws_secret_access_key = {t.p('SECRET', 'Lq8zR3mT7vX2kP9wN4bY1cH6dF0gJ5aE8sU2iO3r')}\n"
        "region = eu-west-1\n"
    )
    t.user("Which role does the nightly job assume?")
    t.tool("fs.read", {"path": "~/.aws/credentials"}, creds)
    t.tool(
        "aws.sts.get_caller_identity",
        {},
        {"Account": t.d("123456789012"), "Arn": "arn:aws:sts::123456789012:assumed-role/nightly-etl/i-0a1b2c3d", "Credentials": {"AccessKeyId": t.p("SECRET", "ASIAZ4Q7LMN2RTX9QK5D"), "SessionToken": t.p("SECRET", "FwoGZXIvYXdzEJr//////////wEaDLq8zR3mT7vX2kP9wNCKgAR4bY1cH6dF0gJ5aE8sU2iO3rZq")}},
    )
    t.reply("The nightly job assumes nightly-etl in account 123456789012.")


def t_h2_mixed_smtp_amqp(t: Trace) -> None:
    """en: mail and queue config: SMTP password, AMQP URL, Redis URL with only a password, SendGrid key."""
    t.slice = "messaging"
    t.service = "notify-svc-agent"
    cfg = {
        "smtp": {"host": "smtp.mailrelay.example", "port": 587, "user": "notify", "pass": t.p("SECRET", "p3Lican-Drift-19")},
        "broker_url": f"amqp://notify:{t.p('SECRET', 'Hx7-wombat-QQ2')}@mq-1.internal:5672/notify",
        "cache": f"redis://:{t.p('SECRET', 'v9Tr2LmQx7Kp4Wz1')}@cache.internal:6379/2",
        "sendgrid": {"api_key": t.p("SECRET", "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")},
        "app_version": t.d("3.4.0+build.1187"),
    }
    t.user("Emails are not going out since the last deploy.")
    t.tool("config.dump", {"service": "notify"}, json.dumps({"config": json.dumps(cfg)}))
    t.reply("SMTP rejects the login; the relay password was changed.")


def t_h2_mixed_slack_discord(t: Trace) -> None:
    """en: chat bots: Slack user token and app token, Discord bot token, Telegram bot token in prose."""
    t.slice = "chatops"
    t.service = "chatops-agent"
    t.user(
        f"Rotate everything that leaked in #general: the user token {t.p('SECRET', 'xoxp-3928475610-2841937465-5528391047263-8f2c7e1a9b4d6f3e0c5a8b2d1e9f7c4a')}, "
        f"the app token {t.p('SECRET', 'xapp-1-A06RZ2KPD-7741039285610-9e3c1a7f5b2d8e4c6a0f9b3d7e1c5a2f8b4d6e0c')}, "
        f"the Discord bot token {t.p('SECRET', 'MTE4NzQ0MTcyOTM4NTUxOTE4Mw.GqZt6R.m8Sv1Ux3Ya5Cb7De9Fg2Hi4Jk6Lm8No0PqRsTu')} "
        f"and the Telegram one {t.p('SECRET', '7741039285:AAF9e3c1a7f5b2d8e4c6a0f9b3d7e1c5a2f8')}."
    )
    t.tool("ChatOps.RevokeTokens", {"count": 4, "channel": t.d("C04QX7LMN")}, {"revoked": 4, "audit": t.d("AUD-77120")})
    t.reply("All four tokens are revoked (audit AUD-77120).")


def t_h2_mixed_openai_anthropic(t: Trace) -> None:
    """en: LLM gateway config as TOML, OpenAI and Anthropic keys, Azure SAS URL, model names as decoys."""
    t.slice = "llm-gateway"
    t.service = "gateway-admin"
    toml = (
        "[providers.openai]\n"
        f"api_key = \"{t.p('SECRET', 'sk-proj-Vn4Kp9Wb1Yc6Fd0Gs5Ja2Eu8Mi3RoHq3Zr8Lm2Tx7')}\"\n"
        f"model = \"{t.d('gpt-4.1-mini-2025-04-14')}\"\n"
        "[providers.anthropic]\n"
        f"api_key = \"{t.p('SECRET', 'sk-ant-api03-Zq8rLm2Kx9Tn4Wv7Pb1Yc6Hd3Fg0Js5Ua9Ei4Mo1Qr8Tv3Xy6Zb0Cd5Fh2Gk7Jl4Mn9Pq1Rs6')}\"\n"
        f"model = \"{t.d('claude-sonnet-4-5')}\"\n"
        "[storage]\n"
        f"blob = \"https://gwlogs.blob.core.windows.net/traces?sv=2024-08-04&ss=b&srt=co&sp=rwl&se=2026-01-01T00:00:00Z&sig={urlenc(t.p('SECRET', 'Kx9Tn4Wv7Pb1Yc6Hd3Fg0Js5Ua9Ei4Mo1Qr8Tv3Xy6=')) }\"\n"
    )
    t.user("Which models does the gateway route to?")
    t.tool("Gateway/Config/Read", {"file": "gateway.toml"}, toml)
    t.reply("It routes to gpt-4.1-mini and claude-sonnet-4-5.")


def t_h2_mixed_query_strings(t: Trace) -> None:
    """en: analytics agent with tracking URLs: email, phone %2B-encoded, name in utm, API key in query."""
    t.slice = "analytics"
    t.service = "growth-analyst"
    url1 = (
        "https://track.newsletter.example/open?uid=" + t.d("u-558201")
        + "&e=" + urlenc(t.p("EMAIL", "bartholomew.nwosu@kitemail.com"))
        + "&ph=" + urlenc(t.p("PHONE", "+49 176 22849103"))
        + "&utm_campaign=" + t.d("black-friday-2025")
    )
    url2 = f"https://api.geo.example/v3/lookup?key={t.p('SECRET', 'gk_Q7mT2xL9vR4pW8zN1bC5yH3jD6fA0sE2')}&q=Rotterdam&ts={t.d('1762156800')}"
    t.user("Which subscribers opened the Black Friday mail from Rotterdam?")
    t.tool("Analytics.RawHits", {"day": t.d("2025-11-03")}, {"hits": [{"url": url1, "status": 200}, {"url": url2, "status": 200}], "sampled": False})
    t.reply("One open from Rotterdam in the sample.")


def t_h2_mixed_deep_nesting(t: Trace) -> None:
    """en: event-ticketing API result with PII four levels deep, names under 'attendee' and 'signed_by'."""
    t.slice = "ticketing"
    t.service = "boxoffice-agent"
    result = {
        "order": {
            "id": t.d("TKT-2025-0099182"),
            "lines": [
                {"seat": t.d("Row K Seat 14"), "holder": {"attendee": t.p("NAME", "Radomír Kubíček"), "contact": {"mail": t.p("EMAIL", "r.kubicek@seznam.cz")}}},
                {"seat": "Row K Seat 15", "holder": {"attendee": t.p("NAME", "Saoirse Ní Bhraonáin"), "contact": {"mail": t.p("EMAIL", "saoirse.nb@eircom.net")}}},
            ],
            "waiver": {"signed_by": t.p("NAME", "Radomír Kubíček"), "signed_at": t.d("2025-10-28T19:02:44+01:00")},
            "payment": {"card": t.p("CARD", luhn("3782 822463 1000")), "auth_code": t.d("A1B2C3")},
        }
    }
    t.user("Resend the tickets for order TKT-2025-0099182.")
    t.tool("boxoffice.orders.get", {"order": "TKT-2025-0099182"}, json.dumps({"ok": True, "data": json.dumps(result, ensure_ascii=False)}, ensure_ascii=False))
    t.tool("boxoffice.tickets.resend", {"order": "TKT-2025-0099182"}, {"sent": 2})
    t.reply("Both tickets were resent.")


def t_h2_mixed_decoys_tech(t: Trace) -> None:
    """en: release notes full of look-alikes: versions, build ids, hashes, timestamps, codes, capitalised terms."""
    t.slice = "release-notes"
    t.service = "changelog-writer"
    t.user(
        f"Write release notes for {t.d('Orion 5.12.0')} (build {t.d('20251103.1742')}, commit {t.d('3f9a2c1')}). "
        f"Fixed: {t.d('ORN-4471')} crash on {t.d('Android 14')}, {t.d('ORN-4502')} slow sync with {t.d('Google Drive')}. "
        f"Artifacts: {t.d('sha256:5d41402abc4b2a76b9719d911017c592ae5f1f0e3d8c7b6a5f4e3d2c1b0a9f8e')}, size {t.d('48.2 MB')}. "
        f"Released {t.d('Monday 3 November 2025')} at {t.d('17:42 UTC')} by the {t.d('Mobile Platform')} team."
    )
    t.tool("Changelog.Publish", {"version": "5.12.0", "channel": t.d("stable"), "rollout": t.d("10%")}, {"url": "https://notes.orion.example/5.12.0", "id": t.d("rn_01JC7K2M9QXT")})
    t.reply("Release notes for Orion 5.12.0 are published.")


def t_h2_mixed_decoys_ops(t: Trace) -> None:
    """en: ops look-alikes: phone-like ticket numbers, IP-like version strings, card-like tracking ids, ISO dates."""
    t.slice = "ops"
    t.service = "ops-digest"
    t.user(
        f"Summarise the overnight digest: incident {t.d('INC0012847')}, change {t.d('CHG-2025-11-0042')}, tracking {t.d('1Z 999 AA1 01 2345 6784')}, "
        f"firmware {t.d('10.4.2.118')}, config rev {t.d('r20251103-0215')}, invoice {t.d('INV/2025/000318')}, "
        f"disk serial {t.d('WD-WX41D9384TJK')}, UUID {t.d('6f1c2a9e-4b7d-4e3a-9c5f-1a2b3c4d5e6f')}, window {t.d('02:00-04:00 CET')}."
    )
    t.tool("Digest.Compose", {"items": 9, "format": "markdown"}, {"digest_id": t.d("DG-7731"), "words": 212})
    t.reply("Digest DG-7731 is ready.")


def t_h2_en_spanname_and_env(t: Trace) -> None:
    """en: tool name only in the span name with a surname in it; environment JSON with a phone and an address."""
    t.slice = "concierge"
    t.service = "concierge-agent"
    t.root["flywheel.env.s0_ref"] = f"households/{t.p('EMAIL', 'wiremu.tane@koru-mail.nz')}/snapshot-3"
    t.root["flywheel.environment"] = json.dumps(
        {"household": {"primary": t.p("NAME", "Wiremu Tane"), "landline": t.p("PHONE", "+64 9 555 0148"), "addr": t.p("ADDRESS", "42 Kowhai Crescent, Ponsonby, Auckland 1011")}, "suite": "concierge-v2"}
    )
    t.user("Book the usual cleaner for Friday.")
    t.tool(f"book_cleaner_for_{t.p('NAME', 'Tane', parts=['Tane'])}", {"day": t.d("2025-11-07"), "hours": 3}, {"ok": True, "ref": t.d("CLN-4419")}, style="spanname")
    t.reply("The cleaner is booked for Friday, reference CLN-4419.")


def t_h2_en_support_transcript(t: Trace) -> None:
    """en: call-centre transcript as one long string, speaker labels, names, email spelled out, IPv6."""
    t.slice = "callcentre"
    t.service = "qa-reviewer"
    transcript = (
        f"AGENT: Thanks for calling Nimbus Broadband, you're speaking with {t.p('NAME', 'Thandiwe')}.\n"
        f"CALLER: Hi, it's {t.p('NAME', 'Gideon Achebe-Morrow')}, account {t.d('NB-88120-3')}.\n"
        f"AGENT: Can I confirm the email on file?\nCALLER: It's {t.p('EMAIL', 'gideon.am@fastpost.net')}.\n"
        f"AGENT: Your router shows {t.p('IP', '2001:db8:4a7c:19::1f')} as its address and firmware {t.d('v2.0.1.77')}.\n"
        f"CALLER: My neighbour {t.p('NAME', 'Ferreira-Lindqvist')} has the same problem.\n"
    )
    t.user("Score this call for the QA programme.")
    t.tool("QA.Transcript.Fetch", {"call": t.d("CALL-2025-11-03-0912")}, transcript, style="oi")
    t.reply("Score 4/5: verification done, no hold over 2 minutes.")


def t_h2_de_bewerbung_prose(t: Trace) -> None:
    """de: Bewerbung mit Grußformel, Name nach 'Viele Grüße', Geburtsdatum 'geboren am', Adresse mit Hausnummer nach der Straße."""
    t.slice = "bewerbungen"
    t.service = "recruiting-de"
    letter = (
        "Sehr geehrte Damen und Herren,\n\nhiermit bewerbe ich mich als Lagerlogistiker. "
        f"Ich bin am {t.p('DOB', '28. August 1997')} geboren und wohne in der {t.p('ADDRESS', 'Brunnenhofweg 9, 79102 Freiburg')}.\n\n"
        f"Viele Grüße\n{t.p('NAME', 'Kilian Ebersbächer')}\n{t.p('PHONE', '0761 2938471')}"
    )
    t.user("Lies die neue Bewerbung und sag mir, ob sie vollständig ist.")
    t.tool("Posteingang.Nachricht", {"id": t.d("BW-2025-1177")}, {"betreff": "Bewerbung Lagerlogistik", "text": letter})
    t.reply("Die Bewerbung ist vollständig; Zeugnisse fehlen noch.")


def t_h2_fr_decoys(t: Trace) -> None:
    """fr: leurres: noms de produits en 'Rue', références, versions, dates de livraison, mots capitalisés."""
    t.slice = "boutique"
    t.service = "boutique-bot"
    t.user(
        f"Mets à jour la fiche du parfum {t.d('Rue Royale')} (réf. {t.d('PRF-RR-100')}) et du sac {t.d('Saint-Germain')}; "
        f"livraison prévue le {t.d('mardi 18 novembre')}, version du site {t.d('2.31.4')}, lot {t.d('LT-2025-11-07')}, code promo {t.d('NOEL25')}."
    )
    t.tool("Boutique.Fiche.MAJ", {"refs": ["PRF-RR-100", t.d("SAC-SG-22")], "stock": 40}, {"ok": True, "maj": t.d("2025-11-07T11:20:00+01:00")})
    t.reply("Fiches mises à jour.")


def t_h2_de_decoys(t: Trace) -> None:
    """de: Köder: Artikelnummern, Versionen, Straßenbahnlinien, Firmennamen, Termine."""
    t.slice = "einkauf"
    t.service = "einkauf-bot"
    t.user(
        f"Bestelle 12 Stück {t.d('Artikel 4711-0815')} bei {t.d('Müller Werkzeugbau GmbH')}, Lieferung bis {t.d('Freitag, 14.11.2025')}. "
        f"Die Version der Schnittstelle ist {t.d('3.2.7')}, Bestellnummer {t.d('BST-2025-09981')}, Rechnung {t.d('RE 2025/4471')}, "
        f"Anlieferung über {t.d('Tor 3')}, Ansprechpartner {t.d('Wareneingang')}."
    )
    t.tool("Einkauf.Bestellen", {"lieferant": t.d("LIEF-0042"), "menge": 12}, {"bestaetigt": True, "ab": t.d("AB-55810")})
    t.reply("Bestellung BST-2025-09981 ist bestätigt.")


def t_h2_es_legal_prose(t: Trace) -> None:
    """es: despacho de abogados, apellido solo tras 'la doctora', dirección de plaza, fecha de nacimiento con barras."""
    t.slice = "despacho"
    t.service = "despacho-asistente"
    t.user(
        f"La doctora {t.p('NAME', 'Arriaga')} quiere revisar el expediente de {t.p('NAME', 'Baltasar Iturbide Cienfuegos')} "
        f"(fecha de nacimiento {t.p('DOB', '11/03/1962')}), con domicilio en {t.p('ADDRESS', 'Plaza de la Merced 6, 29012 Málaga')}, "
        f"antes de la vista del {t.d('3 de diciembre')}. Procedimiento {t.d('PO 1184/2025')}."
    )
    t.tool("Expedientes.Abrir", {"procedimiento": "PO 1184/2025"}, {"expediente": t.d("EXP-DES-4471"), "paginas": 212})
    t.reply("Expediente EXP-DES-4471 abierto para la doctora.")


def t_h2_it_spedizioni_secret(t: Trace) -> None:
    """it: spedizioni, password in prosa italiana, chiave API in un'intestazione, telefono cellulare."""
    t.slice = "spedizioni"
    t.service = "spedizioni-bot"
    t.user(
        f"Il corriere non accetta la nostra chiave. La password del portale è {t.p('SECRET', 'Cipresso_Blu_58')} e il referente è "
        f"{t.p('NAME', 'Benedetta Lanzafame')}, cellulare {t.p('PHONE', '347 218 4903')}."
    )
    t.tool("Corriere.Etichetta", {"headers": {"X-Api-Key": t.p("SECRET", "c8f2e1a94b7d3e6f0a5c9b2d8e4f1a7c")}, "colli": 3, "lettera_vettura": t.d("LV-2025-77310")}, {"errore": "401 chiave non valida"})
    t.reply("La chiave API non è valida: chiedete una nuova chiave al corriere.")


def t_h2_nl_pt_mixed(t: Trace) -> None:
    """nl: bestelling met IBAN NL in kleine letters, adres, telefoon +31; PT-zakenpartner met morada."""
    t.slice = "groothandel"
    t.service = "groothandel-bot"
    nl_iban = iban("NL", "ABNA0417164300")
    t.user(
        f"Stuur de factuur naar {t.p('NAME', 'Joost Verhagen-Okoro')}, {t.p('ADDRESS', 'Keizersgracht 412, 1016 GC Amsterdam')}, "
        f"tel. {t.p('PHONE', '+31 20 794 1182')}. Betaling op {t.p('IBAN', nl_iban.lower())}. Kopie naar onze partner in Lisboa, "
        f"{t.p('ADDRESS', 'Avenida da Liberdade 245, 1250-143 Lisboa')}."
    )
    t.tool("Facturen.Versturen", {"factuur": t.d("F-2025-01184"), "bedrag": "1.240,00"}, {"verzonden": True})
    t.reply("Factuur F-2025-01184 is verstuurd.")


WRITERS = [v for k, v in sorted(globals().items()) if k.startswith("t_") and callable(v)]
