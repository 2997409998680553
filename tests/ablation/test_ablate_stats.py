"""On the reference agent with known hazards: ranking follows the hazards; intervals cover.

The reference agent (a declared SIMULATION) fires each hazard at its rate;
an oracle removes its component's hazard. With one hazard clearly largest,
the oracle that removes it must rank first. The oracle verifier recovers
every other component's errors (it measures rho), so it is ranked in its own
scenario (the verifier's skip hazard largest) rather than against the
information and planning seams, where it would always win by construction.
misread_result is removed by both the tools and the retrieval oracle (reads
go through retrieval), so either may rank first there.

Coverage: the true effect of an oracle over a task population is the mean
over tasks of the per-task difference of success probabilities. A pool of
many paired runs per task fixes a finite world whose truth is known exactly
(the pool mean); repeated experiments draw tasks with replacement and runs
without replacement from it, exactly as an experimenter samples tasks and
seeds, and each experiment's interval is checked against that truth.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from flywheel.ablation import AblationPlan, analyse, load_results, paired_delta, run_ablation
from flywheel.harness import AgentSpec

from flywheel import Store
from tests.ablation._ablate_helpers import LOW, DropSpans

SCENARIOS = [
    ("forget_constraint", 0.6, ("planner", "memory", "tools"), {"memory"}),
    ("wrong_tool", 0.6, ("planner", "memory", "tools"), {"planner"}),
    ("misread_result", 0.6, ("planner", "memory", "retrieval"), {"tools", "retrieval"}),
    ("skip_verification", 1.0, ("planner", "memory", "verifier"), {"verifier"}),
]


@pytest.mark.parametrize(("hazard", "rate", "oracles", "expected"), SCENARIOS)
def test_largest_injected_hazard_ranks_first(
    store: Store, hazard: str, rate: float, oracles: tuple[str, ...], expected: set[str]
) -> None:
    rates = {**LOW, hazard: rate}
    if hazard == "skip_verification":
        rates = {k: 0.15 for k in LOW} | {hazard: rate}
    plan = AblationPlan(
        "agentdojo:banking",
        AgentSpec("reference", {"rates": rates}),
        oracles,
        lattice=True,
        runs=3,
        seed=3,
    )
    run = run_ablation(store, plan, exporter=DropSpans(), chunk=2000)
    rep = analyse(plan, load_results(store, run.ablation_id), resamples=2000)
    top = rep.oracle_effects[0]
    assert top["oracle"] in expected, rep.oracle_effects
    assert top["lo"] > 0, top  # clearly positive, not a coin flip
    # the Shapley summary agrees on the winner
    best_phi = max(rep.oracle_effects, key=lambda e: e["shapley"])
    assert best_phi["oracle"] in expected


def _pool(store: Store, runs: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Paired pool: per task, `runs` outcomes of the baseline and of +memory."""
    base: dict[str, np.ndarray] = {}
    cand: dict[str, np.ndarray] = {}
    rates = {**LOW, "forget_constraint": 0.25}
    for suite in ("agentdojo:banking", "agentdojo:slack"):
        plan = AblationPlan(
            suite, AgentSpec("reference", {"rates": rates}), ("memory",), runs=runs, seed=11
        )
        run = run_ablation(store, plan, exporter=DropSpans(), chunk=5000, workers=1)
        grid: dict[tuple[str, str], dict[int, float]] = {}
        for r in load_results(store, run.ablation_id):
            grid.setdefault((r["config_key"], r["task_id"]), {})[r["run_index"]] = float(
                bool(r["utility"])
            )
        for (key, task), cells in grid.items():
            arr = np.array([cells[i] for i in range(runs)])
            (base if key == "baseline" else cand)[f"{suite}/{task}"] = arr
    return base, cand


