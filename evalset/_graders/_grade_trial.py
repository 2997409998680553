"""Grade one trial against its task: every criterion, then the four-verdict rule."""

from __future__ import annotations

import json

from flywheel.evalset._graders._base import Grader, GradingContext, build_grader
from flywheel.evalset._task import Task
from flywheel.evalset._trial import CriterionResult, Trial
from flywheel.evalset._verdict import aggregate_results
from flywheel.evalset.stats import partial_credit


def grade_trial(
    task: Task,
    trial: Trial,
    context: GradingContext | None = None,
    *,
    cache: dict[str, Grader] | None = None,
) -> Trial:
    """A copy of ``trial`` with one result per task criterion, its verdict and partial credit.

    Results the trial already carries (graded elsewhere, e.g. by the harness)
    are kept; missing ones are graded with the criterion's registered
    grader. The verdict is recomputed from the mandatory results; partial
    credit (weighted share of criteria passed) is stored as a diagnostic.
    ``cache`` reuses built graders across calls; keep one cache per set of
    tasks that stays alive while it is used (entries are keyed partly by
    object identity).

    Raises:
        UserError: A grader spec that cannot be built.
    """
    have = {r.criterion_id: r for r in trial.results}
    results: list[CriterionResult] = []
    for criterion in task.criteria:
        existing = have.get(criterion.id)
        if existing is not None:
            results.append(existing)
            continue
        grader = None
        if cache is not None:
            # by object identity first (cheap), then by spec content (shared across tasks)
            fast = f"id:{id(criterion.grader)}"
            grader = cache.get(fast)
            if grader is None:
                key = json.dumps(criterion.grader.model_dump(), sort_keys=True, default=str)
                grader = cache.get(key)
                if grader is None:
                    grader = cache[key] = build_grader(criterion.grader, context)
                cache[fast] = grader
        else:
            grader = build_grader(criterion.grader, context)
        grade = grader(task, trial)
        results.append(
            CriterionResult(
                criterion_id=criterion.id,
                kind=criterion.kind,
                role=criterion.role,
                verdict=grade.verdict,
                score=grade.score,
                reason=grade.reason,
                observation=grade.observation,
                grader=criterion.grader,
            )
        )
    weights = [c.weight for c in task.criteria]
    credit = (
        float(partial_credit([r.verdict.value == "pass" for r in results], weights))
        if results and sum(weights) > 0
        else None
    )
    return trial.model_copy(
        update={"results": results, "verdict": aggregate_results(results), "partial_credit": credit}
    )
