"""The frozen evaluation corpus: hand-written agent runs (see README.md).

Every value here was typed by hand for this file (no generator, no Faker);
names, streets and numbers are invented or common-noun combinations. Each
function's docstring starts with its language code. Do not tune detectors on
this file: tune on ``dev_traces.py`` and report figures on this one.
"""

# ruff: noqa: E501
from __future__ import annotations

import json

from _kit import Trace, b64, iban, jwt, luhn, urlenc


# --------------------------------------------------------------------- English
def t_en_refund_prose(t: Trace) -> None:
    """en: refund request, name and address only in prose, order id decoys."""
    t.slice = "refunds"
    name = t.p("NAME", "Marguerite Oyelaran")
    order = t.d("ORD-2025-118734")
    t.user(
        f"Hello, my name is {name} and the blender I ordered ({order}) arrived cracked. "
        f"I live at {t.p('ADDRESS', '4417 Juniper Hollow Road, Asheville, NC 28806')}. "
        f"Can you refund me? Build of your app: {t.d('20250313.4')}"
    )
    t.tool("lookup_order", {"order_id": order}, {"order_id": order, "status": "delivered", "sku": t.d("SKU-88-1290-B"), "total": "84.99"})
    t.tool("issue_refund", {"order_id": order, "amount": 84.99, "reason": "damaged"}, {"refund_id": t.d("rf_3K9Lm2Qx"), "ok": True})
    t.reply(f"Done, Ms. {t.p('NAME', 'Oyelaran')}: refund rf_3K9Lm2Qx for {order} is on its way.")


def t_en_crm_nested(t: Trace) -> None:
    """en: CRM lookup with nested JSON, phone in several forms, signed_by."""
    t.slice = "crm"
    email = t.p("EMAIL", "d.okonkwo-reyes@harborline.io")
    t.user(f"Pull up the account for {email}, he says his number changed to (503) 555-0187.")
    t.p("PHONE", "(503) 555-0187")
    t.tool(
        "crm_get_contact",
        {"filter": {"email": email}, "fields": ["contact", "notes"]},
        {
            "contact": {
                "display": t.p("NAME", "Desmond Okonkwo-Reyes"),
                "phones": [{"type": "mobile", "value": t.p("PHONE", "+1 503 555 0187")}, {"type": "work", "value": t.p("PHONE", "503.555.0142")}],
                "mailing": {"line1": t.p("ADDRESS", "88 Alder Creek Lane"), "city": "Portland", "postal": "97214"},
            },
            "notes": [{"signed_by": t.p("NAME", "Priya Venkataraman"), "text": "Customer asked for paper invoices."}],
            "account_version": t.d("v2.14.3"),
        },
    )
    t.reply("Updated the mobile number on file.")


def t_en_devops_secrets(t: Trace) -> None:
    """en: deploy agent reading env and config; cloud keys, tokens, connection string."""
    t.slice = "deploy"
    t.service = "deploy-bot"
    ak = t.p("SECRET", "AKIAQ7RZ3TXW5LMN2KPD")
    sk = t.p("SECRET", "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")
    gh = t.p("SECRET", "ghp_4kR9tZx2Lm7QwP1vN8sYc3Hb6Jd0Ge5Fa2Ui")
    pw = t.p("SECRET", "Tq!8vz#Lr2m")
    t.user("Deploy the billing service to staging; the pipeline keeps failing at the migrate step.")
    t.tool(
        "read_file",
        {"path": "deploy/.env.staging"},
        f"AWS_ACCESS_KEY_ID={ak}\nAWS_SECRET_ACCESS_KEY={sk}\nGITHUB_TOKEN={gh}\n"
        f"DATABASE_URL=postgresql://billing_svc:{pw}@db-staging.internal:5432/billing\n"
        f"RELEASE={t.d('1.0.0-rc.2')}\nCOMMIT={t.d('9fceb02d0ae598e95dc970b74767f19372d61af8')}\n",
    )
    t.tool(
        "run_command",
        {"cmd": "alembic upgrade head", "cwd": "/srv/billing"},
        {"exit_code": 1, "stderr": f"sqlalchemy.exc.OperationalError: connection to server at \"db-staging.internal\" (10.40.2.17), port {t.d('5432')} failed: password authentication failed for user \"billing_svc\""},
    )
    t.error = "migrate step failed"
    t.reply(f"The migration fails on database authentication; release {t.d('1.0.0-rc.2')} is not deployed.")


def t_en_http_headers(t: Trace) -> None:
    """en: HTTP tool with raw headers: bearer token, cookie, API key header."""
    t.slice = "integrations"
    bearer = t.p("SECRET", "eyJraWQiOiJrMSIsImFsZyI6IlJTMjU2In0.eyJzdWIiOiJ1XzkxMjMiLCJzY29wZSI6InJlYWQ6b3JkZXJzIn0.Zm9vYmFyLXNpZ25hdHVyZS1ub3QtcmVhbC0xMjM0NTY3ODkw")
    cookie = t.p("SECRET", "s%3AkX9v2LmQ7pRt4Wz1.Yh8Nc3Bd6Fg0Js5Kl2Mp9Qr4Tv7")
    key = t.p("SECRET", "sk_live_51Nx8QmK2pL9vRt4Zw7Yh3Bc6Fd1Gs5Jk8Lm0Np2Qr4St6Uv8Wx")
    t.user("Why does the orders webhook return 401 since this morning?")
    t.tool(
        "http_request",
        {
            "method": "GET",
            "url": f"https://api.shopdeck.example/v2/orders?status=open&limit={t.d('50')}",
            "headers": {"Authorization": f"Bearer {bearer}", "Cookie": f"connect.sid={cookie}; theme=dark", "X-Request-Id": t.d("req_8f3k2j7q")},
        },
        "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nWWW-Authenticate: Bearer error=\"invalid_token\"\r\n\r\n{\"error\":\"token expired\"}",
    )
    t.tool("read_config", {"name": "stripe"}, {"stripe": {"secret_key": key, "api_version": t.d("2024-06-20"), "webhook_tolerance_s": 300}})
    t.reply("The bearer token expired; rotate it in the secrets store and redeploy.")


def t_en_medical_dob(t: Trace) -> None:
    """en: clinic scheduling, DOB in prose, SSN with context, appointment dates as decoys."""
    t.slice = "scheduling"
    t.user(
        f"I need to move my appointment. I'm {t.p('NAME', 'Theodora Blackwood')}, born on "
        f"{t.p('DOB', 'March 3, 1986')}. My SSN is {t.p('SSN', '536-22-8419')} if you need it."
    )
    t.tool(
        "find_patient",
        {"last_name": "Blackwood", "dob": t.p("DOB", "1986-03-03")},
        {"patient_id": t.d("PT-0048213"), "next_visit": t.d("2025-04-17T09:30:00"), "clinic": "Eastside Family Practice"},
    )
    t.tool("reschedule", {"patient_id": "PT-0048213", "slot": "2025-04-22T14:00:00"}, {"ok": True, "confirmation": t.d("CNF-77K2Q")})
    t.reply("You're now booked for 22 April at 2 pm, confirmation CNF-77K2Q.")


def t_en_bank_transfer(t: Trace) -> None:
    """en: payment agent: IBAN lowercase and spaced, card in prose, beneficiary in prose."""
    t.slice = "payments"
    t.user(
        f"Please wire 1,250.00 GBP to my sister {t.p('NAME', 'Rosalind Achterberg')}, account "
        f"{t.p('IBAN', 'gb33 bukb 2020 1555 5555 55')}, and charge the fee to my card "
        f"{t.p('CARD', '4929 5123 8901 2346')}."
    )
    t.tool(
        "create_transfer",
        {"to_iban": t.p("IBAN", "GB33BUKB20201555555555"), "amount": {"value": "1250.00", "currency": "GBP"}, "reference": t.d("INV-4471-2025")},
        {"transfer_id": t.d("trf_01HZX8K2M9"), "state": "pending_review"},
    )
    t.reply("The transfer is pending review; reference INV-4471-2025.")


