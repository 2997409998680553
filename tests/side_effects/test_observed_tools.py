"""A tool whose call changed recorded state is a write in the project's tool catalog."""

from __future__ import annotations

from pathlib import Path

from flywheel.side_effects import ToolCall, analyze, snapshot, store_report
from flywheel.tools import project_catalog


def _run(tmp_path: Path, *, writes: bool) -> tuple:
    (tmp_path / "report.txt").write_text("q3: 10")
    s0 = snapshot("dirtree", tmp_path)
    if writes:  # the read-named tool rewrote the file it was asked for
        (tmp_path / "report.txt").write_text("q3: 10 (viewed)")
    st = snapshot("dirtree", tmp_path)
    calls = [ToolCall(name="get_report", args={"path": "report.txt"}, span_id="c0")]
    return analyze(s0, st, calls=calls, step_snapshots=[st]), calls


def test_a_read_named_tool_that_changed_state_is_observed_to_write(store, tmp_path: Path) -> None:
    before = project_catalog(store, "default").semantics("get_report")
    assert before.read_only and before.effect.source == "inferred"
    report, _ = _run(tmp_path, writes=True)
    assert [o.tool for o in report.observed_tools] == ["get_report"]
    assert report.to_json()["observed_tools"][0]["tool"] == "get_report"
    store_report(store, "trial-1", report, trace_id="ab" * 16, project_id="default")
    sem = project_catalog(store, "default").semantics("get_report")
    assert sem.effect.source == "observed" and not sem.read_only
    assert "overrides" in sem.effect.origin
    # another project saw nothing
    assert project_catalog(store, "other").semantics("get_report").read_only


def test_a_call_that_changed_nothing_records_nothing(store, tmp_path: Path) -> None:
    report, _ = _run(tmp_path, writes=False)
    assert report.observed_tools == []
    store_report(store, "trial-2", report, trace_id="cd" * 16, project_id="default")
    assert project_catalog(store, "default").semantics("get_report").read_only


def test_without_a_trace_nothing_is_recorded(store, tmp_path: Path) -> None:
    report, _ = _run(tmp_path, writes=True)
    store_report(store, "trial-3", report, project_id="default")
    assert project_catalog(store, "default").semantics("get_report").read_only
