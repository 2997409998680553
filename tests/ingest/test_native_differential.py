"""The receiver's decoding with the compiled decoder against the protobuf-library path.

A seeded corpus, not a hypothesis search: every body below is rebuilt the
same way on every run, so a failure names a body that can be replayed
(``corpus()[i]`` and ``mutations(seed, n)``). The corpus has valid bodies
made with the protobuf library (every AnyValue kind: string, bool, int,
double with its edge values, bytes, arrays, key-value lists, empty values,
nested to past the depth cap; several resources and scopes; events, links,
status; ids of wrong lengths; timestamps past 2262), both benchmark
workloads and the OpenTelemetry SDK exporter's own encoding. Each run then
mutates those bodies at random (bit flips, random bytes, truncation, cut
ranges, repeated ranges, inserted garbage, lengths made huge, two bodies
spliced) and decodes each one both ways, with the default caps and with
small random caps:

* the compiled path is ``decode_body`` as the receiver calls it, with
  the extension (native rows, or Python when it declines);
* the reference is ``decode_request(parse_request(...))``, the protobuf
  library's parse and the Python row builder.

Both must give the same table, rejected count, reasons and cut counts, or
both must reject the body (``UserError``, HTTP 400). The native decoder must
also have decoded a good share of the bodies itself, so that a decoder that
declines everything cannot pass. The default run has 4,000 mutated bodies;
``--runslow`` adds 60,000 more with other seeds.
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from flywheel import UserError
from flywheel.ingest._decode import decode_body, decode_protobuf
from flywheel.ingest._limits import Limits
from flywheel.ingest._otlp import decode_request, parse_request
from tests.ingest._native import assert_same_batch, require_built

require_built()

_PB = "application/x-protobuf"

_TEXTS = ["", "a", "service.name", "gen_ai.tool.name", "航班 🙂 ünïcödé", "a\"b\\c\n\t\x00\x1f\x7f",
          "é" * 300, "x" * 5000, "Привет мир", "مرحبا", "emoji 👩‍👩‍👧 zwj", "\u2028\u2029"]
_DOUBLES = [0.0, -0.0, 1.0, -1.5, 0.1, 1 / 3, 1e16, -1e16, 1e15, 9999999999999998.0, 1e22,
            5e-324, 1.7976931348623157e308, math.nan, math.inf, -math.inf, 2.5e-8,
            9007199254740993.0]
_INTS = [0, 1, -1, 2**31, -(2**31), 2**63 - 1, -(2**63), 42]


def _value(av, rnd: random.Random, depth: int, kind: int | None = None) -> None:
    """Set an AnyValue of ``kind`` (0-7: none, string, bool, int, double, bytes, array, kvlist)."""
    kind = rnd.randrange(8 if depth < 20 else 6) if kind is None else kind
    if kind == 1:
        av.string_value = rnd.choice(_TEXTS)
    elif kind == 2:
        av.bool_value = rnd.random() < 0.5
    elif kind == 3:
        av.int_value = rnd.choice(_INTS + [rnd.randint(-(2**63), 2**63 - 1)])
    elif kind == 4:
        av.double_value = rnd.choice(_DOUBLES + [rnd.uniform(-1e20, 1e20)])
    elif kind == 5:
        av.bytes_value = rnd.randbytes(rnd.randrange(12))
    elif kind == 6:
        arr = av.array_value
        arr.SetInParent()
        for _ in range(rnd.randrange(4)):
            _value(arr.values.add(), rnd, depth + 1)
    elif kind == 7:
        kvl = av.kvlist_value
        kvl.SetInParent()
        for i in range(rnd.randrange(4)):
            kv = kvl.values.add()
            kv.key = f"{rnd.choice(_TEXTS)[:20]}#{i}"
            _value(kv.value, rnd, depth + 1)


def _attrs(target, rnd: random.Random, n: int) -> None:
    for i in range(n):
        kv = target.add()
        kv.key = rnd.choice(["gen_ai.usage.input_tokens", "llm.input_messages.0.message.content",
                             "input.value", "http.status_code", f"k{i}", "ключ", "鍵"]) + f".{i}"
        if rnd.random() < 0.05:
            kv.key = "k" * 300  # over the key cap
        if rnd.random() < 0.05:
            continue  # no value at all
        _value(kv.value, rnd, 0)


def _deep(av, levels: int, kvlist: bool) -> None:
    for i in range(levels):
        if kvlist:
            kv = av.kvlist_value.values.add()
            kv.key = f"l{i}"
            av = kv.value
        else:
            av = av.array_value.values.add()
    av.string_value = "bottom"


def valid_body(seed: int) -> bytes:
    """One request built with the protobuf library (seeded)."""
    rnd = random.Random(seed)
    req = ExportTraceServiceRequest()
    for r in range(rnd.randrange(1, 4)):
        rs = req.resource_spans.add()
        if rnd.random() < 0.8:
            kv = rs.resource.attributes.add()
            kv.key, kv.value.string_value = "service.name", rnd.choice(_TEXTS[1:6])
        _attrs(rs.resource.attributes, rnd, rnd.randrange(4))
        rs.schema_url = rnd.choice(["", "https://opentelemetry.io/schemas/1.26.0"])
        for _ in range(rnd.randrange(1, 3)):
            ss = rs.scope_spans.add()
            if rnd.random() < 0.8:
                ss.scope.name = rnd.choice(["openinference.instrumentation.x", "tests", ""])
                ss.scope.version = rnd.choice(["", "1.2.3"])
                _attrs(ss.scope.attributes, rnd, rnd.randrange(2))
            for i in range(rnd.randrange(6)):
                sp = ss.spans.add()
                sp.trace_id = rnd.choice([rnd.randbytes(16)] * 8 + [b"\0" * 16, rnd.randbytes(15), b""])
                sp.span_id = rnd.choice([rnd.randbytes(8)] * 8 + [b"\0" * 8, rnd.randbytes(9)])
                sp.parent_span_id = rnd.choice([b"", rnd.randbytes(8), rnd.randbytes(8), rnd.randbytes(3)])
                sp.trace_state = rnd.choice(["", "vendor=a,other=b"])
                sp.name = rnd.choice(_TEXTS)
                sp.kind = rnd.choice([0, 1, 2, 3, 4, 5, 5, 7])
                start = rnd.choice([1_764_000_000_000_000_000 + rnd.randrange(10**12), 0,
                                    2**63 + 5])
                sp.start_time_unix_nano = start
                sp.end_time_unix_nano = rnd.choice([start + rnd.randrange(10**9), 0, start])
                _attrs(sp.attributes, rnd, rnd.randrange(8))
                if rnd.random() < 0.15:  # past the depth cap; arrays past BAIL_DEPTH too
                    kvlist = rnd.random() < 0.5  # (protobuf's own limit: 100 nested messages)
                    _deep(sp.attributes.add().value, rnd.randrange(10, 30 if kvlist else 44),
                          kvlist)
                    sp.attributes[-1].key = "deep"
                for kind in range(8) if rnd.random() < 0.2 else ():
                    kv = sp.attributes.add()
                    kv.key = f"kind{kind}"
                    _value(kv.value, rnd, 0, kind)
                for e in range(rnd.choice([0, 0, 1, 2, 5])):
                    ev = sp.events.add()
                    ev.name = rnd.choice(["exception", "gen_ai.choice", "", "événement"])
                    ev.time_unix_nano = rnd.choice([start + e, 0, 2**64 - 1])
                    _attrs(ev.attributes, rnd, rnd.randrange(4))
                    ev.dropped_attributes_count = rnd.choice([0, 0, 3])
                for _ in range(rnd.choice([0, 0, 1, 3])):
                    lk = sp.links.add()
                    lk.trace_id, lk.span_id = rnd.randbytes(16), rnd.randbytes(rnd.choice([8, 8, 0]))
                    lk.trace_state = rnd.choice(["", "k=v"])
                    _attrs(lk.attributes, rnd, rnd.randrange(3))
                    lk.flags = rnd.choice([0, 257])
                if rnd.random() < 0.5:
                    sp.status.code = rnd.choice([0, 1, 2, 5])
                    sp.status.message = rnd.choice(["", "boom", "échec"])
                sp.dropped_attributes_count = rnd.choice([0, 1])
                sp.flags = rnd.choice([0, 0x100])
    return req.SerializeToString()


def _sdk_body() -> bytes:
    """Spans made by the OpenTelemetry SDK and encoded by its OTLP exporter's encoder."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Link, Status, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "sdk"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tests.differential", "0.1")
    with tracer.start_as_current_span("root") as root:
        for i in range(4):
            with tracer.start_as_current_span(f"child {i}", links=[Link(root.get_span_context())]) as sp:
                sp.set_attributes({"n": i, "f": i / 7, "b": i % 2 == 0, "s": "текст",
                                   "ss": ["a", "b"], "ii": [1, -2], "ff": [0.5, 1e300],
                                   "bb": [True]})
                sp.add_event("e", {"i": i})
                if i == 2:
                    sp.set_status(Status(StatusCode.ERROR, "bad"))
                    sp.record_exception(RuntimeError("x"))
    return encode_spans(exporter.get_finished_spans()).SerializeToString()


