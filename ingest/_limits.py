"""Input limits of the OTLP receiver: caps on what one span may carry, and their counts.

A span is never rejected for its size: like the OpenTelemetry SDK's span
limits (which record ``dropped_attributes_count``), what is over a cap is cut
and counted. Each cut is counted per kind in ``Truncations``; the counts go
into the response's ``partial_success.error_message`` (OTLP allows a warning
there with ``rejected_spans`` 0) and into ``/metrics``
(``flywheel_ingest_truncated_total{what=...}``). Lengths are in characters.

=====================  ==============================================
kind                   what is cut
=====================  ==============================================
``span_name``          a span or event name longer than the cap
``attribute_key``      an attribute whose key is longer than the cap (dropped)
``attribute_value``    an attribute value longer than the cap
``attribute_count``    attributes past the cap on one span, event or link (dropped)
``event_count``        events past the cap on one span (dropped)
``link_count``         links past the cap on one span (dropped)
``nesting_depth``      array/map levels past the cap in a value (replaced by "...")
=====================  ==============================================

These functions are separate from the decoder on purpose: the decoding path
may change for speed; the caps and their counts stay here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: Deepest array/map nesting kept in an attribute value; deeper levels become "...".
MAX_ATTRIBUTE_DEPTH = 16


@dataclass(frozen=True)
class Limits:
    """Caps applied to every span (see the module docstring)."""

    max_name: int = 4096
    max_key: int = 256
    max_value: int | None = 256 * 1024
    max_attributes: int = 1024
    max_events: int = 1024
    max_links: int = 1024
    max_depth: int = MAX_ATTRIBUTE_DEPTH

    @classmethod
    def from_settings(cls, ingest: Any) -> Limits:
        """The caps configured in ``IngestSettings``."""
        return cls(max_name=ingest.max_span_name_chars, max_key=ingest.max_attribute_key_chars,
                   max_value=ingest.max_attribute_bytes,
                   max_attributes=ingest.max_attributes_per_span,
                   max_events=ingest.max_events_per_span, max_links=ingest.max_links_per_span)


class Truncations(Counter[str]):
    """How many cuts of each kind one request needed."""

    def message(self) -> str:
        """``truncated: 2 span_name, 1 attribute_count`` (empty when nothing was cut)."""
        if not self:
            return ""
        return "truncated: " + ", ".join(f"{n} {kind}" for kind, n in sorted(self.items()))


def cap_text(text: str, limit: int | None, counts: Truncations, kind: str) -> str:
    """``text`` cut to ``limit`` characters, counting the cut."""
    if limit is not None and len(text) > limit:
        counts[kind] += 1
        return text[:limit]
    return text


def cap_items(items: Sequence[Any], limit: int, counts: Truncations, kind: str) -> Sequence[Any]:
    """The first ``limit`` of ``items`` (events, links), counting the dropped ones."""
    if len(items) > limit:
        counts[kind] += len(items) - limit
        return items[:limit]
    return items


def cap_attributes(kvs: Sequence[Any], limits: Limits, counts: Truncations,
                   stringify: Callable[[Any], str]) -> list[tuple[str, str]]:
    """``(key, value)`` pairs of OTLP ``KeyValue``s under every attribute cap.

    ``stringify`` turns an ``AnyValue`` into the stored text (untruncated).
    """
    out: list[tuple[str, str]] = []
    for kv in cap_items(kvs, limits.max_attributes, counts, "attribute_count"):
        if len(kv.key) > limits.max_key:
            counts["attribute_key"] += 1
            continue
        out.append((kv.key, cap_text(stringify(kv.value), limits.max_value, counts,
                                     "attribute_value")))
    return out
