"""National identity numbers recognised by their check digits (``python-stdnum``).

Why a library: each country's id has its own check-digit scheme (ISO 7064
mod 11,10 for the German Steuer-ID, mod 97 for the French NIR and the Belgian
national number, mod 11 for the Dutch BSN and the Portuguese NIF, two mod-11
digits for the Norwegian fødselsnummer and the Turkish T.C. kimlik no, Luhn
for the Swedish personnummer, a check letter for the Spanish DNI/NIE, the
Italian codice fiscale and the Finnish HETU...). ``python-stdnum`` (LGPL-2.1+,
pure Python, imported, not copied) validates them all, kept up to date with
the schemes. The UK National Insurance number has no check digit and no
``stdnum`` module: its shape is checked against HMRC's published allocation
rules (``_nino``).

Two strengths:

- ``strong``: schemes whose check leaves about one random number in a
  hundred or fewer passing, and whose shape is distinctive (NIR: 15 digits
  with sex, year, month, place; codice fiscale; DNI/NIE letters; a HETU with
  its century sign; a Belgian number written ``YY.MM.DD-NNN.CC``; a
  personnummer written with its ``-``; eleven bare digits that pass the
  fødselsnummer's two check digits, the Belgian mod 97 or the kimlik no's two
  digits). Safe in prose without a context word (``find_strong_ids``).
- every scheme, the weak ones too (BSN, NIF, Steuer-ID, PESEL, Aadhaar,
  CPR...: one random number in ten or so passes, some check a date only):
  only where something else says "this is an id" -- a document or id key, a
  table column named so, or an id word shortly before it in prose
  (``find_context_ids``).
"""

from __future__ import annotations

import importlib
import re
from datetime import date
from functools import lru_cache
from types import ModuleType

from flywheel.pii._gate import prefix_trees

#: Strong schemes (see the module docstring): module paths in ``stdnum``.
STRONG: tuple[str, ...] = ("fr.nir", "it.codicefiscale", "es.dni", "es.nie")
#: Schemes that need a context: national ids, tax, citizen and social-insurance numbers
#: of Europe and of the countries whose people most often appear in European traces.
#: Left out: schemes that pass more than about one short digit run in twenty (the Israeli
#: id pads short numbers, the Czech rodné číslo of nine digits has no check, the Canadian
#: SIN and the Malaysian NRIC are a Luhn digit or a date only); the Chinese resident id
#: loads a place table of half a second on its first check. The Chilean RUT is taken only
#: as printed, with the dash before its check character (``_DASHED``).
WEAK: tuple[str, ...] = (
    "nl.bsn",
    "pt.nif",
    "de.idnr",
    "de.svnr",
    "at.vnr",
    "ch.ssn",
    "es.nss",
    "fr.nif",
    "be.nn",
    "pl.pesel",
    "dk.cpr",
    "se.personnummer",
    "no.fodselsnummer",
    "fi.hetu",
    "ie.pps",
    "lu.matricule",
    "tr.tckimlik",
    "in_.aadhaar",
    "is_.kennitala",
    "ee.ik",
    "lt.asmens",
    "ro.cnp",
    "bg.egn",
    "hr.oib",
    "si.emso",
    "gr.amka",
    "br.cpf",
    "mx.curp",
    "za.idnr",
    "kr.rrn",
    "id.nik",
    "th.pin",
    "gb.nhs",
    "cz.rc",
    "sk.rc",
    "cl.rut",
)
#: Schemes taken only in their checked length: the Czech and Slovak birth numbers of ten digits
#: have a mod-11 check; the nine-digit ones (before 1954) check a date only.
_MIN_COMPACT = {"cz.rc": 10, "sk.rc": 10}
#: Schemes taken only as printed with a dash before the check character: the Chilean RUT's
#: mod 11 passes one short number in eleven, so a bare digit run is no RUT.
_DASHED = frozenset({"cl.rut"})


@lru_cache(maxsize=1)
def _modules() -> tuple[tuple[str, ModuleType, bool], ...]:
    out = []
    for path in STRONG + WEAK:
        try:
            mod = importlib.import_module(f"stdnum.{path}")
        except ImportError:  # a scheme a given stdnum release lacks
            continue
        out.append((path, mod, path in STRONG))
    return tuple(out)


#: HMRC's allocation rules: no D, F, I, Q, U, V in either prefix letter, no O second,
#: never the prefixes BG, GB, KN, NK, NT, TN, ZZ; a suffix A to D.
_NINO = re.compile(r"\A(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\d{6}[A-D]\Z")


def _nino(compact: str) -> bool:
    return _NINO.match(compact.upper()) is not None


