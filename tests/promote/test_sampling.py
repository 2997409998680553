"""Sampling by a declared policy: failures first, stratified seeded successes, explicit promotion.

The helpers here build realistic GenAI agent traces (an ``invoke_agent`` root,
a ``chat`` span, ``execute_tool`` spans with JSON arguments and results that
carry PII) straight into the span table; the other promotion tests import them.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from flywheel.promote import SamplingPolicy, load_policy, sample, sample_candidates, sample_one
from flywheel.promote._sampling import failure_reasons, seeded_rank

from flywheel import NotFoundError, Store, UserError

MS = 1_000_000
T0 = time.time_ns() - 3_600 * 1_000_000_000


def _span(
    trace: str,
    sid: str,
    parent: str,
    name: str,
    start_ms: int,
    attrs: dict[str, Any],
    *,
    status: str = "Ok",
    message: str = "",
    service: str = "support-agent",
) -> dict[str, Any]:
    return {
        "Timestamp": T0 + start_ms * MS,
        "TraceId": trace,
        "SpanId": sid,
        "ParentSpanId": parent,
        "TraceState": "",
        "SpanName": name,
        "SpanKind": "Internal",
        "ServiceName": service,
        "ResourceAttributes": {"service.name": service},
        "ScopeName": "test",
        "ScopeVersion": "",
        "SpanAttributes": {k: v if isinstance(v, str) else json.dumps(v) for k, v in attrs.items()},
        "Duration": 40 * MS,
        "StatusCode": status,
        "StatusMessage": message,
        "Events.Timestamp": [],
        "Events.Name": [],
        "Events.Attributes": [],
        "Links.TraceId": [],
        "Links.SpanId": [],
        "Links.TraceState": [],
        "Links.Attributes": [],
        "ProjectId": "default",
    }


def agent_trace(
    trace_id: str,
    user: str,
    tools: list[tuple[str, Any, Any]],
    reply: str,
    *,
    error: str = "",
    root_attrs: dict[str, Any] | None = None,
    start_ms: int = 0,
    service: str = "support-agent",
) -> list[dict[str, Any]]:
    """Spans of one support-agent run: root, chat, tools, final chat (failed root if ``error``)."""
    root = f"{trace_id[:8]}r0000000"[:16]
    spans = [
        _span(
            trace_id,
            root,
            "",
            "invoke_agent support",
            start_ms,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "support",
                "flywheel.input": user,
                "flywheel.output": reply,
                **(root_attrs or {}),
            },
            status="Error" if error else "Ok",
            message=error,
            service=service,
        ),
        _span(
            trace_id,
            f"{trace_id[:8]}c0000000"[:16],
            root,
            "chat gpt-4o",
            start_ms + 1,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.input.messages": json.dumps([{"role": "user", "content": user}]),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "content": "calling tools"}]
                ),
                "gen_ai.usage.input_tokens": "120",
                "gen_ai.usage.output_tokens": "30",
            },
            service=service,
        ),
    ]
    for i, (name, args, result) in enumerate(tools):
        spans.append(
            _span(
                trace_id,
                f"{trace_id[:8]}t{i:07d}"[:16],
                root,
                f"execute_tool {name}",
                start_ms + 2 + i,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": f"call_{i}",
                    "gen_ai.tool.call.arguments": json.dumps(args),
                    "gen_ai.tool.call.result": json.dumps(result),
                },
                service=service,
            )
        )
    return spans


def insert(store: Store, spans: list[dict[str, Any]]) -> None:
    """Columnar insert of span rows."""
    store.insert(store.otel_table, {k: [s[k] for s in spans] for k in spans[0]})


def tid(n: int) -> str:
    """A 32-hex trace id."""
    return f"{n:032x}"


def refund_trace(
    n: int,
    *,
    error: str = "",
    email: str = "",
    root_attrs: dict[str, Any] | None = None,
    slice_: str = "refunds",
) -> list[dict[str, Any]]:
    """A refund request; PII in the prompt, tool arguments and results."""
    email = email or f"customer{n}@example.com"
    order = f"O-{4400 + n}"
    return agent_trace(
        tid(n),
        f"Hi, I am Jane Roe ({email}). Please refund order {order}, it arrived damaged.",
        [
            (
                "lookup_order",
                {"order_id": order, "email": email},
                {
                    "order_id": order,
                    "status": "delivered",
                    "name": "Jane Roe",
                    "phone": "+1 415-555-0132",
                },
            ),
            (
                "refund_order",
                {"order_id": order, "reason": "damaged"},
                {"refund_id": f"R-{n}", "ok": not error},
            ),
        ],
        f"Your refund for {order} is on its way; a confirmation went to {email}.",
        error=error,
        root_attrs={"flywheel.slice": slice_, **(root_attrs or {})},
        start_ms=n * 100,
    )


@pytest.fixture
def mixed(store: Store) -> Store:
    """30 traces: 20 refunds (3 failed ways), 10 address changes; slices refunds/address."""
    spans: list[dict[str, Any]] = []
    for n in range(20):
        if n == 0:
            spans += refund_trace(n, error="refund service timed out")
        elif n == 1:
            spans += refund_trace(n, root_attrs={"flywheel.feedback.score": "-1"})
        elif n == 2:
            spans += refund_trace(n, root_attrs={"flywheel.outcome.utility": "false"})
        else:
            spans += refund_trace(n)
    for n in range(20, 30):
        spans += agent_trace(
            tid(n),
            f"Change my address to {n} Main St please",
            [
                (
                    "update_address",
                    {"customer_id": f"C-{n}", "address": f"{n} Main St"},
                    {"ok": True},
                )
            ],
            "Done.",
            root_attrs={"flywheel.slice": "address"},
            start_ms=n * 100,
        )
    insert(store, spans)
    return store


def test_failures_first_with_reasons(mixed: Store) -> None:
    got = sample(mixed, SamplingPolicy(successes={"per_slice": 2, "seed": 1}))
    failures = [s for s in got if s.source == "failure"]
    assert [s.source for s in got[: len(failures)]] == ["failure"] * len(failures)
    reasons = {s.trace_id: s.reasons for s in failures}
    assert reasons[tid(0)] == ("root-error",)
    assert reasons[tid(1)] == ("feedback:flywheel.feedback.score=-1",)
    assert reasons[tid(2)] == ("outcome:flywheel.outcome.utility=false",)
    assert len(failures) == 3


def test_successes_stratified_per_slice_and_seeded(mixed: Store) -> None:
    policy = SamplingPolicy(successes={"per_slice": 2, "seed": 1})
    got = [s for s in sample(mixed, policy) if s.source == "success"]
    by_slice: dict[str, list[str]] = {}
    for s in got:
        by_slice.setdefault(s.slice, []).append(s.trace_id)
    assert {k: len(v) for k, v in by_slice.items()} == {"address": 2, "refunds": 2}
    # Seeded: the smallest sha256(seed:trace_id) of each slice, whatever the read order.
    refund_ok = [tid(n) for n in range(3, 20)]
    assert sorted(by_slice["refunds"]) == sorted(
        sorted(refund_ok, key=lambda t: seeded_rank(1, t))[:2]
    )
    again = [s.trace_id for s in sample(mixed, policy) if s.source == "success"]
    assert again == [s.trace_id for s in got]
    other = [
        s.trace_id
        for s in sample(mixed, SamplingPolicy(successes={"per_slice": 2, "seed": 2}))
        if s.source == "success"
    ]
    assert other != [s.trace_id for s in got]


def test_provenance_flags_make_a_failure(mixed: Store) -> None:
    mixed.insert(
        "argument_provenance",
        {
            "project_id": ["default"],
            "trace_id": [tid(5)],
            "span_id": ["s"],
            "tool_name": ["refund_order"],
            "path": ["$.order_id"],
            "source_kind": ["tool_result"],
            "source_span_id": ["x"],
            "source_ref": [""],
            "method": ["value-flow"],
            "confidence": [0.9],
            "trusted": [False],
            "ambiguous": [False],
            "alternatives": [[]],
            "flags": [["untrusted_argument_to_sensitive_tool"]],
            "computed_at": [time.time_ns()],
        },
    )
    got = {s.trace_id: s for s in sample(mixed, SamplingPolicy(successes={"per_slice": 0}))}
    assert got[tid(5)].reasons == ("provenance:untrusted_argument_to_sensitive_tool",)
    only_other = SamplingPolicy(
        failures={"provenance_flags": ["untrusted_memory_write"]}, successes={"per_slice": 0}
    )
    assert tid(5) not in {s.trace_id for s in sample(mixed, only_other)}


def test_side_effect_flags_make_a_failure(mixed: Store) -> None:
    mixed.insert(
        "side_effect_results",
        {
            "project_id": ["default"],
            "trial_id": ["t1"],
            "trace_id": [tid(7)],
            "intended": [1],
            "benign": [0],
            "unauthorized": [1],
            "critical": [{"destructive_write": 1}],
            "blocking": [1],
            "unexplained": [0],
            "writes_without_effect": [0],
            "profile": [""],
            "scope": [""],
            "s0_digest": [""],
            "st_digest": [""],
            "created_at": [time.time_ns()],
        },
    )
    got = {s.trace_id: s for s in sample(mixed, SamplingPolicy(successes={"per_slice": 0}))}
    assert set(got[tid(7)].reasons) == {
        "side-effect:blocking",
        "side-effect:critical:destructive_write",
        "side-effect:unauthorized",
    }


def test_explicit_promotion_keeps_the_trace_id(mixed: Store) -> None:
    s = sample_one(mixed, SamplingPolicy(), tid(9).upper())
    assert s.trace_id == tid(9) and s.source == "explicit" and s.reasons == ("explicit",)
    with pytest.raises(NotFoundError):
        sample_one(mixed, SamplingPolicy(), tid(999))


def test_sample_candidates_is_incremental(mixed: Store) -> None:
    policy = SamplingPolicy(successes={"per_slice": 1})
    first = sample_candidates(mixed, policy)
    assert {c.trace_id for c in first} and all(c.policy_id == policy.policy_id for c in first)
    assert all(c.stage == "sampled" for c in first)
    assert sample_candidates(mixed, policy) == [] or all(
        c.trace_id not in {f.trace_id for f in first} for c in sample_candidates(mixed, policy)
    )


def test_policy_file_toml_and_errors(tmp_path: Any) -> None:
    p = tmp_path / "policy.toml"
    p.write_text(
        'name = "support"\nversion = 3\nevalset = "support"\n[successes]\nper_slice = 4\nseed = 9\n'
    )
    pol = load_policy(p)
    assert (pol.name, pol.version, pol.successes.per_slice, pol.evalset) == (
        "support",
        3,
        4,
        "support",
    )
    assert pol.policy_id.startswith("support@3#")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"successes": {"per_slice": -1}}))
    with pytest.raises(UserError, match="successes.per_slice"):
        load_policy(bad)
    with pytest.raises(UserError, match="not found"):
        load_policy(tmp_path / "missing.toml")


def test_failure_reasons_unit() -> None:
    from flywheel.promote._sampling import TraceFacts

    f = TraceFacts(
        "t", 0, "svc", False, 2, {"feedback.score": ["0.5"], "flywheel.outcome": ["FAILED"]}
    )
    pol = SamplingPolicy(failures={"any_span_error": True})
    assert failure_reasons(f, pol) == ["span-errors:2", "outcome:flywheel.outcome=failed"]
