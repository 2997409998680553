"""Write the gate's evidence: ``report.json``, ``report.md`` and ``report.png``.

The plot follows figure 22.8: per-task paired deltas (golden tasks marked)
beside the candidate and baseline slice rates with the declared floors.
matplotlib runs on the Agg backend (no display needed in CI).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from flywheel.evalset._gate import GateResult


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _num(x: float | None, fmt: str = ".2f") -> str:
    return "undefined" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _pct(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * 100:.1f} %"


def render_markdown(result: GateResult) -> str:
    """The human-readable report."""
    r = result.report
    p = r["paired"]
    lines = [f"# Release gate: **{result.verdict}**", ""]
    if result.reasons:
        lines += (
            ["## Blocking reasons", ""]
            + [f"- `{x.code}`: {x.message}" for x in result.reasons]
            + [""]
        )
    else:
        lines += ["No blocking reason: every predeclared rule is met.", ""]
    lines += [
        f"Eval set `{r['evalset']['dir']}` version {r['evalset']['version']}, "
        f"{r['evalset']['tasks']} tasks. "
        f"Margin {r['rules']['margin']}, confidence {r['rules']['confidence']}, "
        f"{p['resamples']} bootstrap resamples (seed {p['seed']}).",
        "",
        "## Arms",
        "",
        _row(
            "arm",
            "accepted / trials",
            "rate",
            "both-way bounds",
            "pending",
            "unknown",
            "pass@k",
            "pass^k",
            "trajectory F1",
            "partial credit",
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for arm, a in r["arms"].items():
        t = a["trials"]
        pk = a["pass_k"]
        f1 = a["trajectory_f1"]
        pc = a["partial_credit_mean"]
        lines.append(
            _row(
                arm,
                f"{t['accepted']}/{t['n']}",
                _pct(t["rate"]),
                f"[{_pct(t['lo_if_unresolved_fail'])}, {_pct(t['hi_if_unresolved_pass'])}]",
                t["pending"],
                t["unknown"],
                f"{_pct(pk.get('pass_at_k'))} (k={pk['k']})",
                _pct(pk.get("pass_hat_k")),
                "n/a" if f1 is None else f"{f1:.3f}",
                "n/a" if pc is None else f"{pc:.3f}",
            )
        )
    lines += [
        "",
        "Partial credit and trajectory F1 are diagnostics; "
        "the verdict uses only mandatory criteria.",
        "",
        "## Paired comparison (task as the unit)",
        "",
        f"- mean delta (candidate - baseline): {p['mean_delta'] * 100:+.1f} points",
        f"- {p['confidence']:.0%} paired cluster bootstrap interval: "
        f"[{p['lo'] * 100:+.1f}, {p['hi'] * 100:+.1f}] points",
        f"- cluster SE {p['cluster_se'] * 100:.2f} points; "
        f"80 %-power MDE {p['mde_80'] * 100:.1f} points",
    ]
    if "unresolved_bounds" in p:
        ub = p["unresolved_bounds"]
        lines.append(
            "- unresolved resolved against the candidate: lower bound "
            f"{ub['against_candidate']['lo'] * 100:+.1f}; "
            f"for it: {ub['for_candidate']['lo'] * 100:+.1f} points"
        )
    if "newcombe_method10" in p:
        nw = p["newcombe_method10"]
        lines.append(
            f"- Newcombe method 10: [{nw['lo'] * 100:+.2f}, {nw['hi'] * 100:+.2f}] points; "
            f"exact McNemar p = {p['mcnemar_exact_p']:.3f}"
        )
    lines += ["", "## Golden tasks", ""]
    if r["golden"]:
        lines += [
            "| task | baseline | candidate | regressed | candidate failures |",
            "|---|---|---|---|---|",
        ]
        for tid, g in r["golden"].items():
            regressed = "yes" if g["regressed"] else "no"
            lines.append(
                _row(tid, g["baseline"], g["candidate"], regressed, g["candidate_failures"])
            )
    else:
        lines.append("No golden task declared.")
    lines += [
        "",
        "## Slices (trial pass rate)",
        "",
        "| slice | baseline | candidate | floor |",
        "|---|---|---|---|",
    ]
    floors = r["rules"]["slices"]
    for name, c in r["slices"]["candidate"].items():
        b = r["slices"]["baseline"][name]
        floor = floors["floors"].get(name, floors["floor"])
        lines.append(
            _row(
                name,
                f"{b['accepted']}/{b['n']} ({_pct(b['rate'])})",
                f"{c['accepted']}/{c['n']} ({_pct(c['rate'])})",
                "-" if floor is None else floor,
            )
        )
    lines += ["", "## Error burden (primary failure category per slice)", ""]
    for arm, slices in r["error_burden"].items():
        for name, s in slices.items():
            lines.append(
                f"- {arm} / {name}: success {_pct(s['success'])}, failures {s['failures'] or '{}'}"
            )
    lines += ["", "## Judge calibration", ""]
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
    ev = r["side_effects"]["candidate_events"]
    lines += [
        "",
        "## Critical side effects (candidate)",
        "",
        str(ev) if ev else "None recorded.",
        "",
    ]
    return "\n".join(lines)


def render_plot(result: GateResult, path: Path) -> None:
    """Figure 22.8: per-task paired deltas and slice rates, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = result.report
    deltas = r["paired"]["task_deltas"]
    golden = set(r["golden"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    ids = list(deltas)
    colors = ["#b13f3f" if tid in golden else "0.65" for tid in ids]
    axes[0].axhline(0.0, color="black", lw=1)
    axes[0].bar(range(len(ids)), [deltas[t] for t in ids], color=colors, edgecolor="black")
    axes[0].axhline(-r["rules"]["margin"], color="0.4", ls="--", lw=1)
    axes[0].set(title="Candidate minus baseline by task (golden in red)", ylabel="pass-rate delta")
    axes[0].set_xticks(
        range(len(ids)), ids if len(ids) <= 30 else [""] * len(ids), rotation=60, fontsize=7
    )
    names = list(r["slices"]["baseline"])
    xs = list(range(len(names)))
    axes[1].bar(
        [i - 0.18 for i in xs],
        [r["slices"]["baseline"][n]["rate"] for n in names],
        0.36,
        label="baseline",
        color="white",
        edgecolor="black",
        hatch="//",
    )
    axes[1].bar(
        [i + 0.18 for i in xs],
        [r["slices"]["candidate"][n]["rate"] for n in names],
        0.36,
        label="candidate",
        color="#2a7f9e",
    )
    floor = r["rules"]["slices"]["floor"]
    if floor is not None:
        axes[1].axhline(floor, color="0.4", ls="--", lw=1, label=f"floor {floor}")
    axes[1].set(title="Slices: trial pass rate", ylabel="pass rate", ylim=(0, 1.22))
    axes[1].set_xticks(xs, names, rotation=15)
    axes[1].legend(fontsize=8, loc="upper left", ncol=3)
    fig.suptitle(f"Release gate: {result.verdict}")
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def write_report(result: GateResult, out_dir: str | Path) -> dict[str, Path]:
    """Write the three files into ``out_dir`` (created); returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "report.json", "md": out / "report.md", "png": out / "report.png"}
    paths["json"].write_text(
        json.dumps(result.report, indent=2, default=_json_default, allow_nan=False) + "\n",
        encoding="utf-8",
    )
    paths["md"].write_text(render_markdown(result), encoding="utf-8")
    render_plot(result, paths["png"])
    return paths


def _json_default(o: Any) -> Any:
    if isinstance(o, float) and math.isnan(o):
        return None
    return str(o)
