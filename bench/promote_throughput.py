"""Benchmark: promotion dedupe and redaction throughput on this machine.

Usage:
    python bench/promote_throughput.py                 # dedupe 20k traces, redact 2,000 spans
    python bench/promote_throughput.py --full          # also: 100,000 traces deduplicated (wall, peak RSS)
    python bench/promote_throughput.py --dedupe-traces 50000 --redact-spans 5000 --workers 2

Workloads (seeded, from tests/bench/redact_synth.py):
- dedupe: support-agent traces in groups of 5 near-duplicates (16 hand-written
  tasks with paraphrases, then invented tasks: 2-4 tools, masked ids, dates,
  wording changes), written to a fresh chDB store in batches of 5,000 through
  ``StoreDedupeIndex`` (signature -> MinHash -> band-key lookup in the store ->
  exact-Jaccard verification -> columnar insert). Also the in-memory index.
- redact: spans with five text fields each (chat-message input JSON, tool
  arguments JSON, tool result JSON, output text, a status text) carrying
  Faker emails, phones, cards, IBANs, IPs, SSNs, names and addresses. No text
  repeats (each span carries its own user message, reply and status line,
  and every field gets a distinct reference word); strings inside the JSON
  do (keys, the system prompt, a tier), as in real traces. Every detector
  runs (patterns, secrets, names, addresses, birth dates, ids, decoding).
  The engines are loaded on other text (another seed) first, then every
  process forgets what that text left behind (the detection cache, per-word
  and per-value lookups, phone readings; ``cold_caches``), so the timed text
  finds nothing cached but its own earlier strings (redaction's second pass
  re-reads every text; the 1-process line says how many lookups that was).

Targets (issue 5, issue 20): dedupe >= 1,000 traces/s; redact >= 2,500
uncached text fields/s on 2 worker processes; 100,000 traces deduplicated
in < 5 min with peak memory < 2 GB. Wall-clock figures on a shared machine
depend on its load: the load average is printed, and so are CPU-seconds (the
parent's, and each worker's read from /proc), with the throughput the run
would have with a free core per process (fields / the busiest process's
CPU-seconds). The exit status follows the wall-clock figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

# This file is named like the package it measures: drop bench/ from the path
# (Python puts the script's folder first) and put the repository root there.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flywheel.promote._dedupe import DedupeIndex, DedupeParams, StoreDedupeIndex  # noqa: E402
from flywheel.pii import shared_detector  # noqa: E402
from flywheel.promote._redact_batch import redact_traces, shutdown_pools  # noqa: E402
from tests.bench.redact_synth import duplicate_traces, pii_traces  # noqa: E402
from flywheel.promote._redact_types import TraceStep  # noqa: E402
from flywheel.promote._signature import trace_signature  # noqa: E402


#: Issue 20: uncached text fields per second on 2 worker processes.
REDACT_FIELDS_TARGET = 2_500


def machine() -> str:
    """One line about the machine (the box is shared; figures are under that load)."""
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {mem:.0f} GiB RAM, "
        f"Python {platform.python_version()}, "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )


def _worker_cpu() -> dict[int, float]:
    """CPU seconds so far of each live redaction worker (forkserver children are not ours:
    read from /proc). Bench only: reads the pool's private process table."""
    from flywheel.promote import _redact_batch

    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    for pool in list(_redact_batch._POOLS.values()):
        for pid in list(getattr(pool, "_processes", {}) or {}):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            out[pid] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return out


#: An ``lru_cache`` this small holds loaded engines or word lists, not results of earlier text.
_ENGINE_CACHE_MAX = 16


def cold_caches(pause: float = 0.0) -> int:
    """Forget every result of earlier text in this process; keep the loaded engines.

    Clears each shared detector's detection cache, the pool worker's key cache and
    every larger ``lru_cache`` of flywheel's modules (per-word and per-value lookups,
    phone readings). Bench only: reads private state. Returns this process's id.
    """
    from flywheel.pii import _detector
    from flywheel.promote import _redact_batch

    for det in list(_detector._SHARED.values()):
        det._cache.clear()
    if _redact_batch._WORKER is not None:
        _redact_batch._WORKER._key_cache.clear()
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith("flywheel."):
            continue
        for obj in list(vars(mod).values()):
            params = getattr(obj, "cache_parameters", None)
            if callable(params) and (params()["maxsize"] or 1 << 30) > _ENGINE_CACHE_MAX:
                obj.cache_clear()
    time.sleep(pause)
    return os.getpid()


