"""Who&When failure logs -> OTLP spans in the store, and their labels for scoring.

One trace per log, one span per ``history`` message in order (step index =
position = the label's ``mistake_step``), with the speaker as
``gen_ai.agent.name``, the message role and the step index. A code-execution
speaker (a terminal / executor) becomes a tool span whose result is its
output, so tool-result signals apply to it. The labels (``mistake_agent``,
``mistake_step``, ``mistake_reason``) are kept as resource attributes under
``whowhen.label.`` for evaluation only: the attributor's loader drops that
prefix and never reads resource attributes.

The spans go through ingest's own OTLP JSON decoder, so an imported log is
stored exactly as if a collector had sent it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flywheel import Store, UserError

LABEL_PREFIX = "whowhen.label."
#: Speakers whose messages are code-execution output, not an agent's words.
EXECUTOR = re.compile(r"terminal|executor|code_?exec", re.IGNORECASE)
#: "Orchestrator (thought)", "Orchestrator (-> WebSurfer)": the agent, then the message's channel.
_CHANNEL = re.compile(r"^\s*(?P<agent>[^()]+?)\s*\((?P<channel>[^()]*)\)\s*$")
_BASE_NS = 1_735_689_600_000_000_000  # 2025-01-01T00:00:00Z; message i starts i seconds later
#: A Python ``warnings`` record as the runtime prints it to stderr -- ``FILE.py:LINE:
#: SomethingWarning: message`` and the indented source line after it. Magentic-One logs
#: captured the runtime's stderr into message content (e.g. "orchestrator.py:216:
#: UserWarning: Resolved model mismatch: gpt-4o-2024-08-06 != ..."): not the agent's words.
_RUNTIME_WARNING = re.compile(
    r"^[^\n]*\.py:\d+: [A-Za-z_]*Warning: [^\n]*\n?(?:[ \t]+[^\n]*\n?)?", re.MULTILINE
)
#: Where a browsing agent's message stops being its words and starts being what the
#: browser returned (Magentic-One's WebSurfer / FileSurfer templates): a screenshot
#: caption, extracted page metadata, OCR text, or a file viewer's address header.
_OBSERVATION = re.compile(
    r"^(?:Here is a screenshot of |The following metadata was extracted from the webpage|"
    r"Automatic OCR of the page screenshot has detected)|\AAddress: \S+\n",
    re.MULTILINE,
)


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


def message_text(msg: Mapping[str, Any]) -> str:
    """A message's content without runtime noise the logging captured into it.

    Python warning records (see ``_RUNTIME_WARNING``) are the framework's stderr,
    not something an agent said: left in, their file line numbers and model
    version dates read as figures the agent stated.
    """
    content = str(msg.get("content") or "")
    return _RUNTIME_WARNING.sub("", content).rstrip() if "Warning: " in content else content


def split_observation(content: str) -> tuple[str, str]:
    """A message's own words and the tool output it quotes: ``(said, observed)``.

    A browsing agent's message is its action ("I typed 'x' into the search
    bar.") followed by the page the browser returned (see ``_OBSERVATION``).
    The page is what the agent *observed*, not what it claimed, so it is
    stored as the step's input; ``observed`` is '' for ordinary messages.
    """
    m = _OBSERVATION.search(content)
    if m is None:
        return content, ""
    return content[: m.start()].rstrip(), content[m.start() :]


def speaker_of(msg: Mapping[str, Any]) -> tuple[str, str]:
    """The agent that spoke and the message's channel, if the speaker string carries one.

    CaptainAgent logs name the speaker in ``name``; Magentic-One logs put it in
    ``role`` with a channel suffix (``Orchestrator (thought)``,
    ``Orchestrator (-> WebSurfer)``): the agent is the part before it.
    """
    raw = str(msg.get("name") or msg.get("role") or "unknown")
    m = _CHANNEL.match(raw)
    return (m.group("agent"), m.group("channel").strip()) if m else (raw.strip(), "")


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int) and not isinstance(value, bool):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}


def log_to_otlp(log: WhoWhenLog, *, service: str = "whowhen") -> dict[str, Any]:
    """An OTLP/JSON ``ExportTraceServiceRequest`` for one log."""
    tid = trace_id_for(log.name)
    spans = []
    for i, msg in enumerate(log.history):
        speaker, channel = speaker_of(msg)
        role = str(msg.get("role") or "")
        content = message_text(msg)
        attrs = [
            _kv("gen_ai.agent.name", speaker),
            _kv("flywheel.message.role", role),
            _kv("flywheel.step.index", i),
        ]
        if channel:
            attrs.append(_kv("flywheel.message.channel", channel))
        if EXECUTOR.search(speaker):
            attrs += [
                _kv("flywheel.step.kind", "tool"),
                _kv("gen_ai.operation.name", "execute_tool"),
                _kv("gen_ai.tool.name", "code_execution"),
                _kv("gen_ai.tool.call.result", content),
            ]
            name = "execute_tool code_execution"
        else:
            said, observed = split_observation(content)
            attrs += [_kv("flywheel.step.kind", "llm"), _kv("flywheel.output", said)]
            if observed:
                attrs.append(_kv("flywheel.input", observed))
            name = f"message {speaker}"
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
                "status": {},
            }
        )
    resource = [
        _kv("service.name", service),
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
