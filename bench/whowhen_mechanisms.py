"""Benchmark: candidate attribution mechanisms on the Who&When TUNE halves, out-of-fold.

Run: ``python bench/whowhen_mechanisms.py [--data DIR] [--split FILE] [--strength S]``.

What it is for: before a new attribution mechanism replaces the shipped model, it
must beat it out-of-fold on the tune halves. This prints, for each mechanism, agent
and step hits on each subset's tune half next to the shipped model's own out-of-fold
figures (``bench/whowhen.py``'s cross-validation) and the label-free heuristics, with
95 % Wilson intervals and an exact two-sided McNemar test against the shipped model.
The report halves are dropped right after import: no figure here touches them.

Every mechanism is fit and scored with the folds of ``bench/whowhen.py`` (10, by a hash
of the file name); a choice among settings (the threshold of mechanism 3) is made by
an inner cross-validation on the training folds only.

Mechanisms (issue 22's suggestions, one at a time):

1. **ranking**: a conditional logit over the steps of a log whose features are the
   model's step features plus the label-free heuristics and the product's findings
   as indicators (the first code message, the last message, the last substantive
   message, the decisive signal's step, the heaviest signal at the step, the earliest
   step with evidence, one indicator per signal kind, positions 0/1/2); nothing
   overrides its argmax.
2. **ranking + recovery**: 1 plus whether the step's failure was repaired later,
   whether its code repeats an earlier step's, whether its speaker speaks again.
3. **first irrecoverable divergence**: 2's step probabilities, the earliest step whose
   probability reaches a share tau of the largest (tau chosen by inner CV).
4. **gate**: per log, the shipped model's step or the first code message, whichever a
   logistic model of the decision (agreement, decisive signal kind, order, distance)
   says is likelier right.
5. **category, trace level**: a category logit over the category evidence of the
   whole trace (its maximum per feature and its value at the shipped model's step),
   each feature supporting its own category only, named only with evidence; against
   the frozen labels of ``bench/data/whowhen_categories.json``.
6. **answer origin** (the error later steps inherited, read backwards from the run's
   answer): 1 plus, per step, the share of the answer's facts (figures, names; not those
   of the request) that first appear at that step -- in its words, or in the result of a
   call it issued -- and whether it is the earliest such step.
7. **speaker turns**: 1 plus whether the step is its speaker's first turn, its speaker's
   first action, and how often its speaker speaks again.
8. **category at the blamed step, fit where it will be read**: the shipped category
   model refit on the features of the step the shipped model blames (not the labelled
   step), read at the blamed step only (no mixing over steps).

Diagnostics, not mechanisms: the category model read at the LABELLED step (a bound:
what the category features say where the labels put the failure), and the
reliability of the shipped category probability (out-of-fold: per bucket of the top
category's probability, how many logs and how many agree; answered and agreeing at
each abstention threshold).

Agent of a chosen step: its speaker (as for the heuristics). Exit status 0: this is
an exploration bench with no target.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import math
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import whowhen as ww  # noqa: E402

from flywheel import open_store  # noqa: E402
from flywheel.attribution import (  # noqa: E402
    MODEL_CATEGORIES,
    STEP_FEATURES,
    all_signals,
    speaker_of,
)
from flywheel.evalset.stats import mcnemar_exact, paired_counts, wilson_interval  # noqa: E402

Feats = list[dict[str, float]]
#: A signal this heavy decides the step in the shipped attributor (``DECISIVE_WEIGHT``).
DECISIVE = 0.7
TAUS = (0.3, 0.5, 0.7, 0.9, 1.0)
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


# -- a conditional logit and a binary logit (MAP, Gaussian prior at 0) ---------------------
def fit_clogit(groups: Sequence[tuple[list[list[float]], int]], strength: float) -> Any:
    """Weights of a conditional logit: each group is (alternatives x features, chosen row)."""
    import numpy as np
    from scipy.optimize import minimize

    mats = [(np.asarray(x, dtype=float), y) for x, y in groups]
    k = mats[0][0].shape[1]

    def loss(w: Any) -> tuple[float, Any]:
        total, grad = strength * float(w @ w), 2 * strength * w
        for x, y in mats:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            total -= float(np.log(p[y]))
            grad = grad - (x[y] - p @ x)
        return total, grad

    return minimize(loss, np.zeros(k), jac=True, method="L-BFGS-B").x


def fit_logit(x: list[list[float]], y: list[bool], strength: float) -> Any:
    """Weights of a binary logit (first column the unpenalised intercept)."""
    import numpy as np
    from scipy.optimize import minimize

    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    pen = np.r_[0.0, np.ones(xa.shape[1] - 1)]

    def loss(w: Any) -> tuple[float, Any]:
        p = 1 / (1 + np.exp(-(xa @ w)))
        ll = -(ya * np.log(p + 1e-12) + (1 - ya) * np.log(1 - p + 1e-12)).sum()
        return ll + strength * float(pen * w @ w), xa.T @ (p - ya) + 2 * strength * pen * w

    return minimize(loss, np.zeros(xa.shape[1]), jac=True, method="L-BFGS-B").x


# -- features ------------------------------------------------------------------------------
def first_code(r: dict[str, Any]) -> int:
    """The first-code-message heuristic's step (``bench/whowhen.py``)."""
    return ww.heuristics(r["history"], r["steps"], 0, _NO_RNG)["first code message"][1]


