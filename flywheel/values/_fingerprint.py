"""One value fingerprint with one normalisation, shared by ingest and side effects.

Provenance (ingest) matches argument values against what the agent observed;
information-movement detection (side effects) matches private values against
what reached a sink. Both compare *values*, often only as fingerprints (the
raw text may be redacted), so both must normalise and hash the same way:

- ``normalise_text``: whitespace collapsed, case folded -- the base of every
  comparison, and what a substring search runs on;
- ``normalise``: ``normalise_text`` plus number formats unified
  (``1,100.00`` -> ``1100``, ``$5`` -> ``5``) and spaces removed inside
  grouped identifiers (``GB29 NWBK 6016`` -> ``gb29nwbk6016``);
- ``fingerprint``: a 63-bit keyed BLAKE2b of a text (fits ClickHouse UInt64
  and a Python int), keyed by the project's salt;
- ``value_fingerprint``: ``fingerprint`` of a value's normalised text, in the
  ``n:`` family ingest stores (``x:`` is the verbatim family).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

_WS = re.compile(r"\s+")
_NUM = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")


def normalise_text(text: str) -> str:
    """Whitespace runs collapsed to one space, stripped, case folded."""
    return _WS.sub(" ", str(text)).strip().casefold()


def _number(x: float) -> str:
    if x == int(x) and abs(x) < 1e18:
        return str(int(x))
    return repr(round(x, 10))


def normalise(value: Any) -> str:
    """The canonical text of a leaf value (see the module docstring)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _number(float(value))
    text = normalise_text(value)
    bare = text.strip("$€£ ")
    if _NUM.match(bare):
        return _number(float(bare.replace(",", "")))
    if (
        " " in text
        and all(len(t) <= 6 and t.isalnum() for t in text.split(" "))
        and any(c.isdigit() for c in text)
    ):
        return text.replace(" ", "")  # grouped identifiers: IBANs, card numbers
    return text


def fingerprint(text: str, salt: bytes = b"") -> int:
    """A 63-bit keyed BLAKE2b hash of ``text`` (fits ClickHouse UInt64 and Python int)."""
    h = hashlib.blake2b(text.encode(), digest_size=8, key=salt[:64]).digest()
    return int.from_bytes(h, "big") >> 1


def value_fingerprint(value: Any, salt: bytes = b"") -> int:
    """The fingerprint of a value's normalised text (ingest's ``n:`` family)."""
    return fingerprint("n:" + normalise(value), salt)
