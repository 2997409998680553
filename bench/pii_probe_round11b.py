"""Development probe of round 11 (issue 20) for names, secrets, national ids and phones.

Development evidence written by the round-11 helper (redact11b) on 3 December 2026, before
the round's rules: sentences and records in en/de/fr/es/it/nl/pt written for this probe,
not taken from any corpus (no corpus trace, label or miss was read to write them). People,
numbers and secrets are invented; national ids carry check digits computed with
python-stdnum. Frozen when committed: later rounds add a new probe instead of editing this.

Usage:
    python bench/pii_probe_round11b.py            # counts per type, decoys lost
    python bench/pii_probe_round11b.py --misses   # and each miss / lost decoy

Each case goes through ``Redactor.redact_document`` (the default policy), a text as a
document of one string, a record as a JSON object. A planted part leaks when it is still in
the output (names: as a whole word, case-sensitive, as bench/redaction_quality.py scores);
a decoy survives when it is still there verbatim.
"""

from __future__ import annotations

# ruff: noqa: E501 - one case per line, as written
import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# (type, language, text or record, planted parts)
CASES: list[tuple[str, str, Any, list[str]]] = [
    # -- NAME ---------------------------------------------------------------------------
    ("NAME", "en", "transcript: yeah hi, this is marguerite okonedo calling about the invoice", ["okonedo", "marguerite"]),
    ("NAME", "en", "caller: my name's desmond achterberg, d-e-s-m-o-n-d", ["achterberg"]),
    ("NAME", "en", "agent: thanks mr. fairweather-lowe, I can see the booking", ["fairweather-lowe"]),
    ("NAME", "en", "Escalated to Okafor, Chidinma (team lead) on Tuesday.", ["Okafor", "Chidinma"]),
    ("NAME", "en", "Author: Rosalind Pemberton-Achebe <rpa@orbitfield.example>", ["Pemberton-Achebe", "Rosalind"]),
    ("NAME", "en", "Co-authored-by: Teodor Vasilescu <tvasilescu@users.noreply.example>", ["Vasilescu", "Teodor"]),
    ("NAME", "en", "Please loop in Professor Ngozi-Blackwood before Friday.", ["Ngozi-Blackwood"]),
    ("NAME", "en", "The tenant, a Ms Hinchcliffe, says the boiler failed again.", ["Hinchcliffe"]),
    ("NAME", "en", "Thanks,\nPrzemek\n", ["Przemek"]),
    ("NAME", "de", "Rückruf erbeten von Frau Dr. Lindqvist-Hambrecht wegen der Abrechnung.", ["Lindqvist-Hambrecht"]),
    ("NAME", "de", "Ansprechpartnerin: Wiebke Thormählen, Einkauf", ["Thormählen", "Wiebke"]),
    ("NAME", "de", "Laut Sachbearbeiter Kowalczyk fehlt noch die Unterschrift.", ["Kowalczyk"]),
    ("NAME", "de", "anrufer: ja guten tag, hier spricht gottfried brennecke aus kassel", ["brennecke", "gottfried"]),
    ("NAME", "de", "Mit freundlichen Grüßen\nHeinrike Vosskamp\nTeamleitung Disposition", ["Vosskamp", "Heinrike"]),
    ("NAME", "fr", "Maître Delacourbe a transmis les pièces au greffe.", ["Delacourbe"]),
    ("NAME", "fr", "client : bonjour, c'est solange marchetti-roux à l'appareil", ["marchetti-roux", "solange"]),
    ("NAME", "fr", "Le dossier est suivi par l'infirmière Keraudren depuis lundi.", ["Keraudren"]),
    ("NAME", "fr", "Bien à vous,\nAnne-Sophie Quéméneur", ["Quéméneur", "Anne-Sophie"]),
    ("NAME", "fr", "Pierre-Yves Le Goarnic a validé le devis.", ["Goarnic", "Pierre-Yves"]),
    ("NAME", "es", "La doctora Arizmendi revisará los resultados mañana.", ["Arizmendi"]),
    ("NAME", "es", "usuario: hola, soy ximena larrañaga, tengo un problema con el pedido", ["larrañaga", "ximena"]),
    ("NAME", "es", "Atentamente,\nRigoberto Echeverría Salcedo", ["Echeverría", "Rigoberto", "Salcedo"]),
    ("NAME", "es", "El abogado Zubizarreta pidió una prórroga.", ["Zubizarreta"]),
    ("NAME", "it", "L'avvocato Scarpellini ha firmato il verbale.", ["Scarpellini"]),
    ("NAME", "it", "Cordiali saluti,\nOttavia Brambilla Ferretti", ["Brambilla", "Ottavia", "Ferretti"]),
    ("NAME", "it", "utente: buongiorno, sono gianmarco pellegatta", ["pellegatta", "gianmarco"]),
    ("NAME", "nl", "Meneer Van Kerckhoven belt morgen terug over de offerte.", ["Kerckhoven"]),
    ("NAME", "nl", "Met vriendelijke groet,\nSjoukje Hoekstra-Bleeker", ["Hoekstra-Bleeker", "Sjoukje"]),
    ("NAME", "pt", "O senhor Albuquerque Vasconcelos ligou duas vezes.", ["Albuquerque", "Vasconcelos"]),
    ("NAME", "pt", "Com os melhores cumprimentos,\nJoaquina Magalhães", ["Magalhães", "Joaquina"]),
    ("NAME", "en", {"assignee": "Ottilie Brandauer", "status": "open"}, ["Brandauer", "Ottilie"]),
    ("NAME", "es", {"nombre_completo": "Itziar Goikoetxea Urrutia", "plan": "Premium"}, ["Goikoetxea", "Itziar", "Urrutia"]),
    ("NAME", "fr", {"destinataire": "Gwenaëlle Le Bihan", "ville": "Quimper"}, ["Gwenaëlle", "Bihan"]),
    ("NAME", "de", {"kontoinhaber": "Ludmila Schwarzenegger-Haas", "waehrung": "EUR"}, ["Ludmila", "Schwarzenegger-Haas"]),
    ("NAME", "en", {"reviewers": ["Aurelio Bianchini", "Femke de Wit"]}, ["Bianchini", "Aurelio", "Femke"]),
    # -- SECRET -------------------------------------------------------------------------
    ("SECRET", "en", "the passphrase is correct horse battery staple, don't share it", ["horse battery staple"]),
    ("SECRET", "en", "Vault unseal passphrase: tangerine orbit velvet cascade", ["orbit velvet cascade"]),
    ("SECRET", "en", "Security question: mother's maiden name: Okonjo", ["Okonjo"]),
    ("SECRET", "en", "security answer: Rusty the beagle", ["Rusty the beagle"]),
    ("SECRET", "de", "Sicherheitsfrage: Name des ersten Haustiers – Antwort: Krümel", ["Krümel"]),
    ("SECRET", "fr", "Question secrète : ville de naissance de votre mère ; réponse : Tulle", ["Tulle"]),
    ("SECRET", "es", "pregunta de seguridad: nombre de tu primera mascota, respuesta: Canelita", ["Canelita"]),
    ("SECRET", "en", "seed phrase: orchard velvet panic lumber oyster tribe glance marble shrimp ladder aisle cotton", ["panic lumber oyster"]),
    ("SECRET", "en", "SENTRY_DSN=https://4f9c2a7e81b34d6aa0c5e2f7d91b3c48@o482913.ingest.sentry.io/5532871", ["4f9c2a7e81b34d6aa0c5e2f7d91b3c48"]),
    ("SECRET", "en", "download: https://acme-prod.s3.amazonaws.com/exports/q3.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAZ7Q4RM2P6XKD3N5W%2F20261203%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20261203T101500Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=9d1c7e4a2b8f6035e7c1d9a4b2f8e6c0a5d3b1f9e7c5a3d1b9f7e5c3a1d9b7f5", ["9d1c7e4a2b8f6035e7c1d9a4b2f8e6c0a5d3b1f9e7c5a3d1b9f7e5c3a1d9b7f5"]),
    ("SECRET", "en", "blob: https://stacct.blob.core.windows.net/c/r.pdf?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&sig=Qm7vT2kP9xLr4WcZ8nYb3HdF6sJa1UeG5oKi0NtRqAw%3D", ["Qm7vT2kP9xLr4WcZ8nYb3HdF6sJa1UeG5oKi0NtRqAw"]),
    ("SECRET", "en", "Set-Cookie is gone but the log still shows PHPSESSID=k3v9q1m7r2t8b4x6n0z5c1d7f3", ["k3v9q1m7r2t8b4x6n0z5c1d7f3"]),
    ("SECRET", "en", "curl -H 'X-Session-Id: 7QnV2c9LkR4mT8wZ1pY6sB3d' https://api.example/v1/me", ["7QnV2c9LkR4mT8wZ1pY6sB3d"]),
    ("SECRET", "en", "docker login -u deploybot -p Dk8!mQz2Lw registry.example.com", ["Dk8!mQz2Lw"]),
    ("SECRET", "en", "git remote set-url origin https://oauth2:glpat-Xy7Rk2Pq9Lm4Tz8Wv3Nb@gitlab.example.com/team/app.git", ["glpat-Xy7Rk2Pq9Lm4Tz8Wv3Nb"]),
    ("SECRET", "en", "export PGPASSWORD='plum*Rocket77'", ["plum*Rocket77"]),
    ("SECRET", "en", "kubectl create secret generic db --from-literal=password=S4ndC4stle-91", ["S4ndC4stle-91"]),
    ("SECRET", "en", "Telegram bot token 7390124856:AAHk3Lq9Zr2Wm8Tx5Vb1Nc7Pd4Fs6Gh0Jy", ["7390124856:AAHk3Lq9Zr2Wm8Tx5Vb1Nc7Pd4Fs6Gh0Jy"]),
    ("SECRET", "en", "your 2FA recovery codes: 4kq9-7zmx 2wp8-h3rt 9vnc-6bly", ["4kq9-7zmx", "2wp8-h3rt", "9vnc-6bly"]),
    ("SECRET", "en", "the master password for bitwarden is Mistral Ocelot Juniper 42", ["Ocelot Juniper"]),
    ("SECRET", "de", "Die Passphrase lautet: grüne Wolke sieben Tanne", ["Wolke sieben Tanne"]),
    ("SECRET", "fr", "la phrase secrète est « lune orange piano vélo »", ["orange piano"]),
    ("SECRET", "es", "la frase de contraseña es tortuga azul bajo la lluvia", ["azul bajo la lluvia"]),
    ("SECRET", "it", "la passphrase è gatto viola sul tetto", ["viola sul tetto"]),
    ("SECRET", "nl", "het wachtwoord is Zonnebloem!88 en de pincode 4417", ["Zonnebloem!88", "4417"]),
    ("SECRET", "pt", "a senha do wi-fi é girassol2024 e o PIN 8821", ["girassol2024", "8821"]),
    ("SECRET", "en", {"client_secret": "q8Xv~Lr3.Tn7Wk2_Pz9Ym4Hc6Bf1Jd5Gs0", "client_id": "web-portal"}, ["q8Xv~Lr3.Tn7Wk2_Pz9Ym4Hc6Bf1Jd5Gs0"]),
    ("SECRET", "en", {"security_answer": "Lake Wanaka", "security_question": "Where did you meet your partner?"}, ["Lake Wanaka"]),
    ("SECRET", "en", {"dsn": "postgresql://report:Fj3#kLw9q@db.internal:5432/sales"}, ["Fj3#kLw9q"]),
    ("SECRET", "en", {"session_id": "s%3AaB7cD9eF1gH3iJ5kL7mN9oP.Xq2Wr4Ts6Uv8"}, ["aB7cD9eF1gH3iJ5kL7mN9oP"]),
    ("SECRET", "en", "Heroku API key: 3f7b9c21-8e4d-4a6f-b2c1-9d0e5f7a8b3c", ["3f7b9c21-8e4d-4a6f-b2c1-9d0e5f7a8b3c"]),
    ("SECRET", "en", "shopify access token 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", ["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"]),
    ("SECRET", "en", "NEW_RELIC_LICENSE_KEY=eu01xx7d3f9a2b8c1e6d4f0a9b3c7e2d5f8aNRAL", ["eu01xx7d3f9a2b8c1e6d4f0a9b3c7e2d5f8aNRAL"]),
    # -- NATIONAL_ID --------------------------------------------------------------------
    ("NATIONAL_ID", "en", "Passport no. 561284937, issued in Ottawa", ["561284937"]),
    ("NATIONAL_ID", "en", "her passport number is GB 538174926", ["538174926"]),
    ("NATIONAL_ID", "it", "Carta d'identità elettronica n. CA48213FB, rilasciata dal Comune di Lecco", ["CA48213FB"]),
    ("NATIONAL_ID", "it", "numero CIE: CB 72915 KE", ["CB 72915 KE"]),
    ("NATIONAL_ID", "it", "Il codice fiscale di Ottavia è BNCLRA84H52F205G.", ["BNCLRA84H52F205G"]),
    ("NATIONAL_ID", "de", "Personalausweisnummer: L01X00T47", ["L01X00T47"]),
    ("NATIONAL_ID", "de", "Steuer-ID 72689542022 liegt vor", ["72689542022"]),
    ("NATIONAL_ID", "fr", "N° de carte nationale d'identité : 880692310285", ["880692310285"]),
    ("NATIONAL_ID", "fr", "numéro de sécu 2 84 06 75 123 400 47", ["2 84 06 75 123 400 47"]),
    ("NATIONAL_ID", "es", "Mi DNI es 73918246-H y el NIE de mi pareja Y4827361C", ["73918246-H", "Y4827361C"]),
    ("NATIONAL_ID", "pt", "Cartão de Cidadão n.º 12874319 0 ZX8", ["12874319 0 ZX8"]),
    ("NATIONAL_ID", "pt", "NIF 248173952", ["248173952"]),
    ("NATIONAL_ID", "nl", "BSN: 291837463", ["291837463"]),
    ("NATIONAL_ID", "nl", "documentnummer van de identiteitskaart: SPECI2014", ["SPECI2014"]),
    ("NATIONAL_ID", "fr", "carte eID belge 591-8274000-02", ["591-8274000-02"]),
    ("NATIONAL_ID", "en", "NHS no 943 476 5919", ["943 476 5919"]),
    ("NATIONAL_ID", "en", "PPSN 8472916K on the form", ["8472916K"]),
    ("NATIONAL_ID", "pt", "CPF 529.982.247-25", ["529.982.247-25"]),
    ("NATIONAL_ID", "de", "österreichische SV-Nummer 4820 150387", ["4820 150387"]),
    ("NATIONAL_ID", "en", {"passport_no": "X4829173", "nationality": "NZ"}, ["X4829173"]),
    ("NATIONAL_ID", "it", {"numero_documento": "CA48213FB", "tipo_documento": "CIE"}, ["CA48213FB"]),
    ("NATIONAL_ID", "pl", "PESEL: 82061418321", ["82061418321"]),
    # -- PHONE --------------------------------------------------------------------------
    ("PHONE", "fr", "Rappelez-moi au 06.12.34.56.78 après 18h.", ["06.12.34.56.78"]),
    ("PHONE", "fr", "portable : 07 81 23 45 67", ["07 81 23 45 67"]),
    ("PHONE", "fr", "tél. +33 (0)4 78 92 13 55", ["78 92 13 55"]),
    ("PHONE", "fr", "standard 01.45.67.89.12", ["01.45.67.89.12"]),
    ("PHONE", "de", "Handy: 0151 23456789", ["0151 23456789"]),
    ("PHONE", "de", "erreichbar unter 0171/2345678", ["0171/2345678"]),
    ("PHONE", "de", "Tel. (030) 123 456 78", ["123 456 78"]),
    ("PHONE", "de", "+49 (0)89 4711 0815", ["4711 0815"]),
    ("PHONE", "es", "Llámame al 612 34 56 78 cuando puedas", ["612 34 56 78"]),
    ("PHONE", "es", "móvil: 654.321.987", ["654.321.987"]),
    ("PHONE", "it", "cellulare 347 123 4567", ["347 123 4567"]),
    ("PHONE", "it", "tel. 02-4856 3921", ["4856 3921"]),
    ("PHONE", "nl", "bel me op 06-12345678", ["06-12345678"]),
    ("PHONE", "nl", "telefoon 020 - 624 1893", ["624 1893"]),
    ("PHONE", "pt", "telemóvel 912 345 678", ["912 345 678"]),
    ("PHONE", "pt", "WhatsApp +55 11 98765-4321", ["98765-4321"]),
    ("PHONE", "en", "call me on 07700 900123", ["07700 900123"]),
    ("PHONE", "en", "cell 617.555.0199", ["617.555.0199"]),
    ("PHONE", "en", "my number's 0412 345 678 (Aus)", ["0412 345 678"]),
    ("PHONE", "en", {"tel": "0612345678", "type": "mobile"}, ["0612345678"]),
    ("PHONE", "de", {"telefonnummer": "089/12 34 56", "art": "Festnetz"}, ["12 34 56"]),
    ("PHONE", "fr", {"telephone_portable": "06 98 76 54 32"}, ["06 98 76 54 32"]),
]

