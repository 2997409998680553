-- Adopting a span table written by an OpenTelemetry Collector: add the
-- platform's defaulted columns (no-ops on a table this package created) and
-- the insert-deduplication window that makes log replays idempotent.
ALTER TABLE {{OTEL_TABLE}} {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS ProjectId LowCardinality(String) DEFAULT 'default';
ALTER TABLE {{OTEL_TABLE}} {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS IngestTime DateTime64(3) DEFAULT now64(3);
