"""Reconciliation with the trace, and the gate input."""

from __future__ import annotations

import pytest
from flywheel.side_effects import (
    CRITICAL_CATEGORIES,
    Record,
    Scope,
    Snapshot,
    ToolCall,
    agentdojo_profile,
    classify,
    diff,
    gate_input,
    merge_gate_inputs,
    reconcile,
    run_calls,
    side_effect_summary,
)

agentdojo = pytest.importorskip("agentdojo")
from agentdojo.functions_runtime import FunctionCall  # noqa: E402
from flywheel.side_effects import agentdojo_suite as get_suite  # noqa: E402


def test_replay_write_that_fails_validation_changes_nothing_and_is_reported() -> None:
    suite = get_suite("v1.2", "banking")
    env = suite.load_and_inject_default_environment({})
    calls = [
        FunctionCall(
            function="send_money",
            args={"recipient": "X1", "amount": "lots", "subject": "s", "date": "2024-01-01"},
        ),
        FunctionCall(function="get_balance", args={}),
        FunctionCall(
            function="send_money",
            args={"recipient": "X2", "amount": 5, "subject": "ok", "date": "2024-01-01"},
        ),
    ]
    traj = run_calls(suite, env, calls)
    assert traj.calls[0].status == "error" and "ValidationError" in (traj.calls[0].error or "")
    steps = traj.steps()
    assert steps[0] == [] and len(steps[2]) == 1
    rec = reconcile(traj.calls, traj.net(), step_deltas=steps, profile=agentdojo_profile("banking"))
    [finding] = rec.write_without_effect
    assert finding.call_index == 0 and finding.status == "error" and "consistent" in finding.reason
    [a] = rec.attributions
    assert a.method == "replay" and a.call_indexes == (2,) and a.span_ids == ("call-2",)
    assert rec.unexplained == []


def test_delta_with_no_call_is_unexplained_and_args_attribute_the_rest() -> None:
    s0 = Snapshot.from_records([Record("outbox.email", ("0",), {"to": "a@x", "body": "hi"})])
    s1 = Snapshot.from_records(
        [
            Record("outbox.email", ("0",), {"to": "a@x", "body": "hi"}),
            Record("outbox.email", ("1",), {"to": "boss@corp", "body": "report attached"}),
            Record("config", ("flags",), {"debug": True}),
        ]
    )
    calls = [
        ToolCall(name="read_inbox", span_id="s1"),
        ToolCall(
            name="send_email", args={"to": "boss@corp", "body": "report attached"}, span_id="s2"
        ),
        ToolCall(
            name="delete_file",
            args={"path": "nothing.txt"},
            span_id="s3",
            status="error",
            error="ValidationError: path",
        ),
    ]
    deltas = diff(s0, s1)
    cls = classify(deltas, s0, Scope())
    rec = reconcile(calls, deltas, classification=cls)
    [a] = rec.attributions
    assert a.delta_ref == "outbox.email[1]" and a.method == "arguments" and a.span_ids == ("s2",)
    assert [d.ref for d in rec.unexplained] == ["config[flags]"]
    assert [c.name for c in rec.write_without_effect] == ["delete_file"]
    by = {d.delta.ref: d for d in cls.decisions}
    assert by["outbox.email[1]"].span_id == "s2"
    assert by["config[flags]"].attribution.startswith("unexplained")


def test_gate_counts_events_per_category_and_never_averages() -> None:
    s0 = Snapshot.from_records(
        [Record("notes", ("1",), {"t": "x"}), Record("notes", ("2",), {"t": "y"})]
    )
    s1 = Snapshot.from_records([Record("outbox.mail", ("0",), {"body": "b"})])
    cls = classify(diff(s0, s1), s0, Scope())
    g = gate_input(cls, run_id="r1")
    assert g.counts["destructive_write"] == 2 and g.counts["external_communication"] == 1
    assert g.counts["scope_violation"] == 3  # every change is outside the empty scope
    assert g.blocking and g.total == 6 and {e.run_id for e in g.events} == {"r1"}
    clean = gate_input(classify([], s0, Scope()))
    assert not clean.blocking
    assert set(clean.counts) == {*CRITICAL_CATEGORIES, "scope_violation"}
    assert side_effect_summary(cls) == {
        "destructive_write": 2,
        "information_movement": 0,
        "permission_change": 0,
        "external_communication": 1,
        "resource_creation": 0,
        "scope_violation": 3,
        "scope_violation:notes": 2,
        "scope_violation:outbox.mail": 1,
        "omission": 0,
        "wrong_value": 0,
    }
    many = merge_gate_inputs([clean] * 99 + [g])
    assert many.runs == 100 and many.counts["destructive_write"] == 2 and many.blocking
