"""Migration 013 (a step's text read from its span): an existing store upgrades, reads unchanged.

A store migrated up to 012 gets one trace (spans of several conventions, a span
id stored twice with other attributes); 013 is applied; the same spans arrive
again under another trace id. The step text the old view stored and the text
now read from the spans are the same, through every reader: the table's own
columns, a whole trace, provenance's steps, the text search.
"""

from __future__ import annotations

import json
import os
from typing import Any

from flywheel.ingest import get_trace, list_traces, load_steps

import flywheel._migrations as migrations
from flywheel import open_store

T0 = 1_764_520_000_000_000_000
OLD, NEW = "a1" * 16, "b2" * 16


def _spans(trace: str) -> dict[str, list[Any]]:
    """Spans of several conventions; span 05 twice, with other arguments."""
    rows = [
        ("01", "", "invoke_agent", {"gen_ai.operation.name": "invoke_agent",
                                    "gen_ai.agent.name": "bank"}),
        ("02", "01", "chat", {"gen_ai.operation.name": "chat",
                              "gen_ai.system_instructions": "be brief",
                              "gen_ai.input.messages": '[{"role": "user", "content": "pay Bob"}]',
                              "gen_ai.output.messages":
                                  '[{"role": "assistant", "content": "ok"}]'}),
        ("03", "01", "execute_tool send", {"gen_ai.operation.name": "execute_tool",
                                           "gen_ai.tool.name": "send",
                                           "gen_ai.tool.call.arguments": '{"to": "Bob", "n": 5}',
                                           "gen_ai.tool.call.result": "sent/5 \"ok\""}),
        ("04", "01", "ChatOpenAI", {"openinference.span.kind": "LLM",
                                    "llm.input_messages.0.message.role": "user",
                                    "llm.input_messages.0.message.content": "héllo",
                                    "llm.output_messages.0.message.content": "hi"}),
        ("05", "01", "lookup", {"openinference.span.kind": "TOOL", "tool.name": "lookup",
                                "input.value": "Bob"}),
        ("05", "01", "lookup", {"openinference.span.kind": "TOOL", "tool.name": "lookup",
                                "input.value": '{"who": "Alice"}'}),
        ("06", "", "gen", {"langfuse.observation.type": "chain",
                           "langfuse.observation.input": "root input"}),
        ("07", "06", "gen", {"langfuse.observation.type": "chain",
                             "langfuse.observation.input": "child input"}),
        ("08", "06", "completion", {"traceloop.span.kind": "task", "llm.request.type": "chat",
                                    "gen_ai.prompt.0.content": "q",
                                    "gen_ai.completion.0.content": "a"}),
    ]
    return {
        "TraceId": [trace] * len(rows),
        "SpanId": [trace[:14] + sid for sid, *_ in rows],
        "ParentSpanId": [trace[:14] + p if p else "" for _, p, *_ in rows],
        "Timestamp": [T0 + i for i in range(len(rows))],
        "SpanName": [name for _, _, name, _ in rows],
        "ServiceName": ["svc"] * len(rows),
        "SpanAttributes": [attrs for *_, attrs in rows],
    }


def _texts(store, trace: str) -> list[tuple[str, ...]]:
    rows = store.query(
        "SELECT span_id, kind, arguments, result, input, output FROM agent_steps"
        " WHERE trace_id = {t:String} ORDER BY span_id, arguments, input", {"t": trace})
    return [(r["span_id"][-2:], r["kind"], r["arguments"], r["result"], r["input"], r["output"])
            for r in rows]


def _same(detail: Any, trace: str) -> str:
    """A read's JSON with the trace's own ids made neutral."""
    text = json.dumps(detail.model_dump(mode="json"), sort_keys=True)
    return text.replace(trace, "T").replace(trace[:14], "X")


