"""What a detector reports, and the entity types it knows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: Policy entity name -> the label used in pseudonyms, reports and findings.
ENTITIES: dict[str, str] = {
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "CREDIT_CARD": "CARD",
    "IBAN_CODE": "IBAN",
    "IP_ADDRESS": "IP",
    "US_SSN": "SSN",
    "PERSON": "NAME",
    "STREET_ADDRESS": "ADDRESS",
    "DATE_OF_BIRTH": "DOB",
    "NATIONAL_ID": "NATIONAL_ID",
    "SECRET": "SECRET",
}


@dataclass(frozen=True, slots=True)
class Detection:
    """One entity occurrence in a text (offsets into that text).

    Attributes:
        start: First character.
        end: One past the last character.
        label: ``EMAIL``, ``NAME``, ``SECRET``... (see ``ENTITIES``).
        score: Confidence; longer spans win first, then higher scores.
        rule: Which detector found it (``pattern``, ``secret``, ``name``...).
    """

    start: int
    end: int
    label: str
    score: float
    rule: str = "pattern"


def longest_first(found: list[Detection]) -> list[Detection]:
    """Non-overlapping spans, longest first, then by score, ordered by position.

    Longest first: a whole email beats a name found inside it, a connection
    string's password beats nothing, a street address beats the house number
    a phone matcher saw in it.
    """
    chosen: list[Detection] = []
    for det in sorted(found, key=lambda d: (-(d.end - d.start), -d.score, d.start)):
        if all(det.end <= c.start or det.start >= c.end for c in chosen):
            chosen.append(det)
    chosen.sort(key=lambda d: d.start)
    return chosen


_ASCII_DIGITS = str.maketrans("", "", "0123456789")


def has_digits(text: str, n: int) -> bool:
    """``sum(c.isdigit() for c in text) >= n``, without a Python step per character.

    ASCII digits are counted in C; only a non-ASCII text short of ``n`` of them is
    counted again (``isdigit`` also holds for other scripts' digits).
    """
    if len(text) - len(text.translate(_ASCII_DIGITS)) >= n:
        return True
    return not text.isascii() and sum(c.isdigit() for c in text) >= n


#: ``on_text(decoded, key)`` returns the (possibly redacted) decoded text.
OnText = Callable[[str, "str | None"], str]


@dataclass(frozen=True)
class Segment:
    """An encoded stretch ``text[start:end]`` and how to rewrite it (``flywheel.pii._decode``)."""

    start: int
    end: int
    kind: str
    rewrite: Callable[[OnText], str]
