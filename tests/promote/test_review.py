"""Review: append-only attributed events, optimistic concurrency, approval gates release."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from flywheel.evalset import release_from_store
from flywheel.promote import (
    ReviewEvent,
    SamplingPolicy,
    approved_count,
    dedupe_candidates,
    draft_candidates,
    fold,
    read_events,
    record_event,
    redact_candidates,
    sample_candidates,
)

from flywheel import ConflictError, Settings, Store, UserError, create_app
from tests._auth import LOCAL, Reviewers, key_headers
from tests.promote.test_sampling import agent_trace, insert, refund_trace, tid


@pytest.fixture
def drafted(store: Store) -> tuple[Store, list[str]]:
    """Two distinct drafted candidates (a failed refund, an address change)."""
    insert(
        store,
        refund_trace(1, error="refund API down")
        + agent_trace(
            tid(2),
            "Please move my deliveries to 12 Elm Road, my email is kim@example.net",
            [
                (
                    "update_address",
                    {"email": "kim@example.net", "address": "12 Elm Road"},
                    {"ok": True},
                )
            ],
            "Done, deliveries go to the new address.",
            root_attrs={"flywheel.slice": "address"},
            start_ms=500,
        ),
    )
    policy = SamplingPolicy(successes={"per_slice": 5})
    sample_candidates(store, policy)
    dedupe_candidates(store)
    redact_candidates(store)
    cands = draft_candidates(store)
    assert len(cands) == 2
    return store, sorted(c.candidate_id for c in cands)


def test_claim_edit_approve_and_the_approved_table(drafted: tuple[Store, list[str]]) -> None:
    store, (cid, _) = drafted
    st = record_event(store, cid, "claim", "alice", 0)
    assert (st.version, st.status, st.claimed_by) == (1, "claimed", "alice")
    task = dict(st.task or {})
    task["golden"] = True
    st = record_event(store, cid, "edit", "alice", 1, task=task)
    assert st.edited and st.task and st.task["golden"] is True
    assert approved_count(store) == 0
    st = record_event(store, cid, "approve", "alice", 2)
    assert (st.status, st.decided_by, st.version) == ("approved", "alice", 3)
    assert approved_count(store) == 1
    row = store.query("SELECT body, task_sha256, approved_by FROM approved_tasks FINAL")[0]
    assert json.loads(row["body"])["golden"] is True and row["approved_by"] == "alice"
    assert row["task_sha256"] == st.approved_sha256
    events = read_events(store, candidate_ids=[cid])[cid]
    assert [(e.kind, e.reviewer, e.base_version) for e in events] == [
        ("claim", "alice", 0),
        ("edit", "alice", 1),
        ("approve", "alice", 2),
    ]


def test_stale_decision_is_a_conflict_and_overwrites_nothing(
    drafted: tuple[Store, list[str]],
) -> None:
    store, (cid, _) = drafted
    record_event(store, cid, "claim", "alice", 0)
    record_event(store, cid, "approve", "alice", 1)
    with pytest.raises(ConflictError, match="version 2.*approve by alice"):
        record_event(store, cid, "reject", "bob", 1, reason="looks wrong")
    with pytest.raises(ConflictError, match="reopen it first"):
        record_event(store, cid, "claim", "bob", 2)
    events = read_events(store, candidate_ids=[cid])[cid]
    assert [e.kind for e in events] == ["claim", "approve"]
    assert approved_count(store) == 1


def test_claims_are_exclusive_and_decisions_need_the_claim(
    drafted: tuple[Store, list[str]],
) -> None:
    store, (cid, _) = drafted
    with pytest.raises(ConflictError, match="must claim it"):
        record_event(store, cid, "approve", "alice", 0)
    record_event(store, cid, "claim", "alice", 0)
    with pytest.raises(ConflictError, match="claimed by alice"):
        record_event(store, cid, "claim", "bob", 1)
    with pytest.raises(ConflictError, match="claimed by alice"):
        record_event(store, cid, "approve", "bob", 1)
    st = record_event(store, cid, "unclaim", "alice", 1)
    assert st.status == "open" and st.claimed_by == ""
    assert record_event(store, cid, "claim", "bob", 2).claimed_by == "bob"


def test_reasons_and_reviewer_are_required(drafted: tuple[Store, list[str]]) -> None:
    store, (cid, _) = drafted
    with pytest.raises(UserError, match="needs a reviewer"):
        record_event(store, cid, "claim", "  ", 0)
    record_event(store, cid, "claim", "alice", 0)
    with pytest.raises(UserError, match="reject needs a reason"):
        record_event(store, cid, "reject", "alice", 1)
    with pytest.raises(UserError, match="needs-info needs a reason"):
        record_event(store, cid, "needs-info", "alice", 1, reason=" ")
    st = record_event(store, cid, "needs-info", "alice", 1, reason="which order was damaged?")
    assert (st.status, st.reason, st.claimed_by) == ("needs-info", "which order was damaged?", "")
    with pytest.raises(UserError, match="unknown review event"):
        record_event(store, cid, "merge", "alice", 2)


def test_edits_go_through_the_task_model(drafted: tuple[Store, list[str]]) -> None:
    store, (cid, _) = drafted
    st = record_event(store, cid, "claim", "alice", 0)
    good = dict(st.task or {})
    no_mandatory = {
        **good,
        "criteria": [{**c, "role": "diagnostic"} for c in good["criteria"]],
    }
    with pytest.raises(UserError, match="no mandatory criterion"):
        record_event(store, cid, "edit", "alice", 1, task=no_mandatory)
    with pytest.raises(UserError, match="cannot change task_id"):
        record_event(store, cid, "edit", "alice", 1, task={**good, "task_id": "other"})
    bad_grader = {
        **good,
        "criteria": [
            *good["criteria"],
            {"id": "s", "kind": "state", "grader": {"name": "state", "args": {"assertions": []}}},
        ],
    }
    with pytest.raises(UserError, match="state"):
        record_event(store, cid, "edit", "alice", 1, task=bad_grader)
    with pytest.raises(UserError, match="metadata.split"):
        record_event(
            store,
            cid,
            "edit",
            "alice",
            1,
            task={**good, "metadata": {**good["metadata"], "split": "x"}},
        )
    assert read_events(store, candidate_ids=[cid])[cid][-1].kind == "claim"


def test_nothing_is_released_without_an_approving_review(
    drafted: tuple[Store, list[str]], tmp_path: Path
) -> None:
    store, (a, b) = drafted
    with pytest.raises(UserError, match="no approved tasks"):
        release_from_store(store, tmp_path, "default")
    for cid in (a, b):
        record_event(store, cid, "claim", "alice", 0)
    record_event(store, a, "approve", "alice", 1)
    record_event(store, b, "reject", "alice", 1, reason="not a real failure")
    v1 = release_from_store(store, tmp_path, "default")
    assert len(v1.manifest.tasks) == 1
    # Reopening withdraws the approval: the next release drops the task.
    record_event(store, a, "reopen", "bob", 2, reason="expected state is wrong")
    assert approved_count(store) == 0
    with pytest.raises(UserError, match="no approved tasks"):
        release_from_store(store, tmp_path, "default")


def test_concurrent_claims_one_wins(drafted: tuple[Store, list[str]]) -> None:
    store, (cid, _) = drafted
    results: dict[str, Any] = {}

    def claim(who: str) -> None:
        try:
            results[who] = record_event(store, cid, "claim", who, 0).claimed_by
        except ConflictError as exc:
            results[who] = exc

    threads = [threading.Thread(target=claim, args=(w,)) for w in ("alice", "bob", "carol")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [w for w, r in results.items() if isinstance(r, str)]
    assert len(winners) == 1 and results[winners[0]] == winners[0]
    assert sum(isinstance(r, ConflictError) for r in results.values()) == 2
    assert [e.reviewer for e in read_events(store, candidate_ids=[cid])[cid]] == winners


def test_fold_skips_the_loser_of_a_seq() -> None:
    ev = [
        ReviewEvent("c", 1, "e1", "claim", "alice", 0),
        ReviewEvent("c", 1, "e2", "claim", "bob", 0),  # lost the race for seq 1
        ReviewEvent("c", 2, "e3", "reject", "alice", 1, reason="no"),
    ]
    st = fold("c", {"task_id": "t"}, ev)
    assert (st.version, st.status, st.decided_by) == (2, "rejected", "alice")
    assert [e.event_id for e in st.events] == ["e1", "e3"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_api_errors_and_openapi(drafted: tuple[Store, list[str]]) -> None:
    store, (cid, other) = drafted
    app = create_app(Settings(), store)
    who = Reviewers(store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=LOCAL, headers=who["reader"]) as c:
        r = await c.get("/api/promote/candidates/cand-nope")
        assert r.status_code == 404 and r.json()["error"]["type"] == "NotFoundError"
        r = await c.post(
            f"/api/promote/candidates/{cid}/decision",
            json={"base_version": 0, "decision": "approve"},
            headers=key_headers(store, "read"),
        )
        assert r.status_code == 403  # a read key is no reviewer
        h = who["alice"]
        r = await c.post(
            f"/api/promote/candidates/{cid}/decision",
            json={"base_version": 0, "decision": "maybe"},
            headers=h,
        )
        assert r.status_code == 400
        assert (
            await c.post(
                f"/api/promote/candidates/{cid}/claim", json={"base_version": 0}, headers=h
            )
        ).status_code == 200
        r = await c.post(
            f"/api/promote/candidates/{cid}/claim",
            json={"base_version": 0},
            headers=who["bob"],
        )
        assert r.status_code == 409 and "nothing was overwritten" in r.json()["error"]["message"]
        r = await c.put(
            f"/api/promote/candidates/{cid}/task",
            json={"base_version": 1, "task": {"task_id": "x"}},
            headers=h,
        )
        assert r.status_code == 400 and "invalid task" in r.json()["error"]["message"]
        q = (await c.get("/api/promote/queue", params={"status": "claimed"})).json()
        assert [i["candidate_id"] for i in q["items"]] == [cid]
        q = (
            await c.get("/api/promote/queue", params={"status": "open", "slice": "address"})
        ).json()
        assert [i["candidate_id"] for i in q["items"]] == [other]
        assert (await c.get("/api/promote/queue", params={"status": "bogus"})).status_code == 400
        spec = (await c.get("/openapi.json")).json()
    ops = [
        (path, method, op)
        for path, item in spec["paths"].items()
        if path.startswith("/api/promote")
        for method, op in item.items()
    ]
    assert len(ops) == 10
    for path, method, op in ops:
        assert op.get("operationId") and op.get("summary"), (path, method)
        if method in ("post", "put"):
            assert {"400", "404", "409"} <= set(op["responses"]), (path, method)
