"""tui: ``flywheel review``, the Textual reviewer app (a client of the review API)."""

from flywheel._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "tui._client": ["DEFAULT_URL", "ApiError", "ReviewClient", "StepRow"],
        "tui._factory": ["make_app"],
        "tui.app": ["ReviewApp"],
    },
)
