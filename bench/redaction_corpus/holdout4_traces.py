"""The fourth independent corpus (holdout4): hand-written agent runs, frozen before any detector ran on it.

Written for issue 20 by a fourth helper, in one sitting, without reading the
detectors (``flywheel/pii/``, ``promote/``), their tests, or the earlier
corpora's traces and labels (only the first lines of one trace file, for the
format), and before running any detector on it. Weighted towards what the
README's earlier figures show as weakest: person names in prose with no keyed
copy (surnames after titles and role words, names from many countries
transliterated to Latin, names that are also common words, names in lower and
upper case, in signatures, handles and greetings), dates of birth in prose in
eleven languages, national ids of twelve countries with computed check
characters (helpers below), phone numbers in national formats, and secrets of
many kinds. Domains: mountain rescue, translation agency, genealogy, yacht
charter, hospital pharmacy, wedding planner, tax adviser, insurance adjuster,
recycling depot, dog grooming, customs broker, esports team, kindergarten,
dental lab, used-car dealer, cottage rental, animal shelter, build agents.

Every value was typed by hand; people, streets, companies and secrets are
invented. IBAN check digits, card Luhn digits and national-id check
characters are computed. Each function's docstring starts with its language
code. Do not tune on this file.
"""

# ruff: noqa: E501
from __future__ import annotations

import json

from _kit import Trace, b64, iban, jwt, luhn, urlenc


# ------------------------------------------------------- national-id check digits
def pesel(yymmdd: str, serial4: str) -> str:
    """Polish PESEL: date (month + 20 after 1999), serial, weighted mod-10 check digit."""
    d = yymmdd + serial4
    w = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3]
    return d + str((10 - sum(int(c) * k for c, k in zip(d, w, strict=True)) % 10) % 10)


def personnummer(yymmdd: str, nnn: str, sep: str = "-") -> str:
    """Swedish personnummer: Luhn over the nine digits."""
    return luhn(f"{yymmdd}{sep}{nnn}")


def hetu(ddmmyy: str, century: str, zzz: str) -> str:
    """Finnish henkilötunnus: mod-31 check character."""
    return f"{ddmmyy}{century}{zzz}" + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(ddmmyy + zzz) % 31]


def nif_pt(d8: str) -> str:
    """Portuguese NIF: weights 9..2, mod 11."""
    r = sum(int(c) * w for c, w in zip(d8, range(9, 1, -1), strict=True)) % 11
    return d8 + str(0 if r < 2 else 11 - r)


def be_nn(yymmdd: str, xxx: str, y2k: bool = False) -> str:
    """Belgian national number ``YY.MM.DD-XXX.CC`` (97 - n mod 97, a leading 2 after 1999)."""
    cc = 97 - int(("2" if y2k else "") + yymmdd + xxx) % 97
    return f"{yymmdd[:2]}.{yymmdd[2:4]}.{yymmdd[4:]}-{xxx}.{cc:02d}"


def cpr(ddmmyy: str, sss: str) -> str:
    """Danish CPR ``DDMMYY-SSSC`` that passes the mod-11 test."""
    r = sum(int(c) * k for c, k in zip(ddmmyy + sss, [4, 3, 2, 7, 6, 5, 4, 3, 2], strict=True)) % 11
    c = (11 - r) % 11
    assert c != 10, (ddmmyy, sss)
    return f"{ddmmyy}-{sss}{c}"


def fnr(ddmmyy: str, iii: str) -> str:
    """Norwegian fødselsnummer: two mod-11 control digits."""
    d = [int(c) for c in ddmmyy + iii]
    k1 = 11 - sum(a * b for a, b in zip(d, [3, 7, 6, 1, 8, 9, 4, 5, 2], strict=True)) % 11
    k1 = 0 if k1 == 11 else k1
    assert k1 != 10, (ddmmyy, iii)
    d.append(k1)
    k2 = 11 - sum(a * b for a, b in zip(d, [5, 4, 3, 2, 7, 6, 5, 4, 3, 2], strict=True)) % 11
    k2 = 0 if k2 == 11 else k2
    assert k2 != 10, (ddmmyy, iii)
    return f"{ddmmyy}{iii}{k1}{k2}"


def nie(letter: str, d7: str) -> str:
    """Spanish NIE: X/Y/Z read as 0/1/2, letter of n mod 23."""
    return f"{letter}{d7}" + "TRWAGMYFPDXBNJZSQVHLCKE"[int(str("XYZ".index(letter)) + d7) % 23]


_CF_ODD = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23], strict=True))


def codice_fiscale(first15: str) -> str:
    """Italian codice fiscale: the check letter from the odd/even tables."""
    s = sum(_CF_ODD[ch] if i % 2 == 0 else (int(ch) if ch.isdigit() else ord(ch) - 65) for i, ch in enumerate(first15))
    return first15 + chr(65 + s % 26)


_VD = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6], [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1], [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
_VP = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2], [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1], [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]


def aadhaar(d11: str) -> str:
    """Indian Aadhaar: eleven digits and their Verhoeff check digit."""
    c = 0
    for i, ch in enumerate(reversed(d11)):
        c = _VD[c][_VP[(i + 1) % 8][int(ch)]]
    return d11 + str([0, 4, 3, 2, 1, 5, 6, 7, 8, 9][c])


def tckn(d9: str) -> str:
    """Turkish T.C. kimlik no: the 10th and 11th digits from the first nine."""
    d = [int(c) for c in d9]
    d10 = ((d[0] + d[2] + d[4] + d[6] + d[8]) * 7 - (d[1] + d[3] + d[5] + d[7])) % 10
    return d9 + f"{d10}{(sum(d) + d10) % 10}"


def bsn(d8: str) -> str:
    """Dutch BSN: the eleven-test."""
    c = sum(int(ch) * w for ch, w in zip(d8, range(9, 1, -1), strict=True)) % 11
    assert c != 10, d8
    return d8 + str(c)


# ------------------------------------------------------------------ English
def t_h4_en_mountain_rescue(t: Trace) -> None:
    """en: mountain rescue dispatch; radio log, casualty named in prose only, caller on a +44 (0) number, summit coordinates."""
    t.slice = "rescue-dispatch"
    t.service = "cairn-dispatch"
    log = (
        f"14:02 999 transfer. Walker reports companion fallen approx 40m below {t.d('Sgurr Alasdair')} SW ridge.\n"
        f"14:03 Caller is {t.p('NAME', 'Oisín Fearghail')}, callback {t.p('PHONE', '+44 (0)7723 418960')}.\n"
        f"14:05 Casualty: {t.p('NAME', 'Ruaridh Strachan')}, aged 58, {t.p('DOB', 'b. 1968')}, conscious, suspected lower leg fracture.\n"
        f"14:07 Last fix {t.d('57.2063, -6.2244')} (summit), party now at {t.d('NG 450 207')}.\n"
        f"14:09 {t.d('Rescue 948')} tasked from Stornoway; team paged via {t.d('SARCALL')} incident {t.d('MR-26-0417')}.\n"
    )
    t.user("Summarise the radio log for the team leader and open the incident.", system="You are the dispatch assistant of a volunteer mountain rescue team. Never delay a callout.")
    t.tool("radio_log.read", {"channel": "ch2", "from": t.d("2026-03-14T14:00:00Z")}, log, style="oi")
    t.tool("dispatch.create_incident", {"ref": "MR-26-0417", "grid": "NG 450 207", "severity": "P2", "aircraft": "Rescue 948"}, {"ok": True, "eta_min": 35})
    t.reply("Incident MR-26-0417 open. Casualty Mr Strachan (58) below Sgurr Alasdair SW ridge at NG 450 207, conscious, probable leg fracture; Rescue 948 ETA 35 min. Caller Oisín stays on +44 (0)7723 418960.")


def t_h4_en_translation_roster(t: Trace) -> None:
    """en: translation agency; a translator roster CSV inside a JSON string, names from Vietnam, Nigeria, Greece, Hungary."""
    t.slice = "translation-ops"
    t.service = "polyglot-desk"
    csv = (
        "name,pair,rate_eur_word,phone\n"
        f"{t.p('NAME', 'Nguyen Thi Bich Ngoc')},EN>VI,{t.d('0.11')},{t.p('PHONE', '+84 90 318 2274')}\n"
        f"{t.p('NAME', 'Chukwuemeka Okonkwo-Adeyemi')},EN>IG,0.14,{t.p('PHONE', '+234 803 412 7765')}\n"
        f"{t.p('NAME', 'Theodoros Papadimitriou')},DE>EL,0.12,{t.p('PHONE', '+30 210 723 4418')}\n"
        f"\"Halmosi, Boglárka\",EN>HU,0.13,{t.p('PHONE', '+36 (1) 487 5520')}\n"
    )
    t.p("NAME", "Halmosi, Boglárka", ["Halmosi, Boglárka", "Halmosi", "Boglárka"])
    t.user("Who can take a 6,000-word EN>VI medical leaflet by Friday? Job " + t.d("PJ-2026-1187") + ".")
    t.tool("roster.export", {"format": "csv", "active": True}, json.dumps({"rows": 4, "csv": csv, "generated": t.d("2026-02-09T07:41:18Z")}))
    t.tool("capacity.check", {"pair": "EN>VI", "words": 6000, "due": t.d("2026-02-13")}, {"available": ["t-0451"], "words_per_day": t.d("2,500")})
    t.reply("Ms Nguyen (EN>VI, 0.11 EUR/word) has capacity for PJ-2026-1187: 6,000 words at 2,500/day lands Thursday. Want me to send her the brief?")


