"""Write ``flywheel/pii/data/first_names.txt.gz`` and ``common_surnames.txt.gz`` from ``names-dataset`` (MIT).

Why a derived file: ``names-dataset`` loads 1.7 million names into ~1.9 GB of
memory in ~8 s, too much for every redaction worker. Person-name detection
only needs to know whether a capitalised word is a common first name
somewhere, so this keeps the first names ranked in the top ``--rank`` of at
least one of the dataset's 105 countries, Latin script, three letters or
more, minus the stop words of the languages we redact (spaCy's lists), one
per line. Dev-time only: ``pip install names-dataset`` then run this script.
The data's licence and source are written in the file's first line.

``common_surnames.txt.gz``: the last names ranked in the top ``--surname-rank``
of a country that are also in a redacted language's word list (``Young``,
``Stone``, ``Berg``, ``Fuente``, ``Koch``, ``Cienfuegos``): after a first name,
a listed word is a surname only when it is one of these ("Anna Berg", not
"Autumn Meadow"). Surnames in no word list need no list: such a word after a
first name is taken as a surname anyway.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import os
import pickle
import re
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "flywheel" / "pii" / "data"
OUT = DATA / "first_names.txt.gz"
SURNAMES = DATA / "common_surnames.txt.gz"
_LATIN = re.compile(r"^[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’]+(?:-[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ'’]+)?$")
LANGS = ("en", "de", "fr", "es", "it", "pt", "nl")


def main() -> None:
    """Build the file."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rank", type=int, default=1000)
    ap.add_argument("--surname-rank", type=int, default=5000)
    args = ap.parse_args()
    import names_dataset

    base = os.path.dirname(names_dataset.__file__)
    _write_common_surnames(base, args.surname_rank)
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


def _write_common_surnames(base: str, rank: int) -> None:
    from flywheel.pii._lexicon import zipf

    with gzip.open(f"{base}/v3/last_names.pkl.gz") as f:
        last = pickle.load(f)
    keep = set()
    for name, info in last.items():
        ranks = [r for r in (info.get("rank") or {}).values() if r]
        if ranks and min(ranks) <= rank and len(name) >= 3 and _LATIN.match(name) and zipf(name) > 0:
            keep.add(name)
    del last
    header = (
        f"# last names ranked <= {rank} in a country of names-dataset 3.3.1 (Philippe Remy, "
        "MIT licence), Latin script, that are in a redacted language's wordfreq list\n"
    )
    with gzip.GzipFile(SURNAMES, "wb", mtime=0) as out:
        out.write((header + "\n".join(sorted(keep)) + "\n").encode())
    print(f"{len(keep)} common-word surnames -> {SURNAMES} ({SURNAMES.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