def t_en_url_query(t: Trace) -> None:
    """en: search tool whose URL query carries an email and a phone, URL-encoded."""
    t.slice = "crm"
    email = t.p("EMAIL", "hollis.grant@fernbrook.net")
    phone = t.p("PHONE", "+44 7700 900461")
    t.user("Find the lead who filled the contact form yesterday.")
    t.tool(
        "fetch_url",
        {"url": f"https://forms.acme-leads.example/api/submissions?email={urlenc(email)}&phone={urlenc(phone)}&campaign=spring-{t.d('2025')}&page=2"},
        {"results": [{"id": t.d("sub_55120"), "submitted": "2025-03-11T16:02:11Z", "message": f"Call me back please, {t.p('NAME', 'Hollis Grant')}"}]},
    )
    t.reply("Found one submission from yesterday; the lead asked for a call back.")


def t_en_base64_attachment(t: Trace) -> None:
    """en: email tool with a base64 attachment holding a signed letter."""
    t.slice = "mail"
    letter = (
        f"To whom it may concern,\nI authorise the release of my records.\n"
        f"{t.p('NAME', 'Cornelius Aldridge')}\n{t.p('ADDRESS', '17 Wexford Mews, Bristol BS8 4QE')}\n"
        f"Tel. {t.p('PHONE', '0117 496 0823')}"
    )
    t.user("Forward the authorisation letter to the records team.")
    t.tool(
        "send_email",
        {
            "to": ["records@clinic.example"],
            "subject": "Authorisation letter",
            "attachments": [{"filename": "authorisation.txt", "content_base64": b64(letter)}],
        },
        {"message_id": t.d("<20250312.1741.0042@mx.clinic.example>"), "status": "queued"},
    )
    t.reply("Forwarded to the records team.")


def t_en_jwt_and_keys(t: Trace) -> None:
    """en: auth debugging: JWT with an email in its payload, OpenAI and Slack keys in prose."""
    t.slice = "support-eng"
    email = t.p("EMAIL", "kwame.asante@tallpine.dev")
    token = t.p("SECRET", jwt({"sub": "8812", "email": email, "exp": 1767225600}, "q7Lm2Kx9Tn4Wv1Pb8Yc6Hd3Fg0Js5Zr2Qa"))
    t.user(
        f"Our integration broke. The token we send is {token} and the key in the worker is "
        f"{t.p('SECRET', 'sk-proj-Hq3Zr8Lm2Tx7Vn4Kp9Wb1Yc6Fd0Gs5Ja2Eu8Mi3Ro')}. Slack alerts use "
        f"{t.p('SECRET', 'xoxb-2841937465-5528391047263-Zq8rLm2Kx9Tn4Wv7Pb1Yc6Hd')}."
    )
    t.tool("decode_jwt", {"token": token}, {"header": {"alg": "HS256"}, "claims": {"sub": "8812", "email": email, "exp": 1767225600}, "expired": False})
    t.reply(f"The JWT is valid until 2026-01-01; the failure is elsewhere (see trace {t.d('4bf92f3577b34da6a3ce929d0e0e4736')}).")


