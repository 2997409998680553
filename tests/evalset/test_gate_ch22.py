"""The chapter-22 fixture end to end: the chapter's figures, then the platform's gate on them."""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner
from flywheel.evalset import load_evalset, load_rules, read_trials, run_gate, write_report

from flywheel.cli import cli

FIX = Path(__file__).parent / "fixtures" / "ch22"


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"ch22_{name}", FIX / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def book() -> ModuleType:
    return _module("book_reference")


@pytest.fixture(scope="module")
def gate_result():  # type: ignore[no-untyped-def]
    return run_gate(
        load_evalset(FIX),
        read_trials(FIX / "baseline.jsonl"),
        read_trials(FIX / "candidate.jsonl"),
        load_rules(FIX / "gate.toml"),
    )


def test_chapter_code_prints_the_chapter_figures_on_this_fixture(book: ModuleType) -> None:
    """The reconstruction is the chapter's fixture: its own code reproduces every printed figure."""
    tasks = book.load_jsonl(FIX / "traces.jsonl")
    assert len(tasks) == 12
    first = tasks[0]
    assert (first["task_id"], first["slice"], first["golden"]) == ("refund-en", "locale-en", True)
    assert first["runs"]["candidate"][2] == {
        "final_state": "done",
        "schema_valid": True,
        "policy_ok": False,
        "judge_label": "PASS",
        "tools": ["refund_order"],
    }
    report = book.release_report()
    rows = report["rows"]
    assert len({r["environment_id"] for r in rows}) == 96
    unsafe = [
        (r["task_id"], r["system"], r["trial"])
        for r in rows
        if r["state_pass"] and not r["policy_pass"]
    ]
    assert unsafe == [("refund-en", "candidate", 2), ("cancel-es", "baseline", 3)]
    assert sum(r["success"] for r in rows if r["system"] == "candidate") == 41
    assert sum(r["success"] for r in rows if r["system"] == "baseline") == 35
    judge = report["judge"]
    assert (judge["n"], round(judge["agreement"], 2), round(judge["kappa"], 3)) == (
        100,
        0.89,
        0.736,
    )
    assert (round(judge["fail_recall"], 2), round(judge["position_flip_rate"], 2)) == (0.8, 0.12)
    assert {k: round(v, 3) for k, v in judge["slice_agreement"].items()} == {
        "locale-en": 0.9,
        "locale-es": 0.867,
        "mixed-language": 0.9,
    }
    u = report["uncertainty"]
    assert f"{u['point']:+.3f}" == "+0.125"
    assert (f"{u['low']:+.4f}", f"{u['high']:+.4f}") == ("-0.0208", "+0.2292")
    assert (f"{u['cluster_se']:.4f}", f"{u['mde_80']:.3f}") == ("0.0653", "0.183")
    assert {k: round(v, 3) for k, v in report["slices"]["baseline"].items()} == {
        "locale-en": 0.875,
        "locale-es": 0.688,
        "mixed-language": 0.625,
    }
    assert {k: round(v, 3) for k, v in report["slices"]["candidate"].items()} == {
        "locale-en": 0.875,
        "locale-es": 0.875,
        "mixed-language": 0.812,
    }
    tf = report["trajectory_f1"]
    assert (f"{tf['baseline']:.3f}", f"{tf['candidate']:.3f}") == ("0.947", "0.975")
    fails = [
        r
        for r in rows
        if r["task_id"] == "refund-en" and r["system"] == "candidate" and not r["success"]
    ]
    assert Counter(book.primary_failure(r) for r in fails) == {
        "policy_violation": 1,
        "poor_explanation": 1,
    }
    assert report["verdict"] == "BLOCK"
    assert report["reasons"] == [
        "paired lower bound exceeds the allowed quality loss",
        "must-not-break regression: refund-en",
    ]


def test_derived_files_match_build_script() -> None:
    build = _module("build")
    for name, text in build.build().items():
        assert (FIX / name).read_text() == text, f"{name} drifted; run python build.py in {FIX}"


def test_graders_agree_with_the_chapter_signals(book: ModuleType, gate_result) -> None:  # type: ignore[no-untyped-def]
    """Each platform grader, run on the rendered evidence, gives the chapter's component flag."""
    chapter = {t["task_id"]: t for t in book.load_jsonl(FIX / "traces.jsonl")}
    kinds = {"reply-schema": "schema_valid", "policy": "policy_ok"}
    for arm, trials in gate_result.graded.items():
        for trial in trials:
            task_id, _, index = trial.trial_id.split(":")
            run = chapter[task_id]["runs"][arm][int(index)]
            got = {r.criterion_id: r.verdict.value == "pass" for r in trial.results}
            assert got["final-state"] == (run["final_state"] == "done")
            assert got["explanation"] == (run["judge_label"] == "PASS")
            for cid, flag in kinds.items():
                assert got[cid] == bool(run[flag]), (trial.trial_id, cid)


