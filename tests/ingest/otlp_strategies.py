"""Hypothesis strategies for OTLP/HTTP request bodies: valid, mutated and garbage."""

from __future__ import annotations

import gzip
import json

from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

_ids16 = st.one_of(st.binary(min_size=16, max_size=16), st.binary(max_size=20))
_ids8 = st.one_of(st.binary(min_size=8, max_size=8), st.binary(max_size=10))
_text = st.text(max_size=50)

_any_value = st.recursive(
    st.one_of(
        st.builds(lambda s: {"string_value": s}, _text),
        st.builds(lambda i: {"int_value": i}, st.integers(-(2**63), 2**63 - 1)),
        st.builds(lambda f: {"double_value": f}, st.floats(allow_nan=True)),
        st.builds(lambda b: {"bool_value": b}, st.booleans()),
        st.builds(lambda b: {"bytes_value": b}, st.binary(max_size=20)),
    ),
    lambda inner: st.one_of(
        st.builds(lambda xs: {"array_value": {"values": xs}}, st.lists(inner, max_size=3)),
        st.builds(lambda kvs: {"kvlist_value": {"values": [{"key": k, "value": v} for k, v in kvs]}},
                  st.lists(st.tuples(_text, inner), max_size=3)),
    ),
    max_leaves=10,
)


def _set_value(target, spec):
    kind, val = next(iter(spec.items()))
    if kind == "array_value":
        for x in val["values"]:
            _set_value(target.array_value.values.add(), x)
    elif kind == "kvlist_value":
        for kv in val["values"]:
            item = target.kvlist_value.values.add()
            item.key = kv["key"]
            _set_value(item.value, kv["value"])
    else:
        setattr(target, kind, val)


@st.composite
def protobuf_request(draw) -> bytes:
    req = ExportTraceServiceRequest()
    for _ in range(draw(st.integers(0, 2))):
        rs = req.resource_spans.add()
        for k, v in draw(st.lists(st.tuples(_text, _any_value), max_size=3)):
            kv = rs.resource.attributes.add()
            kv.key = k
            _set_value(kv.value, v)
        ss = rs.scope_spans.add()
        ss.scope.name = draw(_text)
        for _ in range(draw(st.integers(0, 3))):
            sp = ss.spans.add()
            sp.trace_id, sp.span_id = draw(_ids16), draw(_ids8)
            sp.parent_span_id = draw(st.one_of(st.just(b""), _ids8))
            sp.name = draw(_text)
            sp.kind = draw(st.integers(0, 5))
            sp.start_time_unix_nano = draw(st.integers(0, 2**64 - 1))
            sp.end_time_unix_nano = draw(st.integers(0, 2**64 - 1))
            sp.status.code = draw(st.integers(0, 2))
            for k, v in draw(st.lists(st.tuples(_text, _any_value), max_size=4)):
                kv = sp.attributes.add()
                kv.key = k
                _set_value(kv.value, v)
            for _ in range(draw(st.integers(0, 2))):
                ev = sp.events.add()
                ev.name = draw(_text)
                ev.time_unix_nano = draw(st.integers(0, 2**64 - 1))
    return req.SerializeToString()


@st.composite
def mutated(draw, base) -> bytes:
    body = bytearray(draw(base))
    for _ in range(draw(st.integers(0, 4))):
        if not body:
            break
        i = draw(st.integers(0, len(body) - 1))
        op = draw(st.sampled_from(["flip", "cut", "dup"]))
        if op == "flip":
            body[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "cut":
            del body[i:]
        else:
            body[i:i] = body[i:i + 8]
    return bytes(body)


_json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _text),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)),
    max_leaves=15,
)


@st.composite
def json_request(draw) -> bytes:
    spans = []
    for _ in range(draw(st.integers(0, 3))):
        spans.append({
            "traceId": draw(st.one_of(st.just("5b8efff798038103d269b633813fc60c"), _text)),
            "spanId": draw(st.one_of(st.just("eee19b7ec3c1b174"), _text)),
            "name": draw(_text),
            "kind": draw(st.one_of(st.integers(-3, 9), _text)),
            "startTimeUnixNano": draw(st.one_of(st.just("1700000000000000000"), _json_value)),
            "attributes": draw(st.one_of(
                st.just([{"key": "k", "value": {"stringValue": "v"}}]), _json_value)),
        })
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    if draw(st.booleans()):
        doc = draw(st.one_of(_json_value, st.just(doc)))
    return json.dumps(doc).encode()


def otlp_bodies():
    """(content type, content encoding, body) triples, most of them hostile."""
    proto = st.one_of(protobuf_request(), mutated(protobuf_request()), st.binary(max_size=200))
    js = st.one_of(json_request(), mutated(json_request()), st.binary(max_size=100),
                   st.just(b"[" * 5000), st.just(b'{"resourceSpans":' * 3000))
    return st.one_of(
        st.tuples(st.just("application/x-protobuf"), st.just(""), proto),
        st.tuples(st.just("application/json"), st.just(""), js),
        st.tuples(st.just("application/x-protobuf"), st.just("gzip"), proto.map(gzip.compress)),
        st.tuples(st.sampled_from(["application/x-protobuf", "application/json"]), st.just("gzip"),
                  st.binary(max_size=50)),
        st.tuples(st.sampled_from(["text/plain", "", "application/xml"]), st.just(""), st.binary(max_size=20)),
    )