class _NoRng:
    def choice(self, xs: Sequence[Any]) -> Any:
        return xs[0]

    def randrange(self, n: int) -> int:
        return 0


_NO_RNG: Any = _NoRng()


def last_substantive(r: dict[str, Any]) -> int:
    """The last step whose speaker says more than a few words of its own."""
    subst = [s.index for s in r["steps"] if s.speaks and len(re.sub(r"\W", "", s.own_words)) > 20]
    return subst[-1] if subst else len(r["steps"]) - 1


def ranking_features(r: dict[str, Any], recovery: bool = False) -> Feats:
    """Mechanism 1 (and 2 with ``recovery``): the model's features plus heuristics, findings."""
    steps, sigs = r["steps"], r["signals"]
    evidence = [g for g in sigs if g.category]
    strong = [g for g in evidence if g.weight >= DECISIVE]
    decisive = min(strong, key=lambda g: (g.cause, -g.weight)).cause if strong else -1
    earliest = min((g.cause for g in evidence), default=-1)
    kinds = sorted({g.kind for g in evidence})
    fc, n, ls = first_code(r), len(steps), last_substantive(r)
    repaired = {g.cause for g in evidence if g.kind.endswith("_repaired")}
    codes: list[str] = []
    out = []
    for i, (s, f) in enumerate(zip(steps, r["features"], strict=True)):
        d = {k: f.get(k, 0.0) for k in STEP_FEATURES}
        d |= {
            "first_code": float(i == fc),
            "last": float(i == n - 1),
            "last_substantive": float(i == ls),
            "decisive": float(i == decisive),
            "heaviest": max((g.weight for g in evidence if g.cause == i), default=0.0),
            "earliest_evidence": float(i == earliest),
            **{f"pos{k}": float(i == k) for k in range(3)},
            **{f"kind:{k}": float(any(g.kind == k and g.cause == i for g in sigs)) for k in kinds},
        }
        if recovery:
            code = "\n".join(_FENCE.findall(s.said)) if s.speaks else ""
            d["repaired_later"] = float(i in repaired)
            d["repeats_code"] = float(
                bool(code)
                and any(difflib.SequenceMatcher(None, code, c).quick_ratio() > 0.9 for c in codes)
            )
            if code:
                codes.append(code)
            d["speaks_again"] = float(
                s.speaks and any(t.speaks and t.agent == s.agent for t in steps[i + 1 :])
            )
        out.append(d)
    return out


