-- One row per harness trial: identity (trial, environment, trace, config),
-- the specs that rebuild the configuration (agent, seams, budget, seed), the
-- outcome (status completed / budget_exhausted / error; AgentDojo utility and
-- security, NULL when unknown), cost, the faults a simulation injected, and
-- timings split into reset (s0 build + snapshot), agent, and grading (checks + sT).
CREATE TABLE IF NOT EXISTS ablation_trials {{ON_CLUSTER}} (
    project_id LowCardinality(String) DEFAULT 'default',
    trial_id String,
    run_id String,
    suite LowCardinality(String),
    task_id String,
    injection_task_id String,
    environment_id String,
    trace_id String,
    config_id String,
    agent_name LowCardinality(String),
    agent_spec String,
    seam_specs String,
    seam_modes Map(LowCardinality(String), String),
    budget String,
    seed Int64,
    run_index UInt32,
    status LowCardinality(String),
    utility Nullable(Bool),
    security Nullable(Bool),
    budget_exhausted Bool,
    budget_resource LowCardinality(String),
    error String,
    final_output String,
    tool_calls UInt32,
    write_calls UInt32,
    input_tokens UInt64,
    output_tokens UInt64,
    cost Float64,
    started_at DateTime64(9),
    duration_s Float64,
    faults String,
    notes String,
    timings String,
    s0_sha256 String,
    st_sha256 String,
    schema_version UInt16 DEFAULT 1
) ENGINE = {{MergeTree}}
ORDER BY (project_id, suite, task_id, trial_id);

-- The canonical JSON state of each trial before (s0) and after (sT) the agent.
CREATE TABLE IF NOT EXISTS ablation_snapshots {{ON_CLUSTER}} (
    project_id LowCardinality(String) DEFAULT 'default',
    trial_id String,
    which LowCardinality(String),
    environment_id String,
    sha256 String,
    document String,
    schema_version UInt16 DEFAULT 1
) ENGINE = {{MergeTree}}
ORDER BY (project_id, trial_id, which);
