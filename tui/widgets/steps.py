"""The span tree as agent steps (structure from the trace, untrusted counts from provenance)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flywheel.tui._client import StepRow
from flywheel.tui._view import step_label, untrusted
from rich.text import Text
from textual.widgets import Tree


class StepTree(Tree[str]):
    """One node per span, nested as in the trace; node data is the span id."""

    DEFAULT_CSS = """
    StepTree { height: 1fr; }
    """

    def show_steps(self, steps: Sequence[StepRow], provenance: Sequence[Mapping[str, Any]]) -> str:
        """Rebuild the tree; highlight the first untrusted-argument step, else the first tool.

        Returns:
            The highlighted span id ('' for an empty trace, shown as one explanatory node).
        """
        bad: dict[str, int] = {}
        for rec in provenance:
            if untrusted(rec):
                bad[rec["span_id"]] = bad.get(rec["span_id"], 0) + 1
        self.clear()
        self.root.expand()
        nodes: dict[str, Any] = {}
        parents = {s.parent_span_id for s in steps}
        for s in steps:
            parent = nodes.get(s.parent_span_id, self.root)
            label = Text(step_label(s, bad.get(s.span_id, 0)))
            if bad.get(s.span_id):
                label.stylize("bold reverse")
            if s.span_id in parents:
                node = parent.add(label, data=s.span_id, expand=True)
            else:
                node = parent.add_leaf(label, data=s.span_id)
            nodes[s.span_id] = node
        if not steps:
            self.root.add_leaf("(no spans stored for this trace)")
            return ""
        first = next((s.span_id for s in steps if bad.get(s.span_id)), None)
        first = first or next((s.span_id for s in steps if s.kind == "tool"), steps[0].span_id)
        self.call_after_refresh(self.move_cursor, nodes[first])
        return first
