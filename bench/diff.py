"""Benchmark: typed diff of two 1,000,000-record snapshots with 1 % changes.

Workload: N records (default 1,000,000) of one resource type with six fields
(int id, two short strings, a float, a bool, a 40-character text), keyed by
id. sT differs from s0 in 1 % of records: 0.5 % updated (one field each),
0.25 % deleted, 0.25 % created. Reported: time to canonicalise each snapshot
(adapter output -> Snapshot), time of the diff itself, delta counts, peak RSS
(resource.getrusage) and, with --tracemalloc, the traced peak of the diff phase
alone (tracing slows Python down, so that run's time is not the headline).

Run: /work/venv/bin/python bench/diff.py [--n 1000000] [--tracemalloc]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import sys
import time
import tracemalloc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from flywheel.side_effects import (  # noqa: E402
    Profile,
    Record,
    Snapshot,
    classify,
    derive_scope,
    diff,
    gate_input,
)


def make_records(n: int, seed: int = 0) -> list[Record]:
    """N synthetic records, deterministic for a seed."""
    rnd = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
    out = []
    for i in range(n):
        out.append(
            Record(
                "accounts",
                (str(i),),
                {
                    "id": i,
                    "owner": rnd.choice(words),
                    "region": rnd.choice(words),
                    "balance": round(rnd.random() * 1000, 2),
                    "active": rnd.random() < 0.9,
                    "note": f"{rnd.choice(words)}-{i:012d}-{rnd.choice(words)}-xxxxxx",
                },
            )
        )
    return out


def mutate(
    records: list[Record], rate: float, seed: int = 1
) -> tuple[list[Record], dict[str, int]]:
    """Apply ``rate`` changes: half updates, a quarter deletes, a quarter creates."""
    rnd = random.Random(seed)
    n = len(records)
    k = int(n * rate)
    idx = rnd.sample(range(n), k)
    upd, dele = set(idx[: k // 2]), set(idx[k // 2 : k // 2 + k // 4])
    out = []
    for i, r in enumerate(records):
        if i in dele:
            continue
        if i in upd:
            f = dict(r.fields)
            f["balance"] = f["balance"] + 1.5
            out.append(Record(r.resource_type, r.key, f))
        else:
            out.append(r)
    created = k - len(upd) - len(dele)
    for j in range(created):
        i = n + j
        out.append(
            Record(
                "accounts",
                (str(i),),
                {
                    "id": i,
                    "owner": "new",
                    "region": "new",
                    "balance": 0.0,
                    "active": True,
                    "note": "new",
                },
            )
        )
    return out, {"updated": len(upd), "deleted": len(dele), "created": created}


def rss_mib() -> float:
    """Peak resident set size of this process so far, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    """Run the benchmark and print its figures."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rate", type=float, default=0.01)
    ap.add_argument("--tracemalloc", action="store_true", help="also trace the diff's peak memory")
    args = ap.parse_args()

    print(
        f"machine: {platform.machine()} {platform.system()} python {platform.python_version()}, "
        f"{os.cpu_count()} cores (shared with other work; load avg {os.getloadavg()[0]:.2f})"
    )
    print(
        f"workload: {args.n:,} records x 6 fields, {args.rate:.1%} changed "
        "(1/2 updated, 1/4 deleted, 1/4 created)"
    )

    t = time.perf_counter()
    s0_records = make_records(args.n)
    s1_records, expected = mutate(s0_records, args.rate)
    print(f"generate records: {time.perf_counter() - t:.2f} s")

    t = time.perf_counter()
    s0 = Snapshot.from_records(s0_records)
    t_s0 = time.perf_counter() - t
    t = time.perf_counter()
    s1 = Snapshot.from_records(s1_records)
    t_s1 = time.perf_counter() - t
    del s0_records, s1_records
    print(f"canonicalise snapshots: s0 {t_s0:.2f} s, sT {t_s1:.2f} s")
    rss_before = rss_mib()

    t = time.perf_counter()
    deltas = diff(s0, s1)
    t_diff = time.perf_counter() - t
    counts = {k: sum(1 for d in deltas if d.kind == k) for k in ("created", "updated", "deleted")}
    assert counts == expected, (counts, expected)
    print(f"diff: {t_diff:.2f} s -> {len(deltas):,} deltas {counts}")
    print(
        f"peak RSS (whole process, both snapshots resident): {rss_mib():.0f} MiB "
        f"(before diff {rss_before:.0f} MiB)"
    )

    scope = derive_scope(deltas[::2], source="every other delta")
    t = time.perf_counter()
    cls = classify(deltas, s0, scope, Profile(name="no-sinks"))
    t_cls = time.perf_counter() - t
    print(
        f"classify (scope = every other delta, no sinks): {t_cls:.2f} s -> {cls.counts()}, "
        f"gate events {gate_input(cls).total}"
    )
    t = time.perf_counter()
    cls = classify(deltas, s0, scope, Profile(name="sink", sinks=["accounts"]))
    t_cls = time.perf_counter() - t
    print(
        "classify (accounts declared a sink: content matching of "
        f"{counts['created'] + counts['updated']:,} writes against every private string "
        f"of s0): {t_cls:.2f} s"
    )
    print(f"peak RSS after classification: {rss_mib():.0f} MiB")

    if args.tracemalloc:
        tracemalloc.start()
        t = time.perf_counter()
        diff(s0, s1)
        t_tr = time.perf_counter() - t
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"diff phase traced peak: {peak / 2**20:.1f} MiB (traced run {t_tr:.2f} s)")


if __name__ == "__main__":
    main()
