"""The scenario of ``_libraries`` run by each real library, with its real instrumentor.

Each ``run_*`` takes a tracer provider (exporting to a live server), runs the
agent once, and undoes its instrumentation. Models are scripted: pydantic-ai's
``FunctionModel``, LangChain's fake chat model, and ``scripted_openai`` (a
stand-in for the OpenAI API behind the real ``openai`` client) for
smolagents and the OpenAI Agents SDK.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from tests.ingest._libraries import (
    CALL_USAGE,
    FILE_TEXT,
    INJECTED_IBAN,
    SCRIPT,
    TASK,
    scripted_openai,
)

SYSTEM = "You are a payments assistant."


def read_file(path: str) -> str:
    """Read a file."""
    return FILE_TEXT if path == "bill.txt" else "no such file"


def send_money(recipient: str, amount: float) -> str:
    """Send money to an IBAN."""
    return f"sent {amount} to {recipient}"


_read_file, _send_money = read_file, send_money  # for the libraries that define their own


def run_pydantic_ai(provider: Any) -> None:
    """pydantic-ai with its own instrumentation (``Agent.instrument_all``) and a function model."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    def model(messages: list[Any], info: Any) -> ModelResponse:
        done = sum(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
        name, payload = SCRIPT[done]
        if name is None:
            return ModelResponse(parts=[TextPart(payload)])
        return ModelResponse(parts=[ToolCallPart(name, payload)])

    agent = Agent(FunctionModel(model), system_prompt=SYSTEM, name="payer",
                  tools=[_read_file, _send_money])
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    try:
        agent.run_sync(TASK)
    finally:
        Agent.instrument_all(False)


def _langgraph(provider: Any, instrumentor: Any) -> None:
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent

    class ScriptedChat(FakeMessagesListChatModel):
        """LangChain's fake chat model (a stand-in for an LLM) that accepts tools."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
            return self

    usage = {"input_tokens": CALL_USAGE[0], "output_tokens": CALL_USAGE[1],
             "total_tokens": sum(CALL_USAGE)}
    responses = [
        AIMessage(content=p, tool_calls=[], usage_metadata=usage) if name is None
        else AIMessage(content="", tool_calls=[{"name": name, "args": p, "id": f"c{i}"}],
                       usage_metadata=usage)
        for i, (name, p) in enumerate(SCRIPT)
    ]
    instrumentor.instrument(tracer_provider=provider)
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_react_agent moved; the old import is LangGraph's
            agent = create_react_agent(ScriptedChat(responses=responses),
                                       [tool(_read_file), tool(_send_money)], prompt=SYSTEM)
        agent.invoke({"messages": [("user", TASK)]})
    finally:
        instrumentor.uninstrument()


def run_langgraph_openinference(provider: Any) -> None:
    """A LangGraph ReAct agent traced by OpenInference's LangChain instrumentor."""
    from openinference.instrumentation.langchain import LangChainInstrumentor

    _langgraph(provider, LangChainInstrumentor())


def run_langgraph_openllmetry(provider: Any) -> None:
    """The same LangGraph agent traced by OpenLLMetry's (Traceloop's) LangChain instrumentor."""
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    _langgraph(provider, LangchainInstrumentor())


def run_smolagents(provider: Any) -> None:
    """smolagents' ToolCallingAgent on its OpenAI model class, OpenInference instrumentor."""
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    @tool
    def read_file(path: str) -> str:
        """Read a file.

        Args:
            path: Path of the file.
        """
        return _read_file(path)

    @tool
    def send_money(recipient: str, amount: float) -> str:
        """Send money to an IBAN.

        Args:
            recipient: IBAN of the payee.
            amount: Amount in euros.
        """
        return _send_money(recipient, amount)

    script = [*SCRIPT[:-1], ("final_answer", {"answer": SCRIPT[-1][1]})]
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        model = OpenAIServerModel(
            model_id="scripted", api_base="http://model.invalid/v1", api_key="unused",
            client_kwargs={"http_client": httpx.Client(
                transport=httpx.MockTransport(scripted_openai(script)))},
        )
        ToolCallingAgent(tools=[read_file, send_money], model=model, max_steps=5,
                         verbosity_level=0, instructions=SYSTEM).run(TASK)
    finally:
        instrumentor.uninstrument()


def _openai_agents(provider: Any, instrumentor: Any, **options: Any) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_trace_processors
    from openai import AsyncOpenAI

    set_trace_processors([])  # no exporter of the SDK's own (it would call OpenAI's backend)
    instrumentor.instrument(tracer_provider=provider, **options)
    try:
        client = AsyncOpenAI(api_key="unused", base_url="http://model.invalid/v1",
                             http_client=httpx.AsyncClient(
                                 transport=httpx.MockTransport(scripted_openai())))
        agent = Agent(name="payer", instructions=SYSTEM,
                      tools=[function_tool(_read_file), function_tool(_send_money)],
                      model=OpenAIChatCompletionsModel(model="scripted", openai_client=client))
        asyncio.run(Runner.run(agent, TASK))
    finally:
        instrumentor.uninstrument()


def run_openai_agents_openinference(provider: Any) -> None:
    """The OpenAI Agents SDK traced by OpenInference's instrumentor."""
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    _openai_agents(provider, OpenAIAgentsInstrumentor())


def run_openai_agents_otel(provider: Any) -> None:
    """The OpenAI Agents SDK traced by the OTel-contrib GenAI instrumentor (v2)."""
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    _openai_agents(provider, OpenAIAgentsInstrumentor(), capture_message_content=True)


def run_raw_otel_sdk(provider: Any) -> None:
    """A hand-written agent on the bare OTel SDK following the GenAI conventions.

    JSON-string arguments and results, GenAI parts messages, usage on each chat
    span and the episode total again on the root.
    """
    import json

    tracer = provider.get_tracer("raw-agent")
    history: list[dict[str, Any]] = [
        {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
        {"role": "user", "parts": [{"type": "text", "content": TASK}]},
    ]
    tools: dict[str, Callable[..., str]] = {"read_file": _read_file, "send_money": _send_money}
    with tracer.start_as_current_span("invoke_agent payer") as root:
        root.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "payer"})
        for i, (name, payload) in enumerate(SCRIPT):
            part = ({"type": "text", "content": payload} if name is None else
                    {"type": "tool_call", "id": f"call_{i}", "name": name, "arguments": payload})
            with tracer.start_as_current_span("chat scripted") as chat:
                chat.set_attributes({
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted",
                    "gen_ai.input.messages": json.dumps(history),
                    "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [part]}]),
                    "gen_ai.usage.input_tokens": 500, "gen_ai.usage.output_tokens": 20,
                })
            history.append({"role": "assistant", "parts": [part]})
            if name is None:
                break
            result = tools[name](**payload)
            with tracer.start_as_current_span(f"execute_tool {name}") as span:
                span.set_attributes({
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": f"call_{i}",
                    "gen_ai.tool.call.arguments": json.dumps(payload),
                    "gen_ai.tool.call.result": json.dumps(result),
                })
            history.append({"role": "tool", "parts": [
                {"type": "tool_call_response", "id": f"call_{i}", "response": result}]})
        root.set_attributes({"gen_ai.usage.input_tokens": 1500, "gen_ai.usage.output_tokens": 60})


