"""Project API keys and per-project isolation, enforced in one ASGI middleware.

Keys look like ``fwk_<id>_<secret>``; the store keeps only the SHA-256 of the
whole key. Auth is on as soon as one live key exists (or ``auth_required``
is set): every request but health checks and docs then needs
``Authorization: Bearer KEY`` (OTLP exporters send it through
``OTEL_EXPORTER_OTLP_HEADERS``) or ``X-Flywheel-Key``. No or an unknown key
is 401; a request that names another project (``X-Flywheel-Project``) is
403. The request's project is ``request.state.project``: every route reads
and writes only that project's rows.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

from ._store import Store
from .errors import NotFoundError, UserError

OPEN_PATHS = frozenset({"/healthz", "/readyz", "/docs", "/redoc", "/openapi.json", "/metrics"})


@dataclass(frozen=True)
class ApiKey:
    """A stored key (never the secret itself)."""

    key_id: str
    project_id: str
    name: str
    revoked: bool
    created_at: int


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(store: Store, project: str, name: str = "") -> str:
    """Create a key for ``project``; the returned key is shown once."""
    if not project or not project.replace("-", "").replace("_", "").isalnum():
        raise UserError(f"invalid project id {project!r}: letters, digits, '-' and '_' only")
    key_id = secrets.token_hex(6)
    key = f"fwk_{key_id}_{secrets.token_urlsafe(24)}"
    store.insert("api_keys", {"key_id": [key_id], "key_hash": [_hash(key)], "project_id": [project],
                              "name": [name], "revoked": [0], "created_at": [time.time_ns()]})
    return key


def list_keys(store: Store) -> list[ApiKey]:
    """Every key, newest state of each."""
    rows = store.query("SELECT key_id, project_id, name, revoked, created_at FROM api_keys FINAL "
                       "ORDER BY project_id, created_at")
    return [ApiKey(r["key_id"], r["project_id"], r["name"], bool(r["revoked"]), r["created_at"])
            for r in rows]


def revoke_key(store: Store, key_id: str) -> None:
    """Revoke a key by id (takes effect within the cache TTL, 5 s)."""
    rows = store.query("SELECT key_hash, project_id, name FROM api_keys FINAL WHERE key_id = {k:String}",
                       {"k": key_id})
    if not rows:
        raise NotFoundError(f"no API key {key_id}")
    r = rows[0]
    store.insert("api_keys", {"key_id": [key_id], "key_hash": [r["key_hash"]], "project_id": [r["project_id"]],
                              "name": [r["name"]], "revoked": [1], "created_at": [time.time_ns()]})


class KeyCache:
    """Live key hashes by key id, refreshed every ``ttl`` seconds (one query)."""

    def __init__(self, store: Store, ttl: float = 5.0) -> None:
        self.store, self.ttl = store, ttl
        self._at = -1e9
        self._keys: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def invalidate(self) -> None:
        """Reload on next use (after creating or revoking a key in this process)."""
        with self._lock:
            self._at = -1e9

    def keys(self) -> dict[str, tuple[str, str]]:
        """key_id -> (hash, project) of every live key."""
        with self._lock:
            if time.monotonic() - self._at > self.ttl:
                rows = self.store.query(
                    "SELECT key_id, key_hash, project_id FROM api_keys FINAL WHERE revoked = 0")
                self._keys = {r["key_id"]: (r["key_hash"], r["project_id"]) for r in rows}
                self._at = time.monotonic()
            return self._keys

    def project_of(self, key: str) -> str | None:
        """The project of a valid key, else None (constant-time hash compare)."""
        parts = key.split("_")
        if len(parts) < 3 or parts[0] != "fwk":
            return None
        entry = self.keys().get(parts[1])
        if entry is None or not hmac.compare_digest(entry[0], _hash(key)):
            return None
        return entry[1]


class AuthMiddleware:
    """Pure ASGI middleware: authenticate, then set ``scope['state']['project']``."""

    def __init__(self, app: Any, cache: KeyCache, default_project: str, required: bool = False) -> None:
        self.app, self.cache = app, cache
        self.default_project, self.required = default_project, required

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        asked = headers.get("x-flywheel-project")
        state = scope.setdefault("state", {})
        if scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        enforce = self.required or bool(self.cache.keys())
        if not enforce:
            state["project"] = asked or self.default_project
            await self.app(scope, receive, send)
            return
        auth = headers.get("authorization", "")
        key = auth[7:].strip() if auth.lower().startswith("bearer ") else headers.get("x-flywheel-key", "")
        project = self.cache.project_of(key) if key else None
        if project is None:
            await _deny(send, 401, "AuthError", "a valid project API key is required "
                        "(Authorization: Bearer KEY); create one with `flywheel keys create`")
            return
        if asked and asked != project:
            await _deny(send, 403, "ForbiddenError", f"this key belongs to project {project!r}, "
                        f"not {asked!r}")
            return
        state["project"] = project
        await self.app(scope, receive, send)


async def _deny(send: Any, status: int, kind: str, message: str) -> None:
    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer")]})
    await send({"type": "http.response.body", "body": body})


def request_project(request: Any) -> str:
    """The project a request acts for (set by the middleware)."""
    project = getattr(request.state, "project", None)
    return project or request.app.state.settings.project
