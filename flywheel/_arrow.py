"""Arrow <-> Python conversion shared by both store backends.

Both backends get their results from the ClickHouse engine as Arrow, so the
rows they return are identical: timestamps as integer nanoseconds since the
epoch (UTC), maps as dicts, arrays as lists.
"""

from __future__ import annotations

import datetime as dt
import importlib.abc
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .errors import UserError


class _PandasHidden(importlib.abc.MetaPathFinder):
    """Answers ``import pandas`` with "not installed" while it is on ``sys.meta_path``."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def pyarrow_without_pandas() -> bool:
    """Settle pyarrow's pandas check once, without importing pandas; True if it did.

    pyarrow imports pandas (about 0.25 s of CPU and 40 MB of memory) the
    first time it builds an array from Python objects, only to ask whether
    the input is a pandas object. Nothing in flywheel hands it one, so the
    check is made here once while pandas is hidden: pyarrow records "no
    pandas" and never imports it, which takes a quarter of a second off
    every command that reads the store. ``import pandas`` elsewhere still
    works (the finder is removed at once), and a process that imported pandas
    before this keeps pyarrow's pandas support (nothing is changed then).
    Without pandas, pyarrow turns a nanosecond timestamp into Python only as
    an integer: cast to int64 first, as the store's reads do (``_plain``).
    """
    if "pandas" in sys.modules:
        return False
    finder = _PandasHidden()
    sys.meta_path.insert(0, finder)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(finder)
    return True


pyarrow_without_pandas()

_WRAPPERS = re.compile(r"^(LowCardinality|Nullable|SimpleAggregateFunction)\((.*)\)$")


def _unwrap(ch_type: str) -> tuple[str, bool]:
    nullable = False
    while True:
        m = _WRAPPERS.match(ch_type)
        if not m:
            return ch_type, nullable
        if m.group(1) == "Nullable":
            nullable = True
        inner = m.group(2)
        if m.group(1) == "SimpleAggregateFunction":
            inner = inner.split(",", 1)[1].strip()
        ch_type = inner


def _split_args(s: str) -> list[str]:
    """Split ``A, B(C, D), E`` at top-level commas."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur).strip())
    return out


def arrow_type(ch_type: str) -> pa.DataType:
    """The Arrow type that ClickHouse reads into ``ch_type`` without loss."""
    t, _ = _unwrap(ch_type.strip())
    simple = {
        "String": pa.string(), "UUID": pa.string(), "Bool": pa.bool_(),
        "UInt8": pa.uint8(), "UInt16": pa.uint16(), "UInt32": pa.uint32(), "UInt64": pa.uint64(),
        "Int8": pa.int8(), "Int16": pa.int16(), "Int32": pa.int32(), "Int64": pa.int64(),
        "Float32": pa.float32(), "Float64": pa.float64(), "Date": pa.date32(),
        "DateTime": pa.timestamp("s"),
    }
    if t in simple:
        return simple[t]
    if t.startswith("Enum"):
        return pa.string()
    if t.startswith("FixedString"):
        return pa.string()
    if t.startswith("DateTime64"):
        return pa.timestamp("ns")
    if t.startswith("DateTime("):
        return pa.timestamp("s")
    if t.startswith("Array("):
        return pa.list_(arrow_type(t[6:-1]))
    if t.startswith("Map("):
        k, v = _split_args(t[4:-1])
        return pa.map_(arrow_type(k), arrow_type(v))
    if t.startswith("Tuple("):
        parts = _split_args(t[6:-1])
        return pa.struct([(f"{i + 1}", arrow_type(p)) for i, p in enumerate(parts)])
    if t.startswith("JSON") or t.startswith("Object"):
        return pa.string()
    raise UserError(f"column type {ch_type} cannot be inserted from Python columns")


def _to_ns(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=dt.UTC)
        return int(v.timestamp()) * 1_000_000_000 + v.microsecond * 1000
    return v


def _prepare(values: Sequence[Any], typ: pa.DataType) -> Any:
    if pa.types.is_timestamp(typ):
        return [_to_ns(v) for v in values]
    if pa.types.is_map(typ):
        return [list(v.items()) if isinstance(v, Mapping) else v for v in values]
    if pa.types.is_list(typ):
        inner = typ.value_type
        if pa.types.is_timestamp(inner) or pa.types.is_map(inner):
            return [None if v is None else _prepare(v, inner) for v in values]
    return values


def columns_to_arrow(
    columns: Mapping[str, Sequence[Any]], schema: Mapping[str, str]
) -> pa.Table:
    """Build an Arrow table typed by the ClickHouse column types in ``schema``.

    Columns missing from ``columns`` are left out (their DEFAULT applies);
    unknown names are a ``UserError`` so a typo never drops data silently.
    """
    unknown = [c for c in columns if c not in schema]
    if unknown:
        raise UserError(f"unknown column(s) {', '.join(unknown)}")
    arrays, names, length = [], [], None
    for name, values in columns.items():
        if isinstance(values, pa.Array | pa.ChunkedArray):
            arr = values
        else:
            typ = arrow_type(schema[name])
            arr = pa.array(_prepare(list(values), typ), type=typ)
        if length is None:
            length = len(arr)
        elif len(arr) != length:
            raise UserError(f"column {name} has {len(arr)} values, expected {length}")
        arrays.append(arr)
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names)


def _plain(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """Cast timestamps (also nested in lists) to int64 ns and binary to string."""
    t = col.type
    if pa.types.is_timestamp(t):
        return pc.cast(pc.cast(col, pa.timestamp("ns")), pa.int64())
    if pa.types.is_list(t) and pa.types.is_timestamp(t.value_type):
        return pc.cast(col, pa.list_(pa.int64()))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return pc.cast(col, pa.string())
    if pa.types.is_date32(t):
        return col
    return col




def arrow_to_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows as plain Python dicts (see the module docstring for the types).

    Converted column by column (several times faster than row by row for
    map-heavy rows), then zipped into dicts.
    """
    names = table.column_names
    if not names:
        return []
    columns = []
    for name in names:
        col = _plain(table.column(name))
        values = col.to_pylist()
        if pa.types.is_map(col.type):
            values = [dict(v) if v is not None else {} for v in values]
        elif pa.types.is_list(col.type) and pa.types.is_map(col.type.value_type):
            values = [[dict(x) for x in v] if v is not None else [] for v in values]
        columns.append(values)
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]
