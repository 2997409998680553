"""A one-line message bar: conflicts and errors stay visible until the next action."""

from __future__ import annotations

from textual.widgets import Static


class Banner(Static):
    """Shows ``CONFLICT: ...`` / ``ERROR: ...`` / ``ok: ...``; the prefix carries the meaning."""

    DEFAULT_CSS = """
    Banner { height: auto; max-height: 3; padding: 0 1; display: none; }
    Banner.-conflict { background: $error; color: $text; text-style: bold; }
    Banner.-error { background: $warning 40%; text-style: bold; }
    Banner.-info { background: $success 30%; }
    """

    def show(self, message: str, kind: str = "info") -> None:
        """Show ``message``; ``kind`` is conflict, error or info."""
        prefix = {"conflict": "CONFLICT: ", "error": "ERROR: ", "info": ""}[kind]
        self.remove_class("-conflict", "-error", "-info")
        self.add_class(f"-{kind}")
        self.update(prefix + message)
        self.display = True

    def clear(self) -> None:
        """Hide the bar."""
        self.update("")
        self.display = False
