"""Drafting a task from a redacted candidate: every field the issue names, and a valid Task."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flywheel.evalset import CriterionRole, Task
from flywheel.promote import Candidate, TraceStep, draft_task, split_for
from flywheel.promote._candidates import TraceMaterial, steps_json
from flywheel.promote._draft import snapshot_ref

STEPS = [
    TraceStep(span_id="r", input_text="Refund order O-1 for <EMAIL_1>", output_text="Refunded."),
    TraceStep(
        span_id="a",
        tool_name="lookup_order",
        arguments=json.dumps({"order_id": "O-1", "email": "<EMAIL_1>"}),
        result=json.dumps({"status": "delivered"}),
    ),
    TraceStep(
        span_id="b",
        tool_name="refund_order",
        arguments=json.dumps({"order_id": "O-1"}),
        result=json.dumps({"ok": True}),
    ),
]


def cand(
    source: str = "success", reasons: tuple[str, ...] = ("stratified:seed=0",), **kw: Any
) -> Candidate:
    return Candidate(
        project_id="default",
        candidate_id="cand-1",
        trace_id="ab" * 16,
        evalset="support",
        source=source,
        reasons=reasons,
        slice="Refunds EN",
        policy_id="default@1#abc",
        policy_version=1,
        stage="redacted",
        cluster_id="ab" * 16,
        cluster_size=7,
        redacted_steps=kw.pop("steps", steps_json(STEPS)),
        redaction_report=json.dumps({"total": 2, "counts": {"EMAIL": 2}}),
        **kw,
    )


def material(**attrs: str) -> TraceMaterial:
    return TraceMaterial(
        trace_id="ab" * 16,
        total_tokens=300,
        cost=0.01,
        start_ns=0,
        end_ns=2_000_000_000,
        root_attributes=attrs,
    )


def test_success_with_snapshots_drafts_every_field() -> None:
    t = draft_task(
        cand(), material(**{"flywheel.env.s0_ref": "crm@s0", "flywheel.env.sT_ref": "crm@sT"})
    )
    assert isinstance(t, Task) and Task.model_validate_json(t.model_dump_json()) == t
    assert t.task_id == "refunds-en-abababababab" and t.slice == "Refunds EN"
    assert t.prompt == "Refund order O-1 for <EMAIL_1>"
    assert t.initial_state == "crm@s0" and t.expected_state == {"snapshot": "crm@sT"}
    assert t.expected_tools == ["lookup_order", "refund_order"]
    assert t.source_trace_id == "ab" * 16 and t.golden is False
    crit = {c.id: c for c in t.criteria}
    assert crit["tool-path"].role is CriterionRole.MANDATORY
    # the writes are required; reads (how the agent found things out) may differ between runs
    assert crit["tool-path"].grader.args == {"required_sequence": ["refund_order"]}
    assert crit["reply-judge"].role is CriterionRole.DIAGNOSTIC
    assert crit["side-effects"].grader.name == "side-effect"
    assert crit["budget"].grader.args == {
        "max_tool_calls": 4,
        "max_tokens": 600,
        "max_cost_usd": 0.02,
        "max_latency_s": 4.0,
    }
    m = t.metadata
    assert m["split"] in ("dev", "held-out") and m["scope"] == {
        "allowed_tools": ["lookup_order", "refund_order"],
        "write_tools": ["refund_order"],
    }
    assert m["cluster"] == {"id": "ab" * 16, "size": 7} and m["redaction"]["counts"] == {"EMAIL": 2}
    state_scope = m["state_scope"]  # the side-effect scope learns from the source run
    assert state_scope["accepted_trials"]
    assert state_scope["runs"][0]["sT"] == t.expected_state["snapshot"]
    assert m["sampling_policy"] == "default@1#abc"
    assert not any(x.startswith(("initial_state", "expected_state")) for x in m["review_todo"])
    assert any(x.startswith("tool-path: every write") for x in m["review_todo"])


def test_failure_leaves_todos_for_the_reviewer() -> None:
    t = draft_task(cand("failure", ("root-error",)), material(**{"flywheel.trial.id": "trial-9"}))
    assert t.initial_state == "trial:trial-9#s0" and t.expected_state is None
    todo = " ".join(t.metadata["review_todo"])
    assert "tool-path" in todo and "expected_state" in todo


def test_no_snapshot_and_no_tools_makes_the_judge_mandatory() -> None:
    steps = steps_json(
        [TraceStep(span_id="r", input_text="What are your hours?", output_text='{"open": "9-5"}')]
    )
    t = draft_task(cand(steps=steps), None)
    crit = {c.id: c for c in t.criteria}
    assert crit["reply-judge"].role is CriterionRole.MANDATORY and "tool-path" not in crit
    assert crit["reply-schema"].grader.args["schema"]["required"] == ["open"]
    assert t.initial_state == "" and "initial_state" in " ".join(t.metadata["review_todo"])


def test_golden_flag_and_split_are_deterministic() -> None:
    assert draft_task(cand("explicit", ("explicit", "golden")), None).golden is True
    assert draft_task(cand(), material(**{"flywheel.golden": "true"})).golden is True
    assert draft_task(cand(), None, held_out_fraction=0.0).metadata["split"] == "dev"
    assert draft_task(cand(), None, held_out_fraction=1.0).metadata["split"] == "held-out"
    ids = [f"t-{i}" for i in range(2000)]
    share = sum(split_for(i, 0.3) == "held-out" for i in ids) / len(ids)
    assert 0.26 < share < 0.34 and [split_for(i, 0.3) for i in ids[:50]] == [
        split_for(i, 0.3) for i in ids[:50]
    ]


def test_snapshot_ref_prefers_the_explicit_attribute() -> None:
    m = material(**{"flywheel.env.s0_ref": "x@s0", "flywheel.trial.id": "t1"}).root_attributes
    assert snapshot_ref(m, "s0") == "x@s0" and snapshot_ref(m, "sT") == "trial:t1#sT"
    assert snapshot_ref(None, "s0") == ""


@pytest.mark.parametrize("source", ["failure", "success", "explicit"])
def test_every_draft_builds_its_graders(source: str) -> None:
    from flywheel.evalset import build_grader

    t = draft_task(cand(source), material())
    for c in t.criteria:
        build_grader(c.grader)


def test_environment_is_recorded_from_harness_attributes() -> None:
    from flywheel.promote._draft import environment_of

    harness = {
        "flywheel.suite": "agentdojo:banking",
        "flywheel.task.id": "user_task_3",
        "flywheel.trial.id": "t1",
    }
    t = draft_task(cand(), material(**harness))
    assert t.metadata["environment"] == {
        "kind": "agentdojo",
        "suite": "banking",
        "user_task": "user_task_3",
        "injection_task": None,
    }
    injected = material(**harness, **{"flywheel.injection_task.id": "injection_task_0"})
    assert environment_of(injected.root_attributes)["injection_task"] == "injection_task_0"  # type: ignore[index]
    explicit = json.dumps({"kind": "webshop", "site": "s1"})
    assert environment_of(
        material(**harness, **{"flywheel.environment": explicit}).root_attributes
    ) == {
        "kind": "webshop",
        "site": "s1",
    }
    assert "environment" not in draft_task(cand(), material()).metadata
    assert "environment" not in draft_task(cand(), None).metadata
    assert environment_of(material(**{"flywheel.suite": "banking"}).root_attributes) is None
