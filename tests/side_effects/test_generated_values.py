"""Values a run generates, recognised from one expected snapshot: epoch clocks, generated keys.

A small ledger of its own (accounts keyed by e-mail with an epoch-second
``touched`` field, payments keyed by a random slug, account phones as a
composite-key table in SQLite), distinct from the corpora the benches use.
"""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

from flywheel.side_effects import Snapshot, analyze, scope_from_snapshots, snapshot

S0: dict[str, Any] = {
    "accounts": {
        "mia@ex.org": {"due": 120.0, "touched": 1736000000, "phones": ["+1 555 0100"]},
        "raj@ex.org": {"due": 40.0, "touched": 1736000400, "phones": []},
    },
    "payments": {"q_1a2b3c4d": {"account": "raj@ex.org", "amount": 10.0}},
}


def _pay(
    doc: dict[str, Any],
    slug: str,
    touched: int,
    amount: float = 120.0,
    who: str = "mia@ex.org",
    phone: str = "+1 555 0199",
) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    acct = doc["accounts"][who]
    acct["due"] = acct["due"] - amount
    acct["touched"] = touched
    acct["phones"] = [*acct["phones"], phone]
    doc["payments"][slug] = {"account": who, "amount": amount}
    return doc


EXPECTED = _pay(S0, "q_9f8e7d6c", 1740001237)


def _json(doc: Any) -> Snapshot:
    return snapshot("json", doc)


def _sqlite(doc: dict[str, Any], tmp: Path) -> Snapshot:
    path = tmp / f"s{len(list(tmp.iterdir()))}.db"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE accounts(email TEXT PRIMARY KEY, due REAL, touched INTEGER);"
        "CREATE TABLE account_phones(email TEXT, phone TEXT, PRIMARY KEY(email, phone));"
        "CREATE TABLE payments(pid TEXT PRIMARY KEY, account TEXT, amount REAL);"
    )
    for email, a in doc["accounts"].items():
        con.execute("INSERT INTO accounts VALUES (?,?,?)", (email, a["due"], a["touched"]))
        for p in a["phones"]:
            con.execute("INSERT INTO account_phones VALUES (?,?)", (email, p))
    for pid, p in doc["payments"].items():
        con.execute("INSERT INTO payments VALUES (?,?,?)", (pid, p["account"], p["amount"]))
    con.commit()
    con.close()
    return snapshot("sqlite", path)


def _findings(after: dict[str, Any], load: Any) -> list[tuple[str, str, tuple[str, ...]]]:
    s0 = load(S0)
    r = analyze(s0, load(after), scope=scope_from_snapshots(s0, load(EXPECTED)))
    return sorted((f.kind, f.ref, f.fields) for f in r.findings)


def test_an_epoch_clock_and_a_random_slug_key_fit_another_correct_run(tmp_path: Path) -> None:
    # another run: another second on the clock, another slug from the same generator
    rerun = _pay(S0, "q_0c1d2e3f", 1741234567)
    assert _findings(rerun, _json) == []
    assert _findings(rerun, lambda d: _sqlite(d, tmp_path)) == []


def test_a_clock_on_the_minute_is_content_not_a_machine_clock() -> None:
    # a time a person chose (on the minute, no clock-like name, one write) is compared
    s0 = {"visits": {"v1": {"slot": 1736000000}}}
    exp = {"visits": {"v1": {"slot": 1740000000}}}
    got = {"visits": {"v1": {"slot": 1740003600}}}
    scope = scope_from_snapshots(_json(s0), _json(exp))
    r = analyze(_json(s0), _json(got), scope=scope)
    assert [(f.kind, f.fields) for f in r.findings] == [("wrong_value", ("slot",))]


def test_a_chosen_key_does_not_match_by_role() -> None:
    # a payment filed under a name the call chose is not the expected one
    s0 = {"tags": {}}
    exp = {"tags": {"Dora": {"colour": "red"}}}
    got = {"tags": {"Charlie": {"colour": "red"}}}
    scope = scope_from_snapshots(_json(s0), _json(exp))
    r = analyze(_json(s0), _json(got), scope=scope)
    assert sorted(f.kind for f in r.findings) == ["extra", "omission"]


def test_a_wrong_key_column_is_named_in_sqlite(tmp_path: Path) -> None:
    wrong_phone = _pay(S0, "q_0c1d2e3f", 1741234567, phone="+1 555 0198")
    got = _findings(wrong_phone, lambda d: _sqlite(d, tmp_path))
    assert got == [("wrong_value", "account_phones[mia@ex.org/+1 555 0198]", ("phone",))]
    wrong_amount = _pay(S0, "q_0c1d2e3f", 1741234567, amount=100.0)
    kinds = _findings(wrong_amount, lambda d: _sqlite(d, tmp_path))
    assert ("wrong_value", "payments[q_0c1d2e3f]", ("amount",)) in kinds
    assert all(k != "extra" for k, _, _ in kinds)


def _pets_db(tmp: Path, pets: list[tuple[str, str]]) -> Snapshot:
    path = tmp / f"p{len(list(tmp.iterdir()))}.db"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE owners(handle TEXT PRIMARY KEY, n INTEGER);"
        "CREATE TABLE pets(owner TEXT, name TEXT, species TEXT, PRIMARY KEY(owner, name));"
        "INSERT INTO owners VALUES ('ann_k_1234', 1), ('bob_m_9876', 2);"
    )
    con.executemany("INSERT INTO pets VALUES (?, ?, 'dog')", pets)
    con.commit()
    con.close()
    return snapshot("sqlite", path)


def test_a_key_part_naming_a_record_already_there_must_be_equal(tmp_path: Path) -> None:
    # a pet row filed under another existing owner is not the expected row, though
    # the two handles have one shape (letters, digits, the same separators)
    s0 = _pets_db(tmp_path, [])
    scope = scope_from_snapshots(s0, _pets_db(tmp_path, [("ann_k_1234", "Luna")]))
    r = analyze(s0, _pets_db(tmp_path, [("bob_m_9876", "Luna")]), scope=scope)
    assert [(f.kind, f.fields) for f in r.findings] == [("wrong_value", ("owner",))]
    # a new generated id in the same place still matches by role
    scope2 = scope_from_snapshots(s0, _pets_db(tmp_path, [("ann_k_1234", "p_1a2b3c4d")]))
    r2 = analyze(s0, _pets_db(tmp_path, [("ann_k_1234", "p_9f9f0e0e")]), scope=scope2)
    assert r2.findings == []