def corpus() -> list[bytes]:
    """The valid bodies every mutation starts from (the same on every run)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from _otlp_load import template

    bodies = [valid_body(seed) for seed in range(120)]
    bodies += [template(w, 7, n).body for w in ("agents", "genai") for n in (1, 20)]
    bodies.append(_sdk_body())
    bodies.append(b"")
    return bodies


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _read_varint(b: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError
        v |= (b[i] & 0x7F) << shift
        shift += 7
        i += 1
        if b[i - 1] < 0x80:
            return v, i


def _fields(b: bytes) -> list | None:
    """A message's top-level fields as [field, wire type, value], or None when it does not parse."""
    out, i = [], 0
    try:
        while i < len(b):
            tag, i = _read_varint(b, i)
            field, wt = tag >> 3, tag & 7
            if wt == 0:
                v, i = _read_varint(b, i)
            elif wt in (1, 2, 5):
                n = 8 if wt == 1 else 4 if wt == 5 else None
                if n is None:
                    n, i = _read_varint(b, i)
                v, i = b[i:i + n], i + n
                if len(v) < n:
                    return None
            else:
                return None
            out.append([field, wt, v])
    except ValueError:
        return None
    return out


def _encode(fields: list) -> bytes:
    out = bytearray()
    for field, wt, v in fields:
        out += _varint(field << 3 | wt)
        if wt == 0:
            out += _varint(v)
        elif wt == 2:
            out += _varint(len(v)) + v
        else:
            out += v
    return bytes(out)


