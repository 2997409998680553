-- Extra redaction rules a reviewer added for one candidate (promote/_rerun.py).
--
-- One row per candidate; the newest row wins and holds every rule added so
-- far (a later re-run keeps the earlier ones). deny_strings holds the literal
-- strings to redact, i.e. raw values like the trace tables do: it is read
-- only to re-run redaction and is never returned by the API (review events
-- name the rules by label and count only).
CREATE TABLE IF NOT EXISTS promote_redaction_rules {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    candidate_id String,
    key_rules String,
    deny_strings String,
    updated_by String,
    updated_at DateTime64(9)
) ENGINE = {{ReplacingMergeTree(updated_at)}}
ORDER BY (project_id, candidate_id)
