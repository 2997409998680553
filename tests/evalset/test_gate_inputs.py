"""Every silent path of the gate is now a visible reason or a refusal (issue 18).

Bad input: one line naming the file and line, exit 1, no traceback. Missing
evidence: counted, named, blocking. Too little evidence: a third verdict.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from flywheel.evalset import load_evalset, read_trials_file, run_gate, write_report

from flywheel.cli import cli
from flywheel.errors import UserError

from .test_gate_rules import SAME, rules, trials, write_evalset

FIX = Path(__file__).parent / "fixtures" / "ch22"


def _copy(tmp: Path) -> Path:
    ev = tmp / "ev"
    shutil.copytree(FIX, ev)
    return ev


def _gate(ev: Path, out: Path, *extra: str, candidate: Path | None = None) -> object:
    return CliRunner().invoke(
        cli,
        [
            "gate", "--evalset", str(ev), "--baseline", str(ev / "baseline.jsonl"),
            "--candidate", str(candidate or ev / "candidate.jsonl"), "--rules",
            str(ev / "gate.toml"), "--out", str(out), *extra,
        ],
    )


def _edit_line(path: Path, lineno: int, **changes: object) -> None:
    lines = path.read_text().splitlines()
    rec = json.loads(lines[lineno - 1])
    for key, value in changes.items():
        if key == "config_id":
            rec["config"]["id"] = value
        else:
            rec[key] = value
    lines[lineno - 1] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")


def _one_line_exit_1(result: object, *needles: str) -> None:
    assert result.exit_code == 1, result.output  # type: ignore[attr-defined]
    out = result.output  # type: ignore[attr-defined]
    assert "Traceback" not in out
    assert len(out.strip().splitlines()) == 1, out
    for needle in needles:
        assert needle in out, out


def test_mixed_configuration_ids_are_refused_then_picked(tmp_path: Path) -> None:
    ev = _copy(tmp_path)
    _edit_line(ev / "candidate.jsonl", 7, config_id="candidate_v3")
    res = _gate(ev, tmp_path / "out")
    _one_line_exit_1(res, "candidate.jsonl mixes configurations", "'candidate_v3' (1 trials, first "
                     "at line 7)", "--config-id candidate=ID")
    # picking the 47-trial configuration leaves task 2 with 3 runs: still a full arm
    picked = _gate(ev, tmp_path / "out", "--config-id", "candidate=candidate", "--json")
    assert picked.exit_code == 2, picked.output
    inputs = json.loads(picked.stdout)["inputs"]["candidate"]
    assert inputs == {"config_id": "candidate", "trials": 47, "dropped_other_configs": 1,
                      "source": str(ev / "candidate.jsonl")}
    _one_line_exit_1(_gate(ev, tmp_path / "out", "--config-id", "candidate=nope"),
                     "no trial has config.id 'nope'")
    _one_line_exit_1(_gate(ev, tmp_path / "out", "--config-id", "cand=candidate"),
                     "the arms are baseline and candidate")
    _one_line_exit_1(_gate(ev, tmp_path / "out", "--config-id", "candidate"), "write ARM=ID")


def test_a_trial_of_another_task_version_is_refused(tmp_path: Path) -> None:
    ev = _copy(tmp_path)
    _edit_line(ev / "baseline.jsonl", 5, task_version="2")
    _one_line_exit_1(_gate(ev, tmp_path / "out"), "baseline.jsonl:5", "version '2'",
                     "the eval set holds version '1'")


def test_duplicate_trials_are_refused_with_both_places(tmp_path: Path) -> None:
    ev = _copy(tmp_path)
    first = (ev / "baseline.jsonl").read_text().splitlines()[0]
    rec = json.loads(first)
    rec["config"]["id"] = "candidate"
    with (ev / "candidate.jsonl").open("a") as fh:
        fh.write(json.dumps(rec) + "\n")
    _one_line_exit_1(_gate(ev, tmp_path / "out"), "candidate.jsonl:49",
                     "trial id 'refund-en:baseline:0' is reused", "baseline.jsonl:1")
    # same evidence under a new trial id: its trace id gives it away
    ev2 = _copy(tmp_path / "two")
    lines = (ev2 / "candidate.jsonl").read_text().splitlines()
    a, b = json.loads(lines[0]), json.loads(lines[1])
    a["trace_id"], b["trace_id"] = "trace-1", "trace-1"
    lines[0], lines[1] = json.dumps(a), json.dumps(b)
    (ev2 / "candidate.jsonl").write_text("\n".join(lines) + "\n")
    _one_line_exit_1(_gate(ev2, tmp_path / "out"), "candidate.jsonl:2", "trace id 'trace-1'")


def test_non_utf8_inputs_and_an_out_that_is_a_file(tmp_path: Path) -> None:
    ev = _copy(tmp_path)
    data = (ev / "candidate.jsonl").read_bytes().splitlines()
    data[2] = data[2].replace(b"Update", b"Upd\xe4te")
    (ev / "candidate.jsonl").write_bytes(b"\n".join(data) + b"\n")
    _one_line_exit_1(_gate(ev, tmp_path / "out"), "candidate.jsonl:3: not UTF-8")
    ev = _copy(tmp_path / "two")
    (ev / "gate.toml").write_bytes(b"# r\xe8gle\nmargin = 0.02\n")
    _one_line_exit_1(_gate(ev, tmp_path / "out"), "gate.toml: not UTF-8")
    ev = _copy(tmp_path / "four")
    raw = (ev / "tasks.jsonl").read_bytes()
    (ev / "tasks.jsonl").write_bytes(raw.replace(b"refund", b"r\xfcfund", 1))
    _one_line_exit_1(_gate(ev, tmp_path / "out"), "tasks.jsonl:1: not UTF-8")
    ev = _copy(tmp_path / "three")
    (tmp_path / "afile").write_text("x")
    _one_line_exit_1(_gate(ev, tmp_path / "afile"), "--out", "is a file")
    _one_line_exit_1(_gate(ev, tmp_path / "afile" / "sub"), "is a file, not a directory")


def test_three_identical_tasks_are_insufficient_evidence_not_a_ship(tmp_path: Path) -> None:
    """The issue's case: 3 identical one-run tasks shipped with [0, 0]."""
    es = load_evalset(write_evalset(tmp_path / "ev", 3))
    same = [["pass"], ["pass"], ["fail"]]
    res = run_gate(es, trials("b", same), trials("c", same), rules(margin=0.02))
    assert res.verdict == "INSUFFICIENT_EVIDENCE" and res.exit_code == 2
    d = res.report["paired"]["decision"]
    assert d["method"] == "newcombe_method10" and d["cells"] == [2, 0, 0, 1]
    assert d["lo"] < -0.4 and d["hi"] > 0.4 and d["mcnemar_p"] == 1.0
    assert d["tasks_needed"] == 183 and "exact bound" in d["plan"]
    assert res.report["paired"]["reference_bootstrap"]["lo"] == 0.0  # what used to ship
    paths = write_report(res, tmp_path / "out")
    md = paths["md"].read_text()
    assert "INSUFFICIENT_EVIDENCE" in md and "about **183 tasks**" in md
    assert paths["png"].read_bytes()[:4] == b"\x89PNG"