def _structural(body: bytes, rnd: random.Random, others: list[bytes]) -> bytes:
    """One edit somewhere in the message tree, every enclosing length kept right."""
    fields = _fields(body)
    if not fields:
        return body
    nested = [x for x in fields if x[1] == 2 and x[2] and _fields(x[2])]
    if nested and rnd.random() < 0.75:  # go down one level
        x = rnd.choice(nested)
        x[2] = _structural(x[2], rnd, others)
        return _encode(fields)
    k = rnd.randrange(len(fields))
    op = rnd.randrange(7)
    if op == 0:  # drop a field
        del fields[k]
    elif op == 1:  # repeat a field (a singular one given twice)
        fields.insert(k, list(fields[k]))
    elif op == 2:  # reorder
        rnd.shuffle(fields)
    elif op == 3:  # another varint value, or the field number changed
        f, wt, _ = fields[k]
        if wt == 0:
            fields[k][2] = rnd.choice([0, 1, 2, 7, 2**31, 2**32 + 1, 2**63, 2**64 - 1,
                                       rnd.getrandbits(64)])
        else:
            fields[k][0] = rnd.choice([f + 1, max(1, f - 1), 99, 3])
    elif op == 4:  # a payload replaced by another body's piece or random text
        other = rnd.choice(others)
        j = rnd.randrange(len(other) + 1)
        fields[k] = [fields[k][0], 2, rnd.choice([other[j:j + rnd.randrange(40)],
                                                  rnd.randbytes(rnd.randrange(9)),
                                                  "é🙂x".encode() * rnd.randrange(4)])]
    elif op == 5:  # an unknown field of some wire type
        fields.insert(k, rnd.choice([[1000, 0, 5], [1001, 1, b"\0" * 8], [1002, 5, b"abcd"],
                                     [1003, 2, b"xyz"]]))
    else:  # a fixed64 (a timestamp) set to an edge
        fixed = [x for x in fields if x[1] == 1]
        if fixed:
            rnd.choice(fixed)[2] = rnd.choice([0, 2**63 - 1, 2**63, 2**64 - 1]).to_bytes(8, "little")
    return _encode(fields)


