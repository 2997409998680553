"""Offline Presidio analyzer: pattern recognizers over a blank spaCy pipeline.

Why this module exists: ``AnalyzerEngine()`` with defaults downloads a spaCy
model, and Presidio's email validation calls ``tldextract``, which fetches the
public suffix list over the network with no timeout. Both are forbidden at run
time here, so the engine is built by hand: a blank English pipeline (enough
for tokens and context words; no NER) and only the pattern recognizers we
chose. ``tldextract`` is pointed at its bundled snapshot *before* Presidio is
imported.

Recognizer choice (measured, see NOTES.md "Presidio, offline"): the phone
recognizer runs ``phonenumbers`` once per region and was ~85 % of the time
over whole texts, so it runs only on phone-shaped windows of texts with at
least seven digits (see ``_patterns.triggered_entities``), which makes the
eight regions of the languages we redact affordable.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from collections.abc import Sequence
from typing import Any

# Must happen before anything imports tldextract (presidio does at import time).
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
os.environ.setdefault(
    "TLDEXTRACT_CACHE", os.path.join(tempfile.gettempdir(), "flywheel-tldextract")
)

import phonenumbers  # noqa: E402
import spacy  # noqa: E402
import tldextract  # noqa: E402
from presidio_analyzer import (  # noqa: E402
    AnalyzerEngine,
    EntityRecognizer,
    Pattern,
    PatternRecognizer,
    RecognizerRegistry,
)
from presidio_analyzer.context_aware_enhancers import ContextAwareEnhancer  # noqa: E402
from presidio_analyzer.nlp_engine import NlpArtifacts, SpacyNlpEngine  # noqa: E402
from presidio_analyzer.predefined_recognizers import (  # noqa: E402
    CreditCardRecognizer,
    EmailRecognizer,
    IbanRecognizer,
    IpRecognizer,
    PhoneRecognizer,
    UsSsnRecognizer,
)
from spacy.language import Language  # noqa: E402
from spacy.tokens import Doc  # noqa: E402

# Belt and braces: even if the environment variable was set to something else
# by the caller, the module-level extractor used by Presidio never goes online.
tldextract.extract = tldextract.TLDExtract(suffix_list_urls=())  # type: ignore[assignment]

#: Phone regions kept (each region is one phonenumbers pass over the text).
PHONE_REGIONS: tuple[str, ...] = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "PT")

#: Presidio entity names this engine can report.
ENGINE_ENTITIES: tuple[str, ...] = (
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IBAN_CODE",
    "IP_ADDRESS",
    "US_SSN",
)

#: Results below this score are dropped. Phone matches score 0.4, the
#: separated-SSN pattern 0.5, validated cards/IBANs 1.0; the "very weak"
#: (0.05) SSN shapes and unvalidated patterns stay out unless context words
#: ("ssn", "phone", ...) lift them.
SCORE_THRESHOLD = 0.35


@Language.component("flywheel_lower_lemma")
def _lower_lemma(doc: Doc) -> Doc:
    """Lemma = lower-cased token, so Presidio's context words ("ssn", "phone") still count."""
    for token in doc:
        token.lemma_ = token.lower_
    return doc


class BlankSpacyNlpEngine(SpacyNlpEngine):
    """A spaCy NLP engine over ``spacy.blank("en")``: tokens only, no download.

    A blank pipeline has no lemmas, which silently disables Presidio's
    context enhancement; a one-line component fills them with the lower-cased
    text.
    """

    def __init__(self) -> None:
        super().__init__(models=[{"lang_code": "en", "model_name": "blank:en"}])

    def load(self) -> None:  # noqa: D102 - see class docstring
        nlp = spacy.blank("en")
        nlp.add_pipe("flywheel_lower_lemma")
        self.nlp = {"en": nlp}  # type: ignore[assignment]


class NoContextEnhancer(ContextAwareEnhancer):
    """Leaves scores as the recognizers gave them.

    Presidio's lemma context enhancer (plus the spaCy tokenisation it needs)
    was ~45 % of analyzer time here; the one case where context decides --
    a bare nine-digit number after "SSN" -- is handled by a cheap rule in
    ``_patterns`` instead.
    """

    def __init__(self) -> None:
        super().__init__(0.0, 0.0, 0, 0)

    def enhance_using_context(  # noqa: D102 - see class docstring
        self,
        text: str,
        raw_results: list[Any],
        nlp_artifacts: Any,
        recognizers: list[Any],
        context: list[str] | None = None,
    ) -> list[Any]:
        return raw_results


