"""Reconcile state deltas with the trace's tool calls.

Three findings:

* **attribution**: which call caused each delta. Exact when the calls were
  replayed one by one with a snapshot between them (``method="replay"``: the
  delta appeared in that call's step). Otherwise inferred (``method=
  "arguments"``), deciding in this order:

  1. **outcome**: a failed call caused nothing; failed calls are candidates
     only when no successful call matches at all (the state then says a
     failed call did write after all);
  2. **tool semantics**: among those, calls that write beat calls that only
     read (the profile's declared write tools, else the core's tool
     semantics of the call, ``flywheel.tools.call_semantics``);
  3. **argument and value matches**: a call naming the record's key beats
     one naming a value it wrote, which beats one naming a record that
     refers to it in the state (a reservation's owner: the call names the
     reservation, the reservation's ``user_id`` names the user whose balance
     changed); then the number of matched values; then the later call (the
     last writer).

  The matched values are kept as evidence.
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

from flywheel.tools import call_semantics

from ._classify import Classification
from ._diff import Delta
from ._paths import leaves
from ._policy import Profile, default_profile
from ._records import RecordId, Snapshot, key_sort


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


def argument_hits(args: dict[str, Any], values: Sequence[Any]) -> list[str]:
    """Argument values of a call that equal one of ``values`` or contain it (>= 4 chars)."""
    ev = [n for v in values if (n := _norm(v))]
    hits = []
    for a in _scalars(args):
        na = _norm(a)
        if not na:
            continue
        for e in ev:
            if na == e or (len(na) >= 4 and na in e) or (len(e) >= 4 and e in na):
                hits.append(str(a)[:60])
                break
    return hits


class _StateLinks:
    """Keys of the records that refer to a record, read from the states (built on first need)."""

    def __init__(self, states: Sequence[Snapshot]) -> None:
        self.states = states
        self._index: dict[str, set[tuple[str, ...]]] | None = None

    def referrers(self, key: tuple[str, ...]) -> list[str]:
        """Key parts of every record holding ``key``'s last part as a field value."""
        if not key or len(_norm(key[-1])) < 3:
            return []
        if self._index is None:
            self._index = {}
            for snap in self.states:
                for rid in snap.raw:
                    for _, v in leaves(snap.fields(rid)):
                        for x in v if isinstance(v, list) else (v,):
                            if isinstance(x, str | int) and not isinstance(x, bool):
                                n = _norm(x)
                                if len(n) >= 3:
                                    self._index.setdefault(n, set()).add(rid[1])
        out: list[str] = []
        for k in self._index.get(_norm(key[-1]), ()):
            if k != key:
                out.extend(p for p in k if p not in key)
        return out


def call_writes(profile: Profile, call: ToolCall) -> bool:
    """Whether a call can change state: the profile's declared list, else the tool semantics."""
    if profile.write_tools is not None:
        return call.name in profile.write_tools
    return call_semantics(call.name, call.args).writes


def communicates(call: ToolCall) -> str | None:
    """Why a call reaches people (a write whose reach is communication), or None."""
    sem = call_semantics(call.name, call.args)
    if not sem.writes or sem.reach.value != "communication":
        return None
    return (
        f"{call.name} reaches people (tool semantics: {sem.reach.source}, "
        f"{sem.reach.origin or 'reach'}, confidence {sem.reach.confidence:g})"
    )


def _same_call(a: ToolCall, b: ToolCall) -> bool:
    return a.name == b.name and _scalars(a.args) == _scalars(b.args)


def _exact(args: dict[str, Any], values: Sequence[Any]) -> list[str]:
    """Argument values equal to one of ``values`` (the record's key given as an argument)."""
    ev = {n for v in values if (n := _norm(v))}
    return [str(a)[:60] for a in _scalars(args) if _norm(a) in ev]


def _contains_key(args: dict[str, Any], key: Sequence[Any]) -> list[str]:
    """Arguments holding a key part inside a longer value (a body naming ``A-1086``)."""
    ks = [n for k in key if len(n := _norm(k)) >= 4]
    return [str(a)[:60] for a in _scalars(args) if any(k in _norm(a) for k in ks)]


def _held(d: Delta) -> list[Any]:
    """Scalar fields a record holds at its top level and the delta did not write (its unit)."""
    written = {_norm(v) for v in _scalars(d.changed_fields())}
    return [
        v
        for v in (d.before or d.after or {}).values()
        if not isinstance(v, dict | list | bool)
        and v is not None
        and len(n := _norm(v)) >= 2
        and n not in written
    ]


