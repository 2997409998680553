"""Write ``flywheel/pii/data/first_names.txt.gz`` from the ``names-dataset`` package (MIT).

Why a derived file: ``names-dataset`` loads 1.7 million names into ~1.9 GB of
memory in ~8 s, too much for every redaction worker. Person-name detection
only needs to know whether a capitalised word is a common first name
somewhere, so this keeps the first names ranked in the top ``--rank`` of at
least one of the dataset's 105 countries, Latin script, three letters or
more, minus the stop words of the languages we redact (spaCy's lists), one
per line. Dev-time only: ``pip install names-dataset`` then run this script.
The data's licence and source are written in the file's first line.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import os
import pickle
import re
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "flywheel" / "pii" / "data" / "first_names.txt.gz"
_LATIN = re.compile(r"^[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’]+(?:-[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’]+)?$")
LANGS = ("en", "de", "fr", "es", "it", "pt", "nl")


def main() -> None:
    """Build the file."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rank", type=int, default=1000)
    args = ap.parse_args()
    import names_dataset

    base = os.path.dirname(names_dataset.__file__)
    with gzip.open(f"{base}/v3/first_names.pkl.gz") as f:
        first = pickle.load(f)
    stop: set[str] = set()
    for lang in LANGS:
        stop |= {w.lower() for w in importlib.import_module(f"spacy.lang.{lang}.stop_words").STOP_WORDS}
    keep = set()
    for name, info in first.items():
        ranks = [r for r in (info.get("rank") or {}).values() if r]
        if not ranks or min(ranks) > args.rank or len(name) < 3 or not _LATIN.match(name):
            continue
        if name.lower() in stop:
            continue
        keep.add(name)
    header = (
        f"# first names ranked <= {args.rank} in a country of names-dataset 3.3.1 "
        "(Philippe Remy, MIT licence), Latin script, stop words removed\n"
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(OUT, "wb", mtime=0) as out:
        out.write((header + "\n".join(sorted(keep)) + "\n").encode())
    print(f"{len(keep)} names -> {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
