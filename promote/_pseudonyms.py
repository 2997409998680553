"""One pseudonym per identity within a trace: what makes two values the same person, number...

Why a table per trace, settled between redaction's two passes: a trace
writes one identity in several forms (``06 12 34 56 78`` in prose, ``+33 6 12
34 56 78`` in a tool call; ``Dupont, Marie`` and ``Marie Dupont``), and a
national phone number only names a country once the trace's other numbers are
known. So pass one *observes* every value, ``settle`` assigns the tokens in
order of first appearance with the whole trace in view, and pass two reads
them.

Identities:

- **phone**: E.164 (``+<country code><national number>``, ``phonenumbers``).
  A number written with ``+`` or ``00`` carries its country. A national
  number (``06 12 34 56 78``, ``0171 2345678``, ``(415) 555-0132``) is read
  in a region where it is valid (else merely possible), chosen by, in order:
  (1) a reading equal to an international number written in the same trace;
  (2) the country the trace's international numbers name most often; (3) the
  first region whose national digit grouping is the one written, then the
  first of ``PHONE_REGIONS``; ties within (1) and (2) go the same way. So ``+33 6 12 34 56 78`` and
  ``+34 612 34 56 78`` (same national digits, two countries) never share a
  token; a trace with only national numbers reads them in one region, so
  equal national numbers still share one. The one ambiguity left: a national
  number valid in two countries, in a trace that writes the other country's
  number with the same digits internationally, is read as that number.
- **name**: its words case-folded and sorted, commas dropped, so
  ``DUPONT Marie``, ``Marie Dupont`` and ``Dupont, Marie`` are one person; a
  value whose every word belongs to one known name (``Marie`` after ``Marie
  Dupont``) is that person. A name's words propagate as written, upper-case
  and capitalised (``DUPONT`` in a ``NOM Prénom`` field).
- a phone number's other written forms propagate (its digits alone, E.164 with and without
  ``+``, its national number): a tool call writes the number the user typed with spaces;
- **date of birth** written with numbers: the date it names (``3/4/2010`` read day
  first, ``2010-04-03``), and each of its numeric forms propagates (a birth date in prose
  and the same child's row in a table);
- **email** and everything else: whitespace-collapsed and case-folded (so a
  mailbox decoded from a URL, a query string or base64 is the bare one);
  card/SSN: digits; IBAN: upper-case without spaces.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from typing import Any

from flywheel.pii import PSEUDONYM, name_forms, strings_in

#: Regions a national phone number may be read in, in order of preference.
PHONE_REGIONS = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "PT", "BE", "CH", "AT", "IE", "MX")

_NAME_PART = re.compile(r"[^\s,]+")
_ADDRESS_PART = re.compile(r"[^\n,;]+")
_EXTENSION = re.compile(r"\s*(?:x|ext\.?|#)\s*\d+\s*$", re.IGNORECASE)


@functools.lru_cache(maxsize=65536)
def canonical(label: str, value: str) -> str:
    """The identity of a non-phone value (see the module docstring)."""
    if label in ("CARD", "SSN"):
        digits = "".join(c for c in value if c.isdigit())
        return digits or value.strip()
    if label == "IBAN":
        return value.replace(" ", "").upper()
    if label == "NAME":
        return " ".join(sorted(w.casefold() for w in _NAME_PART.findall(value)))
    if label == "DOB":
        readings = _date_readings(value)
        if readings:
            y, m, d = readings[0]
            return f"{y:04d}-{m:02d}-{d:02d}"
    return " ".join(value.split()).casefold()


_NUMERIC_DATE = re.compile(
    r"\A(?:(?P<y>(?:19|20)\d\d)(?P<s1>[-/.])(?P<m>\d{1,2})(?P=s1)(?P<d>\d{1,2})"
    r"|(?P<a>\d{1,2})(?P<s2>[-/.])(?P<b>\d{1,2})(?P=s2)(?P<y2>(?:19|20)\d\d))\Z"
)


def _date_readings(value: str) -> list[tuple[int, int, int]]:
    """The (year, month, day) a numeric date can mean: year first is ISO order; day and
    month first is read day first (most of the world) and, when both fit, month first too."""
    m = _NUMERIC_DATE.match(value.strip())
    if m is None:
        return []
    if m.group("y"):
        cands = [(int(m.group("y")), int(m.group("m")), int(m.group("d")))]
    else:
        a, b, y = int(m.group("a")), int(m.group("b")), int(m.group("y2"))
        cands = [(y, b, a), (y, a, b)]
    out = []
    for y, mo, d in cands:
        if 1 <= mo <= 12 and 1 <= d <= 31 and (y, mo, d) not in out:
            out.append((y, mo, d))
    return out


def date_forms(value: str) -> list[str]:
    """Other ways a trace writes the same numeric date: ISO ``2010-04-03`` for each reading,
    and the written order with each separator (``/``, ``.``, ``-``), padded or not."""
    v = value.strip()
    readings = _date_readings(v)
    if not readings:
        return []
    out = [f"{y:04d}-{mo:02d}-{d:02d}" for y, mo, d in readings]
    first, second, third = (int(x) for x in re.split(r"[-/.]", v))
    if first > 31:  # year first
        y, mo, d = readings[0]
        out += [f"{y:04d}{s}{mo:02d}{s}{d:02d}" for s in "/."]
    else:
        a, b, y = first, second, third
        for s in "/.-":
            out += [f"{a}{s}{b}{s}{y}", f"{a:02d}{s}{b:02d}{s}{y}"]
    return [f for f in out if f != v]


def _main_number(value: str) -> tuple[str, bool]:
    """The number without its extension or ``tel:``, and whether it is written internationally."""
    main = _EXTENSION.split(value, maxsplit=1)[0].strip()
    if main.lower().startswith("tel:"):
        main = main[4:].strip()
    return main, main.lstrip("( ").startswith(("+", "00"))


@functools.lru_cache(maxsize=65536)
def phone_readings(value: str) -> tuple[bool, tuple[tuple[str, str], ...]]:
    """``(international, ((region, E.164), ...))``: the number as written, or its national readings.

    International (``+``/``00``): one reading, the number's own country.
    National: the regions of ``PHONE_REGIONS`` where it is valid and written
    in that country's national grouping (``06 12 34 56 78`` is French
    grouping, ``06123 45678`` German), then where it is valid, then where it is
    merely possible (invented numbers are often unassigned); ``PHONE_REGIONS``
    order within each rank. Empty when ``phonenumbers`` cannot read it at all.
    """
    import phonenumbers

    main, international = _main_number(value)
    if international:
        lead = main.lstrip("( ")
        digits = "".join(c for c in main if c.isdigit())
        text = "+" + digits[2:] if lead.startswith("00") else main
        try:
            num = phonenumbers.parse(text, None)
        except phonenumbers.NumberParseException:
            return True, ()
        return True, ((phonenumbers.region_code_for_number(num) or "", _e164(num)),)
    ranked = [(r[0], region, r[1]) for region in PHONE_REGIONS if (r := _reading(main, region))]
    ranked.sort(key=lambda r: r[0])  # stable: PHONE_REGIONS order within a rank
    return False, tuple((region, e164) for _, region, e164 in ranked)


@functools.lru_cache(maxsize=65536)
def _reading(main: str, region: str) -> tuple[int, str] | None:
    """``(rank, E.164)`` of a national number read in ``region`` (ranks: ``phone_readings``)."""
    import phonenumbers

    try:
        num = phonenumbers.parse(main, region)
    except phonenumbers.NumberParseException:
        return None
    if phonenumbers.is_valid_number(num):
        national = phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.NATIONAL)
        return (0 if _groups(national) == _groups(main) else 1), _e164(num)
    if phonenumbers.is_possible_number(num):
        return 2, _e164(num)
    return None


#: A national number written with ASCII digits and phone punctuation only (no plus sign,
#: letters or RFC 3966 parameters): read in a region, it carries that region's country
#: code, unless its digits start with the region's international dialling prefix
#: (``_dialled_abroad``).
_PLAIN_NATIONAL = re.compile(r"[0-9\s().\-/]+\Z")
_NOT_DIGIT = re.compile(r"[^0-9]")


@functools.cache
def _dialling_prefixes() -> tuple[tuple[str, re.Pattern[str] | None], ...]:
    """Each region's international dialling prefix (00; 011 in the US; 00 or 09 in Mexico)."""
    import phonenumbers

    out = []
    for region in PHONE_REGIONS:
        prefix = phonenumbers.PhoneMetadata.metadata_for_region(region).international_prefix
        out.append((region, re.compile(prefix) if prefix else None))
    return tuple(out)


