"""Canonical JSON and its hash: one byte string per value, shared by every package.

Snapshots, eval-set bundles and state records are hashed and diffed, so the
same value must always serialise to the same text: sorted keys, no spaces,
UTF-8 kept.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any, *, strict: bool = False) -> str:
    """Sorted keys, compact, UTF-8 text.

    ``strict`` (content addressing) refuses NaN and non-JSON leaves; otherwise
    non-JSON leaves (datetimes, enums) become their ``str``.
    """
    if strict:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_hex(text: str) -> str:
    """Hex SHA-256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
