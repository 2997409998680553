"""Typed diff of two snapshots: created, deleted, updated with field-level changes.

Method: both snapshots are dicts of record id -> canonical JSON text. Created
and deleted ids are set differences of the key views; updated ids are the
common ids whose texts differ (one C-level string comparison each). Only the
changed records are decoded for field-level changes, named by path (see
``_paths``: ``address.city``, ``flights[1].date``), so the cost is one pass
over the ids plus work proportional to the change, and the output is sorted by
(resource type, natural key, kind) so two runs print the same diff. A list of
scalars whose members only changed order is reported with op ``reordered``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from ._paths import flat, path_changes, same_members
from ._records import RecordId, Snapshot, display_key, key_sort

DeltaKind = Literal["created", "updated", "deleted"]
_KIND_ORDER = {"deleted": 0, "updated": 1, "created": 2}


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field's change; ``op``: added, removed, set, or reordered (same members)."""

    field: str
    before: Any
    after: Any
    op: Literal["added", "removed", "set", "reordered"] = "set"


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
        """Path -> new value for what this delta wrote (every leaf for a creation)."""
        if self.kind == "created":
            return flat(self.after or {})
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


def field_changes(before: dict[str, Any], after: dict[str, Any]) -> tuple[FieldChange, ...]:
    """Path-level changes between two records' fields, in field order."""
    out = []
    for path, b, a, op in path_changes(before, after, ""):
        if op == "set" and same_members(b, a):
            op = "reordered"
        out.append(FieldChange(path, b, a, op))  # type: ignore[arg-type]
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
        out.append(Delta("created", rid[0], rid[1], None, orjson.loads(a[rid]), step=step))
    for rid in b.keys() - a.keys():
        out.append(Delta("deleted", rid[0], rid[1], orjson.loads(b[rid]), None, step=step))
    changed = [rid for rid, text in b.items() if (t := a.get(rid)) is not None and t != text]
    for rid in changed:
        fb, fa = orjson.loads(b[rid]), orjson.loads(a[rid])
        out.append(Delta("updated", rid[0], rid[1], fb, fa, field_changes(fb, fa), step=step))
    return sort_deltas(out)
