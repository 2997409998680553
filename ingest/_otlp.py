"""OTLP/HTTP trace payloads -> columns of the collector's ``otel_traces`` table.

Protobuf and JSON share one path: OTLP JSON (hex ids, lowerCamelCase) is
turned into the proto message first. Decoding never raises on a bad span: it
is counted as rejected with a reason, and the batch carries the count for the
``partial_success`` of the response. A malformed body is a ``UserError``.
Attribute values are stringified the way the collector's exporter does
(numbers and booleans as text, arrays and maps as JSON, bytes as base64).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from flywheel.errors import UserError

from ._limits import MAX_ATTRIBUTE_DEPTH, Limits, Truncations, cap_attributes, cap_items, cap_text

_MAX_NS = 2**63 - 1  # DateTime64(9) and Arrow timestamp[ns] end in 2262
_SPAN_KINDS = ["Unspecified", "Internal", "Server", "Client", "Producer", "Consumer"]
_STATUS = ["Unset", "Ok", "Error"]

_MAP = pa.map_(pa.string(), pa.string())
#: Arrow schema of a decoded batch (names and types of ``otel_traces``).
SPAN_SCHEMA = pa.schema(
    [
        ("Timestamp", pa.timestamp("ns")),
        ("TraceId", pa.string()),
        ("SpanId", pa.string()),
        ("ParentSpanId", pa.string()),
        ("TraceState", pa.string()),
        ("SpanName", pa.string()),
        ("SpanKind", pa.string()),
        ("ServiceName", pa.string()),
        ("ResourceAttributes", _MAP),
        ("ScopeName", pa.string()),
        ("ScopeVersion", pa.string()),
        ("SpanAttributes", _MAP),
        ("Duration", pa.uint64()),
        ("StatusCode", pa.string()),
        ("StatusMessage", pa.string()),
        ("Events.Timestamp", pa.list_(pa.timestamp("ns"))),
        ("Events.Name", pa.list_(pa.string())),
        ("Events.Attributes", pa.list_(_MAP)),
        ("Links.TraceId", pa.list_(pa.string())),
        ("Links.SpanId", pa.list_(pa.string())),
        ("Links.TraceState", pa.list_(pa.string())),
        ("Links.Attributes", pa.list_(_MAP)),
        ("ProjectId", pa.string()),
    ]
)


@dataclass
class DecodedBatch:
    """The accepted spans of one request as an Arrow table, and what was rejected."""

    table: pa.Table
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)
    #: What the input limits cut (``_limits``), by kind.
    truncated: Truncations = field(default_factory=Truncations)

    @property
    def accepted(self) -> int:
        """Number of spans that will be stored."""
        return self.table.num_rows

    def error_message(self) -> str:
        """The ``partial_success.error_message`` text (empty if nothing was rejected or cut)."""
        parts = []
        if self.rejected:
            uniq = sorted(set(self.reasons))
            parts.append(f"{self.rejected} span(s) rejected: " + "; ".join(uniq[:5]))
        if self.truncated:
            parts.append(self.truncated.message() + " (ingest limits; the spans are stored)")
        return "; ".join(parts)


def any_value_to_str(v: Any, max_len: int | None = None, counts: Truncations | None = None,
                     max_depth: int = MAX_ATTRIBUTE_DEPTH) -> str:
    """Stringify an OTLP ``AnyValue`` as the collector's ClickHouse exporter does.

    Nesting past ``max_depth`` becomes "..." (counted in ``counts``).
    """
    kind = v.WhichOneof("value")
    if kind == "string_value":
        s = v.string_value
    elif kind == "bool_value":
        s = "true" if v.bool_value else "false"
    elif kind == "int_value":
        s = str(v.int_value)
    elif kind == "double_value":
        s = _double_str(v.double_value)
    elif kind == "bytes_value":
        s = base64.b64encode(v.bytes_value).decode()
    elif kind in ("array_value", "kvlist_value"):
        s = json.dumps(_any_value_py(v, 0, max_depth, counts), ensure_ascii=False,
                       separators=(",", ":"))
    else:
        s = ""
    if max_len is not None and len(s) > max_len:
        s = s[:max_len]
    return s


def _double_str(d: float) -> str:
    """Integral doubles without ``.0`` (as the collector prints them); NaN/Inf spelled out."""
    if d != d:
        return "NaN"
    if d in (float("inf"), float("-inf")):
        return "Inf" if d > 0 else "-Inf"
    return str(int(d)) if d == int(d) and abs(d) < 1e16 else repr(d)


def _any_value_py(v: Any, depth: int = 0, max_depth: int = MAX_ATTRIBUTE_DEPTH,
                  counts: Truncations | None = None) -> Any:
    kind = v.WhichOneof("value")
    if depth >= max_depth and kind in ("array_value", "kvlist_value"):
        if counts is not None:
            counts["nesting_depth"] += 1
        return "..."
    if kind == "array_value":
        return [_any_value_py(x, depth + 1, max_depth, counts) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _any_value_py(kv.value, depth + 1, max_depth, counts)
                for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(v.bytes_value).decode()
    if kind is None:
        return None
    return getattr(v, kind)


def _attrs(kvs: Any, limits: Limits, counts: Truncations) -> list[tuple[str, str]]:
    return cap_attributes(kvs, limits, counts,
                          lambda v: any_value_to_str(v, None, counts, limits.max_depth))


def parse_request(body: bytes, content_type: str) -> ExportTraceServiceRequest:
    """Parse an OTLP/HTTP body; ``UserError`` (HTTP 400) when it is malformed."""
    req = ExportTraceServiceRequest()
    if content_type == "application/x-protobuf":
        try:
            req.ParseFromString(body)
        except (DecodeError, RuntimeError, ValueError, RecursionError) as exc:
            raise UserError(f"malformed OTLP protobuf: {exc}") from exc
        return req
    if content_type == "application/json":
        try:
            doc = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise UserError(f"malformed OTLP JSON: {exc}") from exc
        if not isinstance(doc, dict):
            raise UserError("malformed OTLP JSON: the body must be an object")
        if _SURROGATE_ESCAPE.search(body) and _has_lone_surrogate(doc):
            # JSON may escape half of a UTF-16 pair alone; such a string is no Unicode text,
            # and protobuf's parser fails on it with a SystemError instead of a ParseError
            raise UserError("malformed OTLP JSON: a string holds a lone UTF-16 surrogate "
                            "(\\uD800-\\uDFFF without its pair)")
        try:
            _hex_ids_to_base64(doc)
            json_format.ParseDict(doc, req, ignore_unknown_fields=True)
        except (json_format.ParseError, TypeError, ValueError, RecursionError) as exc:
            raise UserError(f"malformed OTLP JSON{parse_error_message(exc)}") from exc
        return req
    raise UserError(f"unsupported content type {content_type!r}")


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _has_lone_surrogate(doc: object) -> bool:
    """Whether a key or string anywhere in ``doc`` holds an unpaired surrogate."""
    try:
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_FIELD_PREFIX = re.compile(r"Failed to parse (\w+) field: ")


def parse_error_message(exc: BaseException) -> str:
    """``" at PATH: REASON"`` from protobuf's nested ParseError text, in one short line.

    protobuf prefixes its message once per nesting level ("Failed to parse
    values field: " a hundred times for a deeply nested value); the levels
    become a dotted path with repeats counted (``values x99``).
    """
    text, path = str(exc), []
    while m := _FIELD_PREFIX.match(text):
        path.append(m.group(1))
        text = text[m.end():]
    groups: list[str] = []
    for name in path:
        if groups and groups[-1].split(" x")[0] == name:
            head, _, n = groups[-1].partition(" x")
            groups[-1] = f"{head} x{int(n or 1) + 1}"
        else:
            groups.append(name)
    reason = " ".join(text.split("\n", 1)[0].split()).rstrip(".")
    reason = reason if len(reason) <= 200 else reason[:199] + "…"
    return f" at {'.'.join(groups)}: {reason}" if groups else f": {reason}"


_ID_KEYS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def _hex_ids_to_base64(doc: dict[str, Any]) -> None:
    """OTLP JSON writes ids as hex; protobuf's JSON mapping expects base64."""
    for i, rs in _objects(doc, "resourceSpans", "resource_spans", path=""):
        for j, ss in _objects(rs, "scopeSpans", "scope_spans", path=f"resourceSpans[{i}]"):
            for k, span in _objects(ss, "spans", path=f"resourceSpans[{i}].scopeSpans[{j}]"):
                _fix_ids(span)
                where = f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}]"
                for _, link in _objects(span, "links", path=where):
                    _fix_ids(link)


