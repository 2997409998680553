"""Configuration: flags override ``FLYWHEEL_*`` environment variables override defaults.

One settings class with nested sections (``FLYWHEEL_INGEST__MAX_BODY_BYTES``);
every field documented, so ``flywheel config --json`` is the reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_STORE = "chdb:///./.flywheel/store"


class IngestSettings(BaseModel):
    """The OTLP receiver and its durable writer."""

    host: str = Field("127.0.0.1", description="Address the OTLP/HTTP receiver binds.")
    port: int = Field(4318, description="Port of the OTLP/HTTP receiver (OTLP's default).")
    wal_dir: Path | None = Field(
        None, description="Write-ahead log directory; default: inside a chDB store's directory, "
        "or ./.flywheel/wal/<server>-<database> for a ClickHouse server. One process per log."
    )
    max_body_bytes: int = Field(
        16 * 1024 * 1024, description="Largest accepted request body, after gunzip (413 above)."
    )
    max_attribute_bytes: int = Field(
        256 * 1024, description="Largest single attribute value (characters); longer values are cut "
        "and counted (partial_success.error_message, flywheel_ingest_truncated_total)."
    )
    max_span_name_chars: int = Field(
        4096, description="Longest span or event name; longer names are cut and counted.")
    max_attribute_key_chars: int = Field(
        256, description="Longest attribute key; an attribute with a longer key is dropped and counted.")
    max_attributes_per_span: int = Field(
        1024, description="Attributes kept per span, event or link; the rest are dropped and counted.")
    max_events_per_span: int = Field(
        1024, description="Events kept per span; the rest are dropped and counted.")
    max_links_per_span: int = Field(
        1024, description="Links kept per span; the rest are dropped and counted.")
    batch_spans: int = Field(
        20_000, description="Spans collected before an insert into the store (larger is faster)."
    )
    flush_interval_s: float = Field(
        1.0, description="Longest time an acknowledged span waits in the log before its insert "
        "(under load; see flush_quiet_s). Each insert costs the store a part per table, so "
        "fewer, larger inserts take less CPU per span."
    )
    flush_quiet_s: float = Field(
        0.05, description="An insert starts once no request was logged for this long, "
        "without waiting for flush_interval_s."
    )
    max_wal_lag_bytes: int = Field(
        256 * 1024 * 1024,
        description="Log bytes not yet in the store above which requests get 503 + Retry-After.",
    )
    wal_min_free_bytes: int = Field(
        64 * 1024 * 1024,
        description="Free space the write-ahead log's disk keeps; below it requests get 503 + "
        "Retry-After naming the disk, and ingest resumes by itself when space returns.",
    )
    wal_segment_bytes: int = Field(
        64 * 1024 * 1024,
        description="Size of a write-ahead log segment (at most a quarter of its disk).",
    )
    decode_workers: int = Field(
        0,
        description="Worker processes decoding OTLP bodies (0: decode in the receiver process). "
        "`flywheel serve` uses 0 unless set when the compiled decoder is built (it decodes "
        "without the GIL), else 1: Python decoding off the receiver's GIL.",
    )


class Settings(BaseSettings):
    """Settings of every ``flywheel`` command and service."""

    model_config = SettingsConfigDict(
        env_prefix="FLYWHEEL_", env_nested_delimiter="__", extra="ignore"
    )

    store: str = Field(
        DEFAULT_STORE,
        description="chdb:///PATH (embedded ClickHouse) or clickhouse://USER:PASS@HOST:8123/DB.",
    )
    otel_table: str = Field(
        "otel_traces",
        description="Span table; point it at an existing collector-written otel_traces table.",
    )
    project: str = Field("default", description="Project id stamped on ingested spans.")
    auth: Literal["auto", "required", "off"] = Field(
        "auto",
        description="auto: a key with the right scope on every request; until the first key "
        "exists, loopback clients only (acting as the server's OS user). required: a key from "
        "every client, loopback too. off: no authentication at all (explicit opt-out; "
        "`flywheel serve` warns).",
    )
    admin_token: SecretStr | None = Field(
        None,
        description="A bootstrap admin credential (from a secret, at least 32 characters): "
        "`Authorization: Bearer TOKEN` acts as `admin-token` with the admin scope, to create "
        "the first keys over the API.",
    )
    cluster: str | None = Field(
        None, description="ClickHouse cluster name: Replicated tables ON CLUSTER + Distributed."
    )
    ingest: IngestSettings = Field(default_factory=IngestSettings)

    def for_serving(self) -> Settings:
        """These settings as ``flywheel serve`` runs with them (what ``flywheel config`` shows).

        ``ingest.decode_workers`` left unset (no flag, no environment) is 1 when
        serving: decoding runs off the receiver's GIL. An app built in-process
        (tests, benches) keeps 0.
        """
        if "decode_workers" in self.ingest.model_fields_set:
            return self
        ingest = self.ingest.model_copy(update={"decode_workers": 1})
        return self.model_copy(update={"ingest": ingest})
