"""Shared by the compiled OTLP decoder's tests: the build guard and the batch comparison."""

from __future__ import annotations

import os

import pytest

from flywheel.ingest._decode import AVAILABLE


def require_built() -> None:
    """Skip the calling test module where the extension is not built; fail under CI."""
    if AVAILABLE:
        return
    if os.environ.get("CI"):
        pytest.fail("the compiled OTLP decoder was not built by `pip install -e .`", pytrace=False)
    pytest.skip("the compiled OTLP decoder is not built here (pip install -e . builds it)",
                allow_module_level=True)


def _values(col) -> list:
    """A column as Python values; timestamps as int64 nanoseconds (exact, and what the
    store's reads return), since pyarrow turns nanoseconds into datetimes only through pandas."""
    import pyarrow as pa

    if pa.types.is_timestamp(col.type):
        col = col.cast(pa.int64())
    elif pa.types.is_list(col.type) and pa.types.is_timestamp(col.type.value_type):
        col = col.cast(pa.list_(pa.int64()))
    return col.to_pylist()


def assert_same_batch(got, want) -> None:
    """Two ``DecodedBatch``es with equal tables (first differing column named), rejects and cuts."""
    assert got.table.schema.equals(want.table.schema)
    for name in want.table.column_names:
        a, b = _values(got.table[name]), _values(want.table[name])
        assert a == b, (name, next((x, y) for x, y in zip(a, b, strict=True) if x != y))
    assert got.table.equals(want.table)
    assert (got.rejected, got.reasons) == (want.rejected, want.reasons)
    assert dict(got.truncated) == dict(want.truncated)
