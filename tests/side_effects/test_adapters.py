"""Snapshot adapters: the canonical record rules and the registry."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from flywheel.side_effects import (
    JsonDocumentAdapter,
    Record,
    Snapshot,
    adapter_names,
    diff,
    get_adapter,
    maps_from_pydantic,
    register_adapter,
    snapshot,
)
from pydantic import BaseModel


def _recs(doc: Any, **opts: Any) -> dict[tuple[str, tuple[str, ...]], dict[str, Any]]:
    return {r.rid: dict(r.fields) for r in JsonDocumentAdapter(**opts).records(doc)}


def test_json_struct_fields_and_id_keyed_lists() -> None:
    doc = {
        "account": {
            "balance": 5.0,
            "iban": "DE1",
            "tx": [{"id": 7, "amount": 1}, {"id": 3, "amount": 2}],
        }
    }
    recs = _recs(doc)
    assert recs[("account", ())] == {"balance": 5.0, "iban": "DE1"}
    assert recs[("account.tx", ("7",))] == {"id": 7, "amount": 1}
    assert ("account.tx", ("3",)) in recs


def test_json_list_without_unique_id_uses_index() -> None:
    recs = _recs({"msgs": [{"body": "a"}, {"body": "b"}], "dup": [{"id": 1}, {"id": 1}]})
    assert ("msgs", ("0",)) in recs and ("msgs", ("1",)) in recs
    assert ("dup", ("1",)) in recs  # index 1, ids were not unique


def test_json_scalar_lists_are_keyed_by_value_with_repeats() -> None:
    recs = _recs({"users": ["Alice", "Bob", "Alice"]})
    assert set(recs) == {("users", ("Alice",)), ("users", ("Bob",)), ("users", ("Alice#2",))}


def test_json_removing_a_list_member_is_one_deletion() -> None:
    a = Snapshot.from_records(JsonDocumentAdapter().records({"users": ["A", "B", "C"]}))
    b = Snapshot.from_records(JsonDocumentAdapter().records({"users": ["A", "C"]}))
    [d] = diff(a, b)
    assert (d.kind, d.key) == ("deleted", ("B",))


def test_json_maps_by_hint_and_by_non_identifier_keys() -> None:
    doc = {"inbox": {"Alice": [{"body": "hi"}]}, "files": {"a.txt": "x"}}
    recs = _recs(doc, maps=["inbox"])
    assert recs[("inbox", ("Alice", "0"))] == {"body": "hi"}
    assert recs[("files", ("a.txt",))] == {"value": "x"}  # keys not identifiers -> map


def test_json_nested_objects_stay_and_nested_lists_of_records_become_subcollections() -> None:
    doc = {
        "events": [
            {"id": "e1", "loc": {"city": "Bern"}, "tags": ["x"], "att": [{"id": "p", "ok": True}]}
        ]
    }
    recs = _recs(doc)
    assert recs[("events", ("e1",))] == {"id": "e1", "loc": {"city": "Bern"}, "tags": ["x"]}
    assert recs[("events.att", ("e1", "p"))] == {"id": "p", "ok": True}


def test_maps_from_pydantic_reads_dict_fields() -> None:
    class Msg(BaseModel):
        body: str

    class Chat(BaseModel):
        users: list[str]
        inbox: dict[str, list[Msg]]
        meta: dict[str, str] | None = None

    class Env(BaseModel):
        chat: Chat

    assert maps_from_pydantic(Env) == ["chat.inbox", "chat.meta"]


def test_sqlite_every_table_by_primary_key_or_rowid(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    con = sqlite3.connect(db)
    con.executescript(
        "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT, avatar BLOB);"
        "CREATE TABLE kv(k1 TEXT, k2 TEXT, v TEXT, PRIMARY KEY (k1, k2));"
        "CREATE TABLE log(line TEXT);"
        "INSERT INTO users VALUES (1, 'ann', x'00ff'), (2, 'bob', NULL);"
        "INSERT INTO kv VALUES ('a', 'b', 'v1');"
        "INSERT INTO log VALUES ('started');"
    )
    con.commit()
    s0 = snapshot("sqlite", db)
    con.executescript(
        "UPDATE users SET name='ann2' WHERE id=1; DELETE FROM users WHERE id=2;"
        "INSERT INTO kv VALUES ('a', 'c', 'v2');"
    )
    con.commit()
    con.close()
    s1 = snapshot("sqlite", db)
    assert ("log", ("1",)) in s0 and ("kv", ("a", "b")) in s0
    assert s0.fields(("users", ("1",)))["avatar"].startswith("sha256:")
    got = [(d.kind, d.resource_type, d.key) for d in diff(s0, s1)]
    assert got == [
        ("created", "kv", ("a", "c")),
        ("updated", "users", ("1",)),
        ("deleted", "users", ("2",)),
    ]


def test_directory_tree_content_mode_and_deletion(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "b.txt").write_text("keep")
    (tmp_path / "c.txt").write_text("gone")
    s0 = snapshot("dirtree", tmp_path)
    (tmp_path / "src" / "a.py").write_text("x = 2\n")
    os.chmod(tmp_path / "b.txt", 0o666)
    (tmp_path / "c.txt").unlink()
    s1 = snapshot("dirtree", tmp_path)
    ds = {d.key[0]: d for d in diff(s0, s1)}
    assert ds["c.txt"].kind == "deleted"
    assert {c.field for c in ds["src/a.py"].changes} == {"sha256"}
    assert [c.field for c in ds["b.txt"].changes] == ["mode"]
    assert s0.fields(("file", ("src",)))["kind"] == "dir"


def test_outbox_and_permission_maps() -> None:
    out = list(
        get_adapter("outbox").records(
            [
                {"channel": "email", "to": ["x@y.z"], "subject": "hi", "body": "b"},
                {"channel": "http", "id": "r1", "method": "POST", "url": "https://e.com"},
            ]
        )
    )
    assert [(r.resource_type, r.key) for r in out] == [
        ("outbox.email", ("0",)),
        ("outbox.http", ("r1",)),
    ]
    p0 = snapshot("permissions", {"doc1": {"alice": "owner", "bob": "read"}})
    p1 = snapshot(
        "permissions",
        [
            {"resource": "doc1", "principal": "alice", "permission": "owner"},
            {"resource": "doc1", "principal": "bob", "permission": "write"},
            {"resource": "doc1", "principal": "eve", "permission": "read"},
        ],
    )
    got = [(d.kind, d.key) for d in diff(p0, p1)]
    assert got == [("updated", ("doc1", "bob")), ("created", ("doc1", "eve"))]


def test_a_new_adapter_is_one_small_class() -> None:
    @register_adapter
    class EnvVarsAdapter:
        """Test-only adapter: environment-variable mappings."""

        name = "test-envvars"

        def records(self, source: dict[str, str]) -> Iterable[Record]:
            for k, v in source.items():
                yield Record("env", (k,), {"value": v})

    assert "test-envvars" in adapter_names()
    [d] = diff(snapshot("test-envvars", {"A": "1"}), snapshot("test-envvars", {"A": "2"}))
    assert d.ref == "env[A]"


def test_snapshot_roundtrip_and_digest() -> None:
    s = Snapshot.from_records(JsonDocumentAdapter().records({"a": [{"id": 1, "x": "y"}], "b": 2}))
    back = Snapshot.from_json(s.to_json())
    assert back.digest() == s.digest() and not diff(s, back)


def test_root_map_of_files() -> None:
    from flywheel.side_effects import JsonDocumentAdapter

    recs = {
        r.rid: dict(r.fields) for r in JsonDocumentAdapter().records({"a.txt": "x", "b.md": "y"})
    }
    assert recs == {("$", ("a.txt",)): {"value": "x"}, ("$", ("b.md",)): {"value": "y"}}
