"""The development corpus: hand-written agent runs for tuning detectors (see README.md).

Separate people, streets, tools and sentence patterns from ``frozen_traces.py``;
detector rules may be shaped on this file, never on the frozen one.
"""

# ruff: noqa: E501
from __future__ import annotations

import json

from _kit import Trace, b64, jwt, urlenc


def t_dev_en_support(t: Trace) -> None:
    """en: support chat, name after 'this is', address, phone, email."""
    t.user(
        f"Hey, this is {t.p('NAME', 'Barnaby Quillfeather')} - my package went to {t.p('ADDRESS', '901 Larkspur Court, Boise, ID 83702')} "
        f"instead of my office. Text me at {t.p('PHONE', '208-555-0163')} or mail {t.p('EMAIL', 'bquill@marrowstone.org')}."
    )
    t.tool("get_shipment", {"tracking": t.d("TRK-55021-X")}, {"status": "delivered", "signed": t.p("NAME", "B. Quillfeather")})
    t.reply("It was delivered and signed for; I've opened a trace request.")


def t_dev_en_secrets(t: Trace) -> None:
    """en: config dump with keys and a connection string."""
    t.tool(
        "cat_file",
        {"path": "settings.toml"},
        f"[db]\nurl = \"mysql://reporting:{t.p('SECRET', 'Pl4typus-Hat')}@10.9.8.7:3306/reports\"\n[anthropic]\nkey = \"{t.p('SECRET', 'sk-ant-api03-Zx8Lm2Kq9Tn4Wv7Pb1Yc6Hd3Fg0Js5Ra2Qe8Uo4Ii1Op7As9Df3Gh6Jk2Lz5Xc8Vb0Nm4Qw7Er1Ty3Ui6OpAA')}\"\n"
        f"[hf]\ntoken = \"{t.p('SECRET', 'hf_QmZx8Lk2Tr9Vn4Wp7Yb1Cd6Fg3Hj0Ks5Le')}\"\nversion = \"{t.d('0.18.2')}\"\n",
    )
    t.user("Which database does the reporting job use?")
    t.reply("A MySQL database on the internal network.")


def t_dev_de_kunde(t: Trace) -> None:
    """de: Kunde ruft an, Name mit 'Herr', Adresse mit 'Weg', Geburtstag."""
    t.user(
        f"Hier spricht {t.p('NAME', 'Herr Bertold Ruhnau')}. Ich wohne {t.p('ADDRESS', 'Birkenweg 3, 24103 Kiel')} und habe am "
        f"{t.p('DOB', '30.01.1962')} Geburtstag – das ist mein Geburtsdatum für die Verifizierung."
    )
    t.tool("kunde_suchen", {"plz": "24103", "name": "Ruhnau"}, {"treffer": 1, "kunde": t.d("K-30011")}, style="oi")
    t.reply("Ich habe Ihr Konto gefunden, Herr Ruhnau.")


def t_dev_de_zahlung(t: Trace) -> None:
    """de: Lastschrift, IBAN in Kleinbuchstaben, Handynummer mit Schrägstrich."""
    t.user(f"Lastschrift bitte von {t.p('IBAN', 'de89 3704 0044 0532 0130 00')} einziehen. Handy: {t.p('PHONE', '0170/4418823')}.")
    t.tool("mandat_anlegen", {"iban": "DE89370400440532013000", "glaeubiger_id": t.d("DE98ZZZ09999999999")}, {"mandat": t.d("M-2025-118")})
    t.reply("Mandat M-2025-118 angelegt.")


def t_dev_fr_client(t: Trace) -> None:
    """fr: cliente, nom après 'Madame', adresse 'boulevard', date de naissance."""
    t.user(
        f"Madame {t.p('NAME', 'Clémence Audibert')} demande un duplicata. Elle est née le {t.p('DOB', '12/08/1979')} et réside "
        f"{t.p('ADDRESS', '45 boulevard Gambetta, 06000 Nice')}."
    )
    t.tool("duplicata", {"client": t.d("CL-7712")}, {"ok": True, "courrier": "2025-03-15"})
    t.reply("Le duplicata part le 15 mars.")


def t_dev_fr_secret(t: Trace) -> None:
    """fr: jeton et mot de passe sous clés françaises, JWT en cookie."""
    t.tool(
        "lire_parametres",
        {"app": "paie"},
        {"jeton_api": t.p("SECRET", "tk_9Ab2Cd4Ef6Gh8Ij0Kl2Mn4Op"), "motDePasse": t.p("SECRET", "Crêpe!Suzette42"), "seuil": t.d("1.5.3")},
    )
    t.tool("http_get", {"url": "https://paie.example/api", "headers": {"Cookie": "sid=" + t.p("SECRET", jwt({"u": 7}, "Pq9Lm2Kx7Tn4Wv1Yb6Hd3Fg0Js5Zr8Ca2"))}}, {"status": 200})
    t.user("Les paramètres de paie sont-ils bons ?")
    t.reply("Oui, le seuil est en version 1.5.3.")