def origin_features(r: dict[str, Any]) -> Feats:
    """Mechanism 6: the ranking features plus where the answer's facts first appear."""
    from flywheel.attribution._features import _facts
    from flywheel.attribution._request import request_of
    from flywheel.attribution._steps import actor_before

    steps, out = r["steps"], ranking_features(r)
    answer = next((i for i, f in enumerate(r["features"]) if f.get("answer")), None)
    asked = _facts(request_of(steps))
    facts: set[str] = set()
    j = answer if answer is not None else -1
    while j >= 0 and not facts:  # the answer's facts, else the last words that state any
        facts = _facts(steps[j].own_words) - asked if steps[j].speaks else set()
        j -= 1
    shown = [
        _facts(" ".join((s.said, s.input if s.index else "", s.text, s.arguments)).lower())
        for s in steps
    ]
    origin: Counter[int] = Counter()
    for fact in facts:
        k = next((i for i, seen in enumerate(shown) if fact in seen), None)
        if k is not None:
            origin[k if steps[k].speaks else actor_before(steps, k)] += 1
    total = sum(origin.values())
    for i, d in enumerate(out):
        d["answer_origin"] = origin[i] / total if total else 0.0
        d["answer_origin_first"] = float(bool(origin) and i == min(origin))
    return out


def speaker_features(r: dict[str, Any]) -> Feats:
    """Mechanism 7: the ranking features plus the speaker's first turn, first act, later turns."""
    steps, out = r["steps"], ranking_features(r)
    spoke: set[str] = set()
    acted: set[str] = set()
    for s, d in zip(steps, out, strict=True):
        a = s.agent
        d["speaker_first"] = float(s.speaks and a not in spoke)
        d["speaker_first_act"] = float(s.speaks and s.acts and a not in acted)
        later = sum(t.speaks and t.agent == a for t in steps[s.index + 1 :]) if s.speaks else 0
        d["speaker_later_turns"] = min(1.0, later / 3)
        if s.speaks:
            spoke.add(a)
            if s.acts:
                acted.add(a)
    return out


# -- out-of-fold machinery -----------------------------------------------------------------
def _inner_fold(r: dict[str, Any]) -> int:
    return int(hashlib.sha256(f"inner:{r['log']}".encode()).hexdigest(), 16) % ww.FOLDS


def step_probs(
    train: Sequence[dict[str, Any]],
    test: Sequence[dict[str, Any]],
    featfn: Callable[[dict[str, Any]], Feats],
    strength: float,
) -> dict[str, list[float]]:
    """Fit the ranking on ``train``; the step probabilities of each ``test`` log."""
    xs = {r["log"]: featfn(r) for r in [*train, *test]}
    keys = sorted({k for x in xs.values() for f in x for k in f})
    w = fit_clogit(
        [([[f.get(k, 0.0) for k in keys] for f in xs[r["log"]]], r["gold_step"]) for r in train],
        strength,
    )
    out = {}
    for r in test:
        s = [sum(wk * f.get(k, 0.0) for wk, k in zip(w, keys, strict=True)) for f in xs[r["log"]]]
        top = max(s)
        e = [math.exp(v - top) for v in s]
        out[r["log"]] = [v / sum(e) for v in e]
    return out


def oof(
    recs: Sequence[dict[str, Any]],
    fold: Callable[[dict[str, Any]], int],
    predict: Callable[[Sequence[dict[str, Any]], Sequence[dict[str, Any]]], dict[str, Any]],
) -> dict[str, Any]:
    """Out-of-fold predictions: each log predicted by ``predict(train, [log's fold])``."""
    out: dict[str, Any] = {}
    for k in range(ww.FOLDS):
        test = [r for r in recs if fold(r) == k]
        if test:
            out |= predict([r for r in recs if fold(r) != k], test)
    return out


def argmax_first(p: Sequence[float], tau: float = 1.0) -> int:
    """The earliest step whose probability reaches ``tau`` times the largest."""
    top = max(p)
    return next(i for i, v in enumerate(p) if v >= tau * top - 1e-12)


