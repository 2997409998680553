"""Who&When failure logs -> OTLP spans in the store, and their labels for scoring.

One trace per log, one span per ``history`` message in order (step index =
position = the label's ``mistake_step``), with the speaker as
``gen_ai.agent.name``, the message role and the step index. What each message
is (an agent's words, a code run and its outcome, a page the agent was shown,
a review, a runtime notice) is read by the log's framework adapter
(``_formats``; its name is the resource attribute ``flywheel.log.format``), so
no framework phrase reaches the signals. The labels (``mistake_agent``,
``mistake_step``, ``mistake_reason``) are kept as resource attributes under
``whowhen.label.`` for evaluation only: the attributor's loader drops that
prefix and never reads resource attributes.

The spans go through ingest's own OTLP JSON decoder, so an imported log is
stored exactly as if a collector had sent it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flywheel import Store, UserError

from ._formats import adapter_for

LABEL_PREFIX = "whowhen.label."
_BASE_NS = 1_735_689_600_000_000_000  # 2025-01-01T00:00:00Z; message i starts i seconds later


@dataclass
class WhoWhenLog:
    """One parsed log file."""

    name: str  # subset/file stem
    history: list[dict[str, Any]]
    labels: dict[str, str]
    question: str


def trace_id_for(name: str) -> str:
    """A stable 32-hex trace id for a log (importing twice stores it once)."""
    return hashlib.sha256(f"whowhen:{name}".encode()).hexdigest()[:32]


def _span_id(trace_id: str, i: int) -> str:
    return hashlib.sha256(f"{trace_id}:{i}".encode()).hexdigest()[:16]


def parse_log(path: Path, subset: str = "") -> WhoWhenLog:
    """Read one Who&When JSON file (``history`` required)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a readable Who&When JSON log ({exc})") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
        raise UserError(f"{path}: no 'history' list; expected a Who&When log file")
    labels = {
        k: str(doc[k])
        for k in ("mistake_agent", "mistake_step", "mistake_reason", "is_correct", "ground_truth")
        if k in doc
    }
    name = f"{subset}/{path.stem}" if subset else path.stem
    return WhoWhenLog(name, doc["history"], labels, str(doc.get("question", "")))


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int) and not isinstance(value, bool):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}


def log_to_otlp(log: WhoWhenLog, *, service: str = "whowhen") -> dict[str, Any]:
    """An OTLP/JSON ``ExportTraceServiceRequest`` for one log (read by its framework's adapter)."""
    tid = trace_id_for(log.name)
    adapter = adapter_for(log.history)
    spans = []
    for i, raw in enumerate(log.history):
        m = adapter.message(log.history, i)
        attrs = [
            _kv("gen_ai.agent.name", m.speaker),
            _kv("flywheel.message.role", str(raw.get("role") or "")),
            _kv("flywheel.step.index", i),
            _kv("flywheel.step.kind", m.kind),
        ]
        if m.channel:
            attrs.append(_kv("flywheel.message.channel", m.channel))
        if i == 0 and log.question.strip():  # the request the run serves (not a label)
            attrs.append(_kv("flywheel.run.request", log.question[:4000]))
        if m.kind == "tool":
            attrs += [
                _kv("gen_ai.operation.name", "execute_tool"),
                _kv("gen_ai.tool.name", "code_execution"),
                _kv("gen_ai.tool.call.arguments", json.dumps({"code": m.arguments})),
                _kv("gen_ai.tool.call.result", m.result),
            ]
            name = "execute_tool code_execution"
        else:
            attrs.append(_kv("flywheel.output", m.said))
            if m.observed:
                attrs.append(_kv("flywheel.input", m.observed))
            name = f"message {m.speaker}"
        attrs += [_kv(k, v) for k, v in m.attributes.items()]
        status: dict[str, Any] = {}
        if m.status == "error":
            status = {"code": 2, "message": m.error}
        elif m.status == "ok":
            status = {"code": 1}
        start = _BASE_NS + i * 1_000_000_000
        spans.append(
            {
                "traceId": tid,
                "spanId": _span_id(tid, i),
                "name": name,
                "kind": 1,
                "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(start + 500_000_000),
                "attributes": attrs,
                "status": status,
            }
        )
    resource = [
        _kv("service.name", service),
        _kv("flywheel.log.format", adapter.name),
        _kv("whowhen.log", log.name),
        _kv("whowhen.question", log.question[:2000]),
    ]
    resource += [_kv(LABEL_PREFIX + k, v) for k, v in log.labels.items()]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": resource},
                "scopeSpans": [{"scope": {"name": "flywheel.whowhen"}, "spans": spans}],
            }
        ]
    }


def iter_logs(directory: str | Path) -> Iterator[tuple[Path, str]]:
    """The JSON files under ``directory`` (subset = the sub-folder name, if any), in order."""
    root = Path(directory)
    if not root.is_dir():
        raise UserError(
            f"{root} is not a directory; pass the who-and-when folder or a subset of it"
        )
    files = sorted(root.rglob("*.json"), key=lambda p: (str(p.parent), _num(p.stem)))
    if not files:
        raise UserError(f"{root} holds no .json logs")
    for f in files:
        subset = f.parent.name if f.parent != root else root.name
        yield f, subset


def _num(stem: str) -> tuple[int, str]:
    return (int(stem), "") if stem.isdigit() else (10**9, stem)


def import_whowhen(
    store: Store,
    directory: str | Path,
    *,
    project: str = "default",
    on_progress: Callable[[int], None] | None = None,
    chunk: int = 64,
) -> list[str]:
    """Import every log under ``directory``; returns the trace ids (idempotent)."""
    import pyarrow as pa
    from flywheel.ingest import decode_request, parse_request

    ids: list[str] = []
    tables: list[pa.Table] = []

    def flush() -> None:
        if tables:  # one insert per chunk; the token makes a re-import a no-op
            token = hashlib.sha256(":".join(ids[-len(tables) :]).encode()).hexdigest()[:32]
            store.insert(store.otel_table, pa.concat_tables(tables), dedup_token=f"whowhen:{token}")
            if on_progress:
                on_progress(len(tables))
            tables.clear()

    for path, subset in iter_logs(directory):
        log = parse_log(path, subset)
        req = parse_request(
            json.dumps(log_to_otlp(log, service=f"whowhen:{subset}")).encode(), "application/json"
        )
        tables.append(decode_request(req, project=project).table)
        ids.append(trace_id_for(log.name))
        if len(tables) >= chunk:
            flush()
    flush()
    return ids


def read_labels(
    store: Store, trace_ids: list[str] | None = None, project: str = "default"
) -> dict[str, dict[str, str]]:
    """Labels of imported logs by trace id -- for scoring only, never for attributing."""
    rows = store.query(
        "SELECT TraceId AS trace_id, any(ResourceAttributes) AS r FROM {table:Identifier} "
        "WHERE ProjectId = {p:String} AND has(mapKeys(ResourceAttributes), 'whowhen.log') "
        "GROUP BY TraceId",
        {"table": store.otel_table, "p": project},
    )
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        if trace_ids is not None and row["trace_id"] not in trace_ids:
            continue
        r: Mapping[str, str] = row["r"]
        labels = {k[len(LABEL_PREFIX) :]: v for k, v in r.items() if k.startswith(LABEL_PREFIX)}
        labels["log"] = r.get("whowhen.log", "")
        out[row["trace_id"]] = labels
    return out
