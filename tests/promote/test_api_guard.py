"""Nothing the review API returns carries a detected value, whichever field it sits in.

Planted by hand in fields trace redaction never sees: a reviewer's edited task
(English prose, a German sentence, a base64-encoded e-mail, a bearer token), a
needs-info reason (a French IBAN), and a slice attribute (an e-mail). Each
response of the candidate, queue and write routes is checked by known value
(``find_leaks``) and by every detector (``scan_document``).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from flywheel.pii import find_leaks, scan_document
from flywheel.promote import (
    SamplingPolicy,
    dedupe_candidates,
    draft_candidates,
    read_events,
    record_event,
    redact_candidates,
    sample_candidates,
)

from flywheel import Settings, Store, create_app
from tests._auth import LOCAL, Reviewers
from tests.promote.test_sampling import agent_trace, insert, tid

_EMAIL = "odalys.ferreira-kunst@posteo.example"
_PHONE = "+49 171 3348821"
_TOKEN = "ghp_R8kq2LmN5vT0wXyZ4aBcD7eF1gH3iJ6kL9mN"
_IBAN = "FR76 3000 6000 0112 3456 7890 189"
_SLICE_EMAIL = "renske.vaneijk@kpn.example"
PLANTED = [_EMAIL, _PHONE, _TOKEN, _IBAN, _SLICE_EMAIL, "Odalys Ferreira-Kunst"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def candidate(store: Store) -> tuple[Store, str]:
    insert(
        store,
        agent_trace(
            tid(41),
            "Where is my parcel?",
            [("track_parcel", {"parcel": "PX-2231"}, {"status": "in transit"})],
            "It is in transit.",
            root_attrs={"flywheel.slice": f"vip {_SLICE_EMAIL}"},
        ),
    )
    sample_candidates(store, SamplingPolicy(successes={"per_slice": 5}))
    dedupe_candidates(store)
    redact_candidates(store)
    (cand,) = draft_candidates(store)
    return store, cand.candidate_id


_ATTRIBUTION = ("reviewer", "claimed_by", "decided_by")


def _clean(body: Any) -> None:
    assert find_leaks(body, PLANTED) == []
    # The reviewer's own name (attribution, kept on purpose) is the only finding allowed.
    found = [f for f in scan_document(body) if not f.path.endswith(_ATTRIBUTION)]
    assert found == []


@pytest.mark.anyio
async def test_review_responses_carry_no_planted_value(candidate: tuple[Store, str]) -> None:
    store, cid = candidate
    st = record_event(store, cid, "claim", "Odile Marchetti", 0)
    task = dict(st.task or {})
    blob = base64.b64encode(f'{{"contact": "{_EMAIL}"}}'.encode()).decode()
    task["prompt"] = (
        f"Customer Odalys Ferreira-Kunst ({_EMAIL}, phone {_PHONE}) asks where the parcel is. "
        f"Sie ist unter {_PHONE} erreichbar. Context blob: {blob}. "
        f"Header seen: Authorization: Bearer {_TOKEN}"
    )
    record_event(store, cid, "edit", "Odile Marchetti", 1, task=task)
    stored = read_events(store, candidate_ids=[cid])[cid][-1]
    assert _EMAIL in stored.body  # the guard changes responses, never what is stored

    app = create_app(Settings(), store)
    h = Reviewers(store)["Odile Marchetti"]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=LOCAL, headers=h) as c:
        r = await c.post(
            f"/api/promote/candidates/{cid}/decision",
            json={"base_version": 2, "decision": "needs-info", "reason": f"refund to {_IBAN}?"},
            headers=h,
        )
        assert r.status_code == 200, r.text
        write = r.json()
        detail = (await c.get(f"/api/promote/candidates/{cid}")).json()
        queue = (await c.get("/api/promote/queue")).json()
    for body in (write, detail, queue):
        _clean(body)
    # Reviewer attribution is the API's own, kept as sent.
    assert write["decided_by"] == "Odile Marchetti"
    assert {e["reviewer"] for e in detail["review"]["events"]} == {"Odile Marchetti"}
    # Redacted, not dropped: the text around the values is still there, pseudonyms are consistent.
    prompt = detail["task"]["prompt"]
    assert "asks where the parcel is" in prompt and "erreichbar" in prompt
    edit = next(e for e in detail["review"]["events"] if e["kind"] == "edit")
    assert edit["task"]["prompt"] == prompt
    assert detail["review"]["reason"].startswith("refund to <IBAN_")
    assert queue["items"][0]["slice"].startswith("vip <EMAIL_")


def test_new_pseudonyms_do_not_reuse_numbers_already_in_the_body() -> None:
    from flywheel.promote import Redactor

    body = {"a": "already <EMAIL_1> and <EMAIL_2>", "b": f"new {_EMAIL}"}
    out, report = Redactor().redact_document(body)
    assert out["a"] == body["a"]
    assert out["b"] == "new <EMAIL_3>"
    assert report.distinct == {"EMAIL": 1}


def test_what_the_review_view_hides_is_not_in_the_released_bundle(
    store: Store, tmp_path: Path
) -> None:
    """One redaction for review and release: the approved task is the task as the view shows it.

    Two ways a value sits in a candidate that the view hides: the stored steps were
    redacted by the detectors of an older day (a raw e-mail in the user's words, so in
    the drafted prompt too), and a reviewer's edit typed a name, a phone and a token.
    """
    from dataclasses import replace

    from flywheel.evalset import export_bundle, release_from_store
    from flywheel.promote._candidates import write_candidates  # a candidate of older detectors

    insert(store, agent_trace(tid(42), "Where is my parcel?", [("track_parcel", {"parcel": "PX-1"}, {"ok": 1})], "Soon."))
    sample_candidates(store, SamplingPolicy(successes={"per_slice": 5}))
    dedupe_candidates(store)
    (red,) = redact_candidates(store)
    stale = red.redacted_steps.replace("Where is my parcel?", f"Where is my parcel? Mail me at {_EMAIL}")
    assert stale != red.redacted_steps
    write_candidates(store, [replace(red, redacted_steps=stale)])
    (cand,) = draft_candidates(store)
    assert _EMAIL in cand.draft  # the draft holds what the stale steps held
    cid = cand.candidate_id

    st = record_event(store, cid, "claim", "Odile Marchetti", 0)
    task = dict(st.task or {})
    task["expected_tools"] = [*task.get("expected_tools", []), f"notify Odalys Ferreira-Kunst {_PHONE}"]
    task["metadata"] = {**task.get("metadata", {}), "note": f"token Bearer {_TOKEN}"}
    st = record_event(store, cid, "edit", "Odile Marchetti", st.version, task=task)
    async def view() -> Any:
        h = Reviewers(store)["Odile Marchetti"]
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(Settings(), store)), base_url=LOCAL, headers=h
        ) as c:
            return (await c.get(f"/api/promote/candidates/{cid}")).json()

    assert find_leaks(anyio.run(view), PLANTED) == []  # the view hides every one
    record_event(store, cid, "approve", "Odile Marchetti", st.version)

    result = release_from_store(store, tmp_path / "sets", "default")  # nothing to refuse
    out = export_bundle(tmp_path / "sets", f"default@{result.version}", tmp_path / "out")
    blob = "".join(p.read_text(encoding="utf-8") for p in sorted(out.iterdir()))
    assert [v for v in PLANTED if v in blob] == []
    assert "Where is my parcel? Mail me at <EMAIL_" in blob  # redacted, not dropped
