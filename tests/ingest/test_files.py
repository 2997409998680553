"""``flywheel ingest FILE``: the same file imported into two projects is stored in both (issue 27)."""

from __future__ import annotations

import json

from flywheel.ingest import get_trace, import_otlp_json, list_traces

TID = "7f" * 16


def _file(tmp_path):
    spans = [{"traceId": TID, "spanId": f"{i + 1:016x}", "parentSpanId": "" if i == 0 else "1".zfill(16),
              "name": "execute_tool lookup" if i else "invoke_agent a",
              "startTimeUnixNano": str(1_700_000_000_000_000_000 + i * 1000),
              "endTimeUnixNano": str(1_700_000_000_000_000_000 + i * 1000 + 500),
              "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}}] if i else []}
             for i in range(5)]
    path = tmp_path / "trace.otlp.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")
    return path


def test_same_file_into_two_projects_is_stored_in_both(store, tmp_path):
    path = _file(tmp_path)
    a = import_otlp_json(store, path, project="A")
    b = import_otlp_json(store, path, project="B")
    assert (a.spans, a.rejected, b.spans, b.rejected) == (5, 0, 5, 0)
    for project in ("A", "B"):
        assert len(get_trace(store, TID, project=project).spans) == 5
        assert [t.span_count for t in list_traces(store, project=project)] == [5]
    rows = store.query("SELECT ProjectId, count() AS n FROM otel_traces GROUP BY ProjectId ORDER BY ProjectId")
    assert rows == [{"ProjectId": "A", "n": 5}, {"ProjectId": "B", "n": 5}]


def test_same_file_twice_into_one_project_is_stored_once(store, tmp_path):
    path = _file(tmp_path)
    import_otlp_json(store, path, project="A")
    import_otlp_json(store, path, project="A")
    assert store.scalar("SELECT count() AS n FROM otel_traces") == 5
    assert [t.span_count for t in list_traces(store, project="A")] == [5]
