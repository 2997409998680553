"""Oracle-component ablations over the harness: which component, fixed, helps most.

Baseline and oracle configurations run the same tasks (the suite's, or a
released eval set's) on paired seeds; marginal deltas in a declared order or
the whole lattice, paired intervals, pass^k, cost per accepted task, Shapley
ranks, per-step hazard, recovery and H50.
"""

from ._ablate import (
    AblationPlan,
    AblationRun,
    configurations,
    load_plan,
    load_results,
    run_ablation,
)
from ._ablate_evalset import (
    EvalsetSource,
    EvalUnit,
    evalset_root,
    load_evalset_source,
    task_environment,
)
from ._ablate_report import (
    AblationReport,
    ConfigResult,
    PairedDelta,
    analyse,
    paired_delta,
    plot_png,
    shapley,
    to_markdown,
)
from ._horizon import (
    HorizonEstimate,
    estimate_horizon,
    h50,
    hazard_rate,
    implied_hazard,
    recovery,
    survival,
)
from ._plan import build_plan, write_outputs

__all__ = [
    "build_plan",
    "write_outputs",
    "AblationPlan",
    "AblationReport",
    "AblationRun",
    "ConfigResult",
    "EvalUnit",
    "EvalsetSource",
    "HorizonEstimate",
    "PairedDelta",
    "analyse",
    "configurations",
    "estimate_horizon",
    "evalset_root",
    "h50",
    "hazard_rate",
    "implied_hazard",
    "load_evalset_source",
    "load_plan",
    "load_results",
    "paired_delta",
    "plot_png",
    "recovery",
    "run_ablation",
    "shapley",
    "survival",
    "task_environment",
    "to_markdown",
]
