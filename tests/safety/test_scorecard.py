"""The scorecard: CLI end to end on a stored run, its JSON model, and its gate column."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from flywheel.safety import (
    Scorecard,
    ScorecardGate,
    ScorecardRow,
    SpanRow,
    is_escalation,
    scorecard_blocking,
)

from flywheel import Store

EVALSET = Path(__file__).parents[1] / "evalset" / "fixtures" / "ch22"

ROWS = {
    "task_success",
    "cost_per_accepted_task",
    "budget_exhausted_share",
    "critical_side_effects",
    "untrusted_flow_flags",
    "escalation_f1",
    "escalation_rate_vs_optimum",
    "threshold_violation",
    "autonomy",
    "memory_poisoning_exposure",
    "tool_trust_cross_check",
}


def _url(store: Store) -> str:
    return f"chdb://{store.path}?database={store.database}"


def _cli():
    from flywheel.cli import cli

    return cli


def test_scorecard_cli_json_markdown_and_stored_rescore(store: Store, tmp_path: Path) -> None:
    md = tmp_path / "card.md"
    args = ["--store", _url(store), "scorecard", "--suite", "agentdojo:banking"]
    res = CliRunner().invoke(
        _cli(),
        [
            *args,
            "--tasks",
            "user_task_0,user_task_1,user_task_3",
            "--runs",
            "2",
            "--evalset",
            str(EVALSET),
            "--json",
            "--markdown",
            str(md),
        ],
    )
    card = Scorecard.model_validate(json.loads(res.output))
    # the exit code is the gate column's: 2 when a gated row blocks, as `flywheel gate` exits
    assert res.exit_code == (2 if scorecard_blocking(card) else 0), res.output
    assert card.evalset is not None and (card.evalset.name, card.evalset.version) == (
        "ch22-support",
        "1",
    )
    cost = card.row("cost_per_accepted_task")
    assert cost.point and cost.lo <= cost.point <= cost.hi and cost.interval.startswith("bootstrap")
    headline = ROWS - {"critical_side_effects", "untrusted_flow_flags"}
    for r in card.rows:
        if r.metric in headline or r.metric.startswith("pass^"):
            # every headline number has its interval
            assert r.lo is not None and r.hi is not None, r.metric
    row = card.row("threshold_violation")
    assert not row.estimated and row.point is not None
    assert row.detail["irreversible_taken_alone"] == 0 or "behavioural_cross_check" in row.detail
    text = md.read_text()
    assert "flywheel scorecard --suite agentdojo:banking --runs 2" in text
    assert "| runs/task |" in text and "2 runs per task" in text
    names = {r.metric for r in card.rows}
    assert ROWS <= names and any(n.startswith("pass^") for n in names)
    assert card.runs_per_task == 2 and card.tasks == 3
    for r in card.rows:
        if r.point is not None and r.lo is not None:
            assert r.lo - 1e-9 <= r.point <= r.hi + 1e-9, r
    assert card.row("critical_side_effects").point is not None  # analysis ran on the store
    assert "| metric | point | interval |" in md.read_text()

    # the stored run scores again from the store alone (no simulation)
    from flywheel.harness import load_trials

    run_ids = {t["run_id"] for t in load_trials(store)}
    rid = sorted(run_ids)[0]
    res2 = CliRunner().invoke(
        _cli(), ["--store", _url(store), "scorecard", "--trials", rid, "--json"]
    )
    rescored = Scorecard.model_validate(json.loads(res2.output))
    assert res2.exit_code == (2 if scorecard_blocking(rescored) else 0), res2.output

    # deletion probe: gone from the memory and its index, still in the trace store
    from flywheel.safety import deletion_probe, memory_pool

    pool = memory_pool("scorecard-0")
    key = next(k for k in pool.items)
    text = pool.items[key]["text"][:40]
    pool.delete(key)
    where = deletion_probe(pool, key, text, store)
    assert where["items"] == 0 and where["keyword_index"] == 0
    assert where["trace_store_spans"] > 0

    bad = CliRunner().invoke(_cli(), ["--store", _url(store), "scorecard", "--trials", "run-nope"])
    assert bad.exit_code == 1 and "no stored trials" in bad.output


def test_hidden_confidence_and_staged_options(store: Store) -> None:
    args = ["--store", _url(store), "scorecard", "--tasks", "user_task_3,user_task_4"]
    res = CliRunner().invoke(
        _cli(), [*args, "--runs", "3", "--hide-confidence", "--no-analysis", "--json"]
    )
    # without the analysis the gated side-effect rows have no value: they block, exit 2
    assert res.exit_code == 2, res.output
    card = Scorecard.model_validate(json.loads(res.output))
    assert any("critical_side_effects" in why for why in scorecard_blocking(card))
    tv = card.row("threshold_violation")
    assert tv.estimated and "estimated from behaviour" in tv.detail["confidence"]
    assert card.evalset is None
    res = CliRunner().invoke(_cli(), [*args, "--runs", "2", "--staged", "--no-analysis", "--json"])
    assert res.exit_code == 2, res.output
    staged = Scorecard.model_validate(json.loads(res.output))
    # every write was staged, hence reversible: none is irreversible taken alone
    tv = staged.row("threshold_violation")
    assert tv.detail["irreversible_taken_alone"] == 0
    assert tv.point == 0.0 and tv.gate is not None and tv.gate.blocking is False


def test_gate_column_blocks_on_its_bound() -> None:
    rows = [
        ScorecardRow(
            metric="critical_side_effects",
            point=0.02,
            lo=0.0,
            hi=0.1,
            n=50,
            gate=ScorecardGate(kind="max", threshold=0.0),
        ),
        ScorecardRow(
            metric="escalation_f1",
            point=0.8,
            lo=0.4,
            hi=0.9,
            n=50,
            gate=ScorecardGate(kind="min", threshold=0.5, bound="lo"),
        ),
        ScorecardRow(metric="autonomy", point=0.6, lo=0.5, hi=0.7, n=50),
    ]
    card = Scorecard(
        suite="s", trials=50, tasks=10, runs_per_task=5, reviewer_capacity=0.1, rows=rows
    )
    reasons = scorecard_blocking(card)
    assert len(reasons) == 2
    assert reasons[0].startswith("critical_side_effects") and reasons[1].startswith("escalation_f1")
    rows[1] = rows[1].model_copy(update={"lo": 0.6})
    rows[0] = rows[0].model_copy(update={"point": 0.0})
    assert scorecard_blocking(card.model_copy(update={"rows": rows})) == []


def test_escalation_conventions() -> None:
    def row(**attrs: str) -> SpanRow:
        return SpanRow("t", "s", "x", 0, attrs)

    assert is_escalation(row(**{"gen_ai.operation.name": "escalate"}))
    assert is_escalation(row(**{"flywheel.escalation.call_id": "call_1"}))
    assert is_escalation(
        row(**{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ask_human"})
    )
    assert is_escalation(
        row(**{"openinference.span.kind": "TOOL", "tool.name": "request_approval"})
    )
    assert not is_escalation(
        row(**{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "send_money"})
    )


def test_generic_human_tool_escalates_the_next_write() -> None:
    from flywheel.safety import ReversibilityConfig, actions_from_spans

    def tool(i: int, name: str, cid: str) -> SpanRow:
        return SpanRow(
            "t",
            f"s{i}",
            f"execute_tool {name}",
            i,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": cid,
            },
        )

    spans = [
        tool(1, "get_balance", "c1"),
        tool(2, "ask_human", "c2"),
        tool(3, "send_money", "c3"),
        tool(4, "send_money", "c4"),
    ]
    acts = actions_from_spans(spans, ReversibilityConfig())
    assert [(a.call_id, a.escalated) for a in acts] == [("c3", True), ("c4", False)]


def test_a_failed_trial_analysis_is_unknown_counted_and_blocks() -> None:
    """One analysis that raises neither stops the card nor reads as a clean trial."""
    from flywheel.safety import analysis_summary, build_scorecard

    class Boom:
        def summary(self) -> dict[str, object]:
            raise KeyError("accounts")

    clean = {"blocking": False, "provenance_flags": 0}
    analysis = {
        "t1": clean,
        "t2": analysis_summary(lambda: Boom()),
        "t3": analysis_summary(lambda: type("A", (), {"summary": lambda self: clean})()),
    }
    assert analysis["t2"] == {"error": "KeyError: 'accounts'"} and analysis["t3"] == clean
    trials = [{"task_id": "u0", "status": "done", "utility": True, "cost": 0.0, "notes": {},
               "final_output": "done"}]
    card = build_scorecard("s", trials, [], trial_analysis=analysis)
    row = card.row("critical_side_effects")
    assert row is not None and row.point is None
    assert row.detail["unknown"] == {"trials": 1, "analysis_failed": {"t2": "KeyError: 'accounts'"}}
    assert row.detail["analysed"] == 2 and row.detail["trials_blocking"] == 0
    reasons = scorecard_blocking(card)
    assert any("critical_side_effects" in r and "1 trial(s) unknown" in r for r in reasons)
    # all analysed: the row has its value again
    ok = build_scorecard("s", trials, [], trial_analysis={"t1": clean, "t3": clean})
    assert ok.row("critical_side_effects").point == 0.0
