"""The audit log: security-relevant actions with their actor and time (table ``audit_log``).

Append-only; nothing updates or deletes an entry. What is recorded:

============================ ===============================================
``key.create`` / ``key.revoke`` a project API key (by ``create_key`` / ``revoke_key``)
``evalset.release``             a new eval-set version (who released it)
``review.exception``            a recorded exception to a review rule (e.g. an
                                accepted leak), by the reviewer's identity
``review.rules``                redaction rules a reviewer added to a candidate
``server.start``                a server started: bind address and auth mode
                                (the configuration it enforces)
``config.tools``                tool semantics declared, changed or removed (they
                                decide provenance flags and side-effect tiers)
============================ ===============================================

``actor`` is a :class:`~flywheel._auth.Principal` identity (``alice``,
``admin-token``, ``local:USER``, ``anonymous``). Admins read it with
``flywheel audit`` or ``GET /api/audit`` (their own project's entries).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .errors import UserError

if TYPE_CHECKING:
    from ._store import Store

AUDIT_TABLE = "audit_log"
#: The actions the platform records (a package may add its own with a dotted name).
ACTIONS: tuple[str, ...] = (
    "key.create",
    "key.revoke",
    "evalset.release",
    "review.exception",
    "review.rules",
    "server.start",
    "config.tools",
)


@dataclass(frozen=True)
class AuditEntry:
    """One recorded action."""

    event_id: str
    at: int
    actor: str
    action: str
    project: str
    target: str
    detail: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def record_audit(
    store: Store,
    action: str,
    *,
    actor: str,
    project: str = "",
    target: str = "",
    detail: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append one entry (``action`` a dotted name such as ``key.create``)."""
    if "." not in action or not action.replace(".", "").replace("-", "").isalnum():
        raise UserError(f"invalid audit action {action!r}; use a dotted name like 'key.create'")
    entry = AuditEntry(uuid.uuid4().hex, time.time_ns(), actor or "unknown", action, project,
                       target, dict(detail or {}))
    store.insert(AUDIT_TABLE, {
        "event_id": [entry.event_id], "at": [entry.at], "actor": [entry.actor],
        "action": [entry.action], "project_id": [entry.project], "target": [entry.target],
        "detail": [json.dumps(entry.detail, sort_keys=True, default=str)],
    })
    return entry


def read_audit(
    store: Store,
    *,
    project: str | None = None,
    action: str | None = None,
    actor: str | None = None,
    since_ns: int | None = None,
    limit: int = 1000,
) -> list[AuditEntry]:
    """Entries, newest first; each filter given keeps only the entries that match it."""
    if not 1 <= limit <= 100_000:
        raise UserError(f"limit {limit} is out of range; use 1..100000")
    where, params = ["1"], {"n": limit}
    for col, value, name in (("project_id", project, "p"), ("action", action, "a"),
                             ("actor", actor, "w")):
        if value is not None:
            where.append(f"{col} = {{{name}:String}}")
            params[name] = value
    if since_ns is not None:
        where.append("at >= fromUnixTimestamp64Nano({s:Int64})")
        params["s"] = since_ns
    rows = store.query(
        "SELECT event_id, toUnixTimestamp64Nano(at) AS at, actor, action, project_id, target,"
        f" detail FROM {AUDIT_TABLE} WHERE {' AND '.join(where)}"
        " ORDER BY at DESC, event_id LIMIT {n:UInt32}",
        params,
    )
    return [AuditEntry(r["event_id"], int(r["at"]), r["actor"], r["action"], r["project_id"],
                       r["target"], json.loads(r["detail"] or "{}")) for r in rows]