_DATE = re.compile(r"\A(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4})\Z")


@lru_cache(maxsize=8192)
def national_id_scheme(value: str, strong_only: bool = False) -> str | None:
    """The ``stdnum`` scheme (``"nl.bsn"``) whose check digits ``value`` passes, or None.

    Separators (spaces, dots, hyphens, slashes) are ignored; values with fewer than
    eight letters and digits are no national id. A UK National Insurance number
    (shape only) is ``"gb.nino"``, a weak scheme.
    """
    compact = "".join(c for c in value if c.isalnum())
    if not 8 <= len(compact) <= 20 or sum(c.isdigit() for c in compact) < 5:
        return None
    if _DATE.match(value.strip()):
        return None  # "2024-01-07" passes the BSN's check (padded): a date is no id
    for path, mod, strong in _modules():
        if (strong_only and not strong) or len(compact) < _MIN_COMPACT.get(path, 0):
            continue
        if path in _DASHED and value.strip()[-2:-1] != "-":
            continue
        try:
            if mod.is_valid(value):
                return path
        except Exception:  # noqa: BLE001 - a scheme's validator must never break detection
            continue
    if not strong_only and _nino(compact):
        return "gb.nino"
    return None


# -- strong shapes, anywhere ------------------------------------------------------------
#: Shapes distinctive enough to be checked anywhere, each with the schemes it may pass.
_STRONG_SHAPES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    # Finnish HETU: DDMMYY, a century sign, an individual number, a check character.
    (re.compile(r"(?<![\w\-])\d{6}[-+A-FU-Y]\d{3}[0-9A-Y](?![\w\-])"), ("fi.hetu",)),
    # Belgian national number as printed: YY.MM.DD-NNN.CC
    (re.compile(r"(?<![\w.])\d{2}\.\d{2}\.\d{2}[-.]\d{3}\.\d{2}(?![\w.])"), ("be.nn",)),
    # Swedish personnummer with its separator: (YY)YYMMDD-NNNC
    (re.compile(r"(?<![\w\-+])(?:\d{2})?\d{6}[-+]\d{4}(?![\w\-])"), ("se.personnummer",)),
    # Eleven bare digits: two check digits (fødselsnummer, kimlik no) or mod 97 (Belgium).
    (
        re.compile(r"(?<![\w.,/\-+])\d{11}(?![\w/\-]|[.,]\d)"),
        ("no.fodselsnummer", "be.nn", "tr.tckimlik"),
    ),
    # Swiss AHV/AVS number: the country prefix 756, then 10 digits with an EAN-13 check.
    (re.compile(r"(?<![\w.])756\.?\d{4}\.?\d{4}\.?\d{2}(?![\w]|\.\d)"), ("ch.ssn",)),
    # Romanian CNP: 13 digits holding sex/century, a birth date, a county and a check digit.
    (re.compile(r"(?<![\w.,/\-+])[1-8]\d{12}(?![\w/\-]|[.,]\d)"), ("ro.cnp",)),
    # Irish PPS number: seven digits and a check letter (mod 23), an optional second letter.
    (re.compile(r"(?<![\w\-])\d{7}[A-W][ABHTWXZ]?(?![\w\-])"), ("ie.pps",)),
    # UK National Insurance number written in its printed groups: AB 12 34 56 C
    (re.compile(r"\b[A-Z]{2}[ ]\d{2}[ ]\d{2}[ ]\d{2}[ ][A-D]\b"), ("gb.nino",)),
    # Chilean RUT/RUN as printed: thousands dots, a dash, a check digit or K (mod 11).
    (re.compile(r"(?<![\w.,])\d{1,2}\.\d{3}\.\d{3}-[\dkK](?![\w.\-])"), ("cl.rut",)),
    # UK (DVLA) driving licence number: five letters of the surname (9-padded), the birth
    # decade, month (+50 for women) and day, the year digit, two initials (9-padded), a digit
    # and two check characters. No public check algorithm: the birth date inside is the check.
    (
        re.compile(
            r"(?<![\w\-])[A-Z][A-Z9]{4}\d(?:0[1-9]|1[0-2]|5[1-9]|6[0-2])(?:0[1-9]|[12]\d|3[01])"
            r"\d[A-Z][A-Z9]\d[A-Z0-9]{2}(?![\w\-])"
        ),
        ("gb.dvla",),
    ),
)


@lru_cache(maxsize=1)
def _by_path() -> dict[str, ModuleType]:
    return {path: mod for path, mod, _ in _modules()}


