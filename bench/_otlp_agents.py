"""A second OTLP/protobuf workload: whole agent traces, written apart from the decoder.

Frozen before the native decoder of issue 24 was written, so throughput
measured on it is measured on data the decoder was not shaped on. It differs
from ``_otlp_load.make_body`` (one flat trace of GenAI chat/tool spans, all
values strings, one resource) on purpose:

- traces of 20 spans (an agent root, model calls, tool calls, a retrieval),
  several traces and several ``resource_spans`` (services) per request;
- OpenInference's flattened keys (``llm.input_messages.0.message.role``) beside
  OTel GenAI keys, in the styles of four instrumentation scopes;
- every ``AnyValue`` kind: ints (token counts), doubles (temperature, scores),
  bools, arrays (finish reasons, stop sequences), key-value lists (document
  metadata) and, rarely, bytes;
- text in English, German, Chinese, Arabic and emoji, with JSON escapes
  (quotes, newlines, backslashes) inside tool arguments;
- failed tool calls with ``exception`` events, links to an earlier trace,
  SERVER/CLIENT/INTERNAL kinds; about 1.1 KB of attributes per span.

``agent_body(seed, n)`` returns the body and the trace and span ids it used
(``_otlp_load.Template`` rewrites them per request).
"""

from __future__ import annotations

import json
import random

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

SPANS_PER_TRACE = 20

_SERVICES = [
    ("itinerary-planner", "python", "openinference.instrumentation.langchain", "0.1.52"),
    ("kundenservice-bot", "python", "opentelemetry.instrumentation.openai_v2", "2.1b0"),
    ("客服助手", "nodejs", "@arizeai/openinference-instrumentation-openai", "2.3.0"),
    ("code-review-agent", "python", "openlit.otel.tracing", "1.33.8"),
]
_USER_TEXT = [
    "Find me a vegetarian restaurant near the Hauptbahnhof that is open after 22:00.",
    "Bitte prüfe, ob die Rechnung Nr. 4711 schon bezahlt wurde, und schick mir eine Kopie.",
    "帮我查一下上周五从上海到北京的航班，并把最便宜的三个选项发给我。",
    "أريد تغيير موعد الاجتماع إلى يوم الخميس الساعة الثالثة مساءً",
    "Review PR #812: the new retry loop in `client.py` swallows \"timeout\" errors 🙃",
]
_TOOLS = [
    ("search_places", {"query": "vegetarian\nrestaurant", "radius_m": 800, "open_now": True}),
    ("lookup_invoice", {"invoice_no": "4711", "include_pdf": False, "fields": ["status", "paid_at"]}),
    ("flight_search", {"from": "PVG", "to": "PEK", "date": "2026-11-27", "cabin": "经济舱"}),
    ("calendar.update_event", {"event_id": "evt_93ab", "start": "2026-12-03T15:00:00+03:00"}),
    ("github_get_diff", {"repo": "acme/http-client", "pr": 812, "path": "C:\\src\\client.py"}),
]
_MODELS = ["claude-sonnet-4-5", "gpt-4.1-mini", "qwen3-32b", "mistral-large-2411"]


def _kv(attrs, key, value):
    kv = attrs.add()
    kv.key = key
    _set(kv.value, value)


def _set(av, value):
    if isinstance(value, bool):
        av.bool_value = value
    elif isinstance(value, int):
        av.int_value = value
    elif isinstance(value, float):
        av.double_value = value
    elif isinstance(value, bytes):
        av.bytes_value = value
    elif isinstance(value, list):
        av.array_value.SetInParent()
        for x in value:
            _set(av.array_value.values.add(), x)
    elif isinstance(value, dict):
        av.kvlist_value.SetInParent()
        for k, v in value.items():
            _kv(av.kvlist_value.values, k, v)
    else:
        av.string_value = str(value)


def _filler(rnd: random.Random, n: int) -> str:
    words = ["itinerary", "Rechnung", "航班", "موعد", "retry", "budget", "confirm", "🙂",
             "tool", "window", "Straße", "价格", "deadline", "\"quoted\"", "line\nbreak"]
    return " ".join(rnd.choice(words) for _ in range(n))


