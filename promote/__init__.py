"""Promotion: sampling, near-duplicate dedupe, PII redaction, drafting and review.

Production traces become reviewed eval tasks: sample by a declared policy,
collapse near-duplicates, redact, draft a task, review it through
append-only attributed events; approved tasks feed ``flywheel evalset release``.
"""

from promote._candidates import (
    STAGES,
    Candidate,
    candidate_id,
    dedupe_candidates,
    get_candidate,
    index_traces,
    list_candidates,
    load_traces,
    redact_candidates,
    sample_candidates,
)
from promote._dedupe import Assignment, Cluster, DedupeIndex, DedupeParams, StoreDedupeIndex
from promote._draft import draft_candidates, draft_task, split_for
from promote._redact import Redactor, redact_trace
from promote._redact_batch import redact_traces
from promote._redact_types import (
    RedactedTrace,
    RedactionFinding,
    RedactionPolicy,
    RedactionReport,
    TraceStep,
)
from promote._rerun import redact_candidate, stored_rules
from promote._review import (
    KINDS,
    STATUSES,
    QueueItem,
    ReviewEvent,
    ReviewState,
    approved_count,
    fold,
    queue,
    read_events,
    record_event,
    review_state,
    reviewer_progress,
    validate_task,
)
from promote._sampling import (
    FailureRules,
    OutcomeRule,
    Sampled,
    SamplingPolicy,
    SuccessSampling,
    load_policy,
    sample,
    sample_one,
)
from promote._signature import TraceSignature, jaccard, trace_signature, user_intent

__all__ = [
    "KINDS",
    "STAGES",
    "STATUSES",
    "Assignment",
    "Candidate",
    "Cluster",
    "DedupeIndex",
    "DedupeParams",
    "FailureRules",
    "OutcomeRule",
    "QueueItem",
    "RedactedTrace",
    "RedactionFinding",
    "RedactionPolicy",
    "RedactionReport",
    "Redactor",
    "ReviewEvent",
    "ReviewState",
    "Sampled",
    "SamplingPolicy",
    "StoreDedupeIndex",
    "SuccessSampling",
    "TraceSignature",
    "TraceStep",
    "approved_count",
    "candidate_id",
    "dedupe_candidates",
    "draft_candidates",
    "draft_task",
    "fold",
    "get_candidate",
    "index_traces",
    "jaccard",
    "list_candidates",
    "load_policy",
    "load_traces",
    "queue",
    "read_events",
    "record_event",
    "redact_candidate",
    "redact_candidates",
    "redact_trace",
    "redact_traces",
    "review_state",
    "reviewer_progress",
    "sample",
    "sample_candidates",
    "sample_one",
    "split_for",
    "stored_rules",
    "trace_signature",
    "user_intent",
    "validate_task",
]
