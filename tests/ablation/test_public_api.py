"""The public surface of ``ablation`` is what ``__all__`` says, and nothing is missing."""

from __future__ import annotations

from flywheel import ablation


def test_all_names_exist_once() -> None:
    for name in ablation.__all__:
        assert hasattr(ablation, name), name
    assert len(set(ablation.__all__)) == len(ablation.__all__)


def test_seams_and_agents_are_registered() -> None:
    names = ablation.seam_names()
    for seam in ablation.SEAMS:
        for mode in ablation.MODES:
            assert names[f"{seam}.{mode}"] == (seam, mode)
    expected = {
        "reference",
        "ground_truth",
        "injection_ground_truth",
        "python",
        "subprocess",
        "openai",
    }
    assert expected <= set(ablation.agent_names())
    assert "simulation" in (ablation.ReferenceAgent.__doc__ or "").lower()