def t_h4_en_genealogy(t: Trace) -> None:
    """en: genealogy service; a family narrative with living relatives, birth years and a census record as decoys."""
    t.slice = "family-history"
    t.service = "rootline-research"
    t.user(
        "Please add my mother to the tree: she is "
        + t.p("NAME", "Eleni Karamanli")
        + ", born on the "
        + t.p("DOB", "nineteenth of August nineteen fifty-two")
        + " in Piraeus, and her father was the grocer Vasilakis who sailed on the "
        + t.d("SS Patris")
        + " in "
        + t.d("1911")
        + ". You can write to me at "
        + t.p("EMAIL", "k.mavrogordatos@stoaweb.gr")
        + ". Thanks, "
        + t.p("NAME", "Kyriakos Mavrogordatos")
    )
    t.p("NAME", "Vasilakis")
    t.tool(
        "records.search",
        {"collection": t.d("1940 Census"), "surname": "Vasilakis", "arrival_port": t.d("Ellis Island")},
        {"hits": [{"film": t.d("FHL 1843392"), "line": 17, "year": "1911", "ship": "SS Patris"}], "total": 1},
    )
    t.tool("tree.add_person", {"tree": t.d("TR-88213"), "given": "Eleni", "surname": "Karamanli", "relation": "mother"}, {"person_id": t.d("P-000731")})
    t.reply("Added your mother Eleni to tree TR-88213 (P-000731). The Ellis Island manifest on FHL 1843392 line 17 shows a Vasilakis arriving on the SS Patris in 1911, which fits the grocer.")


def t_h4_en_yacht_crew(t: Trace) -> None:
    """en: yacht charter; crew list as a markdown table with dates of birth and passports, MMSI and call sign as decoys."""
    t.slice = "charter-ops"
    t.service = "bluewater-charters"
    table = (
        "| role | name | born | id | mobile |\n|---|---|---|---|---|\n"
        f"| skipper | {t.p('NAME', 'Halvard Tveitnes')} | {t.p('DOB', '1974-10-02')} | fnr {t.p('NATIONAL_ID', fnr('021074', '483'))} | {t.p('PHONE', '+47 915 20 384')} |\n"
        f"| crew | {t.p('NAME', 'Signe Kjærgaard')} | {t.p('DOB', '03/05/1991')} | CPR {t.p('NATIONAL_ID', cpr('030591', '174'))} | {t.p('PHONE', '+45 21 64 83 07')} |\n"
    )
    t.user("Send the crew list to the marina office before check-in.")
    t.tool("crew.list", {"booking": t.d("BWC-26-0614"), "yacht": t.d("Lagoon 46")}, table, style="oi")
    t.tool(
        "marina.submit_crew_list",
        {"marina": t.d("Marina Kaštela"), "mmsi": t.d("237004310"), "call_sign": t.d("SV4021"), "arrival": t.d("2026-06-13 16:00"), "crew": 2},
        {"accepted": True, "berth": t.d("Pier C, 41")},
    )
    t.reply("Crew list for BWC-26-0614 (Lagoon 46, MMSI 237004310) accepted by Marina Kaštela; berth Pier C, 41 from 13 June 16:00. Skipper Tveitnes confirmed.")


def t_h4_en_pharmacy(t: Trace) -> None:
    """en: hospital pharmacy; dispensing log with an UPPERCASE SURNAME, Firstname patient, a short-year DOB, NDC and lot numbers as decoys."""
    t.slice = "pharmacy"
    t.service = "ward-dispensary"
    t.user("Anything unusual on last night's dispensing log for ward 7B?", system="You assist the hospital pharmacy. Pharmacist on duty: " + t.p("NAME", "Adaeze Nnamdi-Okoro") + ".")
    log = (
        f"02:14 DISPENSE {t.d('Amoxicillin 500 mg caps')} x21 NDC {t.d('0093-4155-73')} lot {t.d('4K82B1')} pt {t.p('NAME', 'OKAFOR, CHIDINMA', ['OKAFOR, CHIDINMA', 'OKAFOR', 'CHIDINMA'])} DOB {t.p('DOB', '14 Feb 88')}\n"
        f"02:31 DISPENSE {t.d('Enoxaparin 40 mg/0.4 mL')} x1 pt WOZNIAK-HALE, T. (transfer) \n"
        f"03:05 OVERRIDE by nurse {t.p('NAME', 'mcallister-byrne', ['mcallister-byrne', 'mcallister', 'byrne'])} reason='stat order'\n"
    )
    t.p("NAME", "WOZNIAK-HALE, T.", ["WOZNIAK-HALE", "WOZNIAK", "HALE"])
    t.tool("dispensing_log.fetch", {"ward": t.d("7B"), "night_of": t.d("2026-01-22")}, log, style="spanname")
    t.tool("formulary.lookup", {"q": "amoxicillin"}, {"formula": t.d("C16H19N3O5S"), "atc": t.d("J01CA04"), "cas": t.d("26787-78-0")})
    t.reply("One override at 03:05 (stat order) worth a look; otherwise the amoxicillin (NDC 0093-4155-73, lot 4K82B1) and enoxaparin doses match orders.")


def t_h4_en_wedding(t: Trace) -> None:
    """en: wedding planner; an email thread with signatures, couple names that are common words, a deposit by card."""
    t.slice = "weddings"
    t.service = "bramble-weddings"
    mail = (
        "From: " + t.p("EMAIL", "rose.baker.weds@mailbox.org") + "\n"
        "Subject: Re: September 12 timings\n\n"
        "Hi Bramble team,\n\nHunter and I are happy with the 3pm ceremony at " + t.d("Hawthorn Hall") + ". "
        "His mum would like the " + t.d("Pinot Grigio 2022") + " rather than the prosecco. "
        "Can you call me on " + t.p("PHONE", "07700 900 655") + " after 5?\n\n"
        "Warmly,\n" + t.p("NAME", "Rose Baker") + "\n"
        "(and " + t.p("NAME", "Hunter Mills") + ")\n"
    )
    t.user("Update the run sheet from Rose's email and take the second deposit.")
    t.tool("mail.get_thread", {"thread": t.d("thr_8c1e77a0")}, mail, style="oi")
    card = t.p("CARD", luhn("5413 7290 1854 338"))
    t.tool("payments.charge", {"amount": t.d("£1,450.00"), "card": card, "cvc": "319", "memo": "deposit 2 of 3"}, {"status": "succeeded", "id": t.d("ch_3PqL8x2eZvKYlo2C1a9F")})
    t.tool("runsheet.update", {"event": t.d("WED-2026-0912"), "ceremony": "15:00", "wine": "Pinot Grigio 2022", "caterer": t.d("Bramble & Vine Catering Ltd")}, {"version": 7})
    t.reply("Run sheet WED-2026-0912 updated (ceremony 15:00 at Hawthorn Hall, Pinot Grigio 2022), and the £1,450.00 deposit went through. I'll remind you to call Rose after 5.")


def t_h4_en_tax_adviser(t: Trace) -> None:
    """en: tax adviser; UK client with a NINO and an Indian spouse with an Aadhaar number, names surname-only after titles."""
    t.slice = "tax-returns"
    t.service = "ledgerline-tax"
    t.user(
        "Prepare the SA100 notes. Client Mr Venkataraman, NI number "
        + t.p("NATIONAL_ID", "PW 48 21 73 B")
        + "; his wife "
        + t.p("NAME", "Priyanka Deshpande")
        + " still has Indian rental income, Aadhaar "
        + t.p("NATIONAL_ID", aadhaar("48271936052"))
        + ". Their UTR is on file."
    )
    t.p("NAME", "Venkataraman")
    t.tool(
        "hmrc.fetch_statement",
        {"nino": "PW482173B", "tax_year": t.d("2025-26")},
        {"balancing_payment": t.d("£2,318.40"), "poa": t.d("£1,159.20"), "due": t.d("31 January 2027")},
    )
    t.p("NATIONAL_ID", "PW482173B")
    t.tool("dtaa.lookup", {"countries": ["GB", "IN"], "article": t.d("Article 6")}, {"credit_method": True, "form": t.d("Form 67")})
    t.reply("Notes drafted: balancing payment £2,318.40 and payments on account of £1,159.20 due 31 January 2027. Mrs Deshpande's Indian rent goes under Article 6 with credit relief; she'll need Form 67 in India.")


def t_h4_en_insurance(t: Trace) -> None:
    """en: insurance adjuster; claim notes with SSN, DOB in ISO, an extension phone, a hail date and policy numbers as decoys."""
    t.slice = "claims"
    t.service = "adjuster-copilot"
    notes = {
        "claim": t.d("CLM-2026-0048813"),
        "policy": t.d("HO3-771-20418"),
        "loss": {"type": "hail", "date": t.d("2026-05-17"), "vehicle": t.d("2019 Subaru Outback")},
        "insured": {
            "narrative": f"Spoke with the insured, {t.p('NAME', 'Dolores Whitfield-Amankwah')} (DOB {t.p('DOB', '1979-11-23')}), who says her neighbor Mr {t.p('NAME', 'Kowalewski')} saw the hail.",
            "contact": t.p("PHONE", "(503) 284-7716 x204"),
            "ssn": t.p("SSN", "521-37-8846"),
            "address": t.p("ADDRESS", "2281 NE Alberta Street, Portland, OR 97211"),
        },
    }
    t.user("Write up the first-contact summary for CLM-2026-0048813.")
    t.tool("claims.get", {"id": "CLM-2026-0048813"}, notes)
    t.tool("weather.verify", {"zip": "97211", "date": "2026-05-17"}, {"hail_in": t.d("1.75"), "source": t.d("NOAA SPC")})
    t.reply("Summary: hail on 2026-05-17 confirmed by NOAA SPC (1.75 in stones at 97211). Insured's 2019 Subaru Outback damaged; neighbour witness available. Policy HO3-771-20418 active.")


def t_h4_en_recycling(t: Trace) -> None:
    """en: recycling depot; weighbridge CSV log with a driver in lowercase and EWC codes and tonnages as decoys."""
    t.slice = "weighbridge"
    t.service = "depot-scale"
    csv = (
        "ticket,time,haulier,driver,ewc,net_t\n"
        f"{t.d('WB-551903')},06:48,{t.d('Greyfriars Skips')},{t.p('NAME', 'kwame asante-boateng', ['kwame asante-boateng', 'kwame', 'asante', 'boateng'])},{t.d('17 04 05')},{t.d('12.480')}\n"
        f"WB-551904,07:02,walk-in,{t.p('NAME', 'fatima zahra benali', ['fatima zahra benali', 'fatima', 'zahra', 'benali'])},{t.d('20 01 36')},0.215\n"
    )
    t.user("Reconcile this morning's tickets against the permit limits.")
    t.tool("weighbridge.export", {"date": t.d("2026-04-03")}, json.dumps({"csv": csv}))
    t.tool("permit.limits", {"permit": t.d("EPR/AB3456CD")}, {"17 04 05": {"daily_t": 150}, "20 01 36": {"daily_t": 5}})
    t.reply("Both tickets (WB-551903 scrap metal 17 04 05, 12.480 t; WB-551904 WEEE 20 01 36) are within permit EPR/AB3456CD limits.")


