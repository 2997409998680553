"""What the store costs per span: the span insert, each materialized view, batch size.

A diagnostic for issue 24 (no target of its own; bench/ingest_throughput.py
holds the targets): the agents workload (bench/_otlp_agents.py, frozen before
the native decoder) is decoded once, then inserted in --batches batches of
--batch-spans spans into a fresh embedded store (chDB, every migration), as the
span writer inserts (each batch under its own dedup token, duplicate marking
first). Each variant runs in its own process (one chDB store per process) with
some views dropped; it reports the process's CPU (user + system, every thread:
the insert, the views, the merges it started, waited for until no merge runs)
per span, and the share of it spent marking duplicates. The difference between
two variants is what the dropped views cost. Prints the machine and the load
average: CPU per span inflates on a loaded machine, compare runs side by side.

    python bench/ingest_insert_cost.py [--batch-spans 20000] [--batches 30] [--variants all,...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Views each variant drops (every other migration object stays).
VARIANTS = {
    "all views": [],
    "without agent_steps_mv (and so trace_summaries)": ["agent_steps_mv"],
    "without trace_summaries_mv": ["trace_summaries_mv"],
    "without otel_traces_trace_id_ts_mv": ["otel_traces_trace_id_ts_mv"],
    "span table only": ["agent_steps_mv", "trace_summaries_mv", "otel_traces_trace_id_ts_mv"],
}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_variant(drop: list[str], batch_spans: int, batches: int) -> dict[str, float]:
    """Insert the workload with ``drop`` views dropped; CPU microseconds per span."""
    import pyarrow as pa

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _otlp_load import template

    from flywheel import Settings, open_store
    from flywheel.ingest._decode import decode_body
    from flywheel.ingest._duplicates import mark_duplicates
    from flywheel.ingest._limits import Limits

    limits = Limits.from_settings(Settings().ingest)
    tpl = template("agents", 1, 500)
    per = max(1, batch_spans // 500)
    data = [pa.concat_tables([
        decode_body(tpl.render(100 + b * per + i), "application/x-protobuf", project="default",
                    limits=limits).table for i in range(per)]) for b in range(batches)]
    store = open_store(f"chdb://{tempfile.mkdtemp(prefix='insert-cost-')}/store")
    store.migrate()
    for view in drop:
        store.command(f"DROP VIEW {view}")
    spans = sum(t.num_rows for t in data)
    marking = 0.0
    start = _cpu()
    for i, table in enumerate(data):
        t0 = _cpu()
        mark_duplicates(store, table)
        marking += _cpu() - t0
        store.insert(store.otel_table, table, dedup_token=f"wal:bench:0:{i}-{i + 1}")
    time.sleep(1)
    while store.scalar("SELECT count() FROM system.merges") > 0:
        time.sleep(0.5)
    total = _cpu() - start
    return {"spans": spans, "cpu_us_per_span": round(total * 1e6 / spans, 1),
            "marking_duplicates_us_per_span": round(marking * 1e6 / spans, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch-spans", type=int, default=20_000)
    ap.add_argument("--batches", type=int, default=30)
    ap.add_argument("--variants", default=",".join(str(i) for i in range(len(VARIANTS))),
                    help="indexes into: " + "; ".join(f"{i} {n}" for i, n in enumerate(VARIANTS)))
    ap.add_argument("--_one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._one is not None:
        print(json.dumps(run_variant(json.loads(args._one), args.batch_spans, args.batches)))
        return
    names = list(VARIANTS)
    print(f"machine: {os.cpu_count()} cores, chDB embedded store; workload: agents, "
          f"{args.batches} inserts of {args.batch_spans} spans; load average "
          f"{os.getloadavg()[0]:.2f}")
    for i in (int(x) for x in args.variants.split(",")):
        out = subprocess.run(
            [sys.executable, __file__, "--batch-spans", str(args.batch_spans), "--batches",
             str(args.batches), "--_one", json.dumps(VARIANTS[names[i]])],
            capture_output=True, text=True, check=True).stdout
        got = json.loads(out.strip().splitlines()[-1])
        print(f"{names[i]:>48}: {got['cpu_us_per_span']:6.1f} us/span "
              f"(marking duplicates {got['marking_duplicates_us_per_span']})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
