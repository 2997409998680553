"""The public surface of evalset.stats: pinned names, documented, one error type."""

from __future__ import annotations

import inspect

import flywheel.evalset.stats as stats
import numpy as np
import pytest

from flywheel.errors import UserError

PINNED = {
    # agreed with the gate engineer (coord/stats_api.md)
    "wilson_interval",
    "Interval",
    "newcombe_paired_interval",
    "mcnemar_exact",
    "paired_cluster_bootstrap",
    "BootstrapResult",
    "pass_at_k",
    "pass_hat_k",
    "mean_pass_at_k",
    "mean_pass_hat_k",
    "cohen_kappa",
    "judge_error_rates",
}


def test_all_is_pinned_and_complete() -> None:
    assert PINNED <= set(stats.__all__)
    assert len(stats.__all__) == len(set(stats.__all__))
    for name in stats.__all__:
        assert hasattr(stats, name), name
    public = {n for n in dir(stats) if not n.startswith("_") and n not in stats.__all__}
    assert public <= {"annotations"}, public


def test_every_function_documents_itself() -> None:
    for name in stats.__all__:
        obj = getattr(stats, name)
        if inspect.isfunction(obj):
            doc = inspect.getdoc(obj) or ""
            assert len(doc) > 40, name
            assert "Raises" in doc or name in {"cluster_se"} or "n = 0" in doc, name


def test_bad_input_is_a_user_error_and_a_value_error() -> None:
    assert issubclass(stats.StatsInputError, UserError)
    assert issubclass(stats.StatsInputError, ValueError)
    assert (
        stats.StatsInputError("x").exit_code == 1 and stats.StatsInputError("x").http_status == 400
    )


BAD_CALLS = [
    (stats.cluster_se, ([[0.1, 0.2]],)),
    (stats.bootstrap_means, ([],)),
    (stats.bootstrap_means, ([0.1],), {"resamples": "many"}),
    (stats.primary_failure, ({"malformed_output": [object()], "x": [True, False]},)),
    (stats.cost_per_accepted_task, ([1.0, 2.0], [1])),
    (stats.cost_per_accepted_task, ([1.0], [2])),
    (stats.candidates_for_availability, (0.3, 1.0)),
    (stats.wald_interval, (3, 2)),
    (stats.cohen_kappa, (["a"], ["a"]), {"counts": [1, 2]}),
    (stats.cohen_kappa_table, ([[1, -1], [0, 1]],)),
    (stats.verbosity_control_rate, ([["long"]],)),
    (stats.task_scores, (np.zeros((2, 2, 2)),)),
    (stats.task_scores, ([[1, 0], ["x"]],)),
    (stats.mean_pass_hat_k, ([4, 4], [2, 2], 1), {"weights": [1, -1]}),
    (stats.pass_hat_k_from_rate, (0.5, 0)),
    (stats.pass_hat_k_variance_approx, (0.5, -0.1, 2)),
    (stats.normal_interval, (0.1, -0.1)),
    (stats.minimum_detectable_effect, (-0.1,)),
    (stats.tasks_per_arm, (0.5, 0.04), {"alpha": 0.0}),
    (stats.noninferiority_pairs, (2.0, 0.2, 0.02)),
    (stats.pairs_to_clear_margin, (150, 0.04, 0.05, 0.02)),
    (stats.wilson_interval, ("three", 5)),
    (stats.tasks_for_half_width, ("half", 0.02)),
    (stats.variance_of_estimate, ("x", 0.1, 10, 1)),
    (stats.allocate_runs, (0.08, 0.16, 600), {"max_runs": 0}),
    (stats.paired_cluster_bootstrap, ([[1], [0]], [[1], [1]]), {"power": 1.2}),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=lambda c: c[0].__name__)
def test_bad_input_raises_the_user_error(call: tuple) -> None:
    func, args, *kwargs = call
    with pytest.raises(stats.StatsInputError):
        func(*args, **(kwargs[0] if kwargs else {}))