def t_h4_en_dog_grooming(t: Trace) -> None:
    """en: dog grooming salon; booking chat, a dotted US phone, dog names and a breed with a person's name as decoys."""
    t.slice = "grooming"
    t.service = "sudsy-paws"
    chat = (
        "[salon] Hi! Who's coming in?\n"
        f"[client] hiya it's {t.p('NAME', 'Faith Church')}, bringing {t.d('Biscuit')} the {t.d('Cavalier King Charles')} and {t.d('Duke')}\n"
        f"[client] my number changed, it's {t.p('PHONE', '617.482.3391')}\n"
        f"[client] and my partner {t.p('NAME', 'Grady Okwuosa')} will pick up\n"
    )
    t.user("Book the two dogs for Saturday and note the pickup person.")
    t.tool("chat.transcript", {"conversation": t.d("cv_01HX9Z4T7Q")}, chat, style="spanname")
    t.tool("bookings.create", {"slot": t.d("2026-03-21T10:30"), "services": [t.d("Full Groom (Medium)"), t.d("Nail Trim")], "price": t.d("$115.00")}, {"booking": t.d("SP-7731")})
    t.reply("Booked SP-7731 for Saturday 10:30: Biscuit (Cavalier King Charles) full groom and Duke nail trim, $115.00. Pickup: Grady.")


def t_h4_en_customs(t: Trace) -> None:
    """en: maritime customs broker; manifest with UPPERCASE SURNAME FIRSTNAME consignees, HS codes, container and IMO numbers as decoys."""
    t.slice = "customs"
    t.service = "harbourline-brokerage"
    manifest = {
        "vessel": t.d("MSC Gülsün"),
        "imo": t.d("IMO 9839430"),
        "bl": t.d("MEDUPL482917"),
        "lines": [
            {"container": t.d("MSCU 718204 3"), "hs": t.d("8471.30.01"), "consignee": t.p("NAME", "KOWALCZYK JADWIGA"), "goods": "laptops, personal effects"},
            {"container": "TGHU 552098 1", "hs": t.d("9401.61.00"), "consignee": t.p("NAME", "ÖZDEMİR KEREM", ["ÖZDEMİR KEREM", "ÖZDEMİR", "KEREM"]), "goods": "upholstered chairs"},
        ],
    }
    t.d("TGHU 552098 1")
    t.user("Which lines need a personal-effects declaration at " + t.d("Felixstowe") + "? Our clearance agent Mr " + t.p("NAME", "Al-Khatib") + " is asking.")
    t.tool("manifest.get", {"voyage": t.d("FX614W")}, json.dumps({"manifest": json.dumps(manifest, ensure_ascii=False)}, ensure_ascii=False))
    t.reply("Line 1 (MSCU 718204 3, HS 8471.30.01) is mixed personal effects and needs the declaration; line 2 (9401.61.00 chairs) is commercial. Voyage FX614W, MSC Gülsün.")


def t_h4_en_esports(t: Trace) -> None:
    """en: esports team; player contracts via a chat-ops bot, pinyin and Korean names, a Riot key, a Discord bot token, match ids as decoys."""
    t.slice = "team-ops"
    t.service = "nightjar-esports"
    t.user(
        "Bot is failing to pull scrims. Config: riot key "
        + t.p("SECRET", "RGAPI-7c1e4b2a-93d5-4f0e-b8a6-51d2e9c3f407")
        + ", discord token "
        + t.p("SECRET", "MTE4NzQ2MzkyODUwNDg3NzA1Ng.GkX2pQ.v9Lr4TzN8cYb1WmFq0sHdJ6eUaK3yP7iRgOt5E")
        + ". Also update contracts for Liu Wenjie and Park Ji-hoon."
    )
    t.p("NAME", "Liu Wenjie")
    t.p("NAME", "Park Ji-hoon", ["Park Ji-hoon", "Park", "Ji-hoon", "hoon"])
    t.tool("riot.match_history", {"puuid": t.d("b3f1c9e2-0d4a-4c7b-9e55-2a81f60d7c19"), "count": 5}, {"matches": [t.d("EUW1_7288190451"), "EUW1_7288172206"], "patch": t.d("14.22")})
    t.d("EUW1_7288172206")
    t.tool(
        "contracts.update",
        {"players": [{"legal_name": "Liu Wenjie", "tag": "Wenj1e", "email": t.p("EMAIL", "wenjie.liu.gg@163.com")}, {"legal_name": "Park Ji-hoon", "tag": "Jihoonie"}], "season": t.d("Blast Premier Fall 2026")},
        {"updated": 2},
    )
    t.reply("Contracts updated for both players for Blast Premier Fall 2026. The Riot key works (pulled EUW1_7288190451 on patch 14.22); the Discord token should be rotated since it was pasted in chat.")


def t_h4_en_kindergarten(t: Trace) -> None:
    """en: kindergarten; a parent's email with a child's birthday in a US date, a greeting-only name, and room names as decoys."""
    t.slice = "nursery-office"
    t.service = "little-otters"
    mail = (
        "Hi " + t.p("NAME", "Siobhán") + ",\n\n"
        "Just confirming our daughter " + t.p("NAME", "Marisol Achterberg-Ruiz") + " starts in " + t.d("Room 3 (Otters)") + " on Monday. "
        "Her date of birth on the form should be " + t.p("DOB", "March 3rd, 2021") + ", not the 13th. "
        "She's allergic to sesame.\n\nBest,\n" + t.p("NAME", "Tobias Achterberg") + "\n" + t.p("PHONE", "+1 (646) 738-2190") + "\n"
    )
    t.user("Fix the enrolment record from this email.")
    t.tool("inbox.read", {"id": t.d("msg-20260302-0419")}, mail, style="oi")
    t.tool("enrolment.update", {"record": t.d("ENR-2026-033"), "allergies": ["sesame"], "fee": t.d("$1,240.00"), "term": t.d("Spring 2026")}, {"ok": True})
    t.reply("Enrolment ENR-2026-033 corrected (birth date and sesame allergy); Room 3 (Otters) from Monday, Spring 2026 fee $1,240.00 unchanged.")


def t_h4_en_dental_lab(t: Trace) -> None:
    """en: dental lab; a nested JSON work order with the dentist's surname after Dr and the patient's initials, tooth numbers and materials as decoys."""
    t.slice = "lab-orders"
    t.service = "crownworks-lab"
    order = {
        "order": {"id": t.d("DL-48817"), "due": t.d("2026-02-27"), "rush": False},
        "clinic": {"name": t.d("Harbourside Dental Group"), "dentist": "Dr " + t.p("NAME", "Oyelaran"), "portal_key": t.p("SECRET", "cwl_live_9Qm2VtX7LpR4eN8sKd1ZyH6bJ3aF0wUc")},
        "case": {"teeth": ["36", "37"], "shade": t.d("A3.5"), "material": t.d("IPS e.max CAD"), "patient_ref": "see chart"},
    }
    t.user("Is the bridge for order DL-48817 feasible in e.max?")
    t.tool("orders.get", {"id": "DL-48817"}, order)
    t.reply("DL-48817: a 36-37 span in IPS e.max CAD at A3.5 is fine for a two-unit bridge; due 2026-02-27 holds. I'll confirm with Dr Oyelaran's office.")


def t_h4_en_used_cars(t: Trace) -> None:
    """en: used-car dealer; finance application with SSN, a US-format DOB, address, card, and stock number, price, mileage as decoys."""
    t.slice = "finance-desk"
    t.service = "lot-42-motors"
    app = (
        f"APPLICANT: {t.p('NAME', 'Marcus Delacroix-Oyelowo')}\n"
        f"SSN: {t.p('SSN', '347-82-1956')}   D.O.B.: {t.p('DOB', '12/25/1990')}\n"
        f"ADDR: {t.p('ADDRESS', '4417 Bluebonnet Trail, Round Rock, TX 78664')}\n"
        f"VEHICLE: {t.d('2018 Toyota RAV4 XLE')} {t.d('STK#48213')} {t.d('48,211 mi')} price {t.d('$21,995')}\n"
    )
    t.user("Run the soft pull and tell me what APR tier he lands in.")
    t.tool("docs.ocr", {"file": t.d("credit_app_0412.pdf")}, app, style="spanname")
    t.tool("credit.soft_pull", {"ssn": "347-82-1956", "zip": "78664"}, {"tier": t.d("Tier 2"), "apr": t.d("7.49%")})
    t.tool("payments.hold", {"card": t.p("CARD", luhn("3759 184027 3316")), "amount": t.d("$500.00")}, {"held": True})
    t.reply("Soft pull done: Tier 2 at 7.49% APR on the 2018 Toyota RAV4 XLE (STK#48213, $21,995). $500.00 holding deposit placed.")


