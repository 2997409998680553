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
- **email** and everything else: whitespace-collapsed and case-folded (so a
  mailbox decoded from a URL, a query string or base64 is the bare one);
  card/SSN: digits; IBAN: upper-case without spaces.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from typing import Any

from flywheel.pii import PSEUDONYM, strings_in

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
    return " ".join(value.split()).casefold()


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

    main = _EXTENSION.split(value, maxsplit=1)[0].strip()
    if main.lower().startswith("tel:"):
        main = main[4:].strip()
    lead = main.lstrip("( ")
    if lead.startswith(("+", "00")):
        digits = "".join(c for c in main if c.isdigit())
        text = "+" + digits[2:] if lead.startswith("00") else main
        try:
            num = phonenumbers.parse(text, None)
        except phonenumbers.NumberParseException:
            return True, ()
        return True, ((phonenumbers.region_code_for_number(num) or "", _e164(num)),)
    ranked: list[tuple[int, str, str]] = []
    for region in PHONE_REGIONS:
        try:
            num = phonenumbers.parse(main, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(num):
            national = phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.NATIONAL)
            rank = 0 if _groups(national) == _groups(main) else 1
        elif phonenumbers.is_possible_number(num):
            rank = 2
        else:
            continue
        ranked.append((rank, region, _e164(num)))
    ranked.sort(key=lambda r: r[0])  # stable: PHONE_REGIONS order within a rank
    return False, tuple((region, e164) for _, region, e164 in ranked)


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
            international, readings = phone_readings(v)
            if international and readings:
                region, e164 = readings[0]
                self.e164.add(e164)
                self.regions[region] += 1

    def identity(self, value: str) -> str:
        """The E.164 identity of ``value`` under this trace's rule (module docstring)."""
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

    def get(self, label: str, value: str) -> str:
        """The token of ``value`` (after ``settle``); before, record it and return a placeholder."""
        if not self.settled:
            self._observed.setdefault((label, value), None)
            return f"<{label}_0>"
        return self._assign(label, value)

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
            for part in _NAME_PART.findall(value):
                if len(part) >= 3 and part[0].isupper():
                    for form in (part, part.upper(), part[0] + part[1:].lower()):
                        self._add_literal(form, token)
                    self._name_words.setdefault(part.casefold(), token)
        elif label == "ADDRESS":
            for part in _ADDRESS_PART.findall(value):
                if len(part.strip()) >= 6:
                    self._add_literal(part.strip(), token)
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
