"""Benchmark: reference-agent trials per second through the harness.

Workload: the reference agent (default hazard rates, all seams real) on every
user task of AgentDojo v1.2 banking and slack (37 tasks), --runs runs each,
--workers threads. Three sinks are measured separately:

- ``memory``: spans to the OTel SDK's InMemorySpanExporter (the harness alone:
  reset, s0/sT snapshots, agent, seams, spans, AgentDojo's checks);
- ``store``: spans into an embedded chDB store through StoreSpanExporter
  (batched), then the trial and snapshot rows (``save_trials``); the time
  includes the final flush and the row inserts;
- ``otlp`` (with --otlp URL): spans to a running platform over OTLP/HTTP.

Machine: 2 cores shared with other work (report wall-clock figures as measured
under that load). Run: /work/venv/bin/python bench/harness.py [--runs 5] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from flywheel.harness import (
    AgentSpec,
    StoreSpanExporter,
    otlp_exporter,
    plan_trials,
    run_trials,
    save_trials,
    task_ids,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from flywheel import open_store  # noqa: E402


def _specs(runs: int) -> list:
    agent = AgentSpec("reference")
    return plan_trials("agentdojo:banking", agent, runs=runs) + plan_trials(
        "agentdojo:slack", agent, runs=runs, seed=1
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--otlp", help="also measure OTLP/HTTP export to this platform URL")
    a = ap.parse_args()
    t = time.perf_counter()
    task_ids("banking")
    task_ids("slack")
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; "
        f"agentdojo import+suite load {time.perf_counter() - t:.1f} s (once per process)"
    )
    run_trials(_specs(1), InMemorySpanExporter(), workers=a.workers)  # warm caches
    n = len(_specs(a.runs))
    print(
        f"workload: reference agent, banking+slack, {n} trials "
        f"({a.runs} runs x 37 tasks), {a.workers} workers"
    )

    exporter = InMemorySpanExporter()
    t = time.perf_counter()
    recs = run_trials(_specs(a.runs), exporter, workers=a.workers)
    dt = time.perf_counter() - t
    spans = len(exporter.get_finished_spans())
    util = sum(bool(r.utility) for r in recs) / len(recs)
    print(
        f"memory: {len(recs) / dt:8.1f} trials/s  ({spans / dt:,.0f} spans/s, "
        f"{spans / len(recs):.1f} spans/trial, "
        f"utility {util:.3f})"
    )

    with tempfile.TemporaryDirectory() as d:
        store = open_store(f"chdb://{d}")
        store.migrate()
        sexp = StoreSpanExporter(store)
        t = time.perf_counter()
        recs = run_trials(_specs(a.runs), sexp, workers=a.workers)
        save_trials(store, recs)
        dt = time.perf_counter() - t
        stored = store.scalar("SELECT count() AS n FROM otel_traces")
        print(
            f"store:  {len(recs) / dt:8.1f} trials/s  ({stored:,} spans stored, "
            f"failures {sexp.failures}, "
            f"trial+snapshot rows included)"
        )
        store.close()

    if a.otlp:
        t = time.perf_counter()
        recs = run_trials(_specs(a.runs), otlp_exporter(a.otlp), workers=a.workers)
        dt = time.perf_counter() - t
        print(f"otlp:   {len(recs) / dt:8.1f} trials/s  (to {a.otlp}, export flushed)")


if __name__ == "__main__":
    main()
