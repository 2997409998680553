"""The optional model judge, against a local fake endpoint, and its kappa gate."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from flywheel.attribution import (
    Attribution,
    JudgeAttributor,
    judge_agreement,
    parse_reply,
    steps_from_rows,
)

from flywheel import UserError


class _FakeChat(BaseHTTPRequestHandler):
    """A stand-in for an OpenAI-compatible endpoint (tests only): always blames step 1."""

    reply = '{"step": 1, "agent": "Coder", "category": "argument_generation", "reason": "bad code"}'

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert body["messages"][0]["content"].count("[1] Coder") == 1
        out = json.dumps({"choices": [{"message": {"content": "Sure.\n" + self.reply}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def fake_endpoint() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _FakeChat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


STEPS = steps_from_rows(
    [
        {"span_id": "a", "kind": "llm", "output": "task", "agent_name": "Planner"},
        {"span_id": "b", "kind": "llm", "output": "```python\nx\n```", "agent_name": "Coder"},
    ]
)


def test_judge_attributes_through_the_endpoint(fake_endpoint: str) -> None:
    a = JudgeAttributor(fake_endpoint, "fake").attribute(STEPS, trace_id="t")
    assert (a.attributor, a.causal_index, a.agent, a.category) == (
        "judge",
        1,
        "Coder",
        "argument_generation",
    )
    assert a.causal_span_id == "b"


def test_judge_endpoint_failure_is_a_user_error() -> None:
    with pytest.raises(UserError, match="judge endpoint"):
        JudgeAttributor("http://127.0.0.1:9/v1", timeout_s=0.5).ask(STEPS)


def test_unreadable_replies_become_undetermined() -> None:
    assert parse_reply("no json here", 3).step == -1
    r = parse_reply('{"step": 7, "category": "astrology"}', 3)
    assert r.step == -1 and r.category == "undetermined"
    assert parse_reply('x {"step": "2", "agent": "B"} y', 3).step == 2


def _att(agent: str, step: int) -> Attribution:
    return Attribution("t", True, "planning", "failure", "", step, "", step, agent, 0.5)


def test_agreement_gate() -> None:
    preds = [_att("A", 1), _att("B", 2), _att("A", 1), _att("B", 3)]
    labels = [
        {"agent": "A", "step": 1},
        {"agent": "B", "step": 2},
        {"agent": "A", "step": 1},
        {"agent": "B", "step": 2},
    ]
    out = judge_agreement(preds, labels, min_kappa=0.6)
    assert out["agent_accuracy"] == 1.0 and out["agent_kappa"] == pytest.approx(1.0)
    assert out["step_accuracy"] == 0.75 and out["step_kappa"] == pytest.approx(0.6)
    assert out["trusted"]
    assert not judge_agreement(preds, labels, min_kappa=0.7)["trusted"]
    assert judge_agreement([], [])["trusted"] is False
    with pytest.raises(UserError):
        judge_agreement(preds, labels[:2])
