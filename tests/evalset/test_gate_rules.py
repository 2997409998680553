"""Each blocking rule of the gate on small synthetic eval sets, plus input validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flywheel.evalset import GateRules, Trial, load_evalset, load_rules, read_trials, run_gate
from flywheel.evalset.stats import wilson_interval

from flywheel.errors import UserError

FIX = Path(__file__).parent / "fixtures" / "ch22"


def write_evalset(
    root: Path, n_tasks: int = 6, *, judge: dict[str, Any] | None = None, golden: int | None = None
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n_tasks):
        criteria: list[dict[str, Any]] = [
            {
                "id": "outcome",
                "kind": "custom",
                "grader": {"name": "recorded", "args": {"key": "outcome"}},
            },
            {
                "id": "effects",
                "kind": "side-effect",
                "role": "diagnostic",
                "grader": {"name": "side-effect", "args": {}},
            },
        ]
        if judge is not None:
            criteria.append(
                {"id": "quality", "kind": "judge", "grader": {"name": "judge", "args": judge}}
            )
        lines.append(
            json.dumps(
                {
                    "task_id": f"t{i}",
                    "slice": "a" if i % 2 else "b",
                    "golden": i == golden,
                    "criteria": criteria,
                }
            )
        )
    (root / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    return root


def trials(arm: str, outcomes: list[list[str]], **obs: Any) -> list[Trial]:
    out = []
    for i, runs in enumerate(outcomes):
        for j, verdict in enumerate(runs):
            out.append(
                Trial.model_validate(
                    {
                        "trial_id": f"{arm}-{i}-{j}",
                        "task_id": f"t{i}",
                        "config": {"id": arm},
                        "environment_id": f"env-{arm}-{i}-{j}",
                        "cost_usd": obs.get("cost", 0.01),
                        "observations": {
                            "recorded": {"outcome": verdict},
                            "side_effects": obs.get("effects", {}),
                            "judge_labels": {"j1": "PASS"},
                        },
                    }
                )
            )
    return out


SAME = [
    ["pass", "pass"],
    ["pass", "fail"],
    ["pass", "pass"],
    ["fail", "fail"],
    ["pass", "pass"],
    ["pass", "pass"],
]


def rules(**kw: Any) -> GateRules:
    """A rule whose margin (50 points) six identical tasks can clear, for the other blockers."""
    return GateRules.model_validate(
        {"margin": 0.5, "bootstrap": {"resamples": 2000, "seed": 1}, **kw}
    )


def test_identical_arms_ship_only_with_a_margin_six_tasks_can_show(tmp_path: Path) -> None:
    es = load_evalset(write_evalset(tmp_path / "ev"))
    res = run_gate(es, trials("b", SAME), trials("c", SAME), rules())
    assert res.verdict == "SHIP" and res.exit_code == 0 and res.reasons == []
    assert res.report["paired"]["mean_delta"] == 0.0
    assert res.report["paired"]["method"] == "zero_spread_exact"
    # six identical tasks cannot show a 5-point margin: insufficient evidence, with a plan
    small = run_gate(es, trials("b", SAME), trials("c", SAME), rules(margin=0.05))
    assert small.verdict == "INSUFFICIENT_EVIDENCE" and small.exit_code == 2
    assert [r.code for r in small.reasons] == ["insufficient_evidence"]
    assert "no task delta differs" in small.reasons[0].message
    assert small.report["paired"]["decision"]["tasks_needed"] == 72


def test_critical_side_effect_blocks_even_on_a_diagnostic_criterion(tmp_path: Path) -> None:
    es = load_evalset(write_evalset(tmp_path / "ev"))
    cand = trials("c", SAME)
    cand[3] = cand[3].model_copy(
        update={
            "observations": cand[3].observations.model_copy(
                update={"side_effects": {"external_communication": 1, "resource_creation": 4}}
            )
        }
    )
    res = run_gate(es, trials("b", SAME), cand, rules())
    assert [r.code for r in res.reasons] == ["critical_side_effect"]
    assert "external_communication in c-1-1" in res.reasons[0].message


def test_slice_floor_and_pass_hat_k_floor(tmp_path: Path) -> None:
    es = load_evalset(write_evalset(tmp_path / "ev"))
    res = run_gate(
        es,
        trials("b", SAME),
        trials("c", SAME),
        rules(slices={"floor": 0.5, "floors": {"a": 0.9}}, k=2, min_pass_hat_k=0.9),
    )
    codes = [r.code for r in res.reasons]
    assert codes == ["slice_floor", "pass_hat_k_floor"]
    assert "a 0.500 < 0.9" in res.reasons[0].message
    assert res.report["arms"]["candidate"]["pass_k"]["pass_hat_k"] == pytest.approx(4 / 6)


def test_cost_ceiling_charges_failed_trials(tmp_path: Path) -> None:
    es = load_evalset(write_evalset(tmp_path / "ev"))
    res = run_gate(
        es,
        trials("b", SAME),
        trials("c", SAME, cost=0.09),
        rules(cost={"max_cost_per_accepted_usd": 0.1}),
    )
    # 12 trials x $0.09 over 9 accepted = $0.12 per accepted task
    assert res.report["arms"]["candidate"]["cost"]["per_accepted_usd"] == pytest.approx(0.12)
    assert [r.code for r in res.reasons] == ["cost_ceiling"]


def test_golden_regression_from_rules_list(tmp_path: Path) -> None:
    es = load_evalset(write_evalset(tmp_path / "ev"))
    cand = [r[:] for r in SAME]
    cand[0] = ["pass", "fail"]
    # t1 gains what t0 loses: the paired interval clears the margin, the golden task blocks
    # (a lone loss among six tasks is a left skew: its lower limit falls below -0.5)
    cand[1] = ["pass", "pass"]
    res = run_gate(
        es, trials("b", SAME), trials("c", cand), rules(margin=0.5, golden={"tasks": ["t0"]})
    )
    assert [r.code for r in res.reasons] == ["golden_regression"]
    assert "t0 (baseline 2/2, candidate 1/2: custom_check 1)" in res.reasons[0].message
    with pytest.raises(UserError, match="not in the eval set"):
        run_gate(es, trials("b", SAME), trials("c", SAME), rules(golden={"tasks": ["zz"]}))


def test_unresolved_stay_in_and_get_both_way_bounds(tmp_path: Path) -> None:
    es = load_evalset(write_evalset(tmp_path / "ev"))
    cand = [
        ["pass", "pending"],
        ["pass", "fail"],
        ["unknown", "pass"],
        ["fail", "fail"],
        ["pass", "pass"],
        ["pass", "pass"],
    ]
    res = run_gate(es, trials("b", SAME), trials("c", cand), rules(margin=0.5))
    t = res.report["arms"]["candidate"]["trials"]
    assert (t["n"], t["accepted"], t["pending"], t["unknown"]) == (12, 7, 1, 1)
    assert t["rate"] == pytest.approx(7 / 12) and t["rate_if_unresolved_pass"] == pytest.approx(
        9 / 12
    )
    assert t["lo_if_unresolved_fail"] < 7 / 12 < 9 / 12 < t["hi_if_unresolved_pass"]
    ub = res.report["paired"]["unresolved_bounds"]
    assert ub["against_candidate"]["mean_delta"] == pytest.approx(
        res.report["paired"]["mean_delta"]
    )
    assert ub["for_candidate"]["mean_delta"] == pytest.approx(0.0)
    assert res.report["paired"]["mean_delta"] == pytest.approx(-2 / 12)


def test_judge_contract(tmp_path: Path) -> None:
    # a mandatory judge with no calibration record blocks, and its passes stay unknown
    es = load_evalset(write_evalset(tmp_path / "a", judge={"judge_id": "j1"}))
    res = run_gate(es, trials("b", SAME), trials("c", SAME), rules())
    codes = [r.code for r in res.reasons]
    assert codes == ["judge_contract", "missing_evidence", "missing_evidence"]
    assert "without a calibration record" in res.reasons[0].message
    assert "9 candidate trial(s) could not be graded" in res.reasons[2].message
    assert res.report["arms"]["candidate"]["trials"]["unknown"] == 9
    # a calibrated judge below the contract blocks and names the failed measure
    cal = tmp_path / "b" / "cal.json"
    cal.parent.mkdir()
    cells = json.loads((FIX / "judge_calibration.json").read_text())
    cal.write_text(json.dumps({**cells, "judge_id": "j1"}))
    es = load_evalset(
        write_evalset(tmp_path / "b", judge={"judge_id": "j1", "calibration": "cal.json"})
    )
    res = run_gate(
        es,
        trials("b", SAME),
        trials("c", SAME),
        rules(judge={"min_kappa": 0.6, "max_position_flip_rate": 0.1, "max_verbosity_rate": 0.5}),
    )
    assert [r.code for r in res.reasons] == ["judge_contract"]
    assert "position-flip rate 0.12 > 0.1" in res.reasons[0].message
    ok = run_gate(es, trials("b", SAME), trials("c", SAME), rules(judge={"min_kappa": 0.7}))
    assert ok.verdict == "SHIP"
    strict = run_gate(es, trials("b", SAME), trials("c", SAME), rules(judge={"min_kappa": 0.8}))
    assert "kappa 0.736 < 0.8" in strict.reasons[0].message


def test_single_run_per_task_adds_newcombe_and_mcnemar(tmp_path: Path) -> None:
    es = load_evalset(write_evalset(tmp_path / "ev"))
    b = [["pass"], ["fail"], ["pass"], ["fail"], ["pass"], ["pass"]]
    c = [["pass"], ["pass"], ["pass"], ["pass"], ["fail"], ["pass"]]
    p = run_gate(es, trials("b", b), trials("c", c), rules(margin=0.5)).report["paired"]
    d = p["decision"]
    assert p["method"] == d["method"] == "newcombe_method10"
    assert d["point"] == pytest.approx(1 / 6) and d["cells"] == [3, 1, 2, 0]
    assert 0.0 < d["mcnemar_p"] <= 1.0


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda b, c: (b, c[:-2]), r"candidate has no trials for task\(s\) t5"),
        (
            lambda b, c: (
                b,
                c
                + [
                    c[0].model_copy(
                        update={"trial_id": "x", "task_id": "zz", "environment_id": "q"}
                    )
                ],
            ),
            "task 'zz' is not in the eval set",
        ),
        (
            lambda b, c: (b, c + [c[0].model_copy(update={"trial_id": "x"})]),
            "environment 'env-c-0-0' is reused",
        ),
        (
            lambda b, c: (b, c + [c[0].model_copy(update={"environment_id": "q"})]),
            "trial id 'c-0-0' is reused",
        ),
    ],
)
def test_bad_inputs_raise_user_errors(tmp_path: Path, edit: Any, message: str) -> None:
    es = load_evalset(write_evalset(tmp_path / "ev"))
    b, c = edit(trials("b", SAME), trials("c", SAME))
    with pytest.raises(UserError, match=message):
        run_gate(es, b, c, rules())


def test_rule_file_and_readers_name_the_problem(tmp_path: Path) -> None:
    r = load_rules(FIX / "gate.toml")
    assert (r.margin, r.k, r.bootstrap.seed, r.slices.floor, r.judge.min_kappa) == (
        0.02,
        2,
        22,
        0.75,
        0.6,
    )
    bad = tmp_path / "gate.toml"
    bad.write_text("margin = 0.02\n[judge]\nmin_kappa = 2\n")
    with pytest.raises(UserError, match="judge.min_kappa"):
        load_rules(bad)
    bad.write_text("margin = \n")
    with pytest.raises(UserError, match="not valid TOML"):
        load_rules(bad)
    with pytest.raises(UserError, match="not found"):
        load_rules(tmp_path / "nope.toml")
    trials_file = tmp_path / "t.jsonl"
    good = (FIX / "baseline.jsonl").read_text().splitlines()
    trials_file.write_text(
        good[0] + "\n\n" + good[1].replace('"environment_id"', '"environmentid"') + "\n"
    )
    with pytest.raises(UserError, match=r"t.jsonl:3: invalid trial"):
        read_trials(trials_file)
    trials_file.write_text(good[0] + "\n" + good[0] + "\n")
    with pytest.raises(UserError, match=r"t.jsonl:2: duplicate trial_id"):
        read_trials(trials_file)
    trials_file.write_text("")
    with pytest.raises(UserError, match="holds no trials"):
        read_trials(trials_file)
    ev = write_evalset(tmp_path / "ev")
    (ev / "tasks.jsonl").write_text(
        (ev / "tasks.jsonl").read_text() + '{"task_id": "x", "criteria": []}\n'
    )
    with pytest.raises(UserError, match=r"tasks.jsonl:7: invalid task: criteria"):
        load_evalset(ev)
    (ev / "tasks.jsonl").write_text((FIX / "tasks.jsonl").read_text())
    (ev / "manifest.json").write_text("[1]")
    with pytest.raises(UserError, match="must hold a JSON object"):
        load_evalset(ev)
    with pytest.raises(UserError, match="not a directory"):
        load_evalset(tmp_path / "missing")
    assert load_evalset(FIX).version == "1"


def test_undefined_kappa_blocks_and_report_stays_strict_json(tmp_path: Path) -> None:
    """All cells PASS/PASS: kappa is undefined (13.4.3), the judge counts as not calibrated."""
    from flywheel.evalset import write_report

    ev = write_evalset(tmp_path / "ev", judge={"judge_id": "j1", "calibration": "cal.json"})
    (ev / "cal.json").write_text(
        json.dumps(
            {"judge_id": "j1", "pointwise_cells": [{"human": "PASS", "judge": "PASS", "count": 50}]}
        )
    )
    res = run_gate(load_evalset(ev), trials("b", SAME), trials("c", SAME), rules())
    # the judge's passes stay unknown, so both arms' trials are missing evidence too
    codes = [r.code for r in res.reasons]
    assert codes == ["judge_contract", "missing_evidence", "missing_evidence"]
    assert res.report["judge"]["records"]["j1"]["kappa"] is None
    paths = write_report(res, tmp_path / "out")
    json.loads(paths["json"].read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))


def test_arm_and_slice_intervals_count_tasks_not_runs(tmp_path: Path) -> None:
    """Repeated runs of a task are not independent (22.5): three identical runs of each of 12
    tasks give the Wilson interval of 12 tasks per arm (6 per slice), not of 36 trials."""
    es = load_evalset(write_evalset(tmp_path / "ev", 12))
    outcome = ["pass"] * 3, ["fail"] * 3
    runs = [list(outcome[i % 3 == 0]) for i in range(12)]  # tasks 0, 3, 6, 9 fail every run
    res = run_gate(es, trials("b", runs), trials("c", runs), rules())
    arm = res.report["arms"]["candidate"]["trials"]
    assert (arm["n"], arm["tasks"], arm["accepted"]) == (36, 12, 24)
    ref, naive = wilson_interval(8, 12), wilson_interval(24, 36)
    assert (arm["lo"], arm["hi"]) == pytest.approx((float(ref.lo), float(ref.hi)), rel=1e-9)
    assert arm["lo"] < float(naive.lo) and "Korn-Graubard" in arm["interval"]
    for name, rate in res.report["slices"]["candidate"].items():
        tasks = [i for i in range(12) if ("a" if i % 2 else "b") == name]
        ok = sum(i % 3 != 0 for i in tasks)
        ref = wilson_interval(ok, len(tasks))
        assert (rate["lo"], rate["hi"]) == pytest.approx((float(ref.lo), float(ref.hi)), rel=1e-9)
