"""Every trial is a trace: GenAI spans with tool arguments and results intact (memory, store)."""

from __future__ import annotations

import json

import pytest
from flywheel.harness import (
    AgentDojoEnvironment,
    AgentSpec,
    SeamConfig,
    StoreSpanExporter,
    TrialSpec,
    load_snapshot,
    load_trials,
    run_trials,
    save_trials,
    spec_from_row,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flywheel import ConflictError, canonical_json

TAGS = ("flywheel.task.id", "flywheel.trial.id", "flywheel.env.id", "flywheel.config.id")


def _expected_results(suite: str, task: str) -> list[tuple[str, str, str]]:
    env = AgentDojoEnvironment(suite, task)
    env.reset()
    out = []
    for c in env.task().ground_truth:
        out.append((c.name, canonical_json(c.args), env.call_tool(c.name, c.args).result_json()))
    return out


def test_tool_spans_carry_arguments_and_results_intact() -> None:
    exporter = InMemorySpanExporter()
    spec = TrialSpec("agentdojo:banking", "user_task_0", AgentSpec("ground_truth"))
    (rec,) = run_trials([spec], exporter)
    spans = exporter.get_finished_spans()
    tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    tools.sort(key=lambda s: s.start_time)
    got = [
        (
            s.attributes["gen_ai.tool.name"],
            s.attributes["gen_ai.tool.call.arguments"],
            s.attributes["gen_ai.tool.call.result"],
        )
        for s in tools
    ]
    assert got == _expected_results("banking", "user_task_0")
    assert all(s.name == f"execute_tool {s.attributes['gen_ai.tool.name']}" for s in tools)
    assert len({s.attributes["gen_ai.tool.call.id"] for s in tools}) == len(tools)
    # the chat turn that requested a call names the same call id and arguments
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    requested = [
        p
        for c in chats
        for m in json.loads(c.attributes["gen_ai.output.messages"])
        for p in m["parts"]
        if p["type"] == "tool_call"
    ]
    assert [(p["id"], canonical_json(p["arguments"])) for p in requested] == [
        (s.attributes["gen_ai.tool.call.id"], s.attributes["gen_ai.tool.call.arguments"])
        for s in tools
    ]
    prompt = json.loads(chats[0].attributes["gen_ai.input.messages"])[0]["parts"][0]["content"]
    assert prompt == AgentDojoEnvironment("banking", "user_task_0")._user_task.PROMPT
    # one trace per trial, rooted at invoke_agent, every span tagged with the trial identity
    assert {s.context.trace_id for s in spans} == {int(rec.trace_id, 16)}
    (root,) = [s for s in spans if s.parent is None]
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["flywheel.outcome.utility"] is True
    for s in spans:
        assert [s.attributes[t] for t in TAGS] == [
            rec.task_id,
            rec.trial_id,
            rec.environment_id,
            rec.config_id,
        ]
        assert s.attributes["flywheel.seam.tools"] == "real"
    assert {s.attributes.get("gen_ai.operation.name") for s in spans} >= {
        "invoke_agent",
        "chat",
        "execute_tool",
        "retrieval",
    }


def test_injected_text_arrives_in_a_tool_result() -> None:
    exporter = InMemorySpanExporter()
    spec = TrialSpec(
        "agentdojo:banking",
        "user_task_0",
        AgentSpec("ground_truth"),
        injection_task_id="injection_task_1",
    )
    (rec,) = run_trials([spec], exporter)
    results = [
        s.attributes.get("gen_ai.tool.call.result", "") for s in exporter.get_finished_spans()
    ]
    assert any("<INFORMATION>" in r for r in results)
    assert rec.security is False and rec.utility is True


def test_memory_and_oracle_seams_are_traced() -> None:
    exporter = InMemorySpanExporter()
    spec = TrialSpec(
        "agentdojo:slack",
        "user_task_1",
        AgentSpec("reference"),
        seams=SeamConfig.from_oracles(["retrieval", "memory", "planner", "verifier", "tools"]),
    )
    (rec,) = run_trials([spec], exporter)
    spans = exporter.get_finished_spans()
    ops = {s.attributes.get("gen_ai.operation.name") for s in spans}
    assert {"memory_write", "memory_read", "retrieval"} <= ops
    assert all(s.attributes["flywheel.seam.planner"] == "oracle" for s in spans)
    assert any(s.attributes.get("flywheel.oracle") for s in spans)
    assert rec.utility is True  # every component oracle: nothing left to go wrong but generation


def test_spans_and_trials_in_the_store(store) -> None:
    exporter = StoreSpanExporter(store)
    specs = [
        TrialSpec("agentdojo:banking", "user_task_0", AgentSpec("ground_truth")),
        TrialSpec("agentdojo:slack", "user_task_0", AgentSpec("reference"), seed=3),
    ]
    records = run_trials(specs, exporter, workers=2)
    assert exporter.failures == 0, exporter.last_error
    save_trials(store, records)
    by_task = {r.suite: r for r in records}
    rec = by_task["agentdojo:banking"]
    steps = store.query(
        "SELECT tool_name, arguments, result FROM agent_steps FINAL "
        "WHERE trace_id = {t:String} AND kind = 'tool' ORDER BY start_time",
        {"t": rec.trace_id},
    )
    assert [(s["tool_name"], s["arguments"], s["result"]) for s in steps] == _expected_results(
        "banking", "user_task_0"
    )
    rows = {r["trial_id"]: r for r in load_trials(store, run_id=rec.run_id)}
    assert set(rows) == {r.trial_id for r in records}
    row = rows[rec.trial_id]
    assert row["status"] == "completed" and row["utility"] is True and row["security"] is None
    assert row["trace_id"] == rec.trace_id and row["environment_id"] == rec.environment_id
    assert row["agent_spec"] == {"name": "ground_truth", "args": {}}
    assert set(row["timings"]) == {"reset_s", "agent_s", "grade_s"}
    assert sum(row["timings"].values()) <= row["duration_s"]
    with pytest.raises(ConflictError, match=rec.environment_id):
        save_trials(store, [rec])  # the same identity twice, even from another process
    assert load_snapshot(store, rec.trial_id, "s0") == rec.s0
    assert load_snapshot(store, rec.trial_id, "sT") == rec.sT != rec.s0


def test_a_stored_trial_rebuilds_and_replays_like_with_like(store) -> None:
    spec = TrialSpec(
        "agentdojo:slack",
        "user_task_2",
        AgentSpec("reference", {"rates": {"wrong_argument": 0.5}}),
        seams=SeamConfig.from_oracles(["memory"]),
        seed=11,
    )
    (first,) = run_trials([spec], InMemorySpanExporter())
    save_trials(store, [first])
    (row,) = load_trials(store, run_id=first.run_id)
    rebuilt = spec_from_row(row)
    assert rebuilt == spec
    (again,) = run_trials([rebuilt], InMemorySpanExporter())
    assert again.config_id == first.config_id
    assert again.environment_id != first.environment_id
    assert (again.faults, again.utility, again.sT) == (first.faults, first.utility, first.sT)


def test_trial_rows_on_both_backends(store_any) -> None:
    (rec,) = run_trials(
        [TrialSpec("agentdojo:banking", "user_task_1", AgentSpec("ground_truth"))],
        InMemorySpanExporter(),
    )
    save_trials(store_any, [rec])
    (row,) = load_trials(store_any, run_id=rec.run_id)
    assert row["utility"] is True and row["security"] is None
    assert row["seam_modes"]["verifier"] == "real"
    assert load_snapshot(store_any, rec.trial_id, "sT") == rec.sT
