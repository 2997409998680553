"""A minimal reading of an eval-set directory, so the gate works before bundles land.

The directory holds ``tasks.jsonl`` (one :class:`Task` per line) and an
optional ``manifest.json`` (any JSON object: name, version, ...). The
content-addressed bundle format (release/export/verify) belongs to the
promotion issue; this reader stays the fallback for a plain directory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flywheel.evalset._task import Task
from flywheel.evalset._trials_io import utf8_lines
from pydantic import ValidationError

from flywheel.errors import UserError


@dataclass(frozen=True)
class EvalSet:
    """Tasks by id, the manifest and the directory relative paths resolve against."""

    tasks: dict[str, Task]
    manifest: dict[str, Any] = field(default_factory=dict)
    base_dir: Path = Path(".")

    @property
    def version(self) -> str:
        """Manifest version, or ``"unversioned"``."""
        return str(self.manifest.get("version", "unversioned"))


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "record"
    return f"{where}: {first.get('msg')}"


def load_evalset(directory: str | Path) -> EvalSet:
    """Read ``DIR/tasks.jsonl`` and optional ``DIR/manifest.json``.

    Raises:
        UserError: Missing directory or file, a line that is not a valid task
            (named by line number), or a duplicate task id.
    """
    base = Path(directory)
    tasks_path = base / "tasks.jsonl"
    if not base.is_dir():
        raise UserError(
            f"eval set {base} is not a directory; pass --evalset DIR holding tasks.jsonl"
        )
    if not tasks_path.is_file():
        raise UserError(f"{tasks_path} not found; an eval-set directory needs tasks.jsonl")
    tasks: dict[str, Task] = {}
    for lineno, line in utf8_lines(tasks_path):
        if not line.strip():
            continue
        try:
            task = Task.model_validate_json(line)
        except ValidationError as exc:
            raise UserError(f"{tasks_path}:{lineno}: invalid task: {_first_error(exc)}") from exc
        if task.task_id in tasks:
            raise UserError(f"{tasks_path}:{lineno}: duplicate task_id {task.task_id!r}")
        tasks[task.task_id] = task
    if not tasks:
        raise UserError(f"{tasks_path} holds no tasks")
    manifest: dict[str, Any] = {}
    manifest_path = base / "manifest.json"
    if manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise UserError(f"{manifest_path}: not UTF-8 text ({exc.reason})") from exc
        except json.JSONDecodeError as exc:
            raise UserError(f"{manifest_path}: not JSON ({exc.msg} at line {exc.lineno})") from exc
        if not isinstance(manifest, dict):
            raise UserError(f"{manifest_path}: must hold a JSON object")
    return EvalSet(tasks=tasks, manifest=manifest, base_dir=base)
