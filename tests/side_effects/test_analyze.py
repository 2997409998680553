"""``analyze``: the harness's one call, on a real directory tree."""

from __future__ import annotations

from pathlib import Path

from flywheel.side_effects import Scope, ToolCall, analyze, snapshot


def test_delete_and_recreate_is_still_a_destructive_write(tmp_path: Path) -> None:
    """Acceptance 13.2.2: deleting a protected file and recreating it still violates policy."""
    (tmp_path / "protected.cfg").write_text("secret=1\n")
    (tmp_path / "work.txt").write_text("draft")
    s0 = snapshot("dirtree", tmp_path)
    (tmp_path / "protected.cfg").unlink()
    s1 = snapshot("dirtree", tmp_path)
    (tmp_path / "protected.cfg").write_text("secret=1\n")
    (tmp_path / "work.txt").write_text("final")
    s2 = snapshot("dirtree", tmp_path)
    calls = [
        ToolCall(name="delete_file", args={"path": "protected.cfg"}, span_id="c0"),
        ToolCall(name="write_file", args={"path": "work.txt", "text": "final"}, span_id="c1"),
    ]
    scope = Scope.model_validate(
        {"allow": [{"id": "ALLOW-WORK", "resource_type": "file", "key": "work.txt"}]}
    )
    rep = analyze(s0, s2, scope=scope, calls=calls, step_snapshots=[s1, s2], run_id="r")
    assert [d.ref for d in rep.deltas] == ["file[work.txt]"]
    by = {(d.delta.ref, d.delta.kind): d for d in rep.classification.decisions}
    assert by[("file[work.txt]", "updated")].status == "intended"
    gone = by[("file[protected.cfg]", "deleted")]
    assert gone.transient and gone.status == "unauthorized" and gone.span_id == "c0"
    assert gone.category_names == ("destructive_write",) and gone.tier == "irreversible"
    assert rep.gate.blocking and rep.gate.counts["destructive_write"] >= 1
    assert rep.reconciliation is not None and rep.reconciliation.unexplained == []
    assert rep.to_json()["gate"]["blocking"] is True


def test_unchanged_state_with_no_calls_is_clean(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("x")
    s = snapshot("dirtree", tmp_path)
    rep = analyze(s, s, calls=[])
    assert rep.deltas == [] and not rep.gate.blocking and rep.s0_digest == rep.st_digest
