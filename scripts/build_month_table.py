"""Write ``flywheel/pii/data/month_names.txt.gz``: the month names of every CLDR language.

Why a derived file: dates of birth are written with the month's name in the
writer's language (``3 de novembre del 2016``, ``15 septembrie 2002``,
``17. toukokuuta``, ``2 Φεβρουαρίου``); a hand-typed table covers the languages
someone thought of, CLDR covers every language with a locale. Babel (BSD) ships
CLDR's data; it is a dev-time dependency only: ``pip install babel`` then run
this script. Kept: the wide and abbreviated month names, in the format
(genitive in the Slavic and Baltic languages) and stand-alone contexts, of
every base locale, and the wide names of regional locales (Austrian German writes
``Jänner``; their abbreviations add words like ``das`` and ``par``), lower-cased, without a trailing dot, in Latin, Greek or
Cyrillic letters, three letters or more. The data's source is written in the
file's first line.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "flywheel" / "pii" / "data" / "month_names.txt.gz"
_WORD = re.compile(r"[^\W\d_]+(?:[ '’\-][^\W\d_]+)?")


def main() -> None:
    """Build the file."""
    import babel
    from babel import Locale, localedata

    words: set[str] = set()
    for ident in localedata.locale_identifiers():
        loc = Locale.parse(ident)
        for ctx in ("format", "stand-alone"):
            for width in ("wide", "abbreviated") if "_" not in ident else ("wide",):
                try:
                    names = loc.months[ctx][width].values()
                except KeyError:
                    continue
                for v in names:
                    w = v.lower().rstrip(".")
                    if len(w) >= 3 and _WORD.fullmatch(w) and all(ord(c) < 0x530 for c in w):
                        words.add(w)
    header = (
        f"# month names of every locale of CLDR (regional: wide names) via Babel {babel.__version__} (BSD), "
        "lower case\n"
    )
    with gzip.GzipFile(OUT, "wb", mtime=0) as out:
        out.write((header + "\n".join(sorted(words)) + "\n").encode())
    print(f"{len(words)} month names -> {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
