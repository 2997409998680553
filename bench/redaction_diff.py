"""Differential check: redaction outputs before and after a speed change are byte-identical.

Usage:
    python bench/redaction_diff.py --save /tmp/redaction-digests.json    # baseline
    python bench/redaction_diff.py --check /tmp/redaction-digests.json   # after a change

Inputs (used only as input; this script never prints a text, a label or a miss):
- the corpora of bench/redaction_corpus named in ``CORPORA``, ingested into a
  fresh chDB store and read back as promotion reads it (``load_traces`` and
  the root step with the slice), so the steps are those ``redact_candidates``
  redacts;
- the redaction workload of bench/promote_throughput.py (its timed spans and
  its warm-up spans).

Outputs digested (SHA-256, one per trace and kind): the redacted steps as
stored (``steps_json``) and the report (``Redactor.redact_trace``, one fresh
``Redactor`` and detector per input set, so the cache state is the same on
both sides); the release scanner's findings over the raw steps
(``scan_document``); ``Redactor.redact_document`` over the raw steps as one
document; and the detections of every raw field text (``Detector.detect``).
``--check`` names the corpus, trace index and kind of every difference and
exits 1 on any; it prints no content.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CORPUS = Path(__file__).resolve().parent / "redaction_corpus"
#: Corpora used as input: those that have had their one independent run. A newer blind
#: corpus stays out until its first run is the independent figure.
CORPORA = ("dev", "frozen", "holdout2", "holdout3", "holdout4", "holdout5")


def _digest(obj: Any) -> str:
    data = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:20]


def corpus_traces(name: str, workdir: Path) -> list[list[Any]]:
    """The corpus's traces as ``redact_candidates`` builds them (steps + root step).

    Ingested under a project named after the corpus, in the store at ``workdir``.
    """
    from flywheel.ingest import import_otlp_json
    from flywheel.promote._candidates import load_traces, root_step

    from flywheel import open_store

    store = open_store(f"chdb://{workdir}?database=redaction_diff")  # one per process
    store.migrate()
    import_otlp_json(store, CORPUS / f"{name}.otlp.jsonl", project=name)
    ids = sorted(
        r["t"]
        for r in store.query(
            f"SELECT DISTINCT TraceId AS t FROM {store.otel_table} WHERE ProjectId = {{p:String}}",
            {"p": name},
        )
    )
    material = load_traces(store, ids, project=name)
    return [
        [*(material[t].steps if t in material else []), root_step(material.get(t), f"slice-{i}")]
        for i, t in enumerate(ids)
    ]


def workload_traces() -> dict[str, list[list[Any]]]:
    """bench/promote_throughput.py's redaction workload (timed and warm-up spans)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        import promote_throughput as pt  # noqa: PLC0415 - bench/ script, not the package
    finally:
        sys.path.pop(0)
    return {
        "throughput": pt.redact_workload(2_000),
        "throughput-warm": pt.redact_workload(64 * 4, seed=99)[:64],
    }


def workload_traces_names() -> tuple[str, ...]:
    """The input sets ``workload_traces`` returns."""
    return ("throughput", "throughput-warm")


def digests(sets: dict[str, list[list[Any]]]) -> dict[str, list[dict[str, str]]]:
    """Per input set, per trace: digests of each output kind."""
    from flywheel.promote._candidates import steps_json
    from flywheel.promote._redact import Redactor
    from flywheel.promote._redact_types import RedactionPolicy

    from flywheel.pii import ALL_ENTITIES, Detector, scan_document

    out: dict[str, list[dict[str, str]]] = {}
    for name, traces in sets.items():
        det = Detector(ALL_ENTITIES)
        red = Redactor(RedactionPolicy(), detector=det)
        rows = []
        for steps in traces:
            raw = [{k: v for k, v in asdict(s).items() if v not in (None, {}, "")} for s in steps]
            r = red.redact_trace(steps)
            doc, doc_report = red.redact_document(raw)
            rows.append(
                {
                    "steps": _digest(steps_json(r.steps)),
                    "report": _digest(r.report.to_dict()),
                    "scan": _digest([f.to_dict() for f in scan_document(raw)]),
                    "document": _digest([doc, doc_report.to_dict()]),
                    "detect": _digest(
                        [
                            [(d.start, d.end, d.label, d.rule, d.score) for d in det.detect(t)]
                            for s in steps
                            for _, t in s.field_items()
                        ]
                    ),
                }
            )
        out[name] = rows
    return out


def main() -> int:
    """Compute the digests; save them or compare with a saved set."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", type=Path, help="write the digests here")
    group.add_argument("--check", type=Path, help="compare with digests saved here")
    ap.add_argument("--corpus", action="append", help="only these corpora (default: all)")
    args = ap.parse_args()
    names = args.corpus or list(CORPORA)
    t0 = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="redaction-diff-"))
    try:
        sets = {n: corpus_traces(n, tmp) for n in names}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not args.corpus:
        # Faker's dates end at "now": the workload differs run to run, so the baseline
        # keeps its own copy of the synthetic workload and --check redacts that copy.
        from flywheel.promote._redact_types import TraceStep

        kept = json.loads(args.check.read_text()).get("_workload") if args.check else None
        work = (
            {k: [[TraceStep(**s) for s in t] for t in v] for k, v in kept.items()}
            if kept
            else workload_traces()
        )
        sets.update(work)
    t1 = time.perf_counter()
    got = digests(sets)
    t2 = time.perf_counter()
    n_traces = sum(len(v) for v in got.values())
    print(
        f"{n_traces} traces in {len(got)} input sets; load {t1 - t0:.1f} s, redact+scan "
        f"{t2 - t1:.1f} s (load average {os.getloadavg()[0]:.2f})"
    )
    if args.save:
        saved: dict[str, Any] = dict(got)
        if not args.corpus:
            saved["_workload"] = {
                k: [[asdict(s) for s in t] for t in sets[k]] for k in workload_traces_names()
            }
        args.save.write_text(json.dumps(saved, indent=0, sort_keys=True))
        print(f"saved {args.save}")
        return 0
    want = json.loads(args.check.read_text())
    want.pop("_workload", None)
    bad = 0
    for name, rows in got.items():
        if name not in want:
            print(f"{name}: not in the baseline")
            bad += 1
            continue
        if len(rows) != len(want[name]):
            print(f"{name}: {len(rows)} traces, baseline {len(want[name])}")
            bad += 1
            continue
        for i, (a, b) in enumerate(zip(rows, want[name], strict=True)):
            kinds = [k for k in b if a.get(k) != b[k]]
            if kinds:
                bad += 1
                if bad <= 30:
                    print(f"DIFF {name} trace {i}: {', '.join(kinds)}")
    print("identical" if not bad else f"{bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
