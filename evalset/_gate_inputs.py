"""Input integrity of the release gate: every bad input is refused, one line naming it.

The gate compares two configurations task by task, so before grading it
refuses what would make that comparison silently wrong:

- an arm that mixes configuration ids (two systems pooled into one arm),
  unless ``config_ids`` picks one per arm;
- a trial for a task the eval set does not hold, or for another version of
  that task (graded against criteria it was not run under);
- the same trial twice: a trial id, an environment identity (a later trial
  could pass on state an earlier one left behind) or a trace id seen before,
  in either arm;
- a task without trials in an arm (the paired comparison needs every task
  in both).

Messages name ``file:line`` when the arm came from :func:`read_trials_file`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from flywheel.evalset._bundle_read import EvalSet
from flywheel.evalset._trial import Trial
from flywheel.evalset._trials_io import TrialsFile

from flywheel.errors import UserError

ArmInput = Sequence[Trial] | TrialsFile


@dataclass(frozen=True)
class Arm:
    """One arm's trials after the integrity checks, and where they came from."""

    name: str
    trials: list[Trial]
    source: TrialsFile | None
    config_id: str
    dropped: int = 0

    def where(self, trial: Trial) -> str:
        """``file:line`` (or ``arm trial 'id'``) naming ``trial`` in messages."""
        if self.source is not None:
            return f"{self.source.where(trial)} ({self.name} trial {trial.trial_id!r})"
        return f"{self.name} trial {trial.trial_id!r}"


def _as_arm(name: str, data: ArmInput) -> tuple[list[Trial], TrialsFile | None]:
    if isinstance(data, TrialsFile):
        return list(data.trials), data
    return list(data), None


def _pick_config(
    name: str, trials: list[Trial], source: TrialsFile | None, wanted: str | None
) -> Arm:
    """One configuration per arm: refuse a mix unless ``wanted`` names the one to keep."""
    where = str(source.path) if source is not None else f"the {name} trials"
    ids = Counter(t.config.id for t in trials)
    if wanted is not None:
        kept = [t for t in trials if t.config.id == wanted]
        if not kept:
            raise UserError(
                f"{where}: no trial has config.id {wanted!r} (present: "
                f"{', '.join(sorted(ids))}); pass --config-id {name}=ID with one of them"
            )
        return Arm(name, kept, source, wanted, dropped=len(trials) - len(kept))
    if len(ids) > 1:
        first = {}
        for t in trials:
            first.setdefault(t.config.id, t)
        listing = ", ".join(
            f"{cid!r} ({n} trials, first {_at(source, first[cid])})" for cid, n in ids.most_common()
        )
        raise UserError(
            f"{where} mixes configurations {listing}; one arm is one configuration: "
            f"pass --config-id {name}=ID to pick one"
        )
    return Arm(name, trials, source, next(iter(ids)) if ids else "")


def _at(source: TrialsFile | None, trial: Trial) -> str:
    if source is not None and trial.trial_id in source.lines:
        return f"at line {source.lines[trial.trial_id]}"
    return f"trial {trial.trial_id!r}"


def check_arms(
    evalset: EvalSet,
    baseline: ArmInput,
    candidate: ArmInput,
    config_ids: Mapping[str, str] | None = None,
) -> dict[str, Arm]:
    """Both arms checked against the eval set and each other (see module).

    Args:
        evalset: The eval set the trials were run on.
        baseline: Baseline trials (a list, or a :class:`TrialsFile` for line numbers).
        candidate: Candidate trials, likewise.
        config_ids: ``{"baseline": id, "candidate": id}`` (either key optional)
            to keep one configuration of an arm that holds several.

    Raises:
        UserError: On any refusal listed in the module docstring.
    """
    picks = dict(config_ids or {})
    unknown_arms = sorted(set(picks) - {"baseline", "candidate"})
    if unknown_arms:
        raise UserError(
            f"--config-id {unknown_arms[0]}=...: the arms are baseline and candidate"
        )
    arms: dict[str, Arm] = {}
    for name, data in (("baseline", baseline), ("candidate", candidate)):
        trials, source = _as_arm(name, data)
        if not trials:
            raise UserError(f"the {name} arm holds no trials")
        arms[name] = _pick_config(name, trials, source, picks.get(name))
    _check_tasks(evalset, arms)
    _check_unique(arms)
    _check_coverage(evalset, arms)
    return arms


def _check_tasks(evalset: EvalSet, arms: dict[str, Arm]) -> None:
    for arm in arms.values():
        for t in arm.trials:
            task = evalset.tasks.get(t.task_id)
            if task is None:
                raise UserError(
                    f"{arm.where(t)}: task {t.task_id!r} is not in the eval set "
                    f"{evalset.base_dir}; grade it against the eval set it came from"
                )
            if t.task_version != task.version:
                raise UserError(
                    f"{arm.where(t)}: ran task {t.task_id!r} version {t.task_version!r}, "
                    f"the eval set holds version {task.version!r}; rerun it on this version "
                    "or gate it against the eval set it came from"
                )


def _check_unique(arms: dict[str, Arm]) -> None:
    seen: dict[str, dict[str, str]] = {"trial id": {}, "environment": {}, "trace id": {}}
    for arm in arms.values():
        for t in arm.trials:
            keys = {"trial id": t.trial_id, "environment": t.environment_id, "trace id": t.trace_id}
            for kind, value in keys.items():
                if not value:
                    continue
                if value in seen[kind]:
                    hint = (
                        "; every trial needs its own isolated environment"
                        if kind == "environment"
                        else "; a trial counts once"
                    )
                    raise UserError(
                        f"{arm.where(t)}: {kind} {value!r} is reused (first in "
                        f"{seen[kind][value]}){hint}"
                    )
                seen[kind][value] = arm.where(t)


def _check_coverage(evalset: EvalSet, arms: dict[str, Arm]) -> None:
    for arm in arms.values():
        covered = {t.task_id for t in arm.trials}
        missing = sorted(set(evalset.tasks) - covered)
        if missing:
            where = f" in {arm.source.path}" if arm.source is not None else ""
            raise UserError(
                f"{arm.name} has no trials{where} for task(s) {', '.join(missing[:5])}"
                f"{' ...' if len(missing) > 5 else ''}; "
                "the paired comparison needs every task in both arms"
            )


def check_out_dir(out_dir: str | Path) -> Path:
    """The report directory, refused up front when it is an existing file.

    Raises:
        UserError: ``out_dir`` exists and is not a directory.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; pass a directory for report.json/.md/.png")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"--out {out}: {parent} is a file, not a directory")
            break
    return out
