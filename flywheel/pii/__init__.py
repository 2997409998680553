"""Detection of personal data and secrets, shared by redaction and the release scanner.

Detection only: what counts as PII and where it is. What to do about it
(policy, key rules a reviewer adds, pseudonyms) belongs to
``flywheel.promote``; refusing a release that still holds a finding belongs
to ``flywheel.evalset``. Heavy engines (Presidio, the name list) load on
first use.
"""

from flywheel._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "flywheel.pii._types": ["ENTITIES", "Detection", "longest_first"],
        "flywheel.pii._detector": [
            "ALL_ENTITIES",
            "PSEUDONYM",
            "Detector",
            "check_entities",
            "shared_detector",
        ],
        "flywheel.pii._keys": [
            "CONDITIONAL_LABELS",
            "DEFAULT_KEY_RULES",
            "DEFAULT_KEY_SUFFIXES",
            "KEY_LABELS",
            "derived_label",
            "is_identifier",
            "key_label",
            "names_a_thing",
            "normalise_key",
            "own_name_key",
            "suffix_applies",
            "thing_key",
            "value_label",
        ],
        "flywheel.pii._decode": ["Segment", "decode_base64", "segments"],
        "flywheel.pii._scan": [
            "Finding",
            "find_leaks",
            "find_leaks_in_dir",
            "find_values",
            "scan_document",
            "strings_in",
        ],
        "flywheel.pii._secrets": ["credential_shaped", "looks_random"],
        "flywheel.pii._people": ["name_forms", "organisation_like", "person_like"],
        "flywheel.pii._ids": ["national_id_scheme"],
    },
)
