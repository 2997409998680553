-- Near-duplicate dedupe state (promote/_dedupe.py, StoreDedupeIndex).
-- `params` names the signature version and MinHash/LSH parameters
-- (e.g. sig1:mh128:b32r4:s1); rows under other params are never compared.
-- No raw text is stored: shingles are xxh3-64 hashes, MinHash values are
-- datasketch affine32 hash values.

CREATE TABLE IF NOT EXISTS dedupe_signatures {{ON_CLUSTER}} (
    trace_id String,
    params LowCardinality(String),
    cluster_id String,
    matched_trace_id String,
    similarity Float32,
    tools Array(LowCardinality(String)),
    shingles Array(UInt64),
    minhash Array(UInt32),
    created_at DateTime64(9)
) ENGINE = {{ReplacingMergeTree(created_at)}} ORDER BY (params, trace_id);

CREATE TABLE IF NOT EXISTS dedupe_bands {{ON_CLUSTER}} (
    params LowCardinality(String),
    band_key UInt64,
    trace_id String
) ENGINE = {{MergeTree}} ORDER BY (params, band_key);

CREATE TABLE IF NOT EXISTS dedupe_clusters {{ON_CLUSTER}} (
    cluster_id String,
    params LowCardinality(String),
    representative String,
    size UInt64,
    first_seen DateTime64(9),
    last_seen DateTime64(9),
    version UInt64
) ENGINE = {{ReplacingMergeTree(version)}} ORDER BY (params, cluster_id);
