"""Typed diff of two snapshots: created, deleted, updated with field-level changes.

Method: both snapshots are dicts of record id -> canonical JSON text. Created
and deleted ids are set differences of the key views; updated ids are the
common ids whose texts differ (one C-level string comparison each). Only the
changed records are decoded for field-level changes, so the cost is one pass
over the ids plus work proportional to the change, and the output is sorted by
(resource type, natural key, kind) so two runs print the same diff.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ._records import RecordId, Snapshot, display_key, key_sort

DeltaKind = Literal["created", "updated", "deleted"]
_KIND_ORDER = {"deleted": 0, "updated": 1, "created": 2}

#: Marks a field absent on one side of a change (distinct from JSON null).
MISSING: Any = None


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field's change; ``op`` says whether it was added, removed or set."""

    field: str
    before: Any
    after: Any
    op: Literal["added", "removed", "set"] = "set"


@dataclass(frozen=True, slots=True)
class Delta:
    """One record's change between s0 and sT."""

    kind: DeltaKind
    resource_type: str
    key: tuple[str, ...]
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    changes: tuple[FieldChange, ...] = ()
    step: int | None = field(default=None, compare=False)

    @property
    def rid(self) -> RecordId:
        """The record id ``(resource_type, key)``."""
        return (self.resource_type, self.key)

    @property
    def ref(self) -> str:
        """``type[key]`` for messages."""
        return f"{self.resource_type}[{display_key(self.key)}]"

    def changed_fields(self) -> dict[str, Any]:
        """Field -> new value for what this delta wrote (all fields for a creation)."""
        if self.kind == "created":
            return dict(self.after or {})
        if self.kind == "deleted":
            return {}
        return {c.field: c.after for c in self.changes}

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "kind": self.kind,
            "resource_type": self.resource_type,
            "key": list(self.key),
            "before": self.before,
            "after": self.after,
            "changes": [
                {"field": c.field, "op": c.op, "before": c.before, "after": c.after}
                for c in self.changes
            ],
            **({"step": self.step} if self.step is not None else {}),
        }


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, ensure_ascii=False, default=str)


def field_changes(before: dict[str, Any], after: dict[str, Any]) -> tuple[FieldChange, ...]:
    """Field-level changes between two field dicts, sorted by field name."""
    out = []
    for name in sorted(before.keys() | after.keys()):
        if name not in after:
            out.append(FieldChange(name, before[name], MISSING, "removed"))
        elif name not in before:
            out.append(FieldChange(name, MISSING, after[name], "added"))
        elif _canon(before[name]) != _canon(after[name]):
            out.append(FieldChange(name, before[name], after[name], "set"))
    return tuple(out)


def sort_deltas(deltas: Iterable[Delta]) -> list[Delta]:
    """Stable order: resource type, natural key order, then deleted < updated < created."""
    return sorted(
        deltas, key=lambda d: (d.resource_type, key_sort(d.key), _KIND_ORDER[d.kind], d.step or 0)
    )


def diff(before: Snapshot, after: Snapshot, *, step: int | None = None) -> list[Delta]:
    """Every record that was created, deleted or updated from ``before`` to ``after``.

    Args:
        before: the snapshot at s0 (or before a step).
        after: the snapshot at sT (or after a step).
        step: recorded on each delta when diffing one step of a trajectory.

    Returns:
        Deltas in stable order (see ``sort_deltas``).
    """
    b, a = before.raw, after.raw
    out: list[Delta] = []
    for rid in a.keys() - b.keys():
        out.append(Delta("created", rid[0], rid[1], None, json.loads(a[rid]), step=step))
    for rid in b.keys() - a.keys():
        out.append(Delta("deleted", rid[0], rid[1], json.loads(b[rid]), None, step=step))
    changed = [rid for rid, text in b.items() if (t := a.get(rid)) is not None and t != text]
    for rid in changed:
        fb, fa = json.loads(b[rid]), json.loads(a[rid])
        out.append(Delta("updated", rid[0], rid[1], fb, fa, field_changes(fb, fa), step=step))
    return sort_deltas(out)
