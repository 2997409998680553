"""Review: append-only, attributed events with optimistic concurrency.

Why events: a review is evidence (who approved what content, when, after
which edit), so nothing is updated in place. The state of a candidate is the
fold of its events in ``seq`` order; the *review version* is the seq of the
last accepted event (0 before any review).

Two reviewers never silently overwrite each other: every event carries the
version its author saw (``base_version``). A write whose base is not the
current version raises ``ConflictError`` (HTTP 409) naming the event that
came first. Writes are serialised per process by a lock; across processes
the event takes ``seq = base_version + 1`` and is read back: when another
event holds that seq and was inserted first, the write reports a conflict
and the fold ignores the losing row (it stays in the log as evidence).

Life of a candidate::

    open --claim--> claimed --edit--> claimed
      ^               |--approve--> approved   (the exact task content, by SHA-256)
      |               |--reject(reason)--> rejected
      |               |--needs-info(reason)--> needs-info --claim--> claimed
      |               '--unclaim--> open
      '-----reopen---- approved / rejected   (an approval is withdrawn)

A ``redact`` event (``promote._rerun``, claimed only) records a re-run of
redaction with reviewer rules; its body is the task with its text re-drafted.
A ``leak-exception`` event (``promote._leak_exceptions``) lets one path the
release scanner flags into a release; it does not change the state.

Only ``approved`` candidates reach ``approved_tasks``, the table a release
reads: nothing enters a release without an approving review.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from flywheel.evalset import Task, task_sha256
from flywheel.promote._api_guard import candidate_view
from flywheel.promote._candidates import Candidate, get_candidate, list_candidates
from pydantic import ValidationError

from flywheel import ConflictError, Store, UserError

#: Event kinds.
KINDS: tuple[str, ...] = (
    "claim",
    "unclaim",
    "edit",
    "approve",
    "reject",
    "needs-info",
    "reopen",
    "redact",
    "leak-exception",
)
#: Review statuses (what the queue filters on).
STATUSES: tuple[str, ...] = ("open", "claimed", "needs-info", "approved", "rejected")
#: The review log (promote/migrations/040_review_events.sql: on every node of a cluster).
EVENTS = "review_events"

_locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
_locks_guard = threading.Lock()


@dataclass(frozen=True)
class ReviewEvent:
    """One stored event."""

    candidate_id: str
    seq: int
    event_id: str
    kind: str
    reviewer: str
    base_version: int
    reason: str = ""
    body: str = ""
    task_sha256: str = ""
    created_at: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the edit body parsed)."""
        return {
            "seq": self.seq,
            "event_id": self.event_id,
            "kind": self.kind,
            "reviewer": self.reviewer,
            "base_version": self.base_version,
            "reason": self.reason,
            "task": json.loads(self.body) if self.body else None,
            "task_sha256": self.task_sha256,
            "created_at": self.created_at,
        }


@dataclass
class ReviewState:
    """A candidate's review, folded from its accepted events."""

    candidate_id: str
    version: int = 0
    status: str = "open"
    claimed_by: str = ""
    task: dict[str, Any] | None = None
    edited: bool = False
    approved_sha256: str = ""
    decided_by: str = ""
    reason: str = ""
    events: list[ReviewEvent] = field(default_factory=list)

    @property
    def last(self) -> ReviewEvent | None:
        """The last accepted event."""
        return self.events[-1] if self.events else None

    def to_dict(self, *, with_events: bool = False) -> dict[str, Any]:
        """JSON-ready state."""
        d: dict[str, Any] = {
            "version": self.version,
            "status": self.status,
            "claimed_by": self.claimed_by,
            "edited": self.edited,
            "approved_sha256": self.approved_sha256,
            "decided_by": self.decided_by,
            "reason": self.reason,
        }
        if with_events:
            d["events"] = [e.to_dict() for e in self.events]
        return d


def fold(
    candidate_id: str, draft: dict[str, Any] | None, events: Sequence[ReviewEvent]
) -> ReviewState:
    """The state after ``events`` (sorted by seq, then insertion); losers of a seq are skipped."""
    st = ReviewState(candidate_id, task=draft)
    for e in events:
        if e.seq != st.version + 1:
            continue  # lost a race for this seq (or a gap): not part of the review
        st.version = e.seq
        st.events.append(e)
        if e.kind == "claim":
            st.status, st.claimed_by = "claimed", e.reviewer
        elif e.kind == "unclaim":
            st.status, st.claimed_by = "open", ""
        elif e.kind == "edit":
            st.task, st.edited = json.loads(e.body), True
        elif e.kind == "redact":
            if e.body:
                st.task = json.loads(e.body)
        elif e.kind == "approve":
            st.status, st.claimed_by, st.decided_by = "approved", "", e.reviewer
            st.approved_sha256, st.reason = e.task_sha256, e.reason
        elif e.kind == "reject":
            st.status, st.claimed_by, st.decided_by, st.reason = (
                "rejected",
                "",
                e.reviewer,
                e.reason,
            )
        elif e.kind == "needs-info":
            st.status, st.claimed_by, st.decided_by, st.reason = (
                "needs-info",
                "",
                e.reviewer,
                e.reason,
            )
        elif e.kind == "reopen":
            st.status, st.claimed_by, st.approved_sha256 = "open", "", ""
            st.decided_by, st.reason = "", e.reason
    return st


