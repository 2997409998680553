"""Re-running redaction of one candidate with reviewer rules (API and function)."""

from __future__ import annotations

import json

import httpx
import pytest
from flywheel.promote import (
    SamplingPolicy,
    dedupe_candidates,
    draft_candidates,
    get_candidate,
    queue,
    read_events,
    record_event,
    redact_candidate,
    redact_candidates,
    review_state,
    sample_candidates,
    stored_rules,
)

from flywheel import ConflictError, Settings, Store, UserError, create_app
from tests._auth import LOCAL, Reviewers, key_headers
from tests.promote.test_sampling import agent_trace, insert, tid

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def one(store: Store) -> tuple[Store, str]:
    """One drafted candidate naming a person no detector knows (written in lower case: no capitals, no first name, no cue) under an odd key."""
    insert(
        store,
        agent_trace(
            tid(7),
            "Pay the invoice zorq vantablack sent me, reference kept by the office.",
            [("pay_invoice", {"holder_ref": "qwyn barrowmere", "amount": 40}, {"ok": True})],
            "Paid 40 EUR to zorq vantablack.",
            root_attrs={"flywheel.slice": "payments"},
        ),
    )
    sample_candidates(store, SamplingPolicy(successes={"per_slice": 5}))
    dedupe_candidates(store)
    redact_candidates(store)
    (cand,) = draft_candidates(store)
    return store, cand.candidate_id


def _all_text(store: Store, cid: str) -> str:
    c = get_candidate(store, cid)
    return c.redacted_steps + json.dumps(review_state(store, c).task) + c.draft


async def test_rerun_adds_entities_redrafts_and_keeps_rules(one: tuple[Store, str]) -> None:
    store, cid = one
    before = get_candidate(store, cid)
    assert "NAME" not in before.report()["counts"] and "zorq vantablack" in before.redacted_steps
    record_event(store, cid, "claim", "alice", 0)
    st = redact_candidate(store, cid, "alice", 1, deny_strings={"NAME": ["zorq vantablack"]})
    assert st.last is not None
    assert (st.version, st.status, st.last.kind, st.last.reviewer) == (
        2,
        "claimed",
        "redact",
        "alice",
    )
    assert st.last.reason == "redaction re-run: deny NAME x1"  # label and count, never the value
    after = get_candidate(store, cid)
    assert after.report()["counts"]["NAME"] >= 2
    assert "zorq vantablack" not in _all_text(store, cid)
    task = review_state(store, after).task
    assert task["prompt"].startswith("Pay the invoice <NAME_1>")
    judge = next(c for c in task["criteria"] if c["id"] == "reply-judge")
    assert "<NAME_1>" in judge["grader"]["args"]["rubric"]
    assert task["metadata"]["redaction"]["counts"]["NAME"] >= 2
    # A key rule later: the deny string is kept, the key value goes too.
    st = redact_candidate(store, cid, "alice", 2, key_rules={"holder_ref": "name"})
    assert stored_rules(store, cid) == ({"holder_ref": "NAME"}, {"NAME": ["zorq vantablack"]})
    text = _all_text(store, cid)
    assert "zorq vantablack" not in text and "qwyn" not in text
    assert any(
        f["path"] == "$.holder_ref" and f["rule"] == "key"
        for f in get_candidate(store, cid).report()["findings"]
    )
    assert [e.kind for e in read_events(store, candidate_ids=[cid])[cid]] == [
        "claim",
        "redact",
        "redact",
    ]
    # Approval takes the re-drafted task.
    st = record_event(store, cid, "approve", "alice", 3)
    assert st.status == "approved"


async def test_reviewer_text_is_redacted_with_the_trace_pseudonyms(one: tuple[Store, str]) -> None:
    store, cid = one
    record_event(store, cid, "claim", "alice", 0)
    task = review_state(store, get_candidate(store, cid)).task
    task["prompt"] = "Pay what zorq vantablack asked for."
    record_event(store, cid, "edit", "alice", 1, task=task)
    redact_candidate(store, cid, "alice", 2, deny_strings={"NAME": ["zorq vantablack"]})
    st = review_state(store, get_candidate(store, cid))
    assert st.task["prompt"] == "Pay what <NAME_1> asked for." and st.edited
    findings = get_candidate(store, cid).report()["findings"]
    assert not any(f["span_id"] == "__task__" for f in findings)


