"""The ClickHouse-HTTP stand-in answers clickhouse-connect's real wire protocol.

One stand-in subprocess for the module; each test works in its own database.
"""

from __future__ import annotations

import datetime as dt
import itertools
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import clickhouse_connect
import pyarrow as pa
import pytest
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import DatabaseError

from tests._standin import running_standin, start_standin

_ids = itertools.count()

TABLE = """
CREATE TABLE spans (
    Timestamp DateTime64(9),
    TraceId String,
    ServiceName LowCardinality(String),
    SpanAttributes Map(LowCardinality(String), String),
    Duration UInt64,
    Events Nested(Timestamp DateTime64(9), Name LowCardinality(String))
) ENGINE = MergeTree ORDER BY (ServiceName, Timestamp)
"""
COLUMNS = [
    "Timestamp",
    "TraceId",
    "ServiceName",
    "SpanAttributes",
    "Duration",
    "Events.Timestamp",
    "Events.Name",
]
T0 = dt.datetime(2026, 11, 30, 12, 0, 0, 123456)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    host, port, stop = start_standin(tmp_path_factory.mktemp("standin") / "chdb")
    try:
        yield host, port
    finally:
        stop()


def connect(server: tuple[str, int], database: str | None = "default", **kw: Any) -> Client:
    host, port = server
    return clickhouse_connect.get_client(
        host=host, port=port, username="default", password="", database=database, **kw
    )


@pytest.fixture
def client(server: tuple[str, int]) -> Iterator[Client]:
    """A client on a fresh database holding an empty ``spans`` table."""
    db = f"db{next(_ids)}"
    connect(server).command(f"CREATE DATABASE {db}")
    c = connect(server, db)
    c.command(TABLE)
    try:
        yield c
    finally:
        c.close()


def rows(n: int) -> list[list[object]]:
    return [
        [T0 + dt.timedelta(microseconds=i) for i in range(n)],
        [f"{i:032x}" for i in range(n)],
        [f"svc{i % 3}" for i in range(n)],
        [{"gen_ai.tool.name": f"tool{i % 5}", "k": "v\t'x'"} for i in range(n)],
        list(range(n)),
        [[T0] * (i % 3) for i in range(n)],
        [["ev"] * (i % 3) for i in range(n)],
    ]


def test_ping_and_handshake(server: tuple[str, int]) -> None:
    host, port = server
    with urllib.request.urlopen(f"http://{host}:{port}/ping") as resp:
        assert resp.read() == b"Ok.\n"
    c = connect(server)
    assert (c.server_version or "").count(".") >= 2
    assert c.command("SELECT 1 + 1") == 2
    assert c.command("SELECT 'a', 'b'") == ["a", "b"]


def test_column_insert_and_typed_read(client: Client) -> None:
    client.insert("spans", rows(100), column_names=COLUMNS, column_oriented=True)
    desc = {r[0]: r[1] for r in client.query("DESCRIBE TABLE spans").result_rows}
    assert desc["SpanAttributes"] == "Map(LowCardinality(String), String)"
    assert desc["Events.Timestamp"] == "Array(DateTime64(9))"
    r = client.query("SELECT * FROM spans ORDER BY Duration LIMIT 3")
    first = dict(zip(r.column_names, r.result_rows[0], strict=True))
    assert first["Timestamp"] == T0
    assert first["SpanAttributes"] == {"gen_ai.tool.name": "tool0", "k": "v\t'x'"}
    assert first["ServiceName"] == "svc0"
    assert dict(zip(r.column_names, r.result_rows[2], strict=True))["Events.Name"] == ["ev", "ev"]


def test_bound_parameters(client: Client) -> None:
    client.insert("spans", rows(30), column_names=COLUMNS, column_oriented=True)
    q = "SELECT count() FROM spans WHERE ServiceName = {s:String} AND Duration >= {d:UInt64}"
    assert client.query(q, parameters={"s": "svc1", "d": 10}).result_rows == [(7,)]
    q = "SELECT count() FROM spans WHERE Timestamp > {t:DateTime64(9)}"
    assert client.query(q, parameters={"t": T0 + dt.timedelta(microseconds=19)}).result_rows == [
        (10,)
    ]
    q = "SELECT count() FROM spans WHERE ServiceName IN {s:Array(String)}"
    assert client.query(q, parameters={"s": ["svc0", "svc2"]}).result_rows == [(20,)]
    odd = "tab\there\nnew 'quote' back\\slash \u00e9\u4e2d"
    assert client.query("SELECT {x:String}", parameters={"x": odd}).result_rows == [(odd,)]


def test_long_parameter_goes_as_form(client: Client) -> None:
    big = "x" * 20_000  # over clickhouse-connect's URL limit: sent as multipart/form-data
    assert client.query("SELECT length({x:String})", parameters={"x": big}).result_rows == [
        (20_000,)
    ]


