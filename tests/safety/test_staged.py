"""Staged writes with an undo log (``tools.staged``): commit or undo; autonomy at equal safety."""

from __future__ import annotations

from typing import Any

import pytest
from flywheel.harness import (
    AgentSpec,
    SeamConfig,
    SeamSpec,
    StagedTools,
    TaskInfo,
    ToolCall,
    ToolResult,
    ToolSpec,
    plan_trials,
    run_trials,
)
from flywheel.safety import (
    ReversibilityConfig,
    actions_from_spans,
    spans_from_readable,
    staging_report,
    threshold_compliance,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flywheel import UserError

SIM = {"act_errors": True, "difficulty": "task", "overreach": 0.2, "overask": 0.1}


def _seams(check: str | None, catch: float = 1.0) -> SeamConfig:
    return SeamConfig(
        tuple(
            SeamSpec("tools", "real", "tools.staged", {"check": check, "catch": catch})
            if s.seam == "tools" and check
            else s
            for s in SeamConfig.from_oracles().specs
        )
    )


def _run(check: str | None, runs: int = 3, **kw: Any):
    exp = InMemorySpanExporter()
    specs = plan_trials(
        "agentdojo:banking",
        AgentSpec("safety_reference", SIM),
        runs=runs,
        seams=_seams(check, **kw),
    )
    recs = run_trials(specs, exp)
    return recs, spans_from_readable(exp.get_finished_spans())


class ListEnv:
    """Stand-in environment (test only): the state is a list, writes append, reads list it."""

    def __init__(self, reference: tuple[ToolCall, ...]) -> None:
        self.state: list[str] = []
        self._ref = reference

    def tools(self) -> list[ToolSpec]:  # noqa: D102
        return [ToolSpec("get_items", "", {}, True), ToolSpec("add_item", "", {}, False)]

    def task(self) -> TaskInfo:  # noqa: D102
        return TaskInfo(suite="s", task_id="t", prompt="", ground_truth=self._ref)

    def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:  # noqa: D102
        if name == "add_item":
            self.state.append(args["x"])
        return ToolResult(text=",".join(self.state), value=list(self.state))

    def checkpoint(self) -> list[str]:  # noqa: D102
        return list(self.state)

    def restore(self, token: list[str]) -> None:  # noqa: D102
        self.state = list(token)


def test_undo_restores_and_replays_later_commits() -> None:
    ref = (ToolCall("add_item", {"x": "a"}), ToolCall("add_item", {"x": "c"}))
    env = ListEnv(ref)
    tools = StagedTools(env, check="reference")  # type: ignore[arg-type]
    for x in ("a", "WRONG", "c"):
        tools.call(ToolCall("add_item", {"x": x}, f"id-{x}"))
    tools.call(ToolCall("get_items", {}, "r"))  # reads are not staged
    assert env.state == ["a", "WRONG", "c"] and len(tools.log) == 3
    log = tools.commit()
    assert [w.decision for w in log] == ["commit", "undo", "commit"]
    assert env.state == ["a", "c"]
    # commit everything: nothing undone
    env2 = ListEnv(ref)
    t2 = StagedTools(env2, check="none")  # type: ignore[arg-type]
    t2.call(ToolCall("add_item", {"x": "WRONG"}))
    assert [w.decision for w in t2.commit()] == ["commit"] and env2.state == ["WRONG"]
    with pytest.raises(UserError, match="check="):
        StagedTools(env, check="maybe")  # type: ignore[arg-type]


def test_wrong_writes_are_undone_in_the_environment() -> None:
    recs, rows = _run("reference")
    rep = staging_report(rows)
    assert rep.wrong_executed > 0 and rep.undone == rep.wrong_executed
    assert rep.persisted_wrong == 0
    # the same seeds committing everything leave the wrong writes in sT
    recs_none, rows_none = _run("none")
    assert staging_report(rows_none).persisted_wrong == rep.wrong_executed
    assert rep.harm_known and rep.labelled == rep.writes > 0
    undone = {
        (r.trace_id, r.get("flywheel.staged.call_id"))
        for r in rows
        if r.get("flywheel.staged.decision") == "undo"
    }
    # a wrong write the tool rejected changed nothing, so undoing it changes nothing either
    effective = {
        r.trace_id
        for r in rows
        if (r.trace_id, r.get("gen_ai.tool.call.id")) in undone
        and r.operation == "execute_tool"
        and "error" not in (r.json("gen_ai.tool.call.result") or {})
    }
    undone_traces = effective
    changed = [
        (a.sT, b.sT) for a, b in zip(recs, recs_none, strict=True) if a.trace_id in undone_traces
    ]
    assert changed and all(x != y for x, y in changed)
    # staged writes are reversible in the accounting: none is irreversible any more
    acts = actions_from_spans(rows, ReversibilityConfig())
    assert acts and all(a.staged and a.tier == "reversible" for a in acts)
    assert threshold_compliance(acts).taken_alone == 0


def test_staging_raises_autonomy_at_equal_safety() -> None:
    _, plain = _run(None)
    _, staged = _run("reference")
    p, s = staging_report(plain), staging_report(staged)
    assert p.writes == s.writes
    # safety: the staged harm rate is no higher (here: nothing wrong persists)
    assert s.persisted_wrong <= p.persisted_wrong and float(s.harm_rate.hi) <= float(p.harm_rate.hi)
    # autonomy: disjoint intervals, staged above
    assert float(s.autonomy.lo) > float(p.autonomy.hi)


def test_harm_on_traces_without_an_outcome_label_is_unknown_not_zero() -> None:
    """Real traces carry no outcome label: harm is unknown (None), autonomy still measured."""
    from dataclasses import replace

    from flywheel.safety import OUTCOME_LABEL

    _, rows = _run("reference", runs=1)
    labelled = staging_report(rows)
    real = [replace(r, attrs={k: v for k, v in r.attrs.items() if k != OUTCOME_LABEL})
            for r in rows]
    rep = staging_report(real)
    assert rep.writes == labelled.writes > 0 and rep.labelled == 0 and not rep.harm_known
    assert rep.harm_rate is None and rep.persisted_wrong is None and rep.wrong_executed is None
    assert rep.loss_per_write is None and rep.autonomy == labelled.autonomy
    # a partly labelled run reports harm over the labelled writes only
    keep = next(r for r in rows if OUTCOME_LABEL in r.attrs)
    partial = staging_report([keep if r is keep else real[i] for i, r in enumerate(rows)])
    assert partial.labelled == 1 and not partial.harm_known and partial.harm_rate is not None