def _objects(parent: dict[str, Any], *keys: str, path: str) -> list[tuple[int, dict[str, Any]]]:
    """The objects of the list under the first of ``keys``; ``UserError`` naming a bad one."""
    key = next((k for k in keys if k in parent), keys[0])
    value = parent.get(key)
    where = f"{path}.{keys[0]}" if path else keys[0]
    if value is None:
        return []
    if not isinstance(value, list):
        raise UserError(f"malformed OTLP JSON at {where}: a list is needed, not {_kind(value)}")
    for n, v in enumerate(value):
        if not isinstance(v, dict):
            raise UserError(
                f"malformed OTLP JSON at {where}[{n}]: an object is needed, not {_kind(v)}")
    return list(enumerate(value))


def _kind(value: Any) -> str:
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _fix_ids(obj: dict[str, Any]) -> None:
    for key in _ID_KEYS:
        val = obj.get(key)
        if isinstance(val, str) and val:
            try:
                obj[key] = base64.b64encode(binascii.unhexlify(val)).decode()
            except (binascii.Error, ValueError):
                obj[key] = "!"  # invalid on purpose: rejected per span, not per request


def decode_request(
    req: ExportTraceServiceRequest, *, project: str = "default", max_attr_len: int | None = None,
    limits: Limits | None = None,
) -> DecodedBatch:
    """Flatten a parsed request into ``otel_traces`` columns; count bad spans and cuts.

    ``limits`` caps names, keys, values, counts and nesting (``_limits``);
    without it, the default caps with ``max_attr_len`` for values.
    """
    if limits is None:
        limits = Limits(max_value=max_attr_len)
    counts = Truncations()
    cols: dict[str, list[Any]] = {name: [] for name in _ROW_COLUMNS}
    rejected, reasons = 0, []
    for rs in req.resource_spans:
        rattrs = _attrs(rs.resource.attributes, limits, counts)
        service = next((v for k, v in rattrs if k == "service.name"), "")
        for ss in rs.scope_spans:
            scope = (ss.scope.name, ss.scope.version)
            for span in ss.spans:
                try:
                    row = _span_row(span, service, rattrs, scope, limits, counts)
                except Exception as exc:  # noqa: BLE001 - a bad span is rejected, never raised
                    row = f"undecodable span ({type(exc).__name__})"
                if isinstance(row, str):
                    rejected += 1
                    reasons.append(row)
                    continue
                for name, value in zip(_ROW_COLUMNS, row, strict=True):
                    cols[name].append(value)
    cols["ProjectId"] = [project] * len(cols["TraceId"])
    table = pa.Table.from_pydict(cols, schema=SPAN_SCHEMA)
    return DecodedBatch(table, rejected, reasons, counts)