def test_a_store_upgrades_and_reads_its_steps_unchanged(chdb_dir, monkeypatch):
    before = migrations.package_migrations

    def up_to_012(package: str) -> list[migrations.Migration]:
        return [m for m in before(package) if package != "ingest" or m.version <= 12]

    db = f"upgrade{os.getpid()}"
    store = open_store(f"chdb://{chdb_dir}?database={db}")
    try:
        monkeypatch.setattr(migrations, "package_migrations", up_to_012)
        store.migrate(["ingest"])
        store.insert(store.otel_table, _spans(OLD))
        old_texts = _texts(store, OLD)
        old_trace = _same(get_trace(store, OLD), OLD)
        assert any(r[2] == '"Bob"' for r in old_texts)  # a bare argument, stored as JSON text
        monkeypatch.setattr(migrations, "package_migrations", before)
        assert store.migrate(["ingest"]) == ["ingest:013_step_text_in_spans"]
        # steps stored before keep their text, read through the same columns
        assert _texts(store, OLD) == old_texts
        assert _same(get_trace(store, OLD), OLD) == old_trace
        store.insert(store.otel_table, _spans(NEW))
        # steps written since store no text; it is read from their spans, the same text
        assert store.scalar("SELECT max(length(stored_input) + length(stored_arguments)) FROM"
                            " agent_steps WHERE trace_id = {t:String}", {"t": NEW}) == 0
        assert _texts(store, NEW) == old_texts
        assert _same(get_trace(store, NEW), NEW) == old_trace
        assert ([{**s, "span_id": s["span_id"][-2:], "parent_span_id": s["parent_span_id"][-2:]}
                 for s in load_steps(store, NEW)]
                == [{**s, "span_id": s["span_id"][-2:], "parent_span_id": s["parent_span_id"][-2:]}
                    for s in load_steps(store, OLD)])
        # the winning write of span 05 (the later one) is what the search sees
        assert {t.trace_id for t in list_traces(store, text="ALICE")} == {OLD, NEW}
    finally:
        store.command(f"DROP DATABASE IF EXISTS {db}")
        store.close()


def test_a_step_with_no_span_row_left_reads_empty_text(store):
    """A step whose span row is gone (a TTL on an adopted span table) reads no text."""
    store.insert(store.otel_table, {"TraceId": ["c3" * 16], "SpanId": ["d4" * 8], "Timestamp": [T0],
                                    "SpanName": ["execute_tool x"],
                                    "SpanAttributes": [{"gen_ai.tool.name": "x",
                                                        "gen_ai.tool.call.arguments": "{}"}]})
    assert _texts(store, "c3" * 16)[0][2] == "{}"
    store.command(f"TRUNCATE TABLE {store.otel_table}")
    assert _texts(store, "c3" * 16)[0][2] == ""


def test_a_server_dictionary_logs_in_as_the_stores_own_user(store):
    """On a server the dictionary's source logs in with the store's user, quoted; it parses."""
    from flywheel import package_migrations
    from flywheel._migrations import migration_statements
    from flywheel._store_clickhouse import ClickHouseStore

    server = ClickHouseStore.__new__(ClickHouseStore)
    server._login = ("fly'wheel", "p\\w'd")
    creds = server.dictionary_credentials()
    assert creds == "USER 'fly\\'wheel' PASSWORD 'p\\\\w\\'d'"
    server._login = ("default", "")
    assert server.dictionary_credentials() == ""
    mig = next(m for m in package_migrations("ingest") if m.version == 13)
    stmt = next(s for s in migration_statements(mig, cluster=None, otel_table="otel_traces",
                                                 credentials=creds) if "DICTIONARY" in s)
    assert "{{" not in stmt
    stmt = stmt.replace("agent_step_texts_dict", "creds_dict")
    try:
        store.command(stmt)  # parses; the login happens at the first lookup
        shown = store.scalar("SELECT create_table_query FROM system.tables"
                             " WHERE database = currentDatabase() AND name = 'creds_dict'")
        assert "USER 'fly\\'wheel' PASSWORD '[HIDDEN]'" in shown
    finally:
        store.command("DROP DICTIONARY IF EXISTS creds_dict")
