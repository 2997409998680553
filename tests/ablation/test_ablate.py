"""`flywheel ablate`: plans, pairing, resumability, horizon formulas, CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from flywheel.ablation import (
    AblationPlan,
    analyse,
    configurations,
    estimate_horizon,
    h50,
    hazard_rate,
    implied_hazard,
    load_plan,
    load_results,
    recovery,
    run_ablation,
    survival,
    to_markdown,
)
from flywheel.harness import AgentSpec

from flywheel import NotFoundError, Store, UserError

TASKS = ("user_task_0", "user_task_1", "user_task_2")


def _plan(**kw: object) -> AblationPlan:
    base = dict(
        suite="agentdojo:banking",
        agent=AgentSpec("reference", {"rates": {"forget_constraint": 0.3}}),
        oracles=("planner", "memory", "verifier"),
        runs=2,
        tasks=TASKS,
    )
    base.update(kw)
    return AblationPlan(**base)  # type: ignore[arg-type]


def test_configurations_marginal_and_lattice() -> None:
    assert configurations(["a_", "b"][:0]) == [()]
    assert configurations(["planner", "memory"]) == [(), ("planner",), ("planner", "memory")]
    lat = configurations(["tools", "retrieval", "memory", "planner", "verifier"], lattice=True)
    assert len(lat) == 32 and lat[0] == () and len(set(lat)) == 32
    with pytest.raises(UserError, match="unknown seam"):
        configurations(["planer"])
    with pytest.raises(UserError, match="at most once"):
        configurations(["planner", "planner"])


def test_trials_are_paired_across_configurations() -> None:
    plan = _plan(lattice=True)
    cells: dict[tuple[str, int], set[int]] = {}
    keys = set()
    for key, spec in plan.trials():
        keys.add(key)
        cells.setdefault((spec.task_id, spec.run_index), set()).add(spec.seed)
    assert len(keys) == 8
    assert len(cells) == len(TASKS) * 2
    assert all(len(seeds) == 1 for seeds in cells.values())  # same seed in every config


def test_run_report_and_resume_after_interruption(store: Store) -> None:
    plan = _plan()
    seen: list[str] = []

    class Interrupt(Exception):
        pass

    def boom(rec: object) -> None:
        seen.append("x")
        if len(seen) == 15:
            raise Interrupt

    with pytest.raises(Interrupt):
        run_ablation(store, plan, chunk=6, on_trial=boom)
    (abl,) = [r["ablation_id"] for r in store.query("SELECT ablation_id FROM ablation_runs")]
    assert load_plan(store, abl) == plan
    partial = load_results(store, abl)
    assert len(partial) == 12  # two whole chunks saved, the interrupted one lost
    with pytest.raises(UserError, match="differ from the stored plan"):
        run_ablation(store, _plan(runs=3), resume=abl)
    run = run_ablation(store, resume=abl, workers=2)
    assert (run.skipped, run.ran) == (12, 24 - 12)
    rows = load_results(store, abl)
    assert len(rows) == 24
    assert len({(r["config_key"], r["task_id"], r["run_index"]) for r in rows}) == 24
    again = run_ablation(store, resume=abl)
    assert again.ran == 0 and again.skipped == 24
    # every trial is a trace in the store
    traces = {r["trace_id"] for r in rows}
    n = store.scalar(
        "SELECT uniqExact(trace_id) AS n FROM agent_steps WHERE has({t:Array(String)}, trace_id)",
        {"t": list(traces)},
    )
    assert n == 24
    rep = analyse(plan, rows, ablation_id=abl)
    assert [c.key for c in rep.configs] == [
        "baseline",
        "+planner",
        "+planner+memory",
        "+planner+memory+verifier",
    ]
    assert sorted(c.rank for c in rep.configs if c.rank) == [1, 2, 3]
    md = to_markdown(rep)
    assert "not additive" in md and "planner, memory, verifier" in md
    doc = rep.to_json()
    json.dumps(doc, allow_nan=False)
    assert doc["configs"][1]["vs_baseline"]["n_tasks"] == 3


def test_resume_unknown_id(store: Store) -> None:
    with pytest.raises(NotFoundError, match="abl-nope"):
        run_ablation(store, resume="abl-nope")


def test_one_run_per_task_gives_newcombe_and_mcnemar(store: Store) -> None:
    plan = _plan(runs=1, oracles=("verifier",))
    run = run_ablation(store, plan)
    rep = analyse(plan, load_results(store, run.ablation_id))
    vs = rep.configs[1].vs_baseline
    assert vs is not None and not math.isnan(vs.newcombe_lo) and 0 <= vs.mcnemar_p <= 1
    assert vs.newcombe_lo <= vs.delta <= vs.newcombe_hi


# -- horizon (playbook, "Horizon is per-step reliability wearing a costume") --------------


def test_h50_is_ln2_over_lambda() -> None:
    assert hazard_rate(0.0) == 0.0 and math.isinf(hazard_rate(1.0))
    assert h50(0.1) == pytest.approx(math.log(2) / -math.log(0.9))
    assert math.isinf(h50(0.0)) and h50(1.0) == 0.0
    assert survival(0.1, h50(0.1)) == pytest.approx(0.5)
    # H50 x 2 <=> h / 2 (exact in lambda, approximate in h for small h)
    assert h50(0.005) / h50(0.01) == pytest.approx(2.0, rel=0.01)
    # recovery is a multiplier: rho = 0.5 doubles H50 like halving h
    h = 0.01
    assert h50(h * (1 - 0.5)) / h50(h) == pytest.approx(2.0, rel=0.01)


def test_implied_hazard_and_recovery_round_trip() -> None:
    h_eff = implied_hazard(survival(0.05, 10), 10)
    assert h_eff == pytest.approx(0.05)
    assert implied_hazard(1.0, 5) == 0.0 and implied_hazard(0.0, 5) == 1.0
    assert math.isnan(implied_hazard(0.5, 0))
    assert recovery(0.2, 0.05) == pytest.approx(0.75)
    assert math.isnan(recovery(0.0, 0.0))


def test_estimate_horizon_from_rows() -> None:
    rows = [
        {
            "utility": True,
            "tool_calls": 4,
            "faults": [{"kind": "wrong_tool", "component": "planner"}],
        },
        {
            "utility": False,
            "tool_calls": 4,
            "faults": [
                {"kind": "skip_verification", "component": "verifier"},
                {"kind": "forget_constraint", "component": "memory"},
            ],
        },
    ]
    est = estimate_horizon(rows)
    assert est.steps == 8 and est.errors == 2 and est.h == pytest.approx(0.25)
    assert est.h_by_component["verifier"] == pytest.approx(1 / 8)
    assert est.h_eff == pytest.approx(1 - 0.5 ** (1 / 4))
    assert est.h50 == pytest.approx(4.0)  # S(4) = 1/2 by construction
    assert est.rho == pytest.approx(1 - est.h_eff / 0.25)
    assert est.errors_in_accepted == pytest.approx(0.5)
    assert est.h50_lo < est.h50 < est.h50_hi
    perfect = estimate_horizon([{"utility": True, "tool_calls": 3, "faults": []}] * 20)
    assert math.isinf(perfect.h50) and 0 < perfect.h50_lo < math.inf  # a finite lower limit
    empty = estimate_horizon([])
    assert empty.trials == 0 and math.isnan(empty.h)


# -- CLI ------------------------------------------------------------------------------------


def _url(store: Store) -> str:
    return f"chdb://{store.path}?database={store.database}"


def test_cli_ablate_json_and_files(store: Store, tmp_path: Path) -> None:
    from flywheel.cli import cli

    out = tmp_path / "rep"
    args = [
        "--store",
        _url(store),
        "ablate",
        "--suite",
        "agentdojo:banking",
        "--tasks",
        ",".join(TASKS),
        "--oracles",
        "planner,verifier",
        "--order",
        "verifier,planner",
        "--runs",
        "2",
        "--hazard",
        "wrong_tool=0.3",
        "--workers",
        "2",
        "--out",
        str(out),
        "--json",
    ]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["order"] == ["verifier", "planner"] and doc["mode"] == "marginal"
    assert [c["key"] for c in doc["configs"]] == ["baseline", "+verifier", "+verifier+planner"]
    assert doc["run"]["ran"] == 18
    assert (out / "ablation.png").stat().st_size > 1000
    assert "not additive" in (out / "report.md").read_text()
    again = CliRunner().invoke(
        cli, ["--store", _url(store), "ablate", "--resume", doc["ablation_id"], "--json"]
    )
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["run"] == {
        **json.loads(again.stdout)["run"],
        "ran": 0,
        "skipped": 18,
    }


def test_cli_ablate_bad_input_is_one_line(store: Store) -> None:
    from flywheel.cli import cli

    res = CliRunner().invoke(
        cli,
        ["--store", _url(store), "ablate", "--suite", "agentdojo:banking", "--oracles", "planer"],
    )
    assert res.exit_code == 1
    assert "unknown seam" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(
        cli,
        [
            "--store",
            _url(store),
            "ablate",
            "--suite",
            "agentdojo:banking",
            "--oracles",
            "planner",
            "--order",
            "memory",
        ],
    )
    assert res.exit_code == 1 and "--order" in res.output


def test_cli_ablate_markdown_with_progress(store: Store) -> None:
    from flywheel.cli import cli

    res = CliRunner().invoke(
        cli,
        [
            "--store",
            _url(store),
            "ablate",
            "--suite",
            "agentdojo:banking",
            "--tasks",
            "user_task_0,user_task_1",
            "--oracles",
            "memory,planner",
            "--lattice",
            "--runs",
            "1",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "Mode: **lattice**" in res.output and "Shapley" in res.output
    assert "ran 8 trial(s)" in res.output
    res = CliRunner().invoke(cli, ["--store", _url(store), "ablate", "--evalset", "x@1"])
    assert res.exit_code == 1 and "no released versions of eval set 'x'" in res.output


def test_shapley_sums_to_the_total_effect() -> None:
    from flywheel.ablation import shapley

    v = {
        frozenset(): 0.4,
        frozenset({"a"}): 0.5,
        frozenset({"b"}): 0.7,
        frozenset({"a", "b"}): 0.75,
    }
    phi = shapley(v, ["a", "b"])
    assert sum(phi.values()) == pytest.approx(0.75 - 0.4)
    assert phi["a"] == pytest.approx(0.5 * (0.1 + 0.05))  # non-additive: a is worth less after b