def _dialled_abroad(main: str) -> set[str]:
    """Regions where ``main`` (a ``_PLAIN_NATIONAL``) starts with the dialling prefix.

    Read there, its country code is the one after the prefix, not the region's.
    """
    digits = _NOT_DIGIT.sub("", main)
    return {region for region, rx in _dialling_prefixes() if rx is not None and rx.match(digits)}


@functools.cache
def _country_code(region: str) -> int:
    import phonenumbers

    return int(phonenumbers.country_code_for_region(region))


def _country_code_of(e164: str) -> int:
    """The country code an E.164 number starts with (codes are prefix-free, 1-3 digits)."""
    import phonenumbers

    for n in (1, 2, 3):
        if int(e164[1 : 1 + n]) in phonenumbers.COUNTRY_CODE_TO_REGION_CODE:
            return int(e164[1 : 1 + n])
    return 0


@functools.lru_cache(maxsize=65536)
def phone_forms(value: str) -> list[str]:
    """Other ways a trace writes the same phone number: its digits alone, and for a number
    written with its country, E.164 with and without ``+``, the national significant number
    and the national dialling form (``+34 699 81 42 35``: ``34699814235``, ``699814235``).
    Forms shorter than eight digits are left out (they name too many things)."""
    import phonenumbers

    main, international = _main_number(value)
    out = {"".join(c for c in main if c.isdigit())}
    if international:
        for _, e164 in phone_readings(value)[1]:
            num = phonenumbers.parse(e164, None)
            national = phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.NATIONAL)
            out |= {e164, e164[1:], phonenumbers.national_significant_number(num)}
            out.add("".join(c for c in national if c.isdigit()))
    return sorted(f for f in out if sum(c.isdigit() for c in f) >= 8 and f != value.strip())


