"""Per-task summaries of run outcomes, ragged or rectangular."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from flywheel.evalset.stats._errors import StatsInputError
from numpy.typing import ArrayLike, NDArray

Outcomes = ArrayLike | Sequence[Sequence[float]]


def _flatten(outcomes: Any, name: str) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Return all run values in task order and the run count of each task."""
    arr: NDArray[Any] | None
    try:
        arr = np.asarray(outcomes, dtype=np.float64)
    except (TypeError, ValueError):
        arr = None  # ragged: tasks with different run counts
    if arr is not None:
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise StatsInputError(f"{name}: expected tasks x runs, got {arr.ndim} dimensions")
        if arr.shape[0] and arr.shape[1] == 0:
            raise StatsInputError(f"{name}: tasks have no runs")
        flat = arr.ravel()
        runs = np.full(arr.shape[0], arr.shape[1], dtype=np.int64)
    else:
        tasks = list(outcomes)
        runs = np.fromiter((np.size(task) for task in tasks), dtype=np.int64, count=len(tasks))
        if np.any(runs == 0):
            first = int(np.flatnonzero(runs == 0)[0])
            raise StatsInputError(
                f"{name}: task {first} has no runs; keep unresolved runs as not accepted (0) "
                "instead of dropping them"
            )
        try:
            flat = np.concatenate([np.asarray(t, dtype=np.float64).ravel() for t in tasks])
        except (TypeError, ValueError) as exc:
            raise StatsInputError(f"{name}: run outcomes must be numbers") from exc
    if flat.size and not np.all(np.isfinite(flat)):
        raise StatsInputError(f"{name}: run outcomes must be finite numbers (resolve NaN first)")
    return flat, runs


def _sums(flat: NDArray[np.float64], runs: NDArray[np.int64]) -> NDArray[np.float64]:
    if runs.size and np.all(runs == runs[0]):
        summed: NDArray[np.float64] = flat.reshape(runs.size, int(runs[0])).sum(axis=1)
        return summed
    ids = np.repeat(np.arange(runs.size), runs)
    return np.bincount(ids, weights=flat, minlength=runs.size).astype(np.float64)


def task_scores(outcomes: Outcomes, name: str = "outcomes") -> NDArray[np.float64]:
    """Collapse each task's runs to its mean score (its pass rate for 0/1 runs).

    The task, not the run, is the unit of independence (22.4, 22.5), so every
    task-level statistic starts from one number per task.

    Args:
        outcomes: A 2-D array ``tasks x runs``, a 1-D array (one run or one
            score per task), or a sequence of per-task sequences (ragged).
            Unresolved runs must already be resolved (the default: 0).
        name: Used in error messages.

    Returns:
        One mean per task (empty for no tasks).

    Raises:
        StatsInputError: On a task without runs, NaN/inf values, or > 2 dimensions.
    """
    flat, runs = _flatten(outcomes, name)
    return _sums(flat, runs) / np.maximum(runs, 1)


def task_counts(
    outcomes: Outcomes, name: str = "outcomes"
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per-task ``(n runs, c passes)`` from 0/1 run outcomes, for pass@k and pass^k.

    Raises:
        StatsInputError: If a run outcome is not 0/1, or as :func:`task_scores`.
    """
    flat, runs = _flatten(outcomes, name)
    if flat.size and not np.all((flat == 0.0) | (flat == 1.0)):
        raise StatsInputError(f"{name}: run outcomes must be 0/1 (accepted or not)")
    return runs, _sums(flat, runs).astype(np.int64)
