"""Token usage counted once: an ancestor's sum of its calls is not added again.

The rule (``ingest/_usage.py``) on hand-made steps, then on real clients: a
raw OTel SDK program that records the episode total on its root span, and
smolagents (OpenInference instrumentor), whose run span carries the total of
its model calls. The trace list and the trace detail must both show the sum
over the model calls, which is what the client itself counted.
"""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flywheel.ingest import get_trace, list_traces, trace_usage
from tests.ingest._libraries import CALL_USAGE, TASK, exporting, scripted_openai, trace_of


def _step(kind: str, i: int = 0, o: int = 0, t: int = 0, c: float = 0.0) -> dict:
    return {"kind": kind, "input_tokens": i, "output_tokens": o, "total_tokens": t, "cost": c}


def test_calls_are_summed_and_aggregates_not_added():
    steps = [_step("agent", 300, 30, 330), _step("llm", 100, 10, 110), _step("llm", 200, 20, 220),
             _step("tool"), _step("other", 300, 30, 330)]
    u = trace_usage(steps)
    assert (u.input_tokens, u.output_tokens, u.total_tokens) == (300, 30, 330)


def test_aggregates_count_when_no_call_reports_usage():
    # a client that records only the episode total; nested aggregates are not summed
    steps = [_step("agent", 900, 90, 990, 0.5), _step("other", 400, 40, 440), _step("llm")]
    u = trace_usage(steps)
    assert (u.input_tokens, u.output_tokens, u.total_tokens, u.cost) == (900, 90, 990, 0.5)


def test_each_quantity_falls_back_on_its_own():
    # calls report tokens, only the root reports cost
    u = trace_usage([_step("agent", 999, 99, 999, 0.25), _step("llm", 10, 1, 11)])
    assert (u.input_tokens, u.output_tokens, u.total_tokens, u.cost) == (10, 1, 11, 0.25)


def _both_views(store, trace_id):
    listed = next(t for t in list_traces(store) if t.trace_id == trace_id)
    detail = get_trace(store, trace_id)
    return listed, detail


def test_raw_otel_sdk_root_total_is_not_added(store, tmp_path):
    """A program on the bare OTel SDK: GenAI chat spans, and the total again on the root."""
    calls = [(200, 12), (201, 30), (200, 7)]
    with exporting(store, tmp_path, "raw-sdk") as (provider, _):
        tracer = provider.get_tracer("raw-agent")
        with tracer.start_as_current_span("invoke_agent payer") as root:
            root.set_attribute("gen_ai.operation.name", "invoke_agent")
            for n, (i, o) in enumerate(calls):
                with tracer.start_as_current_span("chat scripted") as chat:
                    chat.set_attributes({"gen_ai.operation.name": "chat",
                                         "gen_ai.usage.input_tokens": i,
                                         "gen_ai.usage.output_tokens": o})
                if n < 2:
                    with tracer.start_as_current_span("execute_tool read_file") as t:
                        t.set_attributes({"gen_ai.operation.name": "execute_tool",
                                          "gen_ai.tool.name": "read_file",
                                          "gen_ai.tool.call.arguments": '{"path": "bill.txt"}'})
            root.set_attributes({"gen_ai.usage.input_tokens": sum(c[0] for c in calls),
                                 "gen_ai.usage.output_tokens": sum(c[1] for c in calls)})
    tid = trace_of(store, "raw-sdk")
    listed, detail = _both_views(store, tid)
    llm = [s.step for s in detail.spans if s.step.kind == "llm"]
    assert sum(s.input_tokens for s in llm) == 601
    for view in (listed, detail.summary):
        assert (view.input_tokens, view.output_tokens, view.total_tokens) == (601, 49, 650)


def test_smolagents_run_total_is_not_added(store, tmp_path):
    pytest.importorskip("smolagents")
    pytest.importorskip("openinference.instrumentation.smolagents")
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    @tool
    def read_file(path: str) -> str:
        """Read a file.

        Args:
            path: Path of the file.
        """
        return "Amount due: 84.50"

    with exporting(store, tmp_path, "smol-usage") as (provider, _):
        instrumentor = SmolagentsInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            model = OpenAIServerModel(
                model_id="scripted", api_base="http://model.invalid/v1", api_key="unused",
                client_kwargs={"http_client": httpx.Client(transport=httpx.MockTransport(
                    scripted_openai([("read_file", {"path": "bill.txt"}),
                                     ("read_file", {"path": "bill2.txt"}),
                                     ("final_answer", {"answer": "84.50"})])))},
            )
            agent = ToolCallingAgent(tools=[read_file], model=model, max_steps=5, verbosity_level=0)
            agent.run(TASK)
            counted = agent.monitor.get_total_token_counts()
        finally:
            instrumentor.uninstrument()
    assert counted.input_tokens == 3 * CALL_USAGE[0]
    tid = trace_of(store, "smol-usage")
    listed, detail = _both_views(store, tid)
    root = next(s.step for s in detail.spans if not s.parent_span_id)
    assert root.input_tokens == counted.input_tokens  # the run span carries the total again
    llm = [s.step for s in detail.spans if s.step.kind == "llm"]
    assert len(llm) == 3 and sum(s.input_tokens for s in llm) == counted.input_tokens
    for view in (listed, detail.summary):
        assert view.input_tokens == counted.input_tokens
        assert view.output_tokens == counted.output_tokens


@settings(deadline=None, max_examples=60)
@given(st.lists(st.tuples(st.sampled_from(["llm", "agent", "tool", "other"]),
                          st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 20_000),
                          st.floats(0, 10, allow_nan=False)), max_size=30))
def test_table_usage_is_trace_usage(rows):
    """The columnar rule (the trace detail's outline) equals the per-step rule."""
    import pyarrow as pa

    from flywheel.ingest._usage import table_usage

    steps = [dict(zip(("kind", "input_tokens", "output_tokens", "total_tokens", "cost"), r,
                      strict=True)) for r in rows]
    table = pa.table({k: [s[k] for s in steps] for k in
                      ("kind", "input_tokens", "output_tokens", "total_tokens", "cost")}
                     if steps else {"kind": pa.array([], pa.string())})
    got, want = table_usage(table), trace_usage(steps)
    assert (got.input_tokens, got.output_tokens, got.total_tokens) == (
        want.input_tokens, want.output_tokens, want.total_tokens)
    assert got.cost == pytest.approx(want.cost, rel=1e-12, abs=1e-12)  # summation order
