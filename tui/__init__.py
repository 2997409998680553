"""tui: ``flywheel review``, the Textual reviewer app (a client of the review API)."""

from flywheel._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "flywheel.tui._client": ["DEFAULT_URL", "ApiError", "ReviewClient", "StepRow"],
        "flywheel.tui._factory": ["make_app"],
        "flywheel.tui.app": ["ReviewApp"],
    },
)
