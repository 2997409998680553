"""Fixtures of the reviewer-app tests: real drafted candidates, a live API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from flywheel import Store
from tests.ingest._server import running_server
from tests.tui._fixture import drafted_candidates


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def drafted(store: Store) -> tuple[Store, list[str]]:
    """The store with three drafted candidates from the promotion pipeline."""
    return store, drafted_candidates(store)


@pytest.fixture
def api(drafted: tuple[Store, list[str]], tmp_path: Path) -> Iterator[str]:
    """Base URL of the real platform (uvicorn in a thread) over the drafted store."""
    store, _ = drafted
    with running_server(store, tmp_path / "wal") as (url, _app):
        yield url
