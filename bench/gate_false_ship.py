"""Simulation bench: how often the release gate ships, by true difference, tasks and runs.

Workload: for each true candidate-minus-baseline difference (-5, -2, 0, +5
points), task count (5, 10, 20, 50, 200) and runs per task (1, 3), draw
``--sims`` independent paired eval sets from each task generator below, run
the gate's paired decision on every one (``flywheel.evalset.stats``
``decide_cells`` for one run per task, ``decide_deltas`` for several: the
functions ``run_gate`` calls through ``paired_decision``), and count how
often it ships (outcome ``noninferior``). Margin 2 points, 95 %
confidence, declared power 0.8, the gate's defaults.

Targets (exit 1 when one is missed):

* ship rate <= 2.5 % + 2 Monte Carlo SE wherever the true difference is
  below -margin (-5 points), for every generator;
* coverage of the several-runs decision interval (the skewness-corrected
  cluster paired t with the exact zero-spread bound) within 0.94-0.96 at 20,
  50 and 200 tasks, 3 runs. Held out of that target, each printed with its
  reason and figures: the ``flip`` generator (every task deterministic, so
  three runs are one run repeated), and over-coverage (never
  under-coverage) in a cell where at least 25 % of the samples are sparse
  (at most 2 task deltas differ from the median task's: such a sample
  cannot tell -5 points from +5, so an interval that covers -5 must cover
  0 too).

The coverage table also prints the lower- and upper-tail errors (nominal
0.025 each) and the share of sparse samples. Where the true difference is
above -margin the ship table shows the power. ``--compare`` prints the
study that chose the several-runs interval (percentile, BCa and
studentized paired cluster bootstraps and the cluster paired t);
``--compare-skew SIMS`` the study that chose its skewness correction.

Task generators (per task: a baseline and a candidate pass probability; runs
are Bernoulli draws given the task; the true difference is the population
mean of ``p_C - p_B``, solved numerically where it is not set by
construction):

* ``logit`` (used to choose the method): logit-normal difficulty
  N(0.4, 1.5^2), effect N(mu, 0.5^2) on the logit scale.
* ``flip`` and ``concentrated`` (looked at while choosing): the issue's
  model, deterministic tasks of which 10 % flip (7.5 % worse and 2.5 %
  better at -5 points); the effect carried by 10 % of tasks with U-shaped
  difficulty Beta(0.5, 0.5).
* ``tradeoff``, ``mostly_deterministic``, ``beta_additive`` (held out,
  round 1: written before the decision rule was run on them): 15 % of
  tasks lose 50 points while the rest gain a little (a left-skewed delta,
  the hard case for a symmetric t); 80 % deterministic unchanged tasks with
  the effect on 20 % stochastic ones; Beta(1.5, 1.5) difficulty plus a
  shift with N(0, 0.15^2) per-task noise, clipped to [0, 1]. Round 1 found
  the one failure of the t with N - 1 degrees of freedom (8 % ship rate at
  the margin on ``mostly_deterministic``, 20 tasks): the Satterthwaite
  degrees of freedom were added because of it.
* ``rare_catastrophe``, ``flaky_mixture`` (held out, round 2: written after
  that change and before running it on them, not changed after): 4 % of
  tasks lose 90 points while the rest move a little; 60 % stable tasks (p
  0.03 or 0.97) of which 8 % flip, 40 % flaky tasks (p in 0.25-0.75) that
  shift, each carrying half of the difference.

All eight are development generators now: the skewness correction was
chosen on them. Round 3 (``HELDOUT``, run only with ``--heldout``; written
and committed before the corrected rule was run on them): heavy-tailed
difficulty and effect, arms whose paired runs share their random numbers,
ragged designs (1-5 runs per task and arm), a bimodal +/-30-point effect.

Run: ``python bench/gate_false_ship.py`` (default 4,000 simulations a cell,
about a minute on 2 shared cores); ``--sims 20000`` for the full sweep;
``--heldout`` for round 3; ``--compare`` / ``--compare-skew SIMS`` for the
method studies. The default test suite runs a small
variant (``tests/evalset/test_gate_false_ship.py``); the full sweep runs
with ``--runslow``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from functools import cache

import numpy as np
from flywheel.evalset.stats import (
    cluster_t_interval,
    decide_cells,
    decide_deltas,
    satterthwaite_df,
    skew_corrected_t_interval,
    zero_spread_interval,
)
from flywheel.evalset.stats._decision import _hall_coefficients, _hall_inverse
from scipy import optimize, special, stats

MARGIN = 0.02
CONFIDENCE = 0.95
POWER = 0.8
DELTAS = (-0.05, -0.02, 0.0, 0.05)
TASKS = (5, 10, 20, 50, 200)
RUNS = (1, 3)
COVERAGE_TASKS = (20, 50, 200)
#: Generators with no run-to-run variation (coverage printed, not held to the target).
DETERMINISTIC = ("flip",)
#: A sample is "sparse" when at most this many tasks' deltas differ from its median task's.
SPARSE_TASKS = 2
#: Over-coverage (above 0.96) is excused, and printed with the reason, in a cell where at
#: least this share of samples is sparse: there the data cannot tell -5 from +5 points
#: (see ``docs/gate.md``). Under-coverage, the lower-tail error and the ship rate never are.
SPARSE_EXCUSE = 0.25

Generator = Callable[[np.random.Generator, int, int, float], tuple[np.ndarray, np.ndarray]]


@cache
def _logit_shift(delta: float) -> float:
    r = np.random.default_rng(12345)
    a, e = r.normal(0.4, 1.5, 400_000), r.normal(0.0, 0.5, 400_000)
    return float(
        optimize.brentq(lambda m: np.mean(special.expit(a + m + e) - special.expit(a)) - delta,
                        -6, 6)
    )


def g_logit(rng: np.random.Generator, s: int, n: int, delta: float) -> tuple[np.ndarray, ...]:
    """Logit-normal difficulty, normally distributed effect on the logit scale."""
    a = rng.normal(0.4, 1.5, (s, n))
    b = rng.normal(_logit_shift(delta), 0.5, (s, n))
    return special.expit(a), special.expit(a + b)


def g_flip(rng: np.random.Generator, s: int, n: int, delta: float) -> tuple[np.ndarray, ...]:
    """Deterministic tasks; 10 % flip, worse minus better = -delta (the issue's model)."""
    worse, better = (0.10 - delta) / 2, (0.10 + delta) / 2
    u = rng.random((s, n))
    base = (rng.random((s, n)) < 0.6).astype(float)
    w, bt = u < worse, (u >= worse) & (u < worse + better)
    p_b = np.where(w, 1.0, np.where(bt, 0.0, base))
    p_c = np.where(w, 0.0, np.where(bt, 1.0, base))
    return p_b, p_c


def g_concentrated(
    rng: np.random.Generator, s: int, n: int, delta: float
) -> tuple[np.ndarray, ...]:
    """The effect on 10 % of tasks (size delta/0.1), U-shaped difficulty elsewhere."""
    h = delta / 0.1
    p_b = rng.beta(0.5, 0.5, (s, n))
    hit = rng.random((s, n)) < 0.1
    lo, hi = (-h, 1.0) if h < 0 else (0.0, 1.0 - h)
    p_b = np.where(hit, rng.uniform(lo, hi, (s, n)), p_b)
    return p_b, np.where(hit, p_b + h, p_b)


def g_tradeoff(rng: np.random.Generator, s: int, n: int, delta: float) -> tuple[np.ndarray, ...]:
    """15 % of tasks lose 50 points, the rest gain h: a left-skewed task delta."""
    h = (delta + 0.15 * 0.5) / 0.85
    lose = rng.random((s, n)) < 0.15
    p_b = np.where(lose, rng.uniform(0.5, 1.0, (s, n)), (1.0 - h) * rng.beta(2.0, 1.2, (s, n)))
    return p_b, np.where(lose, p_b - 0.5, p_b + h)


def g_mostly_deterministic(
    rng: np.random.Generator, s: int, n: int, delta: float
) -> tuple[np.ndarray, ...]:
    """80 % deterministic unchanged tasks; 20 % stochastic tasks carry a shift of delta/0.2."""
    shift = delta / 0.2
    stochastic = rng.random((s, n)) < 0.2
    fixed = (rng.random((s, n)) < 0.6).astype(float)
    lo, hi = max(0.05, -shift + 0.05), min(0.95, 0.95 - shift)
    p_b = np.where(stochastic, rng.uniform(lo, hi, (s, n)), fixed)
    return p_b, np.where(stochastic, p_b + shift, p_b)


@cache
def _beta_shift(delta: float) -> float:
    r = np.random.default_rng(54321)
    pb, e = r.beta(1.5, 1.5, 400_000), r.normal(0.0, 0.15, 400_000)
    return float(
        optimize.brentq(lambda m: np.mean(np.clip(pb + m + e, 0, 1) - pb) - delta, -1, 1)
    )


def g_beta_additive(
    rng: np.random.Generator, s: int, n: int, delta: float
) -> tuple[np.ndarray, ...]:
    """Beta(1.5, 1.5) difficulty plus a shift with per-task noise, clipped to [0, 1]."""
    p_b = rng.beta(1.5, 1.5, (s, n))
    return p_b, np.clip(p_b + _beta_shift(delta) + rng.normal(0.0, 0.15, (s, n)), 0.0, 1.0)


def g_rare_catastrophe(
    rng: np.random.Generator, s: int, n: int, delta: float
) -> tuple[np.ndarray, ...]:
    """4 % of tasks lose 90 points (pass -> fail), the rest move by h: rare big losses."""
    h = (delta + 0.04 * 0.9) / 0.96
    hit = rng.random((s, n)) < 0.04
    lo, hi = max(0.0, -h), min(1.0, 1.0 - h)
    p_b = np.where(hit, rng.uniform(0.9, 1.0, (s, n)), lo + (hi - lo) * rng.beta(2.0, 2.0, (s, n)))
    return p_b, np.where(hit, p_b - 0.9, p_b + h)


def g_flaky_mixture(
    rng: np.random.Generator, s: int, n: int, delta: float
) -> tuple[np.ndarray, ...]:
    """60 % stable tasks (p 0.03 or 0.97), 8 % of them flip; 40 % flaky tasks shift.

    The flips carry half of the difference, the flaky tasks' shift the other half.
    """
    diff = delta / (2 * 0.6 * 0.94)
    f_w, f_b = (0.08 - diff) / 2, (0.08 + diff) / 2
    flaky = rng.random((s, n)) < 0.4
    u = rng.random((s, n))
    high = rng.random((s, n)) < 0.5
    stable = np.where(high, 0.97, 0.03)
    worse = ~flaky & high & (u < 2 * f_w)
    better = ~flaky & ~high & (u < 2 * f_b)
    shift = delta / 0.8
    p_f = rng.uniform(0.25, 0.75, (s, n))
    p_b = np.where(flaky, p_f, stable)
    p_c = np.where(flaky, p_f + shift, np.where(worse, 0.03, np.where(better, 0.97, stable)))
    return p_b, p_c


GENERATORS: dict[str, Generator] = {
    "logit": g_logit,
    "flip": g_flip,
    "concentrated": g_concentrated,
    "tradeoff": g_tradeoff,
    "mostly_deterministic": g_mostly_deterministic,
    "beta_additive": g_beta_additive,
    "rare_catastrophe": g_rare_catastrophe,
    "flaky_mixture": g_flaky_mixture,
}


# Round 3 held out (written and committed before the skewness-corrected rule
# was run on them). These draw the runs themselves, so a design can be ragged
# and the two arms' runs can be correlated: ``(rng, sims, tasks, runs, delta)
# -> (base, cand)`` outcome arrays ``(sims, tasks, max runs)`` with ``nan``
# where a task has fewer runs. The true difference is the population mean of
# ``p_C - p_B`` as before (run counts are drawn independently of the task).

RunGenerator = Callable[[np.random.Generator, int, int, int, float],
                        tuple[np.ndarray, np.ndarray]]


def _bernoulli(rng: np.random.Generator, p: np.ndarray, runs: int) -> np.ndarray:
    return (rng.random((*p.shape, runs)) < p[..., None]).astype(float)


@cache
def _heavy_shift(delta: float) -> float:
    r = np.random.default_rng(2468)
    a, e = 0.3 + 1.2 * r.standard_t(2, 400_000), 0.8 * r.standard_t(3, 400_000)
    return float(
        optimize.brentq(lambda m: np.mean(special.expit(a + m + e) - special.expit(a)) - delta,
                        -6, 6)
    )


def h_heavy_tailed(rng: np.random.Generator, s: int, n: int, runs: int,
                   delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Heavy-tailed difficulty (logit ~ t with 2 df) and a t(3) effect on the logit scale."""
    a = 0.3 + 1.2 * rng.standard_t(2, (s, n))
    b = _heavy_shift(delta) + 0.8 * rng.standard_t(3, (s, n))
    return _bernoulli(rng, special.expit(a), runs), _bernoulli(rng, special.expit(a + b), runs)


@cache
def _corr_shift(delta: float) -> float:
    r = np.random.default_rng(1357)
    pb, e = r.uniform(0.05, 0.95, 400_000), r.normal(0.0, 0.12, 400_000)
    return float(
        optimize.brentq(lambda m: np.mean(np.clip(pb + m + e, 0, 1) - pb) - delta, -1, 1)
    )


def h_correlated_arms(rng: np.random.Generator, s: int, n: int, runs: int,
                      delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Run j of both arms shares its random number with probability 0.7 (common seeds).

    Each arm is still Bernoulli(p) run by run; the paired runs are positively
    correlated, as when both configurations meet the same flaky environment.
    """
    p_b = rng.uniform(0.05, 0.95, (s, n))
    p_c = np.clip(p_b + _corr_shift(delta) + rng.normal(0.0, 0.12, (s, n)), 0.0, 1.0)
    u_b = rng.random((s, n, runs))
    u_c = np.where(rng.random((s, n, runs)) < 0.7, u_b, rng.random((s, n, runs)))
    return (u_b < p_b[..., None]).astype(float), (u_c < p_c[..., None]).astype(float)


def h_ragged(rng: np.random.Generator, s: int, n: int, runs: int,
             delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Unequal run counts (1 to 2 runs - 1 per task and arm); bimodal difficulty.

    Half the tasks easy (Beta(8, 1)), half hard (Beta(1, 4)); the candidate
    shifts the hard tasks only, by 2 delta (the easy half is unchanged).
    """
    easy = rng.random((s, n)) < 0.5
    h = 2.0 * delta
    hard = rng.beta(1.0, 4.0, (s, n)) * (1.0 - max(h, 0.0)) + max(-h, 0.0)
    p_b = np.where(easy, rng.beta(8.0, 1.0, (s, n)), hard)
    p_c = np.where(easy, p_b, p_b + h)
    top = 2 * runs - 1
    base, cand = _bernoulli(rng, p_b, top), _bernoulli(rng, p_c, top)
    if runs > 1:
        for arm in (base, cand):
            k = rng.integers(1, top + 1, (s, n))
            arm[np.arange(top)[None, None, :] >= k[..., None]] = np.nan
    return base, cand


def h_bimodal_effect(rng: np.random.Generator, s: int, n: int, runs: int,
                     delta: float) -> tuple[np.ndarray, np.ndarray]:
    """30 % of tasks move by +30 or -30 points (bimodal effect), the rest do not move.

    Among the moved tasks the share moving up is ``1/2 + delta / 0.18``;
    U-shaped difficulty Beta(0.7, 0.7) for the unmoved ones.
    """
    moved = rng.random((s, n)) < 0.3
    up = rng.random((s, n)) < 0.5 + delta / 0.18
    p_m = rng.uniform(0.3, 0.7, (s, n))
    p_b = np.where(moved, p_m, rng.beta(0.7, 0.7, (s, n)))
    p_c = np.where(moved, np.where(up, p_m + 0.3, p_m - 0.3), p_b)
    return _bernoulli(rng, p_b, runs), _bernoulli(rng, p_c, runs)


#: Round 3, held out: run only with ``--heldout`` (never in the development sweep).
HELDOUT: dict[str, RunGenerator] = {
    "heavy_tailed": h_heavy_tailed,
    "correlated_arms": h_correlated_arms,
    "ragged": h_ragged,
    "bimodal_effect": h_bimodal_effect,
}


def draw_runs(gen: str, rng: np.random.Generator, sims: int, tasks: int, runs: int,
              delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Baseline and candidate run outcomes ``(sims, tasks, runs)``, ``nan`` where absent."""
    if gen in HELDOUT:
        return HELDOUT[gen](rng, sims, tasks, runs, delta)
    p_b, p_c = GENERATORS[gen](rng, sims, tasks, delta)
    return _bernoulli(rng, p_b, runs), _bernoulli(rng, p_c, runs)


def simulate(gen: str, delta: float, tasks: int, runs: int, sims: int, seed: int) -> dict:
    """Ship rate and interval coverage of the gate's decision on ``sims`` eval sets."""
    rng = np.random.default_rng(seed)
    base, cand = draw_runs(gen, rng, sims, tasks, runs, delta)
    if runs == 1:
        b, c = base[..., 0] > 0.5, cand[..., 0] > 0.5
        res = decide_cells((b & c).sum(1), (b & ~c).sum(1), (~b & c).sum(1), (~b & ~c).sum(1),
                           MARGIN, CONFIDENCE, POWER)
    else:
        res = decide_deltas(np.nanmean(cand, -1) - np.nanmean(base, -1), MARGIN, CONFIDENCE,
                            POWER)
    covered = (res["lo"] <= delta) & (delta <= res["hi"])
    sparse = _sparse(np.nanmean(cand, -1) - np.nanmean(base, -1))
    return {
        "ship": float(np.mean(res["outcome"] == 0)),
        "insufficient": float(np.mean(res["outcome"] == 2)),
        "coverage": float(np.mean(covered)),
        "lower_error": float(np.mean(res["lo"] > delta)),
        "upper_error": float(np.mean(res["hi"] < delta)),
        "sparse": float(np.mean(sparse)),
        "coverage_sparse": float(np.mean(covered[sparse])) if sparse.any() else float("nan"),
        "coverage_rest": float(np.mean(covered[~sparse])) if (~sparse).any() else float("nan"),
    }


def _sparse(deltas: np.ndarray) -> np.ndarray:
    """Samples in which at most ``SPARSE_TASKS`` task deltas differ from the median task's."""
    mid = np.sort(deltas, axis=-1)[..., deltas.shape[-1] // 2]
    return np.sum(np.abs(deltas - mid[..., None]) > 1e-12, axis=-1) <= SPARSE_TASKS


def _mc_se(p: float, sims: int) -> float:
    return float(np.sqrt(p * (1 - p) / sims))


def sweep(sims: int, seed: int = 0, generators: tuple[str, ...] | None = None,
          tasks: tuple[int, ...] = TASKS, runs: tuple[int, ...] = RUNS,
          deltas: tuple[float, ...] = DELTAS) -> dict[tuple, dict]:
    """Every cell of the grid for every generator: ``(gen, delta, tasks, runs) -> figures``."""
    out = {}
    for gi, gen in enumerate(generators or tuple(GENERATORS)):
        for di, delta in enumerate(deltas):
            for n in tasks:
                for r in runs:
                    cell_seed = seed + 1_000_003 * gi + 10_007 * di + 101 * n + r
                    out[(gen, delta, n, r)] = simulate(gen, delta, n, r, sims, cell_seed)
    return out


def misses(results: dict[tuple, dict], sims: int) -> list[str]:
    """Every missed target, one line each (empty: all met)."""
    return _judge(results, sims)[0]


def excused(results: dict[tuple, dict], sims: int) -> list[str]:
    """Coverage cells held out of the target, each with its reason and figures."""
    return _judge(results, sims)[1]


def _judge(results: dict[tuple, dict], sims: int) -> tuple[list[str], list[str]]:
    bad, excuse = [], []
    limit = 0.025 + 2 * _mc_se(0.025, sims)
    for (gen, delta, n, r), f in results.items():
        where = f"{gen} delta {delta * 100:+.0f} tasks {n} runs {r}"
        if delta < -MARGIN and f["ship"] > limit:
            bad.append(f"ship rate {f['ship']:.4f} > {limit:.4f} at {where}")
        if r == 1 or n not in COVERAGE_TASKS or 0.94 <= f["coverage"] <= 0.96:
            continue
        if gen in DETERMINISTIC:
            excuse.append(f"coverage {f['coverage']:.4f} at {where}: every task deterministic, "
                          "3 runs are one run repeated")
        elif f["coverage"] > 0.96 and f["sparse"] >= SPARSE_EXCUSE:
            excuse.append(
                f"coverage {f['coverage']:.4f} at {where}: {f['sparse']:.0%} of samples have at "
                f"most {SPARSE_TASKS} tasks that differ (they cover {f['coverage_sparse']:.3f}, "
                f"the rest {f['coverage_rest']:.3f}); lower-tail error {f['lower_error']:.4f}"
            )
        else:
            bad.append(f"coverage {f['coverage']:.4f} outside 0.94-0.96 at {where} (lower-tail "
                       f"error {f['lower_error']:.4f}, upper {f['upper_error']:.4f})")
    return bad, excuse


def _print_table(results: dict[tuple, dict], sims: int) -> None:
    gens = sorted({k[0] for k in results})
    print(f"\nShip rate of the gate (worst generator where the true delta < -margin, "
          f"else the lowest power over generators); MC SE at 2.5 %: "
          f"{_mc_se(0.025, sims):.4f}")
    head = "| true delta | runs | " + " | ".join(f"{n} tasks" for n in TASKS) + " |"
    print(head)
    print("|---|---|" + "---|" * len(TASKS))
    for delta in DELTAS:
        for r in RUNS:
            cells = []
            for n in TASKS:
                vals = {g: results[(g, delta, n, r)]["ship"] for g in gens
                        if (g, delta, n, r) in results}
                if not vals:
                    cells.append("-")
                    continue
                pick = max(vals, key=vals.get) if delta < -MARGIN else min(vals, key=vals.get)
                cells.append(f"{vals[pick] * 100:.2f} % ({pick})")
            print(f"| {delta * 100:+.0f} | {r} | " + " | ".join(cells) + " |")
    print("\nPer generator, ship rate % (insufficient-evidence share %) by tasks:")
    for g in gens:
        for delta in DELTAS:
            for r in RUNS:
                row = [results.get((g, delta, n, r)) for n in TASKS]
                txt = "  ".join(
                    "-" if f is None else f"{f['ship'] * 100:5.1f} ({f['insufficient'] * 100:4.1f})"
                    for f in row
                )
                print(f"  {g:21} {delta * 100:+3.0f} r={r}: {txt}")
    print("\nCoverage of the several-runs decision interval (3 runs) at "
          f"{', '.join(map(str, COVERAGE_TASKS))} tasks: coverage (lower-tail error / upper-tail "
          "error) [share of sparse samples]")
    for g in gens:
        for delta in DELTAS:
            row = [results.get((g, delta, n, 3)) for n in COVERAGE_TASKS]
            txt = "  ".join(
                "-" if f is None else f"{f['coverage']:.4f} ({f['lower_error']:.4f}/"
                f"{f['upper_error']:.4f}) [{f['sparse']:.2f}]" for f in row
            )
            note = "  (deterministic tasks: not held to the target)" if g in DETERMINISTIC else ""
            print(f"  {g:21} {delta * 100:+3.0f}: " + txt + note)


def compare_methods(sims: int, resamples: int = 999, seed: int = 7) -> None:
    """The method study: coverage of five task-clustered intervals, 3 runs per task.

    Raw intervals (no zero-spread fallback), so the table shows each method
    on its own; a sample with zero spread counts as not covered when its
    interval has zero width and misses.
    """
    print(f"\nMethod study: {sims} simulations a cell, {resamples} resamples, 3 runs, "
          f"true delta -5 points; coverage / lower-tail error (nominal 0.95 / 0.025)")
    for gen in GENERATORS:
        for n in TASKS:
            rng = np.random.default_rng(seed + n)
            p_b, p_c = GENERATORS[gen](rng, sims, n, -0.05)
            d = ((rng.random((sims, n, 3)) < p_c[..., None]).mean(-1)
                 - (rng.random((sims, n, 3)) < p_b[..., None]).mean(-1))
            limits = _bootstrap_limits(d, rng, resamples)
            limits["t (N-1 df)"] = _t_limits(d)
            iv = cluster_t_interval(d, CONFIDENCE)
            limits["t (Satterthwaite df)"] = (np.asarray(iv.lo), np.asarray(iv.hi))
            parts = []
            for name, (lo, hi) in limits.items():
                lo = np.nan_to_num(lo, nan=-np.inf)
                hi = np.nan_to_num(hi, nan=np.inf)
                cov = np.mean((lo <= -0.05) & (-0.05 <= hi))
                parts.append(f"{name} {cov:.3f}/{np.mean(lo > -0.05):.3f}")
            print(f"  {gen:21} N={n:3}: " + "  ".join(parts))


def _hall(d: np.ndarray, shrink: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Hall's (1992) interval on both limits, skewness times ``shrink`` (no guard)."""
    n = d.shape[1]
    m, se = d.mean(1), d.std(1, ddof=1) / np.sqrt(n)
    q = stats.t.ppf(0.975, satterthwaite_df(d))
    a, b = (c * shrink for c in _hall_coefficients(d))
    return m - _hall_inverse(q, a, b) * se, m - _hall_inverse(-q, a, b) * se


def compare_skew(sims: int, seed: int = 17) -> None:
    """The study that chose the skewness correction: lower-tail error and coverage, 3 runs.

    Each candidate with the exact zero-spread fallback the gate uses. Per
    generator: the worst lower-tail error at true deltas -5 and -2 points
    (10-200 tasks) and the coverage range at 20, 50 and 200 tasks.
    """
    limit = 0.025 + 2 * _mc_se(0.025, sims)
    names = ("t (Satterthwaite)", "Johnson shift", "Hall both limits", "Hall, skew / 2",
             "chosen: Hall, lo <= t lo")
    print(f"\nSkewness study: {sims} simulations a cell, 3 runs; worst lower-tail error at "
          f"-5/-2 points (10-200 tasks) / coverage range at 20-200 tasks; cells over {limit:.4f}")
    over = dict.fromkeys(names, 0)
    for gi, gen in enumerate(GENERATORS):
        worst = {k: [0.0, 1.0, 0.0] for k in names}
        for di, delta in enumerate(DELTAS):
            for n in TASKS[1:]:
                rng = np.random.default_rng(seed + 1_000_003 * gi + 10_007 * di + 101 * n)
                base, cand = draw_runs(gen, rng, sims, n, 3, delta)
                d = cand.mean(-1) - base.mean(-1)
                t = cluster_t_interval(d, CONFIDENCE)
                m, s_d = d.mean(1), d.std(1, ddof=1)
                shift = np.nan_to_num(stats.skew(d, axis=1, bias=True)) * s_d / (6 * n)
                zero = (d.max(1) - d.min(1)) <= 1e-12
                zs = zero_spread_interval(np.clip(m, -1, 1), n, CONFIDENCE)
                hc = skew_corrected_t_interval(d, CONFIDENCE)
                cands = {
                    names[0]: (t.lo, t.hi),
                    names[1]: (np.asarray(t.lo) + shift, np.asarray(t.hi) + shift),
                    names[2]: _hall(d),
                    names[3]: _hall(d, 0.5),
                    names[4]: (hc.lo, hc.hi),
                }
                for k, (lo, hi) in cands.items():
                    lo, hi = np.where(zero, zs.lo, lo), np.where(zero, zs.hi, hi)
                    err = float(np.mean(lo > delta))
                    if delta <= -MARGIN:
                        worst[k][0] = max(worst[k][0], err)
                        over[k] += err > limit
                    if n in COVERAGE_TASKS:
                        cov = float(np.mean((lo <= delta) & (delta <= hi)))
                        worst[k][1], worst[k][2] = min(worst[k][1], cov), max(worst[k][2], cov)
        print(f"  {gen:21} " + "  ".join(f"{k} {v[0]:.4f} / {v[1]:.3f}-{v[2]:.3f}"
                                         for k, v in worst.items()))
    print("  cells with a lower-tail error over the limit: "
          + ", ".join(f"{k} {v}" for k, v in over.items()))


def _t_limits(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = d.shape[1]
    half = stats.t.ppf(0.975, n - 1) * d.std(1, ddof=1) / np.sqrt(n)
    return d.mean(1) - half, d.mean(1) + half


def _bootstrap_limits(d: np.ndarray, rng: np.random.Generator, b: int) -> dict:
    """Percentile, BCa and studentized cluster bootstrap limits per simulated eval set."""
    sims, n = d.shape
    out = {k: (np.empty(sims), np.empty(sims)) for k in ("percentile", "BCa", "studentized")}
    zl, zh = stats.norm.ppf([0.025, 0.975])
    for s in range(sims):
        w = rng.multinomial(n, np.full(n, 1.0 / n), size=b) / n
        x = d[s]
        m, bm = x.mean(), w @ x
        out["percentile"][0][s], out["percentile"][1][s] = np.quantile(bm, [0.025, 0.975])
        prop = min(max((np.sum(bm < m) + 0.5 * np.sum(bm == m)) / b, 1 / (b + 1)), b / (b + 1))
        z0 = stats.norm.ppf(prop)
        u = x - m
        den = 6 * np.sum(u**2) ** 1.5
        acc = np.sum(u**3) / den if den > 0 else 0.0
        q = stats.norm.cdf([z0 + (z0 + z) / (1 - acc * (z0 + z)) for z in (zl, zh)])
        out["BCa"][0][s], out["BCa"][1][s] = np.quantile(bm, q)
        sd = np.sqrt(np.maximum(w @ x**2 - bm**2, 0) * n / (n - 1) / n)
        se = x.std(ddof=1) / np.sqrt(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.nan_to_num((bm - m) / sd, nan=0.0)
        tlo, thi = np.quantile(t, [0.025, 0.975])
        out["studentized"][0][s], out["studentized"][1][s] = m - thi * se, m - tlo * se
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the sweep, print workload, machine, the table and coverage; 1 on a missed target."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=4000, help="simulated eval sets per cell")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compare", action="store_true", help="also run the method study")
    ap.add_argument("--compare-sims", type=int, default=1000)
    ap.add_argument("--compare-skew", type=int, default=0, metavar="SIMS",
                    help="also run the skewness study with SIMS simulations a cell")
    ap.add_argument("--heldout", action="store_true",
                    help="run the round-3 held-out generators instead of the development ones")
    args = ap.parse_args(argv)
    gens = tuple(HELDOUT) if args.heldout else tuple(GENERATORS)
    load = os.getloadavg()
    print(f"workload : gate paired decision, margin {MARGIN}, confidence {CONFIDENCE}, "
          f"power {POWER}; {args.sims} simulated eval sets x {len(DELTAS)} deltas x "
          f"{len(TASKS)} task counts x {len(RUNS)} designs x {len(gens)} "
          f"{'held-out' if args.heldout else 'development'} generators ({', '.join(gens)})")
    print(f"machine  : {platform.machine()} {os.cpu_count()} cores, python "
          f"{platform.python_version()}, numpy {np.__version__}, load avg {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f}")
    t0 = time.perf_counter()
    results = sweep(args.sims, args.seed, generators=gens)
    print(f"elapsed  : {time.perf_counter() - t0:.1f} s")
    _print_table(results, args.sims)
    if args.compare:
        compare_methods(args.compare_sims)
    if args.compare_skew:
        compare_skew(args.compare_skew)
    bad, excuse = _judge(results, args.sims)
    print(f"\nnot held to the coverage target ({len(excuse)}):")
    for line in excuse:
        print("  EXCUSED " + line)
    print("\ntargets  : " + ("all met" if not bad else f"{len(bad)} MISSED"))
    for line in bad:
        print("  MISSED " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