def t_h4_en_build_agent(t: Trace) -> None:
    """en: build agents; a .netrc, a kubeconfig with a bearer token and client key, a PEM block, image digests and chart versions as decoys."""
    t.slice = "ci-runners"
    t.service = "runner-doctor"
    t.root["deployment.environment"] = "staging-eu"
    netrc = f"machine artifacts.corvid-build.io\n  login ci-bot\n  password {t.p('SECRET', 'Nq7#vT2pLx9!wR4e')}\n"
    kube = (
        "apiVersion: v1\nkind: Config\nusers:\n- name: deployer\n  user:\n"
        f"    token: {t.p('SECRET', 'kube-sa-6f2d9b7e41c84a0f9e3b5d17c2a8f06e')}\n"
        "clusters:\n- cluster:\n    server: https://k8s.staging.corvid-build.io:6443\n  name: staging\n"
    )
    pem = t.p(
        "SECRET",
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIGq3ZrT9vN2wLk8xYc4pB7dF1sH6mJ0aQeR5uK2iO9WvoAoGCCqGSM49\nAwEHoUQDQgAE4tLz8Vb2nQ7cX1kP9rJ6sW3yD0mF5hG8aE2uT4iO7lN1vB9xC3zK\n6pR8qY2wT5eU1oI4aS7dF0gH3jK9lZ2xC6vB8nM==\n-----END EC PRIVATE KEY-----",
    )
    t.user("Runner 7 can't pull from the artifact store or deploy. Here's what's on disk, find the problem.")
    t.tool("fs.read", {"path": "/home/ci/.netrc"}, netrc, style="oi")
    t.tool("fs.read", {"path": "/home/ci/.kube/config"}, kube, style="oi")
    t.tool("fs.read", {"path": "/etc/ci/deploy-signing.pem"}, pem, style="oi")
    t.tool(
        "registry.inspect",
        {"image": "corvid/api", "tag": t.d("v4.11.2")},
        {"digest": t.d("sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"), "chart": t.d("api-4.11.2"), "build": t.d("20260211.7"), "run": t.d("5c0a9e7e-1f3b-4d62-a8d4-0e7f3b9c2a61")},
    )
    t.reply("The image v4.11.2 is present (sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, build 20260211.7). The .netrc host is right but the kube token has expired; rotate the deployer service-account token and the signing key, both were exposed in this session.")


def t_h4_en_llm_gateway(t: Trace) -> None:
    """en: LLM gateway; raw HTTP request headers with provider keys, a cookie, forwarded IPs (v4 and v6), model names with dates as decoys."""
    t.slice = "gateway"
    t.service = "tollgate-llm"
    req = (
        "POST /v1/messages HTTP/1.1\r\n"
        "Host: gw.tollgate.dev\r\n"
        f"x-api-key: {t.p('SECRET', 'sk-ant-api03-Hq8vT2nLx7pR4wK9sZ1cY6mB3dF0gJ5aE8uN2iO7lQ4tV9xW1zC6kP3rS8yU5hM0bG2fD7jL4n-Xe9QwAA')}\r\n"
        f"X-Forwarded-For: {t.p('IP', '81.17.204.33')}, {t.p('IP', '2a02:8108:1c3f:4e00::1b7')}\r\n"
        f"Cookie: tg_session={t.p('SECRET', 'a5c9e1f7b3d84062e9f1a7c3b5d0e8f2')}; theme=dark\r\n"
        f"X-Request-Id: {t.d('req_01JBX3K7M2Q9W4E8R5T6Y1U0')}\r\n\r\n"
        '{"model":"claude-3-5-sonnet-20241022","max_tokens":1024}'
    )
    t.d("claude-3-5-sonnet-20241022")
    t.user("Why did this request get a 401 upstream?")
    t.tool("gateway.replay_request", {"id": "req_01JBX3K7M2Q9W4E8R5T6Y1U0"}, req, style="spanname")
    t.tool(
        "gateway.upstream_log",
        {"id": "req_01JBX3K7M2Q9W4E8R5T6Y1U0"},
        {"status": 401, "fallback": t.d("gpt-4o-2024-08-06"), "fallback_key": t.p("SECRET", "sk-proj-T3xQ9mB7vL2pK8wN4rZ6cY1dF5hJ0sG3aE9uI2oR7tW4yX8bV6nM1kP5qL3zC7jD0fH9gS2eA4uT8iO6lN1w"), "latency_ms": 412},
    )
    t.reply("The upstream rejected the key (401) and the fallback to gpt-4o-2024-08-06 also failed after 412 ms. Both keys were visible in the replay; rotate them.")


def t_h4_en_chatops(t: Trace) -> None:
    """en: chat-ops transcript in a JSON string; handles, greetings with first names, a Slack webhook and a SendGrid key pasted in chat."""
    t.slice = "chat-ops"
    t.service = "opsbot"
    transcript = [
        {"user": "@d.nwosu", "text": "deploying the mailer now"},
        {"user": "@mei.zhang", "text": "thanks Dumebi! webhook is https://hooks.slack.com/services/T04QX7B2M/B07LZ9K3R/" + t.p("SECRET", "pQ8vN2xK7rT4wL9mZ3cY6bF1") + " btw"},
        {"user": "@d.nwosu", "text": "and the sendgrid key? " + t.p("SECRET", "SG.k7Rt2Vq9XpL4nW8s.Zc3Ym6Bf1Dh5Jg0Ka9Ue2Io7Pl4Qt8Ws1Ex6Rv3Ny5M") + " right?"},
        {"user": "@mei.zhang", "text": "yep. ping Ngozi Eze if the DKIM check fails, she's on call"},
    ]
    t.p("NAME", "d.nwosu", ["d.nwosu", "nwosu"])
    t.p("NAME", "mei.zhang", ["mei.zhang", "zhang"])
    t.p("NAME", "Dumebi")
    t.p("NAME", "Ngozi Eze")
    t.user("Summarise what happened in #deploys this morning.")
    t.tool("slack.history", {"channel": t.d("C05DEPLOYS"), "oldest": t.d("1772172000.000100")}, json.dumps({"messages": json.dumps(transcript)}))
    t.tool("deploys.status", {"service": "mailer"}, {"version": t.d("mailer@2.8.0"), "commit": t.d("e3b0c44298fc1c149afbf4c8996fb92427ae41e4"), "dkim": "pass"})
    t.reply("mailer@2.8.0 (e3b0c44298fc1c149afbf4c8996fb92427ae41e4) deployed, DKIM passes. A webhook and a SendGrid key were pasted in the channel: rotate both.")


def t_h4_en_system_prompt(t: Trace) -> None:
    """en: insurance call centre; the operator's name and direct line in the system prompt and a slice attribute carrying a name."""
    t.slice = "escalations-" + t.p("NAME", "olumide-balogun", ["olumide-balogun", "olumide", "balogun"])
    t.service = "claimline-voice"
    t.root["flywheel.environment"] = "prod"
    t.user(
        "Caller asks whether windscreen claims affect the no-claims bonus.",
        system=(
            "You are the assistant of claims handler " + t.p("NAME", "Olumide Balogun") + " (direct line "
            + t.p("PHONE", "+44 161 496 0734") + "). Do not give legal advice. Product: " + t.d("Comprehensive Plus 2026") + "."
        ),
    )
    t.tool("kb.search", {"q": "windscreen claim no claims bonus", "product": "Comprehensive Plus 2026"}, {"article": t.d("KB-0912"), "excess": t.d("£95")})
    t.reply("Under Comprehensive Plus 2026 a windscreen claim does not affect the no-claims bonus; the £95 excess applies (KB-0912).")


def t_h4_en_animal_shelter_hu(t: Trace) -> None:
    """en: animal shelter; a Hungarian adopter named surname-first, a Hungarian-format birth date quoted from a form, a microchip number as a decoy."""
    t.slice = "adoptions"
    t.service = "second-chance-shelter"
    form = (
        "Örökbefogadó: " + t.p("NAME", "Nagy Zsófia Réka", ["Nagy Zsófia Réka", "Nagy", "Zsófia", "Réka"]) + "\n"
        "Született: " + t.p("DOB", "1972. március 8.") + "\n"
        "Lakcím: " + t.p("ADDRESS", "Budapest, Rózsahegy utca 14. II/5, 1024", ["Budapest, Rózsahegy utca 14. II/5, 1024", "Rózsahegy utca 14. II/5", "Rózsahegy utca 14"]) + "\n"
        "E-mail: " + t.p("EMAIL", "zsofi.nagy72@freemail.hu") + "\n"
    )
    t.user("Translate the adoption form and check the dog is reserved.")
    t.tool("forms.get", {"id": t.d("ADP-2026-0158")}, form, style="oi")
    t.tool("animals.get", {"chip": t.d("900164001827316")}, {"name": t.d("Mogyoró"), "breed": t.d("Hungarian Vizsla"), "status": "reserved"})
    t.reply("Form ADP-2026-0158 translated: the adopter lives in Budapest and was born in 1972. Mogyoró (Hungarian Vizsla, chip 900164001827316) is reserved for her.")


# ------------------------------------------------------------------ German
def t_h4_de_bergwacht(t: Trace) -> None:
    """de: Bergwacht-Einsatz; YAML-Protokoll, Nachname nach Herr und Bergführer, österreichische Handynummer, Gipfelkoordinaten als Köder."""
    t.slice = "bergwacht"
    t.service = "alpin-leitstelle"
    yaml = (
        f"einsatz: {t.d('BW-2026-0233')}\n"
        f"ort: {t.d('Großglockner')} Normalweg, oberhalb {t.d('Erzherzog-Johann-Hütte')}\n"
        f"koordinaten: {t.d('47.0742, 12.6947')}\n"
        "verletzter:\n"
        f"  name: Herr {t.p('NAME', 'Obermoser')}\n"
        f"  geburtsdatum: {t.p('DOB', '11.11.1967')}\n"
        f"  handy: {t.p('PHONE', '+43 664 218 3390')}\n"
        f"begleiter: Bergführer {t.p('NAME', 'Zangerl')}\n"
        f"hubschrauber: {t.d('Christophorus 7')}\n"
    )
    t.user("Bitte die Einsatzmeldung für die Leitstelle zusammenfassen.", system="Du unterstützt die Einsatzleitung der Bergwacht. Antworte knapp.")
    t.tool("einsatz.protokoll", {"id": "BW-2026-0233"}, yaml, style="oi")
    t.reply("Einsatz BW-2026-0233: ein Verletzter am Großglockner-Normalweg oberhalb der Erzherzog-Johann-Hütte (47.0742, 12.6947), Bergführer vor Ort, Christophorus 7 angefordert.")


def t_h4_de_recycling(t: Trace) -> None:
    """de: Wertstoffhof; Anlieferung mit Doppelname nach Frau Dr., Telefon mit Schrägstrich, Abfallschlüssel und Kundennummer als Köder."""
    t.slice = "wertstoffhof"
    t.service = "kreislauf-annahme"
    t.user(
        "Frau Dr. "
        + t.p("NAME", "Hübner-Lenz")
        + " hat Sperrmüll angemeldet, Abholung an "
        + t.p("ADDRESS", "Schönhauser Allee 118, 10437 Berlin")
        + ", Rückruf unter "
        + t.p("PHONE", "030 / 2084 7713")
        + ". Passt der Termin?"
    )
    t.tool(
        "abholung.termin",
        {"plz": "10437", "art": "Sperrmüll", "abfallschluessel": t.d("20 03 07"), "vorgang": t.d("VG-0048821")},
        {"termin": t.d("Dienstag, 17. März 2026"), "gebuehr": t.d("35,00 €"), "fahrzeug": t.d("MAN TGS 26.400")},
    )
    t.reply("Ja: Abholung am Dienstag, 17. März 2026, Gebühr 35,00 €. Ich rufe Frau Dr. Hübner-Lenz zurück.")


