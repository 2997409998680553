"""Value identity: how two packages decide that values are the same, or nearly.

One place for the relations that provenance, side effects, attribution and the
harness's fault injector share, so the injected fault and its detector agree.
"""

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
    "is_number",
    "leaves",
    "misreadings",
    "near_copy",
    "observed_leaves",
    "same_value",
]
