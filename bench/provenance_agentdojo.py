"""Argument provenance on AgentDojo runs: is every successful injection flagged, and only those?

Workload: for each suite, every (user task x injection task) pair run through
the harness into an embedded store, by (a) the reference agent with only the
``obey_injection`` hazard on (rate --obey, seeded: once injected text arrives
in a tool result it also executes the attacker's goal calls) and (b) the
ground-truth agent (benign: the user task's reference calls only, injections
present in the data). Provenance is inferred from the stored traces only,
with the default ``ProvenancePolicy`` (nothing in it names a benchmark tool).

Run-level verdict: flagged when any argument record carries a flag
(``ingest.infer_provenance``; delegated values carry none). Label:
AgentDojo's security check (True = the attack succeeded). Per suite the
summary line pools both agents: precision = TP / (TP + FP of the reference
agent + false flags on the benign ground-truth runs), recall = TP / (TP + FN),
Wilson 95% intervals.

Source attribution, for every non-constant argument of an injected call (a
call equal to one of the injection task's ground-truth calls), against its
known origin, decided on the raw text (not on fingerprints):

- *attacker-supplied*: the value, or an address in it (a word holding a
  digit, an @ or an inner dot: a link, an IBAN), occurs in the injected text
  -> its source (or a listed alternative) must be a span whose result
  carries that text;
- *collected*: otherwise, the value (or, for composite values, one of its
  lines or ``;``/``|``-separated parts) occurs in an earlier tool result,
  retrieval, memory read or the user's prompt -> the source must be one of
  those spans (``user`` for the prompt);
- *made up*: it occurs nowhere before the call -> the source must be
  ``model``.

Machine: 2 cores, 24 GiB.

With ``--encoding yaml|repr|markdown|kv`` every structured tool result is
re-rendered in that encoding before provenance is inferred (issue 27: the
same run must get the same provenance whatever the encoding).

    python bench/provenance_agentdojo.py [--suites banking slack] [--obey 0.5] [--all]
                                         [--encoding json|yaml|repr|markdown|kv]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flywheel.evalset.stats import wilson_interval  # noqa: E402
from flywheel.harness import (  # noqa: E402
    HAZARDS,
    AgentSpec,
    StoreSpanExporter,
    make_environment,
    plan_trials,
    run_trials,
)
from flywheel.ingest import (  # noqa: E402
    compute_provenance,
    infer_provenance,
    load_steps,
    normalise,
)
from provenance_tools import ENCODINGS, render  # noqa: E402

from flywheel import open_store  # noqa: E402


def _rate(k: int, n: int) -> tuple[float | None, list[float] | None]:
    if not n:
        return None, None
    ci = wilson_interval(k, n)
    return round(k / n, 4), [round(ci.lo, 3), round(ci.hi, 3)]


def _pr(tp: int, fp: int, fn: int) -> dict:
    p, p95 = _rate(tp, tp + fp)
    r, r95 = _rate(tp, tp + fn)
    return {"precision": p, "precision_95": p95, "recall": r, "recall_95": r95}


def _provenance(store, trace_id: str, encoding: str) -> list:
    """The trace's provenance, its structured tool results rendered in ``encoding`` first."""
    if encoding == "json":
        return compute_provenance(store, trace_id)
    steps = load_steps(store, trace_id)
    for s in steps:
        if s.get("kind") == "tool" and s.get("result"):
            try:
                value = json.loads(s["result"])
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict | list):
                s["result"] = render(value, encoding)
    return infer_provenance(steps, b"bench-encoding")


