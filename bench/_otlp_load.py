"""A shared OTLP/protobuf load generator for the ingest benchmarks.

Realistic GenAI spans (chat and execute_tool spans with messages, tool
arguments and results, usage; about 1 KB of attributes each), sent from a
separate client process by concurrent connections; every request carries
fresh trace and span ids so stored counts can be verified.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import random
import socket
import threading
import time

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_body(seed: int, n: int) -> bytes:
    """One request of ``n`` GenAI spans (unique ids from ``seed``)."""
    rnd = random.Random(seed)
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    for k, v in (("service.name", "support-agent"), ("deployment.environment", "prod")):
        a = rs.resource.attributes.add()
        a.key, a.value.string_value = k, v
    ss = rs.scope_spans.add()
    ss.scope.name = "opentelemetry.instrumentation.genai"
    trace_id = seed.to_bytes(16, "big")
    base = 1_764_000_000_000_000_000 + seed * 1_000_000
    for i in range(n):
        sp = ss.spans.add()
        sp.trace_id = trace_id
        sp.span_id = (seed * 10_000 + i + 1).to_bytes(8, "big")
        if i:
            sp.parent_span_id = (seed * 10_000 + 1).to_bytes(8, "big")
        sp.start_time_unix_nano = base + i * 1000
        sp.end_time_unix_nano = base + i * 1000 + rnd.randint(10**5, 10**9)
        sp.kind = 1
        if i % 2:
            sp.name = "execute_tool send_money"
            attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "send_money",
                "gen_ai.tool.call.id": f"call_{seed}_{i}",
                "gen_ai.tool.call.arguments": json.dumps({
                    "recipient": f"GB{rnd.randint(10**19, 10**20)}", "amount": rnd.randint(1, 5000),
                    "subject": "Rent for " + rnd.choice(["March", "April", "May"]),
                    "date": "2026-11-30"}),
                "gen_ai.tool.call.result": json.dumps({
                    "status": "ok", "transaction_id": rnd.randint(1, 10**9),
                    "message": "Transfer scheduled. " + "x" * rnd.randint(400, 600)}),
            }
        else:
            sp.name = "chat gpt-4o"
            attrs = {
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                "gen_ai.response.model": "gpt-4o-2024-08-06",
                "gen_ai.usage.input_tokens": str(rnd.randint(100, 4000)),
                "gen_ai.usage.output_tokens": str(rnd.randint(10, 500)),
                "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{
                    "type": "text", "content": "Please pay my rent to the landlord. " + "y" * 500}]}]),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{
                    "type": "tool_call", "name": "send_money", "arguments": {"amount": 1100}}]}]),
            }
        for k, v in attrs.items():
            a = sp.attributes.add()
            a.key, a.value.string_value = k, v
    return req.SerializeToString()


def template(workload: str, seed: int, spans: int) -> Template:
    """A request of ``spans`` spans of ``workload`` ('genai' or 'agents') to render per send."""
    if workload == "agents":
        from _otlp_agents import agent_body

        body, trace_ids, span_ids = agent_body(seed, spans)
        return Template(body, trace_ids, span_ids)
    return Template(make_body(seed, spans), [seed.to_bytes(16, "big")],
                    [(seed * 10_000 + i + 1).to_bytes(8, "big") for i in range(spans)])


def client_proc(url: str, clients: int, seconds: float, spans: int, first_seed: int, out: mp.Queue,
                workload: str = "genai") -> None:
    """Send pre-built bodies from ``clients`` threads for ``seconds``; report latencies."""
    pool = [template(workload, first_seed + i, spans) for i in range(clients * 4)]
    results: list[tuple[float, int, int]] = []  # (latency, status, spans)
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds
    counter = [first_seed + 1_000_000]

    def worker(k: int) -> None:
        with httpx.Client(timeout=30) as c:
            j = 0
            while time.perf_counter() < deadline:
                with lock:
                    seed = counter[0]
                    counter[0] += 1
                body = pool[(k * 4 + j) % len(pool)].render(seed)
                j += 1
                t0 = time.perf_counter()
                try:
                    r = c.post(url, content=body,
                               headers={"content-type": "application/x-protobuf"})
                    status = r.status_code
                except httpx.HTTPError:
                    status = 0
                with lock:
                    results.append((time.perf_counter() - t0, status, spans))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.put((time.perf_counter() - t0, results))


class Template:
    """A serialised request whose ids are rewritten in place for each send.

    Finding the id bytes once and overwriting them per request keeps the
    client's CPU (which shares the machine with the server) near zero.
    """

    def __init__(self, body: bytes, trace_ids: list[bytes], span_ids: list[bytes]) -> None:
        self.body = bytes(body)
        self.trace_at = [_find_all(self.body, t) for t in trace_ids]
        self.span_at = [_find_all(self.body, s) for s in span_ids]

    def render(self, seed: int) -> bytes:
        """The template with trace and span ids derived from ``seed`` (unique per seed)."""
        out = bytearray(self.body)
        for k, ats in enumerate(self.trace_at):
            tid = (seed * 1000 + k + 1).to_bytes(16, "big")
            for at in ats:
                out[at:at + 16] = tid
        for i, ats in enumerate(self.span_at):
            sid = (seed * 10_000 + i + 1).to_bytes(8, "big")
            for at in ats:
                out[at:at + 8] = sid
        return bytes(out)


def _find_all(hay: bytes, needle: bytes) -> list[int]:
    out, at = [], hay.find(needle)
    while at >= 0:
        out.append(at)
        at = hay.find(needle, at + 1)
    return out


def run_load(url: str, clients: int, seconds: float, spans: int, first_seed: int = 10,
             workload: str = "genai") -> dict:
    """Drive ``url`` (an OTLP/HTTP traces endpoint) and summarise what was acknowledged.

    ``workload``: 'genai' (``make_body``) or 'agents' (``_otlp_agents``, whole
    agent traces, independent of the decoder's development).
    """
    q: mp.Queue = mp.Queue()
    p = mp.Process(target=client_proc, args=(url, clients, seconds, spans, first_seed, q, workload))
    p.start()
    elapsed, results = q.get()
    p.join()
    ok = [r for r in results if r[1] == 200]
    lat = sorted(r[0] for r in ok)
    statuses: dict[int, int] = {}
    for r in results:
        statuses[r[1]] = statuses.get(r[1], 0) + 1
    return {
        "requests": len(results),
        "statuses": statuses,
        "acked_spans": sum(r[2] for r in ok),
        "spans_per_s": round(sum(r[2] for r in ok) / elapsed),
        "p50_ms": round(lat[len(lat) // 2] * 1000, 1) if lat else None,
        "p99_ms": round(lat[max(0, int(len(lat) * 0.99) - 1)] * 1000, 1) if lat else None,
        "elapsed_s": round(elapsed, 1),
    }