_EVENT_SQL = (
    "SELECT candidate_id, seq, event_id, kind, reviewer, base_version, reason, body, task_sha256,"
    " toUnixTimestamp64Nano(created_at) AS created_at"
    f" FROM {EVENTS} WHERE project_id = {{{{project:String}}}} {{where}}"
    " ORDER BY candidate_id, seq, inserted_at, created_at, event_id"
)


def read_events(
    store: Store, *, project: str = "default", candidate_ids: Sequence[str] | None = None
) -> dict[str, list[ReviewEvent]]:
    """Stored events per candidate, in fold order (losing rows included)."""
    params: dict[str, Any] = {"project": project}
    where = ""
    if candidate_ids is not None:
        where = "AND candidate_id IN {ids:Array(String)}"
        params["ids"] = list(candidate_ids)
    out: dict[str, list[ReviewEvent]] = defaultdict(list)
    for r in store.query(_EVENT_SQL.format(where=where), params):
        out[r["candidate_id"]].append(
            ReviewEvent(
                r["candidate_id"],
                int(r["seq"]),
                r["event_id"],
                r["kind"],
                r["reviewer"],
                int(r["base_version"]),
                r["reason"],
                r["body"],
                r["task_sha256"],
                int(r["created_at"]),
            )
        )
    return out


def review_state(store: Store, candidate: Candidate, *, project: str = "default") -> ReviewState:
    """The folded review of one candidate (its draft as the starting task)."""
    events = read_events(store, project=project, candidate_ids=[candidate.candidate_id])
    return fold(candidate.candidate_id, candidate.task(), events.get(candidate.candidate_id, []))


def validate_task(body: Any, *, task_id: str | None = None) -> Task:
    """A reviewer's task through the same pydantic ``Task`` model as a draft.

    Raises:
        UserError: The body is not a valid task (first error named), changes
            the task id, or names a grader that cannot be built.
    """
    from flywheel.promote._draft import check_graders

    try:
        task = Task.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "task"
        raise UserError(f"invalid task: {where}: {first.get('msg')}") from exc
    if task_id is not None and task.task_id != task_id:
        raise UserError(
            f"an edit cannot change task_id ({task_id!r} -> {task.task_id!r}); keep the drafted id"
        )
    split = task.metadata.get("split", "dev")
    if split not in ("dev", "held-out"):
        raise UserError(f"invalid task: metadata.split {split!r}; use 'dev' or 'held-out'")
    check_graders(task)
    return task


def _lock(store: Store, candidate_id: str) -> threading.Lock:
    with _locks_guard:
        return _locks[f"{store.url}|{store.database}|{candidate_id}"]


def _require_reviewer(reviewer: str | None) -> str:
    """The acting reviewer's name; every review event is attributed."""
    reviewer = (reviewer or "").strip()
    if not reviewer:
        raise UserError("a review event needs a reviewer: the identity of a review key")
    return reviewer


def drafted_candidate(store: Store, candidate_id: str, *, project: str, action: str) -> Candidate:
    """The candidate, refusing one that has no drafted task yet."""
    cand = get_candidate(store, candidate_id, project=project)
    if cand.stage != "drafted":
        raise UserError(
            f"candidate {candidate_id} is at stage {cand.stage!r}; only drafted candidates are "
            f"{action} (run `flywheel promote draft`)"
        )
    return cand


def _conflict(st: ReviewState, cid: str, base_version: int) -> ConflictError:
    last = st.last
    who = f" (last: {last.kind} by {last.reviewer})" if last else ""
    return ConflictError(
        f"candidate {cid} is at review version {st.version}{who}; your request was based on "
        f"version {base_version}. Reload it and decide again; nothing was overwritten."
    )


