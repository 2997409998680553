"""Ingest: OTLP receiver, durable writer, normalisation, argument provenance, trace reads."""

from ._files import ImportResult, import_otlp_json, otlp_files
from flywheel.values import normalise
from ._models import (
    TURN_ROLES,
    SpanEvent,
    SpanLink,
    SpanNode,
    Step,
    TraceDetail,
    TraceList,
    TraceSummary,
    Turn,
)
from ._otlp import DecodedBatch, decode_request, parse_request
from ._provenance import (
    SOURCE_KINDS,
    ArgumentProvenance,
    ProvenancePolicy,
    declare_provenance,
    infer_provenance,
)
from ._provenance_store import compute_provenance, load_steps, read_provenance
from ._read import list_traces, normalize_trace_id, parse_time
from ._trace import get_span, get_trace, iter_trace
from ._turns import normalise_steps, parse_turns, turns_text
from ._usage import Usage, trace_usage
from ._wal import WriteAheadLog
from ._writer import SpanWriter

__all__ = [
    "SpanEvent",
    "SpanLink",
    "SpanNode",
    "Step",
    "TraceDetail",
    "TraceList",
    "TraceSummary",
    "get_span",
    "get_trace",
    "iter_trace",
    "list_traces",
    "normalize_trace_id",
    "parse_time",
    "trace_usage",
    "Usage",
    "TURN_ROLES",
    "Turn",
    "normalise_steps",
    "parse_turns",
    "turns_text",
    "SOURCE_KINDS",
    "ArgumentProvenance",
    "DecodedBatch",
    "ImportResult",
    "ProvenancePolicy",
    "SpanWriter",
    "WriteAheadLog",
    "compute_provenance",
    "declare_provenance",
    "decode_request",
    "import_otlp_json",
    "otlp_files",
    "infer_provenance",
    "load_steps",
    "normalise",
    "parse_request",
    "read_provenance",
]
