"""The ``flywheel side-effects`` commands and the per-trial result tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from flywheel.side_effects import (
    Record,
    Scope,
    Snapshot,
    classify,
    derive_scope,
    diff,
    read_result,
    store_result,
)

from flywheel.cli import cli


def _write(path: Path, doc: object) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.fixture
def states(tmp_path: Path) -> tuple[str, str, str]:
    s0 = {"inbox": [{"id": 1, "body": "hello"}], "acl": {"doc-1": {"bob": "read"}}}
    ref = {
        "inbox": [{"id": 1, "body": "hello"}, {"id": 2, "body": "reply"}],
        "acl": {"doc-1": {"bob": "read"}},
    }
    st = {
        "inbox": [{"id": 1, "body": "hello"}, {"id": 2, "body": "reply"}],
        "acl": {"doc-1": {"bob": "read", "eve": "admin"}},
    }
    return (
        _write(tmp_path / "s0.json", s0),
        _write(tmp_path / "ref.json", ref),
        _write(tmp_path / "st.json", st),
    )


def test_scope_then_diff_json(states: tuple[str, str, str], tmp_path: Path) -> None:
    s0, ref, st = states
    runner = CliRunner()
    scope = tmp_path / "scope.json"
    r = runner.invoke(
        cli, ["side-effects", "scope", "--before", s0, "--after", ref, "-o", str(scope)]
    )
    assert r.exit_code == 0, r.output
    r = runner.invoke(
        cli,
        ["side-effects", "diff", "--before", s0, "--after", st, "--scope", str(scope), "--json"],
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["counts"] == {"intended": 1, "benign": 0, "unauthorized": 1}
    bad = [d for d in out["decisions"] if d["status"] == "unauthorized"][0]
    # "doc-1" is not an identifier, so acl is a map; its entry is one record with a field per user
    assert bad["delta"]["resource_type"] == "acl" and bad["delta"]["key"] == ["doc-1"]
    assert bad["delta"]["changes"][0]["field"] == "eve"
    assert [c["category"] for c in bad["categories"]] == ["permission_change"]
    assert out["gate"]["blocking"] is True
    r = runner.invoke(
        cli,
        [
            "side-effects",
            "diff",
            "--before",
            s0,
            "--after",
            st,
            "--scope",
            str(scope),
            "--fail-on-critical",
        ],
    )
    assert r.exit_code == 2 and "unauthorized" in r.output


def test_bad_input_is_one_line_error(states: tuple[str, str, str], tmp_path: Path) -> None:
    s0, _, st = states
    r = CliRunner().invoke(
        cli, ["side-effects", "diff", "--before", str(tmp_path / "nope.json"), "--after", st]
    )
    assert r.exit_code == 1 and "does not exist" in r.output and "Traceback" not in r.output
    bad_scope = _write(tmp_path / "bad_scope.json", {"expected": [{"kind": "exploded"}]})
    r = CliRunner().invoke(
        cli, ["side-effects", "diff", "--before", s0, "--after", st, "--scope", bad_scope]
    )
    assert r.exit_code == 1 and "scope file" in r.output


def test_adapters_listing() -> None:
    r = CliRunner().invoke(cli, ["side-effects", "adapters", "--json"])
    assert r.exit_code == 0 and {"json", "sqlite", "dirtree", "outbox", "permissions"} <= set(
        json.loads(r.output)["adapters"]
    )


def test_store_result_roundtrip(store) -> None:  # noqa: ANN001 - fixture from tests/conftest.py
    s0 = Snapshot.from_records([Record("notes", ("1",), {"t": "x"})])
    s1 = Snapshot.from_records(
        [Record("notes", ("1",), {"t": "y"}), Record("outbox.mail", ("0",), {"b": "z"})]
    )
    deltas = diff(s0, s1)
    scope = derive_scope(deltas[:1])
    cls = classify(deltas, s0, scope)
    assert (
        store_result(
            store, "trial-1", cls, scope=scope, s0_digest=s0.digest(), st_digest=s1.digest()
        )
        == 2
    )
    got = read_result(store, "trial-1")
    assert got is not None and got["unauthorized"] == 1 and got["blocking"] == 1
    assert got["critical"]["external_communication"] == 1
    assert [d["status"] for d in got["deltas"]] == ["intended", "unauthorized"]
    assert Scope.model_validate_json(got["scope"]) == scope
    assert read_result(store, "nope") is None


def test_a_result_stored_before_findings_existed_still_reads(store) -> None:  # noqa: ANN001
    """A version-1 row (written before migration 002's columns) reads with empty findings."""
    now = 1_700_000_000_000_000_000
    store.insert(
        "side_effect_results",
        {
            "project_id": ["default"],
            "trial_id": ["old-1"],
            "trace_id": [""],
            "intended": [1],
            "benign": [0],
            "unauthorized": [0],
            "critical": [{}],
            "blocking": [0],
            "unexplained": [0],
            "writes_without_effect": [0],
            "profile": [""],
            "scope": [""],
            "s0_digest": [""],
            "st_digest": [""],
            "schema_version": [1],
            "created_at": [now],
        },
    )
    store.insert(
        "side_effect_deltas",
        {
            "project_id": ["default"],
            "trial_id": ["old-1"],
            "trace_id": [""],
            "ordinal": [0],
            "kind": ["updated"],
            "resource_type": ["notes"],
            "key": [["1"]],
            "changes": ["{}"],
            "status": ["intended"],
            "rule_id": ["scope:E1"],
            "reason": ["r"],
            "categories": [[]],
            "category_rules": [[]],
            "tier": ["read-only"],
            "transient": [0],
            "span_id": [""],
            "attribution": [""],
            "schema_version": [1],
            "created_at": [now],
        },
    )
    got = read_result(store, "old-1")
    assert got is not None and got["findings"] == [] and got["omissions"] == 0
    assert got["deltas"][0]["fields"] == [] and got["deltas"][0]["outside_scope"] == 0


def test_findings_are_stored_with_the_trial(store) -> None:  # noqa: ANN001
    s0 = Snapshot.from_records(
        [
            Record("orders", ("O1",), {"status": "open"}),
            Record("orders", ("O2",), {"status": "open"}),
        ]
    )
    expected = Snapshot.from_records(
        [
            Record("orders", ("O1",), {"status": "done"}),
            Record("orders", ("O2",), {"status": "open"}),
        ]
    )
    run = Snapshot.from_records(
        [
            Record("orders", ("O1",), {"status": "open"}),
            Record("orders", ("O2",), {"status": "done"}),
        ]
    )
    from flywheel.side_effects import analyze, scope_from_snapshots, store_report

    report = analyze(s0, run, scope=scope_from_snapshots(s0, expected))
    store_report(store, "t-gap", report)
    got = read_result(store, "t-gap")
    assert got is not None
    assert (got["omissions"], got["wrong_values"], got["scope_violations"]) == (1, 0, 1)
    assert sorted(f["kind"] for f in got["findings"]) == ["extra", "omission"]


def test_diff_with_calls_observations_and_stored_trial(
    states: tuple[str, str, str], tmp_path: Path, chdb_dir: str
) -> None:
    s0, _, st = states
    calls = _write(
        tmp_path / "calls.json",
        [
            {"name": "send_message", "args": {"body": "reply"}, "span_id": "a1"},
            {"name": "delete_file", "args": {"path": "x"}, "status": "error", "span_id": "a2"},
        ],
    )
    obs = _write(tmp_path / "obs.json", [{"text": "reply", "source_kind": "user"}])
    url = f"chdb://{chdb_dir}?database=se_cli_{id(tmp_path) % 10**6}"
    args = ["--store", url, "side-effects", "diff", "--before", s0, "--after", st]
    r = CliRunner().invoke(
        cli, [*args, "--calls", calls, "--observations", obs, "--trial-id", "t-42", "--json"]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    rec = out["reconciliation"]
    assert [a["span_ids"] for a in rec["attributions"]] == [["a1"]]
    assert [u["resource_type"] for u in rec["unexplained"]] == ["acl"]
    assert [c["name"] for c in rec["calls"]] == ["delete_file"]
    r = CliRunner().invoke(cli, [*args, "--calls", calls])
    assert "unexplained: acl[doc-1]" in r.output and "write_without_effect" in r.output
    from flywheel import open_store

    with open_store(url) as store:
        got = read_result(store, "t-42")
    assert got is not None and got["unauthorized"] == 2 and len(got["deltas"]) == 2
