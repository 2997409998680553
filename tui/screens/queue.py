"""The queue: candidates with source, outcome, flags, cluster size, slice, age; claim next."""

from __future__ import annotations

from typing import Any

from flywheel.tui._client import ApiError
from flywheel.tui._view import (
    QUEUE_COLUMNS,
    SORTS,
    next_open,
    progress_line,
    queue_cells,
    sort_rows,
)
from flywheel.tui.screens._base import ReviewScreen
from flywheel.tui.widgets import Banner
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Input, Static

STATUS_FILTERS = (None, "open", "claimed", "needs-info", "approved", "rejected")
SOURCE_FILTERS = (None, "failure", "success", "explicit")


class QueueScreen(ReviewScreen):
    """The review queue of every reviewer, with this reviewer's progress on top."""

    CSS_PATH = "queue.tcss"
    BINDINGS = [
        Binding("n", "claim_next", "Next"),
        Binding("enter", "open", "Open"),
        Binding("t", "cycle_status", "Status"),
        Binding("s", "cycle_source", "Source"),
        Binding("slash", "filter", "Filter", key_display="/"),
        Binding("o", "cycle_sort", "Sort"),
        Binding("m", "mine", "Mine"),
        Binding("l", "reload", "Reload", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, Any]] = []
        self.status: str | None = None
        self.source: str | None = None
        self.text = ""
        self.sort = SORTS[0]
        self.mine = False

    def compose(self) -> ComposeResult:
        """Lay out the screen."""
        yield Static(id="title")
        yield Static(id="progress")
        yield Static(id="filters")
        yield Banner(id="banner")
        yield DataTable(id="queue", cursor_type="row", zebra_stripes=True)
        yield Input(placeholder="slice or reason text, Enter to apply, Esc to cancel", id="filter")
        yield Footer()

    def on_mount(self) -> None:
        """Fill in and start loading."""
        table = self.query_one(DataTable)
        for key, label in QUEUE_COLUMNS:
            table.add_column(label, key=key)
        self.query_one("#filter").display = False
        self.query_one("#title", Static).update(
            f"flywheel review - {self.reviewer} @ {self.client.url}"
        )
        self.load()

    def on_screen_resume(self) -> None:
        """Back from a candidate: its state may have changed."""
        self.load()

    # -- loading -------------------------------------------------------------

    def _filters(self) -> dict[str, Any]:
        f: dict[str, Any] = {"status": self.status, "source": self.source}
        if self.mine:
            f["reviewer"] = self.reviewer
        return f

    @work(exclusive=True, group="queue-load")
    async def load(self) -> None:
        """Fetch the queue and the per-reviewer progress."""
        client = self.client
        try:
            rows = await client.queue(**self._filters())
            progress = await client.reviewers()
            everyone = rows if not any(self._filters().values()) else await client.queue()
        except ApiError as exc:
            self.query_one(Banner).show(exc.message, "error")
            return
        if self.text:
            t = self.text.lower()
            rows = [
                r for r in rows
                if t in str(r.get("slice", "")).lower()
                or any(t in x.lower() for x in r.get("reasons", []))
                or t in str(r.get("task_id", "")).lower()
            ]
        self.rows = [dict(r) for r in sort_rows(rows, self.sort)]
        me = self.reviewer
        self.query_one("#progress", Static).update(progress_line(progress, everyone, me))
        self._show_filters()
        self._fill()

    def _show_filters(self) -> None:
        parts = [
            f"status={self.status or 'all'}",
            f"source={self.source or 'all'}",
            f"sort={self.sort}",
        ]
        if self.text:
            parts.append(f"text={self.text!r}")
        if self.mine:
            parts.append("mine")
        flags = "flags: P provenance S side-effect F feedback G golden E edited !n flagged args"
        self.query_one("#filters", Static).update(
            f"{len(self.rows)} shown  " + " ".join(parts) + "\n" + flags
        )

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        keep = table.cursor_row
        table.clear()
        me, now = self.reviewer, self.now()
        for r in self.rows:
            table.add_row(*queue_cells(r, me, now), key=r["candidate_id"])
        if self.rows:
            table.move_cursor(row=min(keep, len(self.rows) - 1))

    # -- actions -------------------------------------------------------------

    def _selected(self) -> dict[str, Any] | None:
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row < 0:
            return None
        return self.rows[min(table.cursor_row, len(self.rows) - 1)]

    def action_open(self) -> None:
        """Open the selected candidate: claim it when it is free."""
        row = self._selected()
        if row is not None:
            self.open_row(row)

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_claim_next(self) -> None:
        """Claim the first candidate that is free (or already mine)."""
        row = next_open(self.rows, self.reviewer)
        if row is None:
            self.query_one(Banner).show("nothing open in this view; change the filters (t, s, /)")
            return
        self.open_row(row)

    @work(exclusive=True, group="queue-write")
    async def open_row(self, row: dict[str, Any]) -> None:
        """Claim (when free) and show the candidate; a conflict is shown, never retried."""
        from flywheel.tui.screens.trace import TraceScreen

        rv = row.get("review") or {}
        me = self.reviewer
        if rv.get("status") in ("open", "needs-info"):
            try:
                await self.client.claim(row["candidate_id"], int(rv.get("version", 0)))
            except ApiError as exc:
                self.query_one(Banner).show(exc.message, "conflict" if exc.conflict else "error")
                self.load()
                return
        elif rv.get("status") == "claimed" and rv.get("claimed_by") != me:
            self.notify(f"claimed by {rv.get('claimed_by')}: opened read-only")
        self.query_one(Banner).clear()
        self.app.push_screen(TraceScreen(row["candidate_id"]))

    def action_cycle_status(self) -> None:
        """Next status filter."""
        self.status = STATUS_FILTERS[(STATUS_FILTERS.index(self.status) + 1) % len(STATUS_FILTERS)]
        self.load()

    def action_cycle_source(self) -> None:
        """Next source filter."""
        self.source = SOURCE_FILTERS[(SOURCE_FILTERS.index(self.source) + 1) % len(SOURCE_FILTERS)]
        self.load()

    def action_cycle_sort(self) -> None:
        """Next sort order."""
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self.load()

    def action_mine(self) -> None:
        """Only candidates claimed or decided by me."""
        self.mine = not self.mine
        self.load()

    def action_reload(self) -> None:
        """Fetch again."""
        self.load()

    def action_filter(self) -> None:
        """Type a slice / reason / task text filter."""
        box = self.query_one("#filter", Input)
        box.display = True
        box.value = self.text
        box.focus()

    @on(Input.Submitted, "#filter")
    def _apply_filter(self, event: Input.Submitted) -> None:
        self.text = event.value.strip()
        event.input.display = False
        self.query_one(DataTable).focus()
        self.load()

    def key_escape(self) -> None:
        """Close the filter box."""
        box = self.query_one("#filter", Input)
        if box.display:
            box.display = False
            self.query_one(DataTable).focus()