_ROW_COLUMNS = [f.name for f in SPAN_SCHEMA if f.name != "ProjectId"]


def _span_row(
    span: Any,
    service: str,
    rattrs: list[tuple[str, str]],
    scope: tuple[str, str],
    limits: Limits,
    counts: Truncations,
) -> tuple[Any, ...] | str:
    """One span as a row of ``otel_traces`` values, or the reason it is rejected."""
    tid, sid, pid = span.trace_id, span.span_id, span.parent_span_id
    if len(tid) != 16 or tid == b"\0" * 16:
        return "invalid trace_id (must be 16 bytes, not all zero)"
    if len(sid) != 8 or sid == b"\0" * 8:
        return "invalid span_id (must be 8 bytes, not all zero)"
    if pid and len(pid) != 8:
        return "invalid parent_span_id (must be 8 bytes or empty)"
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if start > _MAX_NS or end > _MAX_NS or any(e.time_unix_nano > _MAX_NS for e in span.events):
        return "timestamp out of range (after 2262-04-11)"
    events = cap_items(span.events, limits.max_events, counts, "event_count")
    links = cap_items(span.links, limits.max_links, counts, "link_count")
    code = span.status.code
    return (
        start,
        tid.hex(),
        sid.hex(),
        pid.hex(),
        span.trace_state,
        cap_text(span.name, limits.max_name, counts, "span_name"),
        _SPAN_KINDS[span.kind] if 0 <= span.kind < 6 else "Unspecified",
        service,
        rattrs,
        scope[0],
        scope[1],
        _attrs(span.attributes, limits, counts),
        end - start if end > start else 0,
        _STATUS[code] if 0 <= code < 3 else "Unset",
        span.status.message,
        [e.time_unix_nano for e in events],
        [cap_text(e.name, limits.max_name, counts, "span_name") for e in events],
        [_attrs(e.attributes, limits, counts) for e in events],
        [lk.trace_id.hex() for lk in links],
        [lk.span_id.hex() for lk in links],
        [lk.trace_state for lk in links],
        [_attrs(lk.attributes, limits, counts) for lk in links],
    )


def encode_response(accepted_batch: DecodedBatch | None, content_type: str) -> bytes:
    """``ExportTraceServiceResponse`` in the request's encoding."""
    resp = ExportTraceServiceResponse()
    partial = accepted_batch is not None and (accepted_batch.rejected or accepted_batch.truncated)
    if partial:
        resp.partial_success.rejected_spans = accepted_batch.rejected
        resp.partial_success.error_message = accepted_batch.error_message()
    if content_type == "application/json":
        out: dict[str, Any] = {}
        if partial:
            out["partialSuccess"] = {
                "rejectedSpans": str(accepted_batch.rejected),
                "errorMessage": accepted_batch.error_message(),
            }
        return json.dumps(out).encode()
    return resp.SerializeToString()
