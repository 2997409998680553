"""Simulated false-ship rate of the gate's decision (bench/gate_false_ship.py, small variant).

The default run checks the issue's failing cells (true difference -5 points,
5 and 20 tasks, one and three runs) on three generators, and that
``run_gate`` decides exactly as the simulated decision functions do; the
full sweep (every generator, delta, task count and design) runs with
``--runslow``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from flywheel.evalset import GateRules, Trial, load_evalset, run_gate

from .test_gate_rules import write_evalset

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gate_false_ship.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gate_false_ship", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gate_false_ship"] = mod
    spec.loader.exec_module(mod)
    return mod


def _limit(sims: int, k: float = 3.0) -> float:
    return 0.025 + k * float(np.sqrt(0.025 * 0.975 / sims))


def test_worse_candidates_do_not_ship_small_variant(bench: ModuleType) -> None:
    sims = 2000
    res = bench.sweep(sims, seed=11, generators=("flip", "tradeoff", "mostly_deterministic"),
                      tasks=(5, 20), deltas=(-0.05,))
    for cell, f in res.items():
        assert f["ship"] <= _limit(sims), (cell, f)
    # the model (no task got worse in 46 % of 10-task samples) ships at most rarely
    flip = bench.simulate("flip", -0.05, 10, 1, sims, seed=3)
    assert flip["ship"] <= _limit(sims) and flip["insufficient"] > 0.9


def test_lower_limit_holds_on_left_skewed_deltas_and_sparse_cells_are_named(
    bench: ModuleType,
) -> None:
    """The cell that moved the rule: 80 % deterministic tasks, 20 % carry -5 points, 200 tasks.

    The plain t's lower limit sat above the truth in 4.1 % of samples (nominal
    2.5 %); the skewness-corrected one must not, and coverage stays in band.
    At 20 tasks half the samples are sparse: over-coverage there is excused
    with its reason, never silently.
    """
    sims = 3000
    se = float(np.sqrt(0.025 * 0.975 / sims))
    f = bench.simulate("mostly_deterministic", -0.05, 200, 3, sims, seed=21)
    assert f["lower_error"] <= 0.025 + 2 * se, f
    assert 0.94 - 0.01 <= f["coverage"] <= 0.96 + 0.01, f
    res = {("mostly_deterministic", 0.0, 20, 3):
           bench.simulate("mostly_deterministic", 0.0, 20, 3, sims, seed=22)}
    assert res[("mostly_deterministic", 0.0, 20, 3)]["sparse"] > 0.4
    assert bench.misses(res, sims) == []
    (why,) = bench.excused(res, sims)
    assert "of samples have at most 2 tasks that differ" in why


def test_generators_hit_their_true_difference(bench: ModuleType) -> None:
    rng = np.random.default_rng(0)
    for name, gen in bench.GENERATORS.items():
        for delta in bench.DELTAS:
            p_b, p_c = gen(rng, 50_000, 1, delta)
            assert 0 <= p_b.min() and p_b.max() <= 1 and -1e-12 <= p_c.min() <= p_c.max() <= 1
            assert float(np.mean(p_c - p_b)) == pytest.approx(delta, abs=0.004), name


def test_heldout_generators_hit_their_true_difference(bench: ModuleType) -> None:
    """Round 3 draws runs itself: task means over many tasks hit the declared delta."""
    rng = np.random.default_rng(1)
    for name, gen in bench.HELDOUT.items():
        for delta in bench.DELTAS:
            base, cand = gen(rng, 10, 4000, 3, delta)
            assert base.shape == cand.shape == (10, 4000, base.shape[-1]), name
            got = float(np.mean(np.nanmean(cand, -1) - np.nanmean(base, -1)))
            assert got == pytest.approx(delta, abs=0.008), (name, delta)
    ragged = bench.h_ragged(rng, 2, 500, 3, 0.0)[0]
    counts = np.sum(~np.isnan(ragged), -1)
    assert counts.min() == 1 and counts.max() == 5 and ragged.shape[-1] == 5


def _trials(arm: str, outcomes: np.ndarray) -> list[Trial]:
    return [
        Trial.model_validate(
            {"trial_id": f"{arm}-{i}-{j}", "task_id": f"t{i}", "config": {"id": arm},
             "environment_id": f"env-{arm}-{i}-{j}",
             "observations": {"recorded": {"outcome": "pass" if ok else "fail"},
                              "side_effects": {}}}
        )
        for i, row in enumerate(outcomes)
        for j, ok in enumerate(row)
    ]


@pytest.mark.parametrize("runs", [1, 3])
def test_run_gate_decides_as_the_simulated_decision(bench: ModuleType, tmp_path: Path,
                                                    runs: int) -> None:
    """The bench simulates the gate itself: same outcome and limits on the same eval sets."""
    n = 12
    es = load_evalset(write_evalset(tmp_path / "ev", n))
    rules = GateRules.model_validate({"margin": 0.02, "bootstrap": {"resamples": 200}})
    rng = np.random.default_rng(runs)
    for _ in range(6):
        p_b, p_c = bench.g_logit(rng, 1, n, 0.05)
        base = rng.random((n, runs)) < p_b[0][:, None]
        cand = rng.random((n, runs)) < p_c[0][:, None]
        res = run_gate(es, _trials("b", base), _trials("c", cand), rules)
        if runs == 1:
            b, c = base[:, 0], cand[:, 0]
            sim = bench.decide_cells((b & c).sum(), (b & ~c).sum(), (~b & c).sum(),
                                     (~b & ~c).sum(), 0.02)
        else:
            sim = bench.decide_deltas(cand.mean(1) - base.mean(1), 0.02)
        d = res.report["paired"]["decision"]
        outcome = ("noninferior", "inferior", "insufficient_evidence")[int(sim["outcome"])]
        assert d["outcome"] == outcome
        assert d["lo"] == pytest.approx(float(sim["lo"])) and d["hi"] == pytest.approx(
            float(sim["hi"])
        )
        assert (res.verdict == "SHIP") == (outcome == "noninferior")


@pytest.mark.slow
def test_full_sweep_meets_the_false_ship_target_and_coverage_never_falls_short(
    bench: ModuleType,
) -> None:
    sims = 4000
    res = bench.sweep(sims, seed=5)
    se = float(np.sqrt(0.05 * 0.95 / sims))
    for (gen, delta, n, r), f in res.items():
        if delta < -bench.MARGIN:
            assert f["ship"] <= _limit(sims, 2.0), (gen, delta, n, r, f)
        if r > 1 and n in bench.COVERAGE_TASKS and gen not in bench.DETERMINISTIC:
            assert f["coverage"] >= 0.94 - 2 * se, (gen, delta, n, r, f)
            if delta <= -bench.MARGIN:
                assert f["lower_error"] <= _limit(sims, 3.0), (gen, delta, n, r, f)