def _passes(value: str, schemes: tuple[str, ...]) -> bool:
    mods = _by_path()
    for path in schemes:
        if path == "gb.nino":
            if _nino("".join(c for c in value if c.isalnum())):
                return True
            continue
        if path == "gb.dvla":
            return True  # its shape holds a valid birth date (see _STRONG_SHAPES)
        mod = mods.get(path)
        try:
            if mod is not None and mod.is_valid(value):
                return True
        except Exception:  # noqa: BLE001 - see national_id_scheme
            continue
    return False


#: Every strong shape holds six digits in a row or three pairs of digits (a cheap gate).
_STRONG_GATE = re.compile(r"\d{6}|\d\d[. ]\d\d[. ]\d\d|756\.\d{4}|\d\.\d{3}\.\d{3}-")


def find_strong_ids(text: str) -> list[tuple[int, int]]:
    """Spans of ids whose shape and check digits say so without any context word."""
    if not _STRONG_GATE.search(text):
        return []
    out = []
    for rx, schemes in _STRONG_SHAPES:
        for m in rx.finditer(text):
            if _passes(m.group(), schemes):
                out.append(m.span())
    return out


# -- id words, in prose -----------------------------------------------------------------
#: Words naming an identity, tax or insurance number, in the languages of Europe and a few
#: more (matched case-insensitively, at a word start). After one, a value that passes any
#: scheme's check (weak ones included) is an id.
ID_WORDS: tuple[str, ...] = (
    # en
    "national id", "national identity", "national insurance", "ni number", "ni no", "nino",
    "insurance number", "social security", "social insurance", "identity number",
    "identity card", "id card", "id number", "id no", "id#", "personal number", "personal id",
    "passport", "tax id", "tax number", "tax file number", "taxpayer", "tin", "aadhaar",
    "personal code", "personal identification code", "identity code",
    "aadhar", "uid", "pan", "nhs number", "health number", "medicare", "sin",
    # de
    "steuer-id", "steuerid", "steuer-identifikationsnummer", "steueridentifikationsnummer",
    "identifikationsnummer", "steuernummer", "versichertennummer", "sozialversicherungsnummer",
    "rentenversicherungsnummer", "personalausweis", "ausweis", "ausweisnummer", "ausweis-nr",
    "reisepass", "ahv", "svnr",
    # fr
    "sécurité sociale", "securite sociale", "sécu", "numéro national", "numero national",
    "registre national", "carte d'identité", "carte d’identité", "pièce d'identité",
    "pièce d’identité", "passeport", "nir", "insee", "niss", "numéro fiscal",
    # nl
    "bsn", "burgerservicenummer", "sofinummer", "rijksregisternummer", "rijksregister",
    "identiteitskaart", "paspoort",
    # es / pt / it
    "dni", "nie", "nif", "nss", "seguridad social", "documento", "cédula", "cedula",
    "pasaporte", "curp", "rut", "cpf", "cartão de cidadão", "cartão do cidadão",
    "contribuinte", "passaporte", "codice fiscale", "c.f.", "tessera sanitaria",
    "carta d'identità", "carta d’identità", "passaporto",
    # pl / cz / sk / hu / ro / bg / hr / sl / el
    "pesel", "dowód osobisty", "dowodu", "paszport", "nip", "rodné číslo", "rodne cislo",
    "személyi", "adóazonosító", "taj", "cnp", "egn", "oib", "emšo", "emso", "amka", "afm",
    # nordic / baltic
    "personnummer", "personnr", "samordningsnummer", "fødselsnummer", "fodselsnummer", "fnr",
    "cpr", "cpr-nr", "cpr-nummer", "henkilötunnus", "henkilotunnus", "hetu", "sotu",
    "kennitala", "isikukood", "asmens kodas", "personas kods",
    # tr
    "kimlik", "t.c.", "tckn", "nüfus",
)


def _scheme_words(doc: str) -> set[str]:
    """Names of a scheme from its ``stdnum`` docstring's first line: the abbreviations before
    the parenthesis and the native name first inside it ("PPS No (Personal Public Service
    Number, ...)" -> pps no, pps, personal public service number; "CNP (Cod Numeric Personal,
    ...)" -> cnp, cod numeric personal). Two-letter abbreviations (CC, NI, CI) are too common."""
    from flywheel.pii._lexicon import zipf

    line = doc.strip().split("\n")[0]
    head, _, rest = line.partition("(")
    out = set()
    for part in head.split(","):
        part = part.strip().strip('".').lower()
        if 3 <= len(part) <= 24 and len(part.split()) <= 3:
            out.add(part)
            first = part.split()[0]
            if len(first) >= 3 and zipf(first) < 4.0:  # "PIN", "NHS" alone are everyday words
                out.add(first)
    native = rest.split(",")[0].strip().strip('").').lower()
    if (
        6 <= len(native) <= 40
        and len(native.split()) <= 4
        and not native.startswith(("the ", "a "))
        and (" " in native or zipf(native) < 3.0)  # "codice", "lithuanian": no id word alone
    ):
        out.add(native)
    # a description in English ("polish national identification number") or a phrase led by
    # an everyday word ("personal public service number") is no id word; its acronym is
    return {w for w in out if not w[:1].isdigit() and zipf(w.split()[0]) < (4.0 if " " not in w else 3.0)}


