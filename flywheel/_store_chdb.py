"""The embedded backend: chDB, ClickHouse in-process over a persistent directory.

chDB runs one embedded server per process, bound to one directory: opening a
second directory in the same process is a ``UserError`` that says so.

Every store object of the process shares one chDB session (``_Engine``) and
switches it to its own database before each statement. A chDB session does
not give back everything it took when closed (about 4 file descriptors and 5
threads stay behind per session), so a process that opened a session per
command or per API call ran out of descriptors; closing a store releases the
object (using it afterwards is an error) and the one session stays for the
process.

The engine starts with ``ENGINE_CONFIG`` (written beside the store as
``flywheel_chdb.xml``): merges read and write one column at a time (a span
part is a few wide Map columns; merging them row-wise held every column's
blocks at once, about 180 MB of the peak under ingest load), and the span
table's skip indexes that no read path uses are not built (``UNBUILT_INDEXES``:
neither by inserts nor by merges). While the
process idles, ``release_memory`` gives back what chDB freed (its own
jemalloc's pages) and the pages of its 555 MB library that nothing is running
(see ``_memory``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

from ._memory import drop_library_pages, trim_heap
from ._store import DEDUP_SETTINGS, SQL_ESCAPES, Params, Store, _store_error, sql_string
from .errors import FlywheelError, StoreUnavailable, UserError

log = logging.getLogger("flywheel")
_server_lock = threading.Lock()

#: Skip indexes of the collector's span table (ingest migration 001) that no read path uses:
#: every read of the span table filters by TraceId (``idx_trace_id`` stays) and ProjectId, and
#: nothing outside this process reads an embedded store. Building them was a quarter of the
#: store's CPU per span under the agents workload (bloom filters over every attribute key and
#: value, at the insert and again at each merge; bench/ingest_store_cost.py). The definitions
#: stay (the table keeps the collector's shape); a ClickHouse server's tables are not touched.
UNBUILT_INDEXES = ("idx_res_attr_key", "idx_res_attr_value", "idx_span_attr_key",
                   "idx_span_attr_value", "idx_duration", "idx_lower_span_name")
#: Server settings of the embedded engine (ClickHouse config XML). Vertical merges from 16,384
#: rows (ClickHouse's default: 131,072; still only tables of 11 columns or more) and small
#: merge blocks: the span table's parts are a few wide Map columns, and a row-wise merge
#: holds every column's blocks at once (measured: peak RSS under the agents
#: workload 930 -> 741 MiB at 20,000-span inserts, the same peak as with merges stopped).
#: Granules of at most 1 MiB (ClickHouse's default: 10 MiB, which is 8,192 spans of ~1.1 KB)
#: and compressed blocks of at most 256 KiB (default 1 MiB): a merge reads a granule of every
#: part it merges and holds a compressed block per column stream, and a part writer holds two
#: buffers of the compressed block size per stream (a span part has 60 streams). Measured
#: with ClickHouse's own accounting (system.part_log, query_log), agents workload: merging six
#: 20,000-span parts 110 -> 29 MiB (span table) and 60 -> 16 MiB (agent_steps), a 20,000-span
#: insert 171 -> 133 MiB. Paired bench/ingest_throughput.py runs (load 4-7): peak RSS 726-783
#: -> 628-674 MiB at 500 spans/request, 663-733 -> 618-686 at 100 (bench/ingest_store_cost.py
#: clickhouse-granules: the defaults again). Kept against the defaults on compact inserts (3
#: pairs, 500 spans/request, load 5.5-9.3): peak 618-629 here vs 727-759 MiB, server CPU per
#: span ratio 1.01 (0.97-1.07): the defaults merge a little cheaper and insert a little dearer.
#: Parts are compact (one data file and one marks file) below 64 MiB uncompressed, which an
#: insert of ``batch_spans`` (20,000 spans: 22 MiB of spans, 15 of agent steps) stays under,
#: and wide from there (ClickHouse's default: from 10 MiB), so merged parts are still written
#: column by column. A wide span part is ~130 files and a steps part ~100: creating them was
#: about 30 % of the insert threads' CPU under load, in the kernel (ext4 inode allocation
#: passing recently deleted inodes; perf on a served store, agents workload). Compact: 13 and 11 files; the insert's CPU
#: 0.79x, merges of compact parts 1.10x (bench/ingest_store_cost.py --steady, compact-inserts).
#: Parts from this many compressed bytes are written with ZSTD(1), smaller ones with LZ4
#: (``ENGINE_CONFIG``'s <compression>; ClickHouse picks by the merged part's size, and an
#: insert's part is always of the smallest kind). The span table's columns compress with
#: the engine's choice (``span_codecs``: CODEC(Default) where the collector wrote ZSTD(1)),
#: so young parts, which merges rewrite again and again, are cheap to write, and the parts
#: that stay compress as the collector's table does. Compressing the span table's parts
#: with ZSTD(1), at the insert and at every merge, was a third of the store's CPU per span
#: under the agents workload (bench/ingest_store_cost.py spans-lz4: store 18.9 -> 13.7
#: us/span; --steady: merges 0.66x, inserts 0.96x). On text, LZ4 takes about 1.9x the disk
#: of ZSTD(1) (3.4 -> 1.8 compression of LLM-like messages): only parts under this size do.
ZSTD_FROM_BYTES = 64 << 20
ENGINE_CONFIG = """<clickhouse>
  <merge_tree>
    <min_bytes_for_wide_part>67108864</min_bytes_for_wide_part>
    <vertical_merge_algorithm_min_rows_to_activate>16384</vertical_merge_algorithm_min_rows_to_activate>
    <merge_max_block_size>2048</merge_max_block_size>
    <index_granularity_bytes>1048576</index_granularity_bytes>
    <max_compress_block_size>262144</max_compress_block_size>
    <exclude_materialize_skip_indexes_on_merge>{x}</exclude_materialize_skip_indexes_on_merge>
  </merge_tree>
  <compression>
    <case>
      <min_part_size>{z}</min_part_size>
      <min_part_size_ratio>0</min_part_size_ratio>
      <method>zstd</method>
      <level>1</level>
    </case>
  </compression>
