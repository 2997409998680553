"""Omissions, wrong values, extras and call attribution on a frozen corpus (clinic or estate).

The corpus (``tests/side_effects/corpus/clinic.json.gz``, built by
``build_clinic.py`` beside it and committed before the features it measures)
is a stateful domain of its own: a veterinary clinic with owners keyed by
handle, appointments with nested slot lists and set-like vet lists,
invoices, an outbox with UUIDs and clocks, and tools named in several case
styles. Labels come from the simulator's knowledge of what each call
touched, never from this product's diff.

Per instance and format (the JSON document, and the same state as SQLite
tables), two scopes:

* ``expected``: from the expected snapshot alone (another gold run: other
  clock, other UUIDs, other set orders), so volatile fields must be
  recognised from one run;
* ``learned``: from three correct runs; the fourth correct run is the benign
  test run.

Measured: benign runs with a false finding / a false critical event / a
false scope violation; omission recall (a labelled omitted record reported as
omitted or wrong); wrong-value recall (a labelled (record, field) reported as
a wrong value of that field); extras recall (a labelled extra record reported
as an extra, the recalled message's transient copy included when step
snapshots are given); findings that match no label; whether every extra
blocks in the gate; call attribution from calls and states alone against
the calls that really touched each record.

A second corpus in the same format, ``estate`` (property management:
tenants keyed by e-mail, epoch-second clocks, ULID and random-slug ids,
tools in several styles and a Spanish read; ``build_estate.py``), was
written and frozen later, after the clinic corpus had been measured on
while the analysis was tuned: ``--corpus estate`` gives figures on data the
code was not shaped on.

Run: python bench/side_effects_clinic.py [--corpus clinic|estate]
Prints Wilson 95 % intervals; exits 1 when a target of issues 25/26 is missed
(a false critical event or scope violation on a benign run, omission recall
below 0.95, extras recall below 1.0, an extra not blocking, call attribution
below 0.97).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import platform
import sqlite3
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from flywheel.evalset.stats import wilson_interval  # noqa: E402
from flywheel.side_effects import (  # noqa: E402
    CRITICAL_CATEGORIES,
    ReferenceRun,
    Snapshot,
    ToolCall,
    analyze,
    diff,
    learn_scope,
    reconcile,
    scope_from_snapshots,
    snapshot,
)

CORPUS = Path(__file__).parent.parent / "tests" / "side_effects" / "corpus"


def _builder(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"build_{name}", CORPUS / f"build_{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


B: Any = None  # the corpus's builder module (SQL schema and rows), set by main()


class Formats:
    """Snapshots of a state in both formats (SQLite files in a temporary folder)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.n = 0

    def json(self, state: dict[str, Any]) -> Snapshot:
        """The state as a JSON document."""
        return snapshot("json", state)

    def sql(self, state: dict[str, Any]) -> Snapshot:
        """The state as SQLite tables (the builder's rows)."""
        self.n += 1
        path = self.tmp / f"s{self.n}.db"
        con = sqlite3.connect(path)
        con.execute("PRAGMA journal_mode=OFF")  # a scratch file: no journal, no fsync
        con.execute("PRAGMA synchronous=OFF")
        con.executescript(B.SQL_SCHEMA)
        for table, rows in B.to_rows(state).items():
            for row in rows.values():
                cols = list(row)
                marks = ", ".join("?" * len(cols))
                names = ", ".join(f'"{c}"' for c in cols)
                con.execute(
                    f"INSERT INTO {table} ({names}) VALUES ({marks})",
                    [row[c] for c in cols],
                )
        con.commit()
        con.close()
        snap = snapshot("sqlite", path)
        path.unlink()
        return snap


def _rec(label: list[str], fmt: str) -> tuple[str, tuple[str, ...]]:
    coll, key = label
    if fmt == "json":
        return coll, (() if key == "" else (key,))
    return coll, tuple(key.split("/"))


def _calls(run: dict[str, Any]) -> list[ToolCall]:
    return [
        ToolCall(
            name=c["name"], args=c["args"], status=c["status"], error=c["error"], span_id=f"c{i}"
        )
        for i, c in enumerate(run["calls"])
    ]


