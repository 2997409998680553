"""`flywheel run` end to end on the embedded store; spans over real OTLP/HTTP into the platform."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner
from flywheel.harness import AgentSpec, TrialSpec, load_trials, otlp_exporter, run_trials

from flywheel import Store


def _url(store: Store) -> str:
    return f"chdb://{store.path}?database={store.database}"


def _cli():
    from flywheel.cli import cli  # imported here: the entry registers every package's commands

    return cli


def test_run_command_json(store: Store) -> None:
    result = CliRunner().invoke(
        _cli(),
        [
            "--store",
            _url(store),
            "run",
            "--suite",
            "agentdojo:banking",
            "--tasks",
            "user_task_0,user_task_3",
            "--runs",
            "2",
            "--workers",
            "2",
            "--oracle",
            "planner",
            "--hazard",
            "wrong_argument=0.5",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["summary"]["trials"] == 4 and doc["seams"]["planner"] == "oracle"
    assert doc["agent"] == {"name": "reference", "args": {"rates": {"wrong_argument": 0.5}}}
    rows = load_trials(store, run_id=doc["run_id"])
    assert len(rows) == 4 and {r["config_id"] for r in rows} == {doc["config_id"]}
    traces = {t["trace_id"] for t in doc["trials"]}
    n = store.scalar(
        "SELECT uniqExact(trace_id) AS n FROM agent_steps WHERE has({t:Array(String)}, trace_id)",
        {"t": list(traces)},
    )
    assert n == 4


def test_run_command_bad_input_is_one_line(store: Store) -> None:
    runner = CliRunner()
    for args, needle in (
        (["--suite", "agentdojo:nope"], "unknown AgentDojo suite"),
        (["--suite", "banking"], "expected agentdojo:"),
        (["--suite", "agentdojo:banking", "--tasks", "user_task_99"], "user_task_99"),
        (["--suite", "agentdojo:banking", "--oracle", "brain"], "unknown seam"),
        (["--suite", "agentdojo:banking", "--hazard", "wrong_tool=2"], "--hazard"),
    ):
        res = runner.invoke(_cli(), ["--store", _url(store), "run", *args])
        assert res.exit_code == 1, (args, res.output)
        assert needle in res.output and "Traceback" not in res.output


def test_spans_reach_the_platform_over_otlp_http(store: Store, tmp_path) -> None:
    from tests.ingest._server import running_server

    with running_server(store, tmp_path / "wal") as (base, _app):
        spec = TrialSpec("agentdojo:slack", "user_task_0", AgentSpec("ground_truth"))
        (rec,) = run_trials([spec], otlp_exporter(base))
        deadline = time.time() + 20
        rows: list[dict] = []
        while time.time() < deadline:
            rows = store.query(
                "SELECT tool_name, arguments, result FROM agent_steps FINAL "
                "WHERE trace_id = {t:String} AND kind = 'tool' ORDER BY start_time",
                {"t": rec.trace_id},
            )
            if rows:
                break
            time.sleep(0.2)
    assert [r["tool_name"] for r in rows] == ["get_webpage"]
    assert json.loads(rows[0]["arguments"]) == {"url": "www.informations.com"}
    assert "job report" in rows[0]["result"]
