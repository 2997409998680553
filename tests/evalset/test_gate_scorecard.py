"""The release gate reads the safety scorecard: blocking rows are reasons; bad cards refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flywheel.evalset import (
    Scorecard,
    ScorecardEvalSet,
    ScorecardGate,
    ScorecardRow,
    load_evalset,
    load_rules,
    load_scorecard,
    read_trials,
    render_markdown,
    run_gate,
    scorecard_binding,
    scorecard_reasons,
)

from flywheel.cli import cli
from flywheel.errors import UserError

FIX = Path(__file__).parent / "fixtures" / "ch22"


def _shipping(tmp: Path) -> Path:
    """The chapter-22 fixture with the golden task repaired: the gate alone ships it."""
    ev = tmp / "ev"
    shutil.copytree(FIX, ev)
    lines = []
    for line in (ev / "candidate.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["trial_id"] in ("refund-en:candidate:2", "refund-en:candidate:3"):
            rec["observations"]["tool_calls"] = [{"name": "lookup_order"}, {"name": "refund_order"}]
            rec["observations"]["judge_labels"] = {"support-judge-v1": "PASS"}
        lines.append(json.dumps(rec))
    (ev / "candidate.jsonl").write_text("\n".join(lines) + "\n")
    return ev


def _card(*, blocking: bool, evalset: ScorecardEvalSet | None, **kw: Any) -> Scorecard:
    rows = [
        ScorecardRow(
            metric="task_success",
            point=0.9,
            lo=0.8,
            hi=0.95,
            n=40,
            gate=ScorecardGate(kind="min", threshold=0.5, bound="lo", blocking=False),
        ),
        ScorecardRow(
            metric="threshold_violation",
            point=0.62 if blocking else 0.1,
            lo=0.41 if blocking else 0.02,
            hi=0.79 if blocking else 0.3,
            n=12,
            interval="bootstrap (task positions)",
            estimated=True,
            gate=ScorecardGate(kind="max", threshold=0.5, blocking=blocking),
        ),
        ScorecardRow(metric="autonomy", point=0.7, lo=0.55, hi=0.8, n=42),
    ]
    return Scorecard(
        suite="agentdojo:banking",
        evalset=evalset,
        trials=48,
        tasks=16,
        runs_per_task=3,
        reviewer_capacity=0.1,
        rows=rows,
        **kw,
    )


def _args(ev: Path, out: Path, card: Path | None = None) -> list[str]:
    args = [
        "gate",
        "--evalset",
        str(ev),
        "--baseline",
        str(ev / "baseline.jsonl"),
        "--candidate",
        str(ev / "candidate.jsonl"),
        "--rules",
        str(ev / "gate.toml"),
        "--out",
        str(out),
    ]
    return [*args, "--scorecard", str(card)] if card else args


BOUND = ScorecardEvalSet(name="ch22-support", version="1")


def test_binding_names_the_fixture() -> None:
    assert scorecard_binding(load_evalset(FIX)) == BOUND


def test_blocking_row_blocks_a_shipping_release(tmp_path: Path) -> None:
    ev = _shipping(tmp_path)
    es, rules = load_evalset(ev), load_rules(ev / "gate.toml")
    base, cand = read_trials(ev / "baseline.jsonl"), read_trials(ev / "candidate.jsonl")
    assert run_gate(es, base, cand, rules).verdict == "SHIP"
    passing = run_gate(es, base, cand, rules, scorecard=_card(blocking=False, evalset=BOUND))
    assert passing.verdict == "SHIP" and passing.report["scorecard"]["runs_per_task"] == 3
    res = run_gate(es, base, cand, rules, scorecard=_card(blocking=True, evalset=BOUND))
    assert res.verdict == "BLOCK" and res.exit_code == 2
    [reason] = res.reasons
    assert reason.code == "scorecard"
    for part in ("threshold_violation (estimated)", "0.62", "[0.41, 0.79]", "n=12", "3 runs"):
        assert part in reason.message, reason.message
    assert "threshold 0.5" in reason.message
    rows = {r["metric"]: r for r in res.report["scorecard"]["rows"]}
    assert rows["threshold_violation"]["blocks"] and not rows["task_success"]["blocks"]
    assert res.report["reasons"][0]["code"] == "scorecard"
    assert "`scorecard`: scorecard threshold_violation" in render_markdown(res)


def test_a_gated_row_without_a_value_blocks() -> None:
    card = _card(blocking=False, evalset=BOUND)
    card.rows[1] = ScorecardRow(
        metric="critical_side_effects",
        point=None,
        gate=ScorecardGate(kind="max", threshold=0.0),
    )
    [(metric, why)] = scorecard_reasons(card)
    assert metric == "critical_side_effects" and "has no value" in why


def test_cli_exit_codes_and_outputs(tmp_path: Path) -> None:
    ev = _shipping(tmp_path)
    ok, bad = tmp_path / "ok.json", tmp_path / "bad.json"
    ok.write_text(_card(blocking=False, evalset=BOUND).model_dump_json())
    bad.write_text(_card(blocking=True, evalset=BOUND).model_dump_json())
    res = CliRunner().invoke(cli, _args(ev, tmp_path / "o1", ok))
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, _args(ev, tmp_path / "o2", bad))
    assert res.exit_code == 2, res.output
    assert "verdict: BLOCK" in res.output and "scorecard threshold_violation" in res.output
    md = (tmp_path / "o2" / "report.md").read_text()
    assert "scorecard threshold_violation (estimated) = 0.62" in md
    res = CliRunner().invoke(cli, [*_args(ev, tmp_path / "o3", bad), "--json"])
    assert res.exit_code == 2
    data = json.loads(res.stdout)
    assert [r["code"] for r in data["reasons"]] == ["scorecard"]
    assert data["scorecard"]["evalset"] == {"name": "ch22-support", "version": "1"}


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "not found"),
        ("{not json", "not JSON"),
        ('{"suite": "x"}', "trials"),
        ("WRONG_VERSION", "is for eval set ch22-support@2"),
        ("UNBOUND", "names no eval set"),
        ("INCONSISTENT", "disagrees"),
    ],
)
def test_bad_scorecards_are_user_errors(tmp_path: Path, content: str | None, message: str) -> None:
    ev = _shipping(tmp_path)
    path = tmp_path / "card.json"
    if content == "WRONG_VERSION":
        content = _card(
            blocking=False, evalset=ScorecardEvalSet(name="ch22-support", version="2")
        ).model_dump_json()
    elif content == "UNBOUND":
        content = _card(blocking=False, evalset=None).model_dump_json()
    elif content == "INCONSISTENT":
        doc = json.loads(_card(blocking=True, evalset=BOUND).model_dump_json())
        doc["rows"][1]["gate"]["blocking"] = False  # edited by hand: 0.62 > 0.5 blocks
        content = json.dumps(doc)
    if content is not None:
        path.write_text(content)
    with pytest.raises(UserError, match=message):
        card = load_scorecard(path)
        from flywheel.evalset import check_scorecard_for

        check_scorecard_for(card, "ch22-support", "1")
    res = CliRunner().invoke(cli, _args(ev, tmp_path / "out", path))
    assert res.exit_code == 1, res.output
    assert message in res.output and "Traceback" not in res.output
