"""Import OTLP JSON files (the OpenTelemetry file exporter's format).

A file holds one ``ExportTraceServiceRequest`` JSON object per line (a single
pretty-printed object is accepted too). Each chunk is inserted with a token
derived from the project, the file's content and the chunk number, so
importing the same file twice into a project stores its spans once, and the
same file imported into another project is stored there too (the rows carry
the project: the same bytes are other rows).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from flywheel import Store, UserError

from ._duplicates import mark_duplicates
from ._otlp import decode_request, parse_request


@dataclass
class ImportResult:
    """What one file import stored and rejected."""

    path: str
    requests: int = 0
    spans: int = 0
    rejected: int = 0
    reasons: list[str] | None = None


#: File names a directory argument imports (the file exporter writes JSON lines).
OTLP_SUFFIXES = (".json", ".jsonl", ".ndjson")


def otlp_files(paths: list[str] | tuple[str, ...]) -> list[Path]:
    """The files to import: each file named, and the OTLP JSON files under each directory.

    A directory contributes every ``*.json``, ``*.jsonl`` and ``*.ndjson`` file
    below it, in name order. Raises ``UserError`` naming a path that does not
    exist or a directory with no such file.
    """
    out: list[Path] = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in OTLP_SUFFIXES)
            if not found:
                raise UserError(
                    f"{arg} is a directory without OTLP JSON files (*.json, *.jsonl, *.ndjson); "
                    "pass the exporter's files or the directory that holds them"
                )
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise UserError(
                f"no such file or directory: {arg} (pass OTLP JSON files written by the "
                "OpenTelemetry file exporter, or a directory of them)"
            )
    return out


def _requests(path: Path) -> Iterator[tuple[int, bytes]]:
    text = path.read_bytes()
    stripped = text.strip()
    if not stripped:
        return
    try:  # one (possibly multi-line) JSON document
        json.loads(stripped)
        yield 1, stripped
        return
    except json.JSONDecodeError:
        pass
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield lineno, line


def import_otlp_json(
    store: Store,
    path: str | Path,
    *,
    project: str = "default",
    chunk_spans: int = 20_000,
    on_progress: Callable[[int], None] | None = None,
) -> ImportResult:
    """Decode every request in ``path`` and insert its spans in large chunks."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{p} is not a file")
    digest = hashlib.sha256(p.read_bytes()).hexdigest()[:24]
    # a token holds [A-Za-z0-9_.:/-] only: the project enters as a hash
    owner = hashlib.sha256(project.encode()).hexdigest()[:16]
    result = ImportResult(str(p), reasons=[])
    tables: list[pa.Table] = []
    rows, chunk = 0, 0

    def flush() -> None:
        nonlocal tables, rows, chunk
        if tables:
            data = pa.concat_tables(tables)
            mark_duplicates(store, data)
            store.insert(store.otel_table, data, dedup_token=f"file:{owner}:{digest}:{chunk}")
            chunk += 1
            tables, rows = [], 0

    for lineno, raw in _requests(p):
        try:
            req = parse_request(raw, "application/json")
        except UserError as exc:
            raise UserError(f"{p}:{lineno}: {exc}") from exc
        batch = decode_request(req, project=project)
        result.requests += 1
        result.spans += batch.accepted
        result.rejected += batch.rejected
        result.reasons.extend(sorted(set(batch.reasons)))
        if batch.accepted:
            tables.append(batch.table)
            rows += batch.accepted
        if on_progress:
            on_progress(1)
        if rows >= chunk_spans:
            flush()
    flush()
    result.reasons = sorted(set(result.reasons))
    return result
