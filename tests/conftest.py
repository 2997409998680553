"""Shared fixtures: a real store per test (chDB, and the server path on request).

chDB holds one directory per process, so the session shares one directory and
gives each test its own database. ``store_any`` runs a test on both backends:
chDB and the ClickHouse-HTTP stand-in (tests/_standin) reached through
clickhouse-connect.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

from flywheel import Store, open_store  # noqa: E402

_counter = itertools.count()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: pass --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def chdb_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The one chDB directory of this test process."""
    return str(tmp_path_factory.mktemp("chdb"))


def _fresh_chdb(chdb_dir: str) -> Store:
    db = f"t{os.getpid()}_{next(_counter)}"
    return open_store(f"chdb://{chdb_dir}?database={db}")


@pytest.fixture
def store(chdb_dir: str) -> Iterator[Store]:
    """A fresh, migrated chDB store (its own database)."""
    s = _fresh_chdb(chdb_dir)
    s.migrate()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture(scope="session")
def standin_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a running ClickHouse-HTTP stand-in (a subprocess over its own chDB dir)."""
    from tests._standin import running_standin

    with running_standin(tmp_path_factory.mktemp("standin")) as url:
        yield url


@pytest.fixture(params=["chdb", "server"])
def store_any(request: pytest.FixtureRequest, chdb_dir: str) -> Iterator[Store]:
    """A fresh migrated store on each backend: chDB, then the server path."""
    if request.param == "chdb":
        s = _fresh_chdb(chdb_dir)
    else:
        base = request.getfixturevalue("standin_url").rsplit("/", 1)[0]
        s = open_store(f"{base}/t{os.getpid()}_{next(_counter)}")
    s.migrate()
    try:
        yield s
    finally:
        s.close()
