"""Environment identity, isolation between trials, canonical snapshots."""

from __future__ import annotations

import json
import threading

import pytest
from flywheel.harness import (
    SUITES,
    AgentDojoEnvironment,
    AgentSpec,
    IdentityLedger,
    injection_task_ids,
    plan_trials,
    run_trials,
)
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flywheel import ConflictError, NotFoundError, canonical_json


def test_reset_refuses_a_reused_identity() -> None:
    a = AgentDojoEnvironment("banking", "user_task_0")
    env_id = a.reset()
    b = AgentDojoEnvironment("banking", "user_task_0")
    with pytest.raises(ConflictError, match=env_id):
        b.reset(env_id)
    assert b.reset() != env_id


def test_ledger_is_thread_safe() -> None:
    ledger = IdentityLedger()
    got: list[str] = []
    errors: list[Exception] = []

    def claim() -> None:
        try:
            got.append(ledger.claim("same"))
        except ConflictError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 1 and len(errors) == 7


def test_unknown_task_is_a_user_error() -> None:
    with pytest.raises(NotFoundError, match="user_task_999"):
        AgentDojoEnvironment("banking", "user_task_999")


def test_writes_in_one_environment_never_reach_another() -> None:
    a = AgentDojoEnvironment("banking", "user_task_3")
    b = AgentDojoEnvironment("banking", "user_task_3")
    a.reset()
    b.reset()
    before = b.snapshot()
    for call in a.task().ground_truth:
        a.call_tool(call.name, call.args)
    assert a.snapshot() != before
    assert b.snapshot() == before
    c = AgentDojoEnvironment("banking", "user_task_3")
    c.reset()
    assert c.snapshot() == before  # reset() builds the declared s0, not a shared object


def test_concurrent_trials_of_one_task_never_share_identity_or_state() -> None:
    specs = plan_trials(
        "agentdojo:banking", AgentSpec("ground_truth"), tasks=["user_task_3"], runs=12
    )
    records = run_trials(specs, InMemorySpanExporter(), workers=4)
    assert len({r.environment_id for r in records}) == 12
    assert len({r.trial_id for r in records}) == 12
    assert len({r.trace_id for r in records}) == 12
    # every trial started from the declared s0 and, doing the same writes, ended in the same sT:
    # a shared or leaked state would show the other trials' writes twice
    assert len({r.s0 for r in records}) == 1
    assert len({r.sT for r in records}) == 1
    assert all(r.utility for r in records)
    transactions = json.loads(records[0].sT)["bank_account"]["transactions"]
    assert len(transactions) == len(json.loads(records[0].s0)["bank_account"]["transactions"]) + 1


@pytest.mark.parametrize("suite", SUITES)
def test_snapshots_are_canonical_json(suite: str) -> None:
    env = AgentDojoEnvironment(suite, "user_task_0")
    env.reset()
    snap = env.snapshot()
    doc = json.loads(snap)
    assert canonical_json(doc) == snap
    assert ", " not in snap[:200] and ": " not in snap[:200]
    env2 = AgentDojoEnvironment(suite, "user_task_0")
    env2.reset()
    assert env2.snapshot() == snap


@pytest.mark.parametrize("suite", SUITES)
def test_adapter_covers_all_four_suites_with_and_without_injection(suite: str) -> None:
    env = AgentDojoEnvironment(suite, "user_task_0", injection_task_ids(suite)[0])
    env.reset()
    task = env.task()
    assert task.prompt and task.ground_truth and task.injection_ground_truth
    assert task.checks == ("utility", "security")
    assert env.tools() and any(t.read_only for t in env.tools())
    assert len(env.reference_results()) == len(task.ground_truth)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=5), json_values, max_size=6))
def test_canonical_json_ignores_key_order(d: dict) -> None:
    reordered = dict(reversed(list(d.items())))
    assert canonical_json(d) == canonical_json(reordered)
    assert json.loads(canonical_json(d)) == d
