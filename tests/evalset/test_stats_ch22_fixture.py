"""The statistics on the committed 22.x fixture (built from the text by the gate engineer).

Independent of the reconstruction in test_stats_bootstrap.py: this reads
tests/evalset/fixtures/ch22/ and grades each trial with the seed's conjunction
(22.2: state, schema, policy and judge must all pass), then checks every
statistic the chapter prints. Skipped while the fixture is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flywheel.evalset.stats import (
    cohen_kappa,
    error_burden,
    judge_error_rates,
    paired_cluster_bootstrap,
    pass_at_k,
    pass_hat_k,
    position_flip_rate,
    primary_failure,
    verbosity_control_rate,
)

FIXTURES = Path(__file__).parent / "fixtures" / "ch22"
pytestmark = pytest.mark.skipif(
    not (FIXTURES / "traces.jsonl").exists() or not (FIXTURES / "judge_calibration.json").exists(),
    reason="22.x fixture not committed yet",
)


def _tasks() -> list[dict[str, Any]]:
    text = (FIXTURES / "traces.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _checks(task: dict[str, Any], run: dict[str, Any]) -> dict[str, bool]:
    # 22.6 FAILURE_ORDER: schema, state, policy, judge.
    return {
        "malformed_output": bool(run["schema_valid"]),
        "wrong_final_state": run["final_state"] == task["expected_state"],
        "policy_violation": bool(run["policy_ok"]),
        "poor_explanation": run["judge_label"] == "PASS",
    }


def _success(task: dict[str, Any], system: str) -> list[int]:
    return [int(all(_checks(task, run).values())) for run in task["runs"][system]]


def test_fixture_bootstrap_matches_22_5() -> None:
    tasks = _tasks()
    base = {t["task_id"]: _success(t, "baseline") for t in tasks}
    cand = {t["task_id"]: _success(t, "candidate") for t in tasks}
    assert sum(map(sum, base.values())) == 35 and sum(map(sum, cand.values())) == 41
    res = paired_cluster_bootstrap(base, cand, seed=0)
    assert res.mean_delta == pytest.approx(0.125)
    assert round(res.se, 4) == 0.0653 and round(res.mde, 3) == 0.183
    assert res.lo == pytest.approx(-1 / 48, abs=1 / 48 + 1e-12)
    assert res.hi == pytest.approx(11 / 48, abs=1 / 48 + 1e-12)
    assert res.lo < -0.02  # the 2-point tolerance blocks
    n = np.array([len(v) for v in cand.values()])
    c = np.array([sum(v) for v in cand.values()])
    assert np.all(pass_at_k(n, c, 2) >= pass_hat_k(n, c, 2))


def test_fixture_slices_and_burden_match_22_6() -> None:
    slices, primary, systems = [], [], []
    for task in _tasks():
        for system in ("baseline", "candidate"):
            for run in task["runs"][system]:
                slices.append(task["slice"])
                primary.append(primary_failure(_checks(task, run))[0])
                systems.append(system)
    sel = np.array(systems)
    for system, expected in [
        ("baseline", {"locale-en": 0.875, "locale-es": 0.688, "mixed-language": 0.625}),
        ("candidate", {"locale-en": 0.875, "locale-es": 0.875, "mixed-language": 0.812}),
    ]:
        mask = sel == system
        burden = error_burden(np.array(slices)[mask], np.array(primary, dtype=object)[mask])
        assert {k: round(v.success.point, 3) for k, v in burden.items()} == expected
    refund = next(t for t in _tasks() if t["task_id"] == "refund-en")
    failures = [primary_failure(_checks(refund, r))[0] for r in refund["runs"]["candidate"]]
    assert sorted(f for f in failures if f) == ["policy_violation", "poor_explanation"]


def test_fixture_judge_matches_22_3() -> None:
    payload = json.loads((FIXTURES / "judge_calibration.json").read_text(encoding="utf-8"))
    cells = payload["pointwise_cells"]
    human = [cell["human"] for cell in cells]
    judge = [cell["judge"] for cell in cells]
    counts = [cell["count"] for cell in cells]
    assert round(cohen_kappa(human, judge, counts=counts), 3) == 0.736
    rates = judge_error_rates(judge, human, counts=counts)
    assert rates.n == 100 and round(rates.agreement, 2) == 0.89
    assert round(rates.fail_recall, 2) == 0.80
    pairs = payload["pairwise_cells"]
    flip = position_flip_rate(
        [p["ab"] for p in pairs],
        [p["ba_normalized"] for p in pairs],
        counts=[p["count"] for p in pairs],
    )
    assert round(flip.point, 2) == 0.12
    controls = payload.get("verbosity_control")
    if controls:
        verbosity = verbosity_control_rate(
            [c["pick"] for c in controls], counts=[c["count"] for c in controls]
        )
        assert verbosity.point == pytest.approx(0.40)
