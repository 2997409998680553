"""Attribution against a real store: Who&When import, provenance walk, table, CLI, API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flywheel.attribution import (
    attribute_trace,
    import_whowhen,
    load_trace,
    read_attribution,
    read_labels,
    save_attributions,
    select_traces,
    trace_id_for,
)

from flywheel import NotFoundError, Store

LOG = {
    "question": "What is the population difference?",
    "mistake_agent": "Analyst",
    "mistake_step": "2",
    "mistake_reason": "made up the figures",
    "history": [
        {
            "role": "assistant",
            "name": "Planner",
            "content": "Task: population difference of A and B.",
        },
        {"role": "user", "name": "Computer_terminal", "content": "There is no code to execute."},
        {
            "role": "user",
            "name": "Analyst",
            "content": "A has 737,015 people and B 4,965.\n```python\nprint(737015 - 4965)\n```",
        },
        {
            "role": "user",
            "name": "Computer_terminal",
            "content": "exitcode: 0 (execution succeeded)\nCode output: 732050",
        },
        {"role": "user", "name": "Checker", "content": "Verified: 732050. TERMINATE"},
    ],
}


def _kv(k: str, v: Any) -> dict[str, Any]:
    return {"key": k, "value": {"stringValue": v}}


def _tool_span(i: int, name: str, args: dict[str, Any], result: Any) -> dict[str, Any]:
    start = 1_735_689_600_000_000_000 + i * 10**9
    return {
        "traceId": "ab" * 16,
        "spanId": f"{i:016x}",
        "name": f"execute_tool {name}",
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 10**8),
        "attributes": [
            _kv("gen_ai.operation.name", "execute_tool"),
            _kv("gen_ai.tool.name", name),
            _kv("gen_ai.tool.call.arguments", json.dumps(args)),
            _kv("gen_ai.tool.call.result", json.dumps(result)),
            _kv("gen_ai.agent.name", "support"),
        ],
        "status": {},
    }


def _store_refund_trace(store: Store) -> str:
    from flywheel.ingest import decode_request, parse_request

    spans = [
        _tool_span(1, "get_last_charge", {"customer": "c-17"}, {"amount": "1234.50 EUR"}),
        _tool_span(2, "get_last_charge", {"customer": "c-17"}, {"amount": "999.25 EUR"}),
        _tool_span(3, "refund", {"amount": "1234.50 EUR"}, {"ok": True}),
    ]
    req = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_kv("service.name", "shop")]},
                "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}],
            }
        ]
    }
    batch = decode_request(parse_request(json.dumps(req).encode(), "application/json"))
    store.insert(store.otel_table, batch.table)
    return "ab" * 16


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    d = tmp_path / "algorithm-generated"
    d.mkdir()
    (d / "1.json").write_text(json.dumps(LOG))
    (d / "2.json").write_text(json.dumps({**LOG, "history": LOG["history"][:2]}))
    return tmp_path


def test_whowhen_import_is_idempotent_and_labels_stay_out_of_reach(
    store: Store, logs: Path
) -> None:
    ids = import_whowhen(store, logs)
    import_whowhen(store, logs)
    assert ids == [trace_id_for("algorithm-generated/1"), trace_id_for("algorithm-generated/2")]
    assert store.scalar("SELECT count() AS n FROM otel_traces") == 7
    steps = load_trace(store, ids[0])
    assert [s.agent for s in steps] == [m["name"] for m in LOG["history"]]
    assert [s.kind for s in steps] == ["llm", "tool", "llm", "tool", "llm"]
    assert not any(k.startswith("whowhen.label") for s in steps for k in s.attributes)
    labels = read_labels(store)
    assert labels[ids[0]]["mistake_agent"] == "Analyst" and labels[ids[0]]["mistake_step"] == "2"


def test_whowhen_attribution_names_the_fabricating_agent(store: Store, logs: Path) -> None:
    tid = import_whowhen(store, logs)[0]
    a = attribute_trace(store, tid, assume_failed=True)
    assert (a.causal_index, a.agent, a.category) == (2, "Analyst", "perception")


def test_stale_read_through_stored_provenance(store: Store) -> None:
    tid = _store_refund_trace(store)
    a = attribute_trace(store, tid)
    assert a.surfaced_index == 2 and a.causal_index == 0, a.evidence
    assert a.category == "perception" and a.agent == "support"
    chosen = [e for e in a.evidence if e["chosen"]]
    assert chosen[0]["kind"] == "stale_argument"


def test_attributions_table_round_trip_and_batch_selection(store: Store, logs: Path) -> None:
    ids = import_whowhen(store, logs)
    a = attribute_trace(store, ids[0], assume_failed=True)
    save_attributions(store, [a])
    save_attributions(store, [a])  # a recomputation replaces, never duplicates
    back = read_attribution(store, ids[0])
    assert (back.causal_index, back.agent, back.category) == (a.causal_index, a.agent, a.category)
    assert back.evidence == json.loads(json.dumps(a.evidence))
    assert store.scalar("SELECT count() AS n FROM attributions FINAL") == 1
    with pytest.raises(NotFoundError):
        read_attribution(store, ids[1])
    assert sorted(select_traces(store, service="whowhen:algorithm-generated")) == sorted(ids)
    assert select_traces(store, service="nope") == []
    assert select_traces(store, since_ns=2_000_000_000_000_000_000) == []


def _cli(store: Store):  # noqa: ANN202
    from flywheel.cli import cli

    url = f"chdb://{store.path}?database={store.database}"
    runner = CliRunner()
    return lambda *args: runner.invoke(cli, ["--store", url, *args])


def test_cli_import_attribute_one_and_all(store: Store, logs: Path) -> None:
    run = _cli(store)
    r = run("import-whowhen", str(logs), "--json")
    assert r.exit_code == 0, r.output
    ids = json.loads(r.output)["traces"]
    r = run("attribute", ids[0], "--failed", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["agent"] == "Analyst"
    r = run("attribute", ids[0], "--failed")
    assert "perception" in r.output and "Analyst" in r.output
    r = run("attribute", "--all", "--service", "whowhen:algorithm-generated", "--failed", "--json")
    assert r.exit_code == 0, r.output
    assert sorted(x["trace_id"] for x in json.loads(r.output)) == sorted(ids)
    assert store.scalar("SELECT count() AS n FROM attributions FINAL") == 2
    r = run("attribute", "--all", "--since", "1d")  # the logs are dated 2025
    assert r.exit_code == 0 and "0 trace(s) attributed" in r.output, r.output
    assert run("attribute", "--all", "--since", "yesterday-ish").exit_code == 1
    assert run("attribute").exit_code == 1
    assert run("attribute", ids[0], "--all").exit_code == 1
    missing = run("attribute", "f" * 32)
    assert missing.exit_code != 0 and "not found" in missing.output
    assert run("import-whowhen", str(logs / "nope")).exit_code == 1


def test_trace_api_shows_the_attribution(store: Store) -> None:
    from fastapi.testclient import TestClient

    from flywheel import Settings, create_app
    from tests._auth import key_headers

    tid = _store_refund_trace(store)
    app = create_app(Settings(), store)
    headers = key_headers(store, "read")
    body = TestClient(app).get(f"/api/traces/{tid}/attribution", headers=headers).json()
    first = body["attributions"][0]
    assert first["attributor"] == "deterministic" and first["causal_index"] == 0
    assert read_attribution(store, tid).category == "perception"


def test_a_near_constant_batch_is_reported(store: Store, tmp_path: Path) -> None:
    d = tmp_path / "algorithm-generated"
    d.mkdir()
    for i in range(3):
        (d / f"{i}.json").write_text(json.dumps(LOG))
    run = _cli(store)
    assert run("import-whowhen", str(tmp_path), "--json").exit_code == 0
    r = run("attribute", "--all", "--failed", "--json")
    assert r.exit_code == 0 and len(json.loads(r.stdout)) == 3  # stdout stays JSON
    assert "near-constant output: perception is 3 of 3 answers" in r.stderr
    r = run("attribute", "--all", "--failed")
    assert "categories: perception 3" in r.stdout and "near-constant" in r.stderr


def test_category_distribution_counts_and_warns_above_the_share() -> None:
    from flywheel.attribution import category_distribution

    d = category_distribution(["perception"] * 6 + ["planning"] * 4)
    assert d["counts"] == [["perception", 6], ["planning", 4]] and d["warning"] == ""
    d = category_distribution(["unknown"] * 7 + ["planning"] * 3)  # abstaining counts too
    assert d["top"] == "unknown" and d["top_share"] == 0.7 and "unknown is 7 of 10" in d["warning"]
    assert category_distribution([])["warning"] == "" and category_distribution(["x"])["total"] == 1