def cold_pools(workers: int) -> None:
    """Run ``cold_caches`` in every worker of every redaction pool (and start them all).

    Tasks that pause are sent ``workers`` at a time, so no worker is idle while one
    is queued and the pool starts all of its processes; repeated until every worker
    process has reported.
    """
    from flywheel.promote import _redact_batch

    for pool in list(_redact_batch._POOLS.values()):
        done: set[int] = set()
        for _ in range(50):
            done |= set(pool.map(cold_caches, [0.2] * workers))
            live = set(getattr(pool, "_processes", {}) or {})
            if len(live) == workers and live <= done:
                break
        else:
            raise SystemExit(f"could not empty the caches of every one of {workers} workers")


def _self_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_dedupe(n: int, batch: int, store_dir: str, label: str) -> dict[str, float]:
    """Generate ``n`` traces, deduplicate them through the store in batches."""
    from flywheel import open_store

    t0 = time.perf_counter()
    data = duplicate_traces(n, per_group=5, seed=3)
    gen_s = time.perf_counter() - t0
    store = open_store(f"chdb://{store_dir}?database=bench_{label}")
    store.migrate()
    idx = StoreDedupeIndex(store, DedupeParams())
    sig_s = 0.0
    t1, c1 = time.perf_counter(), time.process_time()
    assigned: dict[str, str] = {}
    for i in range(0, n, batch):
        part = data[i : i + batch]
        ts = time.perf_counter()
        sigs = [(tid, trace_signature(steps)) for tid, _, steps in part]
        sig_s += time.perf_counter() - ts
        assigned.update((a.trace_id, a.cluster_id) for a in idx.add_batch(sigs))
    total_s, cpu_s = time.perf_counter() - t1, time.process_time() - c1
    clusters = idx.clusters(limit=None)
    groups = {g for _, g, _ in data}
    precision, recall = pairwise_scores({tid: g for tid, g, _ in data}, assigned)
    store.close()
    return {
        "traces": n,
        "generate_s": gen_s,
        "dedupe_s": total_s,
        "dedupe_cpu_s": cpu_s,
        "signature_s": sig_s,
        "traces_per_s": n / total_s,
        "traces_per_cpu_s": n / cpu_s,
        "clusters": len(clusters),
        "true_groups": len(groups),
        "largest_cluster": clusters[0].size if clusters else 0,
        "pairwise_precision": precision,
        "pairwise_recall": recall,
    }