def pct(k: int, n: int) -> str:
    """Count, share and Wilson 95 % interval."""
    iv = wilson_interval(k, n)
    return f"{k}/{n} = {iv.point:.3f} [{iv.lo:.3f}, {iv.hi:.3f}]"


def evaluate(doc: dict[str, Any], fmt: str, mode: str, fm: Formats) -> Counter[str]:
    """Every measurement for one format and scope mode."""
    c: Counter[str] = Counter()
    load = fm.json if fmt == "json" else fm.sql
    notes: list[str] = []
    for inst in doc["instances"]:
        s0 = load(inst["s0"])
        correct = [r for r in inst["runs"] if r["variant"] == "correct"]
        if mode == "expected":
            scope = scope_from_snapshots(s0, load(inst["expected"]))
            tests = inst["runs"]
        else:
            refs = [ReferenceRun(diff(s0, load(r["sT"])), (), s0) for r in correct[:3]]
            scope = learn_scope(refs)
            tests = [
                r
                for r in inst["runs"]
                if r is not correct[0] and r is not correct[1] and r is not correct[2]
            ]
        for run in tests:
            lab = run["labels"][fmt]
            calls = _calls(run)
            steps = [load(s) for s in run["steps"]] if "steps" in run else None
            r = analyze(s0, load(run["sT"]), scope=scope, calls=calls, step_snapshots=steps)
            fs = r.findings
            crit = sum(r.gate.counts[k] for k in CRITICAL_CATEGORIES)
            if run["variant"] == "correct":
                c["benign"] += 1
                c["benign_any"] += bool(fs)
                c["benign_critical"] += crit > 0
                c["benign_violation"] += r.gate.counts["scope_violation"] > 0
                if fs:
                    notes.append(f"{inst['instance']} correct: {fs[0].kind} {fs[0].reason[:100]}")
            matched: set[int] = set()
            for o in lab["omitted"]:
                rt, key = _rec(o, fmt)
                hit = [
                    i
                    for i, f in enumerate(fs)
                    if f.kind in ("omission", "wrong_value")
                    and f.resource_type == rt
                    and f.key in (key, None)
                ]
                c["omitted"] += 1
                c["omitted_found"] += bool(hit)
                matched.update(hit)
                if not hit:
                    notes.append(f"{inst['instance']} {run['variant']}: omission missed {rt}{key}")
            for w, field in lab["wrong"]:
                rt, key = _rec(w, fmt)
                hit = [
                    i
                    for i, f in enumerate(fs)
                    if f.kind == "wrong_value"
                    and f.resource_type == rt
                    and f.key == key
                    and any(p.split(".")[0].split("[")[0] == field for p in f.fields)
                ]
                c["wrong"] += 1
                c["wrong_found"] += bool(hit)
                matched.update(hit)
                # a wrong creation reported as omission + extra still names the record
                loose = [i for i, f in enumerate(fs) if f.resource_type == rt]
                matched.update(loose)
                if not hit:
                    notes.append(
                        f"{inst['instance']} {run['variant']}: wrong value missed "
                        f"{rt}{key}.{field}: "
                        + "; ".join(f"{f.kind} {f.ref} {f.fields}" for f in fs)[:160]
                    )
            for x in lab["extra"]:
                rt, key = _rec(x, fmt)
                transient_only = not any(d.rid == (rt, key) for d in r.deltas)
                if transient_only and steps is None:
                    continue
                hit = [
                    i
                    for i, f in enumerate(fs)
                    if f.kind == "extra" and f.resource_type == rt and f.key == key
                ]
                c["extra"] += 1
                c["extra_found"] += bool(hit)
                matched.update(hit)
                if not hit:
                    notes.append(f"{inst['instance']} {run['variant']}: extra missed {rt}{key}")
            if run["labels"]["hidden_send"]:
                c["hidden"] += 1
                c["hidden_critical"] += any(
                    d.transient
                    and "external_communication" in d.category_names
                    and d.status == "unauthorized"
                    for d in r.classification.decisions
                )
            if run["variant"] != "correct":
                c["fault_findings"] += len(fs)
                c["fault_unmatched"] += len(fs) - len(matched)
            for f in fs:
                if f.kind == "extra":
                    c["extras_reported"] += 1
                    c["extras_blocking"] += r.gate.blocking
            # attribution from calls and states alone
            if steps is None:
                net = r.deltas
                rec = reconcile(calls, net, states=(s0, load(run["sT"])))
                got = {a.delta_ref: a.call_indexes[-1] for a in rec.attributions}
                key_name = f"touched_{fmt}"
                for d in net:
                    want = {
                        i
                        for i, call in enumerate(run["calls"])
                        if call["status"] == "ok"
                        and any(_rec(t, fmt) == d.rid for t in call[key_name])
                    }
                    if not want:
                        continue
                    c["attr"] += 1
                    ok = got.get(d.ref) in want
                    c["attr_ok"] += ok
                    if not ok:
                        notes.append(
                            f"{inst['instance']} {run['variant']}: attribution {d.ref} "
                            f"-> {got.get(d.ref)}, truth {sorted(want)} "
                            f"({[run['calls'][i]['name'] for i in sorted(want)]})"
                        )
    c["notes"] = 0
    evaluate.notes = notes  # type: ignore[attr-defined]
    return c


