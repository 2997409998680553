"""``build_plan``: the ablation command's plan building, callable without the CLI."""

from __future__ import annotations

import pytest
from flywheel.ablation import build_plan, write_outputs

from flywheel import UserError


def test_build_plan_validates_the_options() -> None:
    plan = build_plan(suite="agentdojo:banking", tasks=["user_task_0"], oracles=["planner"],
                      runs=2, hazards=["act=0.1"])
    assert plan.suite == "agentdojo:banking" and plan.oracles == ("planner",) and plan.runs == 2
    assert plan.agent.args["rates"] == {"act": 0.1}
    for kwargs, message in [
        ({"suite": "agentdojo:banking", "evalset": "x@1"}, "two sources"),
        ({}, "give a source"),
        ({"suite": "agentdojo:banking", "skip_unrunnable": True}, "applies to --evalset"),
        ({"suite": "agentdojo:banking", "oracles": ["planner"], "order": ["tools"]}, "--order"),
        ({"suite": "agentdojo:banking", "oracles": []}, "name at least one"),
        ({"suite": "agentdojo:banking", "confidence": 1.0}, "--confidence"),
        ({"suite": "agentdojo:banking", "agent": "ground_truth", "hazards": ["act=0.1"]},
         "--hazard applies"),
    ]:
        with pytest.raises(UserError, match=message):
            build_plan(**kwargs)


def test_write_outputs_refuses_a_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "f").write_text("x")
    with pytest.raises(UserError, match="cannot write the report"):
        write_outputs(None, {}, tmp_path / "f")  # type: ignore[arg-type]
