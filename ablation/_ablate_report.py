"""The ablation report: per intervention, acceptance and its paired interval, pass^k, cost, rank.

Read it as the playbook says ("Counterfactual ablation locates the
bottleneck"): the deltas are **not additive and not independent** (oracle
planning makes oracle retrieval less valuable), so a marginal ablation
states its order and a lattice reports every subset. Paired intervals
(acceptance-and-statistics 13.5.3): the task-clustered bootstrap of the
per-task candidate-minus-baseline pass-rate delta (22.5) always, and
Newcombe's paired-score interval with the exact McNemar p when there is one
run per task. pass^k (eq. 5) uses k = runs per task. Cost per accepted task
charges every initiated trial (13.5.5); tokens are reported separately from
money. Horizon columns come from ``_horizon`` (playbook, "Horizon").

Acceptance is the eval-set graders' (every mandatory criterion passes,
13.2.3); unresolved trials (a mandatory criterion ``unknown`` or
``pending``) stay in the denominator as not accepted and are counted apart.
Rows without grades (ablations stored before grading) fall back to
AgentDojo's utility verdict.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from flywheel.evalset.stats import (
    cost_per_accepted_task,
    mcnemar_exact,
    newcombe_paired_interval,
    paired_cluster_bootstrap,
    paired_counts,
    pass_hat_k,
    wilson_interval,
)

from ._ablate import BASELINE, AblationPlan, config_key
from ._horizon import HorizonEstimate, estimate_horizon

Unit = tuple[str, str]  # (task_id, injection_task_id): the cluster


@dataclass(frozen=True)
class PairedDelta:
    """Candidate minus reference on the same cells.

    Attributes:
        delta: Mean over tasks of the per-task pass-rate difference.
        lo: Bootstrap lower limit (task-clustered), ``nan`` under 2 tasks.
        hi: Bootstrap upper limit.
        method: ``bootstrap`` (task clusters) or ``newcombe`` (one run per task).
        newcombe_lo: Newcombe lower limit (one run per task only).
        newcombe_hi: Newcombe upper limit.
        mcnemar_p: Exact McNemar p (one run per task only).
        n_tasks: Paired tasks.
        n_pairs: Paired cells (task x run).
    """

    delta: float
    lo: float
    hi: float
    n_tasks: int
    n_pairs: int
    newcombe_lo: float = math.nan
    newcombe_hi: float = math.nan
    mcnemar_p: float = math.nan


@dataclass
class ConfigResult:
    """One configuration of the ablation."""

    key: str
    oracles: list[str]
    trials: int
    accepted: int
    acceptance: float
    acceptance_lo: float
    acceptance_hi: float
    vs_baseline: PairedDelta | None
    step: PairedDelta | None  # marginal: vs the previous configuration in the order
    pass_k: float
    pass_k_delta: PairedDelta | None
    cost_per_accepted: float
    tokens_per_accepted: float
    total_cost: float
    total_tokens: int
    errors: int
    budget_exhausted: int
    horizon: HorizonEstimate
    rank: int | None = None
    unresolved: int = 0


@dataclass
class AblationReport:
    """Everything the CLI prints, as data."""

    ablation_id: str
    plan: dict[str, Any]
    mode: str
    order: list[str]
    k: int
    confidence: float
    configs: list[ConfigResult]
    oracle_effects: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    source: str = ""
    acceptance: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON-able form (``inf``/``nan`` become ``None``)."""
        return _clean(asdict(self))


def _clean(obj: Any) -> Any:
    if isinstance(obj, float):
        return None if (math.isnan(obj) or math.isinf(obj)) else obj
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    return obj


NOTE = (
    "Deltas are not additive and not independent (an oracle can make another one less "
    "valuable); marginal deltas depend on the order stated above."
)