def _groups(number: str) -> str:
    """Digit groups as written (``06 12 34 56 78`` -> ``06 12 34 56 78``, ``(415) 555-0132`` -> ``415 555 0132``)."""
    return " ".join(re.findall(r"\d+", number))


def _e164(num: Any) -> str:
    import phonenumbers

    return phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.E164)


class PhoneContext:
    """The international numbers of one trace: what a national number there is read against."""

    def __init__(self, values: list[str]) -> None:
        self.e164: set[str] = set()
        self.regions: Counter[str] = Counter()
        for v in values:
            if not _main_number(v)[1]:
                continue  # a national number names no country
            international, readings = phone_readings(v)
            if international and readings:
                region, e164 = readings[0]
                self.e164.add(e164)
                self.regions[region] += 1
        # The country codes of the numbers written internationally, for ``_identity_lazily``.
        self._codes = {_country_code_of(e) for e in self.e164}

    def identity(self, value: str) -> str:
        """The E.164 identity of ``value`` under this trace's rule (module docstring)."""
        main, international = _main_number(value)
        if not international and _PLAIN_NATIONAL.match(main):
            found = self._identity_lazily(main)
            if found is not None:
                return found
        international, readings = phone_readings(value)
        if not readings:
            digits = "".join(c for c in value if c.isdigit())
            return "?" + (digits.lstrip("0") or value.strip())
        if international:
            return readings[0][1]
        for _, e164 in readings:
            if e164 in self.e164:
                return e164
        # max() keeps the first of equals: the ranked order breaks ties.
        region, e164 = max(readings, key=lambda r: self.regions[r[0]])
        return e164

    def _identity_lazily(self, main: str) -> str | None:
        """``identity`` of a national number reading only the regions that can decide it.

        Read in a region, such a number carries the region's country code (unless
        it starts with the region's dialling prefix, ``_PLAIN_NATIONAL``), so (1)
        only regions with the country code of a number the trace writes
        internationally, or whose dialling prefix it starts with, can read it as
        that number; (2) failing
        that, only regions the trace's international numbers name have a count
        above zero, and the first-ranked of those with the highest count wins;
        (3) failing that, every count is zero and the first-ranked reading wins:
        regions are read in order until one ranks 0. The answer is the full
        ranking's (``identity``); ``phonenumbers`` is asked a few times instead of
        once per region. None: no reading at all (``identity`` decides).
        """
        order = {r: i for i, r in enumerate(PHONE_REGIONS)}

        def first(regions: list[str], keep: Any) -> str | None:
            best = None
            for region in regions:
                r = _reading(main, region)
                if r is not None and keep(region, r[1]):
                    key = (r[0], order[region])
                    if best is None or key < best[0]:
                        best = (key, r[1])
            return None if best is None else best[1]

        if self._codes:
            abroad = _dialled_abroad(main)
            coded = [r for r in PHONE_REGIONS if _country_code(r) in self._codes or r in abroad]
            found = first(coded, lambda region, e164: e164 in self.e164)
            if found is not None:
                return found
        counted = [r for r in PHONE_REGIONS if self.regions[r] > 0]
        if counted:
            top = max(
                (self.regions[r] for r in counted if _reading(main, r) is not None), default=0
            )
            if top:
                return first(counted, lambda region, e164: self.regions[region] == top)
        for region in PHONE_REGIONS:  # every count is zero: the first-ranked reading
            r = _reading(main, region)
            if r is not None and r[0] == 0:
                return r[1]
        return first(list(PHONE_REGIONS), lambda region, e164: True)


