"""`flywheel ablate --evalset NAME@VERSION`: released tasks, their environments, their graders.

The main test goes the whole way: harness traces of banking tasks -> promote
(sample, dedupe, redact, draft with ``metadata.environment``, review,
release) -> ``ablate --evalset`` through the CLI with 2 oracles x 2 runs ->
every trial graded by its task's criteria (a task with a criterion that
cannot pass is accepted in no configuration).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flywheel.ablation import AblationPlan, EvalUnit, load_results, task_environment
from flywheel.evalset import (
    Criterion,
    GraderSpec,
    Task,
    load_trials,
    release_from_store,
    release_tasks,
)
from flywheel.harness import (
    AGENTDOJO_UTILITY,
    AgentSpec,
    StoreSpanExporter,
    parse_agent,
    plan_trials,
    run_trials,
)
from flywheel.promote import (
    SamplingPolicy,
    dedupe_candidates,
    draft_candidates,
    record_event,
    redact_candidates,
    review_state,
    sample_candidates,
)

from flywheel import Store, UserError, canonical_json

IMPOSSIBLE = {
    "id": "impossible",
    "kind": "state",
    "role": "mandatory",
    "grader": {
        "name": "state",
        "args": {"assertions": [{"path": "/no/such/field", "op": "equals", "value": 1}]},
    },
    "description": "Cannot pass: the path never resolves.",
}


def _url(store: Store) -> str:
    return f"chdb://{store.path}?database={store.database}"


def _ablate(store: Store, *args: str) -> Any:
    from flywheel.cli import cli

    return CliRunner().invoke(cli, ["--store", _url(store), "ablate", *args])


def _promote_release(store: Store, root: Path) -> tuple[str, list[dict[str, Any]]]:
    """Harness traces -> drafted, reviewed, released tasks; the first one made impossible."""
    gt = parse_agent("ground_truth")
    specs = plan_trials("agentdojo:banking", gt, tasks=["user_task_0", "user_task_1"], seed=3)
    specs += plan_trials(
        "agentdojo:banking", gt, tasks=["user_task_3"], injections=["injection_task_0"], seed=4
    )
    records = run_trials(specs, StoreSpanExporter(store))
    policy = SamplingPolicy(evalset="bank")
    sample_candidates(store, policy, trace_ids=[r.trace_id for r in records])
    dedupe_candidates(store, evalset="bank")
    redact_candidates(store, evalset="bank", policy=policy.redaction)
    drafted = draft_candidates(store, evalset="bank")
    assert drafted
    tasks = []
    for i, c in enumerate(sorted(drafted, key=lambda c: c.trace_id)):
        task = c.task()
        assert task is not None
        st = review_state(store, c)
        st = record_event(store, c.candidate_id, "claim", "rita", st.version)
        if i == 0:
            task["criteria"].append(IMPOSSIBLE)
            st = record_event(store, c.candidate_id, "edit", "rita", st.version, task=task)
        record_event(store, c.candidate_id, "approve", "rita", st.version)
        tasks.append(task)
    rel = release_from_store(store, root, "bank")
    return rel.version, tasks


def test_ablate_a_promoted_evalset_graded_by_its_criteria(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "evalsets"
    version, tasks = _promote_release(store, root)
    envs = {t["task_id"]: t["metadata"]["environment"] for t in tasks}
    assert all(e["kind"] == "agentdojo" and e["suite"] == "banking" for e in envs.values())
    assert {e["user_task"] for e in envs.values()} <= {"user_task_0", "user_task_1", "user_task_3"}
    injected = [e for e in envs.values() if e["user_task"] == "user_task_3"]
    assert all(e["injection_task"] == "injection_task_0" for e in injected)
    assert all(
        e["injection_task"] is None for e in envs.values() if e["user_task"] != "user_task_3"
    )
    impossible = tasks[0]["task_id"]

    res = _ablate(
        store,
        "--evalset", f"bank@{version[:8]}",
        "--evalset-root", str(root),
        "--oracles", "planner,tools",
        "--runs", "2",
        "--json",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    n = len(tasks)
    assert doc["run"]["ran"] == n * 2 * 3
    assert doc["source"].startswith(f"evalset bank@{version} (manifest sha256 ")
    assert "mandatory criterion" in doc["acceptance"]
    assert [c["key"] for c in doc["configs"]] == ["baseline", "+planner", "+planner+tools"]
    assert all(c["trials"] == n * 2 for c in doc["configs"])
    assert all(c["rank"] for c in doc["configs"][1:])

    rows = load_results(store, doc["ablation_id"])
    assert {r["task_id"] for r in rows} == set(envs)
    for r in rows:
        assert r["verdict"] in ("pass", "fail", "unknown", "pending")
        assert r["accepted"] == (r["verdict"] == "pass")
        if r["task_id"] == impossible:
            assert r["verdict"] == "fail" and not r["accepted"]
    per_task = {
        c["key"]: sum(r["accepted"] for r in rows if r["config_key"] == c["key"])
        for c in doc["configs"]
    }
    assert all(c["accepted"] == per_task[c["key"]] for c in doc["configs"])

    graded = {t.trial_id: t for t in load_trials(store)}
    for r in rows:
        t = graded[r["trial_id"]]
        assert t.task_id == r["task_id"] and t.verdict is not None
        ids = {x.criterion_id for x in t.results}
        expected = {
            c["id"] for c in next(x for x in tasks if x["task_id"] == t.task_id)["criteria"]
        }
        assert ids == expected, "every criterion of the released task was graded"
        policy = next(x for x in t.results if x.criterion_id == "tool-path")
        assert policy.verdict.value in ("pass", "fail"), "tool calls reached the policy grader"
        side = next(x for x in t.results if x.criterion_id == "side-effects")
        assert side.verdict.value in ("pass", "fail"), "side effects were summarised"
    # the trials are traces in the store
    traced = store.scalar(
        f"SELECT count(DISTINCT TraceId) AS n FROM {store.otel_table} "
        "WHERE TraceId IN {t:Array(String)}",
        {"t": [r["trace_id"] for r in rows]},
    )
    assert traced == len(rows)

    again = _ablate(store, "--resume", doc["ablation_id"], "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["run"]["ran"] == 0


def _task(task_id: str, environment: dict[str, Any] | None, *, impossible: bool = False) -> Task:
    criteria = [
        Criterion.model_validate(
            {
                "id": "utility",
                "kind": "custom",
                "grader": {"name": AGENTDOJO_UTILITY},
            }
        )
    ]
    if impossible:
        criteria.append(Criterion.model_validate(IMPOSSIBLE))
    return Task(
        task_id=task_id,
        criteria=criteria,
        metadata={"environment": environment} if environment else {},
    )


def _env(user_task: str, injection: str | None = None) -> dict[str, Any]:
    return {"kind": "agentdojo", "suite": "banking", "user_task": user_task,
            "injection_task": injection}  # fmt: skip


def test_unknown_ref_is_one_line(store: Store, tmp_path: Path) -> None:
    res = _ablate(store, "--evalset", "nope@123", "--evalset-root", str(tmp_path))
    assert res.exit_code == 1
    assert "no released versions of eval set 'nope'" in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
    release_tasks(tmp_path, "bank", [_task("a", _env("user_task_0"))])
    res = _ablate(store, "--evalset", "bank@ffff", "--evalset-root", str(tmp_path))
    assert res.exit_code == 1 and "matching 'ffff'" in res.output
    res = _ablate(store, "--evalset", "bank", "--suite", "agentdojo:banking")
    assert res.exit_code == 1 and "two sources" in res.output


def test_unrunnable_tasks_are_named_or_skipped(store: Store, tmp_path: Path) -> None:
    tasks = [
        _task("ok-0", _env("user_task_0")),
        _task("no-env", None),
        _task("bad-kind", {"kind": "webshop", "suite": "x", "user_task": "y"}),
        _task("bad-task", _env("user_task_999")),
    ]
    rel = release_tasks(tmp_path, "mixed", tasks)
    res = _ablate(store, "--evalset", "mixed", "--evalset-root", str(tmp_path))
    assert res.exit_code == 1 and "Traceback" not in res.output
    for name in ("no-env", "bad-kind", "bad-task", "--skip-unrunnable"):
        assert name in res.output
    assert "ok-0" not in res.output.split("environment:")[1]
    res = _ablate(
        store,
        "--evalset", f"mixed@{rel.version}",
        "--evalset-root", str(tmp_path),
        "--skip-unrunnable",
        "--oracles", "planner",
        "--runs", "1",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    [source] = [ln for ln in res.output.splitlines() if ln.startswith("Source: ")]
    assert source.startswith(f"Source: evalset mixed@{rel.version} (manifest sha256 ")
    skipped = source.split("skipped (--skip-unrunnable): ")[1].rstrip(".").split(", ")
    assert sorted(skipped) == ["bad-kind", "bad-task", "no-env"]
    assert "ran 2 trial(s)" in res.output


def test_two_tasks_on_one_environment_task_are_two_units(store: Store, tmp_path: Path) -> None:
    rel = release_tasks(
        tmp_path,
        "twins",
        [
            _task("twin-a", _env("user_task_1")),
            _task("twin-b", _env("user_task_1"), impossible=True),
        ],
    )
    res = _ablate(
        store,
        "--evalset", f"twins@{rel.version}",
        "--evalset-root", str(tmp_path),
        "--agent", "ground_truth",
        "--oracles", "planner,verifier",
        "--runs", "2",
        "--json",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    rows = load_results(store, doc["ablation_id"])
    assert len(rows) == 2 * 2 * 3
    for r in rows:
        assert r["utility"] is True, "the ground-truth agent solves the environment task"
        assert r["accepted"] is (r["task_id"] == "twin-a")
    assert [c["acceptance"] for c in doc["configs"]] == [0.5, 0.5, 0.5]
    assert all(c["vs_baseline"]["delta"] == 0 for c in doc["configs"][1:])


def test_suite_path_goes_through_the_agentdojo_utility_grader(store: Store) -> None:
    res = _ablate(
        store,
        "--suite", "agentdojo:banking",
        "--tasks", "user_task_0,user_task_2",
        "--oracles", "planner",
        "--runs", "2",
        "--hazard", "wrong_tool=0.5",
        "--json",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["source"] == "suite agentdojo:banking"
    rows = load_results(store, doc["ablation_id"])
    graded = {t.trial_id: t for t in load_trials(store)}
    assert len(rows) == 8
    for r in rows:
        t = graded[r["trial_id"]]
        [res_] = t.results
        assert res_.grader == GraderSpec(name=AGENTDOJO_UTILITY)
        assert r["accepted"] == bool(r["utility"]) == (t.verdict.value == "pass")
        assert t.observations.snapshot is None, "sT is stored once, in ablation_snapshots"


def test_task_environment_and_plan_round_trip() -> None:
    assert task_environment(_task("x", _env("user_task_2", "injection_task_1"))) == (
        "agentdojo:banking",
        "user_task_2",
        "injection_task_1",
    )
    for env, why in (
        (None, "no metadata.environment"),
        ({"kind": "agentdojo", "suite": "bank", "user_task": "user_task_0"}, "suite 'bank'"),
        (_env("user_task_0", "injection_task_99"), "no injection task"),
    ):
        with pytest.raises(UserError, match=why):
            task_environment(_task("x", env))
    task = _task("x", _env("user_task_2"))
    unit = EvalUnit("x", "agentdojo:banking", "user_task_2", None,
                    canonical_json(task.model_dump(mode="json")))  # fmt: skip
    plan = AblationPlan(
        suite="evalset:s@v",
        agent=AgentSpec("reference"),
        oracles=("planner",),
        runs=3,
        evalset="s@v",
        evalset_sha256="0" * 64,
        units=(unit, EvalUnit("y", "agentdojo:banking", "user_task_2", None, unit.task_json)),
    )
    assert AblationPlan.from_json(json.loads(json.dumps(plan.to_json()))) == plan
    cells = plan.cells()
    assert len(cells) == 2 * 2 * 3
    seeds = {(u, s.run_index): s.seed for k, u, s in cells if k == "baseline"}
    assert len(set(seeds.values())) == len(seeds), "each (task, run) has its own seed"
    assert all(seeds[(u, s.run_index)] == s.seed for _, u, s in cells), "paired across configs"
    assert plan.grading_tasks()["x"] == task


def test_tasks_pick_runnable_ones_and_unknown_ids_are_named(store: Store, tmp_path: Path) -> None:
    release_tasks(tmp_path, "mixed", [_task("ok-0", _env("user_task_0")), _task("no-env", None)])
    common = ["--evalset", "mixed", "--evalset-root", str(tmp_path), "--oracles", "planner"]
    res = _ablate(store, *common, "--runs", "1", "--tasks", "ok-0", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["run"]["ran"] == 2
    res = _ablate(store, *common, "--tasks", "ok-0,ghost")
    assert res.exit_code == 1 and "ghost not in mixed@" in res.output


def test_legacy_rows_without_grades_fall_back_to_utility(store: Store) -> None:
    from flywheel.ablation import run_ablation

    plan = AblationPlan(
        suite="agentdojo:banking",
        agent=AgentSpec("reference", {"rates": {"wrong_tool": 0.5}}),
        oracles=("planner",),
        runs=2,
        tasks=("user_task_0", "user_task_1"),
    )
    run = run_ablation(store, plan)
    store.command("TRUNCATE TABLE evalset_trials")  # as stored before grading existed
    rows = load_results(store, run.ablation_id)
    assert rows and all(r["accepted"] is None and r["verdict"] == "" for r in rows)
    from flywheel.ablation import analyse

    rep = analyse(plan, rows)
    assert rep.configs[0].accepted == sum(
        bool(r["utility"]) for r in rows if r["config_key"] == "baseline"
    )
