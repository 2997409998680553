"""Budgets trip at the limit and end the trial as budget_exhausted."""

from __future__ import annotations

import pytest
from flywheel.harness import AgentSpec, Budget, BudgetExhausted, BudgetMeter, TrialSpec, run_trials
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def _one(agent: str, budget: Budget, task: str = "user_task_3"):
    spec = TrialSpec(
        "agentdojo:banking",
        task,
        AgentSpec("python", {"target": agent}) if ":" in agent else AgentSpec(agent),
        budget=budget,
    )
    exporter = InMemorySpanExporter()
    (rec,) = run_trials([spec], exporter, batch_spans=False)
    return rec, exporter.get_finished_spans()


def test_meter_counts_and_trips() -> None:
    m = BudgetMeter(Budget(max_calls=2, max_write_calls=1))
    m.charge_call(write=False)
    m.charge_call(write=True)
    with pytest.raises(BudgetExhausted) as exc:
        m.charge_call(write=True)
    assert exc.value.resource == "calls"
    with pytest.raises(BudgetExhausted):  # stays tripped
        m.check()


def test_call_budget() -> None:
    rec, spans = _one("ground_truth", Budget(max_calls=1))  # user_task_3 needs 2 calls
    assert rec.status == "budget_exhausted" and rec.budget_resource == "calls"
    assert rec.tool_calls == 2  # the second call was counted, refused, never executed
    assert sum(s.name.startswith("execute_tool") for s in spans) == 1
    root = next(s for s in spans if s.parent is None)
    assert root.attributes["flywheel.trial.status"] == "budget_exhausted"
    assert root.attributes["flywheel.budget.exhausted"] == "calls"


def test_write_budget_is_separate_from_reads() -> None:
    rec, _ = _one("ground_truth", Budget(max_calls=10, max_write_calls=0))
    assert rec.status == "budget_exhausted" and rec.budget_resource == "write_calls"
    assert rec.s0 == rec.sT  # the write never happened


def test_enough_budget_completes() -> None:
    rec, _ = _one("ground_truth", Budget(max_calls=2, max_write_calls=1))
    assert rec.status == "completed" and rec.utility is True


def test_swallowed_exhaustion_is_still_exhaustion() -> None:
    rec, _ = _one("tests.harness._fixture_agents:swallowing_agent", Budget(max_calls=2))
    assert rec.status == "budget_exhausted" and rec.tool_calls == 3


def test_wall_clock_budget() -> None:
    rec, _ = _one("tests.harness._fixture_agents:slow_agent", Budget(max_wall_s=0.1))
    assert rec.status == "budget_exhausted" and rec.budget_resource == "wall_s"


def test_depth_budget() -> None:
    rec, _ = _one("tests.harness._fixture_agents:deep_agent", Budget(max_depth=2))
    assert rec.status == "budget_exhausted" and rec.budget_resource == "depth"
    ok, spans = _one("tests.harness._fixture_agents:deep_agent", Budget(max_depth=3))
    assert ok.status == "completed"
    assert sum(s.attributes.get("gen_ai.operation.name") == "invoke_agent" for s in spans) == 4


def test_token_budget() -> None:
    rec, _ = _one("tests.harness._fixture_agents:chatty_agent", Budget(max_tokens=1000))
    assert rec.status == "budget_exhausted" and rec.budget_resource == "tokens"
    assert rec.input_tokens + rec.output_tokens == 1400


def test_agent_crash_is_an_error_outcome() -> None:
    rec, spans = _one("tests.harness._fixture_agents:crashing_agent", Budget())
    assert rec.status == "error" and "boom" in rec.error
    assert rec.utility is False  # the environment still judges the untouched state
