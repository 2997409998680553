"""A full review through the app, against the real API over HTTP: claim, inspect, edit, decide."""

from __future__ import annotations

import json

import pytest
from flywheel.promote import read_events
from flywheel.tui.screens.editor import EditorScreen
from flywheel.tui.screens.queue import QueueScreen
from flywheel.tui.screens.trace import TraceScreen
from flywheel.tui.widgets import StepTree
from textual.pilot import Pilot
from textual.widgets import DataTable, Select, Static, TextArea

from flywheel import Store

from ._fixture import reviewer_app, settle

pytestmark = pytest.mark.anyio


def text(pilot: Pilot, selector: str) -> str:
    return str(pilot.app.screen.query_one(selector, Static).render())


async def test_claim_inspect_edit_approve_then_reject(
    drafted: tuple[Store, list[str]], api: str
) -> None:
    store, ids = drafted
    app = reviewer_app(api, store, "alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, QueueScreen)
        assert app.screen.query_one(DataTable).row_count == 3
        # Claim next: the failure comes first.
        await pilot.press("n")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        first = screen.candidate_id
        assert "claimed by alice" in text(pilot, "#head")
        tree = screen.query_one(StepTree)
        labels = [str(n.label) for n in tree.root.children]
        assert any(lb.startswith("AGENT") and "x ERR" in lb for lb in labels)
        tools = [str(c.label) for n in tree.root.children for c in n.children]
        assert any("TOOL  lookup_order" in t for t in tools)
        detail = text(pilot, "#step")
        assert "[user exact .95]" in detail and "<EMAIL_1>" in detail
        assert "@example.com" not in detail  # redacted text only
        # Edit: golden on, an expected final state.
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, EditorScreen)
        app.screen.query_one("#golden", Select).value = True
        app.screen.query_one("#expected_state", TextArea).text = json.dumps({"refund": "issued"})
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, TraceScreen)
        await pilot.press("a", "y")  # approve asks once
        await settle(pilot)
        assert isinstance(app.screen, QueueScreen)
        # Next one: reject with a reason.
        await pilot.press("n")
        await settle(pilot)
        second = app.screen.candidate_id
        assert second != first
        await pilot.press("x")
        await settle(pilot)
        await pilot.press(*"not a real failure")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, QueueScreen)
        assert "me 2 (+1 -1 ?0)" in text(pilot, "#progress")
    events = read_events(store, candidate_ids=[first, second])
    assert [(e.kind, e.reviewer, e.base_version) for e in events[first]] == [
        ("claim", "alice", 0), ("edit", "alice", 1), ("approve", "alice", 2)]
    edited = json.loads(events[first][1].body)
    assert edited["golden"] is True and edited["expected_state"] == {"refund": "issued"}
    assert events[first][2].task_sha256
    assert [(e.kind, e.reason) for e in events[second]] == [
        ("claim", ""), ("reject", "not a real failure")]


async def test_flywheel_review_acts_as_the_key(
    drafted: tuple[Store, list[str]], api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``flywheel review --api-key KEY`` (no ``--reviewer``): the app is the key's reviewer."""
    from click.testing import CliRunner
    from textual.app import App

    from flywheel.cli import cli
    from tests._auth import new_key

    store, _ = drafted
    key = new_key(store, "read", "review", name="dana")
    started: list[App] = []
    monkeypatch.setattr(App, "run", lambda self, *a, **kw: started.append(self))
    r = CliRunner().invoke(cli, ["review", "--url", api, "--api-key", key])
    assert r.exit_code == 0, r.output
    [app] = started
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("n")  # claim next
        await settle(pilot)
        assert isinstance(app.screen, TraceScreen)
        assert "claimed by dana" in text(pilot, "#head")
        cid = app.screen.candidate_id
    assert [(e.kind, e.reviewer) for e in read_events(store)[cid]] == [("claim", "dana")]
