"""Benchmark: failure attribution on a second, unseen log format (LangGraph over OTLP).

Run: ``python bench/attribution_langgraph.py``. Workload: every run of
``tests/attribution/data/langgraph_runs.json`` (21: 6 successes, 15 failures of
7 kinds) is executed by real LangGraph agents with scripted stand-in models,
traced by OpenInference's LangChain instrumentor and exported with the stock
OTLP/protobuf exporter to a live server of the platform on a fresh embedded
store; then each stored trace is attributed (failures as known failures,
successes not). No attribution code knows LangGraph or OpenInference: the
signals read generic step fields; agents are the graph's nodes, from the span
tree.

The runs were written by the engineer who wrote the signals (see the data
file's note): this shows the format works end to end, it is not an independent
accuracy estimate. Printed: agent / causal-span / category accuracy with 95%
Wilson intervals, the same for two label-free heuristics (last model turn,
first model turn that called a tool), an exact McNemar test against the better
heuristic, and whether each success got no failure category.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flywheel.attribution import category_distribution  # noqa: E402
from flywheel.evalset.stats import mcnemar_exact, paired_counts, wilson_interval  # noqa: E402

from flywheel import open_store  # noqa: E402
from tests.attribution import _langgraph as lg  # noqa: E402
from tests.ingest._server import running_server  # noqa: E402


def _pct(k: int, n: int) -> str:
    ci = wilson_interval(k, n)
    return f"{100 * k / n:6.2f} [{100 * float(ci.lo):5.1f}, {100 * float(ci.hi):5.1f}]"


def main() -> None:
    """Run, attribute and print."""
    runs = lg.DATA["runs"]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        store = open_store(f"chdb://{d}/db?database=lg")
        store.migrate()
        with running_server(store, Path(d) / "wal") as (url, app):
            lg.export_runs(url, runs)
            if not app.state.writer.flush(60):
                sys.exit("the server did not store the spans in time")
        recs = list(lg.score(store, runs))
        store.close()
    wall = time.perf_counter() - t0
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, python "
        f"{platform.python_version()}, load {os.getloadavg()[0]:.2f}; {len(runs)} runs run, "
        f"exported, stored and attributed in {wall:.1f} s"
    )
    fails = [r for r in recs if r["failed"]]
    oks = [r for r in recs if not r["failed"]]
    n = len(fails)
    print(
        f"\nfailed runs (n={n})                 agent % [95% Wilson]   causal span % [95% Wilson]"
    )
    rows = {
        "product (deterministic)": ("agent_ok", "span_ok"),
        "last model turn": ("last_agent_ok", "last_span_ok"),
        "first turn that called a tool": ("first_action_agent_ok", "first_action_span_ok"),
    }
    for name, (ak, sk) in rows.items():
        a, s = sum(r[ak] for r in fails), sum(r[sk] for r in fails)
        print(f"  {name:<32} {_pct(a, n):>24} {_pct(s, n):>24}")
    for dim, i in (("agent", 0), ("span", 1)):
        best = max(list(rows)[1:], key=lambda m: sum(r[rows[m][i]] for r in fails))
        _, b, c, _ = paired_counts(
            [r[rows[best][i]] for r in fails],
            [r[rows["product (deterministic)"][i]] for r in fails],
        )
        p = float(mcnemar_exact(b, c))
        verdict = "BEATS it" if p < 0.05 and c > b else "no significant difference"
        print(
            f"  {dim}: vs '{best}': product-only {c}, heuristic-only {b}, "
            f"exact McNemar p = {p:.4f} -> {verdict}"
        )
    cat = sum(r["category_ok"] for r in fails)
    print(f"  category agreement {_pct(cat, n)}")
    dist = category_distribution(r["attribution"].category for r in fails)
    print(
        "  category distribution (failed runs): " + ", ".join(f"{c} {k}" for c, k in dist["counts"])
    )
    if dist["warning"]:
        print(f"  WARNING: {dist['warning']}")
    missed = [r["run"] for r in fails if not (r["agent_ok"] and r["span_ok"] and r["category_ok"])]
    print(f"  not fully right: {', '.join(missed) or 'none'}")
    clean = sum(r["no_failure_category"] for r in oks)
    print(f"successful runs given no failure category: {clean} of {len(oks)}")
    if clean < len(oks):
        sys.exit(1)


if __name__ == "__main__":
    main()