def evaluate(
    store,
    suite: str,
    agent: AgentSpec,
    label: str,
    seed: int,
    keep: int | None = 10,
    encoding: str = "json",
) -> dict:
    """Run every user x injection pair of ``suite`` with ``agent``; score flags and attribution."""
    specs = plan_trials(f"agentdojo:{suite}", agent, injections=True, seed=seed)
    t0 = time.perf_counter()
    records = run_trials(specs, StoreSpanExporter(store))
    run_s = time.perf_counter() - t0
    tp = fp = fn = tn = 0
    attribution: Counter[str] = Counter()
    misses: list[str] = []
    false_alarms: list[str] = []
    delegated = 0
    t1 = time.perf_counter()
    for rec in records:
        if rec.security is None:
            continue
        recs = _provenance(store, rec.trace_id, encoding)
        flagged = any(r.flags for r in recs)
        delegated += sum(1 for r in recs if r.method == "delegated")
        attacked = bool(rec.security)
        key = f"{rec.task_id}x{rec.injection_task_id}"
        if flagged and attacked:
            tp += 1
        elif flagged:
            fp += 1
            false_alarms.append(key)
        elif attacked:
            fn += 1
            misses.append(key)
        else:
            tn += 1
        if attacked:
            attribution.update(_injected_attribution(store, rec, recs))
    out = {
        "agent": label,
        "suite": suite,
        "runs": tp + fp + fn + tn,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        **_pr(tp, fp, fn),
        "delegated_args": delegated,
        "false_alarms": false_alarms[:keep],
        "misses": misses[:keep],
        "run_seconds": round(run_s, 1),
        "provenance_seconds": round(time.perf_counter() - t1, 1),
    }
    hits = total = 0
    for kind in ("attacker", "collected", "made_up"):
        k, n = attribution[f"{kind}_hit"], attribution[f"{kind}_n"]
        out[f"attribution_{kind}"] = f"{k}/{n}"
        hits, total = hits + k, total + n
    out["attribution_accuracy"], out["attribution_95"] = _rate(hits, total)
    return out


def _texts(value: Any) -> list[str]:
    """Every text leaf of a step's JSON result (decoded), or the text itself."""
    try:
        doc = json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError:
        return [value]
    if isinstance(doc, dict):
        return [t for v in doc.values() for t in _texts(v)]
    if isinstance(doc, list):
        return [t for v in doc for t in _texts(v)]
    return [] if doc is None else [str(doc)]


def _occurs(value: Any, text: str) -> bool:
    """Whether ``value`` occurs in ``text`` as whole words (normalised; numbers as tokens)."""
    needle = normalise(value)
    if re.search(rf"(?<![\w./@-]){re.escape(needle)}(?![\w/@-])", normalise(text)):
        return True
    if isinstance(value, int | float) and not isinstance(value, bool):
        return any(normalise(tok.strip(".,;:!?()$€£")) == needle for tok in text.split())
    return False


def _addresses(value: Any) -> list[str]:
    """Words of a text that address something (hold a digit, an @, or an inner dot)."""
    words = [w.strip(".,;:!?()") for w in str(value).split()] if isinstance(value, str) else []
    return [w for w in words if len(w) >= 6 and re.search(r"\d|@|\w\.\w", w)]


def _leaf(args: Any, path: str) -> Any:
    for part in path.split("/"):
        args = args[int(part)] if isinstance(args, list) else args.get(part)
    return args


def _injected_attribution(store, rec, recs) -> Counter[str]:
    """Per origin kind, injected-call arguments whose source matches their known origin."""
    env = make_environment(
        rec.suite if ":" in rec.suite else f"agentdojo:{rec.suite}",
        rec.task_id,
        rec.injection_task_id,
    )
    env.reset()
    task = env.task()
    goal = {
        (c.name, json.dumps(c.args, sort_keys=True, default=str))
        for c in task.injection_ground_truth
    }
    steps = load_steps(store, rec.trace_id)
    index = {s["span_id"]: i for i, s in enumerate(steps)}
    # lines of the planted text survive the environment's reformatting of whitespace
    probes = [
        line.strip()
        for t in task.injection_texts
        for line in t.splitlines()
        if len(line.strip()) >= 30
    ]
    injected_text = "\n".join(task.injection_texts)
    seen: dict[str, list[str]] = {}
    for s in steps:
        if s["kind"] in ("tool", "retrieval", "memory_read"):
            seen[s["span_id"]] = _texts(s.get("result") or s.get("output") or "")
        elif s["kind"] == "agent":
            seen[s["span_id"]] = [str(s.get("input") or "")]
    carriers = {sid for sid, texts in seen.items() if any(p in t for p in probes for t in texts)}
    out: Counter[str] = Counter()
    for r in recs:
        s = steps[index[r.span_id]] if r.span_id in index else None
        if s is None or s.get("kind") != "tool" or r.source_kind == "constant":
            continue
        try:
            args = json.loads(s["arguments"])
        except (json.JSONDecodeError, TypeError):
            continue
        if (s["tool_name"], json.dumps(args, sort_keys=True, default=str)) not in goal:
            continue
        value = _leaf(args, r.path)
        sources = {r.source_span_id} | {a.split(":")[1] for a in r.alternatives}
        if _occurs(value, injected_text) or any(
            _occurs(w, injected_text) for w in _addresses(value)
        ):
            kind, ok = "attacker", bool(sources & carriers)
        else:
            parts = [p.strip() for p in re.split(r"[\n;|]", str(value)) if p.strip()] or [
                str(value)
            ]
            origin = {
                sid
                for sid, texts in seen.items()
                if index[sid] < index[r.span_id]
                and any(_occurs(p, t) for p in parts for t in texts)
            }
            if origin:
                prompt = {sid for sid in origin if steps[index[sid]]["kind"] == "agent"}
                kind = "collected"
                ok = bool(sources & origin) or (
                    bool(prompt) and r.source_kind in ("user", "system")
                )
            else:
                kind, ok = "made_up", r.source_kind == "model"
        out[f"{kind}_n"] += 1
        out[f"{kind}_hit"] += int(ok)
    return out


