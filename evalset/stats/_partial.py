"""Partial credit as a diagnostic, never the verdict (playbook, "Partial credit and its price")."""

from __future__ import annotations

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._types import FloatLike
from flywheel.evalset.stats._validate import float_result
from numpy.typing import ArrayLike


def partial_credit(passed: ArrayLike, weights: ArrayLike | None = None) -> FloatLike:
    """``R = sum_i w_i 1[g_i]`` normalised by ``sum_i w_i`` (equal weights by default).

    Report it beside the terminal (all-mandatory) verdict and never in its
    place: every checkpoint is a surface that can be satisfied without the
    task being done. Vectorised over trials: ``passed`` may be
    ``trials x checkpoints``.

    No checkpoints: ``nan``.

    Raises:
        StatsInputError: On negative weights, a zero weight sum, or a shape mismatch.
    """
    g = np.asarray(passed, dtype=bool)
    if g.shape[-1:] == (0,):
        return float_result(np.full(g.shape[:-1], np.nan))
    w = np.ones(g.shape[-1]) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (g.shape[-1],) or np.any(w < 0) or not np.all(np.isfinite(w)) or w.sum() <= 0:
        raise StatsInputError(
            "weights need one non-negative value per checkpoint and a positive sum"
        )
    return float_result(g.astype(np.float64) @ w / w.sum())
