"""The end state against the expected end state: omissions, wrong values, extras.

A small shop of its own (orders with nested refund and lines, customers keyed
by handle, an outbox), as a JSON document and as a SQLite database.
"""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

from flywheel.side_effects import (
    Snapshot,
    ToolCall,
    analyze,
    default_profile,
    scope_from_snapshots,
    side_effect_summary,
    snapshot,
)

S0: dict[str, Any] = {
    "customers": {
        "ana_r_11": {"email": "ana@x.org", "credit": 10.0, "updated_at": "2025-01-01T09:00:00Z"},
        "bo_k_42": {"email": "bo@x.org", "credit": 0.0, "updated_at": "2025-01-02T09:00:00Z"},
    },
    "orders": [
        {
            "order_id": "O1",
            "customer": "ana_r_11",
            "status": "open",
            "lines": [{"sku": "pen", "qty": 2}],
            "refund": {"amount": 0},
            "tags": ["gift", "rush"],
            "modified": "2025-01-03T10:00:00Z",
        },
        {
            "order_id": "O2",
            "customer": "bo_k_42",
            "status": "open",
            "lines": [{"sku": "ink", "qty": 1}],
            "refund": {"amount": 0},
            "tags": ["bulk"],
            "modified": "2025-01-03T11:00:00Z",
        },
    ],
    "outbox": [
        {
            "id": "2c9b3f1e-8a47-4d7e-9a1b-5d0c3e2f1a10",
            "to": "bo@x.org",
            "subject": "Welcome",
            "sent_at": "2025-01-02T09:05:00Z",
        },
    ],
}


def _cancel(doc: dict[str, Any], oid: str, amount: float, when: str) -> None:
    for o in doc["orders"]:
        if o["order_id"] == oid:
            o["status"] = "cancelled"
            o["refund"] = {"amount": amount}
            o["modified"] = when
            o["tags"] = list(reversed(o["tags"]))  # the store rebuilds its tag set


def _mail(doc: dict[str, Any], to: str, subject: str, uid: str, when: str) -> None:
    doc["outbox"].append({"id": uid, "to": to, "subject": subject, "sent_at": when})


def _expected() -> dict[str, Any]:
    doc = copy.deepcopy(S0)
    _cancel(doc, "O1", 20.0, "2025-02-01T08:00:00Z")
    _mail(
        doc,
        "ana@x.org",
        "Order O1 cancelled",
        "7f1e2d3c-4b5a-4c6d-8e7f-9a0b1c2d3e4f",
        "2025-02-01T08:00:05Z",
    )
    return doc


def _run(**faults: Any) -> dict[str, Any]:
    """An agent's end state: the task done at another time (new clock, new UUID), or faulted."""
    doc = copy.deepcopy(S0)
    if not faults.get("omit_cancel"):
        _cancel(doc, "O1", faults.get("amount", 20.0), "2025-03-09T17:30:00Z")
    if not faults.get("omit_mail"):
        _mail(
            doc,
            "ana@x.org",
            faults.get("subject", "Order O1 cancelled"),
            "0a1b2c3d-4e5f-4a6b-9c8d-7e6f5a4b3c2d",
            "2025-03-09T17:30:09Z",
        )
    if faults.get("extra_cancel"):
        _cancel(doc, "O2", 0.0, "2025-03-09T17:31:00Z")
    return doc


def _json(doc: Any) -> Snapshot:
    return snapshot("json", doc)


def _report(
    after: dict[str, Any],
    calls: list[ToolCall] | None = None,
    kind: str = "json",
    tmp: Path | None = None,
):
    load = _json if kind == "json" else (lambda d: _sqlite(d, tmp))  # type: ignore[arg-type]
    s0, exp, st = load(S0), load(_expected()), load(after)
    scope = scope_from_snapshots(s0, exp)
    return analyze(s0, st, scope=scope, profile=default_profile(), calls=calls)


def _scope():
    return scope_from_snapshots(_json(S0), _json(_expected()))


def _kinds(report) -> list[tuple[str, str, tuple[str, ...]]]:
    return sorted((f.kind, f.ref, f.fields) for f in report.findings)


def test_a_correct_run_at_another_time_fits_the_expected_snapshot() -> None:
    r = _report(_run())
    assert r.findings == [] and not r.classification.has_unauthorized()
    said = {(v.field, v.note) for d in r.classification.decisions for v in d.fields}
    assert ("modified", "timestamp") in said  # said in the diff, not silently dropped
    relaxed = {(x.resource_type, x.field, x.how) for x in _scope().relaxed}
    assert ("orders", "modified", "timestamp") in relaxed
    assert ("outbox", "sent_at", "timestamp") in relaxed
    assert not r.gate.blocking


