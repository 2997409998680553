-- The end state against the task's scope (issue: omissions, wrong values, extras):
-- per delta, the field verdicts, whether it lies outside the scope and the expected
-- change it matched (or got wrong), and the calls attributed to it; per trial, the
-- counts of omissions, wrong values and scope violations, and every finding as JSON.
ALTER TABLE side_effect_deltas {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS fields String DEFAULT '';
ALTER TABLE side_effect_deltas {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS outside_scope UInt8 DEFAULT 0;
ALTER TABLE side_effect_deltas {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS expected_id String DEFAULT '';
ALTER TABLE side_effect_deltas {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS call_indexes Array(UInt32) DEFAULT [];
ALTER TABLE side_effect_results {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS omissions UInt32 DEFAULT 0;
ALTER TABLE side_effect_results {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS wrong_values UInt32 DEFAULT 0;
ALTER TABLE side_effect_results {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS scope_violations UInt32 DEFAULT 0;
ALTER TABLE side_effect_results {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS findings String DEFAULT ''