def test_missing_grades_block_and_are_named(tmp_path: Path) -> None:
    """An unknown mandatory grade in the baseline would have flattered the candidate."""
    es = load_evalset(write_evalset(tmp_path / "ev"))
    base = [r[:] for r in SAME]
    base[0] = ["unknown", "pass"]
    res = run_gate(es, trials("b", base), trials("c", SAME), rules())
    assert res.verdict == "INSUFFICIENT_EVIDENCE"
    assert [r.code for r in res.reasons] == ["missing_evidence"]
    assert "1 baseline trial(s) could not be graded" in res.reasons[0].message
    assert "b-0-0" in res.reasons[0].message and "outcome (1 unknown" in res.reasons[0].message
    assert res.report["missing_evidence"]["baseline"]["criteria"]["outcome"]["trials"] == ["b-0-0"]


def test_a_failed_side_effect_analysis_blocks_instead_of_reading_as_zero(tmp_path: Path) -> None:
    es = load_evalset(write_evalset(tmp_path / "ev"))
    cand = trials("c", SAME)
    lost = cand[4].observations.model_copy(
        update={"side_effects": None, "side_effects_error": "KeyError: 'accounts'"}
    )
    cand[4] = cand[4].model_copy(update={"observations": lost})
    res = run_gate(es, trials("b", SAME), cand, rules())
    assert [r.code for r in res.reasons] == ["missing_evidence"]
    assert "side-effect analysis failed for 1 candidate trial(s) (c-2-0" in res.reasons[0].message
    assert "KeyError: 'accounts'" in res.reasons[0].message
    se = res.report["side_effects"]
    assert se["unknown"]["analysis_failed"] == {"c-2-0": "KeyError: 'accounts'"}
    assert se["analysed"] == 11
    graded = next(t for t in res.graded["candidate"] if t.trial_id == "c-2-0")
    effects = next(r for r in graded.results if r.criterion_id == "effects")
    assert effects.verdict.value == "unknown" and "analysis failed: KeyError" in effects.reason


