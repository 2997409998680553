"""Result types shared by several statistics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatLike = float | NDArray[np.float64]


@dataclass(frozen=True)
class Interval:
    """A two-sided interval with its point estimate.

    Fields are floats for scalar input and arrays (broadcast shape) for array
    input, so one function serves one rate or a whole table of them.

    Attributes:
        lo: Lower limit.
        hi: Upper limit.
        point: The point estimate the interval surrounds (``nan`` when there
            is no data to estimate from, e.g. ``n = 0``).
        confidence: Two-sided nominal coverage, e.g. ``0.95``.
    """

    lo: FloatLike
    hi: FloatLike
    point: FloatLike
    confidence: float = 0.95

    @property
    def width(self) -> FloatLike:
        """``hi - lo``."""
        return self.hi - self.lo
