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

    assert snap_compare(demo_app(store), terminal_size=(80, 24), run_before=run_before)
