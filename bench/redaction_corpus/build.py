"""Write the corpus files: ``NAME.otlp.jsonl`` (one OTLP/JSON request per line) and ``NAME.labels.json``.

Usage:
    python bench/redaction_corpus/build.py            # every corpus
    python bench/redaction_corpus/build.py --check    # exit 1 if a written file is stale

The frozen files are committed; ``tests/promote/test_redaction_corpus.py``
pins their SHA-256 so a silent edit of the evaluation data fails the suite.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _kit import build  # noqa: E402

CORPORA = {
    "frozen": "frozen_traces",
    "dev": "dev_traces",
    "holdout2": "holdout2_traces",
    "holdout3": "holdout3_traces",
    "holdout4": "holdout4_traces",
    "holdout5": "holdout5_traces",
    "holdout6": "holdout6_traces",
    "holdout7": "holdout7_traces",
    "holdout8": "holdout8_traces",
    "holdout9": "holdout9_traces",
    "holdout10": "holdout10_traces",
}


def render(name: str) -> dict[str, str]:
    """File name -> text for one corpus."""
    mod = importlib.import_module(CORPORA[name])
    requests, labels = build(mod.WRITERS)
    return {
        f"{name}.otlp.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests),
        f"{name}.labels.json": json.dumps(labels, ensure_ascii=False, indent=1) + "\n",
    }


def summary(labels_text: str) -> str:
    """Traces, planted values per type and language, decoys."""
    labels = json.loads(labels_text)
    types = Counter(p["type"] for v in labels.values() for p in v["planted"])
    langs = Counter(v["lang"] for v in labels.values())
    decoys = sum(len(v["decoys"]) for v in labels.values())
    return (
        f"{len(labels)} traces ({dict(sorted(langs.items()))}), "
        f"{sum(types.values())} planted ({dict(sorted(types.items()))}), {decoys} decoys"
    )


def main() -> int:
    """Write or check the files."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    stale = 0
    for name in CORPORA:
        for fname, text in render(name).items():
            path = HERE / fname
            if args.check:
                if not path.is_file() or path.read_text(encoding="utf-8") != text:
                    print(f"stale: {path}")
                    stale += 1
            else:
                path.write_text(text, encoding="utf-8")
            digest = hashlib.sha256(text.encode()).hexdigest()
            print(f"{fname}: sha256 {digest}")
            if fname.endswith("labels.json"):
                print(f"  {summary(text)}")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
