"""A second log format, unseen by the signals: LangGraph + OpenInference over OTLP.

Real LangGraph agents with scripted stand-in models (``_langgraph``) export
through the stock OTLP exporter into a live server of the platform; the
attributor reads the stored spans with the same generic signals as every other
trace -- no LangGraph or OpenInference adapter exists. A small variant of
``bench/attribution_langgraph.py`` (which runs all the runs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("openinference.instrumentation.langchain")

from flywheel import Store  # noqa: E402
from tests.attribution import _langgraph as lg  # noqa: E402
from tests.ingest._server import running_server  # noqa: E402

PICK = ("price-ok", "ferry-ok", "ferry-fabricated", "weather-placeholder-city", "museum-gave-up")


def test_langgraph_runs_are_attributed_without_a_format_adapter(
    store: Store, tmp_path: Path
) -> None:
    runs = [r for r in lg.DATA["runs"] if r["id"] in PICK]
    with running_server(store, tmp_path / "wal") as (url, app):
        lg.export_runs(url, runs)
        assert app.state.writer.flush(30)
    recs = {r["run"]: r for r in lg.score(store, runs)}
    assert set(recs) == set(PICK)
    # successful runs: no failure, no category (a derived total is not a made-up figure)
    assert recs["price-ok"]["no_failure_category"] and recs["ferry-ok"]["no_failure_category"]
    for run in ("ferry-fabricated", "weather-placeholder-city", "museum-gave-up"):
        r = recs[run]
        assert r["agent_ok"] and r["span_ok"] and r["category_ok"], (run, r["attribution"])
    # agents are the graph's nodes, read from the span tree (OpenInference names none)
    a = recs["ferry-fabricated"]["attribution"]
    assert a.agent == "researcher" and a.cluster == ""
