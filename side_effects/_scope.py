"""Building a task's scope: from one reference run, an expected snapshot, or several correct runs.

* ``derive_scope(deltas)``: the deltas of one reference run are the task's
  expected state change; each becomes a required ``ExpectedDelta`` with the
  values it wrote. Given the run's s0, fields the system set on the write
  (timestamps, UUIDs, counters; see ``_volatile``) get a constraint instead of
  their exact value. Step deltas the reference run itself undid are kept as
  transient (optional) expectations, so a run that does the same dance is not
  flagged.
* ``scope_from_snapshots(s0, expected)``: the same from an expected end state.
* ``learn_scope(runs)``: several correct runs; keeps what they agree on.
  Changes are aligned across runs (updates and deletions by record id,
  creations by content, so generated ids match by role); a change seen in
  every run is required, one seen in some is optional; a field whose value
  differs between runs gets the narrowest constraint that accepts every
  value (``_constraint.relax``), a list that differs only in order compares
  as a set. ``Scope.learned_from`` and ``Scope.relaxed`` say what was learned
  and what was relaxed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._constraint import StateValues, affixes, relax
from ._diff import Delta, diff
from ._paths import canon, flat
from ._policy import (
    AllowRule,
    Constraint,
    ExpectedDelta,
    NoiseRule,
    Profile,
    Relaxation,
    Scope,
    default_profile,
    glob_any,
)
from ._records import Snapshot
from ._volatile import VolatileIndex

FreeFields = Sequence[str] | Mapping[str, Sequence[str]]


def _free_for(rtype: str, free: FreeFields) -> list[str]:
    if isinstance(free, Mapping):
        return [f for glob, fields in free.items() if glob_any(rtype, [glob]) for f in fields]
    return list(free)


@dataclass
class ReferenceRun:
    """One correct run as scope learning reads it."""

    deltas: Sequence[Delta]
    transient: Sequence[Delta] = ()
    s0: Snapshot | None = None
    name: str = ""


@dataclass
class _Group:
    """One change as it appeared across the runs (at most one delta per run)."""

    kind: str
    resource_type: str
    transient: bool
    members: dict[int, Delta] = field(default_factory=dict)


def _written(d: Delta) -> dict[str, Any]:
    """What a delta wrote, minus lists that only changed order (a set rebuilt)."""
    if d.kind != "updated":
        return d.changed_fields()
    return {c.field: c.after for c in d.changes if c.op != "reordered"}


def _befores(d: Delta) -> dict[str, Any]:
    return {c.field: c.before for c in d.changes}


def _similarity(a: Delta, b: Delta, skip: Sequence[str]) -> int:
    fa, fb = flat(a.after or {}), flat(b.after or {})
    same_fields = sum(
        1
        for k, v in fa.items()
        if k in fb and not glob_any(k.rsplit(".", 1)[-1], skip) and canon(v) == canon(fb[k])
    )
    same_key = sum(1 for x, y in zip(a.key, b.key, strict=False) if x == y)
    return same_fields + same_key


def _align(runs: Sequence[ReferenceRun], id_fields: Sequence[str]) -> list[_Group]:
    groups: list[_Group] = []
    by_rid: dict[tuple[bool, str, Any], _Group] = {}
    for i, run in enumerate(runs):
        for transient, deltas in ((False, run.deltas), (True, run.transient)):
            for d in deltas:
                if d.kind == "updated" and not _written(d):
                    continue  # only a reorder: nothing the task has to do
                if d.kind != "created":
                    g = by_rid.get((transient, d.kind, d.rid))
                    if g is None:
                        g = _Group(d.kind, d.resource_type, transient)
                        by_rid[(transient, d.kind, d.rid)] = g
                        groups.append(g)
                    g.members.setdefault(i, d)
                    continue
                same_key = by_rid.get((transient, "created", d.rid))
                if same_key is not None and i not in same_key.members:
                    same_key.members[i] = d
                    continue
                best, score = None, -1
                for g in groups:
                    if (
                        g.kind != "created"
                        or g.transient != transient
                        or g.resource_type != d.resource_type
                        or i in g.members
                    ):
                        continue
                    s = max(_similarity(d, m, id_fields) for m in g.members.values())
                    if s > score:
                        best, score = g, s
                if best is None:
                    best = _Group("created", d.resource_type, transient)
                    groups.append(best)
                # score 0: nothing in common but the type; still the same role when
                # that group is the one creation of this type the run has not filled
                best.members[i] = d
                by_rid.setdefault((transient, "created", d.rid), best)
    return groups


def _volatile_constraints(d: Delta, vol: VolatileIndex | None) -> dict[str, Constraint]:
    if vol is None:
        return {}
    out = {}
    for path in _written(d):
        v = vol.get(d.resource_type, path)
        if v is not None:
            out[path] = Constraint(kind=v.kind, reason=v.reason)  # type: ignore[arg-type]
    return out


_SEPARATORS = "_-./: #@"


def _stem(prefix: str) -> str:
    """A common prefix cut after its first separator: ``External_`` of ``External_abc...``.

    Three values from one generator share more than their name's stem (a
    template's first words); the stem is what a family of names has in common.
    """
    cut = next((i for i, ch in enumerate(prefix) if ch in _SEPARATORS), None)
    return prefix[: cut + 1] if cut is not None and cut >= 2 else ""


def _from_state(
    vals: Sequence[Any], runs: Sequence[int], states: Sequence[StateValues]
) -> Constraint | None:
    """``in_state`` when every run's value was already in that run's s0 (3+ characters)."""
    found: list[set[str]] = []
    for v, i in zip(vals, runs, strict=True):
        if isinstance(v, bool) or not isinstance(v, str | int) or len(str(v)) < 3:
            return None
        types = states[i].types_of(v)
        if not types:
            return None
        found.append(types)
    common = set.intersection(*found) or set.union(*found)
    pre = _stem(affixes([str(v) for v in vals])[0])
    return Constraint(
        kind="in_state",
        values=sorted(common),
        prefix=pre,
        reason=f"differs between {len(vals)} correct runs; each run's value was in its own "
        f"s0 ({', '.join(sorted(common)[:3])})",
    )


def _key_constraints(
    members: Sequence[Delta], runs: Sequence[int], states: Sequence[StateValues]
) -> dict[str, Constraint]:
    """Part by part constraints of a created record's key that differs between runs."""
    if len({len(m.key) for m in members}) != 1:
        return {}
    out: dict[str, Constraint] = {}
    for j in range(len(members[0].key)):
        parts = [m.key[j] for m in members]
        if len(set(parts)) == 1:
            out[f"<key>[{j}]"] = Constraint(
                kind="one_of", values=[parts[0]], reason="the same in every correct run"
            )
        elif (c := _from_state(parts, runs, states)) is not None:
            out[f"<key>[{j}]"] = c
    return out