def test_gate_reproduces_the_chapter_decision(gate_result) -> None:  # type: ignore[no-untyped-def]
    """BLOCK, as in the chapter: the golden regression, and a paired interval that cannot clear.

    The chapter's own interval (the percentile bootstrap) still reproduces to
    the digit; the decision reads the skew-corrected cluster paired t, whose Satterthwaite
    degrees of freedom (4.7, the -0.5 golden task dominates the spread) give
    a wider interval. It reaches below -margin with a 12-task design whose
    MDE (18.3 points) is far above the margin: the chapter's "underpowered on
    purpose" becomes the reason ``insufficient_evidence`` with a plan.
    """
    r = gate_result.report
    assert gate_result.verdict == "BLOCK" and gate_result.exit_code == 2
    assert [x.code for x in gate_result.reasons] == ["insufficient_evidence", "golden_regression"]
    assert "about 20 tasks would be needed" in gate_result.reasons[0].message
    assert "refund-en" in gate_result.reasons[1].message
    assert "baseline 4/4, candidate 2/4" in gate_result.reasons[1].message
    assert (
        r["arms"]["candidate"]["trials"]["accepted"],
        r["arms"]["candidate"]["trials"]["n"],
    ) == (41, 48)
    assert (r["arms"]["baseline"]["trials"]["accepted"], r["arms"]["baseline"]["trials"]["n"]) == (
        35,
        48,
    )
    p = r["paired"]
    assert p["mean_delta"] == pytest.approx(0.125)
    d = p["decision"]
    assert d["method"] == "cluster_paired_t_hall" and d["outcome"] == "insufficient_evidence"
    assert round(d["se"], 4) == 0.0653 and round(d["mde"], 3) == 0.183 and not d["powered"]
    assert d["lo"] < -0.02 < d["hi"] and d["tasks_needed"] == 20
    # "from about -2 to +23 points" (line 5); the chapter's Python-random run gives the same limits.
    ref = p["reference_bootstrap"]
    assert ref["lo"] == pytest.approx(-1 / 48) and ref["lo"] < -0.02
    assert ref["hi"] == pytest.approx(11 / 48)
    assert round(ref["cluster_se"], 4) == 0.0653 and round(ref["mde_80"], 3) == 0.183
    assert p["task_deltas"]["refund-en"] == -0.5
    judge = r["judge"]["records"]["support-judge-v1"]
    assert round(judge["kappa"], 3) == 0.736 and judge["meets_contract"]
    assert round(judge["fail_recall"], 2) == 0.80 and round(judge["position_flip_rate"], 2) == 0.12
    assert r["golden"]["refund-en"]["candidate_failures"] == {
        "policy_violation": 1,
        "poor_explanation": 1,
    }
    assert {k: round(v["rate"], 3) for k, v in r["slices"]["candidate"].items()} == {
        "locale-en": 0.875,
        "locale-es": 0.875,
        "mixed-language": 0.812,
    }
    assert round(r["arms"]["baseline"]["trajectory_f1"], 3) == 0.947
    assert round(r["arms"]["candidate"]["trajectory_f1"], 3) == 0.975
    assert r["arms"]["candidate"]["pass_k"]["k"] == 2


def test_report_files(gate_result, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    paths = write_report(gate_result, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert data["verdict"] == "BLOCK" and len(data["reasons"]) == 2
    md = paths["md"].read_text()
    assert "BLOCK" in md and "must-not-break regression: refund-en" in md
    assert "`cluster_paired_t_hall`" in md and "about **20 tasks**" in md
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _gate_args(
    evalset: Path, out: Path, *, candidate: Path | None = None, rules: Path | None = None
) -> list[str]:
    return [
        "gate",
        "--evalset",
        str(evalset),
        "--baseline",
        str(evalset / "baseline.jsonl"),
        "--candidate",
        str(candidate or evalset / "candidate.jsonl"),
        "--rules",
        str(rules or evalset / "gate.toml"),
        "--out",
        str(out),
    ]


def test_cli_blocks_with_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, [*_gate_args(FIX, tmp_path / "out"), "--json"])
    assert result.exit_code == 2, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] == "BLOCK"
    assert [r["code"] for r in data["reasons"]] == ["insufficient_evidence", "golden_regression"]
    assert (tmp_path / "out" / "report.png").is_file()


def test_cli_ships_with_exit_0_when_the_golden_task_holds(tmp_path: Path) -> None:
    """Repair the two failing refund-en candidate runs: no regression, every delta >= 0."""
    ev = tmp_path / "ev"
    shutil.copytree(FIX, ev)
    lines = []
    for line in (ev / "candidate.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["trial_id"] in ("refund-en:candidate:2", "refund-en:candidate:3"):
            rec["observations"]["tool_calls"] = [{"name": "lookup_order"}, {"name": "refund_order"}]
            rec["observations"]["judge_labels"] = {"support-judge-v1": "PASS"}
        lines.append(json.dumps(rec))
    (ev / "candidate.jsonl").write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(cli, _gate_args(ev, tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "verdict: SHIP" in result.output


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda ev: (ev / "candidate.jsonl").write_text("{not json\n"),
            "candidate.jsonl:1: not valid JSON",
        ),
        (lambda ev: (ev / "gate.toml").write_text("margin = 'x'\n"), "gate.toml: margin"),
        (lambda ev: (ev / "gate.toml").write_text("margn = 0.02\n"), "gate.toml"),
        (lambda ev: (ev / "tasks.jsonl").unlink(), "tasks.jsonl not found"),
        (
            lambda ev: (ev / "candidate.jsonl").write_text(
                (ev / "candidate.jsonl")
                .read_text()
                .replace(
                    '"environment_id": "support-refund-en-s0@v1:candidate:1"',
                    '"environment_id": "support-refund-en-s0@v1:candidate:0"',
                )
            ),
            "is reused",
        ),
    ],
)
def test_cli_bad_input_exits_1_with_one_line(tmp_path: Path, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    ev = tmp_path / "ev"
    shutil.copytree(FIX, ev)
    mutate(ev)
    result = CliRunner().invoke(cli, _gate_args(ev, tmp_path / "out"))
    assert result.exit_code == 1, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_cli_grade_writes_graded_trials(tmp_path: Path) -> None:
    out = tmp_path / "graded.jsonl"
    result = CliRunner().invoke(
        cli,
        [
            "grade",
            "--evalset",
            str(FIX),
            "--trials",
            str(FIX / "candidate.jsonl"),
            "--out",
            str(out),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["accepted"] == 41
    graded = read_trials(out)
    assert all(t.verdict is not None and len(t.results) == 4 for t in graded)
