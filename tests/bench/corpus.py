"""Read the hand-written redaction corpora (bench/redaction_corpus) as promotion steps.

No store: span attributes are mapped the way ingest maps them (GenAI,
OpenInference, bare ``execute_tool`` spans), enough for detector tests. The
whole-pipeline figures come from ``bench/redaction_quality.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flywheel.promote import TraceStep

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "redaction_corpus"


def _attrs(span: dict[str, Any]) -> dict[str, str]:
    out = {}
    for a in span.get("attributes", []):
        v = a["value"]
        out[a["key"]] = str(next(iter(v.values())))
    return out


def load(name: str) -> list[tuple[str, list[TraceStep], dict[str, Any]]]:
    """(trace id, steps, labels) per trace of corpus ``name`` (``dev`` or ``frozen``)."""
    labels = json.loads((CORPUS / f"{name}.labels.json").read_text(encoding="utf-8"))
    out = []
    for line in (CORPUS / f"{name}.otlp.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        steps = []
        for sp in spans:
            a = _attrs(sp)
            tool = a.get("gen_ai.tool.name") or a.get("tool.name")
            if not tool and a.get("gen_ai.operation.name") == "execute_tool":
                tool = sp["name"].removeprefix("execute_tool ")
            if tool:
                steps.append(
                    TraceStep(
                        span_id=sp["spanId"],
                        tool_name=tool,
                        arguments=a.get("gen_ai.tool.call.arguments") or a.get("input.value"),
                        result=a.get("gen_ai.tool.call.result") or a.get("output.value"),
                    )
                )
            else:
                steps.append(
                    TraceStep(
                        span_id=sp["spanId"],
                        input_text=a.get("gen_ai.input.messages") or a.get("flywheel.input"),
                        output_text=a.get("gen_ai.output.messages") or a.get("flywheel.output"),
                    )
                )
        trace_id = spans[0]["traceId"]
        out.append((trace_id, steps, labels[trace_id]))
    return out
