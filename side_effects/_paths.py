"""Field paths inside a record: what changed, named down to the leaf.

A record's fields may nest (a JSON element keeps its nested objects and its
lists of objects without identity). Changes are reported by **path**:

* a nested object's field: ``address.city``;
* an element of a list of objects: ``flights[1].flight_number`` (the whole
  element, ``flights[2]``, when it was added or removed);
* a list of scalars is one leaf (``tags``): it is compared whole, or as a set
  where a scope says so.

Lists of objects are aligned by content before they are compared, so inserting
an element at the front is one added element, not a change of every later
position. ``leaves`` is the same naming for a whole record (a creation, an
expected record).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from typing import Any

#: Marks a field absent on one side of a change (distinct from JSON null).
MISSING: Any = None


def canon(v: Any) -> str:
    """Canonical JSON text of one value (sorted keys, compact)."""
    return json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _objects(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def leaves(fields: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every leaf: nested objects and lists of objects opened up."""
    if isinstance(fields, dict) and (fields or not prefix):
        for name, v in fields.items():
            yield from leaves(v, f"{prefix}.{name}" if prefix else str(name))
    elif _objects(fields):
        for i, x in enumerate(fields):
            yield from leaves(x, f"{prefix}[{i}]")
    else:
        yield prefix, fields


def flat(fields: dict[str, Any]) -> dict[str, Any]:
    """A record's leaves as one mapping path -> value."""
    return dict(leaves(fields))


def top_field(path: str) -> str:
    """The record field a path starts in (``flights[1].date`` -> ``flights``)."""
    cut = min((i for i in (path.find("."), path.find("[")) if i >= 0), default=len(path))
    return path[:cut]


def _align(before: list[Any], after: list[Any]) -> list[tuple[int | None, int | None]]:
    """Pairs of positions (None on one side: added or removed), equal elements kept together."""
    a = [canon(x) for x in before]
    b = [canon(x) for x in after]
    out: list[tuple[int | None, int | None]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        n = min(i2 - i1, j2 - j1) if op == "replace" else 0
        out.extend((i1 + k, j1 + k) for k in range(n))
        out.extend((i, None) for i in range(i1 + n, i2))
        out.extend((None, j) for j in range(j1 + n, j2))
    return out


def path_changes(before: Any, after: Any, prefix: str) -> Iterator[tuple[str, Any, Any, str]]:
    """(path, before, after, op) for every leaf that differs; op is added/removed/set."""
    if isinstance(before, dict) and isinstance(after, dict) and (before or after):
        for name in sorted(before.keys() | after.keys()):
            p = f"{prefix}.{name}" if prefix else str(name)
            if name not in after:
                yield p, before[name], MISSING, "removed"
            elif name not in before:
                yield p, MISSING, after[name], "added"
            elif canon(before[name]) != canon(after[name]):
                yield from path_changes(before[name], after[name], p)
        return
    if _objects(before) and _objects(after):
        for i, j in _align(before, after):
            if j is None:
                yield f"{prefix}[{i}]", before[i], MISSING, "removed"
            elif i is None:
                yield f"{prefix}[{j}]", MISSING, after[j], "added"
            else:
                yield from path_changes(before[i], after[j], f"{prefix}[{j}]")
        return
    yield prefix, before, after, "set"


def same_members(a: Any, b: Any) -> bool:
    """Two lists of scalars with the same members in another order."""
    return (
        isinstance(a, list)
        and isinstance(b, list)
        and len(a) == len(b)
        and a != b
        and not _objects(a)
        and sorted(map(canon, a)) == sorted(map(canon, b))
    )
