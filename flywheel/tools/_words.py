"""Words of a tool name in any case style, and their dictionary forms.

``CashAppSendPayment``, ``transfer_funds``, ``create-issue``, ``github.repos.delete``,
``HTTPGetJSON`` and ``getURLContent`` all split into lower-case words
(``cash app send payment``, ``http get json``, ``get url content``).
"""

from __future__ import annotations

import re
from collections.abc import Container

_SPLIT = re.compile(r"[^A-Za-z0-9]+")
#: An acronym run (``HTTP`` in ``HTTPGet``), a capitalised or lower-case word, or digits.
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_PROSE = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def split_name(name: str) -> list[str]:
    """Lower-case words of an identifier in snake, kebab, dotted, slashed or camel case."""
    out: list[str] = []
    for chunk in _SPLIT.split(name or ""):
        out.extend(w.lower() for w in _CAMEL.findall(chunk))
    return out


def prose_words(text: str) -> list[str]:
    """Lower-case words of a description, identifiers in it split too."""
    out: list[str] = []
    for tok in _PROSE.findall(text or ""):
        out.extend(split_name(tok))
    return out


def lemma(word: str, known: Container[str]) -> str | None:
    """The dictionary form of ``word`` found in ``known`` (plural, 3rd person, -ing, -ed)."""
    if word in known:
        return word
    candidates = []
    if word.endswith("ies"):
        candidates.append(word[:-3] + "y")
    if word.endswith("es"):
        candidates.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss"):
        candidates.append(word[:-1])
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stem = word[: -len(suffix)]
            candidates += [stem, stem + "e"]
            if len(stem) > 2 and stem[-1] == stem[-2]:
                candidates.append(stem[:-1])  # "dropped" -> "drop"
    for c in candidates:
        if c in known:
            return c
    return None
