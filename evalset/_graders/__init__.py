"""Graders: registered factories, rebuildable from ``(name, args)``.

Importing this package registers the built-in graders: ``state``,
``schema``, ``policy``, ``judge``, ``budget``, ``side-effect`` and
``recorded``.
"""

from flywheel.evalset._graders import (
    _budget,
    _judge,
    _policy,
    _recorded,
    _schema,
    _side_effect,
    _state,
)
from flywheel.evalset._graders._base import (
    Grade,
    Grader,
    GradingContext,
    build_grader,
    grader_names,
    register_grader,
    register_schema,
    schema_names,
)
from flywheel.evalset._graders._grade_trial import grade_trial
from flywheel.evalset._graders._judge import JudgeCalibration, JudgeGrader, load_calibration
from flywheel.evalset._graders._policy import trajectory_f1
from flywheel.evalset._graders._state import resolve_pointer

del _budget, _judge, _policy, _recorded, _schema, _side_effect, _state

__all__ = [
    "Grade",
    "Grader",
    "GradingContext",
    "JudgeCalibration",
    "JudgeGrader",
    "build_grader",
    "grade_trial",
    "grader_names",
    "load_calibration",
    "register_grader",
    "register_schema",
    "resolve_pointer",
    "schema_names",
    "trajectory_f1",
]
