"""Information movement: private content reaching an external sink.

Two kinds of evidence, the first preferred:

1. **Provenance observations** (from the argument-provenance work in ingest;
   fingerprints are the core's ``flywheel.values.value_fingerprint``, the
   one ingest computes; pass it with the project's salt as ``fingerprint_fn``
   when handing salted fingerprints rather than text):
   values seen during the episode with where they came from. The interface is
   deliberately small: ``Observation(text | fingerprint, source_kind, trusted,
   private, span_id)``. A private observation whose text occurs in an outbound
   field (case-folded substring, at least ``min_len`` characters) or whose
   fingerprint equals the fingerprint of an outbound field or of one of its
   segments (split on newlines, ``;``, ``,``, ``|``) is movement.
2. **Content matching** as a fallback: string values of the initial state's
   private resource types (``Profile.private_sources``), at least ``min_len``
   characters, occurring in an outbound content field.

Outbound content is the written fields of a created/updated delta in a sink,
minus addressing fields (recipient, url, date...), so a payment to a known
IBAN is not "movement" of that IBAN but a subject quoting it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import BaseModel, Field

from flywheel.values import normalise_text, value_fingerprint

from ._diff import Delta
from ._paths import leaves
from ._policy import Profile, glob_any
from ._records import Snapshot, display_key

#: Source kinds that are not private unless an observation says so.
#: Names follow ``ingest.SOURCE_KINDS`` (user, system, tool_result, retrieval, memory, model,
#: constant) plus a few aliases.
PUBLIC_SOURCE_KINDS = frozenset(
    {"user", "system", "model", "constant", "user_request", "system_prompt", "public_web"}
)

_SEGMENT = re.compile(r"[\n;,|]+")


class Observation(BaseModel):
    """A value seen during the episode and where it came from."""

    text: str | None = None
    fingerprint: int | None = Field(
        None, description="Fingerprint of the normalised value (same function as fingerprint_fn)."
    )
    source_kind: str = Field(
        ..., description="As ingest.SOURCE_KINDS: user, tool_result, memory..."
    )
    trusted: bool = True
    private: bool | None = Field(
        None, description="None: private unless source_kind is in PUBLIC_SOURCE_KINDS."
    )
    span_id: str | None = None

    def is_private(self) -> bool:
        """Whether this observation's content counts as private."""
        return (
            self.private
            if self.private is not None
            else self.source_kind not in PUBLIC_SOURCE_KINDS
        )


@dataclass(frozen=True, slots=True)
class Movement:
    """Evidence that private content reached a sink."""

    field: str
    value_excerpt: str
    source: str
    rule_id: str
    value: str = ""  # the normalised private text, when known (not for fingerprints)


_DATETIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$"
)


def outbound_content(delta: Delta, profile: Profile) -> dict[str, str]:
    """The content fields a sink delta wrote (string values).

    Addressing fields and dates or date-times (they say when, not what) are left out.
    """
    out: dict[str, str] = {}
    for name, value in delta.changed_fields().items():
        if glob_any(name, profile.address_fields):
            continue
        if isinstance(value, str) and value and not _DATETIME.match(value):
            out[name] = value
        elif isinstance(value, list):
            text = "\n".join(str(v) for v in value if isinstance(v, str))
            if text:
                out[name] = text
    return out


_WORD = re.compile(r"\w+")


class PrivateIndex:
    """Private s0 strings, indexed by their first word for substring search.

    A value can only occur in a text if its first word occurs there as a word
    (values are matched at word boundaries at their start), so each outbound
    text is tokenised once and only the values sharing a word are checked:
    the cost grows with the text and the candidates, not with the state.
    Values without a word character are checked against every text.
    """

    def __init__(self, values: Iterable[tuple[str, str]]) -> None:
        self.by_word: dict[str, list[tuple[str, str]]] = {}
        self.other: list[tuple[str, str]] = []
        for value, ref in values:
            m = _WORD.search(value)
            if m:
                self.by_word.setdefault(m.group(0), []).append((value, ref))
            else:
                self.other.append((value, ref))

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_word.values()) + len(self.other)

    def find(self, text: str) -> Iterable[tuple[str, str]]:
        """(value, ref) of private values occurring in ``text`` (already normalised)."""
        seen: set[str] = set()
        for word in _WORD.findall(text):
            if word in seen:
                continue
            seen.add(word)
            for value, ref in self.by_word.get(word, ()):
                if value in text:
                    yield value, ref
        for value, ref in self.other:
            if value in text:
                yield value, ref


