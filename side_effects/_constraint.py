"""Checking a value against a scope's constraint, and choosing one from correct runs.

``satisfies`` is the check the classifier applies to a field with a
constraint. ``relax`` is how a scope learned from several correct runs turns
the values one field took in those runs into the narrowest constraint that
accepts all of them: the same list in another order -> ``set``; all
timestamps -> ``timestamp``; all UUIDs -> ``uuid``; counters that went up ->
``increased``; numbers -> their ``range``; a few short values -> ``one_of``;
anything else -> ``any`` value of their JSON type. A value that differs
between runs but in every run was already in that run's initial state (a
channel named after something in the environment) becomes ``in_state``: it
must name something that exists in the candidate run's s0 too.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ._paths import canon, leaves
from ._policy import Constraint
from ._records import Snapshot
from ._volatile import as_clock, is_uuid


class StateValues:
    """The scalar values (key parts and field leaves) of a snapshot, by resource type."""

    def __init__(self, snap: Snapshot | None) -> None:
        self.snap = snap
        self._index: dict[str, set[str]] | None = None
        self._keys: set[str] | None = None

    def is_key(self, value: Any) -> bool:
        """Whether ``value`` is a key part of a record of the snapshot (a reference, not new)."""
        if self.snap is None:
            return False
        if self._keys is None:
            self._keys = {canon(k) for _, key in self.snap.raw for k in key}
        return canon(value) in self._keys

    def types_of(self, value: Any) -> set[str]:
        """Resource types holding ``value`` somewhere (empty when absent or no snapshot)."""
        if self.snap is None or isinstance(value, bool) or value is None:
            return set()
        if self._index is None:
            self._index = {}
            for rid in self.snap.raw:
                rtype, key = rid
                for k in key:
                    self._index.setdefault(canon(k), set()).add(rtype)
                for _, v in leaves(self.snap.fields(rid)):
                    for x in v if isinstance(v, list) else (v,):
                        if isinstance(x, str | int | float) and not isinstance(x, bool):
                            self._index.setdefault(canon(str(x)), set()).add(rtype)
        return self._index.get(canon(str(value)), set())


_TYPES = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def json_type(v: Any) -> str:
    """The JSON type name of a value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def _of_type(v: Any, t: str | None) -> bool:
    if t is None:
        return True
    if t == "null":
        return v is None
    if t in ("integer", "number") and isinstance(v, bool):
        return False
    return isinstance(v, _TYPES.get(t, (object,)))


def satisfies(
    c: Constraint,
    value: Any,
    *,
    before: Any = None,
    expected: Any = None,
    state: StateValues | None = None,
) -> bool:
    """Whether ``value`` meets the constraint.

    ``before``: the field's s0 value; ``expected``: the pinned value; ``state``:
    the candidate run's s0 values (for ``in_state``; without it the check fails).
    """
    if (c.prefix or c.suffix) and not (
        isinstance(value, str) and value.startswith(c.prefix) and value.endswith(c.suffix)
    ):
        return False
    if c.kind == "in_state":
        return state is not None and bool(state.types_of(value) & set(c.values))
    if c.kind == "any":
        return _of_type(value, c.type)
    if c.kind == "type":
        return _of_type(value, c.type)
    if c.kind == "range":
        return (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and (c.min is None or value >= c.min)
            and (c.max is None or value <= c.max)
        )
    if c.kind == "timestamp":
        return as_clock(value) is not None
    if c.kind == "uuid":
        return is_uuid(value)
    if c.kind == "increased":
        if not isinstance(value, int | float) or isinstance(value, bool):
            return False
        return before is None or (isinstance(before, int | float) and value > before)
    if c.kind == "set":
        members = c.values if c.values else expected
        return (
            isinstance(value, list)
            and isinstance(members, list)
            and sorted(map(canon, value)) == sorted(map(canon, members))
        )
    if c.kind == "one_of":
        return any(canon(value) == canon(v) for v in c.values)
    return False


def affixes(values: Sequence[Any]) -> tuple[str, str]:
    """The longest common prefix and suffix of string values (each 3+ characters, else '')."""
    if not values or not all(isinstance(v, str) for v in values):
        return "", ""
    pre = os.path.commonprefix(list(values))
    suf = os.path.commonprefix([v[::-1] for v in values])[::-1]
    shortest = min(len(v) for v in values)
    if len(pre) + len(suf) > shortest:  # overlapping: keep the prefix
        suf = suf[len(pre) + len(suf) - shortest :]
    return (pre if len(pre) >= 3 else ""), (suf if len(suf) >= 3 else "")


def relax(values: Sequence[Any], befores: Sequence[Any] = (), runs: int = 0) -> Constraint:
    """The narrowest constraint accepting every value (see the module docstring)."""
    n = runs or len(values)
    why = f"differs between {n} correct runs"
    if all(isinstance(v, list) for v in values):
        members = {canon(sorted(map(canon, v))) for v in values}
        if len(members) == 1:
            return Constraint(kind="set", values=list(values[0]), reason=f"{why} only in order")
    if all(as_clock(v) is not None for v in values):
        return Constraint(kind="timestamp", reason=f"{why}; all timestamps")
    if all(is_uuid(v) for v in values):
        return Constraint(kind="uuid", reason=f"{why}; all UUIDs")
    nums = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    if nums and befores and len(befores) == len(values):
        if all(
            isinstance(b, int | float) and not isinstance(b, bool) and v > b
            for v, b in zip(values, befores, strict=True)
        ):
            return Constraint(kind="increased", reason=f"{why}; each went up")
    if nums:
        return Constraint(kind="range", min=min(values), max=max(values), reason=f"{why}; numbers")
    distinct = {canon(v): v for v in values}
    if all(isinstance(v, bool) or (isinstance(v, str) and len(v) <= 40) for v in values) and len(
        distinct
    ) < len(values):
        return Constraint(
            kind="one_of", values=list(distinct.values()), reason=f"{why}; few values"
        )
    types = {json_type(v) for v in values}
    return Constraint(
        kind="any", type=types.pop() if len(types) == 1 else None, reason=f"{why}; free value"
    )
