"""Shared fixtures: a real store per test (chDB, and the server path on request).

chDB holds one directory per process, so the session shares one directory; each
test process migrates one database once and empties it before each test.
``store_any`` runs a test on both backends:
chDB and the ClickHouse-HTTP stand-in (tests/_standin) reached through
clickhouse-connect.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

from hypothesis import settings  # noqa: E402

# Properties, not timings: Hypothesis's default 200 ms deadline per example fails a test
# when a shared 2-core machine stalls it (speed targets live in bench/).
settings.register_profile("flywheel", deadline=None)
settings.load_profile("flywheel")

from flywheel import Store, open_store  # noqa: E402


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


def pytest_configure(config: pytest.Config) -> None:
    # Read by tests/_budget.py when test modules are imported (after this hook).
    if config.getoption("--runslow"):
        os.environ["FLYWHEEL_RUNSLOW"] = "1"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one and a half workers per core (three on two cores).

    Many tests wait on a server subprocess, a socket or a disk flush rather than
    compute; a third worker on two cores fills those waits (the whole suite ran
    281 -> 263 s wall on two cores, warm bytecode).
    """
    cores = os.cpu_count() or 1
    return max(1, cores + cores // 2)


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


class _Template:
    """One migrated database per test process, emptied between tests.

    Migrating costs 0.4-0.7 s (about 30 tables and views); emptying the
    migrated tables and dropping anything a test added costs about 30 ms.
    TRUNCATE also resets a table's insert-deduplication log, so a test sees
    exactly what a freshly migrated store would show.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        s = open_store(url)
        try:
            s.migrate()
            self.owned = {r["name"] for r in s.query(_TABLES)}
            self.dedupe_log = {r["name"] for r in s.query(
                "SELECT name FROM system.tables WHERE database = currentDatabase()"
                " AND position(create_table_query, 'deduplication_window') > 0")}
        finally:
            s.close()

    def fresh(self) -> Store:
        """A store on the migrated database, empty as after ``migrate()``.

        A table with no rows is left alone unless it keeps an insert-deduplication log
        (most tests touch a few tables; a TRUNCATE of each of the ~30 costs more than
        the test).
        """
        s = open_store(self.url)
        for row in s.query(_TABLES):
            name, engine = row["name"], row["engine"]
            if name not in self.owned:
                s.command(f"DROP {'VIEW' if 'View' in engine else 'TABLE'} IF EXISTS `{name}` SYNC")
            elif ("View" not in engine and engine != "Dictionary"
                  and name != "schema_migrations"
                  and (row["total_rows"] != 0 or name in self.dedupe_log)):
                s.command(f"TRUNCATE TABLE IF EXISTS `{name}`")
        return s


_TABLES = "SELECT name, engine, total_rows FROM system.tables WHERE database = currentDatabase()"


@pytest.fixture(scope="session")
def _chdb_template(chdb_dir: str) -> _Template:
    return _Template(f"chdb://{chdb_dir}?database=t{os.getpid()}")


@pytest.fixture
def store(_chdb_template: _Template) -> Iterator[Store]:
    """A migrated chDB store with nothing in it (the process's test database, emptied)."""
    s = _chdb_template.fresh()
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


@pytest.fixture(scope="session")
def _server_template(standin_url: str) -> _Template:
    base = standin_url.rsplit("/", 1)[0]
    return _Template(f"{base}/t{os.getpid()}")


@pytest.fixture(params=["chdb", "server"])
def store_any(request: pytest.FixtureRequest) -> Iterator[Store]:
    """A migrated, empty store on each backend: chDB, then the server path."""
    name = "_chdb_template" if request.param == "chdb" else "_server_template"
    s = request.getfixturevalue(name).fresh()
    try:
        yield s
    finally:
        s.close()
