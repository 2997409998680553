"""Judge calibration: measured against labels, stored, and the gate that uses it.

The endpoint here is a test-only STAND-IN for an OpenAI-compatible chat
server on loopback: it answers from a fixed table keyed by a marker in the
prompt, so a "good" judge agrees with the labels and a "bad" one does not.
No real model is involved and no figure here is a real judge's kappa.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from flywheel.attribution import (
    calibrate_judge,
    import_whowhen,
    judge_gate,
    parse_judge,
    read_calibration,
)

from flywheel import Store, UserError

#: log k: its mistake (agent, step); the stand-in "good" judge answers exactly this.
GOLD = {0: ("Coder", 2), 1: ("Planner", 1), 2: ("Checker", 3), 3: ("Coder", 1)}


def _log(k: int) -> dict[str, object]:
    agent, step = GOLD[k]
    return {
        "question": f"LOG{k}",
        "mistake_agent": agent,
        "mistake_step": str(step),
        "history": [
            {"role": "user", "name": "Planner", "content": f"LOG{k}: plan the task."},
            {"role": "user", "name": "Planner", "content": "Plan: compute it."},
            {"role": "user", "name": "Coder", "content": "```python\nprint(1)\n```"},
            {"role": "user", "name": "Checker", "content": "Looks fine. TERMINATE"},
        ],
    }


class _StandIn(BaseHTTPRequestHandler):
    """Test-only stand-in for an OpenAI-compatible chat endpoint (loopback; not a model)."""

    good = True
    calls = 0

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls += 1
        k = int(re.search(r"LOG(\d)", body["messages"][0]["content"]).group(1))  # type: ignore[union-attr]
        agent, step = GOLD[k] if self.good else ("Planner", 0)
        reply = json.dumps({"step": step, "agent": agent, "category": "planning", "reason": "r"})
        out = json.dumps({"choices": [{"message": {"content": reply}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        pass


def _serve(good: bool) -> Iterator[str]:
    handler = type("H", (_StandIn,), {"good": good, "calls": 0})
    server = HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def good() -> Iterator[str]:
    yield from _serve(True)


@pytest.fixture
def bad() -> Iterator[str]:
    yield from _serve(False)


@pytest.fixture
def logs(store: Store, tmp_path: Path) -> list[str]:
    d = tmp_path / "algorithm-generated"
    d.mkdir()
    for k in GOLD:
        (d / f"{k}.json").write_text(json.dumps(_log(k)))
    return import_whowhen(store, tmp_path)


def test_an_uncalibrated_judge_is_refused(store: Store, good: str) -> None:
    ok, why = judge_gate(store, parse_judge(good + "#m"))
    assert not ok and "no stored calibration" in why


def test_a_judge_that_agrees_is_trusted_and_persisted(
    store: Store, good: str, logs: list[str]
) -> None:
    judge = parse_judge(good + "#m")
    rec = calibrate_judge(store, judge, "whowhen:algorithm-generated")
    assert rec["n"] == 4 and rec["agent_accuracy"] == 1.0 and rec["step_accuracy"] == 1.0
    assert rec["agent_kappa"] == pytest.approx(1.0) and rec["trusted"]
    assert read_calibration(store, f"{good}#m")["labels"] == "whowhen:algorithm-generated"
    assert judge_gate(store, judge)[0]
    assert not judge_gate(store, parse_judge(good + "#other-model"))[0]  # per model
    assert not judge_gate(store, judge, min_kappa=1.01)[0]  # the threshold is configurable


def test_a_judge_that_disagrees_is_not_used(store: Store, bad: str, logs: list[str]) -> None:
    rec = calibrate_judge(store, parse_judge(bad), "whowhen:algorithm-generated", limit=3)
    assert rec["n"] == 3 and not rec["trusted"]
    ok, why = judge_gate(store, parse_judge(bad))
    assert not ok and "below kappa" in why


def test_cli_falls_back_until_calibrated_then_uses_the_judge(
    store: Store, good: str, logs: list[str]
) -> None:
    from flywheel.cli import cli

    url = f"chdb://{store.path}?database={store.database}"
    runner = CliRunner()

    def run(*args: str):  # noqa: ANN202
        return runner.invoke(cli, ["--store", url, *args])

    tid = logs[0]
    r = run("attribute", tid, "--failed", "--judge", good + "#m", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["attributor"] == "deterministic" and "no stored calibration" in out["judge_gate"]
    r = run("calibrate-judge", "--judge", good + "#m", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["trusted"]
    r = run("attribute", tid, "--failed", "--judge", good + "#m", "--json")
    out = json.loads(r.stdout)
    assert (out["attributor"], out["agent"], out["causal_index"]) == ("judge", "Coder", 2)
    r = run("attribute", tid, "--failed", "--judge", good + "#m", "--min-kappa", "1.5")
    assert r.exit_code == 0 and "below kappa 1.5" in r.output, r.output
    assert run("calibrate-judge", "--judge", "nope").exit_code == 1


def test_bad_specs_and_empty_label_sets_are_user_errors(store: Store) -> None:
    with pytest.raises(UserError, match="expected http"):
        parse_judge("localhost:8000")
    with pytest.raises(UserError, match="import them first"):
        calibrate_judge(store, parse_judge("http://127.0.0.1:9/v1"), "whowhen:hand-crafted")
    with pytest.raises(UserError, match="not understood"):
        calibrate_judge(store, parse_judge("http://127.0.0.1:9/v1"), "astrology")


def test_fault_labels_carry_category_step_and_agent(store: Store, bad: str) -> None:
    """The ``faults`` label set: one labelled span per trial, its category from the hazard."""
    from flywheel.attribution import load_trace
    from flywheel.attribution._calibration import labelled_set
    from flywheel.harness import (
        HAZARDS,
        AgentSpec,
        SeamConfig,
        StoreSpanExporter,
        plan_trials,
        run_trials,
    )

    rates = {h: (0.5 if h == "wrong_tool" else 0.0) for h in HAZARDS}
    specs = plan_trials(
        "agentdojo:banking",
        AgentSpec("reference", {"rates": rates}),
        runs=1,
        seed=7,
        tasks=[f"user_task_{i}" for i in range(6)],
        seams=SeamConfig.from_oracles([]),
    )
    run_trials(specs, StoreSpanExporter(store), workers=1)
    pairs = labelled_set(store, "faults")
    assert pairs and all(lab["category"] == "tool_selection" for _, lab in pairs)
    tid, lab = pairs[0]
    step = load_trace(store, tid)[int(lab["step"])]
    assert step.kind == "llm" and lab["agent"]
    with pytest.raises(UserError, match="not understood"):
        labelled_set(store, "faults:x")