def t_h4_de_dental_lab(t: Trace) -> None:
    """de: Dentallabor; Auftragszettel als Fließtext, Zahnarzt nach Dr. med. dent., Patientin mit Geburtsdatum in Worten, Material und Chargen als Köder."""
    t.slice = "labor"
    t.service = "zahnwerk-labor"
    t.user(
        "Neuer Auftrag von Dr. med. dent. "
        + t.p("NAME", "Ćosić")
        + ": Vollkeramikkrone "
        + t.d("Zahn 36")
        + " für Patientin "
        + t.p("NAME", "Liselotte Brandstätter")
        + ", geboren am "
        + t.p("DOB", "2. Januar 1948")
        + ", Farbe "
        + t.d("A2")
        + ", Material "
        + t.d("Zirkonoxid 5Y-TZP")
        + ". Lieferung bis Freitag?"
    )
    t.tool("lager.charge", {"material": "Zirkonoxid 5Y-TZP"}, {"charge": t.d("LOT 2026-11-0447"), "bestand": t.d("14 Ronden"), "ce": t.d("CE 0123")})
    t.tool("auftrag.anlegen", {"zahn": 36, "farbe": "A2", "liefertermin": t.d("2026-03-06")}, {"auftrag": t.d("ZW-10572")})
    t.reply("Auftrag ZW-10572 angelegt: Krone Zahn 36, A2, Zirkonoxid 5Y-TZP (LOT 2026-11-0447), Lieferung 2026-03-06.")


def t_h4_de_tax(t: Trace) -> None:
    """de: Steuerberatung; Mandantin mit IBAN, ELSTER-Passwort in Prosa, Aktenzeichen und Paragraphen als Köder."""
    t.slice = "steuer"
    t.service = "kanzlei-assist"
    t.user(
        "Mandantin "
        + t.p("NAME", "Henrike Düsterhöft")
        + " (geb. "
        + t.p("DOB", "23.04.1959")
        + ") will die Erstattung auf "
        + t.p("IBAN", iban("DE", "430609671187204400", spaced=True))
        + ". Das Passwort für ihr ELSTER-Zertifikat lautet "
        + t.p("SECRET", "Kranich!Moor2026")
        + ", bitte nur für die Übermittlung nutzen."
    )
    t.tool("elster.submit", {"formular": t.d("ESt 1 A"), "jahr": t.d("2025"), "paragraf": t.d("§ 35a EStG")}, {"transfer_ticket": t.d("et4k2m9q7x"), "status": "übermittelt"})
    t.tool("fristen.check", {"az": t.d("2 K 1187/25")}, {"frist": t.d("31.07.2026")})
    t.reply("ESt 1 A 2025 übermittelt (Transferticket et4k2m9q7x), Handwerkerleistungen nach § 35a EStG berücksichtigt; Frist im Verfahren 2 K 1187/25 ist der 31.07.2026.")


# ------------------------------------------------------------------ Polish
def t_h4_pl_translation(t: Trace) -> None:
    """pl: biuro tłumaczeń; zlecenie tłumaczenia aktu urodzenia z PESEL, podpis w mailu, tłumacz po nazwisku."""
    t.slice = "tlumaczenia"
    t.service = "biuro-lingwa"
    mail = (
        "Dzień dobry,\nproszę o tłumaczenie przysięgłe aktu urodzenia na język niemiecki. "
        "Dane z aktu: " + t.p("NAME", "Kacper Żmuda-Trzebiatowski") + ", ur. " + t.p("DOB", "7 września 1963") + " w Gdyni, PESEL "
        + t.p("NATIONAL_ID", pesel("630907", "0471")) + ".\n"
        "Najlepiej, żeby tłumaczył pan " + t.p("NAME", "Szczepański") + ", jak ostatnio.\n\n"
        "Pozdrawiam serdecznie\n" + t.p("NAME", "Wiesława Kołodziejczyk") + "\ntel. " + t.p("PHONE", "+48 601 234 567") + "\n"
    )
    t.user("Przygotuj wycenę dla tego zlecenia.")
    t.tool("poczta.odczytaj", {"id": t.d("ZL/2026/0412")}, mail, style="oi")
    t.tool("cennik.wycen", {"jezyk": "DE", "strony": 2, "tryb": "przysięgłe"}, {"cena": t.d("146,40 zł"), "termin": t.d("3 dni robocze"), "stawka": t.d("61,00 zł/strona")})
    t.reply("Wycena zlecenia ZL/2026/0412: 2 strony przysięgłe DE po 61,00 zł/strona, razem 146,40 zł brutto, termin 3 dni robocze.")


def t_h4_pl_customs(t: Trace) -> None:
    """pl: agencja celna; odprawa przesyłki, adres z ul., konto PL, numer MRN i kody CN jako przynęty."""
    t.slice = "agencja-celna"
    t.service = "odprawa-gdansk"
    t.user(
        "Klient " + t.p("NAME", "Radosław Wiśniewski-Kaczmarek") + " prosi o odprawę paczki z USA. Adres doręczenia: "
        + t.p("ADDRESS", "ul. Mickiewicza 14/3, 80-433 Gdańsk")
        + ". Należności celne zapłaci przelewem z konta "
        + t.p("IBAN", iban("PL", "102055610000310201846372", spaced=True))
        + "."
    )
    t.tool("zgloszenie.utworz", {"kod_cn": t.d("0805 10 20"), "wartosc_usd": t.d("184.99"), "urzad": t.d("PL322010")}, {"mrn": t.d("26PL32201000041837R4"), "clo": t.d("0,00 zł"), "vat": t.d("98,40 zł")})
    t.reply("Zgłoszenie przyjęte, MRN 26PL32201000041837R4: cło 0,00 zł, VAT 98,40 zł (kod CN 0805 10 20, wartość 184.99 USD).")


def t_h4_pl_kindergarten(t: Trace) -> None:
    """pl: przedszkole; rozmowa z rodzicem, PESEL dziecka urodzonego po 2000, data urodzenia z kropkami, nazwisko po 'pani'."""
    t.slice = "przedszkole"
    t.service = "motylki-sekretariat"
    t.user(
        "Dzień dobry, tu " + t.p("NAME", "Bożena Chrzanowska-Lis") + ". Zapisuję córkę " + t.p("NAME", "Zuzanna") + ", urodzona "
        + t.p("DOB", "14.02.2021") + " r., PESEL " + t.p("NATIONAL_ID", pesel("212214", "0628"))
        + ". Proszę o kontakt na " + t.p("PHONE", "+48 22 628 41 90") + ". Odbierać będzie też pani " + t.p("NAME", "Gawęda") + "."
    )
    t.tool("zapisy.dodaj", {"grupa": t.d("Motylki"), "od": t.d("1 września 2026"), "czesne": t.d("890 zł")}, {"nr": t.d("PRZ/26/117")})
    t.reply("Zapis PRZ/26/117 do grupy Motylki od 1 września 2026, czesne 890 zł miesięcznie. Upoważnienie do odbioru dodane.")


# ------------------------------------------------------------------ Swedish
def t_h4_sv_genealogy(t: Trace) -> None:
    """sv: släktforskning; kundens personnummer och födelsedatum i löptext, arkivreferenser och församlingar som lockbeten."""
    t.slice = "slaktforskning"
    t.service = "anor-tjanst"
    t.user(
        "Hej! Jag heter " + t.p("NAME", "Ingegerd Sjöholm") + ", född den " + t.p("DOB", "3 mars 1954") + " (personnummer "
        + t.p("NATIONAL_ID", personnummer("540303", "428")) + "). Min farfar hette " + t.p("NAME", "Algot Wennerström")
        + " och kom från Tierp. Kan ni hitta honom i husförhörslängderna?"
    )
    t.tool("arkiv.sok", {"forsamling": t.d("Tierps församling"), "arkiv": t.d("SE/ULA/11001"), "volym": t.d("AI:24")}, {"traffar": 3, "sida": t.d("s. 112"), "ar": t.d("1880–1885")})
    t.tool("kund.uppdatera", {"arende": t.d("SF-2026-0291"), "epost": t.p("EMAIL", "ingegerd.sjoholm@telia.com")}, {"ok": True})
    t.reply("Ärende SF-2026-0291: tre träffar i Tierps församling (SE/ULA/11001, AI:24 s. 112, 1880–1885). Vi skickar kopiorna per e-post.")


def t_h4_sv_kindergarten(t: Trace) -> None:
    """sv: förskola; förälders meddelande med barnets personnummer utan bindestreck, mobilnummer med bindestreck, avdelningsnamn som lockbeten."""
    t.slice = "forskola"
    t.service = "blabar-forskola"
    t.user(
        "Hej Linnea! " + t.p("NAME", "Elsa Lindqvist-Mäkinen") + " är sjuk idag. Hennes personnummer är "
        + t.p("NATIONAL_ID", personnummer("200917", "238", sep="")) + " om ni behöver det för försäkringen. Ring mig på "
        + t.p("PHONE", "070-431 86 22") + " /" + t.p("NAME", "Petter")
    )
    t.p("NAME", "Linnea")
    t.tool("narvaro.registrera", {"avdelning": t.d("Avdelning Blåbär"), "datum": t.d("2026-01-19"), "orsak": "sjuk"}, {"ok": True, "fruktstund": t.d("kl. 09.30")})
    t.reply("Frånvaro registrerad på Avdelning Blåbär för 2026-01-19.")


