"""Benchmark: failure attribution on Who&When next to every label-free heuristic, honestly.

Run: ``python bench/whowhen.py [--data DIR] [--split FILE] [--parts tune,report] [--fit]
[--check] [--dump FILE]`` (default data /work/shared/data/who-and-when, split
bench/data/whowhen_split.json). ``--parts tune --fit`` rewrites the model without
attributing a single report log.

Workload: every log of algorithm-generated/ (126, CaptainAgent / AutoGen group chat) and
hand-crafted/ (58, Magentic-One) is imported into a fresh embedded store as one trace per
log and attributed from the stored spans by the attributor (signals, and the learned
model of ``attribution/model.json`` where the evidence is weak; no network); labels stay
on the resource and are read only here, for scoring and for ``--fit``. The runs are
known failures, so the attributor is told so (``assume_failed``).

Both subsets are development data. Each was split in halves BEFORE the work of issue 22
(``bench/data/whowhen_split.json``, by a hash of the file name): rules and the learned
model were built looking at the ``tune`` halves only; the ``report`` halves are printed,
never used to change code. Read the report rows as the figures that mean something.

The attribution model (``attribution/model.json``) is fit on the tune halves of both
subsets together, step label and frozen category label of each tune log (``--fit``
rewrites it; ``--check`` exits 1 when the shipped file is not what the tune halves
give). Tune rows are **cross-validated**: each tune log is attributed by a model fit on
the other folds (10 folds by a hash of the file name), so no tune figure comes from a
model that saw that log. Report rows use the shipped model.

Scoring is EXACT match on agent name and on step index. Each method gets a 95% Wilson
interval. The product is compared with the best label-free heuristic on the same logs
(the best one chosen after the fact, with the labels: that favours the heuristic) by an
exact two-sided McNemar test on the paired hits; "beats" only when p < 0.05 and the
product has more hits. Label-free heuristics:

- last message: the speaker (with the importer's speaker clean-up: ``Orchestrator
  (thought)`` -> ``Orchestrator``) and index of the last message;
- first code message: the first message holding a code block (none: message 1);
- constant step k0, k0 chosen without labels: the most common index, over the subset's
  logs, of the first step that acts (a code block, a tool call, or a page the agent was
  shown); the agent is that step's speaker in each log;
- random: a uniform step and a uniform agent among the speakers of each log (seed 0;
  the expected accuracy is printed beside it).

The best constant chosen WITH labels (an upper bound no label-free rule reaches) is
printed too, as a stress test, and is not a candidate for "best heuristic".

Categories: Who&When has no category label. ``bench/data/whowhen_categories.json``
holds one category per log, assigned from the ``mistake_reason`` text alone with the
rubric in that file, written and frozen before the category logic was changed; logs
labelled ``other`` are left out. Forced choice: the product's category, or when it
abstains (``unknown``) its best-supported runner-up; no evidence at all counts as a
miss. It is compared with always answering the most frequent category of the same logs
(chosen with the labels, which favours it), exact McNemar; how many logs were answered
(not ``unknown``) and how many of those agree is printed beside it. The distributions
of the answers and of the forced choices are printed (``category_distribution``), with a
warning when one category, ``unknown`` included, is more than 60 % of them.

Targets (the owners measure them on held-out logs): on each report half, agent and step
accuracy significantly above the best label-free heuristic and category agreement
significantly above the most frequent category (exact McNemar, p < 0.05). The bench exits 1
naming every target a report half misses, and 1 when ``--check`` finds model.json is not the
tune halves' fit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flywheel.attribution import (  # noqa: E402
    MODEL_CATEGORIES,
    AttributionModel,
    Example,
    attribute_steps,
    attribution_features,
    category_distribution,
    fit_model,
    import_whowhen,
    iter_logs,
    load_for_attribution,
    load_model,
    parse_log,
    read_labels,
    speaker_of,
)
from flywheel.evalset.stats import mcnemar_exact, paired_counts, wilson_interval  # noqa: E402

from flywheel import open_store  # noqa: E402

SUBSETS = ("algorithm-generated", "hand-crafted")
HERE = Path(__file__).resolve().parent
_CODE = re.compile(r"```[\w+-]*\n")  # a fenced code block (not a mention of ```)
FOLDS = 10
PRODUCT = "product"
MODEL_FILE = HERE.parent / "attribution" / "model.json"


def _pct(k: int, n: int) -> str:
    ci = wilson_interval(k, n)
    return f"{100 * k / n:6.2f} [{100 * float(ci.lo):5.1f}, {100 * float(ci.hi):5.1f}]"


def _first_acting(history: list[dict[str, Any]], steps: Sequence[Any]) -> int:
    """The first message after the task holding a code block or showing the agent a page."""
    for i in range(1, len(history)):
        if _CODE.search(str(history[i].get("content") or "")) or steps[i].input.strip():
            return i
    return min(1, len(history) - 1)


def heuristics(
    history: list[dict[str, Any]], steps: Sequence[Any], k0: int, rng: random.Random
) -> dict[str, tuple[str, int]]:
    """Label-free (agent, step) guesses for one log."""
    speakers = [speaker_of(m)[0] for m in history]
    n = len(history)
    code = next(
        (i for i, m in enumerate(history) if _CODE.search(str(m.get("content") or ""))), None
    )
    code_i = code if code is not None else min(1, n - 1)
    k = min(k0, n - 1)
    agents = sorted(set(speakers))
    return {
        "last message": (speakers[-1], n - 1),
        "first code message": (speakers[code_i], code_i),
        f"constant step {k0} (no labels)": (speakers[k], k),
        "random (seed 0)": (rng.choice(agents), rng.randrange(n)),
    }


def collect(store: Any, subset: str, data: Path) -> list[dict[str, Any]]:
    """Import one subset; one record per log (stored steps, provenance, features, labels)."""
    ids = import_whowhen(store, data / subset)
    labels = read_labels(store, ids)
    by_name = {lab["log"]: tid for tid, lab in labels.items()}
    records: list[dict[str, Any]] = []
    for path, sub in iter_logs(data / subset):
        log = parse_log(path, sub)
        tid = by_name[log.name]
        steps, prov = load_for_attribution(store, tid)
        lab = labels[tid]
        records.append(
            {
                "log": log.name,
                "stem": path.stem,
                "trace_id": tid,
                "history": log.history,
                "steps": steps,
                "provenance": prov,
                "features": attribution_features(steps, prov),
                "gold_agent": lab["mistake_agent"].strip(),
                "gold_step": int(lab["mistake_step"].strip()),
            }
        )
    return records


def attribute(recs: Sequence[dict[str, Any]], model: AttributionModel) -> None:
    """Attribute every record with ``model`` (the prediction fields are set in place)."""
    for r in recs:
        t0 = time.perf_counter()
        a = attribute_steps(
            r["steps"], r["provenance"], trace_id=r["trace_id"], assume_failed=True, model=model
        )
        chosen = next((e for e in a.evidence if e["chosen"]), None)
        r.update(
            agent=a.agent,
            step=a.causal_index,
            category=a.category,
            # forced choice: the answer, or when it abstains the best-supported category
            forced=a.category_scores[0][0]
            if a.category == "unknown" and a.category_scores
            else a.category,
            scores=a.category_scores,
            confidence=a.confidence,
            kind=chosen["kind"] if chosen else "none",
            seconds=time.perf_counter() - t0,
        )


def examples(recs: Sequence[dict[str, Any]], cats: dict[str, str]) -> list[Example]:
    """Fitting examples: features, the labelled step, the frozen category (a model one only)."""
    out = []
    for r in recs:
        cat = cats.get(r["log"])
        out.append(Example(r["features"], r["gold_step"], cat if cat in MODEL_CATEGORIES else None))
    return out


def fit(tune: Sequence[dict[str, Any]], cats: dict[str, str]) -> AttributionModel:
    """The shipped model: fit on the tune halves of both subsets (never a report log)."""
    subsets = Counter(r["log"].split("/")[0] for r in tune)
    meta = {"fitted_by": "bench/whowhen.py --fit", "tune_logs": dict(sorted(subsets.items()))}
    return fit_model(examples(tune, cats), meta=meta)


def _fold(r: dict[str, Any]) -> int:
    return int(hashlib.sha256(f"fold:{r['log']}".encode()).hexdigest(), 16) % FOLDS


def cross_validate(tune: Sequence[dict[str, Any]], cats: dict[str, str]) -> None:
    """Attribute each tune log with a model fit on the other folds (out-of-fold figures)."""
    for k in range(FOLDS):
        held = [r for r in tune if _fold(r) == k]
        if held:
            attribute(held, fit_model(examples([r for r in tune if _fold(r) != k], cats)))


def same_model(a: AttributionModel, b: AttributionModel, tol: float = 1e-3) -> bool:
    """Whether two models have the same weights (to ``tol``, the rounding of model.json)."""
    ja, jb = a.to_json(), b.to_json()
    flat = [(ja[key], jb[key]) for key in ("step_weights", "intercepts")] + [
        (ja["evidence_weights"][c], jb["evidence_weights"].get(c, {}))
        for c in ja["evidence_weights"]
    ]
    return all(x.keys() == y.keys() and all(abs(x[k] - y[k]) <= tol for k in x) for x, y in flat)


def _methods(recs: Sequence[dict[str, Any]]) -> dict[str, list[tuple[str, int]]]:
    k0 = Counter(_first_acting(r["history"], r["steps"]) for r in recs).most_common(1)[0][0]
    rng = random.Random(0)
    out: dict[str, list[tuple[str, int]]] = {PRODUCT: []}
    for r in recs:
        out[PRODUCT].append((r["agent"], r["step"]))
        for name, guess in heuristics(r["history"], r["steps"], k0, rng).items():
            out.setdefault(name, []).append(guess)
    return out


def _best_constant(recs: Sequence[dict[str, Any]]) -> tuple[int, list[tuple[str, int]]]:
    def guesses(k: int) -> list[tuple[str, int]]:
        out = []
        for r in recs:
            i = min(k, len(r["history"]) - 1)
            out.append((speaker_of(r["history"][i])[0], i))
        return out

    best = max(
        range(40),
        key=lambda k: sum(g[1] == r["gold_step"] for g, r in zip(guesses(k), recs, strict=True)),
    )
    return best, guesses(best)


def _verdict(p: float, mine: int, theirs: int) -> str:
    if p < 0.05 and mine > theirs:
        return "BEATS it (p < 0.05)"
    return "is WORSE (p < 0.05)" if p < 0.05 else "no significant difference"


def _compare(
    name: str, prod: list[bool], rows: dict[str, list[bool]], out: Callable[[str], None]
) -> bool:
    """Print the paired comparison with the best heuristic; whether the product beats it."""
    best = max(rows, key=lambda m: sum(rows[m]))
    _, b_only, p_only, _ = paired_counts(rows[best], prod)
    p = float(mcnemar_exact(b_only, p_only))
    verdict = _verdict(p, p_only, b_only)
    out(
        f"    {name}: product {sum(prod)} vs best heuristic '{best}' {sum(rows[best])}; "
        f"discordant product-only {p_only} / heuristic-only {b_only}; exact McNemar p = {p:.4f}"
        f" -> {verdict}"
    )
    return verdict.startswith("BEATS")


def report(
    recs: Sequence[dict[str, Any]], title: str, cats: dict[str, str], out: Callable[[str], None]
) -> list[str]:
    """The item-3 table, the McNemar verdicts and the category figures for one set of logs.

    Returns the targets missed (agent, step, category not significantly better).
    """
    n = len(recs)
    methods = _methods(recs)
    hits = {
        m: (
            [g[0] == r["gold_agent"] for g, r in zip(gs, recs, strict=True)],
            [g[1] == r["gold_step"] for g, r in zip(gs, recs, strict=True)],
        )
        for m, gs in methods.items()
    }
    out(f"  {title} (n={n})                         agent % [95% Wilson]      step % [95% Wilson]")
    for m, (ah, sh) in hits.items():
        out(f"    {m:<36} {_pct(sum(ah), n):>24} {_pct(sum(sh), n):>24}")
    exp_a = sum(1 / len({speaker_of(x)[0] for x in r["history"]}) for r in recs) / n
    exp_s = sum(1 / len(r["history"]) for r in recs) / n
    out(f"    {'random (expected)':<36} {100 * exp_a:>6.2f}{'':18} {100 * exp_s:>6.2f}")
    k, cg = _best_constant(recs)
    ca = sum(g[0] == r["gold_agent"] for g, r in zip(cg, recs, strict=True))
    cs = sum(g[1] == r["gold_step"] for g, r in zip(cg, recs, strict=True))
    name = f"constant step {k} (WITH labels, bound)"
    out(f"    {name:<36} {_pct(ca, n):>24} {_pct(cs, n):>24}")
    heur = {m: v for m, v in hits.items() if not m.startswith("product")}
    missed = [
        what
        for what, i in (("agent", 0), ("step", 1))
        if not _compare(what, hits[PRODUCT][i], {m: v[i] for m, v in heur.items()}, out)
    ]
    for what, key in (("category", "category"), ("forced-choice", "forced")):
        dist = category_distribution(r[key] for r in recs)
        out(f"    {what} distribution: " + ", ".join(f"{c} {k}" for c, k in dist["counts"]))
        if dist["warning"]:
            out(f"    WARNING ({what}): {dist['warning']}")
    labelled = [r for r in recs if cats.get(r["log"], "other") != "other"]
    if labelled:
        gold = [cats[r["log"]] for r in labelled]
        mode, _ = Counter(gold).most_common(1)[0]
        prod = [r["forced"] == g for r, g in zip(labelled, gold, strict=True)]
        base = [g == mode for g in gold]
        answered = [r for r in labelled if r["category"] != "unknown"]
        agree_ans = sum(r["category"] == cats[r["log"]] for r in answered)
        out(
            f"    category vs frozen labels (n={len(labelled)} with a taxonomy category): product "
            f"(forced choice) {_pct(sum(prod), len(labelled))}; answered (not unknown) "
            f"{len(answered)}, {agree_ans} agree; "
            f"always '{mode}' {_pct(sum(base), len(labelled))}"
        )
        _, b_only, p_only, _ = paired_counts(base, prod)
        p = float(mcnemar_exact(b_only, p_only))
        verdict = _verdict(p, p_only, b_only)
        out(
            f"    category: product-only {p_only} / most-frequent-only {b_only}; exact McNemar "
            f"p = {p:.4f} -> {verdict}"
        )
        if not verdict.startswith("BEATS"):
            missed.append("category")
    kinds = Counter(r["kind"] for r in recs)
    out(
        "    decisive signal (n / step hits / agent hits): "
        + "; ".join(
            f"{k} {c}/{sum(r['step'] == r['gold_step'] for r in recs if r['kind'] == k)}/"
            f"{sum(r['agent'] == r['gold_agent'] for r in recs if r['kind'] == k)}"
            for k, c in kinds.most_common()
        )
    )
    return missed


def main() -> None:
    """Print the tables (``--fit`` rewrites model.json; ``--dump`` writes tune predictions)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/work/shared/data/who-and-when", type=Path)
    ap.add_argument("--split", default=HERE / "data" / "whowhen_split.json", type=Path)
    ap.add_argument("--categories", default=HERE / "data" / "whowhen_categories.json", type=Path)
    ap.add_argument("--dump", type=Path, help="write per-log predictions of the TUNE halves here")
    ap.add_argument("--parts", default="tune,report", help="which halves to print (tune,report)")
    ap.add_argument("--fit", action="store_true", help="fit on the tune halves, write model.json")
    ap.add_argument(
        "--check", action="store_true", help="exit 1 when model.json is not the tune halves' fit"
    )
    args = ap.parse_args()
    split = json.loads(args.split.read_text())["subsets"]
    cats: dict[str, str] = {}
    if args.categories.exists():
        for sub, by in json.loads(args.categories.read_text())["labels"].items():
            cats.update({f"{sub}/{stem}": c for stem, c in by.items()})
    parts = args.parts.split(",")
    if not set(parts) <= {"tune", "report"}:
        ap.error(f"--parts {args.parts!r}: use tune, report or tune,report")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        store = open_store(f"chdb://{d}?database=whowhen")
        store.migrate()
        res = {s: collect(store, s, args.data) for s in SUBSETS}
        store.close()
    halves = {
        (s, part): [r for r in res[s] if r["stem"] in set(split[s][part])]
        for s in SUBSETS
        for part in ("tune", "report")
    }
    tune = [r for s in SUBSETS for r in halves[s, "tune"]]
    fitted = fit(tune, cats)
    if args.fit:
        MODEL_FILE.write_text(json.dumps(fitted.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {MODEL_FILE} (fit on {len(tune)} tune logs)")
    shipped = load_model(MODEL_FILE)
    same = same_model(shipped, fitted)
    if "tune" in parts:
        cross_validate(tune, cats)
    if "report" in parts:
        for s in SUBSETS:
            attribute(halves[s, "report"], shipped)
    wall = time.perf_counter() - t0
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, python "
        f"{platform.python_version()}, load {os.getloadavg()[0]:.2f}; import, fit + attribute "
        f"{wall:.1f} s for {sum(len(v) for v in res.values())} logs"
    )
    print(
        f"model.json: {'the' if same else 'NOT the'} fit of the {len(tune)} tune logs "
        f"({shipped.meta.get('fitted_by', 'unknown origin')}); tune rows out-of-fold "
        f"({FOLDS} folds), report rows with model.json"
    )
    missed: list[str] = []
    for s in SUBSETS:
        print(f"\n{s}")
        for part in parts:
            lost = report(halves[s, part], part, cats, print)
            if part == "report":
                missed += [f"{s} {what}" for what in lost]
    if args.dump and "tune" in parts:
        rows = [
            {k: v for k, v in r.items() if k not in ("history", "steps", "provenance", "features")}
            for r in tune
        ]
        args.dump.write_text(json.dumps(rows, indent=1, default=str))
    if args.check and not same:
        sys.exit("model.json is not what bench/whowhen.py --fit gives on the tune halves")
    if missed:  # the targets: significantly above the best heuristic / the most frequent category
        sys.exit(
            "TARGET MISSED on the report halves (not significantly better): " + ", ".join(missed)
        )


if __name__ == "__main__":
    main()
