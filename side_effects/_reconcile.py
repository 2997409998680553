"""Reconcile state deltas with the trace's tool calls.

Three findings:

* **attribution**: which call caused each delta. Exact when the calls were
  replayed one by one with a snapshot between them (``method="replay"``: the
  delta appeared in that call's step). Otherwise inferred by matching the
  call's argument values against the delta's key and written values
  (``method="arguments"``, with the matched values as evidence); the write call
  with the most matches wins, a successful call beating a failed one on ties.
* **unexplained change**: a delta no call explains (state changed behind the
  agent's back, or by a tool the trace did not record).
* **write without effect**: a call to a writing tool that changed nothing.
  For a failed call (status ``error``, e.g. arguments that failed validation)
  that is the consistent outcome and is reported as such; for a call that
  reported success it is a finding (a no-op, or a write the snapshot cannot see).

A call whose name does not look like a write but that changed state in replay
is reported too (``read_call_wrote``): e.g. a "get" that logs a request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from ._classify import Classification
from ._diff import Delta
from ._policy import Profile, default_profile
from ._records import RecordId


class ToolCall(BaseModel):
    """One tool call of a trace, as reconciliation needs it."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    status: Literal["ok", "error"] = "ok"
    span_id: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Attribution:
    """A delta and the call(s) that caused it."""

    delta_ref: str
    kind: str
    call_indexes: tuple[int, ...]
    span_ids: tuple[str | None, ...]
    method: Literal["replay", "arguments"]
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CallFinding:
    """A finding about one call."""

    call_index: int
    name: str
    span_id: str | None
    status: str
    finding: Literal["write_without_effect", "read_call_wrote"]
    reason: str


@dataclass(slots=True)
class Reconciliation:
    """Attributions, unexplained deltas and call findings of one run."""

    attributions: list[Attribution] = field(default_factory=list)
    unexplained: list[Delta] = field(default_factory=list)
    calls: list[CallFinding] = field(default_factory=list)

    @property
    def write_without_effect(self) -> list[CallFinding]:
        """Write calls that changed nothing."""
        return [c for c in self.calls if c.finding == "write_without_effect"]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        from dataclasses import asdict

        return {
            "attributions": [asdict(a) for a in self.attributions],
            "unexplained": [d.to_json() for d in self.unexplained],
            "calls": [asdict(c) for c in self.calls],
        }


def _scalars(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _scalars(v)]
    if isinstance(value, list | tuple):
        return [x for v in value for x in _scalars(v)]
    if value is None or isinstance(value, bool):
        return []
    return [value]


def _norm(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip().casefold()


def _evidence(d: Delta) -> list[str]:
    vals = [*d.key, *_scalars(d.changed_fields())]
    if d.kind == "deleted":
        vals += _scalars(d.before or {})
    return [_norm(v) for v in vals if _norm(v)]


def _match(args: dict[str, Any], evidence: list[str]) -> list[str]:
    hits = []
    for a in _scalars(args):
        na = _norm(a)
        if not na:
            continue
        for e in evidence:
            if na == e or (len(na) >= 4 and na in e) or (len(e) >= 4 and e in na):
                hits.append(str(a)[:60])
                break
    return hits


def reconcile(
    calls: Sequence[ToolCall],
    deltas: Sequence[Delta],
    *,
    step_deltas: Sequence[Sequence[Delta]] | None = None,
    profile: Profile | None = None,
    classification: Classification | None = None,
) -> Reconciliation:
    """Attribute deltas to calls and report unexplained changes and ineffective writes.

    Args:
        calls: the run's tool calls in order.
        deltas: the deltas to explain (net, plus transient ones if wanted).
        step_deltas: per call, the deltas of its step (from replay); same
            length as ``calls``. None falls back to argument matching.
        profile: says which tools write (``Profile.is_write_tool``).
        classification: if given, its decisions get ``span_id`` and
            ``attribution`` filled in.
    """
    profile = profile or default_profile()
    out = Reconciliation()
    by_rid: dict[RecordId, list[int]] = {}
    if step_deltas is not None:
        if len(step_deltas) != len(calls):
            raise ValueError(f"step_deltas has {len(step_deltas)} steps for {len(calls)} calls")
        for i, step in enumerate(step_deltas):
            for d in step:
                by_rid.setdefault(d.rid, []).append(i)
    effect: set[int] = set()
    attributed: dict[tuple[RecordId, int | None], Attribution] = {}
    for d in deltas:
        if step_deltas is not None:
            # A step delta (a transient one) belongs to its own step; a net delta
            # to every step that touched its record.
            steps_of = [d.step] if d.step is not None else by_rid.get(d.rid, [])
            idx = tuple(dict.fromkeys(steps_of))
            if idx:
                a = Attribution(d.ref, d.kind, idx, tuple(calls[i].span_id for i in idx), "replay")
            else:
                a = None
        else:
            ev = _evidence(d)
            best: tuple[int, int, int] | None = None
            best_hits: list[str] = []
            for i, c in enumerate(calls):
                if not profile.is_write_tool(c.name):
                    continue
                hits = _match(c.args, ev)
                if hits:
                    score = (len(hits), 1 if c.status == "ok" else 0, -i)
                    if best is None or score > best:
                        best, best_hits = score, hits
            if best is not None:
                i = -best[2]
                a = Attribution(
                    d.ref, d.kind, (i,), (calls[i].span_id,), "arguments", tuple(best_hits)
                )
            else:
                a = None
        if a is None:
            out.unexplained.append(d)
        else:
            out.attributions.append(a)
            attributed[(d.rid, d.step)] = a
            effect.update(a.call_indexes)
    if step_deltas is not None:
        effect = {i for i, step in enumerate(step_deltas) if step}
    for i, c in enumerate(calls):
        write = profile.is_write_tool(c.name)
        if write and i not in effect:
            reason = (
                f"call failed ({(c.error or 'error')[:80]}); no state change, "
                "consistent with the failure"
                if c.status == "error"
                else "reported success but changed no observed state"
            )
            out.calls.append(
                CallFinding(i, c.name, c.span_id, c.status, "write_without_effect", reason)
            )
        elif not write and step_deltas is not None and step_deltas[i]:
            refs = ", ".join(d.ref for d in step_deltas[i][:3])
            out.calls.append(
                CallFinding(
                    i,
                    c.name,
                    c.span_id,
                    c.status,
                    "read_call_wrote",
                    f"non-write tool changed state: {refs}",
                )
            )
    if classification is not None:
        for dec in classification.decisions:
            a = attributed.get((dec.delta.rid, dec.delta.step))
            if a is not None:
                dec.span_id = a.span_ids[-1]
                dec.attribution = (
                    f"{a.method}: call #{a.call_indexes[-1]} {calls[a.call_indexes[-1]].name}"
                    + (f" (matched {', '.join(a.evidence)})" if a.evidence else "")
                )
            else:
                dec.attribution = "unexplained: no tool call explains this change"
    return out
