"""The harness registers its seams and agents on import."""

from __future__ import annotations

from flywheel import harness


def test_seams_and_agents_are_registered() -> None:
    names = harness.seam_names()
    for seam in harness.SEAMS:
        for mode in harness.MODES:
            assert names[f"{seam}.{mode}"] == (seam, mode)
    expected = {
        "reference",
        "ground_truth",
        "injection_ground_truth",
        "python",
        "subprocess",
        "openai",
    }
    assert expected <= set(harness.agent_names())
    assert "simulation" in (harness.ReferenceAgent.__doc__ or "").lower()
