"""Giving memory back while idle: only clean read-only pages go, and the store keeps answering."""

from __future__ import annotations

from pathlib import Path

import pytest

from flywheel._memory import _clean_readonly, drop_library_pages

_SMAPS = """\
7f0000000000-7f0000100000 r--p 00000000 fe:00 1 /x/chdb/_chdb.abi3.so
Rss:                1024 kB
Anonymous:             0 kB
7f0000100000-7f0000300000 r-xp 00100000 fe:00 1 /x/chdb/_chdb.abi3.so
Rss:                2048 kB
Anonymous:             0 kB
7f0000300000-7f0000400000 r--p 00300000 fe:00 1 /x/chdb/_chdb.abi3.so
Rss:                1024 kB
Anonymous:           512 kB
7f0000400000-7f0000500000 rw-p 00400000 fe:00 1 /x/chdb/_chdb.abi3.so
Rss:                1024 kB
Anonymous:             0 kB
7f0000500000-7f0000600000 r--s 00000000 fe:00 1 /x/chdb/_chdb.abi3.so
Rss:                1024 kB
Anonymous:             0 kB
7f0000600000-7f0000700000 r-xp 00000000 fe:00 2 /x/pyarrow/libarrow.so
Rss:                1024 kB
Anonymous:             0 kB
7f0000700000-7f0000800000 rw-p 00000000 00:00 0
Rss:                1024 kB
Anonymous:          1024 kB
"""


def test_only_readonly_private_mappings_without_a_private_page_of_the_library():
    """Relocated data (a private page), writable, shared and other libraries' mappings stay."""
    assert _clean_readonly(_SMAPS, "/chdb/_chdb") == [
        (0x7F0000000000, 0x7F0000100000), (0x7F0000100000, 0x7F0000300000)]
    assert _clean_readonly(_SMAPS, "/nothing/") == []


