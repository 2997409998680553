"""Canonical records and snapshots: the one shape every adapter produces.

A record is ``(resource_type, key, fields)``. ``resource_type`` names the kind
of thing (a table, ``file``, ``bank_account.transactions``), ``key`` is a tuple
of strings that identifies one instance within its type, and ``fields`` maps
field names to JSON values: scalars, lists of scalars, and (from JSON
documents) nested objects and lists of objects that belong to the record.
Changes inside them are named by path (``_paths``).

A snapshot keeps each record's fields as canonical JSON text (sorted keys, no
whitespace; orjson, with the standard library's encoder for what orjson
refuses, such as integers beyond 64 bits). Comparing two records is then one
string comparison in C, which is what lets a diff of 1,000,000 records run in
about a second, and the text is also the stable digest basis for stored
snapshots.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from flywheel import canonical_json

#: A record's identity inside a snapshot.
RecordId = tuple[str, tuple[str, ...]]

SNAPSHOT_FORMAT = "flywheel.snapshot/1"


@dataclass(frozen=True, slots=True)
class Record:
    """One canonical record as produced by an adapter."""

    resource_type: str
    key: tuple[str, ...]
    fields: Mapping[str, Any]

    @property
    def rid(self) -> RecordId:
        """The record's identity ``(resource_type, key)``."""
        return (self.resource_type, self.key)


def display_key(key: tuple[str, ...]) -> str:
    """A key as one human-readable string (parts joined by ``/``)."""
    return "/".join(key)


def key_sort(key: tuple[str, ...]) -> tuple[tuple[int, int, str], ...]:
    """Natural sort key: numeric parts by value, so ``2`` sorts before ``10``."""
    return tuple((0, int(p), "") if p.isdigit() and len(p) < 19 else (1, 0, p) for p in key)


_SORTED = orjson.OPT_SORT_KEYS


def record_text(fields: Any) -> str:
    """Canonical JSON text of a record's fields (see the module docstring)."""
    try:
        return orjson.dumps(fields, option=_SORTED).decode()
    except TypeError:
        return canonical_json(fields)


class Snapshot:
    """A set of records keyed by ``(resource_type, key)``, fields held as canonical JSON.

    Build one from adapters (``Snapshot.from_records``) or from a stored file
    (``Snapshot.from_json``). A duplicate record id raises ``ValueError``:
    an adapter whose keys collide would otherwise hide a change.
    """

    __slots__ = ("_data",)

    def __init__(self, data: dict[RecordId, str] | None = None) -> None:
        self._data: dict[RecordId, str] = data if data is not None else {}

    @classmethod
    def from_records(cls, records: Iterable[Record]) -> Snapshot:
        """Canonicalise records into a snapshot."""
        data: dict[RecordId, str] = {}
        dumps, opt = orjson.dumps, _SORTED
        for rec in records:
            rid = (rec.resource_type, rec.key)
            try:
                text = dumps(rec.fields, option=opt).decode()
            except TypeError:
                text = canonical_json(rec.fields)
            if rid in data:
                raise ValueError(
                    f"duplicate record {rec.resource_type}[{display_key(rec.key)}]; "
                    "the adapter's key rule must make keys unique"
                )
            data[rid] = text
        return cls(data)

    def add(self, rec: Record) -> None:
        """Add one record; its id must be new."""
        rid = rec.rid
        if rid in self._data:
            raise ValueError(
                f"duplicate record {rec.resource_type}[{display_key(rec.key)}]; "
                "the adapter's key rule must make keys unique"
            )
        self._data[rid] = record_text(rec.fields)

    def merge(self, other: Snapshot) -> Snapshot:
        """A new snapshot holding the records of both (ids must not overlap)."""
        overlap = self._data.keys() & other._data.keys()
        if overlap:
            rt, key = next(iter(overlap))
            raise ValueError(
                f"snapshots overlap at {rt}[{display_key(key)}]; give adapters prefixes"
            )
        return Snapshot({**self._data, **other._data})

    @property
    def raw(self) -> dict[RecordId, str]:
        """The underlying id -> canonical JSON mapping (read it, do not mutate)."""
        return self._data

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, rid: object) -> bool:
        return rid in self._data

    def fields(self, rid: RecordId) -> dict[str, Any]:
        """The fields of one record, decoded."""
        out: dict[str, Any] = orjson.loads(self._data[rid])
        return out

    def records(self) -> Iterator[Record]:
        """All records in stable order (resource type, then natural key order)."""
        for rid in sorted(self._data, key=lambda r: (r[0], key_sort(r[1]))):
            yield Record(rid[0], rid[1], orjson.loads(self._data[rid]))

    def digest(self) -> str:
        """SHA-256 over all records in stable order: equal states, equal digests."""
        h = hashlib.sha256()
        for rid in sorted(self._data, key=lambda r: (r[0], key_sort(r[1]))):
            h.update(json.dumps([rid[0], list(rid[1])], ensure_ascii=False).encode())
            h.update(b"\x00")
            h.update(self._data[rid].encode())
            h.update(b"\x01")
        return h.hexdigest()

    def to_json(self) -> dict[str, Any]:
        """The stored form: ``{"format", "records": [{"resource_type", "key", "fields"}]}``."""
        return {
            "format": SNAPSHOT_FORMAT,
            "records": [
                {"resource_type": r.resource_type, "key": list(r.key), "fields": dict(r.fields)}
                for r in self.records()
            ],
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Snapshot:
        """Read the stored form written by ``to_json``."""
        if doc.get("format") != SNAPSHOT_FORMAT:
            raise ValueError(f"not a {SNAPSHOT_FORMAT} document (format={doc.get('format')!r})")
        return cls.from_records(
            Record(str(r["resource_type"]), tuple(str(k) for k in r["key"]), r["fields"])
            for r in doc["records"]
        )