def _llm_attrs(rnd: random.Random, style: int, user: str, tool: str) -> dict:
    model = rnd.choice(_MODELS)
    if style in (0, 2):  # OpenInference, flattened message keys
        return {
            "openinference.span.kind": "LLM", "llm.model_name": model,
            "llm.provider": rnd.choice(["anthropic", "openai", "alibaba"]),
            "llm.invocation_parameters": json.dumps({"temperature": 0.2, "max_tokens": 1024}),
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "You are a careful assistant. " + _filler(rnd, 40),
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.content": user,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": tool,
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments":
                json.dumps({"q": user[:40]}, ensure_ascii=False),
            "llm.token_count.prompt": rnd.randint(200, 9000),
            "llm.token_count.completion": rnd.randint(5, 700),
            "llm.token_count.total": rnd.randint(300, 9700),
            "llm.is_streaming": rnd.random() < 0.3,
        }
    return {  # OTel GenAI, structured values
        "gen_ai.operation.name": "chat", "gen_ai.system": "openai",
        "gen_ai.request.model": model, "gen_ai.response.model": model + "-2025",
        "gen_ai.request.temperature": round(rnd.random(), 3),
        "gen_ai.request.top_p": 0.95,
        "gen_ai.request.stop_sequences": ["\n\nHuman:", "</answer>"],
        "gen_ai.response.finish_reasons": [rnd.choice(["stop", "tool_calls", "length"])],
        "gen_ai.usage.input_tokens": rnd.randint(200, 9000),
        "gen_ai.usage.output_tokens": rnd.randint(5, 700),
        "gen_ai.response.id": f"chatcmpl-{rnd.getrandbits(64):016x}",
        "gen_ai.input.messages": json.dumps([
            {"role": "system", "parts": [{"type": "text", "content": _filler(rnd, 45)}]},
            {"role": "user", "parts": [{"type": "text", "content": user}]}], ensure_ascii=False),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "tool_call", "name": tool, "id": f"call_{rnd.getrandbits(32):08x}",
             "arguments": {"q": user[:30]}}]}], ensure_ascii=False),
    }


def _tool_attrs(rnd: random.Random, style: int, tool: str, args: dict, failed: bool) -> dict:
    result = {"ok": not failed, "items": [_filler(rnd, 12) for _ in range(rnd.randint(2, 6))]}
    if style in (0, 2):
        return {"openinference.span.kind": "TOOL", "tool.name": tool,
                "tool.description": "Calls " + tool + " on behalf of the user. " + _filler(rnd, 8),
                "tool.parameters": json.dumps({"type": "object", "properties": {
                    k: {"type": type(v).__name__} for k, v in args.items()}}),
                "input.value": json.dumps(args, ensure_ascii=False), "input.mime_type": "application/json",
                "output.value": json.dumps(result, ensure_ascii=False),
                "output.mime_type": "application/json"}
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function", "gen_ai.tool.call.id": f"call_{rnd.getrandbits(40):010x}",
            "gen_ai.tool.call.arguments": json.dumps(args, ensure_ascii=False),
            "gen_ai.tool.call.result": json.dumps(result, ensure_ascii=False)}


def _retrieval_attrs(rnd: random.Random) -> dict:
    return {"openinference.span.kind": "RETRIEVER",
            "input.value": _filler(rnd, 6),
            "retrieval.documents.0.document.id": f"doc-{rnd.randint(1, 99999)}",
            "retrieval.documents.0.document.score": rnd.random(),
            "retrieval.documents.0.document.content": _filler(rnd, 40),
            "retrieval.documents.0.document.metadata": {
                "source": "kb/faq.md", "page": rnd.randint(1, 40), "lang": "de", "stale": False},
            "retrieval.documents.1.document.score": rnd.random() / 2,
            "retrieval.documents.1.document.content": _filler(rnd, 30)}


