"""Graded trials and grades round-trip through the evalset migrations on a real chDB store."""

from __future__ import annotations

from pathlib import Path

from flywheel.evalset import (
    GradingContext,
    grade_trial,
    load_evalset,
    load_trials,
    read_trials,
    save_trials,
)

from flywheel import Store

FIX = Path(__file__).parent / "fixtures" / "ch22"


def test_trials_and_grades_round_trip(store: Store) -> None:
    es = load_evalset(FIX)
    ctx = GradingContext(base_dir=es.base_dir)
    graded = [
        grade_trial(es.tasks[t.task_id], t, ctx) for t in read_trials(FIX / "candidate.jsonl")[:8]
    ]
    assert save_trials(store, graded, project_id="p1") == 8
    back = load_trials(store, project_id="p1", config_id="candidate")
    assert [t.trial_id for t in back] == sorted(t.trial_id for t in graded)
    assert {t.trial_id: t.verdict for t in back} == {t.trial_id: t.verdict for t in graded}
    rows = store.query(
        "SELECT criterion_id, verdict, grader_name FROM evalset_grades FINAL"
        " WHERE trial_id = {t:String} ORDER BY criterion_id",
        {"t": "refund-en:candidate:2"},
    )
    assert {r["criterion_id"]: r["verdict"] for r in rows}["policy"] == "fail"
    assert {r["grader_name"] for r in rows} == {"schema", "state", "policy", "judge"}
    assert store.query("SELECT count() AS n FROM evalset_tasks")[0]["n"] == 0


def test_harness_record_is_gradeable_directly() -> None:
    """A record shaped like the harness's TrialRecord grades with state and recorded graders."""
    from flywheel.evalset import Task, trial_from_harness

    record = {
        "trial_id": "run1:banking:user_task_0:0",
        "task_id": "user_task_0",
        "environment_id": "env-abc",
        "trace_id": "0af7",
        "config_id": "cfg-1",
        "agent": {"kind": "reference"},
        "budget": {"max_calls": 20},
        "seam_modes": {"tools": "real"},
        "status": "ok",
        "utility": True,
        "security": None,
        "final_output": "Paid the bill.",
        "input_tokens": 100,
        "output_tokens": 20,
        "cost": 0.002,
        "duration_s": 0.4,
        "sT": '{"bank_account": {"balance": 900, "scheduled": []}}',
    }
    trial = trial_from_harness(
        record, tool_calls=[{"name": "send_money", "arguments": {"amount": 100}}]
    )
    task = Task.model_validate(
        {
            "task_id": "user_task_0",
            "criteria": [
                {
                    "id": "utility",
                    "kind": "custom",
                    "grader": {"name": "recorded", "args": {"key": "utility"}},
                },
                {
                    "id": "balance",
                    "kind": "state",
                    "grader": {
                        "name": "state",
                        "args": {
                            "assertions": [
                                {"path": "/bank_account/balance", "op": "equals", "value": 900}
                            ]
                        },
                    },
                },
                {
                    "id": "amount",
                    "kind": "policy",
                    "grader": {
                        "name": "policy",
                        "args": {
                            "arguments": [
                                {"tool": "send_money", "arg": "amount", "op": "max", "value": 500}
                            ]
                        },
                    },
                },
                {
                    "id": "budget",
                    "kind": "budget",
                    "grader": {"name": "budget", "args": {"max_cost_usd": 0.01}},
                },
            ],
        }
    )
    graded = grade_trial(task, trial)
    assert graded.verdict.value == "pass", [(r.criterion_id, r.reason) for r in graded.results]
    assert trial.tokens == 120 and trial.artifact_digest and len(trial.artifact_digest) == 64