@lru_cache(maxsize=1)
def scheme_id_words() -> frozenset[str]:
    """Id words named by the docstrings of the schemes we check (``_scheme_words``): every
    country whose scheme ``python-stdnum`` knows brings its own names for it."""
    words: set[str] = set()
    for _, mod, _ in _modules():
        words |= _scheme_words(mod.__doc__ or "")
    return frozenset(words - {"number", "personal", "identity", "tax", "national"})


_ALL_ID_WORDS = frozenset(ID_WORDS) | scheme_id_words()
_ID_WORD_RX = "|".join(re.escape(w) for w in sorted(_ALL_ID_WORDS, key=len, reverse=True))
#: An id word, a few words of glue ("no", "number", "nr.", ":", "is", "est"), then a value
#: of letters and digits with separators, holding at least five digits.
_ID_NEAR = re.compile(
    rf"(?i)(?<![^\W\d_])(?:{_ID_WORD_RX})(?![^\W\d_])[^\n\d]{{0,24}}?"
    r"(?P<v>(?-i:[A-Z0-9](?:[A-Z0-9]|[ ./\-](?=[A-Z0-9])){5,24}))(?![\w])"
)


#: The first word of each id word, for a gate by set lookup (far cheaper than the pattern).
_FIRST_WORDS = frozenset(re.split(r"[ \-'’.#]", w)[0] for w in _ALL_ID_WORDS) - {"id", "t", "c", ""}
_SHORT_GATE = re.compile(r"(?i)\bid[ ]?(?:card|number|no|nr|#)|\bt\.c\.|\bc\.f\.")
_LETTERS = re.compile(r"[^\W\d_]+")


#: Schemes whose value encodes a birth date as well as check digits (or two check digits):
#: about one random number in a hundred or fewer passes, so a bare "ID" before it is enough.
DATED: frozenset[str] = frozenset(
    "se.personnummer no.fodselsnummer fi.hetu ee.ik lt.asmens pl.pesel ro.cnp bg.egn "
    "is_.kennitala be.nn lu.matricule kr.rrn cz.rc sk.rc si.emso za.idnr fr.nir "
    "it.codicefiscale tr.tckimlik mx.curp".split()
)
#: "ID" as a word (``ID 8001015009087``, ``Sy ID is ...``), or compounded with a word of any
#: language (``ID-nommer``, ``ID-Nr.``, ``id-kort``).
_BARE_ID = re.compile(
    r"(?<![^\W\d_])(?:ID|Id|id)(?:[\-‐][^\W\d_]{1,12}\.?)?(?![^\W\d_])[^\n\d]{0,16}?"
    r"(?P<v>(?-i:[A-Z0-9](?:[A-Z0-9]|[ ./\-](?=[A-Z0-9])){5,24}))(?![\w])"
)
#: The word passport in the languages of Europe and a few more (lower case, a word start).
PASSPORT_WORDS: tuple[str, ...] = (
    "passport", "passeport", "pasaporte", "pasaportea", "passaporte", "passaporto",
    "reisepass", "reisepas", "paspoort", "paszport", "paszportu", "pasaport", "pasaportu",
    "pașaport", "pasaport", "pasaportul", "passi", "passin", "útlevél", "útlevélszám", "utlevel",
    "putovnica", "potni list", "cestovní pas", "cestovný pas", "passnummer", "passnr",
    "pass-nr", "passinumero", "διαβατήριο", "διαβατηρίου", "hộ chiếu", "ho chieu", "паспорт",
    "паспорта", "paspor", "pasipoti", "pasbort", "pas nr", "passaporti", "pasaporta",
)  # fmt: skip
_PASSPORT_RX = "|".join(re.escape(w) for w in sorted(set(PASSPORT_WORDS), key=len, reverse=True))
#: A passport word, a few words of glue, then a passport number: no check digit (outside the
#: machine-readable zone), but a shape: one to three letters and six to nine digits, eight or
#: nine digits, or eight or nine letters and digits with five digits at least (ICAO 9303
#: gives the number nine characters).
_PASSPORT_NEAR = re.compile(
    rf"(?i)(?<![^\W\d_])(?:{_PASSPORT_RX})(?![^\W\d_])[^\n\d]{{0,32}}?"
    r"(?P<v>(?-i:(?<![\w\-])(?:[A-Z]{1,3}\d{6,9}[A-Z]?|\d{8,9}|(?=(?:[A-Z]*\d){5})[A-Z0-9]{8,9}))"
    r"(?![\w\-]|[./]\d))"
)
_PASSPORT_GATE = re.compile(
    "|".join(sorted({re.escape(w[:4]) for w in PASSPORT_WORDS}, key=len, reverse=True))
)
#: National ids with no check digit, after their own words only: the Vietnamese citizen id
#: card (CCCD, 12 digits: a province code 001-096, a century-and-sex digit, the birth year,
#: six digits) and the older identity card (CMND, 9 or 12 digits).
_UNCHECKED = re.compile(
    r"(?i)(?<![^\W\d_])(?:cccd|cmnd|căn[ ]cước(?:[ ]công[ ]dân)?|can[ ]cuoc(?:[ ]cong[ ]dan)?|"
    r"chứng[ ]minh[ ]nhân[ ]dân|số[ ]định[ ]danh(?:[ ]cá[ ]nhân)?)(?![^\W\d_])[^\n\d]{0,20}?"
    r"(?P<v>(?<!\d)0(?:0[1-9]|[1-8]\d|9[0-6])[0-9]\d{8}(?!\d)|(?<!\d)\d{9}(?!\d))"
)