def pairwise_scores(groups: dict[str, str], clusters: dict[str, str]) -> tuple[float, float]:
    """Pairwise precision and recall from the group x cluster contingency table."""

    def pairs(counts: Counter[Any]) -> int:
        return sum(c * (c - 1) // 2 for c in counts.values())

    both = pairs(Counter((groups[t], clusters[t]) for t in groups))
    predicted = pairs(Counter(clusters[t] for t in groups))
    true = pairs(Counter(groups.values()))
    return (both / predicted if predicted else 1.0, both / true if true else 1.0)


def bench_dedupe_memory(n: int) -> dict[str, float]:
    """The in-memory index over the same kind of workload."""
    data = duplicate_traces(n, per_group=5, seed=4)
    t = time.perf_counter()
    idx = DedupeIndex()
    idx.add_many([(tid, trace_signature(steps)) for tid, _, steps in data])
    s = time.perf_counter() - t
    return {"traces": n, "seconds": s, "traces_per_s": n / s, "clusters": len(idx.clusters)}


_WORDS = (
    "amber birch cobalt dune ember fjord garnet harbor indigo juniper kelp lumen marl nectar "
    "onyx pumice quartz russet sable tundra umber vellum willow xenon yarrow zephyr"
).split()


def _tag(n: int) -> str:
    """A distinct lower-case reference word per field (no digits: no extra phone windows)."""
    a, b = divmod(n, len(_WORDS))
    return f"ref {_WORDS[b]}{_WORDS[a % len(_WORDS)]}{'x' * (a // len(_WORDS))}"


def _unique(text: str | None, n: int) -> str | None:
    if text is None:
        return None
    if text.startswith("{"):
        return text[:-1] + f', "ref": "{_tag(n)}"}}'
    if text.startswith("["):
        return text[:-1] + f', "{_tag(n)}"]'
    return f"{text} ({_tag(n)})"


def redact_workload(spans: int, seed: int = 13) -> list[list[TraceStep]]:
    """Traces of spans with five non-repeating text fields each, from the labelled PII set."""
    out: list[list[TraceStep]] = []
    total = 0
    n = 0
    source = pii_traces(max(1, spans + 1), seed=seed)
    for k, t in enumerate(source[: max(1, spans // 4 + 1)]):
        trace = []
        for j, s in enumerate(t.steps[1:5]):  # the four tool spans
            other = source[(k * 4 + j) % len(source)]  # another trace's chat, not a repeat
            n += 5
            trace.append(
                TraceStep(
                    span_id=s.span_id,
                    tool_name=s.tool_name,
                    arguments=_unique(s.arguments, n),
                    result=_unique(s.result, n + 1),
                    input_text=_unique(other.steps[0].input_text, n + 2),
                    output_text=_unique(other.steps[-1].output_text, n + 3),
                    texts={"status_message": f"tool {s.tool_name} finished ({_tag(n + 4)})"},
                )
            )
            total += 1
            if total >= spans:
                break
        out.append(trace)
        if total >= spans:
            break
    return out


def bench_redact(spans: int, workers: int) -> dict[str, float]:
    """Redact ``spans`` five-field spans with ``workers`` processes."""
    traces = redact_workload(spans)
    # Load the engines (Presidio, the name list; and start the reused worker pool)
    # outside the timing, on other text: the detection cache stays cold.
    warm = redact_workload(64 * 4, seed=99)[:64]
    redact_traces(warm, workers=workers, chunk_size=8)
    cold_caches()
    if workers > 1:
        cold_pools(workers)
    detector = shared_detector()  # this process's: counts lookups when workers == 1
    calls0, hits0 = detector.calls, detector.hits
    n_spans = sum(len(t) for t in traces)
    n_fields = sum(len(s.field_items()) for t in traces for s in t)
    t = time.perf_counter()
    cpu0, w0 = _self_cpu(), _worker_cpu()
    out = redact_traces(traces, workers=workers)  # chunks sized as the product sizes them
    s = time.perf_counter() - t
    parent, w1 = _self_cpu() - cpu0, _worker_cpu()
    per_worker = [w1[pid] - w0.get(pid, 0.0) for pid in w1]
    cpu = parent + sum(per_worker)
    # With a free core per process, the wall time is the busiest process's CPU time.
    busiest = max([parent, *per_worker])
    replaced = sum(r.report.total for r in out)
    lookups, repeats = detector.calls - calls0, detector.hits - hits0
    return {
        "workers": workers,
        "spans": n_spans,
        "fields": n_fields,
        "seconds": s,
        "spans_per_s": n_spans / s,
        "cpu_s": cpu,
        "worker_cpu_s": per_worker,
        "spans_per_cpu_s": n_spans / cpu,
        "fields_per_cpu_s": n_fields / cpu,
        "fields_per_s": n_fields / s,
        "fields_per_s_free_cores": n_fields / busiest,
        "replacements": replaced,
        "detect_lookups": lookups,
        "detect_repeats": repeats,
    }


def run_full(batch: int) -> dict[str, float]:
    """The 100,000-trace run in a fresh process, so its peak RSS is its own."""
    proc = subprocess.run(
        [sys.executable, __file__, "--only-100k", "--batch", str(batch)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    """Run the benchmarks and print the figures."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dedupe-traces", type=int, default=20_000)
    ap.add_argument("--batch", type=int, default=5_000)
    ap.add_argument("--redact-spans", type=int, default=2_000)
    ap.add_argument("--workers", type=int, default=2, help="redaction worker processes")
    ap.add_argument("--full", action="store_true", help="also deduplicate 100,000 traces")
    ap.add_argument("--only-100k", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    ap.add_argument("--redact-only", action="store_true", help="skip the dedupe benchmarks")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-promote-")
    try:
        if args.only_100k:
            f = bench_dedupe(100_000, args.batch, os.path.join(tmp, "chdb"), "full")
            print(json.dumps({**f, "peak_rss_mib": peak_rss_mib()}))
            return
        _run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(args: argparse.Namespace, tmp: str) -> None:
    print(f"machine: {machine()}")
    print("wall-clock figures are under the shared machine's load; CPU figures beside them")
    p = DedupeParams()
    print(f"dedupe: num_perm={p.num_perm} bands={p.bands} rows={p.rows} threshold={p.threshold}")
    results: dict[str, object] = {"machine": machine()}
    if not args.redact_only:
        _run_dedupe(args, tmp, results)
    print(
        f"redact workload: {args.redact_spans:,} spans in traces of 4 tool spans "
        "(tests/bench/redact_synth.py, seed 13), 5 text fields each: chat-message JSON, tool "
        "arguments JSON, tool result JSON, reply text, status line; Faker PII (e-mails, phones "
        "of 4 locales, cards, IBANs, IPs, SSNs, names, addresses); no field repeats; every "
        "process's caches emptied after loading the engines on other text"
    )
    missed = False
    for w in sorted({1, args.workers}):
        rr = bench_redact(args.redact_spans, w)
        results[f"redact_w{w}"] = rr
        print(
            f"redact ({w} process{'es' if w > 1 else ''}, uncached): {rr['spans']:,} spans / "
            f"{rr['fields']:,} fields in {rr['seconds']:.1f} s wall = {rr['spans_per_s']:,.0f} "
            f"spans/s ({rr['fields_per_s']:,.0f} fields/s; {rr['spans_per_cpu_s']:,.0f} spans, "
            f"{rr['fields_per_cpu_s']:,.0f} fields per CPU-second over all processes), "
            f"{rr['replacements']:,} replacements; engines loaded on other text, cold cache"
        )
        print(
            f"  CPU: {rr['cpu_s']:.1f} s in all (workers {', '.join(f'{c:.1f}' for c in rr['worker_cpu_s']) or '-'}); "
            f"with a free core per process: {rr['fields_per_s_free_cores']:,.0f} fields/s "
            "(fields / the busiest process's CPU-seconds)"
        )
        if w == 1:
            print(
                f"  detection lookups: {rr['detect_lookups']:,}, of which "
                f"{rr['detect_repeats']:,} were this run's own earlier strings (the second "
                "pass re-reads every text; JSON keys and fixed strings recur)"
            )
        if w == args.workers and w >= 2 and rr["fields_per_s"] < REDACT_FIELDS_TARGET:
            missed = True
            print(
                f"MISSED: {rr['fields_per_s']:,.0f} fields/s < {REDACT_FIELDS_TARGET:,} on {w} "
                f"processes (load average now {os.getloadavg()[0]:.1f})"
            )
    shutdown_pools()
    print(f"peak RSS of this process: {peak_rss_mib():,.0f} MiB")
    if args.full:
        _run_full(args, results)
    if args.json:
        print(json.dumps(results, default=str))
    if missed:
        raise SystemExit(1)


def _run_dedupe(args: argparse.Namespace, tmp: str, results: dict[str, object]) -> None:
    r = bench_dedupe(args.dedupe_traces, args.batch, os.path.join(tmp, "chdb"), "main")
    results["dedupe_store"] = r
    print(
        f"dedupe (store, chDB, batches of {args.batch}): {r['traces']:,} traces in "
        f"{r['dedupe_s']:.1f} s wall = {r['traces_per_s']:,.0f} traces/s "
        f"({r['traces_per_cpu_s']:,.0f} per CPU-second; signatures {r['signature_s']:.1f} s); "
        f"{r['clusters']:,} clusters for {r['true_groups']:,} true groups, pairwise precision "
        f"{r['pairwise_precision']:.4f} recall {r['pairwise_recall']:.4f}"
    )
    m = bench_dedupe_memory(min(args.dedupe_traces, 20_000))
    results["dedupe_memory"] = m
    print(
        f"dedupe (in memory, MinHashLSH): {m['traces']:,} traces in {m['seconds']:.1f} s "
        f"= {m['traces_per_s']:,.0f} traces/s"
    )


def _run_full(args: argparse.Namespace, results: dict[str, object]) -> None:
    """The 100,000-trace dedupe figures."""
    f = run_full(args.batch)
    results["dedupe_100k"] = f
    print(
        f"dedupe 100k (store, fresh process): {f['dedupe_s']:.1f} s wall "
            f"({f['dedupe_cpu_s']:.1f} CPU-s) + {f['generate_s']:.1f} s generating; "
            f"{f['traces_per_s']:,.0f} traces/s; {f['clusters']:,} clusters for "
            f"{f['true_groups']:,} groups (pairwise P {f['pairwise_precision']:.4f}, "
            f"R {f['pairwise_recall']:.4f}); peak RSS {f['peak_rss_mib']:,.0f} MiB "
            "(whole process: chDB, the 100k generated traces, Presidio imports)"
    )


if __name__ == "__main__":
    main()
