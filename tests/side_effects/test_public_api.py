"""The public surface of ``side_effects`` is pinned: changing it is a decision."""

from __future__ import annotations

from flywheel.side_effects import JsonDocumentAdapter

from flywheel import side_effects


def test_all_is_pinned_and_importable() -> None:
    assert sorted(side_effects.__all__) == sorted(set(side_effects.__all__))
    for name in side_effects.__all__:
        assert hasattr(side_effects, name), name
    assert {
        "Snapshot",
        "diff",
        "classify",
        "derive_scope",
        "reconcile",
        "gate_input",
        "analyze",
        "register_adapter",
        "Scope",
        "Profile",
        "GateInput",
        "store_result",
        "side_effect_summary",
    } <= set(side_effects.__all__)


def test_root_map_of_files() -> None:
    recs = {
        r.rid: dict(r.fields) for r in JsonDocumentAdapter().records({"a.txt": "x", "b.md": "y"})
    }
    assert recs == {("$", ("a.txt",)): {"value": "x"}, ("$", ("b.md",)): {"value": "y"}}