# (language, text or record, decoys that must survive)
DECOYS: list[tuple[str, Any, list[str]]] = [
    ("fr", "Pour Noël il veut le jeu Docteur Maboul et un Monsieur Cuisine pour sa mère.", ["Docteur Maboul", "Monsieur Cuisine"]),
    ("fr", "Essai de la Zoe Renault E-Tech et de la Dacia Spring ce week-end.", ["Zoe Renault E-Tech", "Dacia Spring"]),
    ("en", "She finished Professor Layton and the Curious Village last night.", ["Professor Layton"]),
    ("en", "We watched Mr. Robot season 2 and Doctor Who.", ["Mr. Robot", "Doctor Who"]),
    ("de", "Im Angebot: Dr. Oetker Ristorante und Meister Proper Allzweckreiniger.", ["Dr. Oetker", "Meister Proper"]),
    ("es", "Compramos Don Simón y una botella de Capitán Morgan.", ["Don Simón", "Capitán Morgan"]),
    ("en", "ABA routing number 021000021 for wire transfers to the bank's clearing account", ["021000021"]),
    ("en", "thread_id thread_Q8zN3kT2vW7pL9mX4rB6cY1d was resumed", ["thread_Q8zN3kT2vW7pL9mX4rB6cY1d"]),
    ("en", "run run_7Hk2Lm9Qp4Xz8Vw3 finished; assistant asst_Bn4Kq8Rz2Mw7Tx1", ["run_7Hk2Lm9Qp4Xz8Vw3", "asst_Bn4Kq8Rz2Mw7Tx1"]),
    ("fr", "Livraison le 06.12.2026 à 14.30, réf. 2026.12.06.0042", ["06.12.2026", "2026.12.06.0042"]),
    ("de", "Version 10.4.22.1871 vom 12.03.2026, Build 2026.03.12.7", ["10.4.22.1871", "2026.03.12.7"]),
    ("en", "EAN 4006381333931, ISBN 978-3-16-148410-0, SKU 48-2210-77", ["4006381333931", "978-3-16-148410-0", "48-2210-77"]),
    ("en", "UPS tracking 1Z999AA10123456784, order 302-4829175-1234567", ["1Z999AA10123456784", "302-4829175-1234567"]),
    ("en", "The password policy requires 12 characters; the passphrase must have four words.", ["12 characters", "four words"]),
    ("en", "Security question: What was the name of your first school?", ["What was the name of your first school?"]),
    ("de", "Sicherheitsfrage: Wie hieß Ihr erstes Haustier?", ["Wie hieß Ihr erstes Haustier?"]),
    ("en", "session expired after 30 minutes; recovery mode enabled", ["30 minutes", "recovery mode"]),
    ("en", "The seed phrase feature ships in v3.2; see the passphrase docs.", ["v3.2", "passphrase docs"]),
    ("en", "Request id req_8a7b6c5d4e3f2a1b, trace 4bf92f3577b34da6a3ce929d0e0e4736", ["req_8a7b6c5d4e3f2a1b", "4bf92f3577b34da6a3ce929d0e0e4736"]),
    ("it", "La pratica n. 2026/004812 del Comune di Lecco, protocollo CA-2026-0419", ["2026/004812", "CA-2026-0419"]),
    ("es", "Vuelo IB3166 con localizador KX7PQ2, puerta B34", ["IB3166", "KX7PQ2"]),
    ("nl", "Factuurnummer 2026-00481, KvK 69599084, btw NL853746333B01", ["2026-00481", "69599084", "NL853746333B01"]),
    ("pt", "Encomenda PT-2026-118842, fatura FT 2026/4471", ["PT-2026-118842", "FT 2026/4471"]),
    ("en", "Meet at Saint Pancras, then the Victoria line to Brixton.", ["Saint Pancras", "Victoria"]),
    ("fr", "Hôtel Saint-Louis, salle Montgolfier, 3e étage", ["Hôtel Saint-Louis"]),
    ("de", "Die Goethe-Universität und das Max-Planck-Institut kooperieren.", ["Goethe-Universität", "Max-Planck-Institut"]),
    ("en", "Port 5432, pool size 20, timeout 30000 ms, retries 3", ["5432", "30000"]),
    ("en", {"thread_id": "thread_Q8zN3kT2vW7pL9mX4rB6cY1d", "routing_number": "021000021"}, ["thread_Q8zN3kT2vW7pL9mX4rB6cY1d", "021000021"]),
    ("en", {"product": "Docteur Maboul", "brand": "Hasbro"}, ["Docteur Maboul"]),
    ("fr", "Coordonnées GPS 45.76.48.12 ? non : 45.7640, 4.8357", ["45.7640", "4.8357"]),
    ("en", "Invoice INV-2026-0612 total 1.234.567,89 EUR", ["INV-2026-0612", "1.234.567,89"]),
    ("en", "The recovery key feature is documented in KB-4471; backup codes are generated per user.", ["KB-4471"]),
    ("es", "Pedido 612-3456-78 enviado; modelo Samsung A54", ["612-3456-78"]),
]