def empty_artifacts(engine: AnalyzerEngine) -> NlpArtifacts:
    """NLP artifacts with no tokens: pass to ``analyze`` to skip spaCy (patterns need none)."""
    return NlpArtifacts(
        entities=[],
        tokens=[],  # type: ignore[arg-type]
        tokens_indices=[],
        lemmas=[],
        nlp_engine=engine.nlp_engine,
        language="en",
    )


#: Stretches of text that could hold a phone number: digits with phone punctuation
#: (spaces, dots, dashes, slashes, parentheses), an optional +/( lead and extension.
_PHONE_WINDOW = re.compile(
    r"[+(]{0,2}\d[\d \t().\-/]{4,28}\d(?:\s?(?:x|ext\.?|#)\s?\d{1,6})?", re.IGNORECASE
)
_NOT_DIGITS = str.maketrans("", "", "0123456789")
# Number shapes that are not phones: dates (2026-05-01, 14/03/2026, 01.05.2026).
_DATE_LIKE = re.compile(r"\A(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})\b")
#: A bare digit run (no +, no separators) is a phone only after one of these words.
PHONE_CONTEXT: tuple[str, ...] = (
    "phone",
    "call",
    "tel",
    "mobile",
    "cell",
    "reach",
    "text",
    "sms",
    "whatsapp",
    "fax",
    "contact",
    "number",
    "dial",
    "ring",
    # the same in more languages (a word start; each is long enough not to start other words)
    "mobil",
    "handy",
    "natel",
    "telef",
    "telèf",
    "teléf",
    "telep",
    "puhelin",
    "τηλ",
    "κινητ",
    "celul",
    "móvil",
    "movil",
    "mòbil",
    "cellul",
    "numer",
    "nummer",
    "número",
    "numéro",
    "kontakt",
    "contact",
    "contatt",
    "bellen",
    "llam",
    "truc",
    "chiam",
    "ligar",
    "ligue",
    "zadzwo",
    "volej",
    "soita",
    "hotline",
    "vakttelefon",
)
#: Short phone words, matched as whole words only ("tlf", "hp", "wa", "mob", "suna").
PHONE_SHORT_WORDS: tuple[str, ...] = ("tlf", "tel", "hp", "wa", "mob", "suna", "sună", "puh")
_PHONE_CONTEXT_WINDOW = 40
#: A phone word at a word start ("Tel.", "mobile", "call"), not inside one ("Artikel").
_PHONE_CONTEXT_RX = re.compile(
    rf"(?i)\b(?:{'|'.join(PHONE_CONTEXT)})|\b(?:{'|'.join(PHONE_SHORT_WORDS)})\b"
)


def _is_phone_shaped(text: str, start: int, end: int) -> bool:
    """Precision rules on a phonenumbers match (leniency POSSIBLE accepts any right length).

    Reject: a number glued to an identifier (``O-99812345``, ``1Z999...``,
    ``INV-2026-000123``) or followed by a time (``2026-05-01T10``); a date;
    a bare digit run (``1764512345``, ``12345678``) unless a phone word
    ("call", "phone", "reach"...) comes shortly before it.
    """
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    if text[start] == "+" and not before.isalnum():
        before = " "  # "+44 ..." is a phone even inside a path or a reference
    if before.isalnum() or before in "-_/.:#" or after.isalnum() or after in "_/":
        return False
    if after in ".,:" and text[end + 1 : end + 2].isdigit():
        return False  # a build or version number (20250313.4), a decimal, a time (12:30)
    number = text[start:end]
    if _DATE_LIKE.match(number) or _ENDS_WITH_DATE.search(number):
        return False
    groups = number.split(".")
    if len(groups) > 1 and all(g.isdigit() for g in groups):
        # Dots only: a phone is 3.3.4 (North America) or pairs (01.23.45.67.89),
        # a version or build id is anything else (4.10.07030, 3.11.9).
        sizes = [len(g) for g in groups]
        return sizes == [3, 3, 4] or (len(sizes) >= 4 and all(n == 2 for n in sizes[1:]))
    trunk = number.lstrip("(").startswith(("0", "+"))
    if "/" in number and not trunk:
        return False  # "2025/4471", "1184/2025": a slash follows an area code, which has its 0
    if number.isdigit() or (
        not trunk and sum(c.isdigit() for c in number) <= 8 and not _NANP_LOCAL.match(number)
    ):
        # A bare digit run, or a short number with neither a trunk 0 nor a +: every national
        # plan we redact writes a short number with its 0 (North America's 555-0187 aside).
        lead = text[max(0, start - _PHONE_CONTEXT_WINDOW) : start]
        return _PHONE_CONTEXT_RX.search(lead) is not None
    return True


