"""What every full screen reads from the app: the API client, the reviewer, the clock."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from flywheel.tui._client import ReviewClient
from textual.screen import Screen

if TYPE_CHECKING:
    from flywheel.tui.app import ReviewApp


class ReviewScreen(Screen[None]):
    """A screen of the reviewer app (typed access to the app's client)."""

    @property
    def review_app(self) -> ReviewApp:
        """The app, typed."""
        return cast("ReviewApp", self.app)

    @property
    def client(self) -> ReviewClient:
        """The API client (all I/O goes through it, in workers)."""
        return self.review_app.client

    @property
    def reviewer(self) -> str:
        """Who acts."""
        return self.review_app.reviewer

    def now(self) -> int:
        """The app's clock (ns)."""
        return self.review_app.clock()
