"""The redacted trace beside its entity report (types, paths; never values); add rules, re-run."""

from __future__ import annotations

from typing import Any

from flywheel.tui._client import ApiError
from flywheel.tui._view import parse_rule, pretty, report_rows, rules_body
from flywheel.tui.screens._base import ReviewScreen
from flywheel.tui.widgets import Banner
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, Input, Static


class RedactionScreen(ReviewScreen):
    """What was redacted where; rules typed here go with a re-run request."""

    CSS_PATH = "redaction.tcss"
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("ctrl+r", "rerun", "Re-run redaction"),
        # q and ? type into the rule field: Ctrl+Q quits, F1 helps
        Binding("ctrl+q", "app.quit", "Quit", key_display="^q"),
        Binding("f1", "app.help", "Help"),
    ]

    def __init__(self, candidate_id: str, detail: dict[str, Any], version: int) -> None:
        super().__init__()
        self.candidate_id = candidate_id
        self.detail = detail
        self.version = version
        self.rules: list[tuple[str, str, str]] = []

    def compose(self) -> ComposeResult:
        """Lay out the screen."""
        yield Static(self._head(), id="head")
        yield Banner(id="banner")
        with Horizontal(id="panes"):
            with VerticalScroll(id="steps"):
                yield Static(self._steps_text(), id="steps-text")
            yield DataTable(id="report", cursor_type="row", zebra_stripes=True)
        yield Static("rules: none", id="rules")
        yield Input(placeholder="key:JSON_KEY=LABEL  or  deny:LABEL=exact text", id="rule")
        yield Footer()

    def on_mount(self) -> None:
        """Fill in and start loading."""
        table = self.query_one(DataTable)
        table.add_columns("#", "field", "path", "entity", "rule")
        for row in report_rows(self.detail.get("redaction_report") or {}):
            table.add_row(*row)
        box = self.query_one("#rule", Input)
        box.cursor_blink = False  # a steady cursor: the screen renders the same under load
        box.focus()

    def _head(self) -> Text:
        report = self.detail.get("redaction_report") or {}
        counts = ", ".join(f"{k} {v}" for k, v in (report.get("counts") or {}).items()) or "none"
        return Text(f"redaction of {self.candidate_id}: {report.get('total', 0)} replaced"
                    f" ({counts})")

    def _steps_text(self) -> Text:
        out = Text()
        for i, s in enumerate(self.detail.get("redacted_steps", [])):
            head = f"#{i} {'TOOL ' + s['tool_name'] if s.get('tool_name') else 'step'}\n"
            out.append(head, style="bold")
            for key in ("arguments", "result", "input_text", "output_text"):
                if s.get(key):
                    out.append(f" {key}: ", style="underline")
                    out.append(pretty(s[key], 600) + "\n")
        return out

    @on(Input.Submitted, "#rule")
    def _add_rule(self, event: Input.Submitted) -> None:
        try:
            rule = parse_rule(event.value)
        except ValueError as exc:
            self.query_one(Banner).show(str(exc), "error")
            return
        self.rules.append(rule)
        event.input.value = ""
        self.query_one(Banner).clear()
        shown = "; ".join(f"{k}:{a}={b}" for k, a, b in self.rules)
        self.query_one("#rules", Static).update(Text(f"rules: {shown}  (Ctrl+R to re-run)"))

    def action_rerun(self) -> None:
        """Send the rules and re-run redaction of this candidate."""
        if not self.rules:
            self.query_one(Banner).show("add a rule first (key:... or deny:...)", "error")
            return
        self.rerun()

    @work(exclusive=True, group="redact")
    async def rerun(self) -> None:
        """POST the rules; the server re-redacts from the raw trace it alone reads."""
        client = self.client
        try:
            await client.redact(self.candidate_id, self.version, rules_body(self.rules))
        except ApiError as exc:
            if exc.missing_route:
                msg = ("this server has no re-run route (POST /api/promote/candidates/{id}/redact);"
                       " rules kept here, nothing changed")
                self.query_one(Banner).show(msg, "error")
            else:
                self.query_one(Banner).show(exc.message, "conflict" if exc.conflict else "error")
            return
        self.detail = await client.candidate(self.candidate_id)
        self.version = int(self.detail["review"]["version"])
        self.rules.clear()
        self.query_one("#rules", Static).update(
            Text("rules: none new (the server keeps the ones sent for this candidate)"))
        self.query_one("#head", Static).update(self._head())
        self.query_one("#steps-text", Static).update(self._steps_text())
        table = self.query_one(DataTable)
        table.clear()
        for row in report_rows(self.detail.get("redaction_report") or {}):
            table.add_row(*row)
        self.query_one(Banner).show("redaction re-run; report updated")

    def action_back(self) -> None:
        """Back to the candidate."""
        self.app.pop_screen()
