"""Declared and inferred provenance from a plain OTel SDK program, through the wire."""

from __future__ import annotations

import json

import httpx
from click.testing import CliRunner
from flywheel.ingest import declare_provenance
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from flywheel.cli import cli
from tests.ingest._server import running_server


def test_declared_provenance_round_trip(store, tmp_path):
    with running_server(store, tmp_path / "wal") as (url, app):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
        tracer = provider.get_tracer("agent")
        with tracer.start_as_current_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"}) as root:
            with tracer.start_as_current_span("chat", attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
                    {"type": "text", "content": "Pay the bill in bill.txt"}]}])}):
                pass
            with tracer.start_as_current_span("execute_tool read_file", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file",
                "gen_ai.tool.call.arguments": json.dumps({"file_path": "bill.txt"}),
                "gen_ai.tool.call.result": "Send 98.70 to US122000000121212121212"}) as read:
                read_id = format(read.get_span_context().span_id, "016x")
            with tracer.start_as_current_span("execute_tool send_money", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "send_money",
                "gen_ai.tool.call.arguments": json.dumps(
                    {"recipient": "US122000000121212121212", "amount": 98.7, "subject": "Bill"})}) as pay:
                declare_provenance(pay, "subject", "model", ref="summarised the bill")
            trace_id = format(root.get_span_context().trace_id, "032x")
        provider.shutdown()
        assert app.state.writer.flush(10)
        doc = httpx.get(f"{url}/api/traces/{trace_id}/provenance").json()
        recs = {(r["tool_name"], r["path"]): r for r in doc["arguments"]}
        assert recs[("send_money", "subject")]["method"] == "declared"
        assert recs[("send_money", "subject")]["source_ref"] == "summarised the bill"
        rec = recs[("send_money", "recipient")]
        assert (rec["source_kind"], rec["source_span_id"], rec["method"]) == ("tool_result", read_id, "exact")
        assert rec["flags"] == ["untrusted_argument_to_sensitive_tool"] and not rec["trusted"]
        assert recs[("read_file", "file_path")]["source_kind"] == "user"
        assert doc["flagged"] >= 1
        assert httpx.get(f"{url}/api/traces/{'0' * 31 + '1'}/provenance").status_code == 404
    url_store = f"chdb://{store.path}?database={store.database}"
    out = CliRunner().invoke(cli, ["--store", url_store, "provenance", trace_id, "--json"])
    assert out.exit_code == 0, out.output
    assert {r["path"] for r in json.loads(out.output)["arguments"]} >= {"recipient", "amount", "subject"}
    bad = CliRunner().invoke(cli, ["--store", url_store, "provenance", "nope"])
    assert bad.exit_code == 1 and "not found" in bad.output