_NANP_LOCAL = re.compile(r"\A\d{3}[-. ]\d{4}\Z")
#: A date (day, month, four-digit year) ending a number: a date range ("16.-18.1.2027").
_ENDS_WITH_DATE = re.compile(r"(?<!\d)(?:[12]\d|3[01]|0?[1-9])([./])(?:1[0-2]|0?[1-9])\1(?:19|20)\d\d\Z")
#: Digits in groups of four, three groups or more, with no trunk 0 or "+": the layout of
#: card, account, meter and loyalty numbers; no national plan writes a phone this way.
_CARD_LAYOUT = re.compile(r"\A[1-9]\d{3}(?:([ \-])\d{4})(?:\1\d{4})+(?:\1\d{1,3})?\Z")


_WHOLE_DATE = re.compile(
    r"\A(?:\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?|\d{1,2}[./]\d{1,2}[./]\d{4})\Z"
)


def _window_can_hold_phone(text: str, start: int, end: int) -> bool:
    """False when no match inside ``text[start:end]`` could pass ``_is_phone_shaped``.

    Exact shortcuts of those rules, decided before any ``phonenumbers`` pass
    (a match starts with a digit, ``+`` or ``(`` and ends with a digit):
    some position must be a start the "glued to an identifier" rule allows
    and some digit an end it allows; a window that is one run of digits can
    only match whole, so the rules apply to the whole window; a window that
    is a date (or a date and a time) is a date.
    """
    window = text[start:end]
    if window.isdigit() or _DOTTED.match(window):
        # Digit groups joined by dots only (an IP, a version): a match inside stops at a
        # dot, which the glued-to-an-identifier rule rejects, so only the whole can pass.
        return _is_phone_shaped(text, start, end)
    if _WHOLE_DATE.match(window):
        return False
    return any(_start_ok(text, p) for p in range(start, end) if text[p] in _LEADS) and any(
        _end_ok(text, q) for q in range(start + 1, end + 1) if text[q - 1].isdigit()
    )


_LEADS = frozenset("+(0123456789")
_DOTTED = re.compile(r"\A\d+(?:\.\d+)+\Z")


def _start_ok(text: str, p: int) -> bool:
    before = text[p - 1] if p > 0 else " "
    if text[p] == "+" and not before.isalnum():
        return True
    return not (before.isalnum() or before in "-_/.:#")


def _end_ok(text: str, q: int) -> bool:
    after = text[q] if q < len(text) else " "
    if after.isalnum() or after in "_/":
        return False
    return not (after in ".,:" and text[q + 1 : q + 2].isdigit())