def _score_calls(
    d: Delta,
    calls: Sequence[ToolCall],
    profile: Profile,
    links: _StateLinks | None,
    observed: set[int] = frozenset(),  # type: ignore[assignment]
) -> tuple[int, tuple[str, ...], float, tuple[int, ...]] | None:
    """The call that caused ``d`` by outcome, semantics and matches, with its evidence.

    Matches rank: the record's key as an argument (4), the key inside a longer
    argument such as a message body (3), a value the delta wrote (2), a part
    of the key such as a search prefix (1.5), a record that refers to this
    one in the state (1), a top-level value the record holds and kept (its
    unit, named by a call that finds the record by it: 0.75); then how many
    key parts are arguments; then the number of arguments that matched
    anything; then the later call. A call counts as
    writing when its tool semantics say so or when it explained another delta
    of this run directly (``observed``).
    """
    key_vals = [k for k in d.key if len(_norm(k)) >= 1]
    written = _scalars(d.changed_fields())
    if d.kind == "deleted":
        written += _scalars(d.before or {})
    linked: list[str] | None = None
    held_vals: list[Any] | None = None
    best: tuple[int, int, float, int, int, int] | None = None
    best_i, best_hits = -1, ()
    ties: list[int] = []
    for i, c in enumerate(calls):
        key_hits = argument_hits(c.args, key_vals)
        val_hits = argument_hits(c.args, written)
        hits = list(dict.fromkeys([*key_hits, *val_hits]))
        strength = (
            4
            if _exact(c.args, key_vals)
            else 3
            if _contains_key(c.args, key_vals)
            else 2
            if val_hits
            else 1.5
            if hits
            else 0
        )
        if not hits:
            if links is not None:
                if linked is None:
                    linked = links.referrers(d.key)
                strength, hits = 1, argument_hits(c.args, linked) if linked else []
                hits = [f"{h} (refers to {d.ref} in the state)" for h in hits]
        if not hits:
            if held_vals is None:
                held_vals = _held(d)
            held = _exact(c.args, held_vals)
            strength, hits = 0.75, [f"{h} (a value {d.ref} holds)" for h in held]
        if not hits:
            continue
        score = (
            1 if c.status == "ok" else 0,
            1 if i in observed or call_writes(profile, c) else 0,
            strength,
            len({_norm(k) for k in key_vals} & {_norm(a) for a in _scalars(c.args)}),
            len(hits),
            i,
        )
        same = best is not None and score[:5] == best[:5]
        if same and _same_call(c, calls[best_i]):
            ties.append(i)
        elif best is None or score[:5] > best[:5] or same:
            ties = [i]
        if best is None or score > best:
            best, best_i, best_hits = score, i, tuple(hits)
    return None if best is None else (best_i, best_hits, best[2], tuple(ties))


def _values(d: Delta) -> list[str]:
    """Distinctive values a delta carries: its key and every value before and after (>= 3)."""
    raw = [*d.key, *_scalars(d.after or {}), *_scalars(d.before or {})]
    return [n for v in raw if len(n := _norm(v)) >= 3]


def _shares(m: str, t: str) -> bool:
    """The same value (three characters or more), or one inside the other (four or more)."""
    return m == t or (len(m) >= 4 and len(t) >= 4 and (m in t or t in m))


def _co_written(d: Delta, explained: Sequence[tuple[Delta, Attribution]]) -> Attribution | None:
    """The attribution of a delta written with this one: they share a distinctive value.

    A counter that hands out the next invoice number changes in the same call
    that creates ``INV-5060`` (or ticket ``579``); no argument names the
    counter, but the value does. Values of the changed fields only on this
    side, so a record that merely mentions another is not pulled in.
    """
    mine = [
        n
        for c in (d.changes if d.kind == "updated" else ())
        for v in (c.before, c.after)
        for x in _scalars(v)
        if len(n := _norm(x)) >= 3
    ] or [n for v in _scalars(d.after or d.before or {}) if len(n := _norm(v)) >= 4]
    best: tuple[int, Attribution, str] | None = None
    for other, a in explained:
        theirs = _values(other)
        shared = [m for m in mine if any(_shares(m, t) for t in theirs)]
        if shared and (best is None or len(shared) > best[0]):
            best = (len(shared), a, shared[0])
    if best is None:
        return None
    _, a, value = best
    return Attribution(
        d.ref,
        d.kind,
        a.call_indexes,
        a.span_ids,
        "arguments",
        (f"{value} (written with {a.delta_ref})",),
    )


def _pair_twins(
    twins: dict[tuple[int, ...], list[Delta]],
    calls: Sequence[ToolCall],
    out: Reconciliation,
    attributed: dict[tuple[RecordId, int | None], Attribution],
) -> None:
    """Creations that equally fit several identical calls: the n-th record to the n-th call.

    Three payments of the same amount to the same account are three calls with
    the same arguments; the records they created are numbered in creation
    order, so key order pairs them with call order.
    """
    for tied, deltas in twins.items():
        if len(deltas) > len(tied):
            continue
        ordered = sorted(deltas, key=lambda d: key_sort(d.key))
        for d, i in zip(ordered, sorted(tied), strict=False):
            old = attributed[(d.rid, d.step)]
            new = Attribution(
                d.ref,
                d.kind,
                (i,),
                (calls[i].span_id,),
                "arguments",
                (*old.evidence, "identical calls paired in order"),
            )
            out.attributions[out.attributions.index(old)] = new
            attributed[(d.rid, d.step)] = new


