"""Decoding an OTLP/HTTP body: the compiled decoder when it can, Python otherwise.

``decode_body`` is what the receiver calls. For protobuf it first asks the
compiled decoder (``_otlp_native.c``), which gives the same ``DecodedBatch``
as ``_otlp.decode_request`` on the parsed body (same rows, rejected spans,
reasons and input-limit cuts; ``tests/ingest/test_native_decoder.py`` holds
the two to it on generated, hostile and real-exporter bodies) without making
a Python object per span or per attribute: the extension writes Arrow's
buffers, without the GIL, and this module wraps them without a copy. The
extension declines (None) a body it leaves to protobuf (malformed, or an
encoding listed in the C file's header); that body, and every body when the
extension is not built (a machine without a C compiler), goes through the
Python decoder, which stays the specification. JSON is parsed by protobuf's
JSON mapping, then re-encoded and decoded the same way.
"""

from __future__ import annotations

import logging
from typing import Any

import pyarrow as pa

from ._limits import Limits, Truncations
from ._otlp import SPAN_SCHEMA, DecodedBatch, decode_request, parse_request

log = logging.getLogger("flywheel.ingest")

try:
    from . import _otlp_native
except ImportError:  # pragma: no cover - a build without the extension decodes in Python
    _otlp_native = None

#: True when the compiled decoder is importable.
AVAILABLE = _otlp_native is not None

_STR = pa.string()
_MAP = pa.map_(pa.string(), pa.string())


def decode_body(body: bytes, content_type: str, *, project: str, limits: Limits) -> DecodedBatch:
    """An OTLP/HTTP body as a ``DecodedBatch``; ``UserError`` (HTTP 400) when it is malformed."""
    if content_type == "application/x-protobuf":
        batch = decode_protobuf(body, project, limits)
        if batch is not None:
            return batch
        return decode_request(parse_request(body, content_type), project=project, limits=limits)
    req = parse_request(body, content_type)
    if AVAILABLE:
        batch = decode_protobuf(req.SerializeToString(), project, limits)
        if batch is not None:
            return batch
    return decode_request(req, project=project, limits=limits)


def decode_protobuf(body: bytes, project: str, limits: Limits) -> DecodedBatch | None:
    """An OTLP/protobuf body as a ``DecodedBatch``, or None (use the Python decoder)."""
    if _otlp_native is None:
        return None
    caps = (limits.max_name, limits.max_key, -1 if limits.max_value is None else limits.max_value,
            limits.max_attributes, limits.max_events, limits.max_links, limits.max_depth)
    out = _otlp_native.decode(body, project, caps)
    if out is None:
        return None
    rows, bufs, rejected, reasons, counts = out
    table = _table(rows, [pa.py_buffer(b) for b in bufs])
    return DecodedBatch(table, rejected, reasons, Truncations(counts))


def _table(n: int, bufs: list[pa.Buffer]) -> pa.Table:
    """Arrow arrays over the extension's buffers, in ``_otlp_native.c``'s ``columns_tuple`` order."""
    it = iter(bufs)

    def take(k: int) -> list[pa.Buffer]:
        return [next(it) for _ in range(k)]

    def strings(count: int) -> pa.Array:
        off, data = take(2)
        return pa.Array.from_buffers(_STR, count, [None, off, data])

    def maps(count: int) -> pa.Array:
        (off,) = take(1)
        entries_n = _last_offset(off, count)
        keys, vals = strings(entries_n), strings(entries_n)
        entries = pa.StructArray.from_arrays([keys, vals], fields=[_MAP.key_field, _MAP.item_field])
        return pa.Array.from_buffers(_MAP, count, [None, off], children=[entries])

    def lists(off: pa.Buffer, child: pa.Array, count: int) -> pa.Array:
        return pa.Array.from_buffers(pa.list_(child.type), count, [None, off], children=[child])

    cols: dict[str, Any] = {}
    (ts,) = take(1)
    cols["Timestamp"] = pa.Array.from_buffers(pa.timestamp("ns"), n, [None, ts])
    for name in ("TraceId", "SpanId", "ParentSpanId", "TraceState", "SpanName", "SpanKind",
                 "ServiceName"):
        cols[name] = strings(n)
    cols["ResourceAttributes"] = maps(n)
    cols["ScopeName"], cols["ScopeVersion"] = strings(n), strings(n)
    cols["SpanAttributes"] = maps(n)
    (dur,) = take(1)
    cols["Duration"] = pa.Array.from_buffers(pa.uint64(), n, [None, dur])
    cols["StatusCode"], cols["StatusMessage"] = strings(n), strings(n)
    ev_off, ev_ts = take(2)
    events = _last_offset(ev_off, n)
    ev_names = strings(events)
    ev_attrs = maps(events)
    cols["Events.Timestamp"] = lists(
        ev_off, pa.Array.from_buffers(pa.timestamp("ns"), events, [None, ev_ts]), n)
    cols["Events.Name"] = lists(ev_off, ev_names, n)
    cols["Events.Attributes"] = lists(ev_off, ev_attrs, n)
    (lk_off,) = take(1)
    links = _last_offset(lk_off, n)
    for name in ("Links.TraceId", "Links.SpanId", "Links.TraceState"):
        cols[name] = lists(lk_off, strings(links), n)
    cols["Links.Attributes"] = lists(lk_off, maps(links), n)
    cols["ProjectId"] = strings(n)
    return pa.Table.from_arrays([cols[f.name] for f in SPAN_SCHEMA], schema=SPAN_SCHEMA)


def _last_offset(off: pa.Buffer, count: int) -> int:
    """The child length of an offsets buffer of ``count`` + 1 int32 values."""
    return memoryview(off)[4 * count:4 * count + 4].cast("i")[0]
