"""A real instrumentation library from PyPI, driving a framework with a fake model.

OpenInference's LangChain instrumentor traces a LangChain run (a scripted
``FakeMessagesListChatModel`` -- a stand-in for an LLM, no network -- and a
real ``@tool``) and exports through the stock OTLP/protobuf exporter to a live
server; the normalised steps are read back through the API.
"""

from __future__ import annotations

import json

import httpx
import pytest

pytest.importorskip("openinference.instrumentation.langchain")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from openinference.instrumentation.langchain import LangChainInstrumentor  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

from tests.ingest._server import running_server  # noqa: E402


@tool
def get_iban(name: str) -> str:
    """Look up the IBAN of a payee."""
    return "DE89370400440532013000" if name == "landlord" else "unknown"


def test_openinference_langchain_over_otlp(store, tmp_path):
    model = FakeMessagesListChatModel(responses=[
        AIMessage(content="", tool_calls=[{"name": "get_iban", "args": {"name": "landlord"}, "id": "c1"}]),
        AIMessage(content="The landlord's IBAN is DE89370400440532013000."),
    ])

    def agent(question: str) -> str:
        msgs = [HumanMessage(question)]
        first = model.invoke(msgs)
        call = first.tool_calls[0]
        result = get_iban.invoke(call["args"])
        msgs += [first, ToolMessage(result, tool_call_id=call["id"])]
        return model.invoke(msgs).content

    with running_server(store, tmp_path / "wal") as (url, app):
        provider = TracerProvider(resource=Resource.create({"service.name": "lc-agent"}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
        instrumentor = LangChainInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            answer = RunnableLambda(agent).invoke("What is my landlord's IBAN?")
        finally:
            instrumentor.uninstrument()
            provider.shutdown()
        assert "DE89" in answer
        assert app.state.writer.flush(10)
        rows = store.query("SELECT trace_id, kind, tool_name, arguments, result FROM agent_steps "
                           "WHERE service_name = 'lc-agent' ORDER BY start_time")
        kinds = [r["kind"] for r in rows]
        assert kinds.count("llm") == 2 and kinds.count("tool") == 1 and "agent" in kinds or "other" in kinds
        tool_row = next(r for r in rows if r["kind"] == "tool")
        assert tool_row["tool_name"] == "get_iban"
        # a one-argument LangChain tool records the bare value (stored as sent, a JSON string)
        assert json.loads(tool_row["arguments"]) == "landlord"
        assert "DE89370400440532013000" in tool_row["result"]
        trace_id = rows[0]["trace_id"]
        r = httpx.get(f"{url}/api/traces/{trace_id}")
        assert r.status_code == 200, r.text
        tools = [sp["step"] for sp in r.json()["spans"] if sp["step"]["kind"] == "tool"]
        assert [t["tool_name"] for t in tools] == ["get_iban"]
        # read back, it is named after the argument of the model's call, and unwrapped
        assert tools[0]["arguments"] == {"name": "landlord"}
        assert tools[0]["result"] == "DE89370400440532013000"