class Pseudonyms:
    """Per-trace table identity -> pseudonym, plus the literals to propagate.

    Pass one calls ``get`` to observe (the answer is a placeholder), then
    ``settle``; from then on ``get`` answers the token (a value pass one never
    saw gets the next one).
    """

    def __init__(self, min_length: int) -> None:
        self._by_value: dict[tuple[str, str], str] = {}
        self._next: Counter[str] = Counter()
        self.literals: dict[str, str] = {}
        self._name_words: dict[str, str] = {}
        self._min = min_length
        self._reserved: Counter[str] = Counter()
        self._observed: dict[tuple[str, str], None] = {}
        self._phones = PhoneContext([])
        self.settled = False
        # A value's token once assigned (assigning again changes nothing: same identity,
        # literals and name words already recorded), so the second pass looks it up.
        self._tokens: dict[tuple[str, str], str] = {}

    def get(self, label: str, value: str) -> str:
        """The token of ``value`` (after ``settle``); before, record it and return a placeholder."""
        if not self.settled:
            self._observed.setdefault((label, value), None)
            return f"<{label}_0>"
        token = self._tokens.get((label, value))
        return token if token is not None else self._assign(label, value)

    def settle(self) -> None:
        """Assign tokens to everything observed, in order of first appearance."""
        self._phones = PhoneContext([v for lab, v in self._observed if lab == "PHONE"])
        self.settled = True
        for label, value in self._observed:
            self._assign(label, value)
        self._observed.clear()

    def _identity(self, label: str, value: str) -> str:
        if label == "PHONE":
            return self._phones.identity(value)
        return canonical(label, value)

    def _assign(self, label: str, value: str) -> str:
        key = (label, self._identity(label, value))
        token = self._by_value.get(key)
        if token is None and label == "NAME":
            # "Jane" after "Jane Roe": the same person when every word belongs to one name.
            words = {w.casefold() for w in _NAME_PART.findall(value)}
            owners = {self._name_words.get(w) for w in words}
            if len(owners) == 1 and None not in owners:
                token = owners.pop()
                self._by_value[key] = token
        if token is None:
            self._next[label] += 1
            token = f"<{label}_{self._next[label]}>"
            self._by_value[key] = token
        self._add_literal(value.strip(), token)
        if label == "NAME":
            for form in name_forms(value):  # "Ruiz" alone, "RUIZ", "ruiz", "Ruizs", "lruiz"
                self._add_literal(form, token)
            for part in _NAME_PART.findall(value):
                if len(part) >= 3:
                    self._name_words.setdefault(part.casefold(), token)
        elif label == "PHONE":
            for form in phone_forms(value):  # "+34 699 81 42 35" in prose, "699814235" in a call
                self._add_literal(form, token)
        elif label == "DOB":
            for form in date_forms(value):  # "3/4/2010" in prose, "2010-04-03" in a table
                self._add_literal(form, token)
        elif label == "ADDRESS":
            for part in _ADDRESS_PART.findall(value):
                if len(part.strip()) >= 6:
                    self._add_literal(part.strip(), token)
        self._tokens[(label, value)] = token
        return token

    def reserve(self, node: Any) -> None:
        """Count past every pseudonym already in ``node`` (its numbers stay taken)."""
        for text in strings_in(node):
            if "<" in text:
                for m in PSEUDONYM.finditer(text):
                    label, n = m.group()[1:-1].rsplit("_", 1)
                    self._next[label] = max(self._next[label], int(n))
        self._reserved = Counter(self._next)

    def _add_literal(self, literal: str, token: str) -> None:
        if len(literal) >= self._min and literal not in self.literals:
            self.literals[literal] = token

    def distinct(self) -> dict[str, int]:
        """New pseudonyms per label (those counted past by ``reserve`` excluded)."""
        return {k: n - self._reserved[k] for k, n in self._next.items() if n > self._reserved[k]}

    def occurrences(self, s: str) -> list[tuple[int, int]]:
        """Spans of every literal in ``s`` not inside a longer word (substring scan, no regex).

        A per-trace alternation regex took ~4 ms to compile per trace, more
        than scanning: ``in`` on a few dozen literals is a C loop.
        """
        out: list[tuple[int, int]] = []
        for lit in self.literals:
            if lit not in s:
                continue
            start = s.find(lit)
            n = len(lit)
            while start != -1:
                end = start + n
                if (start == 0 or not _is_word(s[start - 1]) or not _is_word(lit[0])) and (
                    end == len(s) or not _is_word(s[end]) or not _is_word(lit[-1])
                ):
                    out.append((start, end))
                start = s.find(lit, start + 1)
        return out


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"
