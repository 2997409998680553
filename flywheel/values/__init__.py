"""Value identity: how two packages decide that values are the same, or nearly.

One place for the relations that provenance, side effects, attribution and the
harness's fault injector share, so the injected fault and its detector agree,
and the one fingerprint (with its one normalisation) that ingest and side
effects both compute.
"""

from ._fingerprint import fingerprint, normalise, normalise_text, value_fingerprint
from ._nearcopy import (
    MAX_CUT,
    MIN_STR,
    answer_misreadings,
    is_number,
    leaves,
    misreadings,
    near_copy,
    observed_leaves,
    same_value,
)

__all__ = [
    "MAX_CUT",
    "MIN_STR",
    "answer_misreadings",
    "fingerprint",
    "is_number",
    "leaves",
    "misreadings",
    "near_copy",
    "normalise",
    "normalise_text",
    "observed_leaves",
    "same_value",
    "value_fingerprint",
]