def _expectation(
    gid: str,
    g: _Group,
    n: int,
    free: FreeFields,
    vols: Sequence[VolatileIndex | None],
    states: Sequence[StateValues],
) -> tuple[ExpectedDelta, list[Relaxation]]:
    runs = sorted(g.members)
    members = [g.members[i] for i in runs]
    first = members[0]
    keys = {m.key for m in members}
    key = list(first.key) if len(keys) == 1 else None
    written = [_written(m) for m in members]
    befores = [_befores(m) for m in members]
    fields: dict[str, Any] = {}
    constraints: dict[str, Constraint] = {}
    for path in dict.fromkeys(p for w in written for p in w):
        vals = [w[path] for w in written if path in w]
        fields[path] = vals[0]
        if len(vals) < len(written):
            constraints[path] = Constraint(
                kind="any",
                reason=f"written in {len(vals)} of {len(written)} correct runs making this change",
            )
        elif len({canon(v) for v in vals}) > 1:
            bs = [b.get(path) for b in befores] if g.kind == "updated" else []
            c = relax(vals, bs, runs=len(vals))
            if c.kind in ("any", "one_of"):
                c = _from_state(vals, runs, states) or c
            constraints[path] = c
    if key is None and g.kind == "created":
        constraints.update(_key_constraints(members, runs, states))
    for i, m in sorted(g.members.items()):
        for path, c in _volatile_constraints(m, vols[i]).items():
            if path in fields and path not in constraints:
                constraints[path] = c
    e = ExpectedDelta(
        id=gid,
        kind=g.kind,  # type: ignore[arg-type]
        resource_type=g.resource_type,
        key=key,
        fields=fields if g.kind != "deleted" else {},
        ignore_fields=_free_for(g.resource_type, free),
        transient=g.transient,
        required=not g.transient and len(members) == n,
        constraints=constraints,
        seen_in=len(members) if n > 1 else None,
    )
    relaxed = [
        Relaxation(
            expected_id=gid, resource_type=g.resource_type, field=p, how=c.kind, reason=c.reason
        )
        for p, c in constraints.items()
    ]
    if key is None and g.kind == "created" and n > 1:
        relaxed.append(
            Relaxation(
                expected_id=gid,
                resource_type=g.resource_type,
                field="<key>",
                how="key by role",
                reason=f"{len(keys)} different keys in {n} runs",
            )
        )
    if not g.transient and len(members) < n:
        relaxed.append(
            Relaxation(
                expected_id=gid,
                resource_type=g.resource_type,
                field="*",
                how="optional",
                reason=f"seen in {len(members)} of {n} correct runs",
            )
        )
    return e, relaxed


