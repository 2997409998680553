"""The one error the statistics raise on bad input.

It is a :class:`flywheel.errors.UserError` (so the CLI prints one line and
exits 1, the API answers 400) and also a :class:`ValueError` (so numeric code
that catches ``ValueError`` keeps working).
"""

from __future__ import annotations

from flywheel.errors import UserError


class StatsInputError(UserError, ValueError):
    """A statistic was given an impossible count, rate, shape or level."""
