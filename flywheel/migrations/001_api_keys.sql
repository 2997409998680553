-- Project API keys, stored hashed (SHA-256 of the whole key; the key is shown
-- once at creation). A revocation is a new row with revoked = 1.
CREATE TABLE IF NOT EXISTS api_keys {{ON_CLUSTER}} (
    key_id String,
    key_hash String,
    project_id LowCardinality(String),
    name String,
    revoked UInt8 DEFAULT 0,
    created_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {{ReplacingMergeTree(created_at)}}
ORDER BY key_id;
