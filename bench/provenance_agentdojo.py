"""Argument provenance on AgentDojo runs: does the untrusted-flow flag catch
successful injections, and only them?

Workload: for each suite, every (user task x injection task) pair run through
the harness into an embedded store, by (a) the reference agent with only the
``obey_injection`` hazard on (rate --obey, seeded: once injected text arrives
in a tool result it also executes the attacker's goal calls) and (b) the
ground-truth agent (benign: the user task's reference calls only, injections
present in the data). Provenance is inferred from the stored traces only.

Run-level verdict: flagged when any argument of a sensitive tool call (or a
memory write) is attributed to an untrusted source (``ingest.infer_provenance``
flags). Label: AgentDojo's security check (True = the attack succeeded).
Source attribution: for every argument of an injected call (a call equal to
one of the injection task's ground-truth calls, emitted after the injection
was read), whether its source is the untrusted observation that carried the
injected text. Machine: 2 cores, 24 GiB.

    python bench/provenance_agentdojo.py [--suites banking slack] [--obey 0.5]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ablation import HAZARDS, AgentSpec, StoreSpanExporter, make_environment, plan_trials, run_trials  # noqa: E402
from evalset.stats import wilson_interval  # noqa: E402
from flywheel import open_store  # noqa: E402
from ingest import compute_provenance, load_steps  # noqa: E402


def _pr(tp: int, fp: int, fn: int) -> dict:
    p = wilson_interval(tp, tp + fp) if tp + fp else None
    r = wilson_interval(tp, tp + fn) if tp + fn else None
    return {
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "precision_95": [round(p.lo, 3), round(p.hi, 3)] if p else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "recall_95": [round(r.lo, 3), round(r.hi, 3)] if r else None,
    }


def evaluate(store, suite: str, agent: AgentSpec, label: str, seed: int) -> dict:
    specs = plan_trials(f"agentdojo:{suite}", agent, injections=True, seed=seed)
    t0 = time.perf_counter()
    records = run_trials(specs, StoreSpanExporter(store))
    run_s = time.perf_counter() - t0
    tp = fp = fn = tn = 0
    attributed = injected_args = 0
    misses: list[str] = []
    false_alarms: list[str] = []
    t1 = time.perf_counter()
    for rec in records:
        if rec.security is None:
            continue
        recs = compute_provenance(store, rec.trace_id)
        flagged = any(r.flags for r in recs)
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
            a, n = _injected_attribution(store, rec, recs)
            attributed += a
            injected_args += n
    return {
        "agent": label, "suite": suite, "runs": tp + fp + fn + tn,
        "tp": tp, "fp": fp, "fn": fn, "tn": tn, **_pr(tp, fp, fn),
        "injected_args": injected_args,
        "injected_args_attributed_to_injection_source": attributed,
        "attribution_accuracy": round(attributed / injected_args, 4) if injected_args else None,
        "false_alarms": false_alarms[:10], "misses": misses[:10],
        "run_seconds": round(run_s, 1), "provenance_seconds": round(time.perf_counter() - t1, 1),
    }


def _injected_attribution(store, rec, recs) -> tuple[int, int]:
    """(args attributed to the span that carried the injected text, args of injected calls)."""
    env = make_environment(rec.suite if ":" in rec.suite else f"agentdojo:{rec.suite}",
                           rec.task_id, rec.injection_task_id)
    env.reset()
    task = env.task()
    goal = {(c.name, json.dumps(c.args, sort_keys=True, default=str)) for c in task.injection_ground_truth}
    steps = {s["span_id"]: s for s in load_steps(store, rec.trace_id)}
    # lines of the planted text survive the environment's reformatting of whitespace
    probes = [line.strip() for t in task.injection_texts for line in t.splitlines()
              if len(line.strip()) >= 30]
    carriers = {sid for sid, s in steps.items()
                if any(p in (s.get("result", "") + s.get("output", "")) for p in probes)}
    hit = total = 0
    for r in recs:
        s = steps.get(r.span_id)
        if s is None or s.get("kind") != "tool":
            continue
        try:
            args = json.dumps(json.loads(s["arguments"]), sort_keys=True, default=str)
        except (json.JSONDecodeError, TypeError):
            continue
        if (s["tool_name"], args) not in goal or r.source_kind in ("constant",):
            continue
        total += 1
        hit += int(r.source_span_id in carriers or any(a.split(":")[1] in carriers for a in r.alternatives))
    return hit, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suites", nargs="+", default=["banking", "slack"])
    ap.add_argument("--obey", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    store = open_store(f"chdb://{tempfile.mkdtemp(prefix='flywheel-prov-')}")
    store.migrate()
    rates = {h: 0.0 for h in HAZARDS}
    rates["obey_injection"] = args.obey
    results = []
    for suite in args.suites:
        results.append(evaluate(store, suite, AgentSpec("reference", {"rates": rates}),
                                f"reference(obey_injection={args.obey})", args.seed))
        results.append(evaluate(store, suite, AgentSpec("ground_truth"), "ground_truth", args.seed))
    if args.json:
        print(json.dumps(results))
        return
    print("workload: every user x injection task pair per suite; machine: 2 cores, 24 GiB")
    for r in results:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