</clickhouse>
""".format(x=", ".join(UNBUILT_INDEXES), z=ZSTD_FROM_BYTES)
#: Settings of every insert into the embedded store.
INSERT_SETTINGS = {
    "exclude_materialize_skip_indexes_on_insert": "'" + ", ".join(UNBUILT_INDEXES) + "'"}
#: The part of chDB's shared library path that names it in /proc/self/maps.
_LIBRARY = "/chdb/_chdb"


class _Engine:
    """The process's one chDB session, the database it is on, and its lock."""

    def __init__(self, path: str, session: Any) -> None:
        self.path = path
        self.session = session
        self.database = ""
        self.lock = threading.RLock()


_engine: _Engine | None = None


def _identifier(name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise UserError(f"invalid database or table name {name!r}")
    return name


class ChdbStore(Store):
    """A store in a local directory through chDB."""

    def __init__(self, path: str, *, database: str = "flywheel", url: str | None = None) -> None:
        super().__init__()
        self.path = str(Path(path).expanduser().resolve())
        self.database = _identifier(database)
        self.url = url or f"chdb://{self.path}"
        self._engine = _open_engine(self.path, self.url)
        self._closed = False
        with self._engine.lock:  # before the first USE of it
            try:
                self._engine.session.query(f"CREATE DATABASE IF NOT EXISTS {self.database}")
            except Exception as exc:
                raise _query_error(exc, "CREATE DATABASE") from exc

    def _run(self, sql: str, fmt: str = "CSV", params: Params = None) -> Any:
        with self._engine.lock:
            session = self._session_here()
            try:
                if params:
                    return session.query(sql, fmt, params=_params(params))
                return session.query(sql, fmt)
            except Exception as exc:
                raise _query_error(exc, sql) from exc

    def _session_here(self) -> Any:
        """The shared session, on this store's database (under the engine's lock)."""
        if self._closed:
            raise FlywheelError(f"the store {self.url} is closed; open it again")
        engine = self._engine
        if engine.database != self.database:
            try:
                engine.session.query(f"USE {self.database}")
            except Exception as exc:
                raise _query_error(exc, "USE") from exc
            engine.database = self.database
        return engine.session

    def query_arrow(self, sql: str, params: Params = None) -> pa.Table:
        res = self._run(
            sql + "\nSETTINGS output_format_arrow_string_as_string = 1", "ArrowStream", params
        )
        data = res.bytes()
        if not data:
            return pa.table({})
        return ipc.open_stream(pa.py_buffer(data)).read_all()

    def command(self, sql: str, params: Params = None) -> None:
        self._run(sql, "CSV", params)

    def _insert_arrow(self, table: str, data: pa.Table, token: str | None) -> None:
        cols = ", ".join(f"`{c}`" for c in data.column_names)
        sql = f"INSERT INTO {_identifier(table)} ({cols}) SELECT * FROM Python(arrow_data)"
        settings = dict(INSERT_SETTINGS)
        if token:  # validated by Store.insert: [A-Za-z0-9_.:/-]
            settings.update(insert_deduplication_token=f"'{token}'", **DEDUP_SETTINGS)
        sql += " SETTINGS " + ", ".join(f"{k} = {v}" for k, v in settings.items())
        with self._engine.lock:
            session = self._session_here()
            try:
                _insert_from(session, sql, data)
            except Exception as exc:
                raise _query_error(exc, sql) from exc

    def migrate(self, packages: Sequence[str] | None = None) -> list[str]:
        """Apply pending migrations, then the span table's codecs (``span_codecs``)."""
        applied = super().migrate(packages)
        span_codecs(self)
        return applied

    def close(self) -> None:
        """Release this store object; the process's one chDB session stays (see above)."""
        self._closed = True

    def release_memory(self) -> dict[str, int]:
        """Give back heap chDB freed and the library pages it is not running (call when idle).

        chDB allocates through its own jemalloc (linked into the library, so
        ``malloc_trim`` does not reach it), which keeps freed pages for 5 s
        and longer while nothing allocates; ``SYSTEM JEMALLOC PURGE`` returns them.
        """
        with self._engine.lock:  # no statement runs meanwhile
            return {"engine_purged": _purge_engine_heap(self._engine.session),
                    "heap_trimmed": trim_heap(), "library_bytes": drop_library_pages(_LIBRARY)}


def span_codecs(store: ChdbStore) -> list[str]:
    """Span table columns that compressed with ZSTD(1), now with the engine's choice.

    ``CODEC(Default)`` in place of ``ZSTD(1)`` (a Delta or T64 before it stays):
    LZ4 for young parts, ZSTD(1) from ``ZSTD_FROM_BYTES``. A metadata change:
    parts written before keep their codec until a merge rewrites them; a store
    already changed is left as it is. Returns the columns changed.
    """
    rows = store.query(
        "SELECT name, compression_codec AS codec FROM system.columns"
        " WHERE database = {db:String} AND table = {t:String} AND position(codec, 'ZSTD(1)') > 0"
        " ORDER BY position", {"db": store.database, "t": store.otel_table})
    if rows:
        store.command(f"ALTER TABLE {_identifier(store.otel_table)} " + ", ".join(
            f"MODIFY COLUMN `{r['name']}` {r['codec'].replace('ZSTD(1)', 'Default')}"
            for r in rows))
    return [r["name"] for r in rows]


def _purge_engine_heap(session: Any) -> int:
    """Return the pages chDB's jemalloc holds freed; 1 when it did, 0 for a build without it."""
    try:
        session.query("SYSTEM JEMALLOC PURGE")
    except RuntimeError as exc:  # chDB's ChdbError; nothing is lost, memory stays held
        log.debug("chDB did not purge its allocator: %s", str(exc).strip().splitlines()[:1])
        return 0
    return 1


def _open_engine(path: str, url: str) -> _Engine:
    """The process's chDB session on ``path``, opened on first use."""
    global _engine
    from chdb import session as chdb_session

    with _server_lock:
        if _engine is not None:
            if _engine.path != path:
                raise UserError(
                    f"chDB already holds the store {_engine.path} in this process; "
                    f"one process can open one chDB directory (asked for {path})"
                )
            return _engine
        os.makedirs(path, exist_ok=True)
        try:
            # a path with URL syntax in it would be misread with settings appended: plain then
            plain = any(c in path for c in "?&#")
            session = chdb_session.Session(
                path if plain else f"{path}?config-file={_engine_config(path)}")
        except Exception as exc:  # chDB raises RuntimeError for a locked or bad dir
            if "Another server instance" in str(exc):
                raise StoreUnavailable(
                    f"the chDB store {path} is open in another process (a running "
                    "`flywheel serve`?); stop it, or reach that server through its API"
                ) from exc
            raise _store_error(url, exc) from exc
        _engine = _Engine(path, session)
        return _engine


def _engine_config(path: str) -> str:
    """The engine's config file in the store directory (rewritten when ``ENGINE_CONFIG`` changed)."""
    cfg = Path(path) / "flywheel_chdb.xml"
    try:
        if cfg.read_text() == ENGINE_CONFIG:
            return str(cfg)
    except OSError:
        pass
    tmp = cfg.with_name(f".{cfg.name}.{os.getpid()}")
    tmp.write_text(ENGINE_CONFIG)
    os.replace(tmp, cfg)
    return str(cfg)


def _insert_from(session: Any, sql: str, arrow_data: pa.Table) -> None:
    """Run ``sql``; chDB's ``Python(arrow_data)`` finds the table in this frame."""
    session.query(sql)


def _params(params: dict[str, Any] | Any) -> dict[str, Any]:
    out = {}
    for k, v in params.items():
        if isinstance(v, bool):
            out[k] = int(v)
        elif isinstance(v, list | tuple):
            out[k] = "[" + ",".join(_literal(x) for x in v) + "]"
        elif isinstance(v, str):
            out[k] = v.translate(SQL_ESCAPES)  # parameter values are escaped text
        else:
            out[k] = v
    return out


def _literal(v: Any) -> str:
    return sql_string(v) if isinstance(v, str) else str(v)


def _query_error(exc: Exception, sql: str) -> FlywheelError:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return FlywheelError(f"ClickHouse error: {msg[:500]}")
