"""Response models of the trace read side: the API boundary the CLI and TUI read.

A trace is returned as a flat list of span nodes in tree order (depth-first,
children by start time) with ``depth``, ``parent_span_id`` and ``children``,
rather than nested objects: a 10,000-deep chain of spans would overflow any
recursive serialiser, and a flat list is what a tree view renders anyway.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

#: The step kinds the normaliser assigns (``agent_steps.kind``).
STEP_KINDS = (
    "llm",
    "tool",
    "agent",
    "retrieval",
    "memory_read",
    "memory_write",
    "guardrail",
    "other",
)


def _iso(ns: int) -> str:
    return dt.datetime.fromtimestamp(ns / 1e9, tz=dt.UTC).isoformat(timespec="milliseconds")


class TraceSummary(BaseModel):
    """One row of the trace list: what the whole trace did, in aggregate."""

    model_config = ConfigDict(frozen=True)

    trace_id: str = Field(description="Trace id, 32 lowercase hex digits.")
    project: str = Field(description="Project the trace was ingested into.")
    service_name: str = Field(description="Service of the root span ('' until it arrives).")
    root_name: str = Field(description="Name of the root span ('' until it arrives).")
    session_id: str = Field(
        default="", description="Session / conversation id, if any span carries one."
    )
    status: Literal["ok", "error"] = Field(
        description="'error' when the root span ended in error, else 'ok'."
    )
    outcome: str = Field(default="", description="Graded outcome, once a grader has set one.")
    start_ns: int = Field(description="Start of the earliest span, ns since the epoch (UTC).")
    end_ns: int = Field(description="End of the latest span, ns since the epoch (UTC).")
    span_count: int = Field(description="Spans stored for the trace.")
    error_count: int = Field(description="Spans whose status is error.")
    tool_calls: int = Field(description="Tool steps.")
    tool_names: list[str] = Field(
        default_factory=list, description="Distinct tools called, sorted."
    )
    input_tokens: int = Field(
        default=0, description="Tokens with each model call counted once (ingest/_usage.py)."
    )
    output_tokens: int = 0
    total_tokens: int = 0
    cost: float = Field(default=0.0, description="Cost, each model call counted once.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def has_error(self) -> bool:
        """True when any span of the trace errored."""
        return self.error_count > 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def duration_ms(self) -> float:
        """Wall time from the first span's start to the last span's end."""
        return max(0, self.end_ns - self.start_ns) / 1e6

    @computed_field  # type: ignore[prop-decorator]
    @property
    def start_time(self) -> str:
        """``start_ns`` as ISO 8601 (UTC, milliseconds)."""
        return _iso(self.start_ns)


class TraceList(BaseModel):
    """A page of traces, newest first, and the cursor of the next page."""

    traces: list[TraceSummary]
    next_cursor: str | None = Field(
        default=None, description="Pass as ?cursor= for the next page; null on the last page."
    )


#: Roles of a conversation turn (``ingest/_turns.py`` reads every library's shapes into these).
TURN_ROLES = ("system", "user", "assistant", "tool_call", "tool_result")


class Turn(BaseModel):
    """One turn of a model's conversation, whatever message shape the library used."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant", "tool_call", "tool_result"] = Field(
        description="system, user, assistant (the model's words), tool_call (a call the model "
        "asked for), tool_result (what a tool returned, wherever the library put it)."
    )
    content: Any = Field(
        default=None, description="The text; for a tool result, the value it returned."
    )
    tool_name: str = Field(default="", description="The tool of a tool_call or tool_result.")
    call_id: str = Field(default="", description="The tool call id, when the library kept one.")
    arguments: Any = Field(
        default=None, description="A tool_call's arguments (an object when the call named them)."
    )


class Step(BaseModel):
    """A span normalised into an agent step (from the ``agent_steps`` table)."""

    order: int = Field(description="1-based position of the step in the trace by start time.")
    kind: str = Field(description="llm, tool, agent, retrieval, memory_*, guardrail, other.")
    tool_name: str = ""
    tool_call_id: str = ""
    arguments: Any = Field(
        default=None,
        description="Tool arguments without the library's wrapper; a one-argument tool's bare "
        "value is named when the model's call or the schema names it.",
    )
    result: Any = Field(
        default=None, description="Tool result without the library's wrapper (ToolMessage)."
    )
    input: Any = Field(
        default=None, description="Model/agent input: parsed when a JSON object/array, else text."
    )
    output: Any = Field(
        default=None, description="Model/agent output: parsed when a JSON object/array, else text."
    )
    input_turns: list[Turn] = Field(
        default_factory=list, description="A model/agent step's input as turns (its history)."
    )
    output_turns: list[Turn] = Field(
        default_factory=list, description="A model/agent step's output as turns (its reply)."
    )
    model: str = ""
    agent_name: str = ""
    input_tokens: int = Field(
        default=0, description="Usage recorded on this span (on agent/chain spans, a sum of calls)."
    )
    output_tokens: int = 0
    total_tokens: int = 0
    cost: float = 0.0
    start_ns: int = 0
    duration_ns: int = 0
    status: str = Field(default="unset", description="ok, error or unset (the OTel span status).")
    error: str = ""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def duration_ms(self) -> float:
        """``duration_ns`` in milliseconds."""
        return self.duration_ns / 1e6


class SpanEvent(BaseModel):
    """An event recorded on a span (exceptions arrive as ``exception`` events)."""

    time_ns: int
    name: str
    attributes: dict[str, str] = Field(default_factory=dict)


class SpanLink(BaseModel):
    """A link from a span to a span of this or another trace."""

    trace_id: str
    span_id: str
    attributes: dict[str, str] = Field(default_factory=dict)


class SpanNode(BaseModel):
    """One span of a trace: its place in the tree, its step, and its raw data."""

    span_id: str
    parent_span_id: str = Field(
        default="", description="'' for a root; kept when the parent is missing."
    )
    depth: int = Field(description="0 for roots (and spans whose parent was never stored).")
    children: list[str] = Field(default_factory=list, description="Child span ids by start time.")
    name: str
    service_name: str = ""
    span_kind: str = Field(
        default="", description="OTel span kind (Internal, Client, Server, ...)."
    )
    scope_name: str = ""
    status_message: str = ""
    step: Step
    attributes: dict[str, str] = Field(default_factory=dict, description="Raw span attributes.")
    resource_attributes: dict[str, str] = Field(default_factory=dict)
    events: list[SpanEvent] = Field(default_factory=list)
    links: list[SpanLink] = Field(default_factory=list)


class TraceDetail(BaseModel):
    """A trace: its summary and its spans in tree order (all of them, or one page)."""

    trace_id: str
    project: str
    summary: TraceSummary
    roots: list[str] = Field(description="Span ids of the roots, by start time.")
    spans: list[SpanNode] = Field(
        description="The page's spans, depth-first in tree order (summary.span_count in all)."
    )
    offset: int = Field(default=0, description="Position of the first span of this page.")
    next_offset: int | None = Field(
        default=None, description="offset of the next page; null when this page ends the trace."
    )


class ApiError(BaseModel):
    """The one error shape of the REST API: ``{"error": {"type", "message"}}``."""

    error: dict[str, str] = Field(examples=[{"type": "NotFoundError", "message": "..."}])
