"""The release scanner's second witness: what the source traces hold under personal keys.

Why: the scanner's detectors are redaction's detectors, so a value redaction
missed (a name in prose, a number in a format no pattern knows) is missed
again at release. The source trace still says what was personal: a value
under an ``email``, ``nom``, ``geburtsdatum``, ``password``... key (the key
rules of ``flywheel.pii``, in any JSON held in a span, resource or event
attribute) is personal whatever it looks like. A release reads those values
from the store for each task's ``source_trace_id`` and refuses a task that
still holds one verbatim (``flywheel.pii.find_values``), whatever the
detectors think of it. No value is kept or reported: findings name the path
and the key's type.

What is not collected (it would refuse what redaction rightly keeps):
identifiers under name-like keys (``{"name": "get_weather"}`` in a tool call,
``owner: platform-team``), single lower-case words, placeholders, pseudonyms,
values shorter than ``MIN_CHARS``, values with no digit under a key whose
type always has digits (phone, card, IBAN...), and under a contact-ish key
(``to``, ``contact``: label AUTO) anything that is not an address, a number or
a capitalised name that redaction's ``person_like`` takes for a person.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from flywheel.pii import (
    PSEUDONYM,
    is_identifier,
    key_label,
    names_a_thing,
    organisation_like,
    person_like,
    shared_detector,
    value_label,
)

#: Shorter values are not compared (``Li``, ``42`` occur anywhere).
MIN_CHARS = 4
_DIGIT_TYPES = {"PHONE", "CARD", "IBAN", "SSN", "IP", "DOB", "NATIONAL_ID"}
_PLACEHOLDER = re.compile(
    r"(?i)\A(?:\*+|x{3,}|null|none|true|false|bearer|basic|redacted|n/?a|unknown|"
    r"<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\})\Z"
)
_PERSON = re.compile(r"\A[^\W\d_][^\W\d_'’.\-]*(?:[ '’.\-]+[^\W\d_]+){0,4}\.?\Z")
#: An account number of a scheme no detector knows: a country code, check digits, digits.
_ACCOUNT = re.compile(r"\A[A-Z]{2}\d{2}[A-Z0-9]{8,}\Z")
_CHUNK = 2000
_DEPTH = 4


def personal_values(
    store: Any, trace_ids: Iterable[str], *, project: str = "default"
) -> dict[str, dict[str, str]]:
    """Per trace id: value -> type, for every value under a personal key in its spans."""
    ids = sorted({t for t in trace_ids if t})
    out: dict[str, dict[str, str]] = {}
    sql = (
        "SELECT TraceId AS trace_id, SpanAttributes AS a, ResourceAttributes AS r,"
        f" Events.Attributes AS e FROM {store.otel_table}"
        " WHERE ProjectId = {p:String} AND TraceId IN {ids:Array(String)}"
    )
    for i in range(0, len(ids), _CHUNK):
        for row in store.query(sql, {"p": project, "ids": ids[i : i + _CHUNK]}):
            found = out.setdefault(row["trace_id"], {})
            maps = [row["a"] or {}, row["r"] or {}, *(row["e"] or [])]
            for attrs in maps:
                for k, v in attrs.items():
                    collect(str(k), v, found)
    return out


def collect(key: str, value: Any, found: dict[str, str], label: str | None = None,
            depth: int = 0) -> None:
    """Add to ``found`` every personal value of ``value`` (under ``key``; JSON walked)."""
    label = _label(key) or label
    if isinstance(value, dict):
        for k, v in value.items():
            if names_a_thing(str(k), value):
                continue  # redaction reads a thing's name as text (``names_a_thing``)
            collect(str(k), v, found, None, depth)
        return
    if isinstance(value, list):
        for v in value:
            collect(key, v, found, label, depth)
        return
    if isinstance(value, bool) or value is None:
        return
    text = value if isinstance(value, str) else str(value)
    stripped = text.strip()
    if depth < _DEPTH and stripped[:1] in ("{", "["):
        try:
            collect(key, json.loads(stripped), found, label, depth + 1)
            return
        except ValueError:
            pass
    if label is not None and _usable(label, stripped):
        entity = _entity(label, stripped)
        if entity is not None:
            found.setdefault(stripped, entity)


def _label(key: str) -> str | None:
    # The whole key, folded: ``user.email`` is ``useremail`` (EMAIL), while
    # ``gen_ai.agent.name`` (an agent's name, not a person's) matches no rule.
    return key_label(key)


def _entity(label: str, v: str) -> str | None:
    """The entity type a finding reports for a key rule's label (one a reviewer can except).

    The key rules whose label depends on the value resolve as redaction resolves them
    (``flywheel.pii.value_label``); ``AUTO`` takes the type detected for the whole value
    (an e-mail, a person's name, else a number: an identifier of the person).
    """
    if label != "AUTO":
        return value_label(label, v)
    dets = shared_detector().detect(v)
    if len(dets) == 1 and dets[0].end - dets[0].start >= len(v) - 2:
        return dets[0].label
    if "@" in v:
        return "EMAIL"
    if sum(c.isdigit() for c in v) < 6:
        return "NAME"
    return "IBAN" if _ACCOUNT.match(v.replace(" ", "")) else "NATIONAL_ID"


def _usable(label: str, v: str) -> bool:
    if len(v) < MIN_CHARS or _PLACEHOLDER.match(v) or PSEUDONYM.search(v):
        return False
    if label in _DIGIT_TYPES:
        return sum(c.isdigit() for c in v) >= 4
    if label == "AUTO":
        return "@" in v or sum(c.isdigit() for c in v) >= 6 or (
            # redaction's own rule for a name under such a key: a company or
            # product name it rightly keeps ("Spotify") is no finding
            v[:1].isupper() and _PERSON.match(v) is not None and person_like(v)
        )
    if label == "NAME" and organisation_like(v):
        return False  # redaction keeps an organisation's name under a name key
    if label in ("NAME", "ADDRESS"):
        return not is_identifier(v)
    return True
