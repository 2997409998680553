"""Agent adapters: Python callable, JSON-lines subprocess, OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from flywheel.harness import (
    AgentSpec,
    Budget,
    SeamConfig,
    TrialSpec,
    agent_names,
    parse_agent,
    run_trials,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flywheel import UserError

AGENT_SCRIPT = str(Path(__file__).with_name("_jsonl_agent.py"))


def _one(agent: AgentSpec, **kw):
    exporter = InMemorySpanExporter()
    (rec,) = run_trials(
        [TrialSpec("agentdojo:banking", "user_task_0", agent, **kw)], exporter, batch_spans=False
    )
    return rec, exporter.get_finished_spans()


def test_parse_agent() -> None:
    assert parse_agent("reference") == AgentSpec("reference")
    assert parse_agent("pkg.mod:fn") == AgentSpec("python", {"target": "pkg.mod:fn"})
    assert parse_agent("openai:http://h:8000/v1#m") == AgentSpec(
        "openai", {"base_url": "http://h:8000/v1", "model": "m"}
    )
    assert parse_agent("subprocess:python a.py") == AgentSpec(
        "subprocess", {"argv": ["python", "a.py"]}
    )
    for bad in ("nonsense", "openai:ftp://x"):
        with pytest.raises(UserError):
            parse_agent(bad)
    assert {"reference", "python", "subprocess", "openai", "ground_truth"} <= set(agent_names())


def test_python_callable_agent() -> None:
    rec, spans = _one(parse_agent("tests.harness._fixture_agents:balance_agent"))
    assert rec.status == "completed" and rec.tool_calls == 2
    assert rec.final_output == "1810.0"
    assert rec.agent == {
        "name": "python",
        "args": {"target": "tests.harness._fixture_agents:balance_agent"},
    }


def test_unimportable_agent_is_an_error_outcome() -> None:
    rec, _ = _one(parse_agent("tests.harness.nope:agent"))
    assert rec.status == "error" and "cannot import" in rec.error


def test_subprocess_agent_speaks_json_lines() -> None:
    rec, spans = _one(
        AgentSpec("subprocess", {"argv": [sys.executable, AGENT_SCRIPT]}),
        seams=SeamConfig.from_oracles(["planner"]),
    )
    assert rec.status == "completed", rec.error
    out = json.loads(rec.final_output)
    assert out["balance"] == "1810.0" and out["memory"] == {"n": 1} and out["deviated"] is False
    assert [c["name"] for c in out["plan"]] == ["read_file", "send_money"]
    ops = [s.attributes.get("gen_ai.operation.name") for s in spans]
    assert {"chat", "memory_write", "memory_read", "execute_tool", "retrieval"} <= set(ops)
    tool = next(
        s
        for s in spans
        if s.attributes.get("gen_ai.tool.call.id") == "c1" and s.name.startswith("execute")
    )
    assert tool.attributes["gen_ai.tool.call.result"] == "1810.0"
    assert rec.input_tokens == 12


def test_subprocess_agent_budget() -> None:
    rec, _ = _one(
        AgentSpec("subprocess", {"argv": [sys.executable, AGENT_SCRIPT, "10"]}),
        budget=Budget(max_calls=4),
    )
    assert rec.status == "budget_exhausted" and rec.budget_resource == "calls"


class _FakeChat(BaseHTTPRequestHandler):
    """A scripted OpenAI-compatible endpoint (test stand-in): one tool call, then an answer."""

    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        tool_msgs = [m for m in body["messages"] if m["role"] == "tool"]
        if not tool_msgs:
            msg = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_abc",
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "arguments": json.dumps({"file_path": "bill-december-2023.txt"}),
                        },
                    }
                ],
            }
        else:
            msg = {"role": "assistant", "content": "The bill is 98.70."}
        data = json.dumps(
            {
                "id": "r1",
                "model": "fake-model",
                "choices": [{"index": 0, "message": msg}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 7},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def fake_endpoint():
    _FakeChat.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeChat)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_openai_endpoint_agent(fake_endpoint: str) -> None:
    rec, spans = _one(
        parse_agent(f"openai:{fake_endpoint}#fake-model"),
        seams=SeamConfig.from_oracles(["verifier"]),
    )
    assert rec.status == "completed", rec.error
    assert rec.final_output == "The bill is 98.70."
    assert rec.input_tokens == 200 and rec.output_tokens == 14
    first, second = _FakeChat.requests
    assert first["model"] == "fake-model"
    assert {t["function"]["name"] for t in first["tools"]} >= {
        "send_money",
        "read_file",
        "memory_read",
    }
    tool_msg = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool_msg["tool_call_id"] == "call_abc"
    assert "Bill for the month of December 2023" in tool_msg["content"]
    assert "[verifier: ok]" in tool_msg["content"]
    tool = next(s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_abc"
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {
        "file_path": "bill-december-2023.txt"
    }
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chats) == 2 and chats[0].attributes["gen_ai.request.model"] == "fake-model"
    assert rec.utility is False  # it answered without paying the bill


def test_openai_endpoint_down_is_an_error_outcome() -> None:
    rec, _ = _one(parse_agent("openai:http://127.0.0.1:9/v1"))
    assert rec.status == "error" and "chat endpoint" in rec.error


def test_hanging_subprocess_agent_ends_on_the_wall_clock_budget() -> None:
    import time

    hang = [sys.executable, "-c", "import sys, time; sys.stdin.readline(); time.sleep(60)"]
    t0 = time.perf_counter()
    rec, _ = _one(AgentSpec("subprocess", {"argv": hang}), budget=Budget(max_wall_s=0.5))
    assert rec.status == "budget_exhausted" and rec.budget_resource == "wall_s"
    assert time.perf_counter() - t0 < 10
