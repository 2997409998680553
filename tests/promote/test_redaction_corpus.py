"""The frozen redaction corpus is what issue 20's figures are reported on: pin its bytes.

A change to the frozen files (or to the hand-written source they are built
from) fails here; the development corpus may change freely.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "redaction_corpus"

FROZEN_SHA256 = {
    "frozen.otlp.jsonl": "c4e0da4c4100758e75ddd16812e407f1b6d416979952bb0080b3c8b825b178f9",
    "frozen.labels.json": "b1349474bbcf8b67194f523a9e47d5b34fe81d2aed9231ccaec737b8a3fcb5a7",
    # holdout2: the second independent corpus, frozen before any detector ran on it
    "holdout2.otlp.jsonl": "20a42ec3d275fe6484e972dea1535559afddb2ce651185b168f3bf2be1f56299",
    "holdout2.labels.json": "7e290c8b68461fa047d96ee98161cafe1a1e06edf1aa400f9fdcf12137de4438",
    # holdout3: the third independent corpus, frozen before any detector ran on it
    "holdout3.otlp.jsonl": "9a68307603a7062c6e7a951dcf8dc0fc68f6033efb210a1ec079d5bfe1c65f41",
    "holdout3.labels.json": "758a23a562def0b5e09c0fdaa1403dcb4e78b0d89876b9e0c900f350693f9efe",
    # holdout4: the fourth independent corpus, frozen before any detector ran on it
    "holdout4.otlp.jsonl": "ea66dfd86a4824236b61e8ce6c8a249f367386881a56ab8d054e3bf1deb79127",
    "holdout4.labels.json": "3bf8b728fe66703a1f33cd3103e2b0c32b38d348d8049b19e63c01815fff0668",
    # holdout5: the fifth independent corpus, frozen before any detector ran on it
    "holdout5.otlp.jsonl": "5aae14e3ab61a9c0d933f1df49b6bb78d8e7c9d294d44969dd3cbbd541b2ade7",
    "holdout5.labels.json": "6d57459fccee497a91900915526ff2b9f992d1e01c8c6e6f6aa0c2798dcc1dc0",
    # holdout6: the sixth independent corpus, frozen before any detector ran on it
    "holdout6.otlp.jsonl": "aae8ea0398a61ea73aa6c753068c95b84857c1cb9e29128fcaac9c57a8324a53",
    "holdout6.labels.json": "bf87593b3eb294bcad2d63c1a1804024be31904ba5423d884bebc9f241644e6d",
    # holdout7: the seventh independent corpus, frozen before any detector ran on it
    "holdout7.otlp.jsonl": "d9fb0e8218197c17fb774f04bec86c122a82bd373d21c48fda3ae1b7b7149c6c",
    "holdout7.labels.json": "de904e72162e27c8902b2ea6a9dfbc7c6a6e01bf76a5a932ac4c0c68ad763e86",
    # holdout8: the eighth independent corpus, frozen before any detector ran on it
    "holdout8.otlp.jsonl": "082dd1ea0ddb7f9c1b52dd55b078b368d4c88e55f884959ddbea663b519e9dd6",
    "holdout8.labels.json": "d1684af069c56ee058aaeeac2868ff0b61a73397b2414cc457bf272b401df3e0",
    # holdout9: the ninth independent corpus, frozen before any detector ran on it
    "holdout9.otlp.jsonl": "0ad0b175a69cbe9a42ef3e5e303d8582bee63c45cfc3b6c378140b4c702d6adf",
    "holdout9.labels.json": "ad2c38e9fd5ddc978f462645640025a27f6cc382b608b7744cdac33abe348f55",
    # holdout10: the tenth independent corpus, frozen before any detector ran on it
    "holdout10.otlp.jsonl": "b864037aacfd2278108d1b38e54e2df814e9347cc412d0df71c27cdee9155abe",
    "holdout10.labels.json": "b854c1bc9431743d0927b69f48a27e8760c02d9a972dc1412a9c8ae6451f95eb",
}


def test_frozen_corpus_is_unchanged() -> None:
    for name, digest in FROZEN_SHA256.items():
        assert hashlib.sha256((CORPUS / name).read_bytes()).hexdigest() == digest, name


def test_frozen_files_are_built_from_the_source() -> None:
    proc = subprocess.run(
        [sys.executable, str(CORPUS / "build.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_corpus_covers_languages_types_and_decoys() -> None:
    labels = json.loads((CORPUS / "frozen.labels.json").read_text(encoding="utf-8"))
    langs = {v["lang"] for v in labels.values()}
    types = {p["type"] for v in labels.values() for p in v["planted"]}
    assert {"en", "de", "fr", "es"} <= langs and len(langs) >= 5
    assert {"NAME", "ADDRESS", "DOB", "SECRET", "EMAIL", "PHONE", "IBAN", "CARD", "IP"} <= types
    assert sum(len(v["decoys"]) for v in labels.values()) >= 130
