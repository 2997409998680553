"""The main screens at 80x24 (SVG snapshots; `--snapshot-update` after a deliberate change)."""

from __future__ import annotations

import pytest

from flywheel import Store

from ._fixture import SCREENS, demo_app, goto


@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen(screen: str, drafted: tuple[Store, list[str]], snap_compare) -> None:  # type: ignore[no-untyped-def]
    store, _ = drafted

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await goto(pilot, screen)
        # a blinking cursor is drawn or not depending on timing: freeze it
        from textual.widgets import Input, TextArea

        for widget in pilot.app.screen.query(Input):
            widget.cursor_blink = False
        for area in pilot.app.screen.query(TextArea):
            area.cursor_blink = False
        await pilot.pause()

    assert snap_compare(demo_app(store), terminal_size=(80, 24), run_before=run_before)
