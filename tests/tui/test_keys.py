"""Keys a new reviewer needs: q quits (asking when an edit is unsaved), a footer that fits
80 columns, approve asks once, flag reasons in full, the root of the tree always in view."""

from __future__ import annotations

import pytest
from flywheel.promote import read_events
from flywheel.tui.screens.confirm import ConfirmScreen
from flywheel.tui.screens.editor import EditorScreen
from flywheel.tui.screens.trace import TraceScreen
from textual.widgets import Input, Static
from textual.widgets._footer import FooterKey

from flywheel import Store

from ._fixture import SCREENS, demo_app, goto, settle

pytestmark = pytest.mark.anyio


#: Modal screens (help, the approve question) have no footer of their own.
@pytest.mark.parametrize("screen", [s for s in SCREENS if s not in ("help", "approve")])
async def test_footer_fits_80_columns_with_help_and_quit(
    screen: str, drafted: tuple[Store, list[str]]
) -> None:
    store, _ = drafted
    app = demo_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await goto(pilot, screen)
        keys = list(app.screen.query(FooterKey))
        assert keys and all(k.region.right <= 80 and k.region.width > 0 for k in keys), [
            (k.key_display, k.description, k.region) for k in keys]
        shown = {k.description for k in keys}
        assert {"Help", "Quit"} <= shown, shown


async def test_q_quits_from_the_queue(drafted: tuple[Store, list[str]]) -> None:
    store, _ = drafted
    app = demo_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0 and not app.is_running


async def test_quit_with_an_unsaved_edit_asks_first(drafted: tuple[Store, list[str]]) -> None:
    store, _ = drafted
    app = demo_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await goto(pilot, "editor")
        editor = app.screen
        assert isinstance(editor, EditorScreen) and not editor.unsaved
        editor.query_one("#slice", Input).focus()
        await pilot.press("q")  # typed into the field, not a quit
        await settle(pilot)
        assert app.is_running and editor.query_one("#slice", Input).value.endswith("q")
        assert editor.unsaved
        await pilot.press("ctrl+q")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is editor and app.is_running
        await pilot.press("ctrl+q")
        await settle(pilot)
        await pilot.press("y")
        await pilot.pause()
        assert not app.is_running


async def test_approve_asks_once(drafted: tuple[Store, list[str]]) -> None:
    store, _ = drafted
    app = demo_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        trace = app.screen
        assert isinstance(trace, TraceScreen)
        cid = trace.candidate_id
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen) and cid in app.screen.question
        await pilot.press("escape")  # no
        await settle(pilot)
        assert app.screen is trace
        assert [e.kind for e in read_events(store, candidate_ids=[cid])[cid]] == ["claim"]
        await pilot.press("a", "y")
        await settle(pilot)
        assert not isinstance(app.screen, (TraceScreen, ConfirmScreen))
    assert [e.kind for e in read_events(store, candidate_ids=[cid])[cid]] == ["claim", "approve"]


async def test_long_flag_reasons_read_in_full(drafted: tuple[Store, list[str]]) -> None:
    store, _ = drafted
    app = demo_app(store)
    reasons = [
        "provenance: send_money.iban came from the tool result of read_inbox (untrusted)",
        "side effect outside the declared scope: payments.transfers created",
        "user feedback: thumbs down with the comment 'it paid the wrong account'",
    ]
    async with app.run_test(size=(80, 24)) as pilot:
        await goto(pilot, "trace")
        trace = app.screen
        assert isinstance(trace, TraceScreen)
        trace.detail["candidate"]["reasons"] = reasons
        trace._show()
        await pilot.pause()
        head = trace.query_one("#head", Static)
        lines = [line.text for line in head.render_lines(head.region.reset_offset)]
        shown = " ".join(" ".join(lines).split())
        for reason in reasons:
            assert " ".join(reason.split()) in shown, (reason, lines)


async def test_the_root_stays_in_view(drafted: tuple[Store, list[str]]) -> None:
    store, _ = drafted
    app = demo_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await goto(pilot, "trace")
        trace = app.screen
        await pilot.press(*["down"] * 12)
        await settle(pilot)
        path = str(trace.query_one("#path", Static).render())
        assert path.startswith("AGENT invoke_agent"), path
        assert " > " in path
