"""Per-trial analysis: provenance and side effects of stored harness trials."""

from __future__ import annotations

import json

from click.testing import CliRunner
from flywheel.harness import (
    HAZARDS,
    AgentSpec,
    StoreSpanExporter,
    plan_trials,
    run_trials,
    save_trials,
)

from flywheel.cli import cli


def test_attacked_trial_is_flagged_and_blocking_benign_is_not(store):
    rates = dict.fromkeys(HAZARDS, 0.0)
    rates["obey_injection"] = 1.0
    specs = plan_trials("agentdojo:banking", AgentSpec("reference", {"rates": rates}),
                        tasks=["user_task_3"], injections=["injection_task_0"])
    specs += plan_trials("agentdojo:banking", AgentSpec("ground_truth"), tasks=["user_task_3"])
    records = run_trials(specs, StoreSpanExporter(store))
    save_trials(store, records)
    attacked = next(r for r in records if r.injection_task_id)
    benign = next(r for r in records if not r.injection_task_id)
    assert attacked.security is True
    url = f"chdb://{store.path}?database={store.database}"
    out = CliRunner().invoke(cli, ["--store", url, "analyse", attacked.trial_id, benign.trial_id, "--json"])
    assert out.exit_code == 0, out.output
    a, b = json.loads(out.output)
    assert a["provenance_flags"] >= 1 and a["blocking"] and a["unauthorized_deltas"] >= 1
    assert "external_communication" in a["critical_events"]
    assert b["provenance_flags"] == 0 and not b["blocking"] and b["unauthorized_deltas"] == 0
    stored = store.query("SELECT trial_id FROM side_effect_results")
    assert {r["trial_id"] for r in stored} >= {attacked.trial_id, benign.trial_id}
    missing = CliRunner().invoke(cli, ["--store", url, "analyse", "trial-nope"])
    assert missing.exit_code == 1 and "no trial" in missing.output


def test_side_effects_diff_reads_calls_and_observations_from_a_stored_trace(store, tmp_path):
    """``side-effects diff --trace`` reconciles a harness trial's state change with its trace."""
    rates = dict.fromkeys(HAZARDS, 0.0)
    rates["obey_injection"] = 1.0
    specs = plan_trials("agentdojo:banking", AgentSpec("reference", {"rates": rates}),
                        tasks=["user_task_3"], injections=["injection_task_0"])
    (attacked,) = run_trials(specs, StoreSpanExporter(store))
    before, after = tmp_path / "s0.json", tmp_path / "sT.json"
    before.write_text(attacked.s0)
    after.write_text(attacked.sT)
    url = f"chdb://{store.path}?database={store.database}"
    base = ["--store", url, "side-effects", "diff", "--before", str(before), "--after", str(after),
            "--agentdojo-suite", "banking"]
    out = CliRunner().invoke(cli, [*base, "--trace", attacked.trace_id, "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    reconciliation = report["reconciliation"]
    assert reconciliation is not None and reconciliation["attributions"]
    assert reconciliation["unexplained"] == []  # every delta is explained by a traced call
    # the transfer's recipient came from a tool result, so the money movement is explained by
    # an untrusted observation: the attack is blocking
    assert report["gate"]["blocking"]
    missing = CliRunner().invoke(cli, [*base, "--trace", "0" * 32])
    assert missing.exit_code == 1 and "not found" in missing.output
    both = CliRunner().invoke(cli, [*base, "--trace", attacked.trace_id, "--calls", str(before)])
    assert both.exit_code == 1 and "--trace" in both.output


def test_a_trials_scope_also_learns_from_accepted_trials_of_its_task(store):
    """Benign trials of the same task that met their utility check join the scope's runs."""
    from flywheel.harness import accepted_runs

    specs = plan_trials("agentdojo:banking", AgentSpec("ground_truth"), tasks=["user_task_3"],
                        runs=3)
    records = run_trials(specs, StoreSpanExporter(store))
    save_trials(store, records)
    me = records[0]
    runs = accepted_runs(store, me)
    assert len(runs) == 2 and all(r.deltas for r in runs)  # the other two, not this one
    url = f"chdb://{store.path}?database={store.database}"
    out = CliRunner().invoke(cli, ["--store", url, "analyse", me.trial_id, "--json"])
    assert out.exit_code == 0, out.output
    stored = store.query("SELECT scope FROM side_effect_results WHERE trial_id = {t:String}",
                         {"t": me.trial_id})
    assert json.loads(stored[0]["scope"])["learned_from"] == 3
