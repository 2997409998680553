"""Promotion: sampling, near-duplicate dedupe, PII redaction, drafting and review.

Production traces become reviewed eval tasks: sample by a declared policy,
collapse near-duplicates, redact, draft a task, review it through
append-only attributed events; approved tasks feed ``flywheel evalset release``.
"""

from flywheel._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "flywheel.promote._candidates": [
            "STAGES",
            "Candidate",
            "candidate_id",
            "dedupe_candidates",
            "get_candidate",
            "index_traces",
            "list_candidates",
            "load_traces",
            "redact_candidates",
            "sample_candidates",
        ],
        "flywheel.promote._dedupe": [
            "Assignment",
            "Cluster",
            "DedupeIndex",
            "DedupeParams",
            "StoreDedupeIndex",
        ],
        "flywheel.promote._draft": [
            "draft_candidates",
            "draft_task",
            "split_for",
        ],
        "flywheel.promote._leak_exceptions": [
            "record_leak_exception",
        ],
        "flywheel.promote._redact": [
            "Redactor",
            "redact_trace",
        ],
        "flywheel.promote._redact_batch": [
            "redact_traces",
        ],
        "flywheel.promote._redact_types": [
            "RedactedTrace",
            "RedactionFinding",
            "RedactionPolicy",
            "RedactionReport",
            "TraceStep",
        ],
        "flywheel.promote._rerun": [
            "redact_candidate",
            "stored_rules",
        ],
        "flywheel.promote._review": [
            "KINDS",
            "STATUSES",
            "QueueItem",
            "ReviewEvent",
            "ReviewState",
            "approved_count",
            "fold",
            "queue",
            "read_events",
            "record_event",
            "review_state",
            "reviewer_progress",
            "validate_task",
        ],
        "flywheel.promote._sampling": [
            "FailureRules",
            "OutcomeRule",
            "Sampled",
            "SamplingPolicy",
            "SuccessSampling",
            "load_policy",
            "sample",
            "sample_one",
        ],
        "flywheel.promote._signature": [
            "TraceSignature",
            "jaccard",
            "trace_signature",
            "user_intent",
        ],
    },
)
