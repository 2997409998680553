"""Bench: a full oracle lattice (all 32 subsets of the five seams) on a small AgentDojo set.

Workload: reference agent (seeded simulation, default hazards), AgentDojo
banking user_task_0..4 x 3 runs x 32 configurations = 480 trials, each in a
fresh environment, every trial a trace written into an embedded chDB store
(spans through the in-process store exporter, trial rows, snapshots,
ablation results), then the report (paired bootstrap per configuration,
pass^3, cost, horizon, Shapley). Machine: 2 cores, 24 GiB, shared with other
engineers' jobs (figures under load).

Run: /work/venv/bin/python bench/ablation_lattice.py [--workers 2] [--runs 3] [--tasks 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time

from flywheel.ablation import (
    AblationPlan,
    analyse,
    load_results,
    plot_png,
    run_ablation,
    to_markdown,
)
from flywheel.harness import (
    SEAMS,
    AgentSpec,
)

from flywheel import open_store


def main() -> None:
    """Run the lattice and print its figures."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        store = open_store(f"chdb://{d}")
        store.migrate()
        plan = AblationPlan(
            "agentdojo:banking",
            AgentSpec("reference"),
            tuple(SEAMS),
            lattice=True,
            runs=args.runs,
            tasks=tuple(f"user_task_{i}" for i in range(args.tasks)),
        )
        t0 = time.perf_counter()
        run = run_ablation(store, plan, workers=args.workers)
        t_run = time.perf_counter() - t0
        t1 = time.perf_counter()
        rep = analyse(plan, load_results(store, run.ablation_id), ablation_id=run.ablation_id)
        md = to_markdown(rep)
        png = plot_png(rep, f"{d}/ablation.png")
        t_rep = time.perf_counter() - t1
        n_spans = store.scalar(
            "SELECT count() AS n FROM agent_steps WHERE has({t:Array(String)}, trace_id)",
            {"t": [r["trace_id"] for r in load_results(store, run.ablation_id)]},
        )
        print(md.split("## Hazard")[0][-1800:])
        print(
            f"workload: {len(plan.configs)} configurations x {args.tasks} banking tasks x "
            f"{args.runs} runs = {run.ran} trials, workers={args.workers}; "
            "machine: 2 cores, 24 GiB, shared (under load)"
        )
        print(f"trials run: {run.ran}, spans/steps stored: {n_spans}, plot: {png}")
        print(f"ablation wall time: {t_run:.2f} s  ({run.ran / t_run:.1f} trials/s)")
        print(f"report (stats + markdown + png): {t_rep:.2f} s")
        store.close()


if __name__ == "__main__":
    main()