def find_context_ids(text: str) -> list[tuple[int, int]]:
    """Spans of values that pass a scheme's check (any strength) shortly after an id word;
    of values passing a scheme that also checks a birth date after a bare "ID"; of passport
    numbers after a passport word; of ids with no check digit after their own word."""
    lower = text.lower()
    out = _more_context_ids(text, lower)
    if _FIRST_WORDS.isdisjoint(_LETTERS.findall(lower)) and not _SHORT_GATE.search(text):
        return out
    for m in _ID_NEAR.finditer(text):
        v = m.group("v")
        if sum(c.isdigit() for c in v) < 5:
            continue
        if national_id_scheme(v):
            out.append(m.span("v"))
            continue
        # a trailing group that is no part of the id ("... 48213067E. Then") is cut
        head = v.rsplit(" ", 1)[0]
        if head != v and national_id_scheme(head):
            out.append((m.start("v"), m.start("v") + len(head)))
    return out


def _more_context_ids(text: str, lower: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    if "id" in lower:
        for m in _BARE_ID.finditer(text):
            if _dated(m.group("v")):
                out.append(m.span("v"))
    if _PASSPORT_GATE.search(lower):
        out += [m.span("v") for m in _PASSPORT_NEAR.finditer(text)]
    if any(w in lower for w in _UNCHECKED_GATE):
        out += [m.span("v") for m in _UNCHECKED.finditer(text)]
    return out


@lru_cache(maxsize=4096)
def _dated(value: str) -> bool:
    """Whether ``value`` passes a scheme of ``DATED`` (every one has ten characters or more,
    six of them digits at least)."""
    compact = "".join(c for c in value if c.isalnum())
    if len(compact) < 10 or sum(c.isdigit() for c in compact) < 6:
        return False
    return _passes(value, _DATED_ORDER)


_DATED_ORDER = tuple(sorted(DATED))
_UNCHECKED_GATE = ("cccd", "cmnd", "căn cước", "can cuoc", "chứng minh", "định danh")


#: A bare run of ten to thirteen digits (the length of every ``DATED`` scheme written compact).
_BARE_DIGITS = re.compile(r"(?<![\w.,/\-+<])\d{10,13}(?![\w/\-]|[.,]\d)")


def strict_ids(text: str) -> list[tuple[int, int]]:
    """Bare digit runs that pass a scheme checking a birth date and check digits (``DATED``),
    with no id word: about one random run in a thousand passes. Too many for redaction to
    take without a context (order and serial numbers share the length), cheap enough for the
    release scan, which a reviewer can answer with an exception."""
    if sum(c.isdigit() for c in text) < 10:
        return []
    recent = {str(date.today().year + k) for k in (-1, 0, 1)}
    return [
        m.span()
        for m in _BARE_DIGITS.finditer(text)
        if m.group()[:4] not in recent and _dated(m.group())
    ]  # a run opening with this year is a date-stamped serial ("202611031234"), not a birth


# The patterns above, each alternation as a prefix tree: the same matches, faster (_gate).
prefix_trees(globals())