def record_event(
    store: Store,
    candidate_id: str,
    kind: str,
    reviewer: str,
    base_version: int,
    *,
    reason: str = "",
    task: Any = None,
    project: str = "default",
) -> ReviewState:
    """Append one review event after checking it against the current state.

    Args:
        store: The store.
        candidate_id: The candidate reviewed.
        kind: One of ``KINDS``.
        reviewer: Who acts (required; attributed on the event).
        base_version: The review version the reviewer saw.
        reason: Required for reject and needs-info.
        task: The edited task (``edit`` only), validated by ``Task``.
        project: Project id.

    Returns:
        The new state.

    Raises:
        UserError: Bad kind, missing reviewer/reason, invalid task, candidate not drafted.
        ConflictError: Stale ``base_version``, or the candidate is claimed by
            someone else / not claimed by ``reviewer`` / already decided.
        NotFoundError: No such candidate.
    """
    if kind not in KINDS:
        raise UserError(f"unknown review event {kind!r}; use one of {', '.join(KINDS)}")
    if kind == "redact":
        raise UserError("a redact event is written by re-running redaction (redact_candidate)")
    if kind == "leak-exception":
        raise UserError("a leak exception is written by record_leak_exception (allow-leak)")
    reviewer = _require_reviewer(reviewer)
    reason = (reason or "").strip()
    if kind in ("reject", "needs-info") and not reason:
        raise UserError(f"{kind} needs a reason; say what is wrong or what is missing")
    cand = drafted_candidate(store, candidate_id, project=project, action="reviewed")
    with _lock(store, candidate_id):
        st = review_state(store, cand, project=project)
        if base_version != st.version:
            raise _conflict(st, candidate_id, base_version)
        body, sha = "", ""
        if kind == "claim":
            if st.status in ("approved", "rejected"):
                raise ConflictError(f"candidate {candidate_id} is {st.status}; reopen it first")
            if st.status == "claimed" and st.claimed_by != reviewer:
                raise ConflictError(f"candidate {candidate_id} is claimed by {st.claimed_by}")
        elif kind == "reopen":
            if st.status not in ("approved", "rejected", "needs-info"):
                raise ConflictError(f"candidate {candidate_id} is {st.status}; nothing to reopen")
        else:
            if st.status != "claimed" or st.claimed_by != reviewer:
                holder = f"claimed by {st.claimed_by}" if st.claimed_by else st.status
                raise ConflictError(
                    f"candidate {candidate_id} is {holder}; {reviewer} must claim it before {kind}"
                )
            if kind == "edit":
                current_id = (st.task or {}).get("task_id")
                t = validate_task(task, task_id=current_id)
                body = t.model_dump_json()
                sha = task_sha256(t)
            elif kind == "approve":
                if st.task is None:
                    raise UserError(f"candidate {candidate_id} has no task to approve")
                # What is approved (and released) is the task as the review view shows it:
                # one redaction for both, so nothing the view hides reaches a bundle.
                shown = candidate_view(store, cand, st, project=project)["task"]
                t = validate_task({**shown, "task_id": st.task.get("task_id")})
                body, sha = t.model_dump_json(), task_sha256(t)
        event = ReviewEvent(
            candidate_id,
            st.version + 1,
            uuid.uuid4().hex,
            kind,
            reviewer,
            base_version,
            reason,
            body if kind == "edit" else "",
            sha,
            time.time_ns(),
        )
        _insert(store, project, event)
        _check_won(store, project, event, st)
        new = fold(candidate_id, cand.task(), [*st.events, event])
        if kind == "approve":
            _write_approved(store, project, cand, new, body, withdrawn=False)
        elif st.status == "approved":
            _write_approved(store, project, cand, new, json.dumps(st.task), withdrawn=True)
        return new


def _insert(store: Store, project: str, e: ReviewEvent) -> None:
    store.insert(
        EVENTS,
        {
            "project_id": [project],
            "candidate_id": [e.candidate_id],
            "seq": [e.seq],
            "event_id": [e.event_id],
            "kind": [e.kind],
            "reviewer": [e.reviewer],
            "base_version": [e.base_version],
            "reason": [e.reason],
            "body": [e.body],
            "task_sha256": [e.task_sha256],
            "created_at": [e.created_at],
        },
    )


def _check_won(store: Store, project: str, event: ReviewEvent, before: ReviewState) -> None:
    """Read the seq back: another process may have taken it first."""
    rows = store.query(
        f"SELECT event_id FROM {EVENTS} WHERE project_id = {{p:String}}"
        " AND candidate_id = {c:String} AND seq = {s:UInt32}"
        " ORDER BY inserted_at, created_at, event_id LIMIT 1",
        {"p": project, "c": event.candidate_id, "s": event.seq},
    )
    if rows and rows[0]["event_id"] != event.event_id:
        raise _conflict(before, event.candidate_id, event.base_version)


def _write_approved(
    store: Store, project: str, cand: Candidate, st: ReviewState, body: str, *, withdrawn: bool
) -> None:
    task = json.loads(body) if body else {}
    store.insert(
        "approved_tasks",
        {
            "project_id": [project],
            "evalset": [cand.evalset],
            "task_id": [task.get("task_id", "")],
            "candidate_id": [cand.candidate_id],
            "trace_id": [cand.trace_id],
            "body": [body],
            "task_sha256": [st.approved_sha256 if not withdrawn else ""],
            "approved_by": [st.decided_by],
            "review_version": [st.version],
            "withdrawn": [withdrawn],
            "updated_at": [time.time_ns()],
        },
    )