def test_insert_arrow_and_query_arrow(client: Client) -> None:
    n = 50
    ts = pa.array([1_764_504_000_000_000_000 + i for i in range(n)], pa.timestamp("ns"))
    attrs = pa.array([[("a", str(i))] for i in range(n)], pa.map_(pa.string(), pa.string()))
    table = pa.table(
        {
            "Timestamp": ts,
            "TraceId": pa.array([f"t{i}" for i in range(n)]),
            "ServiceName": pa.array(["arrow"] * n),
            "SpanAttributes": attrs,
            "Duration": pa.array(range(n), pa.uint64()),
        }
    )
    client.insert_arrow("spans", table)
    out = client.query_arrow(
        "SELECT Timestamp, TraceId, SpanAttributes FROM spans"
        " WHERE ServiceName = {s:String} ORDER BY Timestamp",
        parameters={"s": "arrow"},
    )
    assert out.num_rows == n
    assert out.column("TraceId").to_pylist()[:2] == ["t0", "t1"]
    assert out.column("SpanAttributes").to_pylist()[3] == [("a", "3")]
    assert out.column("Timestamp").cast(pa.int64()).to_pylist()[1] == 1_764_504_000_000_000_001


def test_sql_error_is_database_error(client: Client) -> None:
    with pytest.raises(DatabaseError) as err:
        client.query("SELECT * FROM no_such_table")
    assert "Code: 60" in str(err.value) and "DB::Exception" in str(err.value)
    assert "UNKNOWN_TABLE" in str(err.value)
    with pytest.raises(DatabaseError, match="SYNTAX_ERROR"):
        client.command("SELEC 1")
    assert client.command("SELECT 7") == 7  # the connection and session still work


def test_settings_apply_to_one_request(client: Client) -> None:
    default = client.command("SELECT getSetting('max_block_size')")
    assert (
        client.command("SELECT getSetting('max_block_size')", settings={"max_block_size": 1234})
        == 1234
    )
    assert client.command("SELECT getSetting('max_block_size')") == default
    with pytest.raises(DatabaseError, match="UNKNOWN_SETTING"):
        client.query("SELECT 1", settings={"no_such_setting_xyz": 1})
    assert client.command("SELECT 8") == 8


@pytest.mark.parametrize("compress", ["lz4", "zstd", "gzip", False])
def test_compression(server: tuple[str, int], client: Client, compress: str | bool) -> None:
    c = connect(server, client.database, compress=compress)
    c.insert("spans", rows(500), column_names=COLUMNS, column_oriented=True)
    assert c.query("SELECT count(), sum(Duration) FROM spans").result_rows == [
        (500, sum(range(500)))
    ]
    assert c.query_arrow("SELECT TraceId FROM spans").num_rows == 500


def test_databases_per_client(server: tuple[str, int], client: Client) -> None:
    other = f"db{next(_ids)}"
    client.command(f"CREATE DATABASE {other}")
    c2 = connect(server, other)
    c2.command("CREATE TABLE spans (x UInt8) ENGINE = Memory")
    c2.insert("spans", [[1, 2, 3]], column_names=["x"], column_oriented=True)
    client.insert("spans", rows(4), column_names=COLUMNS, column_oriented=True)
    assert c2.command("SELECT count() FROM spans") == 3
    assert client.command("SELECT count() FROM spans") == 4


def test_concurrent_clients(server: tuple[str, int], client: Client) -> None:
    errors: list[BaseException] = []

    def work() -> None:
        try:
            c = connect(server, client.database)
            for _ in range(5):
                c.insert("spans", rows(20), column_names=COLUMNS, column_oriented=True)
                c.query(
                    "SELECT count() FROM spans WHERE ServiceName = {s:String}",
                    parameters={"s": "svc1"},
                )
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert client.command("SELECT count() FROM spans") == 4 * 5 * 20


def test_insert_20k_rows_is_fast(client: Client) -> None:
    data = rows(20_000)
    client.insert("spans", rows(10), column_names=COLUMNS, column_oriented=True)  # warm-up
    t = time.perf_counter()
    client.insert("spans", data, column_names=COLUMNS, column_oriented=True)
    elapsed = time.perf_counter() - t
    assert client.command("SELECT count() FROM spans") == 20_010
    # ~0.05-0.1 s measured on an idle machine; slack for a loaded one
    assert elapsed < 2.0, f"20k-row insert took {elapsed:.2f}s"


def test_running_standin_url(tmp_path: Path) -> None:
    with running_standin(tmp_path) as url:
        assert url.startswith("clickhouse://default:@127.0.0.1:") and url.endswith("/flywheel")
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ping") as resp:
            assert resp.status == 200
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/ping", timeout=2)


def test_use_statement_does_not_leak_into_other_requests(server: tuple[str, int]) -> None:
    db = f"db{next(_ids)}"
    a = connect(server)
    a.command(f"CREATE DATABASE {db}")
    a.command(f"USE {db}")
    assert a.command("SELECT currentDatabase()") == "default"  # each request names its database