def mechanisms(recs: Sequence[dict[str, Any]], strength: float) -> dict[str, dict[str, int]]:
    """Out-of-fold step of every log under each step mechanism (1-4)."""
    rank = lambda r: ranking_features(r)  # noqa: E731
    recov = lambda r: ranking_features(r, recovery=True)  # noqa: E731

    def argmax_of(featfn: Callable[[dict[str, Any]], Feats]) -> Callable[..., dict[str, int]]:
        def predict(train: Sequence[dict[str, Any]], test: Sequence[dict[str, Any]]) -> Any:
            return {
                k: argmax_first(p) for k, p in step_probs(train, test, featfn, strength).items()
            }

        return predict

    def divergence(train: Sequence[dict[str, Any]], test: Sequence[dict[str, Any]]) -> Any:
        inner = oof(train, _inner_fold, lambda a, b: step_probs(a, b, recov, strength))
        tau = max(
            TAUS,
            key=lambda t: (
                sum(argmax_first(inner[r["log"]], t) == r["gold_step"] for r in train),
                t,
            ),
        )
        return {
            k: argmax_first(p, tau) for k, p in step_probs(train, test, recov, strength).items()
        }

    def gate_x(r: dict[str, Any]) -> list[float]:
        fc, ps, kind = first_code(r), r["step"], r["kind"]
        return [
            1.0,
            float(ps == fc),
            float(kind == "model"),
            float(kind == "none"),
            float(ps < fc),
            float(ps > fc),
            min(1.0, abs(ps - fc) / 5),
            *(float(kind.startswith(k)) for k in ("ungrounded", "bad_call", "empty", "review")),
        ]

    def gate(train: Sequence[dict[str, Any]], test: Sequence[dict[str, Any]]) -> Any:
        x = [gate_x(r) for r in train]
        wp = fit_logit(x, [r["step"] == r["gold_step"] for r in train], strength)
        wf = fit_logit(x, [first_code(r) == r["gold_step"] for r in train], strength)
        out = {}
        for r in test:
            g = gate_x(r)
            sp = sum(a * b for a, b in zip(wp, g, strict=True))
            sf = sum(a * b for a, b in zip(wf, g, strict=True))
            out[r["log"]] = r["step"] if sp >= sf else first_code(r)
        return out

    fold = ww._fold
    return {
        "1 ranking": oof(recs, fold, argmax_of(rank)),
        "2 ranking + recovery": oof(recs, fold, argmax_of(recov)),
        "3 first irrecoverable divergence": oof(recs, fold, divergence),
        "4 gate (product | first code)": oof(recs, fold, gate),
        "6 ranking + answer origin": oof(recs, fold, argmax_of(origin_features)),
        "7 ranking + speaker turns": oof(recs, fold, argmax_of(speaker_features)),
    }


def category_mechanism(
    recs: Sequence[dict[str, Any]], cats: dict[str, str], evidence: dict[str, tuple[str, ...]]
) -> dict[str, str]:
    """Mechanism 5: out-of-fold trace-level category of every labelled log."""
    params = [(c, k, agg) for c in MODEL_CATEGORIES for k in evidence[c] for agg in ("at", "max")]
    nc = len(MODEL_CATEGORIES)

    def rows(r: dict[str, Any]) -> list[list[float]]:
        f, at = r["features"], r["features"][r["step"]]
        out = []
        for ci, c in enumerate(MODEL_CATEGORIES):
            row = [0.0] * (nc + len(params))
            row[ci] = 1.0
            for j, (pc, k, agg) in enumerate(params):
                if pc == c:
                    row[nc + j] = at.get(k, 0.0) if agg == "at" else max(x.get(k, 0.0) for x in f)
            out.append(row)
        return out

    def nameable(r: dict[str, Any]) -> list[int]:
        return [
            i
            for i, c in enumerate(MODEL_CATEGORIES)
            if any(x.get(k, 0.0) > 0 for x in r["features"] for k in evidence[c])
        ] or list(range(nc))

    def predict(train: Sequence[dict[str, Any]], test: Sequence[dict[str, Any]]) -> Any:
        w = fit_clogit([(rows(r), MODEL_CATEGORIES.index(cats[r["log"]])) for r in train], 1.0)
        out = {}
        for r in test:
            s = [sum(a * b for a, b in zip(row, w, strict=True)) for row in rows(r)]
            out[r["log"]] = MODEL_CATEGORIES[max(nameable(r), key=lambda i: s[i])]
        return out

    labelled = [r for r in recs if cats.get(r["log"]) in MODEL_CATEGORIES]
    return oof(labelled, ww._fold, predict)