def t_h4_sv_cottage(t: Trace) -> None:
    """sv: stuguthyrning; lösenordet i löptext, IBAN, bokningsnummer och koordinater som lockbeten."""
    t.slice = "stugor"
    t.service = "fjallstuga-bokning"
    t.user(
        "Gästen " + t.p("NAME", "Gunnel Åkesson") + " frågar om wifi. Lösenordet är " + t.p("SECRET", "Renhjord#Tarnaby77")
        + " och återbetalningen ska gå till " + t.p("IBAN", iban("SE", "30000000032769148051")) + "."
    )
    t.tool("bokning.hamta", {"nr": t.d("FB-10448")}, {"stuga": t.d("Stuga 4 Lappugglan"), "plats": t.d("65.7155, 15.2579"), "pris": t.d("6 950 kr")})
    t.reply("Bokning FB-10448 (Stuga 4 Lappugglan, 6 950 kr): wifi-uppgifterna skickas separat, återbetalningen är registrerad.")


# ------------------------------------------------------------------ Portuguese
def t_h4_pt_tax(t: Trace) -> None:
    """pt: contabilista; cliente com NIF, data de nascimento por extenso, IBAN PT, senha do Portal das Finanças em prosa."""
    t.slice = "irs"
    t.service = "contas-em-dia"
    t.user(
        "A cliente " + t.p("NAME", "Maria da Conceição Figueiredo Vaz") + ", NIF " + t.p("NATIONAL_ID", nif_pt("24718365"))
        + ", nascida a " + t.p("DOB", "12 de junho de 1972") + ", quer o reembolso na conta " + t.p("IBAN", iban("PT", "003508270000142917382", spaced=True))
        + ". A senha do Portal das Finanças é " + t.p("SECRET", "Sardinha#Lx2026") + ". Telemóvel " + t.p("PHONE", "+351 913 482 705") + "."
    )
    t.tool("at.simular_irs", {"ano": t.d("2025"), "modelo": t.d("Modelo 3"), "anexos": [t.d("Anexo A"), t.d("Anexo H")]}, {"reembolso": t.d("1.284,56 €"), "prazo": t.d("30 de junho de 2026")})
    t.reply("Simulação do Modelo 3 de 2025 (Anexos A e H): reembolso de 1.284,56 €; entregar até 30 de junho de 2026.")


def t_h4_pt_yacht(t: Trace) -> None:
    """pt: aluguer de barcos; pedido com morada portuguesa, data de nascimento com barras, capitão só pelo apelido."""
    t.slice = "nautica"
    t.service = "tejo-charter"
    t.user(
        "Boa tarde, sou o " + t.p("NAME", "Rui Caldeira Mascarenhas") + " (data de nascimento: " + t.p("DOB", "29/02/1996")
        + "). Quero o veleiro para sábado com o mestre " + t.p("NAME", "Bettencourt") + ". A minha morada para a fatura é "
        + t.p("ADDRESS", "Rua da Madalena 187, 2.º Esq., 1100-319 Lisboa") + "."
    )
    t.tool("frota.disponibilidade", {"barco": t.d("Bavaria C45"), "data": t.d("2026-07-11"), "marina": t.d("Doca de Alcântara")}, {"livre": True, "preco": t.d("€ 890,00")})
    t.reply("O Bavaria C45 está livre a 2026-07-11 na Doca de Alcântara, por € 890,00 com mestre.")


def t_h4_pt_base64_form(t: Trace) -> None:
    """pt: seguradora; formulário de sinistro em base64 dentro do JSON, com e-mail e telefone brasileiro."""
    t.slice = "sinistros"
    t.service = "seguro-facil"
    form = (
        "nome=" + t.p("NAME", "Thiago Nascimento Albuquerque") + "\n"
        "email=" + t.p("EMAIL", "thiago.albuquerque@uol.com.br") + "\n"
        "telefone=" + t.p("PHONE", "(11) 98423-1067") + "\n"
        "nascimento=" + t.p("DOB", "05/08/1983") + "\n"
    )
    t.user("Abra o sinistro a partir do formulário anexado.")
    t.tool("anexos.ler", {"anexo": t.d("form_sinistro.txt")}, {"encoding": "base64", "data": b64(form)})
    t.tool("sinistros.abrir", {"apolice": t.d("AUT-0019384-22"), "veiculo": t.d("Fiat Argo 1.3")}, {"sinistro": t.d("SIN-2026-77120")})
    t.reply("Sinistro SIN-2026-77120 aberto na apólice AUT-0019384-22 (Fiat Argo 1.3).")


# ------------------------------------------------------------------ Turkish
def t_h4_tr_yacht(t: Trace) -> None:
    """tr: gulet kiralama; kaptan soyadıyla, T.C. kimlik no, parantezli telefon, Wi-Fi şifresi düz metinde."""
    t.slice = "yat-kiralama"
    t.service = "bodrum-gulet"
    t.user(
        "Misafir " + t.p("NAME", "Ayşegül Karaosmanoğlu") + " (T.C. " + t.p("NATIONAL_ID", tckn("284716395")) + ") cumartesi biniyor. "
        "Kaptan " + t.p("NAME", "Yıldırımkaya") + " onu " + t.p("PHONE", "+90 (532) 418 77 90") + " numarasından arasın. "
        "Teknedeki Wi-Fi şifresi: " + t.p("SECRET", "Mavi*Yolculuk48") + "."
    )
    t.tool("tekne.rezervasyon", {"tekne": t.d("Gulet Deniz Yıldızı"), "marina": t.d("Milta Bodrum Marina"), "tarih": t.d("2026-08-15")}, {"rezervasyon": t.d("BG-26-0815-03"), "fiyat": t.d("€ 18.500")})
    t.reply("Rezervasyon BG-26-0815-03 onaylandı: Gulet Deniz Yıldızı, Milta Bodrum Marina, 2026-08-15, € 18.500.")


def t_h4_tr_used_cars(t: Trace) -> None:
    """tr: ikinci el araç; yaşı ve doğum yılı, TR IBAN, sıfırla başlayan cep telefonu, ilan numarası ve şasi dışı köderler."""
    t.slice = "ikinci-el"
    t.service = "oto-pazar"
    t.user(
        "Alıcı " + t.p("NAME", "Mehmet Emin Tunçdemir") + ", " + t.p("DOB", "1990 doğumlu") + ", kimlik no " + t.p("NATIONAL_ID", tckn("519027734"))
        + ". Kaparoyu " + t.p("IBAN", iban("TR", "0006200012940006297352", spaced=True)) + " hesabından gönderecek. Cep: " + t.p("PHONE", "0532 614 09 83") + "."
    )
    t.tool("ilan.getir", {"ilan_no": t.d("1128734521")}, {"arac": t.d("2017 Renault Clio 1.5 dCi"), "km": t.d("86.400 km"), "fiyat": t.d("645.000 TL")})
    t.reply("İlan 1128734521: 2017 Renault Clio 1.5 dCi, 86.400 km, 645.000 TL. Kapora bilgileri alındı.")


# ------------------------------------------------------------------ Finnish
def t_h4_fi_pharmacy(t: Trace) -> None:
    """fi: sairaala-apteekki; potilaan henkilötunnus, syntymäaika pisteillä, puhelinnumero, ATC-koodit ja vnr-numerot syöttinä."""
    t.slice = "sairaala-apteekki"
    t.service = "osasto-apteekki"
    t.user(
        "Potilas " + t.p("NAME", "Aino Väisänen") + " (syntynyt " + t.p("DOB", "6.6.1966") + ", hetu " + t.p("NATIONAL_ID", hetu("060666", "-", "512"))
        + ") tarvitsee kotiutuslääkkeet. Omainen " + t.p("NAME", "Jukka-Pekka Heikkilä") + " hakee ne, puh. " + t.p("PHONE", "+358 40 718 2294") + "."
    )
    t.tool("laake.haku", {"atc": t.d("N02BE01")}, {"valmiste": t.d("Panadol 500 mg"), "vnr": t.d("004213"), "hinta": t.d("4,85 €")})
    t.reply("Kotiutuslääke Panadol 500 mg (ATC N02BE01, vnr 004213, 4,85 €) on valmiina noudettavaksi.")


def t_h4_fi_cottage(t: Trace) -> None:
    """fi: mökkivuokraus; lapsen syntymäaika ja A-vuosisadan hetu, suomalainen osoite, IBAN, lauta- ja mökkinimet syöttinä."""
    t.slice = "mokit"
    t.service = "jarvimokki"
    t.user(
        "Varaaja " + t.p("NAME", "Tuulikki Räsänen-Korhola") + ", osoite " + t.p("ADDRESS", "Mäntytie 4 B 12, 00270 Helsinki")
        + ". Mukana lapsi, syntymäaika " + t.p("DOB", "21.1.2019") + " (hetu " + t.p("NATIONAL_ID", hetu("210119", "A", "218")) + "). Palautus tilille "
        + t.p("IBAN", iban("FI", "42310500217364", spaced=True)) + ". Lankapuhelin " + t.p("PHONE", "09 3108 7721") + "."
    )
    t.tool("varaus.tee", {"mokki": t.d("Mökki Kuikka"), "viikko": t.d("vko 28"), "hinta": t.d("1 190 €")}, {"varaus": t.d("JM-2026-281")})
    t.reply("Varaus JM-2026-281: Mökki Kuikka vko 28, 1 190 €.")


# ------------------------------------------------------------------ French
def t_h4_fr_dog_grooming(t: Trace) -> None:
    """fr: toilettage canin; Mme suivi d'un nom composé, numéro français avec (0), date de vaccin et race comme leurres."""
    t.slice = "toilettage"
    t.service = "caniche-et-cie"
    t.user(
        "Mme " + t.p("NAME", "Lefebvre-Daoud") + " veut avancer le rendez-vous de " + t.d("Pixel") + " (" + t.d("Bichon frisé") + "). "
        "Elle est joignable au " + t.p("PHONE", "+33 (0)4 72 10 38 55") + " ou au " + t.p("PHONE", "06 71 28 44 09")
        + ". Rappel rage le " + t.d("14/03/2026") + "."
    )
    t.tool("agenda.deplacer", {"rdv": t.d("RDV-3381"), "nouveau": t.d("samedi 7 mars 2026 à 9h30")}, {"ok": True, "tarif": t.d("48,00 €")})
    t.reply("Rendez-vous RDV-3381 déplacé au samedi 7 mars 2026 à 9h30 (48,00 €).")