def agent_body(seed: int, n: int) -> tuple[bytes, list[bytes], list[bytes]]:
    """One request of ``n`` spans in traces of 20 (the last may be shorter).

    Returns (body, trace ids, span ids); ids derive from ``seed`` and contain
    zero bytes, so they never occur inside text.
    """
    rnd = random.Random(seed * 7919 + n)
    req = ExportTraceServiceRequest()
    trace_ids: list[bytes] = []
    span_ids: list[bytes] = []
    base = 1_764_500_000_000_000_000 + seed * 3_000_000_000
    made = 0
    while made < n:
        svc, lang, scope, version = _SERVICES[len(trace_ids) % len(_SERVICES)]
        style = _SERVICES.index((svc, lang, scope, version))
        rs = req.resource_spans.add()
        for k, v in (("service.name", svc), ("service.version", f"1.{seed % 9}.{style}"),
                     ("telemetry.sdk.language", lang), ("telemetry.sdk.name", "opentelemetry"),
                     ("host.name", f"pod-{style}-{seed % 5}"), ("process.pid", 4000 + style)):
            _kv(rs.resource.attributes, k, v)
        ss = rs.scope_spans.add()
        ss.scope.name, ss.scope.version = scope, version
        tid = (seed * 1000 + len(trace_ids) + 1).to_bytes(16, "big")
        trace_ids.append(tid)
        user = _USER_TEXT[rnd.randrange(len(_USER_TEXT))]
        tool, args = _TOOLS[rnd.randrange(len(_TOOLS))]
        t0 = base + len(trace_ids) * 50_000_000
        root_id = None
        for i in range(min(SPANS_PER_TRACE, n - made)):
            sid = (seed * 10_000 + made + 1).to_bytes(8, "big")
            span_ids.append(sid)
            made += 1
            sp = ss.spans.add()
            sp.trace_id, sp.span_id = tid, sid
            start = t0 + i * 2_000_000
            sp.start_time_unix_nano = start
            sp.end_time_unix_nano = start + rnd.randint(50_000, 3_000_000_000)
            if i == 0:
                root_id = sid
                sp.name = "invoke_agent " + svc
                sp.kind = 2  # SERVER
                attrs = {"openinference.span.kind": "AGENT", "gen_ai.operation.name": "invoke_agent",
                         "gen_ai.agent.name": svc, "session.id": f"sess-{seed % 97}",
                         "input.value": user, "output.value": _filler(rnd, 25),
                         "user.id": f"u{rnd.randint(1, 5000)}"}
                if len(trace_ids) > 1 and rnd.random() < 0.5:
                    lk = sp.links.add()
                    lk.trace_id, lk.span_id = trace_ids[-2], span_ids[-SPANS_PER_TRACE - 1]
                    _kv(lk.attributes, "link.reason", "follow-up turn")
            else:
                sp.parent_span_id = root_id
                kind = i % 4
                if kind in (1, 3):
                    sp.name = "ChatCompletion" if style == 0 else f"chat {rnd.choice(_MODELS)}"
                    sp.kind = 3  # CLIENT
                    attrs = _llm_attrs(rnd, style, user, tool)
                elif kind == 2:
                    failed = rnd.random() < 0.08
                    sp.name = tool if style in (0, 2) else "execute_tool " + tool
                    sp.kind = 1
                    attrs = _tool_attrs(rnd, style, tool, args, failed)
                    if failed:
                        sp.status.code = 2
                        sp.status.message = "TimeoutError: upstream did not answer in 30 s"
                        ev = sp.events.add()
                        ev.name = "exception"
                        ev.time_unix_nano = sp.end_time_unix_nano - 1000
                        for k, v in (("exception.type", "TimeoutError"),
                                     ("exception.message", "upstream did not answer in 30 s"),
                                     ("exception.stacktrace", "Traceback (most recent call last):\n"
                                      "  File \"agent.py\", line 88, in call\n" + _filler(rnd, 10)),
                                     ("exception.escaped", False)):
                            _kv(ev.attributes, k, v)
                    else:
                        sp.status.code = 1
                else:
                    sp.name = "retrieve"
                    sp.kind = 1
                    attrs = _retrieval_attrs(rnd)
                    if rnd.random() < 0.05:
                        attrs["retrieval.embedding.sha"] = rnd.randbytes(20)
            for k, v in attrs.items():
                _kv(sp.attributes, k, v)
    return req.SerializeToString(), trace_ids, span_ids