def mutate(body: bytes, rnd: random.Random, others: list[bytes]) -> bytes:
    """``body`` with 1-4 random edits: byte-level (mostly invalid) or of its message tree."""
    if rnd.random() < 0.6:
        for _ in range(rnd.randint(1, 3)):
            body = _structural(body, rnd, others)
        if rnd.random() < 0.8:
            return body
    b = bytearray(body)
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(8)
        i = rnd.randrange(len(b) + 1)
        if op == 0 and b:  # flip one bit
            i = min(i, len(b) - 1)
            b[i] ^= 1 << rnd.randrange(8)
        elif op == 1 and b:  # one random byte
            b[min(i, len(b) - 1)] = rnd.randrange(256)
        elif op == 2:  # truncate
            del b[i:]
        elif op == 3:  # cut a range
            del b[i:i + rnd.randint(1, 16)]
        elif op == 4:  # repeat a range
            b[i:i] = b[i:i + rnd.randint(1, 32)]
        elif op == 5:  # insert garbage
            b[i:i] = rnd.randbytes(rnd.randint(1, 8))
        elif op == 6 and b:  # a length or varint made huge / continued
            b[min(i, len(b) - 1)] = rnd.choice([0xFF, 0x80, 0x7F, 0x00])
        else:  # splice another body in
            other = rnd.choice(others)
            j = rnd.randrange(len(other) + 1)
            b[i:] = other[j:]
    return bytes(b)


def _limits(rnd: random.Random) -> Limits:
    if rnd.random() < 0.6:
        return Limits()
    return Limits(max_name=rnd.randrange(12), max_key=rnd.randrange(12),
                  max_value=rnd.choice([None, rnd.randrange(30)]),
                  max_attributes=rnd.randrange(6), max_events=rnd.randrange(3),
                  max_links=rnd.randrange(2), max_depth=rnd.randrange(7))


def compare(body: bytes, limits: Limits) -> str:
    """'native', 'python' (the compiled decoder declined) or 'rejected'; fails on a difference."""
    try:
        want = decode_request(parse_request(body, _PB), project="p1", limits=limits)
    except UserError as exc:
        want = exc
    native = decode_protobuf(body, "p1", limits)
    try:
        got = decode_body(body, _PB, project="p1", limits=limits)
    except UserError as exc:
        got = exc
    if isinstance(want, UserError):
        assert native is None, "the compiled decoder accepted a body the protobuf library rejects"
        assert isinstance(got, UserError), "a body the reference rejects was accepted"
        return "rejected"
    assert not isinstance(got, UserError), f"rejected a body the reference accepts: {got}"
    for batch in (got, native) if native is not None else (got,):
        assert_same_batch(batch, want)
    return "python" if native is None else "native"


def _run(seed: int, n: int) -> dict[str, int]:
    rnd = random.Random(seed)
    bodies = corpus()
    outcomes = {"native": 0, "python": 0, "rejected": 0}
    for i in range(n):
        body = mutate(rnd.choice(bodies), rnd, bodies)
        limits = _limits(rnd)
        try:
            outcomes[compare(body, limits)] += 1
        except AssertionError as exc:
            raise AssertionError(f"mutation {i} of seed {seed} ({limits}): {exc}") from exc
    return outcomes


def test_valid_corpus_is_decoded_natively_and_identically():
    for i, body in enumerate(corpus()):
        for limits in (Limits(), Limits(max_name=3, max_key=4, max_value=5, max_attributes=2,
                                        max_events=1, max_links=0, max_depth=2)):
            out = compare(body, limits)
            req = ExportTraceServiceRequest.FromString(body)
            if out != "native":  # only bodies with a value nested past BAIL_DEPTH are declined
                assert _deepest(req) >= 32, (i, out)


def _deepest(msg, depth: int = 0) -> int:
    best = depth
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        nested = depth + (field.message_type.name in ("ArrayValue", "KeyValueList"))
        for v in value if field.is_repeated else [value]:
            best = max(best, _deepest(v, nested))
    return best


def test_every_anyvalue_kind_is_in_the_corpus():
    kinds: set[str] = set()

    def walk(msg):
        for field, value in msg.ListFields():
            if field.containing_type.name == "AnyValue":
                kinds.add(field.name)
            if field.message_type is not None:
                for v in value if field.is_repeated else [value]:
                    walk(v)

    for body in corpus():
        walk(ExportTraceServiceRequest.FromString(body))
    assert kinds >= {"string_value", "bool_value", "int_value", "double_value", "array_value",
                     "kvlist_value", "bytes_value"}


def test_mutated_bodies_decode_identically_or_are_both_rejected():
    outcomes = _run(seed=2024, n=4000)
    assert sum(outcomes.values()) == 4000
    # enough of each outcome that the comparison means something
    assert outcomes["native"] >= 800 and outcomes["rejected"] >= 800, outcomes


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_many_more_mutated_bodies(seed):
    outcomes = _run(seed=10_000 + seed, n=10_000)
    assert outcomes["native"] >= 2000, outcomes
