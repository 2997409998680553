-- Oracle-component ablations (issue 10). One row per ablation run: the plan
-- that makes it reproducible and resumable (suite, agent, oracle order,
-- lattice or marginal, runs, budget, seed, tasks).
CREATE TABLE IF NOT EXISTS ablation_runs {{ON_CLUSTER}} (
    project_id LowCardinality(String) DEFAULT 'default',
    ablation_id String,
    suite LowCardinality(String),
    agent_spec String,
    oracles Array(String),
    lattice Bool,
    runs UInt32,
    seed Int64,
    tasks Array(String),
    budget String,
    configs Array(String),
    plan String,
    created_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {{ReplacingMergeTree(created_at)}}
ORDER BY (project_id, ablation_id);

-- One row per ablation trial, keyed by (ablation, config, task, run index):
-- the pairing key across configurations. The trial itself (trace, snapshots)
-- is in ablation_trials / the span table; this row carries what the report
-- reads, so a report never scans spans.
CREATE TABLE IF NOT EXISTS ablation_results {{ON_CLUSTER}} (
    project_id LowCardinality(String) DEFAULT 'default',
    ablation_id String,
    config_key String,
    config_id String,
    task_id String,
    injection_task_id String,
    run_index UInt32,
    seed Int64,
    trial_id String,
    trace_id String,
    status LowCardinality(String),
    utility Nullable(Bool),
    cost Float64,
    tokens UInt64,
    tool_calls UInt32,
    duration_s Float64,
    faults String,
    recorded_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {{ReplacingMergeTree(recorded_at)}}
ORDER BY (project_id, ablation_id, config_key, task_id, injection_task_id, run_index);
