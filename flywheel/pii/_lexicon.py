"""Is a word an ordinary word of one of the redacted languages? (for telling names from prose)

Why: names in agent traces are often in no first-name list ("ask Oduya",
"Refill for Cordelia Vantongeren"), and capitalised ordinary words are not
names ("Portrait of a Young Woman", "Golden Age Revisited", "Fixed Saver").
A word absent from the common vocabulary of every language we redact is a
proper noun far more often than not, so the name rules use this test next to
the first-name list.

Choice: ``wordfreq`` (Robyn Speer et al., MIT, data shipped in the wheel, no
network): its "small" word lists hold every word with a frequency of at least
one per million (Zipf >= 3) in each language, built from Wikipedia,
subtitles, news, books and web text. We take English, German, French,
Spanish, Italian, Dutch and Portuguese. A German-style compound of two common
words of four letters or more (``Wareneingang``, ``Lindenallee``) counts as common too.
"""

from __future__ import annotations

import math
import unicodedata
from functools import lru_cache

#: Languages whose common words are not names.
LANGUAGES: tuple[str, ...] = ("en", "de", "fr", "es", "it", "nl", "pt")
_MIN_PART = 4


@lru_cache(maxsize=1)
def _zipf_table() -> dict[str, float]:
    """Lower-cased word -> highest Zipf frequency over ``LANGUAGES`` (loaded once, ~0.7 s)."""
    from wordfreq import get_frequency_dict

    table: dict[str, float] = {}
    for lang in LANGUAGES:
        for word, freq in get_frequency_dict(lang, wordlist="small").items():
            if freq <= 0:
                continue
            z = math.log10(freq) + 9
            if z > table.get(word, 0.0):
                table[word] = z
    return table


def _fold(word: str) -> str:
    return unicodedata.normalize("NFC", word.strip(".'’").lower())


def strip_marks(word: str) -> str:
    """``word`` without its combining marks ("Íñigo" -> "Inigo", "Mäkelä" -> "Makela")."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


@lru_cache(maxsize=65536)
def zipf(word: str) -> float:
    """The word's highest Zipf frequency in any of ``LANGUAGES`` (0 when in none's common list)."""
    return _zipf_table().get(_fold(word), 0.0)


@lru_cache(maxsize=65536)
def is_common(word: str) -> bool:
    """An ordinary word: in a common list, or (each part of a hyphenated word, or) a compound
    of two common words of four letters or more."""
    w = _fold(word)
    if not w:
        return True
    table = _zipf_table()
    if w in table:
        return True
    if "-" in w:
        return all(is_common(p) for p in w.split("-") if p)
    if len(w) >= 2 * _MIN_PART + 1:
        for k in range(_MIN_PART, len(w) - _MIN_PART + 1):
            head, tail = w[:k], w[k:]
            if head in table and (tail in table or (tail[:1] == "s" and tail[1:] in table)):
                return True
    return False
