"""Statistics of the release gate: pure, vectorised, each tied to its seed equation.

Sources: acceptance-and-statistics 13.2-13.6, traces-to-release-gate
22.3-22.6, and the agent-evaluation playbook. Paired differences are always
candidate minus baseline. Bad input raises :class:`StatsInputError`, which is
both a ``flywheel.errors.UserError`` and a ``ValueError``.
"""

from flywheel.evalset.stats._bootstrap import (
    BootstrapResult,
    bootstrap_means,
    cluster_se,
    paired_cluster_bootstrap,
)
from flywheel.evalset.stats._burden import FAILURE_ORDER, SliceBurden, error_burden, primary_failure
from flywheel.evalset.stats._cost import (
    CostPerAccepted,
    SelectionCosts,
    budgeted_acceptance,
    candidates_for_availability,
    checking_cost_crossover,
    cost_adjusted_utility,
    cost_per_accepted_task,
    selection_costs,
)
from flywheel.evalset.stats._errors import StatsInputError
from flywheel.evalset.stats._intervals import (
    ResolutionBounds,
    resolution_bounds,
    wald_interval,
    wilson_interval,
)
from flywheel.evalset.stats._judge import (
    JudgeErrorRates,
    cohen_kappa,
    cohen_kappa_table,
    contingency_table,
    judge_error_rates,
    position_flip_rate,
    verbosity_control_rate,
)
from flywheel.evalset.stats._noise import (
    corrected_interval,
    corrected_rate,
    grader_slope,
    measured_rate,
    run_inflation,
)
from flywheel.evalset.stats._outcomes import task_counts, task_scores
from flywheel.evalset.stats._paired import (
    PairingGain,
    mcnemar_exact,
    newcombe_paired_interval,
    paired_counts,
    paired_normal_interval,
    pairing_gain,
)
from flywheel.evalset.stats._partial import partial_credit
from flywheel.evalset.stats._passk import (
    mean_pass_at_k,
    mean_pass_hat_k,
    pass_at_k,
    pass_at_k_from_rate,
    pass_at_k_interval,
    pass_hat_k,
    pass_hat_k_from_rate,
    pass_hat_k_interval,
    pass_hat_k_variance_approx,
    rate_for_consistency,
)
from flywheel.evalset.stats._planning import (
    minimum_detectable_effect,
    noninferiority_pairs,
    normal_half_width,
    normal_interval,
    pairs_to_clear_margin,
    tasks_for_half_width,
    tasks_per_arm,
)
from flywheel.evalset.stats._types import Interval
from flywheel.evalset.stats._variance import (
    Allocation,
    VarianceComponents,
    allocate_runs,
    variance_components,
    variance_of_estimate,
    within_task_variance,
)

__all__ = [
    "FAILURE_ORDER",
    "Allocation",
    "BootstrapResult",
    "CostPerAccepted",
    "Interval",
    "JudgeErrorRates",
    "PairingGain",
    "ResolutionBounds",
    "SelectionCosts",
    "SliceBurden",
    "StatsInputError",
    "VarianceComponents",
    "allocate_runs",
    "bootstrap_means",
    "budgeted_acceptance",
    "candidates_for_availability",
    "checking_cost_crossover",
    "cluster_se",
    "cohen_kappa",
    "cohen_kappa_table",
    "contingency_table",
    "corrected_interval",
    "corrected_rate",
    "cost_adjusted_utility",
    "cost_per_accepted_task",
    "error_burden",
    "grader_slope",
    "judge_error_rates",
    "mcnemar_exact",
    "mean_pass_at_k",
    "mean_pass_hat_k",
    "measured_rate",
    "minimum_detectable_effect",
    "newcombe_paired_interval",
    "noninferiority_pairs",
    "normal_half_width",
    "normal_interval",
    "paired_cluster_bootstrap",
    "paired_counts",
    "paired_normal_interval",
    "pairing_gain",
    "pairs_to_clear_margin",
    "partial_credit",
    "pass_at_k",
    "pass_at_k_from_rate",
    "pass_at_k_interval",
    "pass_hat_k",
    "pass_hat_k_from_rate",
    "pass_hat_k_interval",
    "pass_hat_k_variance_approx",
    "position_flip_rate",
    "primary_failure",
    "rate_for_consistency",
    "resolution_bounds",
    "run_inflation",
    "selection_costs",
    "task_counts",
    "task_scores",
    "tasks_for_half_width",
    "tasks_per_arm",
    "variance_components",
    "variance_of_estimate",
    "verbosity_control_rate",
    "wald_interval",
    "wilson_interval",
    "within_task_variance",
]
