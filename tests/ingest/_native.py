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


def assert_same_batch(got, want) -> None:
    """Two ``DecodedBatch``es with equal tables (first differing column named), rejects and cuts."""
    assert got.table.schema.equals(want.table.schema)
    for name in want.table.column_names:
        a, b = got.table[name].to_pylist(), want.table[name].to_pylist()
        assert a == b, (name, next((x, y) for x, y in zip(a, b, strict=True) if x != y))
    assert got.table.equals(want.table)
    assert (got.rejected, got.reasons) == (want.rejected, want.reasons)
    assert dict(got.truncated) == dict(want.truncated)