def test_omission_is_reported_with_the_record_and_the_attempt() -> None:
    calls = [
        ToolCall(
            name="CancelOrder", args={"order": "O1"}, status="error", error="refund service down"
        ),
        ToolCall(name="notify", args={"to": "ana@x.org", "subject": "Order O1 cancelled"}),
    ]
    r = _report(_run(omit_cancel=True), calls)
    [om] = [f for f in r.findings if f.kind == "omission"]
    assert om.ref == "orders[O1]" and "status" in om.fields and om.calls == (0,)
    assert side_effect_summary(r.classification, r.findings)["omission"] == 1
    assert not [f for f in r.findings if f.kind == "extra"]


def test_wrong_value_names_the_field_with_expected_and_actual() -> None:
    r = _report(_run(amount=25.0))
    [w] = r.findings
    assert (w.kind, w.ref, w.fields) == ("wrong_value", "orders[O1]", ("refund.amount",))
    assert (w.diffs[0].expected, w.diffs[0].after) == (20.0, 25.0)


def test_a_wrong_creation_is_a_wrong_value_not_an_extra() -> None:
    r = _report(_run(subject="Order O2 cancelled"))
    [w] = r.findings
    assert w.kind == "wrong_value" and w.fields == ("subject",)
    assert w.resource_type == "outbox"
    assert side_effect_summary(r.classification, r.findings)["scope_violation"] == 0


def test_an_extra_change_is_a_blocking_scope_violation() -> None:
    r = _report(_run(extra_cancel=True))
    [x] = r.findings
    assert (x.kind, x.ref) == ("extra", "orders[O2]")
    assert r.gate.counts["scope_violation"] == 1 and r.gate.blocking
    summary = side_effect_summary(r.classification, r.findings)
    assert summary["scope_violation:orders"] == 1


def _sqlite(doc: dict[str, Any], tmp: Path | None) -> Snapshot:
    assert tmp is not None
    path = tmp / f"s{len(list(tmp.iterdir()))}.db"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE customers(handle TEXT PRIMARY KEY, email TEXT, credit REAL, updated_at TEXT);"
        "CREATE TABLE orders(order_id TEXT PRIMARY KEY, customer TEXT, status TEXT, "
        "refund REAL, modified TEXT);"
        "CREATE TABLE order_tags(order_id TEXT, tag TEXT, PRIMARY KEY(order_id, tag));"
        "CREATE TABLE outbox(id TEXT PRIMARY KEY, recipient TEXT, subject TEXT, sent_at TEXT);"
    )
    for h, c in doc["customers"].items():
        con.execute(
            "INSERT INTO customers VALUES (?,?,?,?)", (h, c["email"], c["credit"], c["updated_at"])
        )
    for o in doc["orders"]:
        con.execute(
            "INSERT INTO orders VALUES (?,?,?,?,?)",
            (o["order_id"], o["customer"], o["status"], o["refund"]["amount"], o["modified"]),
        )
        for t in o["tags"]:
            con.execute("INSERT INTO order_tags VALUES (?,?)", (o["order_id"], t))
    for m in doc["outbox"]:
        con.execute(
            "INSERT INTO outbox VALUES (?,?,?,?)", (m["id"], m["to"], m["subject"], m["sent_at"])
        )
    con.commit()
    con.close()
    return snapshot("sqlite", path)


def test_sqlite_correct_omission_wrong_value_and_extra(tmp_path: Path) -> None:
    assert _report(_run(), kind="sqlite", tmp=tmp_path).findings == []
    om = _report(_run(omit_mail=True), kind="sqlite", tmp=tmp_path)
    assert [(f.kind, f.resource_type) for f in om.findings] == [("omission", "outbox")]
    wrong = _report(_run(amount=5.0), kind="sqlite", tmp=tmp_path)
    assert [(f.kind, f.ref, f.fields) for f in wrong.findings] == [
        ("wrong_value", "orders[O1]", ("refund",))
    ]
    extra = _report(_run(extra_cancel=True), kind="sqlite", tmp=tmp_path)
    assert [(f.kind, f.ref) for f in extra.findings] == [("extra", "orders[O2]")]
    assert extra.gate.blocking
