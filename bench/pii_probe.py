"""Development probe: self-written PII forms and look-alikes through ``Redactor.redact_document``.

Usage:
    python bench/pii_probe.py                       # every probe file, counts per kind
    python bench/pii_probe.py --misses              # and each miss / lost look-alike
    python bench/pii_probe.py --probe bench/pii_probe/round11_address_dob.json

A probe file (``bench/pii_probe/*.json``) lists items ``{"id", "kind", "lang", "form",
"doc", "parts"}``: ``doc`` is a string or a JSON document, redacted as one document (key
rules included). A planted item (any kind but ``DECOY``) leaks when one of its ``parts``
occurs in a string of the output (also after percent-decoding); a ``DECOY`` survives when
every part still occurs. The probes were written by the helpers of a round as development
evidence (see each file's ``about``); they are no independent measure.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PROBES = Path(__file__).resolve().parent / "pii_probe"


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node, urllib.parse.unquote_plus(node)]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [str(node)]


def run(path: Path, misses: bool) -> Counter[str]:
    """Counts per kind (``KIND n``, ``KIND ok``) for one probe file; print misses if asked."""
    from promote import Redactor

    items = json.loads(path.read_text(encoding="utf-8"))["items"]
    counts: Counter[str] = Counter()
    redactor = Redactor()
    for it in items:
        out, _ = redactor.redact_document(it["doc"])
        texts = _strings(out)
        present = [p for p in it["parts"] if any(p in t for t in texts)]
        kind = it["kind"]
        counts[kind + " n"] += 1
        ok = len(present) == len(it["parts"]) if kind == "DECOY" else not present
        counts[kind + " ok"] += ok
        if misses and not ok:
            shown = json.dumps(out, ensure_ascii=False) if not isinstance(out, str) else out
            print(f"  {'LOST' if kind == 'DECOY' else 'MISS'} {it['id']} {kind} {it['lang']} "
                  f"{it['form']}: {shown[:300]!r}")
    return counts


def main() -> int:
    """Run every probe file (or those given) and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--probe", type=Path, action="append")
    ap.add_argument("--misses", action="store_true")
    args = ap.parse_args()
    for path in args.probe or sorted(PROBES.glob("*.json")):
        t0 = time.process_time()
        c = run(path, args.misses)
        kinds = sorted({k.split()[0] for k in c})
        figs = ", ".join(
            f"{k} {c[k + ' ok']}/{c[k + ' n']} {'survive' if k == 'DECOY' else 'redacted'}"
            for k in kinds
        )
        print(f"{path.name}: {figs} ({time.process_time() - t0:.1f} s CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