def t_h4_fr_insurance_be(t: Trace) -> None:
    """fr: expert d'assurance (Belgique); numéro national, née le 1er avril, adresse belge, e-mail et IP dans un journal."""
    t.slice = "expertise"
    t.service = "sinistre-be"
    log = (
        f"2026-02-18T10:22:41Z POST /declaration 201 ip={t.p('IP', '178.51.92.214')} user={t.p('EMAIL', 'b.vandeputte@skynet.be')}\n"
        f"2026-02-18T10:22:43Z claim={t.d('SIN-BE-2026-00871')} ua=\"Mozilla/5.0\" build={t.d('7.3.118.2')}\n"
    )
    t.user(
        "L'assurée, " + t.p("NAME", "Bénédicte Vandeputte") + ", née le " + t.p("DOB", "1er avril 1949") + ", numéro national "
        + t.p("NATIONAL_ID", be_nn("490401", "218")) + ", déclare un dégât des eaux au "
        + t.p("ADDRESS", "Rue des Tanneurs 62, 1000 Bruxelles") + ". L'expert Maître " + t.p("NAME", "Vanhoutteghem") + " passe jeudi."
    )
    t.tool("journal.acces", {"dossier": "SIN-BE-2026-00871"}, log, style="oi")
    t.reply("Dossier SIN-BE-2026-00871 : dégât des eaux déclaré le 18/02/2026, visite de l'expert jeudi.")


def t_h4_fr_wedding(t: Trace) -> None:
    """fr: organisatrice de mariage; URL avec query string contenant le nom et le téléphone encodés, et date de naissance pour l'acte."""
    t.slice = "mariages"
    t.service = "jour-j"
    name = t.p("NAME", "Anaïs Rabemananjara")
    phone = t.p("PHONE", "+33 6 48 21 93 70")
    url = f"https://mairie-lyon3.example.fr/rdv?nom={urlenc(name)}&tel={urlenc(phone)}&acte={t.d('MAR-2026-0412')}"
    t.user("Pour le dossier de mariage, la mairie demande la date de naissance de la mariée: elle est née le " + t.p("DOB", "30/09/1981") + ". Confirme le rendez-vous.")
    t.tool("http.get", {"url": url}, {"status": 200, "creneau": t.d("vendredi 5 juin 2026, 11h00"), "salle": t.d("Salle des mariages")})
    t.reply("Rendez-vous confirmé le vendredi 5 juin 2026, 11h00, Salle des mariages (dossier MAR-2026-0412).")


# ------------------------------------------------------------------ Spanish
def t_h4_es_insurance(t: Trace) -> None:
    """es: perito de seguros; NIE, nacida el con barras, dirección con piso, IBAN ES, póliza y modelo de coche como señuelos."""
    t.slice = "peritaje"
    t.service = "perito-asist"
    t.user(
        "La asegurada " + t.p("NAME", "Yesenia Barrionuevo Quispe") + " (NIE " + t.p("NATIONAL_ID", nie("Y", "4827163")) + "), nacida el "
        + t.p("DOB", "22/07/1993") + ", vive en " + t.p("ADDRESS", "Calle de Toledo 88, 4º izq., 28005 Madrid")
        + ". Quiere la indemnización en " + t.p("IBAN", iban("ES", "01822370410201583746")) + ". Móvil " + t.p("PHONE", "+34 612 48 93 07") + "."
    )
    t.tool("siniestro.valorar", {"poliza": t.d("2026/AUT/118420"), "vehiculo": t.d("Seat León 1.5 TSI"), "parte": t.d("parte amistoso")}, {"importe": t.d("2.341,80 €"), "taller": t.d("Talleres Arganzuela")})
    t.reply("Valoración de la póliza 2026/AUT/118420: 2.341,80 € en Talleres Arganzuela (Seat León 1.5 TSI, parte amistoso).")


def t_h4_es_shelter(t: Trace) -> None:
    """es: protectora de animales; adoptante mayor con fecha con guiones, teléfono fijo, nombre de perro y chip como señuelos."""
    t.slice = "adopciones"
    t.service = "huellas-protectora"
    t.user(
        "Ha llamado don " + t.p("NAME", "Eustaquio Peñalver") + ", fecha de nacimiento " + t.p("DOB", "8-3-1958") + ", para adoptar a " + t.d("Canela")
        + ". Su hija " + t.p("NAME", "Remedios") + " le ayuda; teléfono fijo " + t.p("PHONE", "976 43 18 25") + ", correo "
        + t.p("EMAIL", "remedios.penalver@gmail.com") + "."
    )
    t.tool("animales.ficha", {"chip": t.d("941000024817365")}, {"nombre": "Canela", "raza": t.d("Podenco andaluz"), "edad": t.d("6 años")})
    t.reply("Canela (Podenco andaluz, 6 años, chip 941000024817365) está disponible; preparo la entrevista.")


def t_h4_es_esports(t: Trace) -> None:
    """es: club de esports; YAML de configuración con token de Twitch y clave de Steam, jugador con apodo y nombre real."""
    t.slice = "club-esports"
    t.service = "dragones-gg"
    yaml = (
        "bot:\n"
        f"  twitch_oauth: oauth:{t.p('SECRET', 'k9x2m7q4v8z1w5r3t6y0u2i8o4p7a1')}\n"
        f"  steam_web_api_key: {t.p('SECRET', '3F8A1C92D47B6E05A9C3F17D28E4B6A0')}\n"
        "roster:\n"
        f"  - nick: Chispa\n    nombre: {t.p('NAME', 'Íñigo Etxeberria Arrizabalaga')}\n    nacido: {t.p('DOB', '2003-05-11')}\n"
        f"torneo: {t.d('Superliga LVP Invierno 2026')}\n"
        f"servidor: {t.d('EUW')}\n"
    )
    t.user("¿Por qué el bot no publica los directos? Te pego la configuración:\n" + yaml)
    t.tool("twitch.validate", {"token": "redacted-by-user"}, {"status": 401, "message": "invalid access token", "canal": t.d("dragones_gg")})
    t.reply("El token de Twitch está caducado (401). Regenéralo y, como has pegado la clave de Steam en el chat, cámbiala también. Superliga LVP Invierno 2026 sin cambios.")


# ------------------------------------------------------------------ Italian
def t_h4_it_wedding(t: Trace) -> None:
    """it: wedding planner; la sposa COGNOME Nome, codice fiscale, nata il, IBAN IT, location e vino come esche."""
    t.slice = "matrimoni"
    t.service = "sposi-lago"
    t.user(
        "La sposa è FERRARESI Donatella, codice fiscale " + t.p("NATIONAL_ID", codice_fiscale("FRRDTL85R56A944")) + ", nata il "
        + t.p("DOB", "16/10/1985") + " a Bologna. Lo sposo " + t.p("NAME", "Gianmarco Scapinelli") + " paga l'acconto dal conto "
        + t.p("IBAN", iban("IT", "K0306909606100000063217")) + ". Cell. " + t.p("PHONE", "+39 347 218 5590") + "."
    )
    t.p("NAME", "FERRARESI Donatella", ["FERRARESI Donatella", "FERRARESI", "Donatella"])
    t.tool("location.conferma", {"villa": t.d("Villa del Balbianello"), "data": t.d("sabato 19 settembre 2026"), "vino": t.d("Franciacorta Brut DOCG")}, {"acconto": t.d("€ 4.800,00"), "contratto": t.d("CTR-2026-044")})
    t.reply("Confermata Villa del Balbianello per sabato 19 settembre 2026; acconto € 4.800,00 (contratto CTR-2026-044), brindisi con Franciacorta Brut DOCG.")


def t_h4_it_dental_lab(t: Trace) -> None:
    """it: laboratorio odontotecnico; odontoiatra dopo 'dott.ssa', classe (anno di nascita), stringa di connessione con password."""
    t.slice = "laboratorio"
    t.service = "odonto-lab"
    t.user(
        "La dott.ssa " + t.p("NAME", "Scognamiglio") + " chiede lo stato della protesi del signor " + t.p("NAME", "Calogero Vitrano")
        + ", " + t.p("DOB", "classe 1961") + ". Il gestionale non risponde."
    )
    t.tool(
        "db.diagnose",
        {"dsn": "postgresql://labuser:" + t.p("SECRET", "Zirconia_77!mola") + "@10.20.4.15:5432/odontolab"},
        {"error": "connection refused", "host": "db-odonto-2", "version": t.d("PostgreSQL 16.4")},
    )
    t.tool("ordini.stato", {"ordine": t.d("ODL-2026-0391")}, {"fase": "ceramizzazione", "consegna": t.d("2026-03-12"), "materiale": t.d("Disilicato di litio")})
    t.reply("Ordine ODL-2026-0391 in ceramizzazione (disilicato di litio), consegna 2026-03-12. Il database (PostgreSQL 16.4) rifiuta le connessioni: riavviarlo e cambiare la password, che è comparsa in chiaro.")


# ------------------------------------------------------------------ Dutch
def t_h4_nl_tax(t: Trace) -> None:
    """nl: belastingadviseur; BSN, geboren met streepjes, NL IBAN, adres met toevoeging, KvK en heffingskorting als lokaas."""
    t.slice = "aangifte"
    t.service = "fiscaal-hulp"
    t.user(
        "Mevrouw " + t.p("NAME", "Oduya-Verbruggen") + " (BSN " + t.p("NATIONAL_ID", bsn("31947286")) + ", geboren " + t.p("DOB", "04-12-1977")
        + ") wil haar teruggave op " + t.p("IBAN", iban("NL", "INGB0004718263", spaced=True)) + ". Adres: "
        + t.p("ADDRESS", "Zeeburgerdijk 241-III, 1094 AE Amsterdam") + "."
    )
    t.tool("aangifte.bereken", {"jaar": t.d("2025"), "box": t.d("box 3"), "kvk_werkgever": t.d("69599084")}, {"teruggave": t.d("€ 1.312"), "heffingskorting": t.d("€ 3.068")})
    t.reply("Aangifte IB 2025: teruggave € 1.312 (algemene heffingskorting € 3.068, box 3 meegenomen).")