def t_en_private_key(t: Trace) -> None:
    """en: server agent that cat's a private key and a GCP service-account file."""
    t.slice = "deploy"
    t.service = "deploy-bot"
    pem = t.p(
        "SECRET",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDk2Lq8Vn3Rt7Xw1Ys9Zp4Hb6Mc0Jd5Fg2Ku8Lm3Qn7ATx9AAAAJhKd2Tq\n-----END OPENSSH PRIVATE KEY-----",
    )
    t.user("Check that the deploy key on web-3 is the right one.")
    t.tool("ssh_exec", {"host": "web-3", "cmd": "cat ~/.ssh/id_ed25519"}, {"stdout": pem + "\n", "exit": 0})
    sa_key = t.p("SECRET", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vj2Hq9Lm4Tx8Rz1Wp6\nYb3Nc5Kd0Fg7Js2Ua9Ei4Mo1Qr8Tv3Xy6Zb0Cd5Fh2Gk7Jl4Mn9Pq1Rs6Tu3Vw8Xz0Ab\n-----END PRIVATE KEY-----\n")
    t.tool(
        "read_file",
        {"path": "/etc/gcp/sa.json"},
        json.dumps({"type": "service_account", "project_id": "acme-prod-4471", "private_key_id": t.p("SECRET", "3f9d2c7b1a8e4f6d0c5b9a2e7f1d3c8b6a4e0f2d"), "private_key": sa_key, "client_email": "deployer@acme-prod-4471.iam.gserviceaccount.com"}),
    )
    t.reply("The key fingerprint matches the one registered for web-3.")


def t_en_hr_onboarding(t: Trace) -> None:
    """en: HR onboarding: DOB keyed and in prose, home address, emergency contact."""
    t.slice = "hr"
    t.user(
        f"Onboard our new hire {t.p('NAME', 'Imogen Tappeiner')}, start date {t.d('2025-05-05')}. Her date of birth is "
        f"{t.p('DOB', '11/24/1993')} and she lives at {t.p('ADDRESS', '2290 Sycamore Bend Drive, Apt 4C, Columbus, OH 43215')}."
    )
    t.tool(
        "hris_create_employee",
        {
            "legal_name": "Imogen Tappeiner",
            "birth_date": t.p("DOB", "1993-11-24"),
            "home_address": "2290 Sycamore Bend Drive, Apt 4C, Columbus, OH 43215",
            "emergency_contact": {"name": t.p("NAME", "Lucian Tappeiner"), "relationship": "brother", "phone": t.p("PHONE", "614-555-0119")},
            "employee_number": t.d("E-100482"),
            "cost_center": t.d("CC-4410"),
        },
        {"employee_id": "emp_7Hk2Lq", "status": "created"},
    )
    t.reply("Imogen's record is created, employee E-100482.")


# --------------------------------------------------------------------- German
def t_de_umzug(t: Trace) -> None:
    """de: Adressänderung, Anschrift und Geburtsdatum unter deutschen Schlüsseln."""
    t.slice = "stammdaten"
    t.user(
        f"Guten Tag, ich bin umgezogen. Meine neue Anschrift ist {t.p('ADDRESS', 'Lindenstraße 42, 10969 Berlin')}. "
        f"Mein Name ist {t.p('NAME', 'Henrike Wagenknecht')}, geboren am {t.p('DOB', '14.02.1975')}."
    )
    t.tool(
        "kunde_aktualisieren",
        {
            "kundennummer": t.d("KD-2025-004471"),
            "vorname": t.p("NAME", "Henrike"),
            "nachname": t.p("NAME", "Wagenknecht"),
            "anschrift": {"strasse": t.p("ADDRESS", "Lindenstraße 42"), "plz": "10969", "ort": "Berlin"},
            "geburtsdatum": t.p("DOB", "1975-02-14"),
        },
        {"ok": True, "geaendert_am": t.d("2025-03-12T08:14:55+01:00")},
        style="oi",
    )
    t.reply("Ihre Anschrift wurde geändert, Frau Wagenknecht.")


def t_de_bank(t: Trace) -> None:
    """de: Überweisung, IBAN mit Leerzeichen, Telefonnummer national und international."""
    t.slice = "zahlungen"
    t.user(
        f"Bitte überweisen Sie 480 Euro Miete an {t.p('NAME', 'Jörg Brackmann-Thiele')}, IBAN {t.p('IBAN', 'DE02 1203 0000 0000 2020 51')}. "
        f"Rückfragen gerne unter {t.p('PHONE', '030 48 37 21 90')} oder mobil {t.p('PHONE', '+49 171 2839 4410')}."
    )
    t.tool(
        "ueberweisung_anlegen",
        {"empfaenger": "Jörg Brackmann-Thiele", "iban": t.p("IBAN", "DE02120300000000202051"), "betrag": "480.00", "verwendungszweck": f"Miete April {t.d('RE-2025-00412')}"},
        {"auftrag": t.d("UEB-88120-A"), "status": "ausgeführt"},
    )
    t.reply("Die Überweisung ist ausgeführt (Auftrag UEB-88120-A).")


def t_de_it_support(t: Trace) -> None:
    """de: IT-Helpdesk, Passwort in Prosa, Cookie, interne IP, Versionsnummern."""
    t.slice = "helpdesk"
    t.user(
        f"Ich komme nicht mehr ins VPN. Mein Passwort lautet {t.p('SECRET', 'Sommer2025!Kaffee')}, "
        f"Benutzer {t.p('NAME', 'Wiebke Sandvoß')}, mein Rechner hat die IP {t.p('IP', '192.168.178.24')}. Client-Version {t.d('4.10.07030')}."
    )
    t.tool(
        "vpn_sitzungen",
        {"benutzer": "wsandvoss", "seit": "2025-03-10"},
        {"sitzungen": [{"quelle": t.p("IP", "91.64.117.203"), "fehler": "AUTH_FAILED", "zeit": "2025-03-12T07:41:02Z"}], "gateway": t.d("vpn-gw-02")},
    )
    t.tool(
        "http_request",
        {"url": "https://portal.intern.example/api/reset", "headers": {"cookie": f"JSESSIONID={t.p('SECRET', '8F3A2C9D41B7E6F05A1C3D9E7B2F4A6C')}; lang=de"}},
        {"status": 204},
    )
    t.reply("Ihr VPN-Konto war gesperrt; ich habe es entsperrt. Bitte ändern Sie Ihr Passwort.")


def t_de_versicherung(t: Trace) -> None:
    """de: Schadenmeldung, Name nur in Prosa mit Anrede, Datum des Schadens als Köder."""
    t.slice = "schaden"
    t.user(
        f"Sehr geehrte Damen und Herren, am {t.d('03.03.2025')} wurde mein Fahrrad gestohlen. "
        f"Versicherungsnummer {t.d('VN-3381-7720')}. Mit freundlichen Grüßen\n{t.p('NAME', 'Friedemann Oltersdorf')}"
    )
    t.tool(
        "schaden_anlegen",
        {"vertrag": "VN-3381-7720", "art": "Diebstahl", "datum": "2025-03-03", "beschreibung": f"Fahrrad vor dem Haus {t.p('ADDRESS', 'Am Kirchberg 7a, 79098 Freiburg im Breisgau')} gestohlen"},
        {"schadennummer": t.d("S-2025-091177"), "sachbearbeiter": t.p("NAME", "Herr Kuczynski")},
    )
    t.reply("Schaden S-2025-091177 ist angelegt, Herr Oltersdorf. Ihr Sachbearbeiter meldet sich.")


def t_de_hr(t: Trace) -> None:
    """de: Personalakte, Geburtsdatum ausgeschrieben, Steuer-ID, Sozialversicherungsnummer."""
    t.slice = "personal"
    t.user(
        f"Lege bitte die Personalakte für {t.p('NAME', 'Kübra Yıldırım')} an, geb. {t.p('DOB', '22. Juli 1981')}, "
        f"wohnhaft {t.p('ADDRESS', 'Bahnhofstr. 118, 45127 Essen')}, Steuer-ID {t.p('NATIONAL_ID', '57 349 120 886')}."
    )
    t.tool(
        "personalakte_anlegen",
        {"name": "Kübra Yıldırım", "geburtsdatum": "1981-07-22", "steuer_id": "57349120886", "eintritt": t.d("2025-04-01"), "gehaltsband": t.d("T3-2")},
        {"personalnummer": t.d("P-004471"), "angelegt": True},
    )
    t.reply("Die Akte P-004471 ist angelegt.")


def t_de_base64_form(t: Trace) -> None:
    """de: Formular als base64-JSON, E-Mail und Telefonnummer darin, URL-kodierter Rückruf."""
    t.slice = "formulare"
    form = json.dumps({"name": t.p("NAME", "Annegret Pfisterer"), "email": t.p("EMAIL", "annegret.pfisterer@posteo.de"), "telefon": t.p("PHONE", "0761 8843 201")}, ensure_ascii=False)
    t.user("Bitte das eingegangene Kontaktformular bearbeiten.")
    t.tool("formular_lesen", {"id": t.d("F-20250312-0091")}, {"payload": b64(form), "encoding": "base64"}, style="spanname")
    t.tool(
        "rueckruf_planen",
        {"callback": f"https://crm.example/rueckruf?nummer={urlenc('+49 761 8843201')}&zeit=morgen"},
        {"ok": True},
        style="spanname",
    )
    t.p("PHONE", "+49 761 8843201")
    t.reply("Rückruf für morgen geplant.")


def t_de_arzt(t: Trace) -> None:
    """de: Arzttermin, Versichertennummer, Geburtsdatum in Kurzform."""
    t.slice = "termine"
    t.user(
        f"Termin für meinen Vater {t.p('NAME', 'Egon Hülsbeck')} (geb. {t.p('DOB', '3.9.1948')}), Versichertennummer "
        f"{t.p('NATIONAL_ID', 'K482917365')}. Er ist unter {t.p('PHONE', '0221 / 93 44 187')} erreichbar."
    )
    t.tool("termin_suchen", {"fach": "Kardiologie", "ab": "2025-03-20"}, {"frei": ["2025-03-24T10:15", "2025-03-26T08:30"], "praxis_id": t.d("PX-221-09")})
    t.reply("Frei wären der 24.03. um 10:15 und der 26.03. um 8:30.")


def t_de_connection(t: Trace) -> None:
    """de: Datenbank-Agent, Verbindungszeichenfolgen mit Passwort, MongoDB und Redis."""
    t.slice = "betrieb"
    t.service = "ops-agent"
    mongo_pw = t.p("SECRET", "xR7!pQ2mZ9")
    redis_pw = t.p("SECRET", "9bV4kT8wLm2Q")
    t.user("Warum sind die Bestellungen seit 6 Uhr langsam?")
    t.tool(
        "konfiguration_lesen",
        {"dienst": "bestellungen"},
        {"mongo": f"mongodb+srv://orders_rw:{mongo_pw}@cluster0.ab12c.mongodb.net/orders?retryWrites=true&w=majority", "redis": f"redis://:{redis_pw}@cache-01.intern:6379/0", "pool_size": 20, "version": t.d("3.11.9")},
    )
    t.tool("metriken", {"dienst": "bestellungen", "fenster": "6h"}, {"p95_ms": 1840, "fehler": 12, "build": t.d("20250312.7")})
    t.reply("Die p95-Latenz liegt bei 1,8 s; der Redis-Cache ist voll.")


def t_de_lieferung(t: Trace) -> None:
    """de: Lieferadresse in Prosa mit Hausnummer vorne, Tracking als Köder."""
    t.slice = "versand"
    t.user(
        f"Bitte liefert das Paket an meine Arbeit: {t.p('ADDRESS', 'Firma Kreuzer GmbH, z. Hd. Frau Ines Rabenstein, Industriestraße 9, 70565 Stuttgart')}."
    )
    t.planted[-1].parts += ["Ines Rabenstein", "Industriestraße 9"]
    t.tool("sendung_umleiten", {"sendung": t.d("1Z999AA10123456784"), "neue_adresse": "Industriestraße 9, 70565 Stuttgart"}, {"ok": True, "neue_zustellung": t.d("2025-03-14")})
    t.reply("Die Sendung wird am 14.03. an Ihre Arbeitsadresse zugestellt.")


# --------------------------------------------------------------------- French
def t_fr_resiliation(t: Trace) -> None:
    """fr: résiliation, nom et prénom sous clés françaises, adresse en prose."""
    t.slice = "resiliation"
    t.user(
        f"Bonjour, je souhaite résilier mon abonnement. Je m'appelle {t.p('NAME', 'Sylvaine Castagnède')} et j'habite "
        f"{t.p('ADDRESS', '27 rue des Tanneurs, 67000 Strasbourg')}. Merci !"
    )
    t.tool(
        "client_rechercher",
        {"nom": t.p("NAME", "Castagnède"), "prenom": t.p("NAME", "Sylvaine")},
        {"client": {"id": t.d("CL-0091-4471"), "abonnement": "Fibre 1 Gb", "date_souscription": t.d("2021-09-14")}},
    )
    t.tool("abonnement_resilier", {"client_id": "CL-0091-4471", "motif": "déménagement"}, {"ok": True, "fin": "2025-04-30"})
    t.reply("Votre abonnement prendra fin le 30 avril 2025.")


def t_fr_banque(t: Trace) -> None:
    """fr: virement, IBAN FR, téléphone national et +33 (même numéro), carte."""
    t.slice = "paiements"
    t.user(
        f"Pouvez-vous faire un virement de 300 € à {t.p('NAME', 'Gaëtan Leroux-Marchal')} ? Son IBAN est "
        f"{t.p('IBAN', 'FR76 3000 6000 0112 3456 7890 189')}. Appelez-moi au {t.p('PHONE', '06 12 48 73 95')} si besoin."
    )
    t.tool(
        "virement_creer",
        {"beneficiaire": "Gaëtan Leroux-Marchal", "iban": "FR7630006000011234567890189", "montant": 300, "telephone_contact": t.p("PHONE", "+33 6 12 48 73 95")},
        {"reference": t.d("VIR-2025-03-0077"), "etat": "en attente"},
    )
    t.tool("carte_verifier", {"numero": t.p("CARD", "5131 0460 1229 4871")}, {"valide": True, "reseau": "mastercard"})
    t.reply("Le virement VIR-2025-03-0077 est en attente de validation.")


def t_fr_sante(t: Trace) -> None:
    """fr: mutuelle, date de naissance en toutes lettres, numéro de sécurité sociale."""
    t.slice = "mutuelle"
    t.user(
        f"Je suis {t.p('NAME', 'Mme Honorine Vasseur')}, née le {t.p('DOB', '5 mai 1972')}. Mon numéro de sécurité sociale est "
        f"{t.p('NATIONAL_ID', '2 72 05 75 116 035 42')}. Je voudrais le remboursement de ma facture {t.d('FAC-2025-1187')}."
    )
    t.tool(
        "adherent_trouver",
        {"date_naissance": t.p("DOB", "05/05/1972"), "nom_famille": "Vasseur"},
        {"adherent": t.d("ADH-558812"), "contrat": "Santé Confort", "plafond": "1500 €"},
    )
    t.reply("Le remboursement de FAC-2025-1187 est lancé.")


def t_fr_devis(t: Trace) -> None:
    """fr: devis artisan, adresse avec bis, courriel, clé API dans un en-tête."""
    t.slice = "devis"
    t.user(
        f"Envoyez le devis à {t.p('EMAIL', 'lucile.abgrall@orange.fr')} pour les travaux au "
        f"{t.p('ADDRESS', '12 bis avenue Jean-Jaurès, 29200 Brest')}, s'il vous plaît."
    )
    t.tool(
        "http_request",
        {"method": "POST", "url": "https://api.devis-pro.example/v1/quotes", "headers": {"X-Api-Key": t.p("SECRET", "dp_live_7Gh2Kq9Lm4Tx8Vz1Wb6Yc3Nd0Fs5Ja"), "Content-Type": "application/json"}, "body": {"client": "lucile.abgrall@orange.fr", "montant_ht": "4 820,00", "tva": "20"}},
        {"quote_id": t.d("Q-7781-FR"), "pdf": "https://cdn.devis-pro.example/q/Q-7781-FR.pdf"},
    )
    t.reply(f"Devis Q-7781-FR envoyé à {t.p('NAME', 'Lucile Abgrall')}.")


def t_fr_rh(t: Trace) -> None:
    """fr: RH, mot de passe provisoire en prose, identifiant, date d'embauche (leurre)."""
    t.slice = "rh"
    t.user(
        f"Crée le compte de {t.p('NAME', 'Anne-Sophie Quéméner')}, embauchée le {t.d('3 mars 2025')}. "
        f"Son mot de passe provisoire est {t.p('SECRET', 'Bretagne#2025vx')} et son adresse perso {t.p('EMAIL', 'as.quemener@laposte.net')}."
    )
    t.tool(
        "annuaire_creer",
        {"nom_complet": "Anne-Sophie Quéméner", "mot_de_passe": "Bretagne#2025vx", "service": "Comptabilité", "badge": t.d("BDG-20931")},
        {"uid": "asquemener", "cree": True},
        style="oi",
    )
    t.reply("Le compte asquemener est créé ; elle devra changer son mot de passe.")


def t_fr_livraison(t: Trace) -> None:
    """fr: livraison, adresse sur plusieurs lignes, téléphone fixe, version d'app en leurre."""
    t.slice = "livraison"
    t.tool(
        "commande_details",
        {"commande": t.d("CMD-88120")},
        {
            "destinataire": t.p("NAME", "Bérénice Delacroix-Faure"),
            "adresse_livraison": t.p("ADDRESS", "Résidence Les Tilleuls, Bât. C\n8 allée des Cerisiers\n69007 Lyon"),
            "tel": t.p("PHONE", "04 78 61 22 09"),
            "app": t.d("3.4.1 (build 20250228.2)"),
        },
    )
    t.planted[-3].parts += ["8 allée des Cerisiers"]
    t.user("Où en est la commande CMD-88120 ?")
    t.reply("Elle est en cours de livraison, arrivée prévue demain.")


def t_fr_signature(t: Trace) -> None:
    """fr: courriel avec signature, nom seul après formule de politesse, URL avec jeton."""
    t.slice = "courrier"
    tok = t.p("SECRET", "a8Kq2Lm9Tx4Vz7Wb1Yc6Nd3Fs0Ja5Gh")
    t.tool(
        "courriel_lire",
        {"dossier": "INBOX", "id": t.d("msg-4471")},
        {"de": t.p("EMAIL", "p.marchetti@cabinet-marchetti.fr"), "objet": "Dossier de succession", "corps": f"Maître,\nVeuillez trouver ci-joint les pièces demandées.\nCordialement,\n{t.p('NAME', 'Paolo Marchetti')}\nCabinet Marchetti", "lien": f"https://partage.example/dl?file=succession.pdf&access_token={tok}"},
    )
    t.user("Résume-moi le dernier courriel.")
    t.reply("Un cabinet vous envoie les pièces du dossier de succession (lien de téléchargement joint).")


def t_fr_base64_jwt(t: Trace) -> None:
    """fr: en-tête Basic auth (base64 user:pass) et JWT dans un cookie."""
    t.slice = "integrations"
    basic = b64("compta@maison-vial.fr:Vial!Compta77")
    t.p("SECRET", basic)
    t.p("SECRET", "Vial!Compta77")
    t.p("EMAIL", "compta@maison-vial.fr")
    t.tool(
        "http_request",
        {"url": "https://erp.maison-vial.example/api/factures?annee=2025", "headers": {"Authorization": f"Basic {basic}", "Cookie": f"auth={t.p('SECRET', jwt({'uid': 41, 'role': 'compta'}, 'Xk2Lm9Tq4Vz7Wb1Yc6Nd3Fs0Ja5Gh8Pe'))}"}},
        {"factures": 212, "total_ttc": "184 220,50 €"},
    )
    t.user("Combien de factures en 2025 ?")
    t.reply("212 factures pour 184 220,50 € TTC.")


# --------------------------------------------------------------------- Spanish
def t_es_reclamacion(t: Trace) -> None:
    """es: reclamación, nombre y apellido bajo claves españolas, dirección en prosa."""
    t.slice = "reclamaciones"
    t.user(
        f"Hola, soy {t.p('NAME', 'Maite Urrutikoetxea Salaberria')} y el paquete no llegó a mi casa en "
        f"{t.p('ADDRESS', 'Calle de Ponzano 61, 3º B, 28003 Madrid')}. Pedido {t.d('PED-2025-55102')}."
    )
    t.tool(
        "cliente_buscar",
        {"nombre": t.p("NAME", "Maite"), "apellido": t.p("NAME", "Urrutikoetxea"), "pedido": "PED-2025-55102"},
        {"cliente": {"id": t.d("C-88412"), "telefono": t.p("PHONE", "+34 612 84 73 09")}, "estado": "en reparto"},
    )
    t.reply("Su pedido PED-2025-55102 está en reparto; lo recibirá mañana.")


def t_es_banco(t: Trace) -> None:
    """es: transferencia, IBAN ES sin espacios en prosa, DNI, teléfono nacional (mismo que +34)."""
    t.slice = "pagos"
    t.user(
        f"Quiero transferir 950 euros a {t.p('NAME', 'Rigoberto Anzoátegui')}, cuenta {t.p('IBAN', 'ES9121000418450200051332')}. "
        f"Mi DNI es {t.p('NATIONAL_ID', '48392017K')} y mi móvil {t.p('PHONE', '612 84 73 09')}."
    )
    t.tool(
        "transferencia_crear",
        {"destinatario": "Rigoberto Anzoátegui", "iban": "ES91 2100 0418 4502 0005 1332", "importe": "950,00", "concepto": f"Factura {t.d('F-2025-0331')}"},
        {"id": t.d("TRX-5510-ES"), "estado": "pendiente"},
    )
    t.p("IBAN", "ES91 2100 0418 4502 0005 1332")
    t.reply("Transferencia TRX-5510-ES pendiente de firma.")


def t_es_clinica(t: Trace) -> None:
    """es: clínica, fecha de nacimiento en prosa y bajo clave, citas como señuelo."""
    t.slice = "citas"
    t.user(
        f"Necesito cita para mi hija {t.p('NAME', 'Lucía Berrocal Fuentes')}, nacida el {t.p('DOB', '9 de octubre de 2015')}. "
        f"Prefiero por la tarde."
    )
    t.tool(
        "paciente_buscar",
        {"fecha_nacimiento": t.p("DOB", "09/10/2015"), "apellidos": t.p("NAME", "Berrocal Fuentes")},
        {"historia": t.d("HC-0044129"), "ultima_visita": t.d("2024-12-02")},
    )
    t.tool("cita_reservar", {"historia": "HC-0044129", "hueco": "2025-03-19T17:30"}, {"ok": True, "codigo": t.d("CIT-7Q2K")})
    t.reply("Cita reservada el 19 de marzo a las 17:30, código CIT-7Q2K.")


def t_es_soporte_secretos(t: Trace) -> None:
    """es: soporte técnico, contraseña en JSON, token de GitLab y clave de Google en prosa."""
    t.slice = "soporte"
    t.user(
        f"El despliegue falla. Uso el token {t.p('SECRET', 'glpat-xY7kQ2mL9tR4vW1bN8cZ')} y la clave de Maps "
        f"{t.p('SECRET', 'AIzaSyD4k9Lm2Qx7Rt1Vn8Wp3Zb6Yc0Hf5Gj2Ks')}. Versión {t.d('v5.2.0')}."
    )
    t.tool(
        "leer_config",
        {"ruta": "config/produccion.json"},
        json.dumps({"bd": {"usuario": "app", "contraseña": t.p("SECRET", "Ñandú_2024_seguro"), "host": "10.0.4.11"}, "reintentos": 3, "region": "eu-west-1"}, ensure_ascii=False),
    )
    t.reply("La configuración de producción apunta a la base correcta; revise el token de GitLab.")


def t_es_inmobiliaria(t: Trace) -> None:
    """es: inmobiliaria, dos direcciones, avenida y plaza, email con acentos en el nombre."""
    t.slice = "alquiler"
    t.user(
        f"Me interesa el piso de {t.p('ADDRESS', 'Avenida de la Constitución 14, 41001 Sevilla')}. Ahora vivo en "
        f"{t.p('ADDRESS', 'Plaza del Pilar 3, 50003 Zaragoza')}. Escríbanme a {t.p('EMAIL', 'jose.ibanez.morcillo@gmail.com')}."
    )
    t.tool("visita_agendar", {"inmueble": t.d("INM-3391"), "email": "jose.ibanez.morcillo@gmail.com"}, {"ok": True, "agente": t.p("NAME", "Consuelo Arrieta")})
    t.reply(f"Visita agendada; le atenderá {t.p('NAME', 'Consuelo')}.")


def t_es_url_codificada(t: Trace) -> None:
    """es: formulario web URL-codificado con nombre y correo, sesión en cookie."""
    t.slice = "web"
    body = f"nombre={urlenc('Teodoro Villalba')}&correo={urlenc('teo.villalba@hotmail.es')}&mensaje=Quiero+darme+de+baja"
    t.p("NAME", "Teodoro Villalba")
    t.p("EMAIL", "teo.villalba@hotmail.es")
    t.tool(
        "http_request",
        {"method": "POST", "url": "https://www.tienda.example/contacto", "body": body, "headers": {"Cookie": f"PHPSESSID={t.p('SECRET', 'r4k8m2q9t1v7w3x6z0b5c8d2f4')}"}},
        {"status": 302, "location": "/gracias"},
    )
    t.user("¿Qué hizo el formulario de contacto?")
    t.reply("Envió una solicitud de baja.")


def t_es_rrhh(t: Trace) -> None:
    """es: nómina, número de la seguridad social, fecha de nacimiento bajo 'fechaNacimiento'."""
    t.slice = "nominas"
    t.tool(
        "empleado_obtener",
        {"id": t.d("EMP-20391")},
        {"nombreCompleto": t.p("NAME", "Ainhoa Garmendia Etxeberria"), "fechaNacimiento": t.p("DOB", "1988-06-30"), "numSeguridadSocial": t.p("NATIONAL_ID", "28/1234567/40"), "domicilio": t.p("ADDRESS", "Calle Mayor 22, 20001 Donostia"), "categoria": t.d("G3-N2")},
    )
    t.user("¿Cuál es la categoría de EMP-20391?")
    t.reply("Categoría G3-N2.")


def t_es_tarjeta(t: Trace) -> None:
    """es: pago con tarjeta Amex y CVV, IP del cliente, referencia de pedido."""
    t.slice = "pagos"
    t.user(
        f"Pagad con mi Amex {t.p('CARD', '3782 822463 10005')}, caduca 08/27. Estoy conectado desde {t.p('IP', '83.44.201.17')}."
    )
    t.tool("cobro_crear", {"tarjeta": "378282246310005", "importe": "129,90", "pedido": t.d("PED-2025-60017")}, {"ok": True, "autorizacion": t.d("AUT-553910")})
    t.p("CARD", "378282246310005")
    t.reply("Cobro autorizado (AUT-553910).")


# --------------------------------------------------------------------- Italian
def t_it_banca(t: Trace) -> None:
    """it: bonifico, nome in prosa, IBAN IT, codice fiscale, data di nascita."""
    t.slice = "pagamenti"
    t.user(
        f"Buongiorno, sono {t.p('NAME', 'Ottavio Sciarrino')}, nato il {t.p('DOB', '27 aprile 1983')}, codice fiscale "
        f"{t.p('NATIONAL_ID', 'SCRTTV83D27F205X')}. Vorrei un bonifico all'IBAN {t.p('IBAN', 'IT60 X054 2811 1010 0000 0123 456')}."
    )
    t.tool("bonifico_crea", {"iban": "IT60X0542811101000000123456", "importo": "700,00", "causale": f"Saldo fattura {t.d('FT-2025-0190')}"}, {"cro": t.d("CRO-88120774"), "stato": "inviato"})
    t.reply("Bonifico inviato, CRO 88120774.")


def t_it_spedizione(t: Trace) -> None:
    """it: spedizione, indirizzo con via e civico, telefono fisso e cellulare."""
    t.slice = "spedizioni"
    t.tool(
        "ordine_leggi",
        {"ordine": t.d("ORD-IT-44120")},
        {"cliente": t.p("NAME", "Benedetta Lojacono"), "indirizzo": t.p("ADDRESS", "Via Giuseppe Verdi 18, 20121 Milano"), "cellulare": t.p("PHONE", "+39 347 218 4410"), "fisso": t.p("PHONE", "02 8846 1290")},
    )
    t.user("Quando arriva l'ordine ORD-IT-44120?")
    t.reply("Arriva giovedì tra le 9 e le 13.")


def t_it_password(t: Trace) -> None:
    """it: accesso negato, password in prosa, chiave AWS in un log."""
    t.slice = "supporto"
    t.user(f"Non riesco ad accedere, la mia password è {t.p('SECRET', 'Gelato!Pistacchio9')}. Utente {t.p('EMAIL', 'm.deangelis@libero.it')}.")
    t.tool("log_cerca", {"utente": "m.deangelis@libero.it"}, {"righe": [f"2025-03-12T10:02:11Z WARN s3 client key={t.p('SECRET', 'AKIAZ4N7Q2LM9TXV3KPB')} denied", f"2025-03-12T10:02:12Z INFO retry {t.d('3/5')}"]})
    t.reply("L'accesso è bloccato per troppi tentativi; ho avviato lo sblocco.")


# --------------------------------------------------------------------- Portuguese / Dutch
def t_pt_cadastro(t: Trace) -> None:
    """pt: cadastro, nome, morada, data de nascimento, telemóvel."""
    t.slice = "cadastro"
    t.user(
        f"Olá, chamo-me {t.p('NAME', 'Joaquim Valadares Teixeira')}, nascido em {t.p('DOB', '11/12/1969')}. Moro na "
        f"{t.p('ADDRESS', 'Rua das Flores 112, 4050-262 Porto')} e o meu telemóvel é {t.p('PHONE', '+351 912 345 678')}."
    )
    t.tool("cliente_criar", {"nome": "Joaquim Valadares Teixeira", "nif": t.p("NATIONAL_ID", "232 018 459"), "plano": t.d("PLN-B2")}, {"id": t.d("CLI-PT-7731")})
    t.reply("Cadastro concluído.")


def t_nl_huur(t: Trace) -> None:
    """nl: huurcontract, naam, adres met straat en huisnummer, geboortedatum, IBAN NL."""
    t.slice = "verhuur"
    t.user(
        f"Goedemiddag, ik ben {t.p('NAME', 'Femke van der Heijden')}, geboren op {t.p('DOB', '4 juni 1988')}. "
        f"Mijn adres is {t.p('ADDRESS', 'Prinsengracht 263, 1016 GV Amsterdam')} en mijn rekening {t.p('IBAN', 'NL91 ABNA 0417 1643 00')}."
    )
    t.tool("contract_opstellen", {"huurder": "Femke van der Heijden", "iban": "NL91ABNA0417164300", "ingangsdatum": t.d("2025-05-01"), "huur": "1450"}, {"contract": t.d("HC-2025-0088")})
    t.reply("Het contract HC-2025-0088 is opgesteld.")


# --------------------------------------------------------------------- mixed formats
def t_mixed_json_in_string(t: Trace) -> None:
    """en: a tool whose result is JSON inside a JSON string inside JSON, with PII at depth 3."""
    t.slice = "crm"
    inner = json.dumps({"customer": {"full_name": t.p("NAME", "Agnieszka Wróblewska"), "contact_email": t.p("EMAIL", "a.wroblewska@wp.pl"), "ip": t.p("IP", "2a02:a311:4143:a100:5d2f:9c1e:3b44:8f21")}})
    middle = json.dumps({"event": "profile.updated", "data": inner})
    t.tool("queue_peek", {"queue": "profile-events", "n": 1}, {"messages": [{"offset": t.d("88120771"), "value": middle}]})
    t.user("What was the last profile event?")
    t.reply("A profile update for one customer.")


def t_mixed_logs(t: Trace) -> None:
    """en: log search over a web server: IPs, emails in query strings, user agents, request ids."""
    t.slice = "ops"
    t.service = "ops-agent"
    lines = [
        f'{t.p("IP", "203.0.113.77")} - - [12/Mar/2025:09:14:02 +0000] "GET /account/reset?email={urlenc(t.p("EMAIL", "ngozi.eze@fastmail.com"))}&t={t.d("1741770842")} HTTP/1.1" 302 0 "-" "Mozilla/5.0"',
        f'{t.p("IP", "198.51.100.23")} - - [12/Mar/2025:09:14:05 +0000] "POST /login HTTP/1.1" 401 112 "-" "curl/{t.d("8.5.0")}"',
        f'10.0.0.5 - - [12/Mar/2025:09:14:09 +0000] "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/{t.d("1.29")}"',
    ]
    t.tool("logs_search", {"query": "status>=300", "since": "1h"}, {"lines": lines, "took_ms": 41})
    t.user("Anything odd in the web logs this morning?")
    t.reply("One password reset redirect and one failed login from an unusual address.")


def t_mixed_webhook(t: Trace) -> None:
    """en: webhook payload with Twilio and SendGrid credentials, SMS body with a phone number."""
    t.slice = "integrations"
    t.tool(
        "webhook_inspect",
        {"id": t.d("wh_01HZQ4")},
        {
            "provider": "twilio",
            "account_sid": t.p("SECRET", "AC7f3e9b2d4c6a8e1f0b5d7c9a3e2f4b6d"),
            "auth_token": t.p("SECRET", "4f8e2c9a1b7d3e6f0a5c8b2d9e1f7a3c"),
            "payload": {"From": t.p("PHONE", "+1 646 555 0133"), "Body": f"Hi it's {t.p('NAME', 'Rutendo Moyo')}, can you call me back"},
            "sendgrid": {"api_key": t.p("SECRET", "SG.kR4mXz9qT2uL7vN1pW8sYc.3Hb6Jd0Ge5Fa2Ui9Ko4Lm7Nq1Rt8Sx3Vz6Wy0Ab5Cd")},
        },
    )
    t.user("What did the last inbound SMS say?")
    t.reply("A customer asked to be called back.")


def t_mixed_azure(t: Trace) -> None:
    """en: storage connection string with an account key, npm and PyPI tokens in a CI log."""
    t.slice = "ci"
    t.service = "ci-agent"
    akey = t.p("SECRET", "Jq8Lm2Kx9Tn4Wv7Pb1Yc6Hd3Fg0Js5Zr2Qa8Ue4Io1Op7As9Df3Gh6Jk2Lz5Xc8Vb0Nm4Qw7Er1Ty3Ui6Op9As2Df5Gh8==")
    t.tool(
        "ci_log",
        {"job": t.d("build-4471"), "tail": 40},
        f"step 3/7: upload artifacts\nAZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmeartifacts;AccountKey={akey};EndpointSuffix=core.windows.net\n"
        f"npm config set //registry.npmjs.org/:_authToken {t.p('SECRET', 'npm_Xk9Lm2Qt7Vz4Wb1Yc8Nd3Fs6Ja0Gh5Pe2Ru')}\n"
        f"twine upload --password {t.p('SECRET', 'pypi-AgEIcHlwaS5vcmcCJDk4ZTJjOWExLTFiN2QtNGU2Zi1hMGI1LWM4YjJkOWUxZjdhMwACKlszLCJhYmMiXQ')}\n"
        f"done in {t.d('3m12s')}, artifact sha256 {t.d('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')}",
    )
    t.user("Why did build 4471 leak a warning?")
    t.reply("The CI log printed credentials in step 3; rotate them.")


def t_mixed_decoys_only(t: Trace) -> None:
    """en: a trace of look-alikes only: versions, build numbers, hashes, ids, timestamps."""
    t.slice = "release-notes"
    t.user(
        f"Summarise release {t.d('v3.2.0')} (build {t.d('20250301.12')}): fixes for tickets {t.d('JIRA-4471')} and {t.d('JIRA-4502')}, "
        f"image digest {t.d('sha256:7d865e959b2466918c9863afca942d0fb89d7c9ac0c99bafc3749504ded97730')}."
    )
    t.tool(
        "changelog_get",
        {"from": t.d("v3.1.4"), "to": "v3.2.0"},
        {
            "commits": [{"sha": t.d("1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"), "msg": "fix: retry on 503"}, {"sha": t.d("b7e23ec29af22b0b4e41da31e868d57226121c84"), "msg": "feat: bulk export"}],
            "released_at": t.d("2025-03-01T12:00:00Z"),
            "artifact": t.d("flywheel-3.2.0-py3-none-any.whl"),
            "build_id": t.d("4410293"),
            "uuid": t.d("3f2504e0-4f89-11d3-9a0c-0305e82c3301"),
            "latency_budget": t.d("250ms"),
            "coverage": t.d("87.4%"),
            "tracking": t.d("9400111899223397614512"),
            "isbn": t.d("978-3-16-148410-0"),
            "serial": t.d("SN-4C3A-88F1-20D9"),
        },
    )
    t.reply("Release v3.2.0 retries on 503 and adds bulk export.")


def t_mixed_decoy_prose(t: Trace) -> None:
    """en: capitalised non-names and places that must survive, next to one real name."""
    t.slice = "sales"
    t.user(
        f"Compare the {t.d('Premium Plan')} with {t.d('Enterprise Edition')} for our {t.d('Berlin')} and {t.d('Lyon')} offices. "
        f"Our account manager is {t.p('NAME', 'Henrik Solberg')}. We run {t.d('Kubernetes 1.29')} on {t.d('Ubuntu 22.04')}."
    )
    t.tool(
        "pricing_get",
        {"plans": ["premium", "enterprise"], "region": t.d("eu-central-1")},
        {"premium": {"seats": 50, "price": t.d("€1,299.00")}, "enterprise": {"seats": 500, "price": t.d("€9,900.00")}, "sla": t.d("99.95%")},
    )
    t.reply(f"Premium costs {t.d('€1,299.00')} for 50 seats; Enterprise {t.d('€9,900.00')} for 500, SLA 99.95%.")


def t_de_decoys(t: Trace) -> None:
    """de: Köder auf Deutsch: Rechnungsnummern, Termine, Produktnamen, Städte ohne Adresse."""
    t.slice = "buchhaltung"
    t.user(
        f"Bitte prüfe die Rechnungen {t.d('RE-2025-00417')} und {t.d('RE-2025-00418')} vom {t.d('12.03.2025')} "
        f"für das Projekt {t.d('Nordlicht')} in {t.d('Hamburg')}. Ansprechpartnerin ist {t.p('NAME', 'Dörte Ahlers')}."
    )
    t.tool(
        "rechnungen_pruefen",
        {"nummern": ["RE-2025-00417", "RE-2025-00418"]},
        {"summe": t.d("12.480,00 €"), "faellig": t.d("2025-04-11"), "kostenstelle": t.d("KST-4410"), "ust_id": t.d("DE811907980")},
    )
    t.reply("Beide Rechnungen sind korrekt, fällig am 11.04.2025.")


def t_fr_decoys(t: Trace) -> None:
    """fr: leurres en français: références, versions, dates de livraison, lieux publics."""
    t.slice = "achats"
    t.user(
        f"Commande {t.d('BC-2025-0031')} : livraison le {t.d('14/03/2025')} à la {t.d('Gare de Lyon')}, logiciel en version {t.d('12.4.2')}. "
        f"Contact : {t.p('NAME', 'Aurélien Kerbrat')}, {t.p('PHONE', '02 98 44 71 20')}."
    )
    t.tool("commande_suivre", {"ref": "BC-2025-0031"}, {"etat": "expédiée", "colis": t.d("6A12345678901"), "siret": t.d("552 100 554 00025")})
    t.reply("La commande BC-2025-0031 est expédiée.")


def t_es_decoys(t: Trace) -> None:
    """es: señuelos en español: números de pedido, versiones, horarios, ciudades."""
    t.slice = "logistica"
    t.user(
        f"¿Llegó el envío {t.d('ENV-2025-77120')} al almacén de {t.d('Valencia')}? Salió el {t.d('10/03/2025')} a las {t.d('08:45')}. "
        f"Lo firmó {t.p('NAME', 'Evaristo Candamo')}."
    )
    t.tool("envio_estado", {"id": "ENV-2025-77120"}, {"estado": "entregado", "peso_kg": t.d("18,4"), "albaran": t.d("ALB-2025-3391"), "cif": t.d("B-12345678")})
    t.reply("Sí, el envío ENV-2025-77120 está entregado.")


def t_en_root_attrs(t: Trace) -> None:
    """en: PII in root attributes that drafting copies: slice, environment reference, environment JSON."""
    t.slice = t.p("EMAIL", "vip-ruth.abernathy@northwind.example")
    t.root["flywheel.env.s0_ref"] = f"crm-snapshot/{t.p('NAME', 'Ruth Abernathy')}/2025-03-12"
    t.root["flywheel.environment"] = json.dumps({"kind": "crm", "suite": "accounts", "owner": "ruth.abernathy@northwind.example", "user_task": "t1"})
    t.p("EMAIL", "ruth.abernathy@northwind.example")
    t.user("Close the duplicate account please.")
    t.tool(f"close_account_for_{t.p('NAME', 'Ruth Abernathy', parts=['Ruth Abernathy'])}", {"account": t.d("ACC-5510"), "reason": "duplicate"}, {"ok": True}, style="spanname")
    t.reply("Closed the duplicate account ACC-5510.")


def t_de_spanname_tool(t: Trace) -> None:
    """de: Werkzeugname nur im Span-Namen, mit E-Mail darin; Umgebungsreferenz mit Telefonnummer."""
    t.slice = "kundendienst"
    t.root["flywheel.env.s0_ref"] = f"snapshot:kunde-{t.p('PHONE', '+49 89 2180 4471')}"
    t.user("Bitte das Ticket schließen.")
    t.tool(f"ticket schliessen fuer {t.p('EMAIL', 'b.lindqvist@gmx.de')}", {"ticket": t.d("TK-88120")}, {"ok": True}, style="spanname")
    t.reply("Ticket TK-88120 ist geschlossen.")


# --------------------------------------------------------------------- structured identifiers, many formats
def t_en_fraud_review(t: Trace) -> None:
    """en: fraud review: cards of several networks, IPs with ports and in XFF, SSN with context."""
    t.slice = "fraud"
    visa = t.p("CARD", luhn("4539-1488-0343-646"))
    mc2 = t.p("CARD", luhn("2221 0012 3456 789"))
    disc = t.p("CARD", luhn("601100099013942"))
    t.user(
        f"Review the three declined cards: {visa}, {mc2} and {disc}. The customer gave social security number "
        f"{t.p('SSN', '287 65 4321')} on the call."
    )
    t.tool(
        "risk_events",
        {"customer": t.d("CUS-77120"), "window": "24h"},
        {
            "events": [
                {"ip": t.p("IP", "81.2.69.160") + ":443", "x_forwarded_for": f"{t.p('IP', '185.220.101.34')}, 10.1.2.3", "score": t.d("0.91")},
                {"ip": t.p("IP", "2001:db8:85a3::8a2e:370:7334"), "asn": t.d("AS13335"), "score": t.d("0.42")},
            ],
            "ssn_on_file": t.p("SSN", "412-58-7731"),
            "card_fingerprint": t.d("fp_9Kq2Lm7Tx4"),
        },
    )
    t.reply("Two of the three cards were declined by the issuer; one by our rules.")


def t_en_cards_keyed(t: Trace) -> None:
    """en: wallet API: cards under varied keys, JCB and Diners, expiry and CVV."""
    t.slice = "wallet"
    t.tool(
        "wallet_list",
        {"user": t.d("u_55120")},
        {
            "cards": [
                {"pan": t.p("CARD", luhn("353011133330000")), "exp": "09/28", "brand": "jcb"},
                {"cardNumber": t.p("CARD", luhn("3056930902590")), "exp": "01/27", "brand": "diners"},
                {"number": t.p("CARD", luhn("5425 2334 3010 910")), "holder": t.p("NAME", "ALEXANDRA PETROVA-LUND"), "brand": "mastercard"},
            ],
            "default_currency": "EUR",
            "api": t.d("v4.0.12"),
        },
    )
    t.user("Which card is the default?")
    t.reply("The Mastercard ending 9106 is the default.")


def t_en_ibans_many(t: Trace) -> None:
    """en: payroll batch: IBANs of six countries in JSON and in a CSV string."""
    t.slice = "payroll"
    be = t.p("IBAN", iban("BE", "539007547034"))
    at = t.p("IBAN", iban("AT", "1904300234573201", spaced=True))
    ch = t.p("IBAN", iban("CH", "0483 5012 3456 7800 9".replace(" ", ""), spaced=True))
    pl = t.p("IBAN", iban("PL", "109010140000071219812874"))
    ie = t.p("IBAN", iban("IE", "AIBK93115212345678").lower())
    pt = t.p("IBAN", iban("PT", "000201231234567890154"))
    csv = f"name;iban;amount\n{t.p('NAME', 'Wouter Claeys')};{be};2100.00\n{t.p('NAME', 'Magdalena Strzelecka')};{pl};1850.00\n"
    t.tool("payroll_upload", {"batch": t.d("PB-2025-03"), "csv": csv}, {"rows": 2, "ok": True})
    t.tool("payroll_add", {"employees": [{"iban": at}, {"iban": ch}, {"iban": ie}, {"iban": pt}]}, {"rows": 4})
    t.user("Load the March payroll batch.")
    t.reply("Six payments loaded into batch PB-2025-03.")


def t_en_emails_phones(t: Trace) -> None:
    """en: mailing list cleanup: emails with plus tags and capitals, phones in many national styles."""
    t.slice = "marketing"
    t.tool(
        "list_members",
        {"list": t.d("newsletter-2025")},
        {
            "members": [
                {"email": t.p("EMAIL", "Oluwaseun.Adeyemi+news@Gmail.com"), "phone": t.p("PHONE", "+44 (0)20 7946 0958")},
                {"email": t.p("EMAIL", "mei-ling.chao@student.uni-heidelberg.de"), "phone": t.p("PHONE", "0044 20 7946 0321")},
                {"email": t.p("EMAIL", "j_o_brien@eircom.net"), "phone": t.p("PHONE", "+353 87 123 4567")},
                {"email": t.p("EMAIL", "sasha.k@yandex.ru"), "phone": t.p("PHONE", "+1-212-555-0199 ext. 42")},
            ],
            "count": 4,
        },
    )
    t.user(f"Remove the bounced address {t.p('EMAIL', 'mei-ling.chao@student.uni-heidelberg.de')} and call {t.p('PHONE', 'tel:+14155550123')} to confirm.")
    t.reply("Removed one bounced member.")


def t_de_telefone(t: Trace) -> None:
    """de: Rückrufliste mit Telefonnummern in deutschen Schreibweisen."""
    t.slice = "rueckruf"
    t.user(
        f"Bitte ruf zurück: {t.p('NAME', 'Frau Oberländer')} unter {t.p('PHONE', '(0 89) 21 80 - 44 71')}, "
        f"{t.p('NAME', 'Herr Tischendorf')} unter {t.p('PHONE', '+49 (0)40 822 55 190')} und die Zentrale unter {t.p('PHONE', '0800 330 1000')}."
    )
    t.tool("rueckruf_liste", {"tag": "2025-03-13"}, {"eintraege": 3, "ticket": t.d("RR-2025-0313")})
    t.reply("Drei Rückrufe sind für morgen eingetragen.")


def t_fr_ip_email(t: Trace) -> None:
    """fr: sécurité: connexions suspectes, IP v4/v6, courriels dans un journal."""
    t.slice = "securite"
    t.tool(
        "journal_connexions",
        {"compte": t.d("CPT-44120")},
        {"lignes": [
            f"2025-03-12 08:01:44 connexion réussie {t.p('EMAIL', 'clotilde.rambaud@sfr.fr')} depuis {t.p('IP', '90.112.45.8')}",
            f"2025-03-12 08:03:10 échec mot de passe depuis {t.p('IP', 'fe80::1ff:fe23:4567:890a')}",
        ], "version_agent": t.d("7.12.0")},
    )
    t.user("Y a-t-il des connexions suspectes ?")
    t.reply("Un échec de connexion depuis une adresse locale.")


def t_es_telefonos(t: Trace) -> None:
    """es: agenda con teléfonos españoles y mexicanos, correos y una dirección mexicana."""
    t.slice = "agenda"
    t.tool(
        "agenda_exportar",
        {"grupo": "proveedores"},
        {"contactos": [
            {"nombre": t.p("NAME", "Eulalia Quintanilla"), "tel": t.p("PHONE", "+34 91 555 43 21"), "correo": t.p("EMAIL", "eulalia@quintanilla-asesores.es")},
            {"nombre": t.p("NAME", "Xóchitl Ramírez Barrera"), "tel": t.p("PHONE", "+52 55 1234 5678"), "direccion": t.p("ADDRESS", "Av. Insurgentes Sur 1602, Col. Crédito Constructor, 03940 Ciudad de México")},
        ]},
    )
    t.user("Exporta los proveedores.")
    t.reply("Exportados dos contactos.")


def t_mixed_headers_raw(t: Trace) -> None:
    """en: a raw HTTP request captured by a proxy tool: basic auth, cookies, api key, client ip."""
    t.slice = "proxy"
    basic = b64("svc-reports:Gr33n-Lantern-7")
    t.p("SECRET", basic)
    t.p("SECRET", "Gr33n-Lantern-7")
    raw = (
        "POST /v1/reports/export HTTP/1.1\r\nHost: reports.internal.example\r\n"
        f"Authorization: Basic {basic}\r\n"
        f"Cookie: session={t.p('SECRET', 'eyJ1aWQiOjQ0MTIsInRzIjoxNzQxNzcwODQyfQ--c2lnbmF0dXJlLWhlcmUtNDQxMg')}; _ga={t.d('GA1.2.1234567890.1741770842')}\r\n"
        f"X-API-Key: {t.p('SECRET', 'rk_prod_9Xq2Lm7Tz4Vb1Wc8Yd3Fe6Gh0Ji5Kn')}\r\n"
        f"X-Forwarded-For: {t.p('IP', '100.64.12.7')}\r\n"
        f"User-Agent: python-requests/{t.d('2.31.0')}\r\n\r\n"
    )
    t.tool("proxy_capture", {"id": t.d("cap-0091")}, raw)
    t.user("What did the report exporter send?")
    t.reply("A POST to the export endpoint with basic authentication.")


def t_mixed_jwt_payload_pii(t: Trace) -> None:
    """en: id token whose payload carries name, email and birthdate (nested encoded PII)."""
    t.slice = "auth"
    claims = {"sub": "auth0|8812", "name": "Siobhán Ní Bhriain", "email": "siobhan.nibhriain@gmail.com", "birthdate": "1991-08-17"}
    token = t.p("SECRET", jwt(claims, "Lq2Kx9Tn4Wv7Pb1Yc6Hd3Fg0Js5Zr8Ma2Pe"))
    t.p("NAME", "Siobhán Ní Bhriain", parts=["Siobhán Ní Bhriain", "Siobhán", "Bhriain"])
    t.p("EMAIL", "siobhan.nibhriain@gmail.com")
    t.p("DOB", "1991-08-17")
    t.tool("oidc_userinfo", {"id_token": token}, {"verified": True, "aud": t.d("app_44120")})
    t.user("Is the login token valid?")
    t.reply("Yes, the token verifies for the app.")


def t_es_direcciones(t: Trace) -> None:
    """es: direcciones en prosa con 'c/' y 'avda.', fecha de nacimiento con barra."""
    t.slice = "envios"
    t.user(
        f"Envíalo a c/ {t.p('ADDRESS', 'Sant Joan de la Salle 42, 08022 Barcelona')} y la factura a "
        f"{t.p('ADDRESS', 'Avda. de Andalucía 118, 29007 Málaga')}. Soy {t.p('NAME', 'Baltasar Ezquerra')}, nací el {t.p('DOB', '15/01/1992')}."
    )
    t.tool("envio_crear", {"peso": "2,5", "servicio": t.d("24H")}, {"envio": t.d("ENV-2025-80031")})
    t.reply("Envío ENV-2025-80031 creado.")


def t_it_anagrafica(t: Trace) -> None:
    """it: anagrafica con chiavi italiane: nome, cognome, data_di_nascita, indirizzo, telefono."""
    t.slice = "anagrafica"
    t.tool(
        "anagrafica_leggi",
        {"id": t.d("ANA-5512")},
        {"nome": t.p("NAME", "Ludovica"), "cognome": t.p("NAME", "Scarpellini"), "data_di_nascita": t.p("DOB", "03/02/1977"), "indirizzo": t.p("ADDRESS", "Piazza Santo Spirito 9, 50125 Firenze"), "telefono": t.p("PHONE", "055 213 4471"), "email": t.p("EMAIL", "ludovica.scarpellini@pec.it")},
    )
    t.user("Aggiorna l'anagrafica ANA-5512.")
    t.reply("Anagrafica aggiornata.")


def t_nl_pt_mixed(t: Trace) -> None:
    """nl: klantenservice: naam, telefoon, e-mail, adres, wachtwoord in proza."""
    t.slice = "klantenservice"
    t.user(
        f"Hallo, met {t.p('NAME', 'Sanne Dijkgraaf')}. Mijn nummer is {t.p('PHONE', '06 4123 8870')} en mijn e-mail "
        f"{t.p('EMAIL', 'sanne.dijkgraaf@ziggo.nl')}. Ik woon op {t.p('ADDRESS', 'Oudegracht 158, 3511 AZ Utrecht')}. Mijn wachtwoord is {t.p('SECRET', 'Tulpen*Regen88')}."
    )
    t.tool("klant_zoeken", {"email": "sanne.dijkgraaf@ziggo.nl"}, {"klant": t.d("KL-2025-441"), "abonnement": t.d("Basis 2.0")})
    t.reply("Ik heb uw klantgegevens gevonden.")


WRITERS = [v for k, v in sorted(globals().items()) if k.startswith("t_") and callable(v)]