def _call_findings(
    calls: Sequence[ToolCall],
    profile: Profile,
    effect: set[int],
    step_deltas: Sequence[Sequence[Delta]] | None,
) -> list[CallFinding]:
    """Writes that changed nothing, and (in replay) non-write calls that changed state."""
    out = []
    for i, c in enumerate(calls):
        write = call_writes(profile, c)
        if write and i not in effect:
            reason = (
                f"call failed ({(c.error or 'error')[:80]}); no state change, "
                "consistent with the failure"
                if c.status == "error"
                else "reported success but changed no observed state"
            )
            out.append(CallFinding(i, c.name, c.span_id, c.status, "write_without_effect", reason))
        elif not write and step_deltas is not None and step_deltas[i]:
            refs = ", ".join(d.ref for d in step_deltas[i][:3])
            out.append(
                CallFinding(
                    i,
                    c.name,
                    c.span_id,
                    c.status,
                    "read_call_wrote",
                    f"non-write tool changed state: {refs}",
                )
            )
    return out


def _annotate(
    classification: Classification,
    attributed: dict[tuple[RecordId, int | None], Attribution],
    calls: Sequence[ToolCall],
) -> None:
    """Fill each decision's span id, call indexes and attribution text."""
    for dec in classification.decisions:
        a = attributed.get((dec.delta.rid, dec.delta.step))
        if a is not None:
            dec.span_id = a.span_ids[-1]
            dec.call_indexes = a.call_indexes
            dec.attribution = (
                f"{a.method}: call #{a.call_indexes[-1]} {calls[a.call_indexes[-1]].name}"
                + (f" (matched {', '.join(a.evidence)})" if a.evidence else "")
            )
        else:
            dec.attribution = "unexplained: no tool call explains this change"


def reconcile(
    calls: Sequence[ToolCall],
    deltas: Sequence[Delta],
    *,
    step_deltas: Sequence[Sequence[Delta]] | None = None,
    profile: Profile | None = None,
    classification: Classification | None = None,
    states: Sequence[Snapshot] = (),
) -> Reconciliation:
    """Attribute deltas to calls and report unexplained changes and ineffective writes.

    Args:
        calls: the run's tool calls in order.
        deltas: the deltas to explain (net, plus transient ones if wanted).
        step_deltas: per call, the deltas of its step (from replay); same
            length as ``calls``. None falls back to inference from outcomes,
            semantics and argument values.
        profile: says which tools write (``Profile.is_write_tool``).
        classification: if given, its decisions get ``span_id``,
            ``call_indexes`` and ``attribution`` filled in.
        states: s0 and sT, to follow values that reach a record through the
            state (inference only).
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
    links = _StateLinks(states) if states else None
    effect: set[int] = set()
    attributed: dict[tuple[RecordId, int | None], Attribution] = {}
    pending: list[Delta] = []
    explained: list[tuple[Delta, Attribution]] = []
    twins: dict[tuple[int, ...], list[Delta]] = {}
    observed: set[int] = set()
    if step_deltas is None:
        # Calls that explain a delta by its key or written values did write in this
        # run, whatever their name says: the observed source of the tool semantics.
        for d in deltas:
            got = _score_calls(d, calls, profile, None)
            if got is not None and got[2] >= 2 and calls[got[0]].status == "ok":
                observed.add(got[0])
    for d in deltas:
        a: Attribution | None = None
        if step_deltas is not None:
            # A step delta (a transient one) belongs to its own step; a net delta
            # to every step that touched its record.
            steps_of = [d.step] if d.step is not None else by_rid.get(d.rid, [])
            idx = tuple(dict.fromkeys(steps_of))
            if idx:
                a = Attribution(d.ref, d.kind, idx, tuple(calls[i].span_id for i in idx), "replay")
        else:
            got = _score_calls(d, calls, profile, links, observed)
            if got is not None:
                i, hits, _, tied = got
                if len(tied) > 1 and d.kind == "created":
                    twins.setdefault(tied, []).append(d)
                a = Attribution(d.ref, d.kind, (i,), (calls[i].span_id,), "arguments", hits)
        if a is None:
            pending.append(d)
        else:
            out.attributions.append(a)
            attributed[(d.rid, d.step)] = a
            explained.append((d, a))
            effect.update(a.call_indexes)
    _pair_twins(twins, calls, out, attributed)
    effect.update(i for a in out.attributions for i in a.call_indexes)
    for d in pending:
        a = _co_written(d, explained) if step_deltas is None else None
        if a is None:
            out.unexplained.append(d)
        else:
            out.attributions.append(a)
            attributed[(d.rid, d.step)] = a
            effect.update(a.call_indexes)
    if step_deltas is not None:
        effect = {i for i, step in enumerate(step_deltas) if step}
    out.calls = _call_findings(calls, profile, effect, step_deltas)
    if classification is not None:
        _annotate(classification, attributed, calls)
    return out
