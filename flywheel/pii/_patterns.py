"""Pattern entities (email, phone, card, IBAN, IP, SSN): cheap triggers, then Presidio.

Why: Presidio over every string of every span is too slow for a trace store
(~200 texts/s with all recognizers). Most strings cannot hold a pattern
entity at all, and each recognizer has a cheap necessary condition (an email
needs ``@``, a phone at least seven digits, ...). So each text is asked only
for the entities its triggers allow, id-like strings are skipped, and results
are cached by text (in ``_detector``) because traces repeat the same strings.
IBANs written in lower case (``gb33 bukb ...``) are upper-cased for the
recognizer, whose pattern is upper-case only.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

from presidio_analyzer import EntityRecognizer, PatternRecognizer
from presidio_analyzer import pattern_recognizer as _pattern_module
from presidio_analyzer.predefined_recognizers import IbanRecognizer
from presidio_analyzer.predefined_recognizers.generic import iban_recognizer as _iban_module

from flywheel.pii._company import company_number
from flywheel.pii._engine import ENGINE_ENTITIES, SCORE_THRESHOLD, empty_artifacts, shared_analyzer
from flywheel.pii._gate import literals, prefix_trees
from flywheel.pii._types import ENTITIES, Detection, has_digits

_log = logging.getLogger(__name__)
#: The regular-expression engine Presidio's pattern loops use (the ``regex`` package),
#: so a pattern compiles and matches here exactly as it does there.
_regex: Any = _pattern_module.re

#: Presidio entity -> the label used in pseudonyms and reports (the engine's entities).
ENTITY_LABELS: dict[str, str] = {e: ENTITIES[e] for e in ENGINE_ENTITIES}

# Context rule (replaces Presidio's context enhancer): a weak SSN shape (bare
# nine digits, 0.05) counts when an SSN keyword is within 30 characters before it.
_SSN_CONTEXT = re.compile(r"(?:ssn|social\s+security|ss#)\W{0,3}(?:no\.?|number|#)?\W{0,3}\Z", re.I)
_SSN_CONTEXT_WINDOW = 30

_DIGITS = str.maketrans("", "", "0123456789")
_IBAN_TRIGGER = re.compile(r"[A-Za-z]{2}\d{2}")
_IBAN_LOWER = re.compile(r"\b[a-z]{2}\d{2}(?:[ ]?[a-z0-9]{4}){2,7}(?:[ ]?[a-z0-9]{1,4})?\b")
_IP_TRIGGER = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|[0-9A-Fa-f]{0,4}:[0-9A-Fa-f]{0,4}:")
# Strings that are entirely an identifier, timestamp or number-with-unit: they
# cannot be one of our entities and are common in tool arguments.
_ID_LIKE = re.compile(
    r"""\A(?:
        [0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}  # uuid
      | \d{4}-\d{2}-\d{2}                                     # ISO date, optional time:
        (?:[T\x20]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?
      | (?=[0-9a-f]*[a-f])[0-9a-f]{16,64}  # hex ids (trace/span ids, digests); all-digit
                                          # strings are not ids here: they may be cards
      | -?\d{1,6}(?:\.\d+)?              # short numbers as text
    )\Z""",
    re.VERBOSE,
)


def triggered_entities(text: str, wanted: Sequence[str]) -> list[str]:
    """Return the Presidio entities worth asking for in ``text``.

    Each test is a necessary condition for the recognizer to match, so this
    never loses a detection; it only saves recognizer calls.
    """
    if len(text) < 6 or _ID_LIKE.match(text):
        return []
    digits = len(text) - len(text.translate(_DIGITS))
    out: list[str] = []
    for entity in wanted:
        if entity == "EMAIL_ADDRESS":
            ok = "@" in text
        elif entity == "PHONE_NUMBER":
            ok = digits >= 7
        elif entity == "CREDIT_CARD":
            ok = digits >= 12
        elif entity == "US_SSN":
            ok = digits >= 9
        elif entity == "IBAN_CODE":
            ok = digits >= 8 and _IBAN_TRIGGER.search(text) is not None
        elif entity == "IP_ADDRESS":
            ok = (digits >= 4 or ":" in text) and _IP_TRIGGER.search(text) is not None
        else:
            ok = True
        if ok:
            out.append(entity)
    return out


def resolve_overlaps(found: list[Detection]) -> list[Detection]:
    """Keep the best non-overlapping detections, ordered by position.

    Higher score wins, then the longer span (a validated card beats the phone
    number the matcher saw inside it; a separated SSN beats a phone guess).
    """
    chosen: list[Detection] = []
    for det in sorted(found, key=lambda d: (-d.score, -(d.end - d.start), d.start)):
        if all(det.end <= c.start or det.start >= c.end for c in chosen):
            chosen.append(det)
    chosen.sort(key=lambda d: d.start)
    return chosen


#: Every digit layout of Presidio's SSN patterns (3-2-4 with or without separators, 5-4, 3-6).
_SSN_SHAPE = re.compile(r"\d{3}[- .]?\d{2}[- .]?\d{4}|\d{5}-\d{4}|\d{3}-\d{6}")


def _digit_count(s: str) -> int:
    return len(s) - len(s.translate(_DIGITS))


def _run_with(chars: str, skip: str, need: str) -> re.Pattern[str]:
    """Maximal runs of ``chars`` that hold one of ``need`` (``skip`` = the other ``chars``).

    A run starts where the previous character is not one of ``chars``; its
    ``skip`` characters are passed without backtracking up to the first ``need``
    character, and the rest of the run follows. One scan of the text, and no
    call for the many runs that cannot qualify (every space is a run of a
    card's characters).
    """
    return re.compile(rf"(?<![{chars}])(?:{skip})*+[{need}][{chars}]*")


def _run_counting(chars: str, skip: str, digits: int) -> re.Pattern[str]:
    """Maximal runs of ``chars`` holding at least ``digits`` ASCII digits.

    ``skip`` matches the other ``chars``; they are passed without backtracking,
    so a run short of digits fails once.
    """
    return re.compile(rf"(?<![{chars}])(?:(?:{skip})*+[0-9]){{{digits}}}[{chars}]*")


_EMAIL_CHARS = r"\w!#$%&'*+\-/=?^`{|}~."

#: Per entity: the maximal runs of the characters its Presidio patterns can match,
#: with a character every match needs, and what the run must hold to be worth a
#: recognizer call (None: nothing more). A match lies inside one maximal run of
#: its pattern's characters, so running the recognizer on each run (with two
#: characters of context either side, which is all the patterns' ``\b`` and
#: look-around ever read) finds exactly the matches the whole text would give.
_RUNS: dict[str, tuple[re.Pattern[str], Any]] = {
    "EMAIL_ADDRESS": (_run_with(_EMAIL_CHARS + "@", f"[{_EMAIL_CHARS}]", "@"), None),
    "CREDIT_CARD": (_run_with(r"\d \-", r"[ \-]", r"\d"), lambda r: _digit_count(r) >= 12),
    "US_SSN": (_run_with(r"\d \-.", r"[ \-.]", r"\d"), lambda r: _SSN_SHAPE.search(r) is not None),
    "IBAN_CODE": (_run_counting(r"A-Z0-9 \-", r"[A-Z \-]", 8), None),
    "IP_ADDRESS": (
        _run_with(r"\w.:%/", r"[^\W\d]|[.%/]", r"\d:"),
        lambda r: _IP_TRIGGER.search(r) is not None,
    ),
}
_CONTEXT = 2


def _runs(entity: str, text: str) -> list[tuple[int, int]]:
    """Stretches of ``text`` that can hold a match of ``entity``'s patterns."""
    rx, worth = _RUNS[entity]
    if worth is None:
        return [m.span() for m in rx.finditer(text)]
    return [m.span() for m in rx.finditer(text) if worth(m.group())]


#: A recognizer's matches in a text as ``(start, end, score)``, in the order its
#: ``analyze`` returns them.
Runner = Callable[[str], list[tuple[int, int, float]]]


def recognizer_runner(rec: Any, artifacts: Any = None) -> Runner:
    """``rec.analyze`` on one entity, without Presidio's per-call and per-match bookkeeping.

    Presidio's pattern loop times every pattern, logs, and builds an explanation
    and a result object for every match, then sorts and de-duplicates through
    those objects; over many short windows that was most of the pattern cost.
    For the two loops we call (``PatternRecognizer``'s, and ``IbanRecognizer``'s
    own) this runs the same compiled patterns, validation and de-duplication on
    plain tuples (tests/pii/test_pattern_runner.py compares the two). A recognizer
    whose class changes either loop goes through its own ``analyze``.
    """
    cls = type(rec)
    if isinstance(rec, IbanRecognizer) and cls.analyze is IbanRecognizer.analyze:
        return _iban_runner(rec)
    if (
        isinstance(rec, PatternRecognizer)
        and cls.analyze is PatternRecognizer.analyze
        and getattr(cls, "_PatternRecognizer__analyze_patterns", None)
        is PatternRecognizer._PatternRecognizer__analyze_patterns  # type: ignore[attr-defined]
    ):
        return _pattern_runner(rec)
    entities = list(rec.supported_entities)

    def run(text: str) -> list[tuple[int, int, float]]:
        return [(r.start, r.end, r.score) for r in rec.analyze(text, entities, artifacts)]

    return run


_MAX, _MIN = EntityRecognizer.MAX_SCORE, EntityRecognizer.MIN_SCORE
#: The flags ``re`` reads as ``regex`` does; a pattern with any other gets no gate.
_SHARED_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.ASCII | re.UNICODE


def needed_literals(source: str, flags: int) -> tuple[str, ...] | None:
    """Literals one of which every match of a recognizer's pattern holds, or None.

    Why: each pattern call on a window costs a ``regex`` call with a timeout (two
    process-clock system calls) even when it cannot match; most windows lack what
    some pattern needs (an IPv6 shape's ``:``, a dashed SSN's ``-``). The set comes
    from the pattern's own parse tree (``_gate.literals``, one character or more);
    a case-insensitive pattern gets one only when no literal has a case, and a
    pattern ``re`` cannot read or flags it does not share get none (always run).
    """
    if int(flags) & ~_SHARED_FLAGS:
        return None
    try:
        compiled = re.compile(source, int(flags))
        found = literals(compiled, least=1)
    except (re.error, ValueError, TypeError, OverflowError, RecursionError):
        return None
    if not found or (compiled.flags & re.IGNORECASE and any(x.lower() != x.upper() for x in found)):
        return None  # (flags written inside the pattern count: ``compiled.flags``)
    return tuple(sorted(set(found)))


def _compiled(rec: Any) -> list[tuple[Any, float, str, tuple[str, ...] | None]]:
    """A recognizer's patterns: compiled, score, name and what a match needs.

    The last is ``needed_literals`` (None: the pattern always runs).
    """
    flags = rec.global_regex_flags
    return [
        (_regex.compile(p.regex, flags=flags), p.score, p.name, needed_literals(p.regex, flags))
        for p in rec.patterns
    ]


def _pattern_runner(rec: Any) -> Runner:
    """``PatternRecognizer.analyze`` (Presidio 2.2) on tuples."""
    cls = type(rec)
    patterns = _compiled(rec)
    own = PatternRecognizer
    validate = None if cls.validate_result is own.validate_result else rec.validate_result
    invalidate = None if cls.invalidate_result is own.invalidate_result else rec.invalidate_result

    def run(text: str) -> list[tuple[int, int, float]]:
        found: list[tuple[int, int, float]] = []
        for rx, base, name, need in patterns:
            if need is not None and not any(x in text for x in need):
                continue  # no match possible (and none to time out)
            try:
                for m in rx.finditer(text, timeout=_pattern_module.REGEX_TIMEOUT_SECONDS):
                    start, end = m.span()
                    if start == end:
                        continue
                    score = base
                    if validate is not None:
                        valid = validate(text[start:end])
                        if valid is not None:
                            score = _MAX if valid else _MIN
                    if invalidate is not None and invalidate(text[start:end]):
                        score = _MIN
                    if score > _MIN:
                        found.append((start, end, score))
            except TimeoutError:  # as Presidio: the pattern's later matches are not looked for
                _log.warning("pattern %s of %s timed out; later matches lost", name, rec.name)
        return _remove_duplicates(found)

    return run


def _remove_duplicates(found: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """``EntityRecognizer.remove_duplicates`` for one entity's ``(start, end, score)``."""
    if len(found) < 2:
        return found
    kept: list[tuple[int, int, float]] = []
    active: list[tuple[int, int, float]] = []
    for r in sorted(set(found), key=lambda r: (r[0], r[0] - r[1], -r[2])):
        active = [f for f in active if f[1] >= r[0]]
        if any(r[0] >= f[0] and r[1] <= f[1] and r[2] <= f[2] for f in active):
            continue
        kept.append(r)
        active.append(r)
    return sorted(kept, key=lambda r: (-r[2], r[0], r[0] - r[1]))


def _iban_runner(rec: Any) -> Runner:
    """``IbanRecognizer.analyze`` (Presidio 2.2): a match ends at its last group that validates."""
    patterns = _compiled(rec)

    def run(text: str) -> list[tuple[int, int, float]]:
        found: list[tuple[int, int, float]] = []
        for rx, base, name, need in patterns:
            if need is not None and not any(x in text for x in need):
                continue
            try:
                for m in rx.finditer(text, timeout=_iban_module.REGEX_TIMEOUT_SECONDS):
                    start, end0 = m.span()
                    for group in range(rx.groups, 0, -1):
                        g_end = m.end(group)
                        end = g_end if g_end > 0 else end0
                        if start == end:
                            continue
                        valid = rec.validate_result(text[start:end])
                        score = base if valid is None else (_MAX if valid else _MIN)
                        if score > _MIN:
                            found.append((start, end, score))
                            break
            except TimeoutError:  # as Presidio: the pattern's later matches are not looked for
                _log.warning("pattern %s of %s timed out; later matches lost", name, rec.name)
        return found

    return run


class PatternDetector:
    """Trigger-gated Presidio detection of the pattern entities.

    Presidio's recognizers (their patterns, checksums and validators) are
    called directly, each on the stretches of the text its patterns can
    match (``_RUNS``), instead of through ``AnalyzerEngine.analyze`` over the
    whole text: the engine's per-call bookkeeping and the recognizers'
    scans of long texts were most of the pattern cost, and give the same
    results. The phone recognizer runs last and skips number windows that a
    validated card, IBAN, IP or SSN already covers (that longer span wins
    anyway).

    Args:
        entities: Presidio entity names to detect (subset of ``ENTITY_LABELS``).
        analyzer: A prebuilt offline ``AnalyzerEngine``; built if omitted.
    """

    def __init__(self, entities: Sequence[str] = tuple(ENTITY_LABELS), analyzer: Any = None) -> None:
        self.entities = tuple(e for e in entities if e in ENTITY_LABELS)
        self._analyzer = analyzer if analyzer is not None else shared_analyzer()
        self._artifacts = empty_artifacts(self._analyzer)
        self._recognizers: dict[str, list[Any]] = {
            e: [r for r in self._analyzer.registry.recognizers if e in r.supported_entities]
            for e in self.entities
        }
        self._runners: dict[str, list[Runner]] = {
            e: [recognizer_runner(r, self._artifacts) for r in recs]
            for e, recs in self._recognizers.items()
        }
        self.analyzed = 0

    def detect(self, text: str) -> list[Detection]:
        """Detections of the pattern entities in ``text`` (overlaps not resolved)."""
        wanted = triggered_entities(text, self.entities)
        if not wanted:
            return []
        self.analyzed += 1
        probe = text
        if "IBAN_CODE" in wanted and _IBAN_LOWER.search(text):
            # Same length, so offsets hold: upper-case the lower-case IBAN candidates.
            probe = _IBAN_LOWER.sub(lambda m: m.group().upper(), text)
        kept: list[Detection] = []
        phone = "PHONE_NUMBER" in wanted
        for entity in wanted:
            if entity == "PHONE_NUMBER":
                continue
            source = probe if entity == "IBAN_CODE" else text
            for start, end in _runs(entity, source):
                lo = max(0, start - _CONTEXT)
                window = source[lo : end + _CONTEXT]
                for run in self._runners[entity]:
                    for s, e, score in run(window):
                        s, e = s + lo, e + lo
                        if s < start or e > end:
                            continue
                        self._keep(kept, text, entity, s, e, score)
        if "CREDIT_CARD" in self.entities and has_digits(text, 13):
            cards = {(d.start, d.end) for d in kept if d.label == "CARD"}
            for s, e in named_cards(text):
                if (s, e) not in cards:
                    kept.append(Detection(s, e, "CARD", 0.6, "pattern"))
        if phone:
            covered = [(d.start, d.end) for d in kept if d.label != "EMAIL"]
            for rec, run in zip(
                self._recognizers["PHONE_NUMBER"], self._runners["PHONE_NUMBER"], strict=True
            ):
                if hasattr(rec, "analyze_windows"):
                    found = [
                        (r.start, r.end, r.score)
                        for r in rec.analyze_windows(text, covered, self._artifacts)
                    ]
                else:
                    found = run(text)
                for s, e, score in found:
                    self._keep(kept, text, "PHONE_NUMBER", s, e, score)
        return kept

    @staticmethod
    def _keep(kept: list[Detection], text: str, entity: str, s: int, e: int, score: float) -> None:
        if entity == "US_SSN" and score < SCORE_THRESHOLD:
            if _SSN_CONTEXT.search(text[max(0, s - _SSN_CONTEXT_WINDOW) : s]):
                score = 0.5
        if entity == "CREDIT_CARD" and not card_network_ok(text[s:e].translate(_NOT_DIGITS)):
            return  # Luhn passes one random number in ten: "F-20250312-0091", a pet's chip
        if entity == "PHONE_NUMBER" and (_isbn13(text[s:e]) or _LONG_DIGITS.match(text[s:e])):
            return  # "978-3-16-148410-0" is a book; 14+ digits without "+" are no dialled number
        if entity in ("PHONE_NUMBER", "IP_ADDRESS") and text[s] != "+" and _CODE_BEFORE.search(
            text, max(0, s - _CODE_WINDOW), s
        ):
            return  # "NDC 0093-4155-73", "LOT 2026-11-0447", "kod CN 0805 10 20", "build=7.3.118.2"
        if entity == "PHONE_NUMBER" and text[s] != "+" and _code_token_before(text, s):
            return  # "theory cert THC 0447 2291", "donation number G0925 26 183744 K"
        if entity == "PHONE_NUMBER" and _DATED_SERIAL.match(text[s:e]):
            return  # "2026-11-0447": a year and a month, then a serial
        if entity == "EMAIL_ADDRESS" and _message_id(text, s, e):
            return  # "<20261203.4471@mail.example>": a message's id (RFC 5322), no mailbox
        if entity == "PHONE_NUMBER" and text[s] != "+" and company_number(text, s, e):
            return  # "NIP spółdzielni 526-104-82-09": an organisation's number, by name and check
        if score >= SCORE_THRESHOLD:
            kept.append(Detection(s, e, ENTITY_LABELS[entity], score, "pattern"))


#: The header fields of RFC 5322 and RFC 2045 whose value is a message or part id, not a mailbox.
_MSG_ID_FIELD = re.compile(r"(?i)(?:message-?id|in-reply-to|references|content-id|resent-message-id)[\"']?[ \t]*[:=][^\n]*\Z")


def _message_id(text: str, s: int, e: int) -> bool:
    """An address in angle brackets that is a message id (RFC 5322 ``msg-id``): under a
    message-id field, or with a local part of digit groups and no letter (a generated id)."""
    if not (s > 0 and text[s - 1] == "<" and text[e : e + 1] == ">"):
        return False
    local = text[s:e].rpartition("@")[0]
    if not any(c.isalpha() for c in local) and any(c in ".-_$=" for c in local):
        return True  # digits in groups ("20261203.4471"); digits alone may be a mailbox (QQ)
    return _MSG_ID_FIELD.search(text, max(0, s - 200), s - 1) is not None


#: A code word right before a number makes it a code, not a phone or an address: lot and
#: batch numbers, product codes (NDC, HS/CN tariff codes, SKU, EAN), references, builds and
#: versions, in the languages redacted (only separators between the word and the number).
_CODE_BEFORE = re.compile(
    r"(?i)(?<![^\W\d_])(?:lot|batch|charge|charge-?nr|lotto|lote|partij|parti|ndc|hs|cn|hts|taric|sku|ean|"
    r"upc|gtin|isbn|issn|ref|order|invoice|ticket|serial|s/n|sn|part|model|build|version|ver|rev|"
    r"release|case|claim|policy|po|item|art|article|artikel|kod|code|código|codice|bestell|auftrag|"
    r"rechnung|facture|commande|pedido|factura|ordine|fattura|zamówienie|faktura|sipariş|tilaus|"
    r"lasku|beställning|company|registration|registered|registro|registre|register|handelsregister)"
    r"(?:[ \t]*(?:no\.?|nr\.?|n[º°o]\.?|number|num\.?|#|id))?[ \t]*[:#=.\-]?[ \t]*\(?\Z"
)
_CODE_WINDOW = 40
#: A token right before a number that makes the number part of a code: an acronym of three to
#: five capitals ("NPI 1447382910", "GRP 00419") or capitals and digits ("G0925 26 183744"),
#: with up to two digit groups of the same code between.
_CODE_TOKEN = re.compile(
    r"(?<![\w\-./])(?P<t>[A-Z]{3,5}|[A-Z]{1,4}\d{4,8})(?:[ ]\d{1,6}){0,2}[ \t]*[:#]?[ \t]?\Z"
)
#: Acronyms of a telephone line ("TEL", "GSM", "MOB"), which introduce a phone number.
_PHONE_ACRONYMS = frozenset("TEL TELF TLF TLFN TFN FAX MOB MOBIL CELL GSM SMS PHONE CALL DIAL".split())
_COMMON_ACRONYM_ZIPF = 3.5
#: Longer numbers after an unknown acronym may be a national id of a scheme no table names
#: ("CNS 700 4812 7391 0355", fifteen digits): left to the detectors.
_CODE_MAX_DIGITS = 12


def _code_token_before(text: str, s: int) -> bool:
    """A code token right before ``s`` (``_CODE_TOKEN``); an acronym counts when it is no
    telephone word, no frequent word of a language ("ON", "UK", "CALL"), no key of a personal
    datum (an id word: "BSN", "NIR") and the number after it has twelve digits or fewer."""
    m = _CODE_TOKEN.search(text, max(0, s - 28), s)
    if m is None:
        return False
    tok = m.group("t")
    if tok.isalpha():
        from flywheel.pii._keys import key_label
        from flywheel.pii._lexicon import zipf

        return (
            tok not in _PHONE_ACRONYMS
            and zipf(tok) < _COMMON_ACRONYM_ZIPF
            and key_label(tok) is None  # an id word ("BSN", "NIR", "PPS"): a person's number
            and sum(c.isdigit() for c in text[s : s + 24]) <= _CODE_MAX_DIGITS
        )
    # capitals and four digits or more, first of its groups ("IT02 L123 4512 ...": an IBAN's
    # fourth character on, judged by the IBAN recognizer and, when its check fails, as digits)
    before = text[max(0, m.start("t") - 12) : m.start("t")].split()
    return sum(c.isdigit() for c in tok) >= 4 and not (before and any(c.isdigit() for c in before[-1]))
_DATED_SERIAL = re.compile(r"\A(?:19|20)\d\d-(?:0[1-9]|1[0-2])-\d{3,6}\Z")
_NOT_DIGITS = str.maketrans("", "", "".join(chr(c) for c in range(32, 127) if not chr(c).isdigit()))
#: Card networks by issuer prefix and length (ISO/IEC 7812 ranges as the networks publish
#: them, with JCB's and Maestro's older ranges): Visa, Mastercard (51-55 and 2221-2720),
#: American Express, Diners Club, Discover, JCB, UnionPay, Maestro, Troy.
_NETWORKS: tuple[tuple[re.Pattern[str], tuple[int, ...]], ...] = (
    (re.compile(r"4"), (13, 16, 19)),
    (re.compile(r"5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720"), (16,)),
    (re.compile(r"3[47]"), (15,)),
    (re.compile(r"30[0-5]|3095|36|3[89]"), tuple(range(14, 20))),
    (re.compile(r"6011|64[4-9]|65"), tuple(range(16, 20))),
    (re.compile(r"35"), tuple(range(16, 20))),
    (re.compile(r"2131|1800"), (15,)),  # JCB's older 15-digit ranges
    (re.compile(r"62|81"), tuple(range(16, 20))),
    (re.compile(r"50|5[6-9]|6|0604"), tuple(range(12, 20))),
    (re.compile(r"9792"), (16,)),  # Troy (Türkiye)
)


#: The word card in the languages redacted (payment, bank and credit cards in prose).
_CARD_WORDS = (
    r"card|carte|tarjeta|karte|kreditkarte|carta|cartão|cartao|kaart|kort|kortet|kortti|karta|"
    r"kartę|karte|kártya|kartı|karti|kartu"
)
#: A payment card named right before a number (PCI DSS: a primary account number mistyped is
#: still card data): a possessive or "credit/debit" with the word card, a bank card's own
#: name, or a card network; at most a few words between, none with a digit.
_CARD_CONTEXT = re.compile(
    rf"""(?ix)(?<![^\W\d_])(?:
        (?:my|your|his|her|our|their|mi|tu|su|mon|ma|ton|ta|son|sa|notre|votre|mein|meine|meiner|
           meinen|deine|seine|ihre|la[ ]mia|il[ ]mio|mia|minha|meu|mijn|min|mitt|moja|moją|mój)
        [ ](?:(?:credit|debit|crédito|débito|bank|business|company)[ ])?(?:{_CARD_WORDS})
      | (?:credit|debit)[ ]?card | carte[ ](?:bancaire|bleue|de[ ]crédit|de[ ]paiement)
      | tarjeta[ ]de[ ](?:crédito|débito) | kredit(?:karte|kort|kortti) | bankkarte | debitkarte
      | girocard | carta[ ]di[ ]credito | cartão[ ]de[ ](?:crédito|débito) | creditcard | betaalpas
      | visa | mastercard | master[ ]card | amex | american[ ]express | maestro | diners(?:[ ]club)?
    )(?![^\W\d_])[^\n.;!?\d]{{0,20}}\Z"""
)
#: A card number's layouts: four groups of four (a fifth of three for 19 digits), Amex's
#: 4-6-5 and Diners' 4-6-4, or 13 to 19 digits in one run.
_CARD_LAYOUT = re.compile(
    r"(?<![\d\-.,/])(?:\d{4}(?:([ \-])\d{4})(?:\1\d{4}){2}(?:\1\d{3})?|\d{4}([ \-])\d{6}\2\d{4,5}|\d{13,19})"
    r"(?![\d]|[\-.,/]\d)"
)


def named_cards(text: str) -> list[tuple[int, int]]:
    """Numbers in a card's layout right after a payment card is named (``_CARD_CONTEXT``),
    whatever their check digit; a number in that layout with no such words stays a number."""
    out = []
    for m in _CARD_LAYOUT.finditer(text):
        if _CARD_CONTEXT.search(text, max(0, m.start() - 60), m.start()):
            out.append((m.start(), m.end()))
    return out


def card_network_ok(digits: str) -> bool:
    """Whether a Luhn-valid digit string has the prefix and length of a card network."""
    return any(rx.match(digits) and len(digits) in lengths for rx, lengths in _NETWORKS)


_LONG_DIGITS = re.compile(r"\A\d{14,}\Z")
_ISBN13 = re.compile(r"\A97[89][- ]?\d{1,5}[- ]?\d{1,7}[- ]?\d{1,7}[- ]?\d\Z")


def _isbn13(s: str) -> bool:
    """A hyphenated or plain ISBN-13 (prefix 978/979 and its check digit; python-stdnum)."""
    if not _ISBN13.match(s):
        return False
    from stdnum import isbn

    return isbn.is_valid(s)


# The patterns above, each alternation as a prefix tree: the same matches, faster (_gate).
prefix_trees(globals())
