"""The reviewer app: a client of the review API, one screen per job.

The app holds the API client and the reviewer's name; screens do their I/O
in ``@work(exclusive=True)`` workers so the terminal never blocks on the
network. ``?`` opens the help screen everywhere; ``q`` (or Ctrl+Q) quits,
asking first when the task editor holds unsaved edits.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from flywheel.tui._client import ReviewClient
from flywheel.tui.screens.help import HelpScreen
from flywheel.tui.screens.queue import QueueScreen
from textual.app import App
from textual.binding import Binding


class ReviewApp(App[None]):
    """``flywheel review``: work the promotion queue from a terminal."""

    TITLE = "flywheel review"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("f1", "help", "Help", show=False),
        Binding("ctrl+q", "quit", "Quit", show=False),
    ]

    def __init__(self, client: ReviewClient, *, clock: Callable[[], int] = time.time_ns) -> None:
        super().__init__()
        self.client = client
        self.clock = clock

    @property
    def reviewer(self) -> str:
        """Who acts: attributed on every review event."""
        return self.client.reviewer

    def on_mount(self) -> None:
        """Open on the queue."""
        self.sub_title = f"{self.reviewer} @ {self.client.url}"
        self.push_screen(QueueScreen())

    async def on_unmount(self) -> None:
        """Close the HTTP client."""
        await self.client.aclose()

    async def action_quit(self) -> None:
        """Leave the app; with an unsaved task edit, only after a confirmation."""
        if not getattr(self.screen, "unsaved", False):
            self.exit()
            return
        from flywheel.tui.screens.confirm import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(ConfirmScreen("quit and lose the unsaved task edits?"), answered)

    def action_help(self) -> None:
        """Show the keys (once)."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
