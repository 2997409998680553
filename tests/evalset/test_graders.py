"""Deterministic graders (state, schema, policy, budget, side-effect, recorded) and grade_trial."""

from __future__ import annotations

from typing import Any

import pytest
from flywheel.evalset import (
    GraderSpec,
    GradingContext,
    Task,
    Trial,
    Verdict,
    build_grader,
    grade_trial,
    grader_names,
    register_schema,
    resolve_pointer,
    trajectory_f1,
)
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from flywheel.errors import UserError

SNAP = {
    "orders": {"O-41": {"status": "refunded", "items": [1, 2, 3], "note": "refund issued"}},
    "a/b": {"~x": 1},
    "list": [{"id": 1}, {"id": 2}],
}


def make_task(criteria: list[dict[str, Any]], **kw: Any) -> Task:
    return Task.model_validate({"task_id": "t1", "criteria": criteria, **kw})


def make_trial(**obs: Any) -> Trial:
    extra = {k: obs.pop(k) for k in ("cost_usd", "tokens", "latency_s") if k in obs}
    return Trial.model_validate(
        {
            "trial_id": "r1",
            "task_id": "t1",
            "config": {"id": "cand"},
            "environment_id": "env-1",
            "observations": obs,
            **extra,
        }
    )


def grade(name: str, args: dict[str, Any], trial: Trial, task: Task | None = None) -> Any:
    g = build_grader(GraderSpec(name=name, args=args), GradingContext())
    return g(
        task
        or make_task(
            [{"id": "c", "kind": "custom", "grader": {"name": "recorded", "args": {"key": "c"}}}]
        ),
        trial,
    )


def test_registry_names_and_rebuild_from_spec() -> None:
    assert {"state", "schema", "policy", "judge", "budget", "side-effect", "recorded"} <= set(
        grader_names()
    )
    spec = GraderSpec.model_validate_json(
        GraderSpec(
            name="state", args={"assertions": [{"path": "/x", "op": "absent"}]}
        ).model_dump_json()
    )
    assert grade(spec.name, spec.args, make_trial(snapshot={})).verdict is Verdict.PASS
    with pytest.raises(UserError, match="unknown grader 'nope'"):
        build_grader(GraderSpec(name="nope"))
    with pytest.raises(UserError, match="state"):
        build_grader(GraderSpec(name="state", args={"assertions": [{"path": "x", "op": "equals"}]}))
    with pytest.raises(UserError, match="bad arguments"):
        build_grader(GraderSpec(name="state", args={"assertion": []}))


def test_pointer_resolution() -> None:
    assert resolve_pointer(SNAP, "/orders/O-41/status") == "refunded"
    assert resolve_pointer(SNAP, "/a~1b/~0x") == 1
    assert resolve_pointer(SNAP, "/list/1/id") == 2
    assert resolve_pointer(SNAP, "/list/-1/id") == 2
    assert resolve_pointer(SNAP, "") is SNAP
    missing = resolve_pointer(SNAP, "/list/9")
    assert missing is resolve_pointer(SNAP, "/nope") and missing is not None


@pytest.mark.parametrize(
    "assertion, ok",
    [
        ({"path": "/orders/O-41/status", "op": "equals", "value": "refunded"}, True),
        ({"path": "/orders/O-41/status", "op": "equals", "value": "open"}, False),
        ({"path": "/orders/O-41/note", "op": "contains", "value": "refund"}, True),
        ({"path": "/orders/O-41/items", "op": "contains", "value": 2}, True),
        ({"path": "/orders/O-41", "op": "contains", "value": {"status": "refunded"}}, True),
        ({"path": "/orders", "op": "contains", "value": "O-42"}, False),
        ({"path": "/orders/O-42", "op": "absent"}, True),
        ({"path": "/orders/O-41", "op": "absent"}, False),
        ({"path": "/orders/O-41/items", "op": "count", "value": 3}, True),
        ({"path": "/list", "op": "count", "value": 1}, False),
        ({"path": "/missing", "op": "equals", "value": None}, False),
    ],
)
def test_state_assertions(assertion: dict[str, Any], ok: bool) -> None:
    g = grade("state", {"assertions": [assertion]}, make_trial(snapshot=SNAP))
    assert g.verdict is (Verdict.PASS if ok else Verdict.FAIL)


