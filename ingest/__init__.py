"""Ingest: OTLP receiver, durable writer, normalisation, argument provenance, trace reads.

Public names are imported on first use (``flywheel._lazy``): a command that reads
traces does not load the OTLP protobuf classes, the write-ahead log or provenance.
"""

from flywheel._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "flywheel.ingest._files": [
            "ImportResult",
            "import_otlp_json",
            "otlp_files",
        ],
        "flywheel.values": [
            "normalise",
        ],
        "flywheel.ingest._models": [
            "TURN_ROLES",
            "SpanEvent",
            "SpanLink",
            "SpanNode",
            "Step",
            "TraceDetail",
            "TraceList",
            "TraceSummary",
            "Turn",
        ],
        "flywheel.ingest._otlp": [
            "DecodedBatch",
            "decode_request",
            "parse_request",
        ],
        "flywheel.ingest._provenance": [
            "SOURCE_KINDS",
            "ArgumentProvenance",
            "ProvenancePolicy",
            "declare_provenance",
            "infer_provenance",
        ],
        "flywheel.ingest._provenance_store": [
            "compute_provenance",
            "load_steps",
            "read_provenance",
        ],
        "flywheel.ingest._read": [
            "list_traces",
            "normalize_trace_id",
            "parse_time",
            "steps_with_text",
        ],
        "flywheel.ingest._trace": [
            "get_span",
            "get_trace",
            "iter_trace",
        ],
        "flywheel.ingest._turns": [
            "normalise_steps",
            "parse_turns",
            "turns_text",
        ],
        "flywheel.ingest._usage": [
            "Usage",
            "trace_usage",
        ],
        "flywheel.ingest._wal": [
            "WriteAheadLog",
        ],
        "flywheel.ingest._writer": [
            "SpanWriter",
        ],
    },
)