def _by_config(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[Unit, dict[int, Mapping]]]:
    out: dict[str, dict[Unit, dict[int, Mapping]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        unit = (str(r["task_id"]), str(r.get("injection_task_id") or ""))
        out[str(r["config_key"])][unit][int(r["run_index"])] = r
    return out


#: How acceptance is decided, as the report states it.
ACCEPTANCE = "eval-set graders: every mandatory criterion passes (unresolved = not accepted)"


def _ok(r: Mapping[str, Any]) -> float:
    """1 when the graders accepted the trial (legacy rows without grades: AgentDojo utility)."""
    accepted = r.get("accepted")
    if accepted is not None:
        return 1.0 if accepted else 0.0
    return 1.0 if r.get("utility") else 0.0


def _unresolved(r: Mapping[str, Any]) -> bool:
    return str(r.get("verdict") or "") in ("unknown", "pending")


def paired_delta(
    reference: Mapping[Unit, Mapping[int, Mapping[str, Any]]],
    candidate: Mapping[Unit, Mapping[int, Mapping[str, Any]]],
    *,
    confidence: float = 0.95,
    resamples: int = 4000,
    seed: int = 0,
) -> PairedDelta | None:
    """Paired delta on the cells both configurations ran (same task, same run index).

    Two or more tasks: task-clustered bootstrap (22.5). One run per task:
    also Newcombe's paired interval and exact McNemar (13.5.3). No shared
    cell: ``None``.
    """
    base: dict[str, list[float]] = {}
    cand: dict[str, list[float]] = {}
    flat_b: list[float] = []
    flat_c: list[float] = []
    for unit in sorted(set(reference) & set(candidate)):
        runs = sorted(set(reference[unit]) & set(candidate[unit]))
        if not runs:
            continue
        name = "/".join(unit)
        base[name] = [_ok(reference[unit][i]) for i in runs]
        cand[name] = [_ok(candidate[unit][i]) for i in runs]
        flat_b += base[name]
        flat_c += cand[name]
    if not base:
        return None
    d = float(np.mean([np.mean(cand[u]) - np.mean(base[u]) for u in base]))
    lo = hi = math.nan
    if len(base) >= 2:
        bs = paired_cluster_bootstrap(
            base, cand, resamples=resamples, confidence=confidence, seed=seed
        )
        lo, hi, d = bs.lo, bs.hi, bs.mean_delta
    out = PairedDelta(d, float(lo), float(hi), len(base), len(flat_b))
    if all(len(v) == 1 for v in base.values()):
        n11, n10, n01, n00 = paired_counts(flat_b, flat_c)
        nc = newcombe_paired_interval(n11, n10, n01, n00, confidence)
        out = PairedDelta(
            d, out.lo, out.hi, out.n_tasks, out.n_pairs,
            float(nc.lo), float(nc.hi), float(mcnemar_exact(n10, n01)),
        )
    return out


def _pass_k_per_task(units: Mapping[Unit, Mapping[int, Mapping]], k: int) -> dict[str, float]:
    out = {}
    for unit, runs in units.items():
        n = len(runs)
        if n >= k:
            c = sum(_ok(r) for r in runs.values())
            out["/".join(unit)] = float(pass_hat_k(n, int(c), k))
    return out


def _pass_k_delta(
    base: dict[str, float], cand: dict[str, float], confidence: float, resamples: int
) -> PairedDelta | None:
    shared = sorted(set(base) & set(cand))
    if not shared:
        return None
    b = [base[u] for u in shared]
    c = [cand[u] for u in shared]
    d = float(np.mean(np.subtract(c, b)))
    if len(shared) < 2:
        return PairedDelta(d, math.nan, math.nan, 1, 1)
    bs = paired_cluster_bootstrap(b, c, resamples=resamples, confidence=confidence, seed=1)
    return PairedDelta(bs.mean_delta, float(bs.lo), float(bs.hi), len(shared), len(shared))


def shapley(values: Mapping[frozenset[str], float], oracles: Sequence[str]) -> dict[str, float]:
    """Average marginal contribution of each oracle over every order (needs the full lattice).

    ``phi_o = sum_{S not containing o} |S|! (k-|S|-1)! / k! (v(S + o) - v(S))``.
    The phi sum to v(all) - v(baseline); they are one way to summarise a
    non-additive lattice, not evidence that the effects add.
    """
    k = len(oracles)
    out = {}
    for o in oracles:
        rest = [x for x in oracles if x != o]
        total = 0.0
        for r in range(len(rest) + 1):
            w = math.factorial(r) * math.factorial(k - r - 1) / math.factorial(k)
            for sub in _subsets(rest, r):
                s = frozenset(sub)
                total += w * (values[s | {o}] - values[s])
        out[o] = total
    return out


def _subsets(items: Sequence[str], r: int) -> Iterable[tuple[str, ...]]:
    import itertools

    return itertools.combinations(items, r)


def analyse(
    plan: AblationPlan,
    rows: Iterable[Mapping[str, Any]],
    *,
    ablation_id: str = "",
    confidence: float = 0.95,
    resamples: int = 4000,
) -> AblationReport:
    """Build the report from result rows (``load_results``) and the plan."""
    grid = _by_config(rows)
    configs = plan.configs
    keys = [config_key(c) for c in configs]
    k = max(1, plan.runs)
    base_units = grid.get(BASELINE, {})
    base_pk = _pass_k_per_task(base_units, k)
    results: list[ConfigResult] = []
    for i, (oracles, key) in enumerate(zip(configs, keys, strict=True)):
        units = grid.get(key, {})
        flat = [r for runs in units.values() for r in runs.values()]
        n = len(flat)
        acc = int(sum(_ok(r) for r in flat))
        w = wilson_interval(acc, n, confidence) if n else None
        ok = [bool(_ok(r)) for r in flat]
        cpa = cost_per_accepted_task([float(r.get("cost") or 0.0) for r in flat], ok) if n else None
        tpa = cost_per_accepted_task([float(r.get("tokens") or 0) for r in flat], ok) if n else None
        pk = _pass_k_per_task(units, k)
        vs = step = pkd = None
        if key != BASELINE:
            vs = paired_delta(base_units, units, confidence=confidence, resamples=resamples)
            pkd = _pass_k_delta(base_pk, pk, confidence, resamples)
            if not plan.lattice and i > 0:
                step = paired_delta(grid.get(keys[i - 1], {}), units,
                                    confidence=confidence, resamples=resamples)
        results.append(
            ConfigResult(
                key=key,
                oracles=list(oracles),
                trials=n,
                accepted=acc,
                acceptance=acc / n if n else math.nan,
                acceptance_lo=float(w.lo) if w else math.nan,
                acceptance_hi=float(w.hi) if w else math.nan,
                vs_baseline=vs,
                step=step,
                pass_k=float(np.mean(list(pk.values()))) if pk else math.nan,
                pass_k_delta=pkd,
                cost_per_accepted=cpa.value if cpa else math.nan,
                tokens_per_accepted=tpa.value if tpa else math.nan,
                total_cost=cpa.total_cost if cpa else 0.0,
                total_tokens=int(tpa.total_cost) if tpa else 0,
                errors=sum(r.get("status") == "error" for r in flat),
                budget_exhausted=sum(r.get("status") == "budget_exhausted" for r in flat),
                horizon=estimate_horizon(
                    [{**r, "utility": bool(_ok(r))} for r in flat], confidence
                ),
                unresolved=sum(_unresolved(r) for r in flat),
            )
        )
    ranked = sorted(
        (c for c in results if c.vs_baseline is not None),
        key=lambda c: (-c.vs_baseline.delta, len(c.oracles)),  # type: ignore[union-attr]
    )
    for r, c in enumerate(ranked, 1):
        c.rank = r
    effects = oracle_effects(plan, results)
    return AblationReport(
        ablation_id=ablation_id,
        plan=plan.to_json(),
        mode="lattice" if plan.lattice else "marginal",
        order=list(plan.oracles),
        k=k,
        confidence=confidence,
        configs=results,
        oracle_effects=effects,
        note=NOTE,
        source=_source(plan),
        acceptance=ACCEPTANCE,
    )


def _source(plan: AblationPlan) -> str:
    text = plan.source
    if plan.skipped:
        text += (
            f"; {len(plan.skipped)} task(s) without a runnable environment skipped "
            f"(--skip-unrunnable): {', '.join(plan.skipped)}"
        )
    return text


def oracle_effects(plan: AblationPlan, results: Sequence[ConfigResult]) -> list[dict[str, Any]]:
    """Per oracle, ranked: its marginal step (marginal mode) or singleton and Shapley (lattice)."""
    by_key = {c.key: c for c in results}
    rows: list[dict[str, Any]] = []
    if plan.lattice:
        values = {frozenset(c.oracles): c.acceptance for c in results}
        phi = shapley(values, plan.oracles) if len(values) == 2 ** len(plan.oracles) else {}
        for o in plan.oracles:
            single = by_key.get(config_key((o,)))
            vs = single.vs_baseline if single else None
            rows.append({
                "oracle": o,
                "effect": vs.delta if vs else math.nan,
                "lo": vs.lo if vs else math.nan,
                "hi": vs.hi if vs else math.nan,
                "basis": "alone vs baseline",
                "shapley": phi.get(o, math.nan),
            })
    else:
        for i, o in enumerate(plan.oracles):
            c = by_key.get(config_key(plan.oracles[: i + 1]))
            st = c.step if c else None
            rows.append({
                "oracle": o,
                "effect": st.delta if st else math.nan,
                "lo": st.lo if st else math.nan,
                "hi": st.hi if st else math.nan,
                "basis": "added after " + (", ".join(plan.oracles[:i]) or "baseline"),
                "shapley": math.nan,
            })
    rows.sort(key=lambda r: -r["effect"] if not math.isnan(r["effect"]) else math.inf)
    for i, r in enumerate(rows, 1):
        r["rank"] = i
    return rows


def _f(x: float | None, spec: str = ".3f") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return format(x, spec)


def _iv(p: PairedDelta | None, *, newcombe: bool = False) -> str:
    if p is None:
        return "-"
    lo, hi = (p.newcombe_lo, p.newcombe_hi) if newcombe else (p.lo, p.hi)
    return f"{p.delta:+.3f} [{_f(lo, '+.3f')}, {_f(hi, '+.3f')}]"


def to_markdown(rep: AblationReport) -> str:
    """The report as Markdown (tables, order, the non-additivity caveat)."""
    plan = rep.plan
    conf = int(round(rep.confidence * 100))
    one_run = plan["runs"] == 1
    lines = [
        f"# Oracle ablation {rep.ablation_id}",
        "",
        f"Source: {rep.source or 'suite ' + plan['suite']}.",
        f"Agent `{plan['agent']['name']}`, "
        f"{plan['runs']} run(s) per task, "
        f"seed {plan['seed']}, budget {plan['budget']} (the same for every configuration).",
        f"Acceptance: {rep.acceptance or ACCEPTANCE}.",
        f"Mode: **{rep.mode}**; oracle order: {', '.join(rep.order) or '-'}.",
        f"{rep.note}",
        "",
        f"## Configurations (paired {conf} % intervals against the baseline; "
        f"{'Newcombe, ' if one_run else ''}task-clustered bootstrap)",
        "",
        "| rank | configuration | trials | unresolved | acceptance [Wilson] "
        "| delta vs baseline [bootstrap] |"
        + (" Newcombe | McNemar p |" if one_run else "")
        + (" marginal step |" if rep.mode == "marginal" else "")
        + f" pass^{rep.k} | delta pass^{rep.k} | cost/accepted | tokens/accepted |",
        "|---|---|---|---|---|---|"
        + ("---|---|" if one_run else "")
        + ("---|" if rep.mode == "marginal" else "")
        + "---|---|---|---|",
    ]
    for c in sorted(rep.configs, key=lambda c: c.rank or 0):
        row = (
            f"| {c.rank or '-'} | {c.key} | {c.trials} | {c.unresolved} | {_f(c.acceptance)} "
            f"[{_f(c.acceptance_lo)}, {_f(c.acceptance_hi)}] | {_iv(c.vs_baseline)} |"
        )
        if one_run:
            row += f" {_iv(c.vs_baseline, newcombe=True)} | "
            row += f"{_f(c.vs_baseline.mcnemar_p) if c.vs_baseline else '-'} |"
        if rep.mode == "marginal":
            row += f" {_iv(c.step)} |"
        row += (
            f" {_f(c.pass_k)} | {_iv(c.pass_k_delta)} | {_f(c.cost_per_accepted, '.4g')} |"
            f" {_f(c.tokens_per_accepted, '.0f')} |"
        )
        lines.append(row)
    lines += [
        "",
        "## Oracles ranked",
        "",
        "| rank | oracle | effect [interval] | basis |"
        + (" Shapley |" if rep.mode == "lattice" else ""),
        "|---|---|---|---|" + ("---|" if rep.mode == "lattice" else ""),
    ]
    for e in rep.oracle_effects:
        row = (
            f"| {e['rank']} | {e['oracle']} | {_f(e['effect'], '+.3f')} "
            f"[{_f(e['lo'], '+.3f')}, {_f(e['hi'], '+.3f')}] | {e['basis']} |"
        )
        if rep.mode == "lattice":
            row += f" {_f(e['shapley'], '+.3f')} |"
        lines.append(row)
    lines += [
        "",
        "## Hazard, recovery and horizon (playbook, \"Horizon\")",
        "",
        "h = error faults / steps; h_eff = 1 - S^(1/H); rho = 1 - h_eff/h; "
        "H50 = ln 2 / -ln(1 - h_eff).",
        "",
        "| configuration | steps/trial H | h | h_eff | rho | H50 [Wilson-mapped] |"
        " H50 without recovery | per-component h |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in rep.configs:
        h = c.horizon
        comp = ", ".join(f"{k} {v:.3f}" for k, v in h.h_by_component.items()) or "-"
        lines.append(
            f"| {c.key} | {_f(h.mean_steps, '.2f')} | {_f(h.h)} | {_f(h.h_eff)} | {_f(h.rho)} "
            f"| {_f(h.h50, '.1f')} [{_f(h.h50_lo, '.1f')}, {_f(h.h50_hi, '.1f')}] "
            f"| {_f(h.h50_no_recovery, '.1f')} | {comp} |"
        )
    return "\n".join(lines) + "\n"


def plot_png(rep: AblationReport, path: str) -> str:
    """Deltas vs baseline with their intervals, ranked, and H50 per configuration (Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cs = [c for c in sorted(rep.configs, key=lambda c: c.rank or 0) if c.vs_baseline]
    fig, (ax1, ax2) = plt.subplots(
        1, 2, figsize=(12, max(3.0, 0.35 * len(rep.configs) + 1.5)), constrained_layout=True
    )
    y = np.arange(len(cs))[::-1]
    d = np.array([c.vs_baseline.delta for c in cs])  # type: ignore[union-attr]
    lo = np.array([c.vs_baseline.lo for c in cs])  # type: ignore[union-attr]
    hi = np.array([c.vs_baseline.hi for c in cs])  # type: ignore[union-attr]
    err = np.vstack([np.nan_to_num(d - lo), np.nan_to_num(hi - d)])
    ax1.barh(y, d, xerr=err, color="#4c72b0", capsize=3)
    ax1.axvline(0, color="k", lw=0.8)
    ax1.set_yticks(y, [c.key for c in cs])
    ax1.set_xlabel(f"acceptance delta vs baseline ({int(rep.confidence * 100)} % paired interval)")
    ax1.set_title(f"{rep.mode} ablation (order: {', '.join(rep.order)}); not additive")
    allc = rep.configs
    y2 = np.arange(len(allc))[::-1]
    finite = [c.horizon.h50 for c in allc if math.isfinite(c.horizon.h50)]
    finite += [c.horizon.h50_lo for c in allc if math.isfinite(c.horizon.h50_lo)]
    cap = 1.15 * max(finite) if finite else 1.0
    for yy, c in zip(y2, allc, strict=True):
        h = c.horizon
        val = h.h50 if math.isfinite(h.h50) else cap
        h_lo = h.h50_lo if math.isfinite(h.h50_lo) else 0.0
        ax2.barh(yy, val, color="#55a868" if math.isfinite(h.h50) else "#c7e9c0",
                 hatch=None if math.isfinite(h.h50) else "//")
        ax2.plot([h_lo, h_lo], [yy - 0.3, yy + 0.3], color="k", lw=1.5)
        if not math.isfinite(h.h50):
            ax2.text(cap, yy, " inf (no failure)", va="center", fontsize=8)
    ax2.set_yticks(y2, [c.key for c in allc])
    ax2.set_xlabel("H50 = ln 2 / -ln(1 - h_eff), steps (tick: lower limit)")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
