"""Two reviewers, one queue: the first decision wins; the other sees it; nothing is overwritten."""

from __future__ import annotations

import pytest
from flywheel.promote import read_events
from flywheel.tui.screens.queue import QueueScreen
from flywheel.tui.screens.trace import TraceScreen
from flywheel.tui.widgets import Banner
from textual.widgets import DataTable

from flywheel import Store

from ._fixture import reviewer_app, settle
from .test_review_flow import text

pytestmark = pytest.mark.anyio


async def test_stale_claim_after_another_reviewer_decided(
    drafted: tuple[Store, list[str]], api: str
) -> None:
    store, _ = drafted
    alice, bob = reviewer_app(api, store, "alice"), reviewer_app(api, store, "bob")
    async with alice.run_test(size=(80, 24)) as pa, bob.run_test(size=(80, 24)) as pb:
        await settle(pa)
        await settle(pb)  # bob's queue shows the first candidate open at review v0
        first = bob.screen.rows[0]["candidate_id"]  # type: ignore[attr-defined]
        await pa.press("n")
        await settle(pa)
        assert alice.screen.candidate_id == first  # type: ignore[attr-defined]
        await pa.press("a", "y")
        await settle(pa)
        # Bob acts on what he saw: claim at v0. The server says 409; the app shows it.
        await pb.press("enter")
        await settle(pb)
        assert isinstance(bob.screen, QueueScreen)
        banner = bob.screen.query_one(Banner)
        assert banner.display and "-conflict" in banner.classes
        shown = str(banner.render())
        assert shown.startswith("CONFLICT:") and "approve by alice" in shown
        assert "nothing was overwritten" in shown
        # The queue reloaded: bob now sees the approval.
        assert bob.screen.query_one(DataTable).get_row_at(0)[0] == "approved"
    events = read_events(store, candidate_ids=[first])[first]
    assert [(e.kind, e.reviewer) for e in events] == [("claim", "alice"), ("approve", "alice")]


async def test_decision_without_the_claim_is_refused_and_shown(
    drafted: tuple[Store, list[str]], api: str
) -> None:
    store, _ = drafted
    alice, bob = reviewer_app(api, store, "alice"), reviewer_app(api, store, "bob")
    async with alice.run_test(size=(80, 24)) as pa, bob.run_test(size=(80, 24)) as pb:
        await settle(pa)
        await pa.press("n")  # alice holds the first candidate
        await settle(pa)
        cid = alice.screen.candidate_id  # type: ignore[attr-defined]
        await pb.press("l")  # bob reloads: alice holds it
        await settle(pb)
        assert bob.screen.query_one(DataTable).get_row_at(0)[0] == "@alice"
        await pb.press("enter")  # bob opens it: read-only, claimed by alice
        await settle(pb)
        assert isinstance(bob.screen, TraceScreen)
        assert "READ-ONLY" in text(pb, "#head")
        await pb.press("x")
        await settle(pb)
        await pb.press(*"dup", "enter")
        await settle(pb)
        banner = bob.screen.query_one(Banner)
        assert "claimed by alice" in str(banner.render()) and "-conflict" in banner.classes
        # Alice decides meanwhile, unaffected.
        await pa.press("i")
        await settle(pa)
        await pa.press(*"which order?", "enter")
        await settle(pa)
    events = read_events(store, candidate_ids=[cid])[cid]
    assert [(e.kind, e.reviewer, e.reason) for e in events] == [
        ("claim", "alice", ""), ("needs-info", "alice", "which order?")]