def t_dev_es_cliente(t: Trace) -> None:
    """es: cliente con 'me llamo', dirección 'paseo', teléfono fijo, correo."""
    t.user(
        f"Me llamo {t.p('NAME', 'Remedios Olabarrieta')}, vivo en {t.p('ADDRESS', 'Paseo de Gracia 92, 08008 Barcelona')}. "
        f"Mi fijo es {t.p('PHONE', '93 412 77 08')} y mi correo {t.p('EMAIL', 'r.olabarrieta@telefonica.net')}."
    )
    t.tool("alta_cliente", {"correo": "r.olabarrieta@telefonica.net", "segmento": t.d("SEG-04")}, {"id": t.d("CLI-66120")})
    t.reply("Alta realizada.")


def t_dev_es_base64(t: Trace) -> None:
    """es: adjunto base64 con DNI y fecha de nacimiento."""
    doc = f"Nombre: {t.p('NAME', 'Fermín Zubizarreta')}\nFecha de nacimiento: {t.p('DOB', '02/04/1990')}\nDNI: {t.p('NATIONAL_ID', '71234567H')}"
    t.tool("subir_documento", {"nombre_archivo": "dni.txt", "contenido": b64(doc)}, {"ok": True, "doc_id": t.d("DOC-5521")})
    t.user("¿Se subió el documento?")
    t.reply("Sí, documento DOC-5521.")


def t_dev_it_cliente(t: Trace) -> None:
    """it: cliente, 'mi chiamo', indirizzo 'corso', IBAN."""
    t.user(
        f"Mi chiamo {t.p('NAME', 'Gianmarco Tortorella')}, abito in {t.p('ADDRESS', 'Corso Vittorio Emanuele II 45, 10125 Torino')}, "
        f"IBAN {t.p('IBAN', 'IT02 L123 4512 3451 2345 6789 012')}."
    )
    t.tool("conto_verifica", {"iban": "IT02L1234512345123456789012"}, {"valido": True})
    t.reply("IBAN valido.")


def t_dev_urls(t: Trace) -> None:
    """en: redirect URLs with PII and tokens in query strings."""
    t.tool(
        "browser_history",
        {"n": 3},
        {
            "urls": [
                f"https://shop.example/checkout?email={urlenc(t.p('EMAIL', 'lena.farrugia@proton.me'))}&coupon={t.d('SPRING25')}",
                f"https://auth.example/callback?code={t.p('SECRET', 'Qx7Lm2Kp9Tr4Vw1Yb6Hd')}&state={t.d('af0ifjsldkj')}",
                f"https://maps.example/search?q={urlenc(t.p('ADDRESS', '14 Harrow Lane, Leeds LS6 2QT'))}",
            ]
        },
    )
    t.user("What did I open last?")
    t.reply("A checkout page, a login callback and a map search.")


def t_dev_decoys(t: Trace) -> None:
    """en: look-alikes: versions, builds, hashes, ids, dates that are not birthdays."""
    t.user(
        f"Release {t.d('v10.4.1')} build {t.d('20250207.3')} shipped on {t.d('2025-02-07')}; ticket {t.d('OPS-99120')}, "
        f"commit {t.d('0f4c2a9b8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b')}, order {t.d('A-4410-7731')}."
    )
    t.tool("deploy_status", {"service": "api"}, {"replicas": 6, "image": t.d("registry.example/api:10.4.1"), "node": t.d("ip-10-0-3-17"), "uptime": t.d("72h")})
    t.reply("All 6 replicas run v10.4.1.")


def t_dev_nested(t: Trace) -> None:
    """en: nested JSON with arrays of contacts, key variants, JSON in string."""
    contacts = [
        {"givenName": t.p("NAME", "Oksana"), "familyName": t.p("NAME", "Hrytsenko"), "mobile": t.p("PHONE", "+380 67 123 4567")},
        {"Full-Name": t.p("NAME", "Tariq Al-Mansouri"), "E-Mail": t.p("EMAIL", "tariq.almansouri@outlook.com")},
    ]
    t.tool("contacts_export", {"group": "partners"}, {"raw": json.dumps({"contacts": contacts})})
    t.user("Export the partner contacts.")
    t.reply("Exported 2 contacts.")


WRITERS = [v for k, v in sorted(globals().items()) if k.startswith("t_") and callable(v)]
