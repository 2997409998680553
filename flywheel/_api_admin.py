"""The core's routes: who am I, keys, the audit log and the effective configuration.

Everything but ``whoami`` needs the admin scope, and reaches only the
principal's own project (the admin token names its project with
``X-Flywheel-Project``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from ._audit import read_audit
from ._auth import (
    SCOPES,
    auth_state,
    create_key,
    list_keys,
    live_key_count,
    request_principal,
    revoke_key,
)
from ._authz import requires
from ._secrets import settings_view

router = APIRouter(tags=["admin"])

_E: dict[int | str, dict[str, Any]] = {
    400: {"description": "Invalid input (the message names it)."},
    401: {"description": "No, an unknown or a revoked key."},
    403: {"description": "The key lacks the admin scope, or names another project."},
}


class WhoAmI(BaseModel):
    """Who the request acts as."""

    identity: str = Field(description="Recorded on every review event and audit entry.")
    project: str
    scopes: list[str]
    key_id: str
    via: str = Field(description="key, admin-token, local or anonymous.")


@router.get("/api/auth/whoami", operation_id="whoami", response_model=WhoAmI,
            summary="The identity, project and scopes of the presented credential.",
            dependencies=[requires(*SCOPES)], responses=_E)
def whoami(request: Request) -> WhoAmI:
    """Who this credential is (the reviewer app shows it)."""
    return WhoAmI(**request_principal(request).to_dict())


class KeyOut(BaseModel):
    """A stored key, never its secret."""

    key_id: str
    project_id: str
    identity: str
    scopes: list[str]
    revoked: bool
    created_at: int
    created_by: str
    revoked_by: str


class NewKey(BaseModel):
    """A key to create in the admin's project."""

    scopes: list[str] = Field(description=f"One or more of {', '.join(SCOPES)}.")
    name: str = Field("", description="The key's identity (required for review: the reviewer).")


class CreatedKey(KeyOut):
    """A new key: ``key`` is shown once and never stored in clear."""

    key: str


@router.get("/api/keys", operation_id="list_keys", response_model=list[KeyOut],
            summary="The project's keys (ids, identities, scopes, state; never secrets).",
            dependencies=[requires("admin")], responses=_E)
def keys_route(request: Request) -> list[KeyOut]:
    """List the project's keys."""
    me = request_principal(request)
    return [KeyOut(**k.to_dict()) for k in list_keys(request.app.state.store, project=me.project)]


@router.post("/api/keys", operation_id="create_key", response_model=CreatedKey, status_code=201,
             summary="Create a key in the project (audited); the key is in the answer only.",
             dependencies=[requires("admin")], responses=_E)
async def create_key_route(request: Request, body: NewKey) -> CreatedKey:
    """Create a key."""
    me = request_principal(request)
    store = request.app.state.store

    def work() -> CreatedKey:
        key = create_key(store, me.project, body.scopes, name=body.name, actor=me.identity)
        request.app.state.key_cache.invalidate()
        k = next(k for k in list_keys(store, project=me.project) if k.key_id == key.split("_")[1])
        return CreatedKey(**k.to_dict(), key=key)

    return await run_in_threadpool(work)


@router.post("/api/keys/{key_id}/revoke", operation_id="revoke_key", response_model=KeyOut,
             summary="Revoke a key of the project (audited; every server notices within 5 s).",
             dependencies=[requires("admin")],
             responses={**_E, 404: {"description": "No such key in the project."}})
async def revoke_key_route(request: Request, key_id: str) -> KeyOut:
    """Revoke a key."""
    me = request_principal(request)

    def work() -> KeyOut:
        k = revoke_key(request.app.state.store, key_id, actor=me.identity, project=me.project)
        request.app.state.key_cache.invalidate()
        return KeyOut(**k.to_dict())

    return await run_in_threadpool(work)


class AuditOut(BaseModel):
    """One audit entry."""

    event_id: str
    at: int = Field(description="Unix ns.")
    actor: str
    action: str
    project: str
    target: str
    detail: dict[str, Any]


@router.get("/api/audit", operation_id="list_audit", response_model=list[AuditOut],
            summary="The project's audit log, newest first (keys, releases, exceptions, config).",
            dependencies=[requires("admin")], responses=_E)
def audit_route(
    request: Request,
    action: str | None = Query(None, description="Only this action, e.g. key.revoke."),
    actor: str | None = Query(None, description="Only this actor."),
    since_ns: int | None = Query(None, description="Only entries at or after (Unix ns)."),
    limit: int = Query(1000, ge=1, le=100_000),
) -> list[AuditOut]:
    """Read the audit log."""
    me = request_principal(request)
    rows = read_audit(request.app.state.store, project=me.project, action=action, actor=actor,
                      since_ns=since_ns, limit=limit)
    return [AuditOut(**e.to_dict()) for e in rows]


@router.get("/api/config", operation_id="get_config",
            summary="The server's effective settings (secrets masked) and its true auth state.",
            dependencies=[requires("admin")], responses=_E)
def config_route(request: Request) -> dict[str, Any]:
    """Effective settings and auth state."""
    settings = request.app.state.settings
    return {"settings": settings_view(settings),
            "auth": auth_state(settings, live_key_count(request.app.state.store)).to_dict()}