async def test_rerun_errors(one: tuple[Store, str]) -> None:
    store, cid = one
    with pytest.raises(ConflictError):  # not claimed
        redact_candidate(store, cid, "alice", 0, deny_strings={"NAME": ["Lee"]})
    record_event(store, cid, "claim", "alice", 0)
    with pytest.raises(ConflictError):  # stale
        redact_candidate(store, cid, "alice", 0, deny_strings={"NAME": ["Lee"]})
    with pytest.raises(ConflictError):  # someone else's claim
        redact_candidate(store, cid, "bob", 1, deny_strings={"NAME": ["Lee"]})
    with pytest.raises(UserError):
        redact_candidate(store, cid, "alice", 1, deny_strings={"NAME": [" "]})
    with pytest.raises(UserError):
        redact_candidate(store, cid, "alice", 1, key_rules={"x": "not a label"})
    with pytest.raises(UserError):
        record_event(store, cid, "redact", "alice", 1)
    assert review_state(store, get_candidate(store, cid)).version == 1


async def test_redact_route(one: tuple[Store, str]) -> None:
    store, cid = one
    app = create_app(Settings(), store)
    h = Reviewers(store)["alice"]
    reader = key_headers(store, "read")
    body = {"base_version": 1, "key_rules": {}, "deny_strings": {"NAME": ["zorq vantablack"]}}
    url = f"/api/promote/candidates/{cid}/redact"
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=LOCAL, headers=reader) as c:
        assert (await c.post(url, json=body)).status_code == 403  # a read key is no reviewer
        r = await c.post("/api/promote/candidates/cand-nope/redact", json=body, headers=h)
        assert r.status_code == 404
        assert (
            await c.post(
                f"/api/promote/candidates/{cid}/claim", json={"base_version": 0}, headers=h
            )
        ).status_code == 200
        r = await c.post(url, json={**body, "base_version": 0}, headers=h)
        assert r.status_code == 409 and r.json()["error"]["type"] == "ConflictError"
        r = await c.post(url, json={**body, "deny_strings": {"NAME": [""]}}, headers=h)
        assert r.status_code == 400
        for rules, named in (({"--": "NAME"}, "'--'"), ({"holder": "not a label"}, "not a label")):
            r = await c.post(url, json={**body, "key_rules": rules}, headers=h)
            assert r.status_code == 400, r.text
            message = r.json()["error"]["message"]
            assert named in message and "\n" not in message
        r = await c.post(url, json=body, headers=h)
        assert r.status_code == 200, r.text
        assert r.json()["version"] == 2 and r.json()["status"] == "claimed"
        d = (await c.get(f"/api/promote/candidates/{cid}")).json()
        assert d["redaction_report"]["counts"]["NAME"] >= 2
        assert d["review"]["events"][-1]["kind"] == "redact"
        assert "zorq vantablack" not in json.dumps(d)
        row = (await c.get("/api/promote/queue")).json()["items"][0]
        assert row["sampled_at"] == get_candidate(store, cid).sampled_at > 0
        assert row["flagged_arguments"] == 0


def test_queue_counts_flagged_arguments(one: tuple[Store, str]) -> None:
    store, cid = one
    trace = get_candidate(store, cid).trace_id
    store.insert(
        "argument_provenance",
        {
            "project_id": ["default"] * 3,
            "trace_id": [trace] * 3,
            "span_id": ["s1"] * 3,
            "tool_name": ["pay_invoice"] * 3,
            "path": ["a", "b", "c"],
            "source_kind": ["tool_result"] * 3,
            "source_span_id": [""] * 3,
            "source_ref": [""] * 3,
            "method": ["exact"] * 3,
            "confidence": [0.9] * 3,
            "trusted": [False] * 3,
            "ambiguous": [False] * 3,
            "alternatives": [[]] * 3,
            "flags": [["untrusted_argument_to_sensitive_tool"], [], ["x", "y"]],
            "extraction": ["json"] * 3,
        },
    )
    (item,) = queue(store)
    assert item.to_dict()["flagged_arguments"] == 2
