"""Trials from JSON Lines (validated, errors name the line) and to/from the store."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flywheel.evalset._trial import Trial
from pydantic import ValidationError

from flywheel.errors import UserError

if TYPE_CHECKING:
    from flywheel import Store


@dataclass(frozen=True)
class TrialsFile:
    """Trials read from one JSONL file, with the line each came from.

    ``run_gate`` accepts it for an arm, so every input error it raises names
    ``file:line`` instead of only a trial id.
    """

    path: Path
    trials: list[Trial]
    lines: dict[str, int] = field(default_factory=dict)

    def where(self, trial: Trial) -> str:
        """``file:line`` of ``trial`` (the file alone when the line is unknown)."""
        line = self.lines.get(trial.trial_id)
        return f"{self.path}:{line}" if line else str(self.path)


def utf8_lines(p: Path) -> Iterator[tuple[int, str]]:
    """Numbered text lines of ``p``; a line that is not UTF-8 is an error naming it."""
    for lineno, raw in enumerate(p.read_bytes().splitlines(), 1):
        try:
            yield lineno, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(
                f"{p}:{lineno}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                "write it as UTF-8 JSON Lines"
            ) from exc


def read_trials_file(path: str | Path) -> TrialsFile:
    """Parse one :class:`Trial` per non-blank line, keeping each trial's line number.

    Raises:
        UserError: Missing file, a line that is not UTF-8 or not JSON, an
            invalid trial (with the file, line number and first offending
            field), a duplicate trial id, or no trial at all.
    """
    p = Path(path)
    if not p.is_file():
        raise UserError(f"trials file {p} not found; pass a JSONL file with one trial per line")
    trials: list[Trial] = []
    lines: dict[str, int] = {}
    for lineno, line in utf8_lines(p):
        if not line.strip():
            continue
        try:
            trial = Trial.model_validate_json(line)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first.get("loc", ())) or "line"
            if first.get("type") == "json_invalid":
                raise UserError(f"{p}:{lineno}: not valid JSON ({first.get('msg')})") from exc
            raise UserError(f"{p}:{lineno}: invalid trial: {where}: {first.get('msg')}") from exc
        if trial.trial_id in lines:
            raise UserError(
                f"{p}:{lineno}: duplicate trial_id {trial.trial_id!r} "
                f"(first at line {lines[trial.trial_id]})"
            )
        lines[trial.trial_id] = lineno
        trials.append(trial)
    if not trials:
        raise UserError(f"{p} holds no trials")
    return TrialsFile(p, trials, lines)


def read_trials(path: str | Path) -> list[Trial]:
    """Parse one :class:`Trial` per non-blank line (see :func:`read_trials_file`).

    Raises:
        UserError: As :func:`read_trials_file`.
    """
    return read_trials_file(path).trials


def write_trials(path: str | Path, trials: Iterable[Trial]) -> int:
    """Write trials as JSON Lines; returns the count."""
    n = 0
    with Path(path).open("w", encoding="utf-8") as fh:
        for trial in trials:
            fh.write(trial.model_dump_json(exclude_none=True) + "\n")
            n += 1
    return n


def save_trials(store: Store, trials: Iterable[Trial], *, project_id: str = "default") -> int:
    """Insert graded trials and their per-criterion grades into the store (columnar).

    The full record goes into ``body`` with its ``schema_version`` so it can
    be read back by :func:`load_trials` after later model changes.
    """
    items = list(trials)
    if not items:
        return 0
    store.insert(
        "evalset_trials",
        {
            "project_id": [project_id] * len(items),
            "trial_id": [t.trial_id for t in items],
            "task_id": [t.task_id for t in items],
            "task_version": [t.task_version for t in items],
            "config_id": [t.config.id for t in items],
            "environment_id": [t.environment_id for t in items],
            "artifact_digest": [t.artifact_digest or "" for t in items],
            "trace_id": [t.trace_id or "" for t in items],
            "verdict": [t.verdict.value if t.verdict else "" for t in items],
            "partial_credit": [t.partial_credit for t in items],
            "cost_usd": [t.cost_usd for t in items],
            "tokens": [t.tokens for t in items],
            "latency_s": [t.latency_s for t in items],
            "schema_version": [t.schema_version for t in items],
            "body": [t.model_dump_json(exclude_none=True) for t in items],
        },
    )
    grades = [(t.trial_id, r) for t in items for r in t.results]
    if grades:
        store.insert(
            "evalset_grades",
            {
                "project_id": [project_id] * len(grades),
                "trial_id": [tid for tid, _ in grades],
                "criterion_id": [r.criterion_id for _, r in grades],
                "kind": [r.kind.value for _, r in grades],
                "role": [r.role.value for _, r in grades],
                "verdict": [r.verdict.value for _, r in grades],
                "score": [r.score for _, r in grades],
                "reason": [r.reason for _, r in grades],
                "grader_name": [r.grader.name if r.grader else "" for _, r in grades],
                "grader_args": [
                    json.dumps(r.grader.args, sort_keys=True) if r.grader else "{}"
                    for _, r in grades
                ],
            },
        )
    return len(items)


def load_trials(
    store: Store, *, project_id: str = "default", config_id: str | None = None
) -> list[Trial]:
    """Read stored trials back (newest write of each trial id), ordered by trial id."""
    rows = store.query(
        "SELECT body FROM evalset_trials FINAL WHERE project_id = {p:String}"
        " AND ({c:String} = '' OR config_id = {c:String}) ORDER BY trial_id",
        {"p": project_id, "c": config_id or ""},
    )
    return [Trial.model_validate_json(r["body"]) for r in rows]


def trial_from_harness(record: Any, *, tool_calls: list[dict[str, Any]] | None = None) -> Trial:
    """A gradeable :class:`Trial` from an agent-harness trial record (duck-typed).

    Reads the harness's fields by name (an object or a mapping): identity
    (``trial_id``, ``task_id``, ``environment_id``, ``trace_id``), the
    configuration (``config_id``, ``agent``, ``seams``/``seam_modes``,
    ``budget``), outcome (``utility``/``security`` become recorded verdicts
    for ``recorded`` graders; ``status == "budget_exhausted"``), usage
    (``cost``, ``input_tokens + output_tokens``, ``duration_s``), the sT
    snapshot (JSON text) and the final output. The artifact digest is the
    sha256 of sT. Tool calls are not in the record (they live in the trace);
    pass them to grade policy criteria.

    Raises:
        UserError: When a required field is missing or sT is not JSON.
    """

    def get(name: str, default: Any = None) -> Any:
        if isinstance(record, dict):
            return record.get(name, default)
        return getattr(record, name, default)

    for name in ("trial_id", "task_id", "environment_id"):
        if not get(name):
            raise UserError(f"harness record lacks {name!r}; pass a complete trial record")
    s_t = get("sT")
    try:
        snapshot = json.loads(s_t) if isinstance(s_t, str) and s_t else s_t
    except json.JSONDecodeError as exc:
        raise UserError(f"harness trial {get('trial_id')!r}: sT is not JSON ({exc.msg})") from exc
    recorded = {
        key: ("pass" if get(key) else "fail")
        for key in ("utility", "security")
        if get(key) is not None
    }
    agent = get("agent") or {}
    budget = {k: float(v) for k, v in (get("budget") or {}).items() if isinstance(v, int | float)}
    tokens = (get("input_tokens") or 0) + (get("output_tokens") or 0)
    return Trial.model_validate(
        {
            "trial_id": get("trial_id"),
            "task_id": get("task_id"),
            "config": {
                "id": get("config_id") or "unknown",
                "model": str(agent.get("model", agent.get("kind", "")))
                if isinstance(agent, dict)
                else "",
                "scaffold": "harness",
                "budgets": budget,
                "extra": {"agent": agent, "seam_modes": get("seam_modes") or {}},
            },
            "environment_id": get("environment_id"),
            "artifact_digest": hashlib.sha256(s_t.encode()).hexdigest()
            if isinstance(s_t, str)
            else None,
            "trace_id": get("trace_id") or None,
            "cost_usd": get("cost"),
            "tokens": tokens,
            "latency_s": get("duration_s"),
            "observations": {
                "snapshot": snapshot,
                "output": get("final_output"),
                "transcript": get("final_output"),
                "tool_calls": tool_calls,
                "recorded": recorded,
                "budget_exhausted": get("status") == "budget_exhausted",
            },
        }
    )
