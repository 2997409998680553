"""Builds OTLP JSON traces and their labels from the hand-written corpus files.

A corpus file (``frozen_traces.py``, ``dev_traces.py``) defines functions
``t_NAME(t: Trace)`` that write one agent run each: the user's message, tool
calls (arguments and results as the agent framework would record them), the
final reply, root attributes. Every personal or secret value is written
through ``t.p(TYPE, value)``, which returns the value and records it as
planted; every look-alike that must survive redaction goes through
``t.d(value)``. ``build`` turns the functions into one OTLP/JSON request per
trace (the OpenTelemetry file exporter's format, read by
``flywheel.ingest.import_otlp_json``) and a labels document.

Spans use three conventions seen in the wild: OTel GenAI (``gen_ai.tool.name``),
OpenInference (``tool.name``, ``input.value``) and a bare ``execute_tool``
span whose tool name is only in the span name.
"""

from __future__ import annotations

import base64
import hashlib
import json
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Types a planted value can have (the report's rows).
TYPES = (
    "EMAIL",
    "PHONE",
    "IBAN",
    "CARD",
    "IP",
    "SSN",
    "NATIONAL_ID",
    "NAME",
    "ADDRESS",
    "DOB",
    "SECRET",
)
_PARTICLES = {
    "de", "del", "de la", "la", "le", "du", "da", "das", "dos", "di", "van", "von", "der",
    "den", "ten", "ter", "y", "e", "bin", "al", "zu", "mc",
}  # fmt: skip
#: Titles are not identifying: a surviving "Herr" or "Mme" is not a leaked name.
_TITLES = {
    "mr", "mrs", "ms", "miss", "dr", "prof", "herr", "frau", "mme", "mlle", "madame",
    "monsieur", "sr", "sra", "srta", "señor", "señora", "don", "doña", "sig", "signor",
    "signora", "dhr", "mevr",
}  # fmt: skip


def b64(text: str, urlsafe: bool = False) -> str:
    """Base64 of UTF-8 text (as a tool would put an attachment or a blob in JSON)."""
    raw = text.encode()
    return (base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)).decode()


def urlenc(text: str) -> str:
    """Percent-encoding of every reserved character (``quote`` with no safe set)."""
    return urllib.parse.quote(text, safe="")


def luhn(prefix: str) -> str:
    """``prefix`` (digits, spaces allowed) completed with its Luhn check digit."""
    digits = [int(c) for c in prefix if c.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 0:
            d *= 2
            d -= 9 if d > 9 else 0
        total += d
    return prefix + str((10 - total % 10) % 10)


def iban(country: str, bban: str, spaced: bool = False) -> str:
    """An IBAN for a hand-written BBAN with its ISO 7064 check digits."""
    raw = bban.replace(" ", "").upper()
    num = "".join(str(int(c, 36)) for c in raw + country.upper() + "00")
    code = f"{country.upper()}{98 - int(num) % 97:02d}{raw}"
    return " ".join(code[i : i + 4] for i in range(0, len(code), 4)) if spaced else code


def jwt(payload: dict[str, Any], signature: str) -> str:
    """An HS256-shaped JWT over ``payload`` with a hand-typed signature."""
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
    body = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    return f"{head}.{body}.{signature}"


@dataclass
class Planted:
    """A value that must not survive, with the fragments whose survival counts as a leak."""

    type: str
    value: str
    parts: list[str]


@dataclass
class Trace:
    """One agent run being written (see the module docstring)."""

    key: str
    lang: str
    slice: str = "support"
    root: dict[str, str] = field(default_factory=dict)
    error: str = ""
    service: str = "support-agent"
    planted: list[Planted] = field(default_factory=list)
    decoys: list[str] = field(default_factory=list)
    spans: list[dict[str, Any]] = field(default_factory=list)

    # -- labels ------------------------------------------------------------
    def p(self, type_: str, value: str, parts: list[str] | None = None) -> str:
        """Plant ``value`` of ``type_``; returns it for use in an f-string."""
        assert type_ in TYPES, type_
        if parts is None:
            parts = default_parts(type_, value)
        self.planted.append(Planted(type_, value, parts))
        return value

    def d(self, value: str) -> str:
        """A look-alike that must survive; returns it."""
        self.decoys.append(value)
        return value

    # -- spans -------------------------------------------------------------
    def user(self, text: str, system: str = "You are a helpful assistant.") -> None:
        """A chat span whose input is the system and user messages."""
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": text}]
        self._span(
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4.1-mini",
                "gen_ai.input.messages": json.dumps(msgs, ensure_ascii=False),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "content": "", "tool_calls": []}]
                ),
                "gen_ai.usage.input_tokens": 412,
                "gen_ai.usage.output_tokens": 37,
            },
        )
        self.root.setdefault("flywheel.input", text)

    def tool(self, name: str, args: Any, result: Any = None, *, style: str = "genai") -> None:
        """A tool span; ``args``/``result`` dicts become JSON text, strings stay as written."""

        def text(v: Any) -> str:
            return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)

        if style == "genai":
            attrs: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": f"call_{len(self.spans):02d}{self.key[:6]}",
                "gen_ai.tool.call.arguments": text(args),
            }
            if result is not None:
                attrs["gen_ai.tool.call.result"] = text(result)
            self._span(f"execute_tool {name}", attrs)
        elif style == "oi":
            attrs = {"openinference.span.kind": "TOOL", "tool.name": name, "input.value": text(args)}
            if result is not None:
                attrs["output.value"] = text(result)
            self._span(name, attrs)
        elif style == "spanname":  # the tool name only in the span name
            attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.arguments": text(args)}
            if result is not None:
                attrs["gen_ai.tool.call.result"] = text(result)
            self._span(f"execute_tool {name}", attrs)
        else:
            raise ValueError(style)

    def reply(self, text: str) -> None:
        """The final chat span; its output is the assistant's answer."""
        self._span(
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4.1-mini",
                "gen_ai.input.messages": json.dumps([{"role": "user", "content": "(history)"}]),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "content": text}], ensure_ascii=False
                ),
                "gen_ai.usage.input_tokens": 980,
                "gen_ai.usage.output_tokens": 88,
            },
        )
        self.root.setdefault("flywheel.output", text)

    def _span(self, name: str, attrs: dict[str, Any]) -> None:
        self.spans.append({"name": name, "attrs": attrs})


