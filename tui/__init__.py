"""tui: ``flywheel review``, the Textual reviewer app (a client of the review API)."""

from tui._client import DEFAULT_URL, ApiError, ReviewClient, StepRow
from tui._factory import make_app
from tui.app import ReviewApp

__all__ = ["DEFAULT_URL", "ApiError", "ReviewApp", "ReviewClient", "StepRow", "make_app"]
