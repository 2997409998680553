"""A released eval set as an ablation source: its tasks, where each runs, what grades it.

``flywheel ablate --evalset NAME@VERSION`` runs the tasks of a released,
content-addressed version (verified before anything runs) instead of a
whole benchmark suite. Each task says which environment it runs in through
``metadata.environment`` (written by promotion when it drafts a task from a
harness trace): ``{"kind": "agentdojo", "suite": "banking", "user_task":
"user_task_3", "injection_task": null}``. A task without a runnable
environment is refused by name, or skipped with ``--skip-unrunnable`` (the
report lists the skipped ones). Each task's own criteria grade its trials.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flywheel.evalset import Task, default_root, read_tasks, resolve, verify_bundle

from flywheel import NotFoundError, UserError, canonical_json, sha256_hex

#: Environment kinds the harness can run.
RUNNABLE_KINDS = ("agentdojo",)


def evalset_root(store_url: str | None, root: str | None = None) -> Path:
    """Where released versions live: ``--evalset-root``, else as ``flywheel evalset`` finds them."""
    return Path(root) if root else Path(default_root(store_url))


@dataclass(frozen=True)
class EvalUnit:
    """One eval-set task mapped to a runnable environment (the pairing unit of the ablation).

    Attributes:
        task_id: The eval-set task id.
        suite: Harness suite (``agentdojo:banking``).
        user_task: The environment's task the trial runs.
        injection_task: The injection task, if the task runs under attack.
        task_json: The task's canonical JSON (what its trials are graded against).
    """

    task_id: str
    suite: str
    user_task: str
    injection_task: str | None
    task_json: str

    def task(self) -> Task:
        """The eval-set task."""
        return Task.model_validate_json(self.task_json)

    def to_json(self) -> dict[str, Any]:
        """JSON-able form (stored with the plan, so a resume needs no bundle)."""
        return {
            "task_id": self.task_id,
            "suite": self.suite,
            "user_task": self.user_task,
            "injection_task": self.injection_task,
            "task": self.task_json,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> EvalUnit:
        """Inverse of ``to_json``."""
        return cls(
            doc["task_id"], doc["suite"], doc["user_task"], doc.get("injection_task"), doc["task"]
        )


def task_environment(task: Task) -> tuple[str, str, str | None]:
    """(suite, user task, injection task) the task runs in.

    Raises:
        UserError: No ``metadata.environment``, a kind the harness cannot
            run, or a suite / task the environment does not have (the
            message says which).
    """
    env = task.metadata.get("environment")
    if not isinstance(env, dict) or not env:
        raise UserError("no metadata.environment")
    kind = str(env.get("kind", ""))
    if kind not in RUNNABLE_KINDS:
        raise UserError(f"environment kind {kind!r} is not runnable (runnable: agentdojo)")
    from flywheel.harness import SUITES, injection_task_ids, task_ids

    suite, user_task = str(env.get("suite", "")), str(env.get("user_task", ""))
    injection = env.get("injection_task") or None
    if suite not in SUITES:
        raise UserError(f"agentdojo suite {suite!r} unknown (one of {', '.join(SUITES)})")
    if user_task not in task_ids(suite):
        raise UserError(f"agentdojo:{suite} has no user task {user_task!r}")
    if injection is not None and injection not in injection_task_ids(suite):
        raise UserError(f"agentdojo:{suite} has no injection task {injection!r}")
    return f"{kind}:{suite}", user_task, (str(injection) if injection else None)


@dataclass(frozen=True)
class EvalsetSource:
    """A verified released version and its tasks mapped to environments.

    Attributes:
        ref: ``NAME@VERSION`` (the full version id).
        path: The version directory.
        manifest_sha256: SHA-256 of ``manifest.json`` (which holds every task's hash).
        units: Runnable tasks, in manifest order.
        unrunnable: ``(task_id, reason)`` of the tasks without a runnable environment.
    """

    ref: str
    path: Path
    manifest_sha256: str
    units: tuple[EvalUnit, ...]
    unrunnable: tuple[tuple[str, str], ...]


def load_evalset_source(
    root: str | Path,
    ref: str,
    *,
    tasks: Sequence[str] = (),
    skip_unrunnable: bool = False,
) -> EvalsetSource:
    """Resolve, verify and map an eval-set version for an ablation.

    Args:
        root: Directory of released versions.
        ref: ``NAME@VERSION`` or ``NAME``.
        tasks: Only these task ids (default: every task of the version).
        skip_unrunnable: Leave tasks without a runnable environment out
            (listed in the report) instead of refusing the run.

    Raises:
        NotFoundError: Unknown eval set, version or task id.
        UserError: A bundle that fails verification; unrunnable tasks
            without ``skip_unrunnable``; nothing left to run.
    """
    name, version, path = resolve(root, ref)
    report = verify_bundle(path)
    if not report.ok:
        raise UserError(
            f"--evalset {name}@{version}: the bundle at {path} fails verification "
            f"({'; '.join(report.problems[:3])}); run `flywheel evalset verify {path}`"
        )
    manifest_sha = sha256_hex((path / "manifest.json").read_bytes().decode("utf-8"))
    all_tasks = read_tasks(path)
    by_id = {t.task_id: t for t in all_tasks}
    unknown = [t for t in tasks if t not in by_id]
    if unknown:
        raise NotFoundError(
            f"--tasks: {', '.join(unknown)} not in {name}@{version}; its tasks: {', '.join(by_id)}"
        )
    chosen = [by_id[t] for t in tasks] if tasks else all_tasks
    units: list[EvalUnit] = []
    bad: list[tuple[str, str]] = []
    for task in chosen:
        try:
            suite, user_task, injection = task_environment(task)
        except UserError as exc:
            bad.append((task.task_id, str(exc)))
            continue
        units.append(
            EvalUnit(
                task.task_id,
                suite,
                user_task,
                injection,
                canonical_json(task.model_dump(mode="json")),
            )
        )
    if bad and not skip_unrunnable:
        listed = "; ".join(f"{t} ({why})" for t, why in bad[:10])
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise UserError(
            f"--evalset {name}@{version}: {len(bad)} task(s) have no runnable environment: "
            f"{listed}{more}; set metadata.environment on them, choose others with --tasks, "
            "or pass --skip-unrunnable"
        )
    if not units:
        raise UserError(
            f"--evalset {name}@{version}: none of its {len(chosen)} task(s) has a runnable "
            "environment (metadata.environment with kind agentdojo)"
        )
    return EvalsetSource(f"{name}@{version}", path, manifest_sha, tuple(units), tuple(bad))