def _leaks(kind: str, part: str, out: str) -> bool:
    if kind == "NAME":
        return re.search(rf"(?<!\w){re.escape(part)}(?!\w)", out) is not None
    return part in out


def main() -> int:
    """Run the probe; print counts (and misses)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--misses", action="store_true", help="print each miss and lost decoy")
    args = ap.parse_args()
    from flywheel.promote._redact import Redactor

    red = Redactor()
    totals: dict[str, list[int]] = {}
    for kind, lang, doc, parts in CASES:
        out, _ = red.redact_document(doc)
        text = json.dumps(out, ensure_ascii=False)
        missed = [p for p in parts if _leaks(kind, p, text)]
        t = totals.setdefault(kind, [0, 0])
        t[1] += 1
        if not missed:
            t[0] += 1
        elif args.misses:
            print(f"MISS {kind} {lang}: {missed} <- {text[:200]}")
    kept = lost = 0
    for lang, doc, decoys in DECOYS:
        out, _ = red.redact_document(doc)
        text = json.dumps(out, ensure_ascii=False)
        for d in decoys:
            if d in text:
                kept += 1
            else:
                lost += 1
                if args.misses:
                    print(f"LOST decoy {lang}: {d!r} <- {text[:200]}")
    for kind, (ok, n) in totals.items():
        print(f"{kind}: {ok}/{n}")
    print(f"decoys: {kept}/{kept + lost}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