@dataclass(frozen=True)
class QueueItem:
    """One row of the review queue."""

    candidate: Candidate
    state: ReviewState
    flagged_arguments: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready row."""
        task = self.state.task or {}
        return {
            **self.candidate.summary(),
            "flagged_arguments": self.flagged_arguments,
            "task_id": task.get("task_id", ""),
            "split": (task.get("metadata") or {}).get("split", ""),
            "golden": bool(task.get("golden", False)),
            "review": self.state.to_dict(),
        }


def queue(
    store: Store,
    *,
    project: str = "default",
    evalset: str | None = None,
    status: str | None = None,
    slice: str | None = None,
    source: str | None = None,
    reviewer: str | None = None,
    reason: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> list[QueueItem]:
    """Drafted candidates with their review state, filtered; failures first, oldest first."""
    if status is not None and status not in STATUSES:
        raise UserError(f"unknown status {status!r}; use one of {', '.join(STATUSES)}")
    if not 1 <= limit <= 1000:
        raise UserError(f"limit {limit} is out of range; use 1..1000")
    cands = list_candidates(
        store, project=project, evalset=evalset, stages=["drafted"], bodies=True
    )
    events = read_events(store, project=project)
    items = []
    for c in cands:
        if slice is not None and c.slice != slice:
            continue
        if source is not None and c.source != source:
            continue
        if reason is not None and not any(reason in r for r in c.reasons):
            continue
        st = fold(c.candidate_id, c.task(), events.get(c.candidate_id, []))
        if status is not None and st.status != status:
            continue
        if reviewer is not None and reviewer not in (st.claimed_by, st.decided_by):
            continue
        items.append(QueueItem(c, st))
    flagged = flagged_arguments(store, [q.candidate.trace_id for q in items], project=project)
    items = [replace(q, flagged_arguments=flagged.get(q.candidate.trace_id, 0)) for q in items]
    order = {"failure": 0, "explicit": 1, "success": 2}
    items.sort(
        key=lambda q: (
            order.get(q.candidate.source, 3),
            q.candidate.sampled_at,
            q.candidate.candidate_id,
        )
    )
    return items[offset : offset + limit]


def flagged_arguments(
    store: Store, trace_ids: Sequence[str], *, project: str = "default"
) -> dict[str, int]:
    """Per trace: tool-call arguments whose stored provenance carries a flag.

    Only stored provenance counts (the queue never computes it); a trace
    without any is absent (0).
    """
    if not trace_ids:
        return {}
    rows = store.query(
        "SELECT trace_id, countIf(notEmpty(flags)) AS n FROM argument_provenance FINAL"
        " WHERE project_id = {p:String} AND trace_id IN {ids:Array(String)} GROUP BY trace_id",
        {"p": project, "ids": sorted(set(trace_ids))},
    )
    return {r["trace_id"]: int(r["n"]) for r in rows}


def reviewer_progress(store: Store, *, project: str = "default") -> list[dict[str, Any]]:
    """Per reviewer: events by kind, decisions, candidates currently claimed, last activity."""
    events = read_events(store, project=project)
    cands = {
        c.candidate_id: c
        for c in list_candidates(store, project=project, stages=["drafted"], bodies=True)
    }
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    last: dict[str, int] = {}
    holding: Counter[str] = Counter()
    for cid, evs in events.items():
        c = cands.get(cid)
        st = fold(cid, c.task() if c else None, evs)
        for e in st.events:
            kinds[e.reviewer][e.kind] += 1
            last[e.reviewer] = max(last.get(e.reviewer, 0), e.created_at)
        if st.claimed_by:
            holding[st.claimed_by] += 1
    return [
        {
            "reviewer": r,
            "events": dict(sorted(kinds[r].items())),
            "decisions": sum(kinds[r][k] for k in ("approve", "reject", "needs-info")),
            "approved": kinds[r]["approve"],
            "rejected": kinds[r]["reject"],
            "needs_info": kinds[r]["needs-info"],
            "claimed_now": holding[r],
            "last_event_at": last[r],
        }
        for r in sorted(kinds)
    ]


def approved_count(store: Store, *, project: str = "default", evalset: str | None = None) -> int:
    """Approved, not withdrawn tasks waiting for a release."""
    params: dict[str, Any] = {"p": project}
    sql = (
        "SELECT count() AS n FROM approved_tasks FINAL"
        " WHERE project_id = {p:String} AND NOT withdrawn"
    )
    if evalset is not None:
        sql += " AND evalset = {e:String}"
        params["e"] = evalset
    return int(store.scalar(sql, params) or 0)
