"""Typed diff: kinds, field-level changes, stable order, and a reconstruction property."""

from __future__ import annotations

from typing import Any

from flywheel.side_effects import Record, Snapshot, diff
from hypothesis import given, settings
from hypothesis import strategies as st

Rid = tuple[str, tuple[str, ...]]


def _snap(recs: dict[Rid, dict[str, Any]]) -> Snapshot:
    return Snapshot.from_records(Record(rt, k, f) for (rt, k), f in recs.items())


def test_kinds_and_field_changes() -> None:
    a = _snap({("t", ("1",)): {"x": 1, "y": "a", "z": 0}, ("t", ("2",)): {"x": 2}})
    b = _snap({("t", ("1",)): {"x": 1, "y": "b", "w": True}, ("t", ("3",)): {"x": 3}})
    ds = diff(a, b)
    assert [(d.kind, d.key) for d in ds] == [
        ("updated", ("1",)),
        ("deleted", ("2",)),
        ("created", ("3",)),
    ]
    ch = {c.field: (c.op, c.before, c.after) for c in ds[0].changes}
    assert ch == {"w": ("added", None, True), "y": ("set", "a", "b"), "z": ("removed", 0, None)}


def test_int_and_float_of_equal_value_differ_as_text() -> None:
    [d] = diff(_snap({("t", ("1",)): {"x": 1}}), _snap({("t", ("1",)): {"x": 1.5}}))
    assert d.changes[0].after == 1.5


def test_order_is_natural_and_stable() -> None:
    a = _snap({})
    b = _snap({("t", (str(i),)): {"v": i} for i in (10, 2, 1)} | {("a", ("z",)): {}})
    assert [d.ref for d in diff(a, b)] == ["a[z]", "t[1]", "t[2]", "t[10]"]


records = st.dictionaries(
    st.tuples(st.sampled_from(["t", "u"]), st.tuples(st.text("ab1", min_size=1, max_size=3))),
    st.dictionaries(
        st.sampled_from(["f", "g", "h"]),
        st.one_of(st.integers(-3, 3), st.text("xy", max_size=2), st.none()),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(records, records)
def test_applying_the_diff_reconstructs_the_after_state(a: dict, b: dict) -> None:
    s0, s1 = _snap(a), _snap(b)
    state = {rid: s0.fields(rid) for rid in s0.raw}
    for d in diff(s0, s1):
        if d.kind == "deleted":
            del state[d.rid]
        elif d.kind == "created":
            assert d.rid not in state
            state[d.rid] = dict(d.after or {})
        else:
            f = state[d.rid]
            for c in d.changes:
                if c.op == "removed":
                    del f[c.field]
                else:
                    f[c.field] = c.after
    assert state == {rid: s1.fields(rid) for rid in s1.raw}