def _coverage(
    base: dict[str, np.ndarray],
    cand: dict[str, np.ndarray],
    *,
    n_tasks: int,
    runs: int,
    experiments: int,
    seed: int,
) -> tuple[float, float, float]:
    units = sorted(base)
    truth = float(np.mean([cand[u].mean() - base[u].mean() for u in units]))
    pool_runs = len(base[units[0]])
    rng = random.Random(seed)
    hit_boot = hit_nc = n_nc = 0
    for e in range(experiments):
        b_grid: dict = {}
        c_grid: dict = {}
        for j in range(n_tasks):
            u = rng.choice(units)
            idx = rng.sample(range(pool_runs), runs)
            b_grid[(f"{u}#{j}", "")] = {i: {"utility": base[u][k]} for i, k in enumerate(idx)}
            c_grid[(f"{u}#{j}", "")] = {i: {"utility": cand[u][k]} for i, k in enumerate(idx)}
        pd = paired_delta(b_grid, c_grid, resamples=1000, seed=e)
        assert pd is not None
        hit_boot += pd.lo <= truth <= pd.hi
        if runs == 1:
            n_nc += 1
            hit_nc += pd.newcombe_lo <= truth <= pd.newcombe_hi
    return truth, hit_boot / experiments, (hit_nc / n_nc) if n_nc else math.nan


def test_intervals_cover_the_true_effect_at_about_nominal(store: Store) -> None:
    base, cand = _pool(store, runs=12)
    truth, boot3, _ = _coverage(base, cand, n_tasks=25, runs=3, experiments=200, seed=1)
    assert truth > 0.05  # the memory oracle has a real effect in this world
    assert 0.88 <= boot3 <= 0.995, boot3
    _, boot1, nc1 = _coverage(base, cand, n_tasks=40, runs=1, experiments=200, seed=2)
    assert 0.88 <= boot1 <= 0.995, boot1
    assert 0.90 <= nc1 <= 0.995, nc1


@pytest.mark.slow
def test_coverage_large(store: Store) -> None:
    base, cand = _pool(store, runs=40)
    for n_tasks, runs in ((30, 3), (60, 1)):
        _, boot, nc = _coverage(
            base, cand, n_tasks=n_tasks, runs=runs, experiments=2000, seed=n_tasks
        )
        print(f"coverage N={n_tasks} r={runs}: bootstrap {boot:.3f} newcombe {nc:.3f}")
        assert 0.925 <= boot <= 0.97, (n_tasks, runs, boot)
        if runs == 1:
            assert 0.93 <= nc <= 0.975, nc


@pytest.mark.slow
def test_coverage_end_to_end_repeated_ablations(store: Store) -> None:
    """Whole pipeline, repeated: each experiment is a fresh `run_ablation` on a random task set.

    Population: the 37 banking and slack tasks. Truth: per-task success
    probabilities from a 40-run pool (its noise, SE about 0.005, is small
    next to the intervals). Each experiment samples 15 tasks without
    replacement and a new seed, runs baseline and +memory with 2 runs per
    task through `run_ablation`, and reads the paired bootstrap interval
    off `analyse`. Sampling without replacement from a finite population
    makes the task bootstrap slightly conservative.
    """
    base, cand = _pool(store, runs=40)
    truth = float(np.mean([cand[u].mean() - base[u].mean() for u in base]))
    rates = {**LOW, "forget_constraint": 0.25}
    units = sorted(base)
    rng = random.Random(5)
    experiments, hits = 100, 0
    for e in range(experiments):
        chosen = rng.sample(units, 15)
        rows: list[dict] = []
        plan = None
        for suite in ("agentdojo:banking", "agentdojo:slack"):
            tasks = tuple(u.split("/", 1)[1] for u in chosen if u.startswith(suite + "/"))
            if not tasks:
                continue
            plan = AblationPlan(
                suite,
                AgentSpec("reference", {"rates": rates}),
                ("memory",),
                runs=2,
                seed=1000 + e,
                tasks=tasks,
            )
            run = run_ablation(store, plan, exporter=DropSpans(), chunk=5000)
            for r in load_results(store, run.ablation_id):
                rows.append({**r, "task_id": f"{suite}/{r['task_id']}"})
        assert plan is not None
        vs = analyse(plan, rows, resamples=2000).configs[1].vs_baseline
        assert vs is not None and vs.n_tasks == 15
        hits += vs.lo <= truth <= vs.hi
    print(f"end-to-end coverage {hits}/{experiments}, truth {truth:+.3f}")
    assert 0.88 <= hits / experiments <= 1.0, hits