def test_state_partial_score_and_missing_snapshot() -> None:
    args = {
        "assertions": [
            {"path": "/orders/O-41/status", "op": "equals", "value": "refunded"},
            {"path": "/orders/O-41/items", "op": "count", "value": 5},
        ]
    }
    g = grade("state", args, make_trial(snapshot=SNAP))
    assert g.verdict is Verdict.FAIL and g.score == 0.5 and "3 item(s), expected 5" in g.reason
    assert grade("state", args, make_trial()).verdict is Verdict.UNKNOWN


REPLY = {
    "type": "object",
    "required": ["status", "message"],
    "additionalProperties": False,
    "properties": {
        "status": {"enum": ["done", "open"]},
        "message": {"type": "string", "minLength": 1},
        "amount": {"type": "number", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    },
}


@pytest.mark.parametrize(
    "output, ok",
    [
        ({"status": "done", "message": "ok"}, True),
        ('{"status": "done", "message": "ok", "amount": 3.5}', True),
        ({"status": "done"}, False),
        ({"status": "closed", "message": "ok"}, False),
        ({"status": "done", "message": ""}, False),
        ({"status": "done", "message": "ok", "amount": -1}, False),
        ({"status": "done", "message": "ok", "amount": True}, False),
        ({"status": "done", "message": "ok", "tags": ["a", 1]}, False),
        ({"status": "done", "message": "ok", "extra": 1}, False),
        ("Refund done!", False),
        ([1], False),
    ],
)
def test_schema_subset(output: Any, ok: bool) -> None:
    g = grade("schema", {"schema": REPLY}, make_trial(output=output))
    assert g.verdict is (Verdict.PASS if ok else Verdict.FAIL), g.reason


class Reply(BaseModel):
    """A reply model for the pydantic form of the schema grader."""

    status: str
    message: str


def test_schema_pydantic_model_and_errors() -> None:
    register_schema("test.Reply", Reply)
    args = {"model": "test.Reply"}
    assert (
        grade("schema", args, make_trial(output={"status": "a", "message": "b"})).verdict
        is Verdict.PASS
    )
    bad = grade("schema", args, make_trial(output={"status": "a"}))
    assert bad.verdict is Verdict.FAIL and "message" in bad.reason
    assert grade("schema", args, make_trial()).verdict is Verdict.UNKNOWN
    with pytest.raises(UserError, match="unsupported keyword"):
        build_grader(GraderSpec(name="schema", args={"schema": {"type": "object", "pattern": "x"}}))
    with pytest.raises(UserError, match="exactly one"):
        build_grader(GraderSpec(name="schema", args={}))


def calls(*names: str, **args: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": n, "arguments": args.get(n, {})} for n in names]


@pytest.mark.parametrize(
    "rules, tools, ok",
    [
        (
            {"require_before": {"refund_order": ["lookup_order"]}},
            calls("lookup_order", "refund_order"),
            True,
        ),
        ({"require_before": {"refund_order": ["lookup_order"]}}, calls("refund_order"), False),
        (
            {"require_before": {"refund_order": ["lookup_order"]}},
            calls("refund_order", "lookup_order"),
            False,
        ),
        ({"require_before": {"refund_order": ["lookup_order"]}}, calls("lookup_order"), True),
        (
            {"required_sequence": ["lookup_order", "refund_order"]},
            calls("lookup_order", "x", "refund_order"),
            True,
        ),
        (
            {"required_sequence": ["lookup_order", "refund_order"]},
            calls("refund_order", "lookup_order"),
            False,
        ),
        ({"forbidden": ["delete_account"]}, calls("lookup_order", "delete_account"), False),
        (
            {"forbidden_sequence": ["read_secret", "send_email"]},
            calls("read_secret", "x", "send_email"),
            False,
        ),
        ({"max_calls": {"charge": 1}}, calls("charge", "charge"), False),
        (
            {"arguments": [{"tool": "refund_order", "arg": "amount", "op": "max", "value": 100}]},
            calls("refund_order", refund_order={"amount": 40}),
            True,
        ),
        (
            {"arguments": [{"tool": "refund_order", "arg": "amount", "op": "max", "value": 100}]},
            calls("refund_order", refund_order={"amount": 400}),
            False,
        ),
        (
            {"arguments": [{"tool": "send_email", "arg": "to", "op": "in", "value": ["a@x.org"]}]},
            calls("send_email", send_email={"to": "evil@y.org"}),
            False,
        ),
        (
            {"arguments": [{"tool": "refund_order", "arg": "order_id", "op": "present"}]},
            calls("refund_order"),
            False,
        ),
    ],
)
def test_policy_rules(rules: dict[str, Any], tools: list[dict[str, Any]], ok: bool) -> None:
    g = grade("policy", rules, make_trial(tool_calls=tools))
    assert g.verdict is (Verdict.PASS if ok else Verdict.FAIL), g.reason


def test_policy_trajectory_f1_is_a_diagnostic() -> None:
    task = make_task(
        [{"id": "p", "kind": "policy", "grader": {"name": "policy", "args": {"forbidden": ["x"]}}}],
        expected_tools=["lookup_order", "refund_order"],
    )
    g = grade("policy", {"forbidden": ["x"]}, make_trial(tool_calls=calls("refund_order")), task)
    assert g.verdict is Verdict.PASS and g.observation["trajectory_f1"] == pytest.approx(2 / 3)
    assert trajectory_f1(["a", "a", "b"], ["a", "b"]) == pytest.approx(0.8)
    assert trajectory_f1([], ["a"]) == 0.0 and trajectory_f1(["a"], []) == 0.0
    assert grade("policy", {"forbidden": ["x"]}, make_trial()).verdict is Verdict.UNKNOWN
    with pytest.raises(UserError, match="at least one rule"):
        build_grader(GraderSpec(name="policy"))


def test_budget() -> None:
    args = {"max_cost_usd": 0.10, "max_tokens": 1000, "max_tool_calls": 3}
    ok = make_trial(cost_usd=0.05, tokens=900, tool_calls=calls("a", "b"))
    assert grade("budget", args, ok).verdict is Verdict.PASS
    over = make_trial(cost_usd=0.25, tokens=900, tool_calls=calls("a", "b", "c", "d"))
    g = grade("budget", args, over)
    assert (
        g.verdict is Verdict.FAIL
        and "cost_usd 0.25 > 0.1" in g.reason
        and g.score == pytest.approx(1 / 3)
    )
    assert (
        grade("budget", args, make_trial(cost_usd=0.05, tool_calls=[])).verdict is Verdict.UNKNOWN
    )
    exhausted = make_trial(cost_usd=0.05, tokens=1, tool_calls=[], budget_exhausted=True)
    assert grade("budget", args, exhausted).verdict is Verdict.FAIL


def test_side_effect_reads_the_critical_events_summary() -> None:
    clean = make_trial(side_effects={"resource_creation": 2, "destructive_write": 0})
    assert grade("side-effect", {}, clean).verdict is Verdict.PASS
    dirty = make_trial(side_effects={"external_communication": 1})
    g = grade("side-effect", {}, dirty)
    assert g.verdict is Verdict.FAIL and "external_communication: 1" in g.reason
    assert (
        grade("side-effect", {"allowed": {"external_communication": 1}}, dirty).verdict
        is Verdict.PASS
    )
    assert grade("side-effect", {}, make_trial()).verdict is Verdict.UNKNOWN


def test_recorded() -> None:
    assert (
        grade("recorded", {"key": "utility"}, make_trial(recorded={"utility": "pass"})).verdict
        is Verdict.PASS
    )
    assert (
        grade("recorded", {"key": "utility"}, make_trial(recorded={"utility": "pending"})).verdict
        is Verdict.PENDING
    )
    assert grade("recorded", {"key": "utility"}, make_trial()).verdict is Verdict.UNKNOWN


def test_grade_trial_partial_credit_never_decides() -> None:
    """Three of four checkpoints met: partial credit 0.75, verdict fail (playbook)."""
    task = make_task(
        [
            {
                "id": "state",
                "kind": "state",
                "grader": {
                    "name": "state",
                    "args": {
                        "assertions": [
                            {"path": "/orders/O-41/status", "op": "equals", "value": "refunded"}
                        ]
                    },
                },
            },
            {
                "id": "policy",
                "kind": "policy",
                "grader": {"name": "policy", "args": {"forbidden": ["delete"]}},
            },
            {
                "id": "schema",
                "kind": "schema",
                "grader": {"name": "schema", "args": {"schema": {"type": "object"}}},
            },
            {"id": "effects", "kind": "side-effect", "grader": {"name": "side-effect", "args": {}}},
            {
                "id": "f1",
                "kind": "custom",
                "role": "diagnostic",
                "weight": 0,
                "grader": {"name": "recorded", "args": {"key": "x"}},
            },
        ]
    )
    trial = make_trial(
        snapshot=SNAP,
        tool_calls=calls("lookup", "delete"),
        output={},
        side_effects={"destructive_write": 0},
    )
    graded = grade_trial(task, trial)
    assert graded.verdict is Verdict.FAIL
    assert graded.partial_credit == pytest.approx(0.75)
    assert [r.verdict for r in graded.results] == [
        Verdict.PASS,
        Verdict.FAIL,
        Verdict.PASS,
        Verdict.PASS,
        Verdict.UNKNOWN,
    ]
    assert graded.results[0].grader is not None and graded.results[0].grader.name == "state"
    # results recorded elsewhere are kept, not regraded
    pre = trial.model_copy(
        update={"results": [graded.results[1].model_copy(update={"verdict": Verdict.PENDING})]}
    )
    regraded = grade_trial(task, pre)
    assert regraded.results[1].verdict is Verdict.PENDING and regraded.verdict is Verdict.PENDING


def test_task_model_rejects_contracts_that_cannot_accept() -> None:
    with pytest.raises(ValueError, match="no mandatory criterion"):
        make_task(
            [
                {
                    "id": "d",
                    "kind": "custom",
                    "role": "diagnostic",
                    "grader": {"name": "recorded", "args": {"key": "d"}},
                }
            ]
        )
    with pytest.raises(ValueError, match="appears twice"):
        make_task(
            [{"id": "d", "kind": "custom", "grader": {"name": "recorded", "args": {"key": "d"}}}]
            * 2
        )
    with pytest.raises(ValueError):
        Trial.model_validate(
            {
                "trial_id": "r",
                "task_id": "t",
                "config": {"id": "c"},
                "environment_id": "e",
                "schema_version": 2,
            }
        )


_keys = st.text(alphabet="ab/~0 1-", min_size=1, max_size=4)
_docs = st.recursive(
    st.integers() | st.text(max_size=3) | st.none(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=12,
)


def _paths(doc: Any, prefix: str = "") -> list[tuple[str, Any]]:
    out = [(prefix, doc)]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, f"{prefix}/{k.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, f"{prefix}/{i}")
    return out


@given(_docs)
def test_pointer_reaches_every_node(doc: Any) -> None:
    """Every node is addressable by its escaped path, whatever the key characters."""
    for path, value in _paths(doc):
        assert resolve_pointer(doc, path) == value