def private_values(s0: Snapshot, profile: Profile) -> PrivateIndex:
    """Every private string at s0 long enough to match, normalised, with its source ref."""
    out: dict[str, str] = {}
    private: dict[str, bool] = {}
    min_len = profile.min_match_len
    for (rtype, key), text in s0.raw.items():
        if rtype not in private:
            private[rtype] = profile.is_private(rtype)
        if not private[rtype] or len(text) < min_len:
            continue
        for name, value in leaves(orjson.loads(text)):
            for v in value if isinstance(value, list) else (value,):
                if isinstance(v, str) and len(v) >= min_len:
                    n = normalise_text(v)
                    if len(n) >= min_len and n not in out:
                        out[n] = f"{rtype}[{display_key(key)}].{name}"
    return PrivateIndex(sorted(out.items()))


def find_movement(
    delta: Delta,
    profile: Profile,
    private: PrivateIndex | Callable[[], PrivateIndex],
    observations: Iterable[Observation] = (),
    fingerprint_fn: Callable[[str], int] = value_fingerprint,
    *,
    exhaustive: bool = False,
) -> list[Movement]:
    """Evidence that ``delta`` (a sink write) carries private content; empty if none.

    By default the first piece of evidence per field (and observations before
    content matching); ``exhaustive`` lists every private value found.
    """
    content = outbound_content(delta, profile)
    if not content:
        return []
    norm = {f: normalise_text(v) for f, v in content.items()}
    found: list[Movement] = []
    obs = [o for o in observations if o.is_private()]
    if obs:
        prints = {
            f: {fingerprint_fn(v), *(fingerprint_fn(s) for s in _SEGMENT.split(v) if s.strip())}
            for f, v in content.items()
        }
        for o in obs:
            src = f"{o.source_kind} observation" + (f" (span {o.span_id})" if o.span_id else "")
            for f in content:
                if (
                    o.text
                    and len(o.text.strip()) >= profile.min_match_len
                    and normalise_text(o.text) in norm[f]
                ):
                    found.append(
                        Movement(f, o.text[:80], src, "INFO-PROVENANCE", normalise_text(o.text))
                    )
                    break
                if o.fingerprint and o.fingerprint in prints[f]:
                    found.append(
                        Movement(
                            f, f"fingerprint {str(o.fingerprint)[:12]}", src, "INFO-PROVENANCE"
                        )
                    )
                    break
    if found and not exhaustive:
        return found
    index = private if isinstance(private, PrivateIndex) else private()
    for f, text in norm.items():
        for value, ref in index.find(text):
            found.append(Movement(f, value[:80], ref, "INFO-CONTENT", value))
            if not exhaustive:
                break
    return found


#: Provenance source kinds (``ingest.SOURCE_KINDS``) whose content counts as private.
PRIVATE_PROVENANCE_KINDS = frozenset({"tool_result", "retrieval", "memory"})


def _at_path(args: Any, path: str) -> Any:
    """The leaf at an ingest-style path (``a/0/b``), opening JSON strings on the way."""
    node = args
    for part in [p for p in path.split("/") if p] if path else []:
        if isinstance(node, str) and node.strip()[:1] in "{[":
            try:
                node = json.loads(node)
            except ValueError:
                return None
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def observations_from_provenance(
    rows: Iterable[Mapping[str, Any]],
    calls: Iterable[Any],
    *,
    private_kinds: frozenset[str] = PRIVATE_PROVENANCE_KINDS,
) -> list[Observation]:
    """Observations from argument-provenance records (``ingest.read_provenance`` rows).

    Each record says where one argument leaf of one tool call came from; a
    leaf whose source is a tool result, a retrieved document or a memory read
    is private content the agent passed on. Its value is read from the call
    (matched by span id) so the classifier can look for it in the sink write
    that call made.

    Args:
        rows: dicts with at least ``span_id``, ``path``, ``source_kind``,
            ``trusted`` and ``source_span_id``.
        calls: the run's ``ToolCall``s (anything with ``span_id`` and ``args``).
        private_kinds: source kinds counted as private.
    """
    by_span = {c.span_id: c for c in calls if getattr(c, "span_id", None)}
    out: list[Observation] = []
    for r in rows:
        kind = str(r.get("source_kind", ""))
        call = by_span.get(r.get("span_id"))
        if call is None or kind not in private_kinds:
            continue
        value = _at_path(call.args, str(r.get("path", "")))
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            out.append(
                Observation(
                    text=str(value),
                    source_kind=kind,
                    trusted=bool(r.get("trusted", False)),
                    private=True,
                    span_id=str(r.get("source_span_id") or "") or None,
                )
            )
    return out