def default_parts(type_: str, value: str) -> list[str]:
    """What counts as a leak: the whole value, and for names each name word, for
    addresses the street line (up to the first comma or line break)."""
    parts = [value]
    if type_ == "NAME":
        words = [w.strip(".,") for w in value.replace("-", " ").split()]
        parts += [
            w
            for w in words
            if len(w) >= 3 and w.lower() not in _PARTICLES and w.lower() not in _TITLES
        ]
    elif type_ == "ADDRESS":
        line = value.replace("\n", ",").split(",")[0].strip()
        if len(line) >= 6:
            parts.append(line)
    return sorted(set(parts), key=lambda s: (-len(s), s))


def _hex(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def _attr(k: str, v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"key": k, "value": {"boolValue": v}}
    if isinstance(v, int):
        return {"key": k, "value": {"intValue": str(v)}}
    return {"key": k, "value": {"stringValue": str(v)}}


def to_otlp(t: Trace, start_ns: int) -> tuple[str, dict[str, Any]]:
    """The trace as one ``ExportTraceServiceRequest`` JSON object; returns (trace id, doc)."""
    trace_id = _hex("trace:" + t.key, 32)
    root_id = _hex("root:" + t.key, 16)
    spans = []
    root_attrs = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": t.service,
        "flywheel.slice": t.slice,
        **t.root,
    }
    end = start_ns + (len(t.spans) + 2) * 50_000_000
    root = {
        "traceId": trace_id,
        "spanId": root_id,
        "name": f"invoke_agent {t.service}",
        "kind": 1,
        "startTimeUnixNano": str(start_ns),
        "endTimeUnixNano": str(end),
        "attributes": [_attr(k, v) for k, v in root_attrs.items()],
        "status": {"code": 2, "message": t.error} if t.error else {"code": 1},
    }
    spans.append(root)
    for i, s in enumerate(t.spans):
        spans.append(
            {
                "traceId": trace_id,
                "spanId": _hex(f"span:{t.key}:{i}", 16),
                "parentSpanId": root_id,
                "name": s["name"],
                "kind": 1,
                "startTimeUnixNano": str(start_ns + (i + 1) * 50_000_000),
                "endTimeUnixNano": str(start_ns + (i + 1) * 50_000_000 + 40_000_000),
                "attributes": [_attr(k, v) for k, v in s["attrs"].items()],
                "status": {"code": 1},
            }
        )
    doc = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", t.service)]},
                "scopeSpans": [{"scope": {"name": "corpus"}, "spans": spans}],
            }
        ]
    }
    return trace_id, doc


def build(
    writers: list[Callable[[Trace], None]], start_ns: int = 1_764_000_000_000_000_000
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run every ``t_*`` writer; return the OTLP requests and the labels document."""
    requests: list[dict[str, Any]] = []
    labels: dict[str, Any] = {}
    for i, w in enumerate(writers):
        key = w.__name__.removeprefix("t_")
        lang = (w.__doc__ or "").split(":")[0].strip() or "en"
        t = Trace(key=key, lang=lang)
        w(t)
        trace_id, doc = to_otlp(t, start_ns + i * 10_000_000_000)
        requests.append(doc)
        labels[trace_id] = {
            "key": key,
            "lang": t.lang,
            "planted": [p.__dict__ for p in t.planted],
            "decoys": sorted(set(t.decoys)),
        }
    return requests, labels