def learn_scope(
    runs: Sequence[ReferenceRun],
    *,
    task_id: str | None = None,
    source: str | None = None,
    allow: Sequence[AllowRule] = (),
    noise: Sequence[NoiseRule] = (),
    free_fields: FreeFields = (),
    profile: Profile | None = None,
) -> Scope:
    """A scope that fits every given correct run (see the module docstring).

    Args:
        runs: the correct runs (net deltas, transient deltas, s0 for volatile
            detection). One run gives the same scope as ``derive_scope``.
        task_id: the task this scope belongs to.
        source: a phrase naming the runs, quoted in decision reasons.
        allow: extra declared allowances.
        noise: task-specific noise.
        free_fields: globs of fields whose wording is the agent's choice (see
            ``derive_scope``).
        profile: the environment profile (id fields, clock and counter names).
    """
    if not runs:
        raise ValueError("learn_scope needs at least one correct run")
    profile = profile or default_profile()
    n = len(runs)
    vols = [
        VolatileIndex(r.s0, [*r.deltas, *r.transient], profile) if r.s0 is not None else None
        for r in runs
    ]
    states = [StateValues(r.s0) for r in runs]
    expected: list[ExpectedDelta] = []
    relaxed: list[Relaxation] = []
    counters = {False: 0, True: 0}
    for g in _align(runs, profile.id_fields):
        counters[g.transient] += 1
        e, rel = _expectation(
            f"{'T' if g.transient else 'E'}{counters[g.transient]}",
            g,
            n,
            free_fields,
            vols,
            states,
        )
        expected.append(e)
        relaxed.extend(rel)
    if source is None:
        source = "reference run" if n == 1 else f"{n} correct runs"
    return Scope(
        task_id=task_id,
        source=source,
        expected=expected,
        allow=list(allow),
        noise=list(noise),
        learned_from=n,
        relaxed=relaxed,
    )


def derive_scope(
    deltas: Sequence[Delta],
    *,
    transient: Sequence[Delta] = (),
    task_id: str | None = None,
    source: str = "ground-truth run",
    allow: Sequence[AllowRule] = (),
    noise: Sequence[NoiseRule] = (),
    free_fields: FreeFields = (),
    s0: Snapshot | None = None,
    profile: Profile | None = None,
) -> Scope:
    """A scope whose expectations are the deltas of one reference run.

    Args:
        deltas: net deltas of the reference (ground-truth) run.
        transient: its step deltas undone by the end (``transient_deltas``).
        task_id: the task this scope belongs to.
        source: a phrase naming the reference run, quoted in decision reasons.
        allow: extra declared allowances.
        noise: task-specific noise.
        free_fields: globs of fields whose wording is the agent's choice (a
            message body, a subject): the change must happen, its value is not
            compared. A list applies to every resource type; a mapping of
            resource-type glob -> field globs applies per type (``{"outbox.*":
            ["body"]}``). Empty (the default) compares every value exactly.
        s0: the reference run's initial state; given, volatile fields
            (timestamps, UUIDs, counters) become constraints.
        profile: names of clock and counter fields (default profile).
    """
    return learn_scope(
        [ReferenceRun(deltas, transient, s0)],
        task_id=task_id,
        source=source,
        allow=allow,
        noise=noise,
        free_fields=free_fields,
        profile=profile,
    )


def scope_from_snapshots(
    s0: Snapshot,
    expected: Snapshot | Sequence[Snapshot],
    *,
    task_id: str | None = None,
    source: str | None = None,
    profile: Profile | None = None,
    free_fields: FreeFields = (),
) -> Scope:
    """The expected deltas from s0 to an expected end state (or several correct end states)."""
    ends = [expected] if isinstance(expected, Snapshot) else list(expected)
    return learn_scope(
        [ReferenceRun(diff(s0, e), (), s0) for e in ends],
        task_id=task_id,
        source=source or ("expected snapshot" if len(ends) == 1 else None),
        profile=profile,
        free_fields=free_fields,
    )
