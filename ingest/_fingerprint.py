"""Salted fingerprints of normalised values, so provenance survives redaction.

Provenance is inferred on fingerprints, never on raw values: the same code
resolves a raw trace and its redacted copy, as long as the fingerprints were
computed at ingest, before any masking. Two families per value:

- ``exact``: the verbatim text (and verbatim token n-grams of longer texts);
- ``norm``: after normalisation -- case folded, whitespace collapsed, number
  formats unified (``1,100.00`` -> ``1100``), spaces removed inside
  identifier-like tokens (``GB29 NWBK 6016`` -> ``gb29nwbk6016``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

_WS = re.compile(r"\s+")
_NUM = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")
_TOKEN = re.compile(r"[\w@.+:/<>-]+", re.UNICODE)
#: Longest token n-gram fingerprinted inside a long text.
MAX_NGRAM = 12


def normalise(value: Any) -> str:
    """The canonical text of a leaf value (see the module docstring)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _number(float(value))
    text = _WS.sub(" ", str(value)).strip().casefold()
    bare = text.strip("$€£ ")
    if _NUM.match(bare):
        return _number(float(bare.replace(",", "")))
    if " " in text and all(len(t) <= 6 and t.isalnum() for t in text.split(" ")) and any(
        c.isdigit() for c in text
    ):
        return text.replace(" ", "")  # grouped identifiers: IBANs, card numbers
    return text


def _number(x: float) -> str:
    if x == int(x) and abs(x) < 1e18:
        return str(int(x))
    return repr(round(x, 10))


def fingerprint(text: str, salt: bytes) -> int:
    """A 63-bit keyed BLAKE2b hash (fits ClickHouse UInt64 and Python int)."""
    h = hashlib.blake2b(text.encode(), digest_size=8, key=salt[:64]).digest()
    return int.from_bytes(h, "big") >> 1


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Leaf values of a JSON document with their paths (``a/0/b``).

    Strings that hold JSON are opened too (tool results often do), so nested
    documents match like any other.
    """
    if isinstance(value, str):
        s = value.strip()
        if s[:1] in "{[" and len(s) > 1:
            try:
                inner = json.loads(s)
            except (json.JSONDecodeError, RecursionError):
                inner = None
            if isinstance(inner, dict | list):
                yield from leaves(inner, path)
                return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{path}/{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}/{i}" if path else str(i))
    elif value is not None and value != "":
        yield path, value


def tokens(text: str) -> list[str]:
    """Word-like tokens (keeps emails, IBANs, URLs, decimals whole)."""
    return [t.strip(".,:;") for t in _TOKEN.findall(text) if t.strip(".,:;")]


#: A text leaf with at least this many tokens is prose, not a field value.
PROSE_TOKENS = 6


def value_fingerprints(
    value: Any, salt: bytes
) -> tuple[set[int], set[int], set[int], set[int]]:
    """(exact, norm, token, field) fingerprints of everything an observation holds.

    Exact and normalised fingerprints cover each leaf and each token n-gram of
    leaf texts (n <= MAX_NGRAM); the token set holds single normalised tokens,
    used for partial matches; the field set holds the whole values of short
    leaves (structured fields), so a match can tell a value *copied from a
    field* from a value *extracted from prose*.
    """
    exact: set[int] = set()
    norm: set[int] = set()
    toks: set[int] = set()
    fields: set[int] = set()
    for _, leaf in leaves(value):
        raw = str(leaf) if not isinstance(leaf, bool) else ("true" if leaf else "false")
        exact.add(fingerprint("x:" + raw.strip(), salt))
        norm.add(fingerprint("n:" + normalise(leaf), salt))
        if not isinstance(leaf, str) or len(tokens(leaf)) < PROSE_TOKENS:
            fields.add(fingerprint("n:" + normalise(leaf), salt))
        if isinstance(leaf, str):
            raw_toks = tokens(leaf)
            norm_toks = [normalise(t) for t in raw_toks]
            for t in norm_toks:
                toks.add(fingerprint("n:" + t, salt))
            if len(raw_toks) > 1:
                for n in range(1, min(MAX_NGRAM, len(raw_toks)) + 1):
                    for i in range(len(raw_toks) - n + 1):
                        exact.add(fingerprint("x:" + " ".join(raw_toks[i:i + n]), salt))
                        norm.add(fingerprint("n:" + " ".join(norm_toks[i:i + n]), salt))
                        if n > 1:  # grouped identifiers written with spaces
                            norm.add(fingerprint("n:" + "".join(norm_toks[i:i + n]), salt))
    return exact, norm, toks, fields


def argument_fingerprints(leaf: Any, salt: bytes) -> tuple[int, int, list[int]]:
    """(exact, norm, per-token) fingerprints of one argument value."""
    raw = str(leaf) if not isinstance(leaf, bool) else ("true" if leaf else "false")
    norm_text = normalise(leaf)
    toks = [fingerprint("n:" + normalise(t), salt) for t in tokens(str(leaf))] if isinstance(
        leaf, str) else []
    exact_text = raw.strip()
    if isinstance(leaf, str) and len(tokens(leaf)) > 1:
        exact_text = " ".join(tokens(leaf))
    return fingerprint("x:" + exact_text, salt), fingerprint("n:" + norm_text, salt), toks