def category_at_step(recs: Sequence[dict[str, Any]], cats: dict[str, str]) -> dict[str, Any]:
    """Mechanism 8 and the labelled-step bound: the category model read at one step.

    Returns ``{"8": {log: category}, "bound": {log: category}}``, out-of-fold.
    """
    from flywheel.attribution._model import (
        SIGNAL_PRIOR,
        _category_params,
        _category_row,
        fit_choice,
        has_evidence,
    )

    params = _category_params()
    nc = len(MODEL_CATEGORIES)
    mu = [0.0] * nc + [SIGNAL_PRIOR if k.startswith("signal:") else 0.0 for _, k in params]

    def at(where: str) -> Callable[..., dict[str, str]]:
        def predict(train: Sequence[dict[str, Any]], test: Sequence[dict[str, Any]]) -> Any:
            groups = [
                (
                    _category_row(r["features"][r[where]], params),
                    MODEL_CATEGORIES.index(cats[r["log"]]),
                )
                for r in train
            ]
            theta = fit_choice(groups, mu)
            out = {}
            for r in test:
                row = _category_row(r["features"][r[where]], params)
                s = [sum(a * b for a, b in zip(x, theta, strict=True)) for x in row]
                ok = [i for i, c in enumerate(MODEL_CATEGORIES) if has_evidence(r["features"], c)]
                out[r["log"]] = MODEL_CATEGORIES[max(ok, key=lambda i: s[i])] if ok else "unknown"
            return out

        return predict

    labelled = [r for r in recs if cats.get(r["log"]) in MODEL_CATEGORIES]
    return {
        "8": oof(labelled, ww._fold, at("step")),
        "bound": oof(labelled, ww._fold, at("gold_step")),
    }


def reliability(lab: Sequence[dict[str, Any]], gold: Sequence[str]) -> None:
    """The shipped category probability against the labels (out-of-fold), and abstention."""
    buckets: dict[float, list[int]] = {}
    for r, g in zip(lab, gold, strict=True):
        if r["scores"]:
            c, p = r["scores"][0]
            b = buckets.setdefault(min(int(float(p) * 10), 9) / 10, [0, 0])
            b[0] += 1
            b[1] += c == g
    print(
        "    reliability of the top category probability (bucket: logs/agree): "
        + ", ".join(f"{k:.1f}: {n}/{a}" for k, (n, a) in sorted(buckets.items()))
    )
    rows = []
    for t in (0.0, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7):
        ans = [
            (r, g)
            for r, g in zip(lab, gold, strict=True)
            if r["scores"] and float(r["scores"][0][1]) >= t
        ]
        rows.append(f"{t:.2f}: {len(ans)}/{sum(r['scores'][0][0] == g for r, g in ans)}")
    print("    answer when the top probability >= t (t: answered/agree): " + ", ".join(rows))


# -- report --------------------------------------------------------------------------------
def _pct(hits: Sequence[bool]) -> str:
    k, n = sum(hits), len(hits)
    ci = wilson_interval(k, n)
    return f"{k:3}/{n} {100 * k / n:6.2f} [{100 * float(ci.lo):5.1f}, {100 * float(ci.hi):5.1f}]"


def _p(a: Sequence[bool], b: Sequence[bool]) -> str:
    _, a_only, b_only, _ = paired_counts(a, b)
    return f"+{b_only}/-{a_only} p={float(mcnemar_exact(a_only, b_only)):.2f}"