class WindowedPhoneRecognizer(PhoneRecognizer):
    """Presidio's phone recognizer, run only on the text regions that can hold a number.

    ``phonenumbers``' matcher walks the whole text once per region and was
    ~80 % of analyzer time; it gives the same matches when run on each
    phone-shaped window (digits with phone punctuation, at least seven
    digits), shifted back to text offsets. A window in international form
    (``+``) parses the same under any region, so one pass suffices; any
    other tries the regions in order and stops at the first whose match
    passes the precision rules. Matches then pass the precision rules of ``_is_phone_shaped``
    (we use leniency POSSIBLE for recall).
    """

    def analyze(  # noqa: D102 - see class docstring
        self, text: str, entities: list[str], nlp_artifacts: Any = None
    ) -> list[Any]:
        return self.analyze_windows(text, (), nlp_artifacts)

    def analyze_windows(
        self, text: str, covered: Sequence[tuple[int, int]], nlp_artifacts: Any = None
    ) -> list[Any]:
        """Phone matches in ``text``, skipping windows inside a ``covered`` span.

        ``covered`` holds spans another recognizer validated (a card, an IBAN,
        an IP, an SSN): a phone match inside one is shorter, so it would lose
        to it. Windows that no match could survive the precision rules in
        are skipped too (``_window_can_hold_phone``), before any region pass.
        """
        results = []
        for m in _PHONE_WINDOW.finditer(text):
            window = m.group()
            if len(window) - len(window.translate(_NOT_DIGITS)) < 7:
                continue
            ws, we = m.span()
            if any(s <= ws and we <= e for s, e in covered) or _CARD_LAYOUT.match(window):
                continue
            if not _window_can_hold_phone(text, ws, we):
                continue
            international = window.lstrip("(").startswith("+")
            best: list[Any] = []
            for region in self.supported_regions[:1] if international else self.supported_regions:
                kept = []
                for match in phonenumbers.PhoneNumberMatcher(
                    window, region, leniency=self.leniency
                ):
                    r = self._get_recognizer_result(match, window, region, nlp_artifacts)
                    r.start += ws
                    r.end += ws
                    if _is_phone_shaped(text, r.start, r.end):
                        kept.append(r)
                if sum(r.end - r.start for r in kept) > sum(r.end - r.start for r in best):
                    best = kept
                    # a region whose match spans the window wins; a shorter one (a local
                    # number inside a national one: "2345678" of "0171 2345678") waits
                    if len(kept) == 1 and kept[0].start == ws and kept[0].end == we:
                        break
            results += best
        return EntityRecognizer.remove_duplicates(results)


@functools.lru_cache(maxsize=4)
def shared_analyzer(phone_regions: tuple[str, ...] = PHONE_REGIONS) -> AnalyzerEngine:
    """One analyzer per process and region set (building one costs ~0.5 s)."""
    return build_analyzer(phone_regions)


def build_analyzer(phone_regions: Sequence[str] = PHONE_REGIONS) -> AnalyzerEngine:
    """Build an offline ``AnalyzerEngine`` with the chosen pattern recognizers.

    Args:
        phone_regions: ISO regions the phone recognizer tries, in order.

    Returns:
        An engine whose ``analyze`` never touches the network.
    """
    recognizers: list[Any] = [
        EmailRecognizer(),
        # Presidio validates the top-level domain against the public suffix list,
        # which drops mailboxes at reserved and internal domains (RFC 2606/6761
        # .example, .test, .internal, .local, .corp); those are people too.
        PatternRecognizer(
            supported_entity="EMAIL_ADDRESS",
            patterns=[
                Pattern(
                    "Email any domain",
                    r"(?<![\w.+\-:])(?<!//)[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,62}\.)+[A-Za-z]{2,24}(?![\w\-])",
                    0.5,
                )
            ],
            name="EmailAnyDomainRecognizer",
        ),
        # Leniency POSSIBLE (length check) instead of Presidio's VALID: VALID
        # drops numbers whose area code is unassigned, which is most invented
        # (and many mistyped) numbers; over-redacting a number is the safe side.
        WindowedPhoneRecognizer(
            supported_regions=tuple(phone_regions), leniency=phonenumbers.Leniency.POSSIBLE
        ),
        # "00" international prefix written without separators (0049301234567).
        PatternRecognizer(
            supported_entity="PHONE_NUMBER",
            patterns=[Pattern("Phone 00-prefix", r"(?<![\d.])00[1-9]\d{8,12}(?!\d|\.\d)", 0.4)],
            name="PhoneIntlPrefixRecognizer",
        ),
        CreditCardRecognizer(),
        # Presidio's card pattern stops at 17 digits and misses the 2-series
        # Mastercard range and Troy (9792); this one covers 12-19 digit numbers starting 2-6.
        # Luhn validation (inherited) keeps random digit runs out.
        CreditCardRecognizer(
            patterns=[Pattern("Card 13-19 digits", r"\b(?:[2-6]\d{3}|9792)(?:[- ]?\d){8,15}\b", 0.3)],
            name="CreditCardLongRecognizer",
        ),
        IbanRecognizer(),
        IpRecognizer(),
        UsSsnRecognizer(),
    ]
    registry = RecognizerRegistry(recognizers=recognizers, supported_languages=["en"])
    return AnalyzerEngine(
        registry=registry,
        nlp_engine=BlankSpacyNlpEngine(),
        supported_languages=["en"],
        default_score_threshold=SCORE_THRESHOLD,
        context_aware_enhancer=NoContextEnhancer(),
    )
