"""A release (and an export) that still holds personal data or secrets is refused.

Why here and on every path: redaction runs in promotion, but tasks also reach
``release_tasks`` from files, from edits and from other tools, and a detector
improves after a value was approved. So the release itself scans what it is
about to write -- every task and the manifest, with every ``flywheel.pii``
detector -- and ``export_bundle`` scans the copy it made. A finding blocks
with a report (task, JSON path, entity type; never the value) unless a
reviewer recorded an exception for exactly that task, path and type. An
exception is an append-only review event (kind ``leak-exception`` in the
review log, written by ``flywheel.promote.record_leak_exception``); the
release copies the exceptions it used into its manifest, so an export (which
has no database) honours the same ones.

The detectors are redaction's own, so they cannot see what redaction missed.
A release from the store therefore has a second, independent witness
(``_source_values``): the values each task's source trace held under
personal keys; one still in the task, verbatim, is a finding (rule
``source-value``) like any other. An export has no store: it re-runs the
detectors only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flywheel.evalset._task import Task
from flywheel.pii import find_values, scan_document

from flywheel.errors import LeakRefused

#: Review-event kind of a recorded exception (written by promote, read here).
EXCEPTION_KIND = "leak-exception"
_SHOWN = 8


@dataclass(frozen=True)
class LeakFinding:
    """A detected value in a release: task (``""`` for the manifest), JSON path, entity."""

    task_id: str
    path: str
    entity: str
    rule: str

    @property
    def key(self) -> tuple[str, str, str]:
        """What an exception names."""
        return (self.task_id, self.path, self.entity)

    def to_dict(self) -> dict[str, str]:
        """JSON-ready (no value)."""
        return {"task_id": self.task_id, "path": self.path, "entity": self.entity, "rule": self.rule}


def scan_release(
    tasks: Sequence[Task],
    manifest: dict[str, Any],
    source_values: Mapping[str, Mapping[str, str]] | None = None,
) -> list[LeakFinding]:
    """Every detector over every task and over the manifest (its exceptions excepted).

    Args:
        tasks: The tasks to release.
        manifest: Their manifest.
        source_values: Per source trace id, value -> type of what the trace held
            under personal keys (``_source_values.personal_values``); a task
            holding one of its own trace's values, or the manifest one of any,
            is a finding too.
    """
    known = source_values or {}
    out: list[LeakFinding] = []
    for t in tasks:
        doc = t.model_dump(mode="json")
        found = scan_document(doc)
        values = known.get(t.source_trace_id or "")
        if values:
            found += find_values(doc, values)
        out += [LeakFinding(t.task_id, f.path, f.entity, f.rule) for f in found]
    body = {k: v for k, v in manifest.items() if k != "leak_exceptions"}
    found = scan_document(body, root="manifest")
    every = {v: e for values in known.values() for v, e in values.items()}
    if every:
        found += find_values(body, every, root="manifest")
    out += [LeakFinding("", f.path, f.entity, f.rule) for f in found]
    return out


def scan_bundle(directory: str | Path) -> list[LeakFinding]:
    """``scan_release`` over a bundle directory's ``tasks.jsonl`` and ``manifest.json``."""
    d = Path(directory)
    tasks = [
        Task.model_validate_json(line)
        for line in (d / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return scan_release(tasks, json.loads((d / "manifest.json").read_text(encoding="utf-8")))


def refuse_leaks(
    findings: Iterable[LeakFinding], exceptions: Iterable[dict[str, Any]], what: str
) -> list[dict[str, Any]]:
    """Raise ``LeakRefused`` for findings no exception covers; return the exceptions used.

    Args:
        findings: From ``scan_release`` / ``scan_bundle``.
        exceptions: Dicts with ``task_id``, ``path``, ``entity`` (and who recorded them).
        what: ``release of NAME`` / ``export of NAME@VERSION`` (named in the message).
    """
    allowed = {(e["task_id"], e["path"], e["entity"]): e for e in exceptions}
    found = sorted(set(findings), key=lambda f: f.key)
    open_ = [f for f in found if f.key not in allowed]
    if open_:
        shown = "; ".join(
            f"{f.task_id or 'manifest'} {f.path} {f.entity}" for f in open_[:_SHOWN]
        )
        more = f" and {len(open_) - _SHOWN} more" if len(open_) > _SHOWN else ""
        raise LeakRefused(
            f"{what} refused: {len(open_)} finding(s) of personal data or secrets ({shown}{more}); "
            "redact the candidate again, or record an exception for each checked path "
            "(flywheel promote allow-leak)",
            findings=[f.to_dict() for f in open_],
        )
    used = {f.key for f in found}
    return [allowed[k] for k in sorted(used & set(allowed))]


def stored_exceptions(store: Any, name: str, *, project: str = "default") -> list[dict[str, Any]]:
    """The exceptions reviewers recorded for eval set ``name`` (append-only review events)."""
    rows = store.query(
        "SELECT event_id, reviewer, reason, toUnixTimestamp64Nano(created_at) AS at"
        " FROM review_events WHERE project_id = {p:String} AND kind = {k:String}"
        " ORDER BY created_at, event_id",
        {"p": project, "k": EXCEPTION_KIND},
    )
    out = []
    for r in rows:
        try:
            doc = json.loads(r["reason"])
        except ValueError:
            continue  # not one of ours: an exception is always JSON
        if doc.get("evalset") != name:
            continue
        out.append(
            {
                "task_id": doc.get("task_id", ""),
                "path": doc.get("path", ""),
                "entity": doc.get("entity", ""),
                "reviewer": r["reviewer"],
                "event_id": r["event_id"],
            }
        )
    return out
