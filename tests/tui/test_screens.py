"""Screens over the in-process API (no socket): editor errors, redaction rules, filters, skip."""

from __future__ import annotations

import json

import pytest
from flywheel.promote import read_events
from flywheel.tui.screens.editor import EditorScreen
from flywheel.tui.screens.help import HelpScreen
from flywheel.tui.screens.queue import QueueScreen
from flywheel.tui.screens.redaction import RedactionScreen
from flywheel.tui.screens.trace import TraceScreen
from flywheel.tui.widgets import Banner
from textual.widgets import DataTable, Input, Static, TextArea

from flywheel import Store

from ._fixture import demo_app, goto, settle

pytestmark = pytest.mark.anyio


async def test_editor_shows_errors_inline_and_saves_nothing_invalid(
    drafted: tuple[Store, list[str]],
) -> None:
    store, _ = drafted
    app = demo_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await goto(pilot, "editor")
        screen = app.screen
        assert isinstance(screen, EditorScreen)
        cid = screen.candidate_id
        screen.query_one("#budgets", Input).value = "{not json"
        await pilot.press("ctrl+s")
        await settle(pilot)
        err = screen.query_one("#err-budgets", Static)
        assert err.display and str(err.render()).startswith("! not JSON")
        screen.query_one("#budgets", Input).value = "{}"
        criteria = json.loads(screen.query_one("#criteria", TextArea).text)
        for c in criteria:
            c["role"] = "diagnostic"
        screen.query_one("#criteria", TextArea).text = json.dumps(criteria)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not screen.query_one("#err-budgets", Static).display
        assert "no mandatory criterion" in str(screen.query_one("#err-criteria", Static).render())
        assert "need a fix" in str(screen.query_one(Banner).render())
        assert isinstance(app.screen, EditorScreen)
    assert [e.kind for e in read_events(store, candidate_ids=[cid])[cid]] == ["claim"]


async def test_redaction_view_lists_types_and_paths_never_values(
    drafted: tuple[Store, list[str]],
) -> None:
    store, _ = drafted
    app = demo_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await goto(pilot, "redaction")
        screen = app.screen
        assert isinstance(screen, RedactionScreen)
        table = screen.query_one(DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        assert ["3", "arguments", "$.iban", "IBAN", "key x1"] in [list(r) for r in rows]
        shown = str(screen.query_one("#steps-text", Static).render())
        assert "<IBAN_1>" in shown and "DE89370400440532013000" not in shown
        await pilot.press(*"bogus", "enter")
        assert "cannot read" in str(screen.query_one(Banner).render())
        screen.query_one("#rule", Input).value = "deny:NAME=Lee"
        await pilot.press("enter")
        assert "deny:NAME=Lee" in str(screen.query_one("#rules", Static).render())
        before = dict(screen.detail["redaction_report"]["counts"])
        assert "NAME" not in before
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert "report updated" in str(screen.query_one(Banner).render())
        after = screen.detail["redaction_report"]["counts"]
        assert after["NAME"] >= 1 and after != before  # the new entity appears in the report
        rows = [list(table.get_row_at(i)) for i in range(table.row_count)]
        assert any(r[3] == "NAME" and r[4].startswith("deny") for r in rows)
        shown = str(screen.query_one("#steps-text", Static).render())
        assert "<NAME_1>" in shown and "Lee " not in shown
        assert screen.version == 2  # the redact event moved the review version
        assert "server keeps" in str(screen.query_one("#rules", Static).render())
        cid = screen.candidate_id
    events = read_events(store, candidate_ids=[cid])[cid]
    assert [(e.kind, e.reviewer) for e in events] == [("claim", "alice"), ("redact", "alice")]
    assert events[-1].reason == "redaction re-run: deny NAME x1"
    assert "Lee " not in json.loads(events[-1].body)["prompt"]


async def test_reopen_a_decided_candidate(drafted: tuple[Store, list[str]]) -> None:
    store, _ = drafted
    app = demo_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, TraceScreen)
        cid = app.screen.candidate_id
        await pilot.press("o")  # claimed, not decided: nothing to reopen
        await settle(pilot)
        assert "only a decided" in str(app.screen.query_one(Banner).render())
        await pilot.press("x", *"wrong trace", "enter")
        await settle(pilot)
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        table = queue.query_one(DataTable)
        assert table.get_row_at(0)[0] == "rejected"
        await pilot.press("enter")  # a decided candidate opens read-only
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TraceScreen) and screen.candidate_id == cid
        assert "READ-ONLY" in str(screen.query_one("#head", Static).render())
        await pilot.press("o")
        await settle(pilot)
        assert "reopened (review v3)" in str(screen.query_one(Banner).render())
        assert screen.review["status"] == "open"
        await pilot.press("c")  # and it can be claimed again
        await settle(pilot)
        assert screen.review["status"] == "claimed"
    events = read_events(store, candidate_ids=[cid])[cid]
    assert [(e.kind, e.reviewer) for e in events] == [
        ("claim", "alice"), ("reject", "alice"), ("reopen", "alice"), ("claim", "alice")]


async def test_queue_filters_help_and_skip(drafted: tuple[Store, list[str]]) -> None:
    store, _ = drafted
    app = demo_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, QueueScreen)
        await pilot.press("s")  # source = failure
        await settle(pilot)
        assert screen.query_one(DataTable).row_count == 1
        await pilot.press("s", "slash", *"addr", "enter")  # source = success, text "addr"
        await settle(pilot)
        table = screen.query_one(DataTable)
        assert table.row_count == 1 and table.get_row_at(0)[5] == "address"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, TraceScreen)
        cid = app.screen.candidate_id
        await pilot.press("s")  # skip: give it back
        await settle(pilot)
        assert app.screen is screen
        assert table.get_row_at(0)[0] == "open"
    assert [e.kind for e in read_events(store, candidate_ids=[cid])[cid]] == ["claim", "unclaim"]


async def test_api_key_and_an_unreachable_server(drafted: tuple[Store, list[str]]) -> None:
    import httpx
    from flywheel.tui import make_app

    from flywheel import Settings, create_app, create_key

    store, _ = drafted
    key = create_key(store, "default", ["read", "review"], name="alice")
    api = create_app(Settings(), store)
    for api_key, rows in ((key, 3), (None, 0)):
        app = make_app("http://t", reviewer="alice", api_key=api_key,
                       transport=httpx.ASGITransport(app=api))
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert app.screen.query_one(DataTable).row_count == rows
            if not rows:
                assert str(app.screen.query_one(Banner).render()).startswith("ERROR:")
    app = make_app("http://127.0.0.1:9", reviewer="alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "did not answer" in str(app.screen.query_one(Banner).render())