def misses(c: Counter[str]) -> list[str]:
    """The targets of issues 25 and 26 this measurement misses (point estimates)."""
    out = []
    if c["benign_critical"] or c["benign_violation"]:
        out.append("a benign run has a false critical event or scope violation (target 0)")
    if c["omitted"] and c["omitted_found"] / c["omitted"] < 0.95:
        out.append("omission recall below 0.95")
    if c["extra_found"] < c["extra"]:
        out.append("extras recall below 1.0")
    if c["extras_blocking"] < c["extras_reported"]:
        out.append("an extra does not block in the gate")
    if c["attr"] and c["attr_ok"] / c["attr"] < 0.97:
        out.append("call attribution below 0.97")
    return out


def main() -> None:
    """Print every figure for both formats and both scope modes."""
    global B
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", choices=["clinic", "estate"], default="clinic")
    args = ap.parse_args()
    B = _builder(args.corpus)
    with gzip.open(CORPUS / f"{args.corpus}.json.gz", "rt") as fh:
        doc = json.load(fh)
    print(
        f"machine: {platform.machine()} {platform.system()} python "
        f"{platform.python_version()}, {os.cpu_count()} cores shared "
        f"(load avg {os.getloadavg()[0]:.1f})"
    )
    n = sum(len(i["runs"]) for i in doc["instances"])
    print(f"corpus: {doc['format']}, {len(doc['instances'])} instances, {n} runs")
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        fm = Formats(Path(tmp))
        for fmt in ("json", "sql"):
            for mode in ("expected", "learned"):
                c = evaluate(doc, fmt, mode, fm)
                missed += [f"{fmt}/{mode}: {m}" for m in misses(c)]
                print(f"\n{fmt} / scope {mode}:")
                print(f"  benign runs with any false finding   {pct(c['benign_any'], c['benign'])}")
                print(
                    f"  benign runs, false critical event    "
                    f"{pct(c['benign_critical'], c['benign'])}"
                )
                print(
                    f"  benign runs, false scope violation   "
                    f"{pct(c['benign_violation'], c['benign'])}"
                )
                print(
                    f"  omission recall (records)            "
                    f"{pct(c['omitted_found'], c['omitted'])}"
                )
                print(f"  wrong-value recall (record, field)   {pct(c['wrong_found'], c['wrong'])}")
                print(f"  extras recall (records)              {pct(c['extra_found'], c['extra'])}")
                print(
                    "  hidden sends critical                "
                    + pct(c["hidden_critical"], c["hidden"])
                )
                print(
                    f"  fault-run findings matching no label "
                    f"{pct(c['fault_unmatched'], c['fault_findings'])}"
                )
                print(
                    f"  extras blocking in the gate          "
                    f"{pct(c['extras_blocking'], c['extras_reported'])}"
                )
                print(f"  call attribution (net deltas)        {pct(c['attr_ok'], c['attr'])}")
                notes = evaluate.notes  # type: ignore[attr-defined]
                for line in notes[:12]:
                    print(f"    {line}")
                if len(notes) > 12:
                    print(f"    ... {len(notes) - 12} more")
    for m in missed:
        print(f"MISSED {m}")
    if missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
