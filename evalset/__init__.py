"""Eval sets: tasks, trials, graders, four-verdict aggregation, statistics, the release gate."""

from . import stats
from ._bundle_read import EvalSet, load_evalset
from ._gate import BlockReason, GateResult, gate_paths, run_gate
from ._gate_rules import GateRules, load_rules
from ._graders import (
    Grade,
    Grader,
    GradingContext,
    JudgeCalibration,
    JudgeGrader,
    build_grader,
    grade_trial,
    grader_names,
    load_calibration,
    register_grader,
    resolve_pointer,
    trajectory_f1,
)
from ._report import render_markdown, write_report
from ._task import Criterion, CriterionKind, CriterionRole, GraderSpec, Task
from ._trial import CriterionResult, Observations, ToolCall, Trial, TrialConfig, Verdict
from ._trials_io import load_trials, read_trials, save_trials, trial_from_harness, write_trials
from ._verdict import VerdictTally, aggregate, aggregate_results, tally

__all__ = [
    "BlockReason",
    "Criterion",
    "CriterionKind",
    "CriterionResult",
    "CriterionRole",
    "EvalSet",
    "GateResult",
    "GateRules",
    "Grade",
    "Grader",
    "GraderSpec",
    "GradingContext",
    "JudgeCalibration",
    "JudgeGrader",
    "Observations",
    "Task",
    "ToolCall",
    "Trial",
    "TrialConfig",
    "Verdict",
    "VerdictTally",
    "aggregate",
    "aggregate_results",
    "build_grader",
    "gate_paths",
    "grade_trial",
    "grader_names",
    "load_calibration",
    "load_evalset",
    "load_rules",
    "load_trials",
    "read_trials",
    "register_grader",
    "render_markdown",
    "resolve_pointer",
    "run_gate",
    "save_trials",
    "stats",
    "tally",
    "trajectory_f1",
    "trial_from_harness",
    "write_report",
    "write_trials",
]