def test_scope_violation_is_critical_by_default_and_the_list_is_generic(tmp_path: Path) -> None:
    es = load_evalset(write_evalset(tmp_path / "ev"))
    cand = trials("c", SAME)
    obs = cand[0].observations.model_copy(update={"side_effects": {"scope_violation": 2}})
    cand[0] = cand[0].model_copy(update={"observations": obs})
    res = run_gate(es, trials("b", SAME), cand, rules())
    assert [r.code for r in res.reasons] == ["critical_side_effect"]
    assert "scope_violation in c-0-0x2" in res.reasons[0].message
    # any category the rules list is critical; one they leave out is not
    custom = run_gate(es, trials("b", SAME), cand,
                      rules(side_effects={"critical": ["resource_creation"]}))
    assert custom.reasons == []
    obs = cand[0].observations.model_copy(update={"side_effects": {"resource_creation": 1}})
    cand[0] = cand[0].model_copy(update={"observations": obs})
    custom = run_gate(es, trials("b", SAME), cand,
                      rules(side_effects={"critical": ["resource_creation"]}))
    assert [r.code for r in custom.reasons] == ["critical_side_effect"]


def test_required_side_effects_block_trials_without_a_summary(tmp_path: Path) -> None:
    es = load_evalset(write_evalset(tmp_path / "ev"))
    cand = trials("c", SAME)
    obs = cand[1].observations.model_copy(update={"side_effects": None})
    cand[1] = cand[1].model_copy(update={"observations": obs})
    res = run_gate(es, trials("b", SAME), cand, rules(side_effects={"required": True}))
    assert [r.code for r in res.reasons] == ["missing_evidence"]
    assert "carry no side-effect summary although the rules require one: c-0-1" in (
        res.reasons[0].message
    )


def test_api_errors_name_file_and_line(tmp_path: Path) -> None:
    ev = _copy(tmp_path)
    _edit_line(ev / "candidate.jsonl", 9, task_id="nope")
    with pytest.raises(UserError, match=r"candidate.jsonl:9 \(candidate trial .*task 'nope'"):
        run_gate(load_evalset(ev), read_trials_file(ev / "baseline.jsonl"),
                 read_trials_file(ev / "candidate.jsonl"), rules())


@pytest.mark.parametrize("n_tasks", [3, 45, 150])
def test_report_png_from_a_few_to_many_tasks(tmp_path: Path, n_tasks: int) -> None:
    """Dots with ids (3), dots without (45), a histogram of task counts (150); valid PNGs."""
    es = load_evalset(write_evalset(tmp_path / "ev", n_tasks, golden=1))
    rng = np.random.default_rng(n_tasks)
    base = [["pass" if x else "fail"] for x in rng.random(n_tasks) < 0.6]
    cand = [["pass" if x else "fail"] for x in rng.random(n_tasks) < 0.65]
    res = run_gate(es, trials("b", base), trials("c", cand), rules(margin=0.02))
    paths = write_report(res, tmp_path / "out")
    png = paths["png"].read_bytes()
    assert png[:4] == b"\x89PNG" and len(png) > 20_000


@pytest.mark.parametrize(
    ("deltas", "dots", "says_no_evidence"),
    [
        ({"t0": 0.0, "t1": 0.0, "t2": 0.0}, True, True),
        ({f"t{i}": (i % 7 - 3) / 3 for i in range(10_000)}, False, False),
        ({f"t{i}": 0.0 for i in range(10_000)}, False, True),
    ],
)
def test_per_task_panel_from_3_to_10000_tasks_and_the_no_evidence_state(
    deltas: dict[str, float], dots: bool, says_no_evidence: bool
) -> None:
    """Dots with ids at 3 tasks; a bar per delta level with its count at 10,000; when no task
    differs the panel says there is no evidence either way (not that nothing was harmed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from flywheel.evalset._report import _per_task

    fig, ax = plt.subplots()
    r = {"paired": {"task_deltas": deltas, "decision": {"margin": 0.02}}, "golden": {"t1": {}}}
    _per_task(ax, r)
    texts = [t.get_text() for t in ax.texts]
    assert any("no evidence either way" in t for t in texts) == says_no_evidence
    assert f"{len(deltas)} tasks:" in ax.get_title(loc="left")
    if dots:
        assert [t.get_text() for t in ax.get_xticklabels()] == ["t0", "t1", "t2"]
    else:
        counts = sorted(int(p.get_height()) for p in ax.patches)
        assert sum(counts) == len(deltas) and len(counts) == len(set(deltas.values()))
    plt.close(fig)
