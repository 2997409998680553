"""A second log format: scripted multi-agent LangGraph runs exported as OTLP through the platform.

Each run of ``data/langgraph_runs.json`` is a sequential LangGraph graph whose
nodes are ``create_react_agent`` agents; each agent's model is a
``FakeMessagesListChatModel`` (a stand-in for an LLM, no network) replaying
the run's scripted turns, and its tools are real LangChain ``@tool`` functions
over the file's small world (a tool raises on a bad value, times out, or is
unavailable, as real ones do). OpenInference's LangChain instrumentor traces
the run and the stock OTLP/protobuf exporter sends it to a live server of the
platform (``running_server``), so the trace is stored exactly as a user's would
be. Nothing here is read by the attributor but the stored spans; the labels
stay in this module, for scoring.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flywheel.attribution import Attribution, Step, attribute_trace, load_trace

from flywheel import Store

DATA = json.loads((Path(__file__).parent / "data" / "langgraph_runs.json").read_text())


def make_tools(world: dict[str, Any]) -> list[Any]:
    """The runs' tools over ``world`` (LangChain tools; errors are real exceptions)."""
    from langchain_core.tools import tool

    @tool
    def price(item: str) -> str:
        """The shop's price of an item."""
        if item not in world["prices"]:
            raise ValueError(f"unknown item {item!r}")
        amount, currency = world["prices"][item]
        return json.dumps({"item": item, "price": amount, "currency": currency})

    @tool
    def stock(sku: str) -> str:
        """Units of a SKU in the warehouse."""
        return json.dumps({"sku": sku, "in_stock": world["stock"][sku]})  # KeyError if unknown

    @tool
    def convert(amount: float, to: str) -> str:
        """Convert an amount in EUR to another currency."""
        if to not in world["rates"]:
            raise ValueError(f"unsupported currency {to!r}")
        return json.dumps({"amount": round(amount * world["rates"][to], 2), "currency": to})

    @tool
    def fetch(url: str) -> str:
        """The text of a web page."""
        page = world["pages"].get(url)
        if page == "__timeout__":
            raise TimeoutError(f"read timed out after 30 s: {url}")
        if page == "__unavailable__":
            raise ConnectionError(f"503 Service Unavailable: {url}")
        if page is None:
            raise ValueError(f"404 Not Found: {url}")
        return page

    @tool
    def search(query: str) -> str:
        """Web search results (title, snippet) for a query."""
        return json.dumps(world["search"].get(query, []))

    @tool
    def weather(city: str, date: str) -> str:
        """The weather of a city on a date (YYYY-MM-DD)."""
        if city not in world["weather"]:
            raise ValueError(f"unknown city {city!r}")
        return world["weather"][city].get(date, "no record")

    return [price, stock, convert, fetch, search, weather]


def build_graph(run: dict[str, Any], tools: list[Any]) -> Any:
    """A sequential graph START -> agent 1 -> ... -> END replaying ``run``'s scripted turns."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, create_react_agent

    class ScriptedModel(FakeMessagesListChatModel):
        """A stand-in for an LLM: replays its responses; tool binding is a no-op."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # noqa: ARG002
            return self

    graph = StateGraph(MessagesState)
    prev = START
    n = 0
    for agent in run["agents"]:
        responses = []
        for turn in agent["turns"]:
            if "call" in turn:
                calls = []
                for c in turn["call"]:
                    n += 1
                    calls.append({"name": c["tool"], "args": c["args"], "id": f"call_{n}"})
                responses.append(AIMessage(content="", tool_calls=calls))
            else:
                responses.append(AIMessage(content=turn["say"]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_react_agent's deprecation notice
            node = create_react_agent(
                ScriptedModel(responses=responses),
                ToolNode(tools, handle_tool_errors=True),
                name=agent["name"],
            )
        graph.add_node(agent["name"], node)
        graph.add_edge(prev, agent["name"])
        prev = agent["name"]
    graph.add_edge(prev, END)
    return graph.compile()


def export_runs(url: str, runs: list[dict[str, Any]]) -> None:
    """Run each graph under OpenInference and export its spans over OTLP/HTTP to ``url``."""
    from langchain_core.messages import HumanMessage
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    tools = make_tools(DATA["world"])
    for run in runs:
        provider = TracerProvider(resource=Resource.create({"service.name": service(run)}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{url}/v1/traces")))
        instrumentor = LangChainInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            build_graph(run, tools).invoke({"messages": [HumanMessage(run["question"])]})
        finally:
            instrumentor.uninstrument()
            provider.shutdown()


def service(run: dict[str, Any]) -> str:
    """The service name a run's spans carry (finds its trace)."""
    return f"langgraph:{run['id']}"


def trace_ids(store: Store, runs: list[dict[str, Any]]) -> dict[str, str]:
    """Run id -> stored trace id."""
    rows = store.query(
        "SELECT service_name AS s, any(trace_id) AS t FROM agent_steps "
        "WHERE startsWith(service_name, 'langgraph:') GROUP BY service_name"
    )
    by = {r["s"]: r["t"] for r in rows}
    return {r["id"]: by[service(r)] for r in runs if service(r) in by}


def labelled_span(steps: list[Step], label: dict[str, Any]) -> str:
    """The span id a label names: the agent's k-th model turn or k-th tool call."""
    kind, k = ("tool", label["tool"]) if "tool" in label else ("llm", label["turn"])
    mine = [s for s in steps if s.kind == kind and s.agent == label["agent"]]
    return mine[k].span_id


def score(store: Store, runs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """One scored record per run (failures attributed as known failures, successes not)."""
    ids = trace_ids(store, runs)
    for run in runs:
        tid = ids[run["id"]]
        lab = run["label"]
        a: Attribution = attribute_trace(store, tid, assume_failed=lab["failed"])
        steps = load_trace(store, tid)
        rec: dict[str, Any] = {"run": run["id"], "failed": lab["failed"], "attribution": a}
        if lab["failed"]:
            span = labelled_span(steps, lab)
            turns = [s for s in steps if s.kind == "llm"]
            acting = next(
                (
                    s
                    for s in turns
                    if s.index + 1 < len(steps)
                    and any(t.kind == "tool" for t in steps[s.index + 1 : s.index + 4])
                ),
                turns[0],
            )
            rec |= {
                "agent_ok": a.agent == lab["agent"],
                "span_ok": a.causal_span_id == span,
                "category_ok": a.category == lab["category"],
                "last_agent_ok": turns[-1].agent == lab["agent"],
                "last_span_ok": turns[-1].span_id == span,
                "first_action_agent_ok": acting.agent == lab["agent"],
                "first_action_span_ok": acting.span_id == span,
            }
        else:
            rec["no_failure_category"] = not a.failed and a.category == "undetermined"
        yield rec
