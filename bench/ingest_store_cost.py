"""Paired A/B runs of the store's per-span cost: CPU (insert + views + merges) and peak memory.

A diagnostic for issue 24 beside bench/ingest_insert_cost.py, for a machine
shared with other work: each variant runs in its own process on a fresh
embedded store (chDB, every migration), and the variants of a round run back
to back, the rounds repeated (--rounds), so each variant is compared with the
baseline of its own round (the paired ratio). The workload is the agents
workload (bench/_otlp_agents.py), decoded per batch of --batch-spans spans (the
decoding runs on the main thread and its thread CPU time is left out), the
batch marked for duplicates and inserted as the span writer does (under a
dedup token). Per span it reports the process's CPU (user + system, every
thread) of the insert call, of duplicate marking, and in total (the insert,
views, and the merges, waited for until none runs) less decoding; and the peak
resident memory above the level just before the first insert (sampled every
20 ms).

A variant is SQL run after the migrations (dropping an index or a view,
changing a table setting), settings appended to the insert, merge-tree or
server settings of the engine (``flywheel_chdb.xml``), environment
variables of the process (glibc's malloc tunables: chDB allocates through it),
the agent_steps view recreated as before ingest migration 013, storing some
or all of the text columns (``text-stored*``: what storing that text costs), or the view dropped and its
rows computed from each batch before the insert, outside the measured CPU, and
inserted under their own token (``steps-direct``, with --steady: the most that
normalising spans in the decoder instead of the view could save). Each run
also reports the store's size on disk.

    python bench/ingest_store_cost.py [--variants base,no-value-blooms] [--rounds 3]
        [--batch-spans 20000] [--batches 20]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

_IDX = ["idx_trace_id", "idx_res_attr_key", "idx_res_attr_value", "idx_span_attr_key",
        "idx_span_attr_value", "idx_duration", "idx_lower_span_name"]

#: name -> {"sql": [...], "insert": {setting: value}, "merge_tree": {setting: value}}
VARIANTS: dict[str, dict] = {
    "base": {},
    "no-views": {"sql": ["DROP VIEW agent_steps_mv", "DROP VIEW trace_summaries_mv",
                         "DROP VIEW otel_traces_trace_id_ts_mv"]},
    "no-agent-steps": {"sql": ["DROP VIEW agent_steps_mv"]},
    "no-summaries": {"sql": ["DROP VIEW trace_summaries_mv"]},
    "no-trace-id-ts": {"sql": ["DROP VIEW otel_traces_trace_id_ts_mv"]},
    "no-skip-indexes": {"sql": [f"ALTER TABLE otel_traces DROP INDEX {i}" for i in _IDX]},
    "no-map-indexes": {"sql": [f"ALTER TABLE otel_traces DROP INDEX {i}" for i in _IDX[1:5]]},
    "no-unused-indexes": {"sql": [f"ALTER TABLE otel_traces DROP INDEX {i}" for i in _IDX[1:]]},
    "no-value-blooms": {"sql": [f"ALTER TABLE otel_traces DROP INDEX {i}"
                                for i in ("idx_res_attr_value", "idx_span_attr_value")]},
    "no-tool-set": {"sql": ["ALTER TABLE agent_steps DROP INDEX idx_tool"]},
    "no-marking": {"mark": False},
    # the normalisation done before the insert (as a decoder could): the view dropped, its rows
    # computed from each batch outside the measured CPU and inserted under their own token
    "steps-direct": {"sql": ["DROP VIEW agent_steps_mv"], "steps_direct": True},
    # agent_steps with its text columns stored at ingest, as before ingest migration 013
    # (inputs, outputs, tool arguments and results copied from the span's attributes by the
    # view; since 013 they are read from the span table): what storing that text costs
    "text-stored": {"text_stored": ["arguments", "result", "input", "output"]},
    "text-stored-io": {"text_stored": ["input", "output"]},
    "text-stored-tool": {"text_stored": ["arguments", "result"]},
    # agent_steps' tool-name set index not built either (as the span table's unused ones)
    "no-steps-index": {"insert": {"exclude_materialize_skip_indexes_on_insert":
                                  "'" + ", ".join(_IDX[1:] + ["idx_tool"]) + "'"},
                       "merge_tree": {"exclude_materialize_skip_indexes_on_merge":
                                      ", ".join(_IDX[1:] + ["idx_tool"])}},
    "merge-pool-2": {"server": {"background_pool_size": 2}},
    "merge-pool-4": {"server": {"background_pool_size": 4}},
    "malloc-arenas-2": {"env": {"MALLOC_ARENA_MAX": "2"}},
    "malloc-mmap-1m": {"env": {"MALLOC_MMAP_THRESHOLD_": str(1 << 20)}},
    # chDB's own jemalloc (JE_MALLOC_CONF; built with prof:true,prof_active:true,
    # dirty_decay_ms:5000): allocation sampling off; freed pages returned after 1 s
    "je-no-prof": {"env": {"JE_MALLOC_CONF": "prof_active:false"}},
    "je-decay-1s": {"env": {"JE_MALLOC_CONF": "dirty_decay_ms:1000"}},
    "malloc-both": {"env": {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": str(1 << 20)}},
    # rows of a replacing or aggregating table not collapsed within the inserted block (reads
    # collapse them: FINAL, argMax, GROUP BY)
    "no-optimize-on-insert": {"insert": {"optimize_on_insert": 0}},
    # the span table's columns compressed with LZ4 (ClickHouse's default) instead of ZSTD(1)
    "spans-lz4": {"sql": [
        f"ALTER TABLE otel_traces MODIFY COLUMN {c} CODEC(LZ4)" for c in (
            "Timestamp", "TraceId", "SpanId", "ParentSpanId", "TraceState", "SpanName",
            "SpanKind", "ServiceName", "ResourceAttributes", "ScopeName", "ScopeVersion",
            "SpanAttributes", "Duration", "StatusCode", "StatusMessage", "Events.Timestamp",
            "Events.Name", "Events.Attributes", "Links.TraceId", "Links.SpanId",
            "Links.TraceState", "Links.Attributes")]},
    # agent_steps' text columns (model inputs and outputs, tool arguments and results: most of
    # its bytes) compressed with ZSTD(1) instead of LZ4 (ClickHouse's default)
    "steps-zstd": {"sql": [f"ALTER TABLE agent_steps MODIFY COLUMN {c} String CODEC(ZSTD(1))"
                           for c in ("arguments", "result", "input", "output")]},
    # merges that wait for more parts (less write amplification, more parts between merges)
    "merge-base-10": {"merge_tree": {"merge_selector_base": 10}},
    "merge-min-parts-6": {"merge_tree": {"min_parts_to_merge_at_once": 6}},
    # ClickHouse's default granule and compressed-block sizes (10 MiB, 1 MiB) instead of the
    # embedded engine's 1 MiB and 256 KiB (flywheel._store_chdb.ENGINE_CONFIG)
    "clickhouse-granules": {"merge_tree": {"index_granularity_bytes": 10 << 20,
                                           "max_compress_block_size": 1 << 20}},
    # one of the two: granules of 2 MiB with 1 MiB blocks; 10 MiB granules with 256 KiB blocks
    "granules-2m": {"merge_tree": {"index_granularity_bytes": 2 << 20,
                                   "max_compress_block_size": 1 << 20}},
    "blocks-256k": {"merge_tree": {"index_granularity_bytes": 10 << 20}},
    # every part compact (one data file and one marks file) up to 1 GiB instead of wide from
    # 10 MiB uncompressed (two files per column stream: ~130 for a span part): creating and
    # deleting that many files costs the kernel (ext4 inode allocation) as much as compressing
    "compact-parts": {"merge_tree": {"min_bytes_for_wide_part": 1 << 30}},
    # parts compact below 64 MiB uncompressed (an insert of 20,000 spans: 22 MiB of spans, 15 of
    # steps; 13 and 11 files instead of 131 and 101), merged parts wide (vertical merges)
    "compact-inserts": {"merge_tree": {"min_bytes_for_wide_part": 64 << 20}},
    "insert-1-thread": {"insert": {"max_threads": 1, "max_insert_threads": 1}},
    "insert-blocks-64k": {"insert": {"min_insert_block_size_rows": 65536,
                                     "min_insert_block_size_bytes": 64 << 20}},
}
#: Every skip index built (as before flywheel._store_chdb.UNBUILT_INDEXES).
VARIANTS["build-all-indexes"] = {"insert": {"exclude_materialize_skip_indexes_on_insert": "''"},
                                 "merge_tree": {"exclude_materialize_skip_indexes_on_merge": ""}}
for _i in _IDX:
    VARIANTS[f"no-{_i}"] = {"sql": [f"ALTER TABLE otel_traces DROP INDEX {_i}"]}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _steps_select(before: str = "") -> str:
    """The agent_steps view's SELECT over ``arrow_data`` (from its newest migration).

    With ``before``: from the newest migration whose file name sorts before it.
    """
    folder = Path(__file__).resolve().parents[1] / "ingest" / "migrations"
    sql = [m.read_text() for m in sorted(folder.glob("*.sql"))
           if "TO agent_steps AS" in m.read_text() and (not before or m.name < before)][-1]
    body = sql.split("TO agent_steps AS\n", 1)[1].split(";\n")[0]
    return (body.replace("FROM {{OTEL_TABLE}}", "FROM Python(arrow_data)")
            .replace("IngestTime AS ingest_time", "now64(3) AS ingest_time"))


def run_variant(spec: dict, batch_spans: int, batches: int, steady: bool = False,
                store_dir: str = "") -> dict[str, float]:
    """Insert the workload under ``spec``; CPU microseconds per span and peak memory.

    ``steady``: merges stopped during the inserts, each insert's CPU kept (the
    fastest is least disturbed by other work on the machine), then every table
    merged into one part (OPTIMIZE FINAL) and that CPU reported apart.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import pyarrow as pa
    from _otlp_load import template
    from flywheel.ingest._decode import decode_body
    from flywheel.ingest._duplicates import mark_duplicates
    from flywheel.ingest._limits import Limits

    import flywheel._store_chdb as chdb_store
    from flywheel import Settings, open_store

    for k, v in spec.get("merge_tree", {}).items():  # replaces the engine's own value
        cfg = re.sub(rf"\s*<{k}>.*</{k}>", "", chdb_store.ENGINE_CONFIG)
        chdb_store.ENGINE_CONFIG = cfg.replace("  </merge_tree>", f"    <{k}>{v}</{k}>\n  </merge_tree>")
    for k, v in spec.get("server", {}).items():
        chdb_store.ENGINE_CONFIG = chdb_store.ENGINE_CONFIG.replace(
            "<clickhouse>\n", f"<clickhouse>\n  <{k}>{v}</{k}>\n")
    if spec.get("insert"):
        chdb_store.INSERT_SETTINGS = {**chdb_store.INSERT_SETTINGS, **spec["insert"]}
    limits = Limits.from_settings(Settings().ingest)
    tpl = template("agents", 1, 500)
    per = max(1, batch_spans // 500)
    store = open_store(f"chdb://{store_dir or tempfile.mkdtemp(prefix='store-cost-')}/store")
    store.migrate()
    for sql in spec.get("sql", []):
        store.command(sql)
    if spec.get("text_stored"):  # the view of 012, its text into the stored_* columns
        view = _steps_select(before="013")
        view = view.replace("FROM Python(arrow_data)", "FROM otel_traces")
        view = view.replace("now64(3) AS ingest_time", "IngestTime AS ingest_time")
        exprs = {"arguments": "args", "result": "res", "input": "inp", "output": "outp"}
        for col, ex in exprs.items():
            stored = f"{ex} AS stored_{col}," if col in spec["text_stored"] else ""
            view = view.replace(f"{ex} AS {col},", stored)
        view = view.replace("IngestTime AS ingest_time",
                            "IngestTime AS ingest_time, 0 AS text_in_spans")
        store.command("DROP VIEW agent_steps_mv")
        store.command(f"CREATE MATERIALIZED VIEW agent_steps_mv TO agent_steps AS {view}")
    if steady:
        store.command("SYSTEM STOP MERGES")
    per_insert: list[float] = []
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            peak[0] = max(peak[0], _rss())

    store.release_memory()
    base_rss = _rss()
    threading.Thread(target=sample, daemon=True).start()
    spans = 0
    decoding = marking = inserting = 0.0
    start = _cpu()
    for b in range(batches):
        t0 = time.thread_time()
        table = pa.concat_tables([
            decode_body(tpl.render(100 + b * per + i), "application/x-protobuf",
                        project="default", limits=limits).table for i in range(per)])
        decoding += time.thread_time() - t0
        spans += table.num_rows
        steps = None
        if spec.get("steps_direct"):  # not measured: the decoder's work on this path
            assert steady, "steps-direct needs --steady (merges stopped while inserting)"
            t0 = _cpu()
            steps = _query_arrow_of(store, _steps_select(), table)
            decoding += _cpu() - t0
        t0 = _cpu()
        if spec.get("mark", True):
            mark_duplicates(store, table)
        t1 = _cpu()
        store.insert(store.otel_table, table, dedup_token=f"wal:bench:0:{b}-{b + 1}")
        if steps is not None:
            store.insert("agent_steps", steps, dedup_token=f"wal:bench:0:{b}-{b + 1}:steps")
        t2 = _cpu()
        marking += t1 - t0
        inserting += t2 - t1
        per_insert.append((t2 - t1) * 1e6 / table.num_rows)
        del table
    peak_inserts = peak[0]
    merging = 0.0
    if steady:
        store.command("SYSTEM START MERGES")
        t0 = _cpu()
        for t in ("otel_traces", "otel_traces_trace_id_ts", "agent_steps", "trace_summaries"):
            store.command(f"OPTIMIZE TABLE {t} FINAL")
        merging = _cpu() - t0
    time.sleep(0.5)
    while store.scalar("SELECT count() FROM system.merges") > 0:
        time.sleep(0.2)
    total = _cpu() - start - decoding
    stop.set()
    stored = store.scalar("SELECT count() FROM otel_traces")
    steps = store.scalar("SELECT count() FROM agent_steps")
    parts = store.scalar("SELECT count() FROM system.parts WHERE active AND table = 'otel_traces'")
    idx = store.scalar("SELECT sum(data_compressed_bytes) FROM system.data_skipping_indices "
                       "WHERE database = currentDatabase() AND table = 'otel_traces'")
    disk = store.scalar("SELECT sum(bytes_on_disk) FROM system.parts WHERE active "
                        "AND database = currentDatabase()")
    return {"spans": spans, "stored": stored, "steps": steps, "parts": parts,
            "index_kib": idx / 1024, "disk_mib": disk / 2**20,
            "total_us": total * 1e6 / spans, "insert_us": inserting * 1e6 / spans,
            "mark_us": marking * 1e6 / spans, "store_us": (total - marking) * 1e6 / spans,
            "peak_mib": (peak[0] - base_rss) / 2**20,
            "peak_inserts_mib": (peak_inserts - base_rss) / 2**20, "insert_min_us": min(per_insert),
            "insert_median_us": statistics.median(per_insert), "merge_us": merging * 1e6 / spans}


def _query_arrow_of(store, sql: str, arrow_data):  # noqa: ANN001, ANN202
    """``sql`` run on the embedded engine with ``Python(arrow_data)`` naming ``arrow_data``."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    with store._engine.lock:
        res = store._session_here().query(
            sql + " SETTINGS output_format_arrow_string_as_string = 1", "ArrowStream")
    return ipc.open_stream(pa.py_buffer(res.bytes())).read_all()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default="base,no-views,no-skip-indexes")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-spans", type=int, default=20_000)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--steady", action="store_true",
                    help="merges stopped while inserting; the fastest insert, then one merge")
    ap.add_argument("--spec", help="JSON variant spec to add as 'custom'")
    ap.add_argument("--_one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._one is not None:
        store_dir = tempfile.mkdtemp(prefix="store-cost-")
        try:
            print(json.dumps(run_variant(json.loads(args._one), args.batch_spans, args.batches,
                                         args.steady, store_dir)))
        finally:  # 20-200 MB a run piled up in /tmp
            shutil.rmtree(store_dir, ignore_errors=True)
        return
    if args.spec:
        VARIANTS["custom"] = json.loads(args.spec)
    names = args.variants.split(",")
    print(f"{os.cpu_count()} cores, chDB embedded store; agents workload, {args.batches} inserts "
          f"of {args.batch_spans} spans; load average {os.getloadavg()[0]:.2f}", flush=True)
    got: dict[str, list[dict]] = {n: [] for n in names}
    for r in range(args.rounds):
        for n in names:
            out = subprocess.run(
                [sys.executable, __file__, "--batch-spans", str(args.batch_spans), "--batches",
                 str(args.batches), "--_one", json.dumps(VARIANTS[n])]
                + (["--steady"] if args.steady else []),
                capture_output=True, text=True, check=True,
                env={**os.environ, **VARIANTS[n].get("env", {})}).stdout
            res = json.loads(out.strip().splitlines()[-1])
            got[n].append(res)
            ratio = res["store_us"] / got[names[0]][r]["store_us"]
            if args.steady:
                print(f"round {r} {n:>22}: insert fastest {res['insert_min_us']:5.1f} us/span, "
                      f"median {res['insert_median_us']:5.1f}, merge into one part "
                      f"{res['merge_us']:5.1f}, marking {res['mark_us']:4.1f}, "
                      f"disk {res['disk_mib']:.0f} MiB, "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
                continue
            print(f"round {r} {n:>22}: store {res['store_us']:5.1f} us/span (insert call "
                  f"{res['insert_us']:5.1f}, marking {res['mark_us']:4.1f}) x{ratio:.3f}, "
                  f"peak +{res['peak_mib']:4.0f} MiB, parts {res['parts']}, index {res['index_kib']:.0f} KiB, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
    print("median over rounds (paired ratio to the first variant):")
    for n in names:
        if args.steady:
            print(f"{n:>22}: insert fastest "
                  f"{statistics.median(x['insert_min_us'] for x in got[n]):5.1f} us/span (ratio "
                  f"{statistics.median(a['insert_min_us'] / b['insert_min_us'] for a, b in zip(got[n], got[names[0]], strict=True)):.3f}), "
                  f"merge {statistics.median(x['merge_us'] for x in got[n]):5.1f} (ratio "
                  f"{statistics.median(a['merge_us'] / b['merge_us'] for a, b in zip(got[n], got[names[0]], strict=True)):.3f})")
            continue
        ratios = [a["store_us"] / b["store_us"] for a, b in zip(got[n], got[names[0]], strict=True)]
        print(f"{n:>22}: store {statistics.median(x['store_us'] for x in got[n]):5.1f} us/span, "
              f"marking {statistics.median(x['mark_us'] for x in got[n]):4.1f}, ratio "
              f"{statistics.median(ratios):.3f}, peak +"
              f"{statistics.median(x['peak_mib'] for x in got[n]):4.0f} MiB")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
