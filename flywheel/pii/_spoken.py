"""Numbers spoken in words: phone numbers and house numbers in voice transcripts.

A voice agent's transcript writes ``zéro six douze trente-quatre cinquante-six``
or ``null eins fünf zwei drei acht``: the phone detector, reading digits, sees
nothing. ``text2num`` (``alpha2digit``; English, French, German, Spanish, Italian,
Portuguese, Dutch) turns the number words into digits; the other detectors run
on the converted text, and what they find there (a phone, an address with its
house number) is mapped back, word for word, onto the original text.

A text is converted only when it holds at least ``MIN_DIGIT_WORDS`` of one
language's digit words (a cheap gate: prose with a number or two written out is
not read twice), and a detection counts only where the conversion changed words
inside it, so detections the digits alone already give are left to the caller. A
spoken phone number needs a phone word before it (``number``, ``Nummer``,
``numéro``...): counting aloud is no phone number.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from functools import lru_cache

from flywheel.pii._types import Detection

#: The digit words (0-9, and the ways a digit is said in a phone number) of each language
#: text2num reads: the gate that decides whether a text is converted, and in which language.
_DIGIT_WORDS = {
    "en": "zero oh one two three four five six seven eight nine double",
    "fr": "zéro zero un une deux trois quatre cinq six sept huit neuf",
    "de": "null eins zwei zwo drei vier fünf funf sechs sieben acht neun",
    "es": "cero uno una dos tres cuatro cinco seis siete ocho nueve",
    "it": "zero uno due tre quattro cinque sei sette otto nove",
    "pt": "zero um uma dois duas três tres quatro cinco seis sete oito nove",
    "nl": "nul een één twee drie vier vijf zes zeven acht negen",
}
_WORDS = {lang: frozenset(w.split()) for lang, w in _DIGIT_WORDS.items()}
#: How digits are said in a number and not as a number ("oh", "double nine", "doppel").
_SPOKEN_ONLY = frozenset("oh double triple doppel doble doppio".split())
#: Digit words of one language a text needs before it is converted.
MIN_DIGIT_WORDS = 5
#: Characters before a spoken phone number where a phone word must be ("my number is").
_PHONE_WORD_WINDOW = 40
#: Call-back words a caller says before a number, beyond the phone words every reader
#: uses (too common as "reminder"/"call for tenders" before an order number to be those).
_CALL_BACK = re.compile(r"(?i)\b(?:r?appel|anruf|ruf\b|zurückruf|richiam|devolv)")
#: Labels a spoken number can complete.
SPOKEN_LABELS = frozenset(("PHONE", "ADDRESS"))
_TOKEN = re.compile(r"\S+")


#: Each digit word and the languages it belongs to (one pass over a text's words).
_LANGS_OF: dict[str, list[str]] = {}
for _lang, _vocab in _WORDS.items():
    for _w in _vocab:
        _LANGS_OF.setdefault(_w, []).append(_lang)


def _language(text: str) -> str | None:
    """The language whose digit words the text holds most of, if enough."""
    counts: dict[str, int] = {}
    hits = 0
    for w in text.lower().replace("-", " ").split():
        langs = _LANGS_OF.get(w.strip(".,;:!?()\"'"))
        if langs:
            hits += 1
            for lang in langs:
                counts[lang] = counts.get(lang, 0) + 1
    if hits < MIN_DIGIT_WORDS:
        return None
    best = max(counts, key=lambda k: (counts[k], k))
    return best if counts[best] >= MIN_DIGIT_WORDS else None


@lru_cache(maxsize=1)
def _converter() -> Callable[[str, str], str] | None:
    try:
        from text_to_num import alpha2digit
    except ImportError:  # a declared dependency; a broken install loses this reader only
        return None
    return alpha2digit


def spoken_numbers(text: str, detect: Callable[[str], list[Detection]]) -> list[Detection]:
    """Phones and addresses whose numbers are spoken in words, as spans of ``text``.

    Args:
        text: The original text.
        detect: The detectors to run on the converted text.
    """
    if len(text) < 20:
        return []
    lang = _language(text)
    convert = _converter()
    if lang is None or convert is None:
        return []
    converted = convert(text, lang)
    if converted == text:
        return []
    src = [m.span() for m in _TOKEN.finditer(text)]
    dst = [m.span() for m in _TOKEN.finditer(converted)]
    matcher = difflib.SequenceMatcher(
        None, [text[a:b] for a, b in src], [converted[a:b] for a, b in dst], autojunk=False
    )
    # converted token index -> the original tokens it came from, for tokens conversion changed
    origin: dict[int, tuple[int, int]] = {}
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "replace" and i2 > i1:
            for j in range(j1, j2):
                origin[j] = (i1, i2 - 1)
    if not origin:
        return []
    from flywheel.pii._engine import _PHONE_CONTEXT_RX  # loaded with the detectors already

    out: list[Detection] = []
    for det in detect(converted):
        if det.label not in SPOKEN_LABELS:
            continue
        lead = converted[max(0, det.start - _PHONE_WORD_WINDOW) : det.start]
        if det.label == "PHONE" and not (_PHONE_CONTEXT_RX.search(lead) or _CALL_BACK.search(lead)):
            continue  # counting aloud ("one two three ... ten") is no phone number
        toks = [j for j, (a, b) in enumerate(dst) if a < det.end and b > det.start]
        if not any(j in origin for j in toks):
            continue  # found in words the conversion did not touch: the caller finds it too
        spans = [origin[j] if j in origin else (_same_token(matcher, j),) * 2 for j in toks]
        lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
        if det.label == "PHONE":  # words the converter left ("oh", "double") are digits too
            vocab = _WORDS[lang] | _SPOKEN_ONLY
            while lo > 0 and _bare(text, src[lo - 1]) in vocab:
                lo -= 1
            while hi + 1 < len(src) and _bare(text, src[hi + 1]) in vocab:
                hi += 1
        out.append(Detection(src[lo][0], src[hi][1], det.label, det.score, "spoken"))
    return out


def _bare(text: str, span: tuple[int, int]) -> str:
    return text[span[0] : span[1]].strip(".,;:!?()\"'").lower()


def _same_token(matcher: difflib.SequenceMatcher[str], j: int) -> int:
    """The original token index of converted token ``j`` where conversion kept it."""
    for a, b, size in matcher.get_matching_blocks():
        if b <= j < b + size:
            return a + (j - b)
    return 0
