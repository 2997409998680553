"""Judge grader against a local OpenAI-compatible endpoint, with and without calibration."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from flywheel.evalset import (
    GraderSpec,
    GradingContext,
    JudgeCalibration,
    Task,
    Trial,
    Verdict,
    build_grader,
    grade_trial,
    load_calibration,
)
from flywheel.evalset._graders._judge import parse_label

from flywheel.errors import UserError

FIX = Path(__file__).parent / "fixtures" / "ch22"


class _FakeChat(BaseHTTPRequestHandler):
    """A stand-in for an OpenAI-compatible judge model (tests only, no model behind it).

    ``POST /v1/chat/completions`` answers PASS when the user message mentions
    "refund issued", FAIL otherwise; "garble" gets an unparseable reply and
    "crash" a 500. Every request body is kept for inspection.
    """

    requests: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        text = body["messages"][-1]["content"]
        if "crash" in text:
            self.send_response(500)
            self.end_headers()
            return
        content = (
            "I think so" if "garble" in text else ("PASS" if "refund issued" in text else "FAIL.")
        )
        payload = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeChat)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


TASK = Task.model_validate(
    {
        "task_id": "t1",
        "criteria": [
            {"id": "c", "kind": "custom", "grader": {"name": "recorded", "args": {"key": "c"}}}
        ],
    }
)


def trial(**obs: Any) -> Trial:
    return Trial.model_validate(
        {
            "trial_id": "r",
            "task_id": "t1",
            "config": {"id": "c"},
            "environment_id": "e",
            "observations": obs,
        }
    )


def judge(endpoint: str | None, calibration: Any = None, **kw: Any) -> Any:
    args = {
        "judge_id": "support-judge-v1",
        "rubric": "explains the refund",
        "base_url": endpoint,
        **kw,
    }
    if calibration is not None:
        args["calibration"] = calibration
    return build_grader(GraderSpec(name="judge", args=args), GradingContext(base_dir=FIX))


def test_calibration_record_from_the_chapter_cells() -> None:
    rec = load_calibration("judge_calibration.json", FIX)
    assert rec.n == 100 and round(rec.agreement, 2) == 0.89 and round(rec.kappa, 3) == 0.736
    assert rec.fail_recall == pytest.approx(0.8) and rec.false_acceptance_rate == pytest.approx(0.2)
    lo, hi = rec.false_acceptance_interval
    assert lo < 0.2 < hi
    assert rec.failure_among_accepted == pytest.approx(6 / 71)
    assert rec.position_flip_rate == pytest.approx(0.12) and rec.verbosity_rate == pytest.approx(
        0.4
    )
    # an always-PASS judge: 90 % agreement, kappa 0 (22.3)
    lazy = JudgeCalibration.from_cells(
        {
            "pointwise_cells": [
                {"human": "PASS", "judge": "PASS", "count": 90},
                {"human": "FAIL", "judge": "PASS", "count": 10},
            ]
        }
    )
    assert (
        lazy.agreement == pytest.approx(0.9)
        and lazy.kappa == pytest.approx(0.0)
        and lazy.fail_recall == 0.0
    )
    assert not lazy.meets(0.6)
    with pytest.raises(UserError, match="not found"):
        judge(None, calibration="missing.json")


def test_a_calibration_typed_by_hand_or_for_another_judge_is_refused() -> None:
    """A summary without label cells cannot be checked; a record must name the judge it grades."""
    summary = {"judge_id": "support-judge-v1", "n": 100, "agreement": 0.95, "kappa": 0.9,
               "fail_recall": 0.9, "false_acceptance_rate": 0.05,
               "false_acceptance_interval": [0.01, 0.1], "failure_among_accepted": 0.02,
               "failure_among_accepted_interval": [0.0, 0.05]}
    with pytest.raises(UserError, match="no label cells"):
        judge(None, calibration=summary)
    with pytest.raises(ValueError, match="no label cells"):
        load_calibration(summary)
    cells = json.loads((FIX / "judge_calibration.json").read_text())
    mismatch = "measured judge 'other-judge'.*runs judge 'support-judge-v1'"
    with pytest.raises(UserError, match=mismatch):
        judge(None, calibration={**cells, "judge_id": "other-judge"})
    anonymous = {k: v for k, v in cells.items() if k != "judge_id"}
    with pytest.raises(UserError, match="measured judge ''"):
        judge(None, calibration=anonymous)


def test_calibrated_judge_passes_and_fails_through_the_endpoint(endpoint: str) -> None:
    _FakeChat.requests.clear()
    g = judge(endpoint, calibration="judge_calibration.json", model="tiny-judge")
    ok = g(TASK, trial(transcript="Your refund issued today."))
    assert (
        ok.verdict is Verdict.PASS
        and ok.observation["calibrated"]
        and ok.observation["label"] == "PASS"
    )
    bad = g(TASK, trial(output={"message": "we will look into it"}))
    assert bad.verdict is Verdict.FAIL
    req = _FakeChat.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["body"]["model"] == "tiny-judge"
    assert "explains the refund" in req["body"]["messages"][0]["content"]


def test_uncalibrated_judge_cannot_produce_a_pass(endpoint: str) -> None:
    g = judge(endpoint)
    out = g(TASK, trial(transcript="refund issued"))
    assert out.verdict is Verdict.UNKNOWN and "uncalibrated" in out.reason
    assert out.observation["label"] == "PASS" and out.observation["calibrated"] is False
    assert g(TASK, trial(transcript="nothing")).verdict is Verdict.FAIL
    weak = judge(
        endpoint,
        calibration={
            "judge_id": "support-judge-v1",
            "pointwise_cells": [
                {"human": "PASS", "judge": "PASS", "count": 9},
                {"human": "FAIL", "judge": "PASS", "count": 1},
            ]
        },
    )
    assert weak(TASK, trial(transcript="refund issued")).verdict is Verdict.UNKNOWN
    # and the trial verdict follows: a mandatory judge criterion leaves it unresolved
    task = Task.model_validate(
        {
            "task_id": "t1",
            "criteria": [
                {
                    "id": "j",
                    "kind": "judge",
                    "grader": {"name": "judge", "args": {"judge_id": "j1", "base_url": endpoint}},
                }
            ],
        }
    )
    graded = grade_trial(task, trial(transcript="refund issued"))
    assert graded.verdict is Verdict.UNKNOWN


def test_replayed_label_skips_the_endpoint() -> None:
    g = judge(None, calibration="judge_calibration.json")
    assert g(TASK, trial(judge_labels={"support-judge-v1": "PASS"})).verdict is Verdict.PASS
    assert g(TASK, trial(judge_labels={"support-judge-v1": "FAIL"})).verdict is Verdict.FAIL
    assert g(TASK, trial(transcript="no endpoint")).verdict is Verdict.UNKNOWN


def test_endpoint_trouble_is_unknown_never_a_crash(endpoint: str) -> None:
    g = judge(endpoint, calibration="judge_calibration.json")
    assert g(TASK, trial(transcript="crash")).verdict is Verdict.UNKNOWN
    garbled = g(TASK, trial(transcript="garble"))
    assert garbled.verdict is Verdict.UNKNOWN and "unparseable" in garbled.reason
    dead = judge("http://127.0.0.1:9/v1", calibration="judge_calibration.json", timeout_s=0.5)
    assert dead(TASK, trial(transcript="refund issued")).verdict is Verdict.UNKNOWN
    assert g(TASK, trial()).verdict is Verdict.UNKNOWN


def test_api_key_from_environment(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_KEY_FOR_TEST", "sekrit")
    _FakeChat.requests.clear()
    judge(endpoint, calibration="judge_calibration.json", api_key_env="JUDGE_KEY_FOR_TEST")(
        TASK, trial(transcript="refund issued")
    )
    assert _FakeChat.requests[0]["auth"] == "Bearer sekrit"


@pytest.mark.parametrize(
    "text, label",
    [
        ("PASS", "PASS"),
        (" fail.", "FAIL"),
        ('{"verdict": "pass"}', "PASS"),
        ("maybe", None),
        ("", None),
        ("{bad", None),
    ],
)
def test_parse_label(text: str, label: str | None) -> None:
    assert parse_label(text) == label