def report(recs: Sequence[dict[str, Any]], steps: dict[str, dict[str, int]]) -> None:
    """Agent and step hits of every method, McNemar against the shipped model's OOF."""

    def agent_at(r: dict[str, Any], i: int) -> str:
        return speaker_of(r["history"][i])[0]

    base_a = [r["agent"] == r["gold_agent"] for r in recs]
    base_s = [r["step"] == r["gold_step"] for r in recs]
    print(
        f"    {'method':<36} {'agent hits % [Wilson 95]':<28} {'step hits % [Wilson 95]':<28}"
        " vs shipped (agent; step)"
    )
    print(f"    {'shipped model (out-of-fold)':<36} {_pct(base_a):<28} {_pct(base_s):<28}")
    k0 = Counter(ww._first_acting(r["history"], r["steps"]) for r in recs).most_common(1)[0][0]
    heur: dict[str, list[tuple[str, int]]] = {}
    for r in recs:
        for name, g in ww.heuristics(r["history"], r["steps"], k0, _NO_RNG).items():
            if not name.startswith("random"):
                heur.setdefault(name, []).append(g)
    rows = {name: [(g[0], g[1]) for g in gs] for name, gs in heur.items()}
    rows |= {m: [(agent_at(r, p[r["log"]]), p[r["log"]]) for r in recs] for m, p in steps.items()}
    for name, gs in rows.items():
        ah = [g[0] == r["gold_agent"] for g, r in zip(gs, recs, strict=True)]
        sh = [g[1] == r["gold_step"] for g, r in zip(gs, recs, strict=True)]
        print(f"    {name:<36} {_pct(ah):<28} {_pct(sh):<28} {_p(base_a, ah)}; {_p(base_s, sh)}")


def main() -> None:
    """Import both subsets, keep the tune halves, print every mechanism's OOF figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/work/shared/data/who-and-when", type=Path)
    ap.add_argument("--split", default=ww.HERE / "data" / "whowhen_split.json", type=Path)
    ap.add_argument("--categories", default=ww.HERE / "data" / "whowhen_categories.json", type=Path)
    ap.add_argument("--strength", default=1.0, type=float, help="ridge strength of mechanisms 1-4")
    args = ap.parse_args()
    # the category -> evidence map is internal to the model; a bench may read it
    from flywheel.attribution._features import CATEGORY_EVIDENCE

    split = json.loads(args.split.read_text())["subsets"]
    cats: dict[str, str] = {}
    for sub, by in json.loads(args.categories.read_text())["labels"].items():
        cats.update({f"{sub}/{stem}": c for stem, c in by.items()})
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        store = open_store(f"chdb://{d}?database=whowhen")
        store.migrate()
        # the report halves are dropped here, before any feature or fit sees them
        tune = {
            s: [r for r in ww.collect(store, s, args.data) if r["stem"] in set(split[s]["tune"])]
            for s in ww.SUBSETS
        }
        store.close()
    every = [r for s in ww.SUBSETS for r in tune[s]]
    for r in every:
        r["signals"] = all_signals(r["steps"], r["provenance"])
    ww.cross_validate(every, cats)  # the shipped model's own out-of-fold step, agent, category
    print(
        f"load {os.getloadavg()[0]:.2f}; tune halves only ({len(every)} logs), "
        f"{ww.FOLDS}-fold out-of-fold, strength {args.strength}"
    )
    for s in ww.SUBSETS:
        recs = tune[s]
        print(f"\n{s} tune half (n={len(recs)})")
        report(recs, mechanisms(recs, args.strength))
        pred = category_mechanism(recs, cats, CATEGORY_EVIDENCE)
        lab = [r for r in recs if r["log"] in pred]
        gold = [cats[r["log"]] for r in lab]
        mode = Counter(gold).most_common(1)[0][0]
        shipped = [r["forced"] == g for r, g in zip(lab, gold, strict=True)]
        mine = [pred[r["log"]] == g for r, g in zip(lab, gold, strict=True)]
        print(
            f"    category (n={len(lab)}): shipped forced choice {_pct(shipped)}; "
            f"5 trace-level {_pct(mine)} ({_p(shipped, mine)}); always '{mode}' "
            f"{_pct([g == mode for g in gold])}"
        )
        at = category_at_step(recs, cats)
        for name, key in (("8 at the blamed step", "8"), ("bound: at the LABELLED step", "bound")):
            hits = [at[key][r["log"]] == g for r, g in zip(lab, gold, strict=True)]
            dist = Counter(at[key][r["log"]] for r in lab).most_common(3)
            print(f"    category {name}: {_pct(hits)} ({_p(shipped, hits)}); top answers {dist}")
        reliability(lab, gold)
    print(f"\n{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