def _library_rss_kib(name: str) -> int:
    total, current = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
            current = name in line
        elif current and line.startswith("Rss:"):
            total += int(head[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux only")
def test_the_store_answers_the_same_after_giving_memory_back(store):
    """The chDB library's pages are unmapped, then every statement still runs (they fault back)."""
    store.command("CREATE TABLE mem_probe (k UInt64, v String) ENGINE = MergeTree ORDER BY k")
    store.insert("mem_probe", {"k": list(range(1000)), "v": [f"v{i}" for i in range(1000)]})
    before = store.query("SELECT count() AS n, sum(length(v)) AS s, max(k) AS m FROM mem_probe")
    resident = _library_rss_kib("/chdb/_chdb")
    released = store.release_memory()
    assert released["library_bytes"] > 0
    assert released["engine_purged"] == 1  # chDB's own jemalloc gave its freed pages back
    assert _library_rss_kib("/chdb/_chdb") < resident / 2
    assert store.query("SELECT count() AS n, sum(length(v)) AS s, max(k) AS m FROM mem_probe") \
        == before
    store.insert("mem_probe", {"k": [5000], "v": ["after"]})
    store.command("OPTIMIZE TABLE mem_probe FINAL")  # a merge runs the merge code again
    assert store.scalar("SELECT count() FROM mem_probe") == 1001
    assert drop_library_pages("/no/such/library") == 0


def test_the_embedded_engine_merges_column_by_column(store):
    """ENGINE_CONFIG reaches the engine (vertical merges, small merge blocks, small granules)."""
    got = {r["name"]: r["value"] for r in store.query(
        "SELECT name, value FROM system.merge_tree_settings WHERE name IN "
        "('merge_max_block_size', 'vertical_merge_algorithm_min_rows_to_activate', "
        "'index_granularity_bytes', 'max_compress_block_size', 'min_bytes_for_wide_part')")}
    assert got == {"merge_max_block_size": "2048", "min_bytes_for_wide_part": "67108864",
                   "vertical_merge_algorithm_min_rows_to_activate": "16384",
                   "index_granularity_bytes": "1048576", "max_compress_block_size": "262144"}


def test_wide_rows_make_small_granules(store):
    """A part of ~4 KB rows is cut into granules of at most ~1 MiB, not 8,192 rows."""
    store.command("CREATE TABLE granule_probe (k UInt64, v String) ENGINE = MergeTree ORDER BY k")
    store.insert("granule_probe", {"k": list(range(4000)), "v": ["x" * 4000] * 4000})
    marks = store.scalar("SELECT sum(marks) FROM system.parts WHERE active "
                         "AND database = currentDatabase() AND table = 'granule_probe'")
    assert marks >= 16  # 16 MB of values in granules of <= 1 MiB (+ the final mark)
    # and the part is compact (two files, not two per column): wide only from 64 MiB
    assert store.scalar("SELECT part_type FROM system.parts WHERE active "
                        "AND database = currentDatabase() AND table = 'granule_probe'") == "Compact"


def test_the_embedded_engine_builds_only_the_span_indexes_a_read_uses(store):
    """Inserts build the span table's trace-id index and not UNBUILT_INDEXES; merges neither."""
    from flywheel._store_chdb import UNBUILT_INDEXES

    n = 50
    store.insert(store.otel_table, {
        "Timestamp": [1_700_000_000_000_000_000 + i for i in range(n)],
        "TraceId": [f"{i:032x}" for i in range(n)],
        "SpanId": [f"{i:016x}" for i in range(n)], "SpanName": ["chat"] * n,
        "ResourceAttributes": [{"service.name": "a"}] * n,
        "SpanAttributes": [{"gen_ai.operation.name": "chat", "k": f"v{i}"} for i in range(n)],
        "Duration": [5] * n}, dedup_token="test:0")
    sizes = {r["name"]: int(r["b"]) for r in store.query(
        "SELECT name, data_uncompressed_bytes AS b FROM system.data_skipping_indices "
        "WHERE database = currentDatabase() AND table = {t:String}", {"t": store.otel_table})}
    assert sizes["idx_trace_id"] > 0
    assert {i: sizes[i] for i in UNBUILT_INDEXES} == dict.fromkeys(UNBUILT_INDEXES, 0)
    merged = store.scalar("SELECT value FROM system.merge_tree_settings "
                          "WHERE name = 'exclude_materialize_skip_indexes_on_merge'")
    assert sorted(merged.split(", ")) == sorted(UNBUILT_INDEXES)
    assert store.scalar(f"SELECT count() FROM {store.otel_table} WHERE TraceId = '{7:032x}'") == 1


def test_the_embedded_span_table_compresses_young_parts_with_lz4(store):
    """ZSTD(1) of the collector's columns is the engine's choice: LZ4 until a part is large."""
    from flywheel._store_chdb import ENGINE_CONFIG, ZSTD_FROM_BYTES, span_codecs

    codecs = {r["name"]: r["c"] for r in store.query(
        "SELECT name, compression_codec AS c FROM system.columns "
        "WHERE database = currentDatabase() AND table = {t:String}", {"t": store.otel_table})}
    assert not [c for c in codecs.values() if "ZSTD" in c]
    assert codecs["Timestamp"] == "CODEC(Delta(8), Default)"
    assert codecs["Duration"] == "CODEC(T64, Default)"
    assert codecs["SpanAttributes"] == "CODEC(Default)"
    assert span_codecs(store) == []  # once only
    assert f"<min_part_size>{ZSTD_FROM_BYTES}</min_part_size>" in ENGINE_CONFIG
    store.insert(store.otel_table, {"Timestamp": [1_700_000_000_000_000_000], "TraceId": ["t"],
                                    "SpanId": ["s"], "SpanName": ["chat"]})
    assert store.scalar("SELECT default_compression_codec FROM system.parts WHERE active AND "
                        "database = currentDatabase() AND table = {t:String}",
                        {"t": store.otel_table}) == "LZ4"