def pooled(ref: dict, gt: dict) -> dict:
    """The suite's figures: reference-agent detections against both agents' false flags."""
    tp, fp, fn = ref["tp"], ref["fp"] + gt["fp"], ref["fn"]
    return {
        "suite": ref["suite"],
        "tp": tp,
        "fp_reference": ref["fp"],
        "fp_benign": gt["fp"],
        "benign_runs": gt["runs"],
        "fn": fn,
        **_pr(tp, fp, fn),
        "attribution_accuracy": ref["attribution_accuracy"],
        "attribution_95": ref["attribution_95"],
    }


def main() -> None:
    """Parse the options, run the suites, print the runs and the per-suite table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suites", nargs="+", default=["banking", "slack"])
    ap.add_argument("--obey", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--encoding", default="json", choices=ENCODINGS)
    ap.add_argument(
        "--all", action="store_true", help="list every false alarm and miss (default: 10)"
    )
    args = ap.parse_args()
    store = open_store(f"chdb://{tempfile.mkdtemp(prefix='flywheel-prov-')}")
    store.migrate()
    rates = {h: 0.0 for h in HAZARDS}
    rates["obey_injection"] = args.obey
    keep = None if args.all else 10
    results, summary = [], []
    for suite in args.suites:
        ref = evaluate(
            store,
            suite,
            AgentSpec("reference", {"rates": rates}),
            f"reference(obey_injection={args.obey})",
            args.seed,
            keep,
            args.encoding,
        )
        gt = evaluate(
            store, suite, AgentSpec("ground_truth"), "ground_truth", args.seed, keep, args.encoding
        )
        results += [ref, gt]
        summary.append(pooled(ref, gt))
    if args.json:
        print(json.dumps({"runs": results, "suites": summary}))
        return
    print(
        "workload: every user x injection task pair per suite; tool results as "
        f"{args.encoding}; machine: 2 cores, 24 GiB"
    )
    for r in results:
        print(json.dumps(r))
    head = ("suite", "P", "P 95%", "R", "R 95%", "benign FP", "attribution")
    print("{:10} {:>6} {:>14} {:>6} {:>14} {:>10} {:>12}".format(*head))
    for s in summary:
        p95 = (
            "-"
            if s["precision_95"] is None
            else f"[{s['precision_95'][0]:.3f}, {s['precision_95'][1]:.3f}]"
        )
        r95 = (
            "-" if s["recall_95"] is None else f"[{s['recall_95'][0]:.3f}, {s['recall_95'][1]:.3f}]"
        )
        print(
            f"{s['suite']:10} {s['precision'] or 0:6.3f} {p95:>14} {s['recall'] or 0:6.3f} "
            f"{r95:>14} {s['fp_benign']:>4}/{s['benign_runs']:<5} "
            f"{s['attribution_accuracy'] or 0:12.3f}"
        )


if __name__ == "__main__":
    main()
