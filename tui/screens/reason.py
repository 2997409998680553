"""A prompt for the reason a reject or needs-info decision must carry."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static


class ReasonScreen(ModalScreen[str | None]):
    """Returns the reason typed (Enter), or None (Esc)."""

    CSS_PATH = "reason.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, decision: str) -> None:
        super().__init__()
        self.decision = decision

    def compose(self) -> ComposeResult:
        """Lay out the screen."""
        with Vertical(id="box"):
            yield Label(f"{self.decision}: why? (Enter to send, Esc to cancel)")
            yield Input(placeholder="the reason is stored on the review event", id="reason")
            yield Static(id="error")

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        reason = event.value.strip()
        if not reason:
            self.query_one("#error", Static).update(f"! {self.decision} needs a reason")
            return
        self.dismiss(reason)

    def action_cancel(self) -> None:
        """Dismiss without a decision."""
        self.dismiss(None)
