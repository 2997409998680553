"""Benchmark: paired cluster bootstrap, 10,000 resamples over 10,000 tasks.

Run: ``/work/venv/bin/python bench/stats.py`` (add ``--repeat N`` for more
timings). Target: under 2 s per bootstrap on the project machine (2 cores,
24 GiB, shared). Two workloads:

* ``grid``: 0/1 outcomes, 4 runs per task per system (per-task deltas take at
  most 9 levels, so the grouped multinomial sampler runs);
* ``continuous``: per-task scores drawn from a continuous distribution (every
  delta distinct), which forces the chunked index sampler, the worst case.

Prints workload, machine, best and median wall seconds, and peak memory
(tracemalloc peak of the call, which sees numpy buffers, and process max RSS).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import time
import tracemalloc

import numpy as np
from flywheel.evalset.stats import paired_cluster_bootstrap

TASKS = 10_000
RESAMPLES = 10_000
RUNS = 4


def _workloads(seed: int = 7) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    p_task = rng.beta(2.0, 1.0, size=TASKS)
    base = (rng.random((TASKS, RUNS)) < p_task[:, None]).astype(np.int8)
    cand = (rng.random((TASKS, RUNS)) < np.clip(p_task + 0.03, 0, 1)[:, None]).astype(np.int8)
    score_b = rng.beta(2.0, 1.0, size=TASKS)
    score_c = np.clip(score_b + rng.normal(0.02, 0.1, size=TASKS), 0, 1)
    return {"grid": (base, cand), "continuous": (score_b, score_c)}


def _time(
    baseline: np.ndarray, candidate: np.ndarray, repeat: int
) -> tuple[list[float], int, object]:
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = paired_cluster_bootstrap(baseline, candidate, resamples=RESAMPLES, seed=0)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    paired_cluster_bootstrap(baseline, candidate, resamples=RESAMPLES, seed=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return times, peak, result


def main() -> None:
    """Run both workloads and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"workload : paired cluster bootstrap, {RESAMPLES:,} resamples x {TASKS:,} tasks")
    print(
        f"machine  : {platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores, "
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"load avg {load[0]:.2f} (shared machine: wall times are under that load)"
    )
    for name, (b, c) in _workloads().items():
        times, peak, result = _time(b, c, args.repeat)
        print(
            f"{name:10}: best {min(times):.3f} s, median {statistics.median(times):.3f} s "
            f"over {args.repeat} runs; tracemalloc peak {peak / 2**20:.1f} MiB; "
            f"delta {result.mean_delta:+.4f} [{result.lo:+.4f}, {result.hi:+.4f}]"
        )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process max RSS: {rss:.0f} MiB (includes the workload arrays and interpreter)")


if __name__ == "__main__":
    main()