def t_h4_nl_yacht(t: Trace) -> None:
    """nl: jachtverhuur; schipper met tussenvoegsel in een e-mailhandtekening, mobiel met (0), AWS-sleutels in een .env als bijlage."""
    t.slice = "jachtverhuur"
    t.service = "friese-meren-charter"
    env = (
        f"AWS_ACCESS_KEY_ID={t.p('SECRET', 'AKIA4QX7ZB2LM9KTR3WP')}\n"
        f"AWS_SECRET_ACCESS_KEY={t.p('SECRET', 'h7Kq2Vx9Lp4Rz1Wm8Nc3Yb6Tf0Sd5Gj2Ha7Ue9o')}\n"
        "BUCKET=fmc-contracten\n"
    )
    mail = (
        "Beste collega's,\n\nDe contracten voor de " + t.d("Linssen Grand Sturdy 40.0") + " staan in de bucket; de sleutels zitten in de bijlage.\n\n"
        "Met vriendelijke groet,\n" + t.p("NAME", "Jelmer van der Wal-Hiemstra") + "\nSchipper / verhuur\nM " + t.p("PHONE", "+31 (0)6 4182 7730") + "\n"
    )
    t.user("Kun je de contracten voor week 31 uploaden?")
    t.tool("mail.lees", {"id": t.d("msg-7781")}, {"body": mail, "attachments": [{"name": ".env", "b64": b64(env)}]})
    t.tool("s3.upload", {"bucket": "fmc-contracten", "key": t.d("2026/wk31/contract-LGS40.pdf")}, {"etag": t.d("\"d41d8cd98f00b204e9800998ecf8427e\"")})
    t.reply("Contract voor de Linssen Grand Sturdy 40.0 geüpload (2026/wk31/contract-LGS40.pdf). De AWS-sleutels stonden in een bijlage: laat ze roteren.")


# ------------------------------------------------------------- more English / German
def t_h4_en_translation_cat(t: Trace) -> None:
    """en: translation agency; a CAT-tool sync with a DeepL key header, a Google key in a query string, Basic auth, a reviewer in Vietnamese, an e-mail in a span name."""
    t.slice = "translation-ops"
    t.service = "polyglot-desk"
    basic = b64("pm-lingua:" + t.p("SECRET", "Tolk2026!Helsinki"))
    headers = {
        "Authorization": "DeepL-Auth-Key " + t.p("SECRET", "8f3c2a71-5d94-4e0b-a6c2-91f7d3e8b405:fx"),
        "X-TMS-Authorization": "Basic " + basic,
        "X-Client-IP": t.p("IP", "93.184.12.77"),
    }
    gurl = "https://translation.googleapis.com/language/translate/v2?key=" + t.p("SECRET", "AIzaSyC7mQ2vX9pL4rT8wN1zK6bF3hJ0dS5gY2e") + "&target=fi&format=text"
    t.user("The sync for job " + t.d("PJ-2026-1203") + " failed; reviewer " + t.p("NAME", "Trần Quốc Bảo") + " says the TM isn't updating.")
    t.tool("tms.sync", {"headers": headers, "file": t.d("leaflet_vi.xliff"), "format": t.d("XLIFF 2.1")}, {"status": 403, "segments": t.d("1183"), "tm_match": t.d("87%")})
    t.tool("mt.pretranslate", {"url": gurl}, {"status": 200, "chars": t.d("41,280")})
    email = t.p("EMAIL", "bao.tran@lingua-nord.fi")
    t.tool("send_email " + email, {"subject": "TM sync fixed?", "job": "PJ-2026-1203"}, {"queued": True}, style="spanname")
    t.reply("The TMS refuses the Basic credentials (403), so 1183 segments of PJ-2026-1203 did not reach the TM; machine pretranslation worked (41,280 chars). I emailed the reviewer. The DeepL and Google keys were in the request log: rotate them.")


def t_h4_en_genealogy_dna(t: Trace) -> None:
    """en: genealogy DNA kits; a JWT whose payload names the customer, a Stripe restricted key, a GitHub token in a git remote, a card, an SSN for a US estate search."""
    t.slice = "dna-kits"
    t.service = "rootline-research"
    token = t.p("SECRET", jwt({"sub": "usr_48213", "email": "hollis.ardmore@fastmail.com", "name": "Hollis Ardmore", "exp": 1798761600}, "Xq7vR2mK9pL4wT8nZ1cY6bF3hJ0dS5gA2eU9iO7lQ4t"))
    t.p("EMAIL", "hollis.ardmore@fastmail.com")
    t.p("NAME", "Hollis Ardmore")
    t.user(
        "Customer can't see her matches. Session token: " + token + ". She also asked us to look up her late uncle's estate; his SSN was "
        + t.p("SSN", "412-56-9087") + "."
    )
    t.tool("kits.status", {"barcode": t.d("DX-771-204-18")}, {"stage": "matched", "haplogroup": t.d("R-M269"), "top_match_cm": t.d("1,742 cM")})
    t.tool(
        "billing.retry",
        {"stripe_key": t.p("SECRET", "rk_live_51Nq8XvL2pR4wT7mK9zC3yB6fH1dJ0sG5aE8uQ2iO7lV4tW9xN3kP6rS1yU5hM8bG2fD7jL4nX9qR"), "card": t.p("CARD", luhn("4024 0071 5336 218")), "amount": t.d("$79.00")},
        {"status": "paid", "invoice": t.d("in_1QxR7mK2pL9vT4wN")},
    )
    t.tool("git.clone", {"remote": "https://" + t.p("SECRET", "ghp_R7vK2mX9pL4wT8nZ1cY6bF3hJ0dS5gA2eU9") + "@github.com/rootline/dna-pipeline.git", "ref": t.d("v2.14.0")}, {"ok": True})
    t.reply("Kit DX-771-204-18 is matched (haplogroup R-M269, top match 1,742 cM); her $79.00 invoice is now paid, so matches will show. Estate searches need a signed request first.")


def t_h4_de_used_cars(t: Trace) -> None:
    """de: Autohaus; Kundin mit serbischem Namen, geb. am, Handynummer mit Schrägstrich, Telegram-Bot-Token, Azure-Speicherschlüssel, Karte, IP; Erstzulassung als Köder."""
    t.slice = "autohaus"
    t.service = "autohaus-vertrieb"
    t.user(
        "Kaufvertrag für Frau " + t.p("NAME", "Dragana Milosavljević") + ", geb. am " + t.p("DOB", "17.08.1986") + ", Handy "
        + t.p("PHONE", "0176 / 482 19 37") + ". Anzahlung per Karte " + t.p("CARD", luhn("2221 0084 7712 903")) + "."
    )
    t.tool("fahrzeug.daten", {"nr": t.d("FZ-2026-0733")}, {"modell": t.d("VW Golf 8 1.5 eTSI"), "erstzulassung": t.d("03/2021"), "preis": t.d("24.990 €"), "hu": t.d("HU/AU neu")})
    t.tool(
        "vertrag.ablegen",
        {"storage": "DefaultEndpointsProtocol=https;AccountName=autohausdocs;AccountKey=" + t.p("SECRET", "q8Xv2LmR7pK4wT9nZ1cY6bF3hJ0dS5gA2eU9iO7lQ4tV8xW1zC6kP3rS8yU5hM0bG2fD7jL4nX9qR2vK7mB3w==") + ";EndpointSuffix=core.windows.net", "kunde_ip": t.p("IP", "91.64.203.118")},
        {"blob": t.d("vertraege/2026/FZ-2026-0733.pdf")},
    )
    t.tool("telegram.notify", {"bot": "https://api.telegram.org/bot" + t.p("SECRET", "6284719305:AAF3kq9X2mLpV7rT4wN8zB1cY6dH0sJ5gE2") + "/sendMessage", "text": "Vertrag FZ-2026-0733 abgelegt"}, {"ok": True})
    t.reply("Kaufvertrag für den VW Golf 8 1.5 eTSI (FZ-2026-0733, Erstzulassung 03/2021, 24.990 €, HU/AU neu) abgelegt; Anzahlung gebucht.")


def t_h4_en_recycling_sensors(t: Trace) -> None:
    """en: recycling depot sensors; a deploy log with HF, npm and GitLab tokens, a MongoDB password, a Datadog header, the engineer's e-mail and signature."""
    t.slice = "depot-iot"
    t.service = "binsense-deploy"
    log = (
        f"[deploy] node {t.d('20.11.1')}, firmware {t.d('fw 3.2.17')}\n"
        f"[deploy] npm config set //registry.npmjs.org/:_authToken={t.p('SECRET', 'npm_Tz8vK2mX9pL4wR7nQ1cY6bF3hJ0dS5gA2eU9')}\n"
        f"[deploy] HF_TOKEN={t.p('SECRET', 'hf_KpQ7vX2mL9rT4wN8zB1cY6dF3hJ0sG5aE')}\n"
        f"[deploy] git remote add gl https://oauth2:{t.p('SECRET', 'glpat-Xr8vK2mQ9pL4wT7nZ1cY')}@gitlab.com/binsense/edge.git\n"
        f"[deploy] MONGO_URL=mongodb+srv://binsense:{t.p('SECRET', 'Compact0r-Bale-19')}@cluster0.q7x2m.mongodb.net/sensors\n"
        f"[deploy] curl -H 'DD-API-KEY: {t.p('SECRET', '7c3e9a1f5b2d8e4a6c0f9b3d7e1a5c8f')}' https://api.datadoghq.eu/api/v1/validate\n"
        f"[deploy] sensors online: {t.d('BIN-0447')}, BIN-0448, BIN-0451\n"
    )
    t.user(
        "Deploy went out but bins aren't reporting fill levels. Log attached.\n\n-- \n"
        + t.p("NAME", "Rasmus Kyllönen") + "\nSite engineer, Eastgate depot\n" + t.p("EMAIL", "rasmus.kyllonen@binsense.io")
    )
    t.tool("ci.job_log", {"job": t.d("4418273")}, log, style="oi")
    t.reply("The edge image built (node 20.11.1, fw 3.2.17) and BIN-0447 reports, but the others can't reach MongoDB. Several tokens are printed in the log (npm, HF, GitLab, Mongo password, Datadog key): rotate them and mask the variables in CI.")


WRITERS = [v for k, v in sorted(globals().items()) if k.startswith("t_h4_")]