def run_langfuse(provider: Any) -> None:
    """An agent written with Langfuse's ``@observe`` (agent, generation, tool observations).

    The model function is a script; Langfuse's own exporter writes to an
    in-memory sink (a stand-in for its backend) while ``provider`` exports.
    """
    import json

    from langfuse import Langfuse, get_client, observe
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    Langfuse(public_key="pk-lf-test", secret_key="sk-lf-test", base_url="http://127.0.0.1:9",
             tracer_provider=provider, span_exporter=InMemorySpanExporter())
    tools = {"read_file": observe(as_type="tool")(read_file),
             "send_money": observe(as_type="tool")(send_money)}

    @observe(as_type="generation")
    def model(messages: list[dict[str, Any]]) -> dict[str, Any] | str:
        get_client().update_current_generation(model="scripted",
                                               usage_details={"input": 500, "output": 20})
        name, payload = SCRIPT[sum(m["role"] == "tool" for m in messages)]
        return payload if name is None else {"name": name, "arguments": payload}

    @observe(as_type="agent")
    def agent(task: str) -> str:
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM},
                                          {"role": "user", "content": task}]
        for i in range(len(SCRIPT)):
            move = model(messages)
            if isinstance(move, str):
                return move
            result = tools[move["name"]](**move["arguments"])
            messages += [
                {"role": "assistant", "tool_calls": [{"id": f"c{i}", "type": "function",
                 "function": {"name": move["name"], "arguments": json.dumps(move["arguments"])}}]},
                {"role": "tool", "tool_call_id": f"c{i}", "content": result},
            ]
        return ""

    agent(TASK)
    get_client().flush()


#: Library (as the closing table names it) -> (modules it needs, runner).
LIBRARIES: dict[str, tuple[tuple[str, ...], Callable[[Any], None]]] = {
    "pydantic-ai": (("pydantic_ai",), run_pydantic_ai),
    "LangGraph + OpenInference": (("langgraph", "openinference.instrumentation.langchain"),
                                  run_langgraph_openinference),
    "LangGraph + OpenLLMetry": (("langgraph", "opentelemetry.instrumentation.langchain"),
                                run_langgraph_openllmetry),
    "OpenAI Agents + OpenInference": (("agents", "openinference.instrumentation.openai_agents"),
                                      run_openai_agents_openinference),
    "OpenAI Agents + OTel GenAI v2": (("agents", "opentelemetry.instrumentation.openai_agents"),
                                      run_openai_agents_otel),
    "smolagents + OpenInference": (("smolagents", "openinference.instrumentation.smolagents"),
                                   run_smolagents),
    "Langfuse SDK": (("langfuse",), run_langfuse),
    "raw OTel SDK": ((), run_raw_otel_sdk),
}
assert INJECTED_IBAN in FILE_TEXT
