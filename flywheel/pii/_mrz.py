"""Machine-readable zones of travel documents (ICAO Doc 9303): the data lines and the name.

Why: a passport or identity card scanned by OCR reaches a trace as its MRZ, two lines
of 44 (passport, TD3) or 36 characters (TD2) or three of 30 (identity card, TD1), in
capitals, digits and ``<`` fillers. A data line holds the document number, the birth
date, the expiry date and an optional personal (national id) number; the first line of a
TD3/TD2 zone (the last of a TD1) holds the holder's names. The data lines carry check
digits (ICAO 9303 part 3: weights 7, 3, 1; ``<`` is 0, letters 10-35), so a line whose
document number, birth date and expiry date all pass is a document's data line (one
random line in a thousand passes); the name line has a fixed shape (a document code, an
issuing state, then surname ``<<`` given names, padded with ``<``).
"""

from __future__ import annotations

import re

from flywheel.pii._types import Detection

_RUN = re.compile(r"(?<![A-Z0-9<])[A-Z0-9<]{30,44}(?![A-Z0-9<])")
#: The name line of a TD3 (44) or TD2 (36) zone: a document code (P, I, A, C, V and a
#: letter or filler), the issuing state, then the names.
_NAME_LINE = re.compile(r"\A[PIACV][A-Z<][A-Z<]{3}(?P<n>[A-Z]+<<?[A-Z<]*)\Z")
_TD1_NAME = re.compile(r"\A(?P<n>[A-Z]+<<[A-Z<]+)\Z")


def _value(c: str) -> int:
    if c.isdigit():
        return int(c)
    if c == "<":
        return 0
    return ord(c) - 55  # A = 10 ... Z = 35


def check_digit(field: str) -> str:
    """The ICAO 9303 check digit of ``field``."""
    return str(sum(_value(c) * (7, 3, 1)[i % 3] for i, c in enumerate(field)) % 10)


def _ok(field: str, digit: str) -> bool:
    return digit == check_digit(field) or (digit == "<" and set(field) <= {"<"})


def _data_line(line: str) -> bool:
    """A TD3 or TD2 data line (44 or 36 characters), or a TD1 line 1 or 2 (30)."""
    n = len(line)
    if n in (44, 36):
        return (
            line[13:19].isdigit()
            and line[21:27].isdigit()
            and _ok(line[0:9], line[9])
            and _ok(line[13:19], line[19])
            and _ok(line[21:27], line[27])
        )
    if n == 30:
        if line[0:6].isdigit() and line[8:14].isdigit():  # TD1 line 2: birth, expiry
            return _ok(line[0:6], line[6]) and _ok(line[8:14], line[14])
        # TD1 line 1: document code, issuing state, document number and its check digit
        return line[0] in "ACI" and line[2:5].isalpha() and _ok(line[5:14], line[14])
    return False


def detect_mrz(text: str, labels: set[str] | frozenset[str]) -> list[Detection]:
    """Data lines (NATIONAL_ID, the whole line) and the holder's names (NAME) of MRZ lines."""
    out: list[Detection] = []
    for m in _RUN.finditer(text):
        line = m.group()
        if len(line) not in (30, 36, 44) or "<" not in line:
            continue
        if "NATIONAL_ID" in labels and any(c.isdigit() for c in line) and _data_line(line):
            out.append(Detection(m.start(), m.end(), "NATIONAL_ID", 0.9, "mrz"))
            continue
        if "NAME" in labels and not any(c.isdigit() for c in line):
            nm = (_NAME_LINE if len(line) != 30 else _TD1_NAME).match(line)
            if nm and "<<" in line:
                name = nm.group("n").rstrip("<")
                start = m.start() + nm.start("n")
                out.append(Detection(start, start + len(name), "NAME", 0.8, "mrz"))
    return out
