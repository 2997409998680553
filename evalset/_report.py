"""Write the gate's evidence: ``report.json``, ``report.md`` and ``report.png``.

The picture reads top to bottom the way the decision does: first the
interval the decision rests on against ``-margin`` (forest style, with the
chapter's percentile bootstrap beside it for comparison), then the per-task
paired deltas (one dot per task up to 60 tasks, a histogram of task counts
beyond, golden tasks in red), then the slice rates with their task-clustered
intervals and floors. When no task differs between the arms the per-task
panel says so instead of drawing empty bars. matplotlib runs on the Agg
backend (no display needed in CI).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from flywheel.evalset._gate import GateResult
from flywheel.evalset._gate_inputs import check_out_dir

from flywheel.errors import UserError

#: Up to this many tasks the per-task panel draws one dot per task.
DOTS_MAX = 60
#: Up to this many tasks it also prints their ids.
LABELS_MAX = 30

_OUTCOME_COLOUR = {
    "noninferior": "#2a7f3e",
    "inferior": "#b13f3f",
    "insufficient_evidence": "#c98a00",
}


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _num(x: float | None, fmt: str = ".2f") -> str:
    return "undefined" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _pct(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * 100:.1f} %"


def _pts(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:+.1f}"


def _decision_lines(r: dict[str, Any]) -> list[str]:
    p = r["paired"]
    d = p["decision"]
    lines = [
        "## Paired decision (task as the unit)",
        "",
        f"- outcome: **{d['outcome']}** against the margin -{d['margin'] * 100:g} points",
        f"- method: `{d['method']}`: {d['why']}",
        f"- mean delta (candidate - baseline): {_pts(d['point'])} points over "
        f"{d['n_tasks']} tasks ({d['runs']:g} runs per task)",
        f"- {d['confidence']:.0%} decision interval: [{_pts(d['lo'])}, {_pts(d['hi'])}] points",
        f"- task-level SE {_num(None if d['se'] is None else d['se'] * 100)} points; "
        f"minimum detectable effect at {d['power']:.0%} power "
        f"{_num(None if d['mde'] is None else d['mde'] * 100, '.1f')} points "
        f"({'powered' if d['powered'] else 'not powered'} for the margin)",
    ]
    if d.get("df") is not None:
        lines.append(f"- degrees of freedom of the t: {d['df']:.1f}")
    if d["cells"] is not None:
        n11, n10, n01, n00 = d["cells"]
        lines.append(
            f"- paired table: both accepted {n11}, baseline only {n10}, candidate only {n01}, "
            f"neither {n00}; exact McNemar p = {d['mcnemar_p']:.3f} (equality, not the decision)"
        )
    if d["tasks_needed"] is not None:
        lines.append(f"- sample-size plan: about **{d['tasks_needed']} tasks** ({d['plan']})")
    ref = p.get("reference_bootstrap")
    if ref:
        lines.append(
            f"- for comparison, the seed's percentile paired cluster bootstrap (22.5): "
            f"[{_pts(ref['lo'])}, {_pts(ref['hi'])}] points, cluster SE "
            f"{_num(ref['cluster_se'] * 100 if ref['cluster_se'] is not None else None)} points, "
            f"{ref['resamples']} resamples (seed {ref['seed']}); not decided on"
        )
    if "unresolved_bounds" in p:
        ub = p["unresolved_bounds"]
        lines.append(
            "- unresolved resolved against the candidate: lower limit "
            f"{_pts(ub['against_candidate']['lo'])}; for it: "
            f"{_pts(ub['for_candidate']['lo'])} points"
        )
    return lines + [""]


def _arm_lines(r: dict[str, Any]) -> list[str]:
    lines = [
        "## Arms",
        "",
        f"Rates are task means with {r['paired']['confidence']:.0%} intervals at the "
        "task-clustered effective sample size (repeated runs of a task are not independent).",
        "",
        _row("arm", "config", "accepted / trials", "tasks", "rate [interval]",
             "both-way bounds", "pending", "unknown", "pass@k", "pass^k", "trajectory F1",
             "partial credit"),
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for arm, a in r["arms"].items():
        t = a["trials"]
        pk = a["pass_k"]
        f1, pc = a["trajectory_f1"], a["partial_credit_mean"]
        lines.append(
            _row(
                arm, f"`{a['config_id']}`", f"{t['accepted']}/{t['n']}", t["tasks"],
                f"{_pct(t['rate'])} [{_pct(t['lo'])}, {_pct(t['hi'])}]",
                f"[{_pct(t['lo_if_unresolved_fail'])}, {_pct(t['hi_if_unresolved_pass'])}]"
                if t["pending"] + t["unknown"]
                else "-",
                t["pending"],
                t["unknown"],
                f"{_pct(pk.get('pass_at_k'))} (k={pk['k']})", _pct(pk.get("pass_hat_k")),
                "n/a" if f1 is None else f"{f1:.3f}", "n/a" if pc is None else f"{pc:.3f}",
            )
        )
    return lines + [
        "",
        "Partial credit and trajectory F1 are diagnostics; the verdict uses only mandatory "
        "criteria.",
        "",
    ]


def _golden_and_slice_lines(r: dict[str, Any]) -> list[str]:
    lines = ["## Golden tasks", ""]
    if r["golden"]:
        lines += ["| task | baseline | candidate | regressed | candidate failures |",
                  "|---|---|---|---|---|"]
        for tid, g in r["golden"].items():
            lines.append(_row(tid, g["baseline"], g["candidate"],
                              "yes" if g["regressed"] else "no", g["candidate_failures"]))
    else:
        lines.append("No golden task declared.")
    lines += ["", "## Slices (task-clustered pass rate)", "",
              "| slice | tasks | baseline | candidate | floor |", "|---|---|---|---|---|"]
    floors = r["rules"]["slices"]
    for name, c in r["slices"]["candidate"].items():
        b = r["slices"]["baseline"][name]
        floor = floors["floors"].get(name, floors["floor"])
        lines.append(
            _row(name, c["tasks"],
                 f"{_pct(b['rate'])} [{_pct(b['lo'])}, {_pct(b['hi'])}]",
                 f"{_pct(c['rate'])} [{_pct(c['lo'])}, {_pct(c['hi'])}]",
                 "-" if floor is None else floor)
        )
    lines += ["", "## Error burden (primary failure category per slice)", ""]
    for arm, slices in r["error_burden"].items():
        for name, s in slices.items():
            lines.append(
                f"- {arm} / {name}: success {_pct(s['success'])}, failures {s['failures'] or '{}'}"
            )
    return lines + [""]


def _judge_and_evidence_lines(r: dict[str, Any]) -> list[str]:
    lines = ["## Judge calibration", ""]
    for judge_id, j in r["judge"]["records"].items():
        lines.append(
            f"- {judge_id}: n={j['n']}, agreement {_num(j['agreement'])}, "
            f"kappa {_num(j['kappa'], '.3f')}, failure recall {_num(j['fail_recall'])}, "
            f"false acceptance {_num(j['false_acceptance_rate'])} "
            f"[{_num(j['false_acceptance_interval'][0])}, "
            f"{_num(j['false_acceptance_interval'][1])}], "
            f"position flips {_num(j['position_flip_rate'])}, "
            f"verbosity {_num(j['verbosity_rate'])}: "
            f"{'meets' if j['meets_contract'] else 'FAILS'} the contract"
        )
    if not r["judge"]["records"]:
        lines.append("No judge in play.")
    lines += ["", "## Missing evidence (grades that could not be computed)", ""]
    any_missing = False
    for arm, m in r["missing_evidence"].items():
        for cid, e in m["criteria"].items():
            any_missing = True
            lines.append(
                f"- {arm} / {cid} ({e['role']}, {e['kind']}): {e['unknown']} unknown, "
                f"{e['pending']} pending in {', '.join(e['trials'][:5])}"
                f"{' ...' if len(e['trials']) > 5 else ''}: {'; '.join(e['reasons']) or '-'}"
            )
    if not any_missing:
        lines.append("None: every criterion of every trial was graded.")
    se = r["side_effects"]
    lines += ["", "## Critical side effects (candidate)", "",
              f"Critical categories: {', '.join(se['critical'])}. "
              f"Analysed trials: {se['analysed']}, not analysed: {se['not_analysed']}.", ""]
    lines.append(str(se["candidate_events"]) if se["candidate_events"] else "No event recorded.")
    failed = se["unknown"]["analysis_failed"]
    if failed:
        lines.append("")
        lines += [f"- analysis failed for {tid}: {why}" for tid, why in list(failed.items())[:10]]
    return lines + [""]


def render_markdown(result: GateResult) -> str:
    """The human-readable report."""
    r = result.report
    lines = [f"# Release gate: **{result.verdict}**", ""]
    if result.reasons:
        lines += ["## Blocking reasons", ""]
        lines += [f"- `{x.code}`: {x.message}" for x in result.reasons] + [""]
    else:
        lines += ["No blocking reason: every predeclared rule is met.", ""]
    inputs = r.get("inputs", {})
    lines += [
        f"Eval set `{r['evalset']['dir']}` version {r['evalset']['version']}, "
        f"{r['evalset']['tasks']} tasks; baseline `{inputs.get('baseline', {}).get('config_id')}`"
        f", candidate `{inputs.get('candidate', {}).get('config_id')}`. Margin "
        f"{r['rules']['margin']}, confidence {r['rules']['confidence']}, declared power "
        f"{r['rules']['evidence']['power']}.",
        "",
    ]
    lines += _decision_lines(r) + _arm_lines(r) + _golden_and_slice_lines(r)
    lines += _judge_and_evidence_lines(r)
    return "\n".join(lines)


def _forest(ax: Any, r: dict[str, Any], verdict: str) -> None:
    """The decision interval against -margin and 0, the reference bootstrap beside it."""
    p, d = r["paired"], r["paired"]["decision"]
    margin = d["margin"]
    rows = [(f"decision: {d['method']}", d["lo"], d["hi"], d["point"],
             _OUTCOME_COLOUR[d["outcome"]], 3.0)]
    ref = p.get("reference_bootstrap")
    if ref:
        rows.append(("seed's percentile bootstrap (not decided on)", ref["lo"], ref["hi"],
                     d["point"], "0.6", 1.5))
    for key, label in (("against_candidate", "unresolved against candidate"),
                       ("for_candidate", "unresolved for candidate")):
        ub = p.get("unresolved_bounds", {}).get(key)
        if ub:
            rows.append((label, ub["lo"], ub["hi"], ub["mean_delta"], "0.45", 1.2))
    for i, (label, lo, hi, point, colour, lw) in enumerate(rows):
        y = len(rows) - 1 - i
        if lo is not None and hi is not None:
            ax.plot([lo * 100, hi * 100], [y, y], color=colour, lw=lw * 2, solid_capstyle="butt")
        if point is not None:
            ax.plot([point * 100], [y], "o", color=colour, ms=4 + lw * 2)
        limits = "" if lo is None or hi is None else f"  [{lo * 100:+.1f}, {hi * 100:+.1f}]"
        ax.text(0.01, y + 0.28, label + limits, transform=ax.get_yaxis_transform(), fontsize=8,
                color=colour if colour.startswith("#") else "0.3")
    ax.axvline(0.0, color="black", lw=1)
    ax.axvline(-margin * 100, color="#b13f3f", ls="--", lw=1.2)
    ax.text(-margin * 100, len(rows) - 0.35, f" -margin ({-margin * 100:g})", fontsize=8,
            color="#b13f3f", ha="left")
    lows = [x for _, lo, hi, _, _, _ in rows for x in (lo, hi) if x is not None]
    span = [min(lows + [-margin]) * 100, max(lows + [0.0]) * 100]
    pad = max(1.0, 0.08 * (span[1] - span[0]))
    ax.set_xlim(span[0] - pad, span[1] + pad)
    ax.set_ylim(-0.6, len(rows) - 0.2)
    ax.set_yticks([])
    needed = f"; about {d['tasks_needed']} tasks needed" if d["tasks_needed"] else ""
    ax.set_title(
        f"{verdict}: paired decision {d['outcome'].replace('_', ' ')} "
        f"({d['confidence']:.0%} interval vs -margin, {d['n_tasks']} tasks{needed})",
        fontsize=10, loc="left",
    )
    ax.set_xlabel("candidate minus baseline (points)")


def _per_task(ax: Any, r: dict[str, Any]) -> None:
    """One dot per task (sorted) up to DOTS_MAX tasks; a histogram of task counts beyond."""
    import numpy as np

    deltas = r["paired"]["task_deltas"]
    golden = set(r["golden"])
    margin = r["paired"]["decision"]["margin"]
    ids = sorted(deltas, key=lambda t: (deltas[t], t))
    vals = np.array([deltas[t] for t in ids]) * 100
    worse, better = int(np.sum(vals < 0)), int(np.sum(vals > 0))
    summary = f"{len(ids)} tasks: {worse} worse, {better} better, {len(ids) - worse - better} same"
    if len(ids) and worse == 0 and better == 0:
        ax.text(0.5, 0.5, f"no task differs between the arms ({len(ids)} tasks):\n"
                "no evidence either way, not evidence of no harm",
                transform=ax.transAxes, ha="center", va="center", fontsize=10,
                color="#c98a00", bbox={"boxstyle": "round", "fc": "white", "ec": "#c98a00"})
    if len(ids) <= DOTS_MAX:
        xs = np.arange(len(ids))
        colours = ["#b13f3f" if t in golden else "0.35" for t in ids]
        ax.vlines(xs, 0, vals, color=colours, lw=1)
        ax.scatter(xs, vals, c=colours, s=18, zorder=3)
        ax.axhline(0.0, color="black", lw=1)
        ax.axhline(-margin * 100, color="#b13f3f", ls="--", lw=1)
        ax.set_xticks(xs, ids if len(ids) <= LABELS_MAX else [""] * len(ids),
                      rotation=60, fontsize=7)
        ax.set_ylabel("delta (points)")
        ax.set_xlabel("task (sorted by delta; golden in red)")
        ax.set_ylim(min(-margin * 100, float(vals.min(initial=0))) - 8,
                    max(0.0, float(vals.max(initial=0))) + 8)
    else:
        levels = np.unique(vals)
        if levels.size <= 41:
            counts = np.array([np.sum(vals == v) for v in levels])
            width = max(0.8 * float(np.min(np.diff(levels))) if levels.size > 1 else 4.0, 0.5)
            ax.bar(levels, counts, width=width, color="0.55", edgecolor="black")
            for x, c in zip(levels, counts, strict=True):
                ax.text(x, c, f"{c}", ha="center", va="bottom", fontsize=7)
        else:
            ax.hist(vals, bins=40, color="0.55", edgecolor="black")
        gold = [deltas[t] * 100 for t in ids if t in golden]
        if gold:
            ax.plot(gold, np.zeros(len(gold)), "|", color="#b13f3f", ms=14, mew=2,
                    label=f"golden tasks ({len(gold)})")
            ax.legend(fontsize=8)
        ax.axvline(0.0, color="black", lw=1)
        ax.axvline(-margin * 100, color="#b13f3f", ls="--", lw=1)
        ax.set_yscale("symlog", linthresh=10)
        ax.set_ylim(0, ax.get_ylim()[1] * 3)
        ax.set_xlabel("delta (points)")
        ax.set_ylabel("tasks")
    ax.set_title(f"Candidate minus baseline by task\n{summary}", fontsize=10, loc="left")


def _slices(ax: Any, r: dict[str, Any]) -> None:
    names = list(r["slices"]["baseline"])
    xs = list(range(len(names)))
    for arm, shift, style in (("baseline", -0.18, {"color": "white", "edgecolor": "black",
                                                   "hatch": "//"}),
                              ("candidate", 0.18, {"color": "#2a7f9e"})):
        rows = [r["slices"][arm][n] for n in names]
        rates = [x["rate"] for x in rows]
        err = [[x["rate"] - x["lo"] for x in rows], [x["hi"] - x["rate"] for x in rows]]
        ax.bar([i + shift for i in xs], rates, 0.36, label=arm, yerr=err, capsize=3,
               error_kw={"lw": 1}, **style)
    floors = r["rules"]["slices"]
    for i, n in enumerate(names):
        floor = floors["floors"].get(n, floors["floor"])
        if floor is not None:
            ax.plot([i - 0.4, i + 0.4], [floor, floor], color="0.3", ls="--", lw=1)
    ax.set_ylim(0, 1.22)
    ax.set_xticks(xs, names, rotation=15 if len(names) < 8 else 60, fontsize=8)
    ax.set_ylabel("pass rate")
    ax.set_title("Slices: task-clustered pass rate\n(95 % intervals; dashed: floor)", fontsize=10,
                 loc="left")
    ax.legend(fontsize=8, loc="upper left", ncol=2)


def render_plot(result: GateResult, path: Path) -> None:
    """The decision interval first, then per-task deltas and slices, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(12, 7.5))
    grid = fig.add_gridspec(2, 2, height_ratios=[1.0, 1.6], hspace=0.55, wspace=0.22)
    _forest(fig.add_subplot(grid[0, :]), result.report, result.verdict)
    _per_task(fig.add_subplot(grid[1, 0]), result.report)
    _slices(fig.add_subplot(grid[1, 1]), result.report)
    fig.savefig(path, dpi=110, metadata={"Software": None}, bbox_inches="tight")
    plt.close(fig)


def write_report(result: GateResult, out_dir: str | Path) -> dict[str, Path]:
    """Write the three files into ``out_dir`` (created); returns their paths.

    Raises:
        UserError: ``out_dir`` (or a parent) is a file, or cannot be created or written.
    """
    out = check_out_dir(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        paths = {"json": out / "report.json", "md": out / "report.md", "png": out / "report.png"}
        paths["json"].write_text(
            json.dumps(result.report, indent=2, default=_json_default, allow_nan=False) + "\n",
            encoding="utf-8",
        )
        paths["md"].write_text(render_markdown(result), encoding="utf-8")
        render_plot(result, paths["png"])
    except OSError as exc:
        raise UserError(f"--out {out}: cannot write the report ({exc.strerror or exc})") from exc
    return paths


def _json_default(o: Any) -> Any:
    if isinstance(o, float) and math.isnan(o):
        return None
    return str(o)
