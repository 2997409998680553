"""Fixtures of the reviewer-app tests: real drafted candidates, a live API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import re

import pyarrow as pa
import pytest

from flywheel import Store
from tests.ingest._server import running_server
from tests.tui._fixture import drafted_candidates


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def drafted(store: Store) -> tuple[Store, list[str]]:
    """The store with three drafted candidates from the promotion pipeline.

    The pipeline (sample, dedupe, redact, draft) runs for real in the first test of
    each test process; its rows are kept and put back for the later tests, which
    get the same candidates, ids and clocks (a second or more of CPU a test saved).
    """
    global _DRAFTED
    if _DRAFTED is None:
        ids = drafted_candidates(store)
        _DRAFTED = (ids, _rows(store))
        return store, ids
    ids, rows = _DRAFTED
    for table, data in rows.items():
        store.insert(table, data)
    return store, list(ids)


_DRAFTED: tuple[list[str], dict[str, pa.Table]] | None = None


def _rows(store: Store) -> dict[str, pa.Table]:
    """Every non-empty table's rows, less the tables materialized views fill
    (inserting their sources fills them again)."""
    views = store.query(
        "SELECT create_table_query AS q FROM system.tables"
        " WHERE database = currentDatabase() AND engine = 'MaterializedView'"
    )
    filled = {m.group(1) for v in views if (m := re.search(r"\bTO\s+(?:`?\w+`?\.)?`?(\w+)", v["q"]))}
    assert len(filled) == len(views), "a materialized view without a TO table"
    out = {}
    for row in store.query(
        "SELECT name FROM system.tables WHERE database = currentDatabase()"
        " AND engine NOT LIKE '%View' AND engine != 'Dictionary' AND name != 'schema_migrations'"
        " ORDER BY name"
    ):
        name = row["name"]
        if name not in filled and store.scalar(f"SELECT count() FROM `{name}`"):
            out[name] = store.query_arrow(f"SELECT * FROM `{name}`")
    return out


@pytest.fixture
def api(drafted: tuple[Store, list[str]], tmp_path: Path) -> Iterator[str]:
    """Base URL of the real platform (uvicorn in a thread) over the drafted store."""
    store, _ = drafted
    with running_server(store, tmp_path / "wal") as (url, _app):
        yield url
