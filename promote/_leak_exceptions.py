"""A reviewer's exception to the release scanner, recorded as an append-only review event.

Why an event: letting a value that a detector flags into a release is a
review decision (someone checked that ``$.prompt`` holds a product name, not
a person), so it is attributed, timestamped and never edited, like an
approval. The event (kind ``leak-exception``) goes into the candidate's
review log with the next review sequence number; its reason is JSON naming
the eval set, task, JSON path and entity type (never the value) and the
reviewer's note. The fold of a review ignores it, so the approval stands.
The reviewer is whoever the caller authenticated (the API passes its
identity), as for every other review event.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from flywheel.evalset import LEAK_EXCEPTION_KIND
from flywheel.pii import ENTITIES
from flywheel.promote._candidates import get_candidate
from flywheel.promote._review import (
    EVENTS,
    ReviewEvent,
    _check_won,
    _insert,
    _lock,
    _require_reviewer,
    review_state,
)

from flywheel import NotFoundError, Store, UserError, record_audit


def record_leak_exception(
    store: Store,
    *,
    evalset: str,
    task_id: str,
    path: str,
    entity: str,
    reviewer: str,
    reason: str,
    project: str = "default",
) -> dict[str, Any]:
    """Record that ``entity`` at ``path`` of ``task_id`` may be released.

    Raises:
        UserError: No reviewer or note, an unknown entity type, an empty path.
        NotFoundError: No approved task ``task_id`` in ``evalset``.
    """
    reviewer = _require_reviewer(reviewer)
    if not (reason or "").strip():
        raise UserError("a leak exception needs a reason: say what you checked at that path")
    labels = sorted(set(ENTITIES.values()))
    if entity not in labels:
        raise UserError(f"unknown entity type {entity!r}; use one of {', '.join(labels)}")
    if not path.strip():
        raise UserError("a leak exception needs the JSON path the release scanner reported")
    rows = store.query(
        "SELECT candidate_id FROM approved_tasks FINAL WHERE project_id = {p:String}"
        " AND evalset = {e:String} AND task_id = {t:String} AND NOT withdrawn",
        {"p": project, "e": evalset, "t": task_id},
    )
    if task_id and not rows:
        raise NotFoundError(
            f"no approved task {task_id!r} in eval set {evalset!r}; the scanner reports task ids"
        )
    cid = rows[0]["candidate_id"] if rows else f"manifest:{evalset}"
    body = {"evalset": evalset, "task_id": task_id, "path": path, "entity": entity}
    note = json.dumps({**body, "note": reason.strip()}, sort_keys=True, ensure_ascii=False)
    with _lock(store, cid):
        if rows:
            state = review_state(store, get_candidate(store, cid, project=project), project=project)
            version = state.version
        else:  # a manifest-level finding: its own log under a pseudo candidate id
            state, version = None, _manifest_version(store, cid, project)
        event = ReviewEvent(
            cid,
            version + 1,
            uuid.uuid4().hex,
            LEAK_EXCEPTION_KIND,
            reviewer,
            version,
            note,
            "",
            "",
            time.time_ns(),
        )
        _insert(store, project, event)
        if state is not None:
            _check_won(store, project, event, state)
    record_audit(store, "review.exception", actor=reviewer, project=project,
                 target=f"{evalset}:{task_id}:{path}",
                 detail={"entity": entity, "event_id": event.event_id, "candidate_id": cid})
    return {**body, "reviewer": reviewer, "event_id": event.event_id, "seq": event.seq}


def _manifest_version(store: Store, cid: str, project: str) -> int:
    n = store.scalar(
        f"SELECT max(seq) AS n FROM {EVENTS} WHERE project_id = {{p:String}}"
        " AND candidate_id = {c:String}",
        {"p": project, "c": cid},
    )
    return int(n or 0)
