"""Failure attribution: taxonomy, signals, learned model, attributor, judge, Who&When import."""

from flywheel.values import near_copy

from ._attributor import (
    VERSION,
    Attribution,
    attribute_steps,
    attribute_trace,
    attribution_features,
    declared_outcome,
    load_for_attribution,
    walk_back,
)
from ._calibration import (
    attribute_with_judge,
    calibrate_judge,
    judge_gate,
    parse_judge,
    read_calibration,
)
from ._faults import InjectedFault, read_faults, score_faults
from ._features import MODEL_CATEGORIES, STEP_FEATURES
from ._formats import speaker_of
from ._judge import JudgeAttributor, JudgeResult, judge_agreement, parse_reply
from ._model import AttributionModel, Example, fit_model, load_model, prior_model
from ._signals import all_signals
from ._steps import LABEL_PREFIXES, Signal, Step, load_trace, steps_from_rows
from ._store import read_attribution, read_attributions, save_attributions, select_traces
from ._taxonomy import (
    CATEGORIES,
    DESCRIPTIONS,
    HAZARD_CATEGORY,
    MULTI_AGENT,
    OUTCOMES,
    SINGLE_AGENT,
    UNDETERMINED,
    UNKNOWN,
    category_distribution,
    multi_agent_category,
)
from ._whowhen import (
    import_whowhen,
    iter_logs,
    log_to_otlp,
    parse_log,
    read_labels,
    trace_id_for,
)

__all__ = [
    "AttributionModel",
    "Example",
    "MODEL_CATEGORIES",
    "STEP_FEATURES",
    "attribution_features",
    "fit_model",
    "load_for_attribution",
    "load_model",
    "prior_model",
    "near_copy",
    "read_calibration",
    "parse_judge",
    "judge_gate",
    "calibrate_judge",
    "category_distribution",
    "attribute_with_judge",
    "CATEGORIES",
    "DESCRIPTIONS",
    "HAZARD_CATEGORY",
    "LABEL_PREFIXES",
    "MULTI_AGENT",
    "OUTCOMES",
    "SINGLE_AGENT",
    "UNDETERMINED",
    "UNKNOWN",
    "VERSION",
    "Attribution",
    "InjectedFault",
    "JudgeAttributor",
    "JudgeResult",
    "Signal",
    "Step",
    "all_signals",
    "attribute_steps",
    "attribute_trace",
    "declared_outcome",
    "import_whowhen",
    "iter_logs",
    "judge_agreement",
    "load_trace",
    "log_to_otlp",
    "multi_agent_category",
    "parse_log",
    "parse_reply",
    "read_attribution",
    "read_attributions",
    "read_faults",
    "read_labels",
    "save_attributions",
    "score_faults",
    "select_traces",
    "speaker_of",
    "steps_from_rows",
    "trace_id_for",
    "walk_back",
]
