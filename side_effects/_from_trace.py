"""Tool calls and observations of a stored trace, for reconciliation and movement checks.

A diff explains itself only against what the agent did. Traces in the store
already hold both: the tool calls (``agent_steps``) and, per argument, where
its value came from (``argument_provenance``), so a diff can name a trace
instead of hand-written ``--calls`` / ``--observations`` files.
"""

from __future__ import annotations

import json
from typing import Any

from flywheel.ingest import load_steps, read_provenance

from flywheel import Store

from ._provenance import Observation, observations_from_provenance
from ._reconcile import ToolCall


def _arguments(text: str) -> dict[str, Any]:
    """A tool span's arguments as a dict (a non-object or broken JSON counts as none)."""
    try:
        args = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}
    return args if isinstance(args, dict) else {}


def calls_from_trace(
    store: Store, trace_id: str, *, project: str = "default"
) -> tuple[list[ToolCall], list[Observation]]:
    """The trace's tool calls in order and the observations its provenance implies.

    Raises:
        NotFoundError: if the trace is not in ``project``.
    """
    steps = [s for s in load_steps(store, trace_id, project) if s["kind"] == "tool"]
    calls = [
        ToolCall(
            name=s["tool_name"],
            args=_arguments(s["arguments"]),
            span_id=s["span_id"],
            # a failed call explains no delta, so reconciliation needs each call's outcome
            status="error" if s["status"] == "error" else "ok",
            error=s["error"] or None,
        )
        for s in steps
    ]
    provenance = read_provenance(store, trace_id, project=project)
    return calls, observations_from_provenance(provenance, calls)
