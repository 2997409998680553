"""The task editor: expected state, tool path, scope, graders, slice, golden, split, budgets."""

from __future__ import annotations

from typing import Any

from flywheel.tui._client import ApiError
from flywheel.tui._task_form import FIELDS, build_task, form_values, validate
from flywheel.tui.screens._base import ReviewScreen
from flywheel.tui.widgets import Banner
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Input, Label, Select, Static, TextArea

_AREAS = ("expected_state", "criteria")


class EditorScreen(ReviewScreen):
    """Edit the candidate's task; Ctrl+S validates (same models as the API) and saves."""

    CSS_PATH = "editor.tcss"
    AUTO_FOCUS = "#slice"
    BINDINGS = [
        Binding("ctrl+s", "save", "Validate+save"),
        Binding("escape", "back", "Back"),
        # q and ? type into a field here: Ctrl+Q quits (asking first when edits are
        # unsaved), F1 helps
        Binding("ctrl+q", "app.quit", "Quit", key_display="^q"),
        Binding("f1", "app.help", "Help"),
    ]

    def __init__(self, candidate_id: str, task: dict[str, Any], version: int) -> None:
        super().__init__()
        self.candidate_id = candidate_id
        self.draft = task
        self.version = version

    def compose(self) -> ComposeResult:
        """Lay out the screen."""
        values = form_values(self.draft)
        yield Static(f"task {self.draft.get('task_id')}  (review v{self.version})", id="head",
                     markup=False)
        yield Banner(id="banner")
        todo = (self.draft.get("metadata") or {}).get("review_todo") or []
        with VerticalScroll(id="form"):
            if todo:
                yield Static("to check: " + "; ".join(todo), id="todo", markup=False)
            for key, label in FIELDS:
                yield Label(f"  {label}", classes="label", id=f"label-{key}")
                if key == "golden":
                    yield Select([("no", False), ("YES: must not break", True)],
                                 value=values[key], allow_blank=False, id=key, compact=True)
                elif key == "split":
                    yield Select([("dev", "dev"), ("held-out", "held-out")], value=values[key],
                                 allow_blank=False, id=key, compact=True)
                elif key in _AREAS:
                    yield TextArea(values[key], id=key, classes="area")
                else:
                    yield Input(values[key], id=key, compact=True)
                yield Static("", id=f"err-{key}", classes="err", markup=False)
            yield Static("", id="err-form", classes="err", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Start at the top of the form (focus on the first field)."""
        self.saved_values = self._values()
        self.call_after_refresh(self.query_one("#form", VerticalScroll).scroll_home, animate=False)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Mark the focused field's label with ``>`` (readable without colour)."""
        for key, label in FIELDS:
            mark = "> " if event.widget.id == key else "  "
            self.query_one(f"#label-{key}", Label).update(mark + label)

    def _values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, _ in FIELDS:
            w = self.query_one(f"#{key}")
            out[key] = w.text if isinstance(w, TextArea) else w.value  # type: ignore[attr-defined]
        return out

    @property
    def unsaved(self) -> bool:
        """True when a field differs from what the editor opened with (or last saved)."""
        return self._values() != getattr(self, "saved_values", self._values())

    def _show_errors(self, errors: dict[str, str]) -> None:
        for key, _ in (*FIELDS, ("form", "")):
            msg = errors.get(key, "")
            err = self.query_one(f"#err-{key}", Static)
            err.update(f"! {msg}" if msg else "")
            err.display = bool(msg)
        if errors:
            first = next(k for k, _ in (*FIELDS, ("form", "")) if k in errors)
            self.query_one(f"#err-{first}").scroll_visible()

    def action_save(self) -> None:
        """Validate locally with the API's models; save only a valid task."""
        task, errors = build_task(self.draft, self._values())
        errors = errors or validate(task, self.draft.get("task_id"))
        self._show_errors(errors)
        if errors:
            self.query_one(Banner).show(f"{len(errors)} field(s) need a fix (marked !)", "error")
            return
        self.save(task)

    @work(exclusive=True, group="edit")
    async def save(self, task: dict[str, Any]) -> None:
        """One edit event at the version seen."""
        try:
            state = await self.client.edit(self.candidate_id, self.version, task)
        except ApiError as exc:
            if exc.conflict:
                self.query_one(Banner).show(exc.message, "conflict")
            else:
                self._show_errors({"form": exc.message})
                self.query_one(Banner).show(exc.message, "error")
            return
        self.notify(f"task saved (review v{state['version']})")
        self.app.pop_screen()

    def action_back(self) -> None:
        """Leave without saving."""
        self.app.pop_screen()
