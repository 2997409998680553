"""A candidate: its span tree as agent steps, arguments with provenance badges; decisions.

Texts shown are the candidate's *redacted* steps; the trace route gives only
the tree's structure. An argument whose value came from an untrusted source
is marked ``!`` and ``[untrusted ...]`` (and drawn in reverse video).
"""

from __future__ import annotations

from typing import Any

from flywheel.tui._client import ApiError, StepRow
from flywheel.tui._view import (
    KIND_MARK,
    argument_lines,
    conversation,
    pretty,
    reasons_text,
    step_path,
)
from flywheel.tui.screens._base import ReviewScreen
from flywheel.tui.widgets import Banner, StepTree
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static, Tree


class TraceScreen(ReviewScreen):
    """Inspect one candidate and decide on it."""

    CSS_PATH = "trace.tcss"
    BINDINGS = [
        Binding("escape", "back", "Queue", show=False),
        Binding("a", "decide('approve')", "Approve"),
        Binding("x", "decide('reject')", "Reject"),
        Binding("i", "decide('needs-info')", "Info"),
        Binding("s", "skip", "Skip"),
        Binding("e", "edit", "Edit"),
        Binding("r", "redaction", "Redact"),
        Binding("c", "claim", "Claim", show=False),
        Binding("o", "reopen", "Reopen", show=False),
        Binding("l", "reload", "Reload", show=False),
    ]

    def __init__(self, candidate_id: str) -> None:
        super().__init__()
        self.candidate_id = candidate_id
        self.detail: dict[str, Any] = {}
        self.steps: list[StepRow] = []
        self.redacted: dict[str, dict[str, Any]] = {}
        self.provenance: list[dict[str, Any]] = []
        self._stale = False

    @property
    def version(self) -> int:
        """The review version this reviewer saw (sent with every write)."""
        return int((self.detail.get("review") or {}).get("version", 0))

    @property
    def review(self) -> dict[str, Any]:
        """The folded review state."""
        return dict(self.detail.get("review") or {})

    def compose(self) -> ComposeResult:
        """Lay out the screen."""
        yield Static(id="head")
        yield Banner(id="banner")
        yield Static(id="path")
        yield StepTree("trace", id="tree")
        with VerticalScroll(id="detail"):
            yield Static(id="step")
        yield Static(id="history")
        yield Footer()

    def on_mount(self) -> None:
        """Fill in and start loading."""
        self.query_one(StepTree).show_root = False
        self.load()

    def on_screen_resume(self) -> None:
        """Back from the editor or the redaction view: reload (their writes moved the version)."""
        if self._stale:
            self._stale = False
            self.load()

    @work(exclusive=True, group="cand-load")
    async def load(self) -> None:
        """Candidate detail, then the trace structure (and provenance if not bundled)."""
        client = self.client
        try:
            self.detail = await client.candidate(self.candidate_id)
        except ApiError as exc:
            self.query_one(Banner).show(exc.message, "error")
            return
        cand = self.detail["candidate"]
        self.redacted = {s["span_id"]: s for s in self.detail.get("redacted_steps", [])}
        self.provenance = list(self.detail.get("provenance") or [])
        try:
            self.steps = await client.trace_steps(cand["trace_id"])
            if not self.provenance:
                self.provenance = await client.provenance(cand["trace_id"])
        except ApiError as exc:
            self.steps = [_from_redacted(s) for s in self.detail.get("redacted_steps", [])]
            self.notify(f"trace structure unavailable ({exc.message}); showing redacted steps")
        if self.is_attached:
            self._show()

    def _show(self) -> None:
        cand, rv, task = self.detail["candidate"], self.review, self.detail.get("task") or {}
        holder = rv.get("claimed_by") or rv.get("decided_by") or "-"
        me = self.reviewer
        mode = "" if rv.get("status") == "claimed" and rv.get("claimed_by") == me else " READ-ONLY"
        self.query_one("#head", Static).update(Text(
            f"{self.candidate_id}  {task.get('task_id', '')}  [{cand['source']}/{cand['slice']}]"
            f"\nreview v{rv.get('version', 0)} {rv.get('status')} by {holder}{mode}"
            f"\n{reasons_text(cand.get('reasons', []))}"
        ))
        tree = self.query_one(StepTree)
        first = tree.show_steps(self.steps, self.provenance)
        events = rv.get("events") or []
        hist = "  ".join(
            f"{e['seq']}:{e['kind']}/{e['reviewer']}"
            + (f"({e['reason'][:20]})" if e["reason"] else "")
            for e in events[-6:]
        )
        self.query_one("#history", Static).update(Text(f"events: {hist or 'none yet'}"))
        self._show_step(first)
        tree.focus()

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        if event.node.data:
            self._show_step(event.node.data)

    def _show_step(self, span_id: str) -> None:
        self.query_one("#path", Static).update(Text(step_path(self.steps, span_id)))
        step = next((s for s in self.steps if s.span_id == span_id), None)
        red = self.redacted.get(span_id, {})
        out = Text()
        if step is not None:
            out.append(
                f"{KIND_MARK.get(step.kind, 'SPAN')} {step.tool_name or step.name}  "
                f"{step.duration_ms:.0f}ms  in {step.input_tokens} out {step.output_tokens} tok  "
                f"status {'x ERROR' if step.has_error else step.status}\n",
                style="bold",
            )
        if red.get("arguments") is not None or (step and step.kind == "tool"):
            out.append("arguments (! = untrusted source):\n")
            recs = [p for p in self.provenance if p.get("span_id") == span_id]
            for line, bad in argument_lines(red.get("arguments"), recs):
                out.append(line + "\n", style="bold reverse" if bad else "")
        texts = (("result", "result"), ("input_text", "input"), ("output_text", "output"))
        for key, label in texts:
            if red.get(key):
                out.append(f"{label}:\n", style="underline")
                shown = pretty(red[key], 1500) if key == "result" else conversation(
                    red[key], "user" if key == "input_text" else "assistant", 1500)
                out.append(shown + "\n")
        for name, text in (red.get("texts") or {}).items():
            out.append(f"x {name}: {text}\n", style="bold")
        self.query_one("#step", Static).update(out)

    # -- decisions -----------------------------------------------------------

    def action_back(self) -> None:
        """Back to the queue (the claim is kept)."""
        self.app.pop_screen()

    def action_reload(self) -> None:
        """Fetch again."""
        self.load()

    def action_decide(self, decision: str) -> None:
        """Approve after one confirmation; reject and needs-info ask for a reason first."""
        if decision == "approve":
            from flywheel.tui.screens.confirm import ConfirmScreen

            def confirmed(yes: bool | None) -> None:
                if yes:
                    self.write("decide", decision=decision)

            task = (self.detail.get("task") or {}).get("task_id", "")
            self.app.push_screen(
                ConfirmScreen(f"approve {self.candidate_id} {task} as shown?"), confirmed)
            return
        from flywheel.tui.screens.reason import ReasonScreen

        def done(reason: str | None) -> None:
            if reason:
                self.write("decide", decision=decision, reason=reason)

        self.app.push_screen(ReasonScreen(decision), done)

    def action_skip(self) -> None:
        """Give the candidate back to the queue (an unclaim event) and return to it."""
        self.write("unclaim", reason="skipped")

    def action_claim(self) -> None:
        """Claim (when opened read-only)."""
        self.write("claim")

    def action_reopen(self) -> None:
        """Reopen a decided candidate (approved, rejected or needs-info); stay on it."""
        if self.review.get("status") not in ("approved", "rejected", "needs-info"):
            self.query_one(Banner).show(
                f"{self.candidate_id} is {self.review.get('status', 'open')}; only a decided"
                " candidate can be reopened", "error")
            return
        self.write("reopen", reason="reopened in the review app")

    def action_edit(self) -> None:
        """Open the task editor."""
        from flywheel.tui.screens.editor import EditorScreen

        if self.detail.get("task"):
            self._stale = True
            self.app.push_screen(EditorScreen(self.candidate_id, self.detail["task"], self.version))

    def action_redaction(self) -> None:
        """Open the redaction view."""
        from flywheel.tui.screens.redaction import RedactionScreen

        if self.detail:
            self._stale = True
            self.app.push_screen(RedactionScreen(self.candidate_id, self.detail, self.version))

    @work(exclusive=True, group="cand-write")
    async def write(self, kind: str, **kw: Any) -> None:
        """One attributed write at the version seen; a 409 is shown and the state reloaded."""
        client = self.client
        banner = self.query_one(Banner)
        try:
            if kind == "decide":
                state = await client.decide(self.candidate_id, self.version, **kw)
            elif kind == "unclaim":
                state = await client.unclaim(self.candidate_id, self.version, **kw)
            elif kind == "reopen":
                state = await client.reopen(self.candidate_id, self.version, **kw)
            else:
                state = await client.claim(self.candidate_id, self.version)
        except ApiError as exc:
            banner.show(exc.message, "conflict" if exc.conflict else "error")
            if exc.conflict:
                self.load()
            return
        banner.clear()
        if kind == "claim":
            self.load()
            return
        if kind == "reopen":
            banner.show(f"reopened (review v{state['version']}); press c to claim it")
            self.load()
            return
        self.notify(f"{self.candidate_id}: {state['status']} (review v{state['version']})")
        self.app.pop_screen()


def _from_redacted(s: dict[str, Any]) -> StepRow:
    return StepRow(s["span_id"], "", 0, s.get("tool_name") or "step",
                   "tool" if s.get("tool_name") else "other", s.get("tool_name") or "",
                   0.0, 0, 0, "unset", "error" in (s.get("texts") or {}))
