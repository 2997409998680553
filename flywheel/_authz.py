"""Enforcement on the web: who a request is (middleware), what it may do (route scopes).

The middleware authenticates every request but the open paths (health,
readiness, metrics, docs) and sets ``request.state.principal``
(:class:`~flywheel._auth.Principal`):

- a key in ``Authorization: Bearer KEY`` (OTLP exporters send it through
  ``OTEL_EXPORTER_OTLP_HEADERS``) or ``X-Flywheel-Key``; unknown or revoked
  is 401; a request naming another project (``X-Flywheel-Project``) is 403;
- the bootstrap admin token (``FLYWHEEL_ADMIN_TOKEN``), which may name any
  project;
- the server's own token, which ``flywheel serve`` writes into the embedded
  store's directory for the CLI beside it (``flywheel._local_server``): the
  local operator ``local:USER`` with every scope, from any project (whoever
  reads the store directory holds the store's data anyway);
- with ``auth = auto`` and no key and no admin token yet: a loopback client
  whose ``Host`` is a loopback name (a web page that rebinds its DNS name to
  127.0.0.1 sends its own host name) acts as ``local:USER``; anyone else is
  401 with how to create the first key. The first key ends this within
  ``LOCAL_RECHECK_S`` (a second);
- with ``auth = off``: everyone is ``anonymous`` with every scope.

Each route declares the scopes that may call it with ``dependencies=[requires(...)]``;
a principal without one of them is 403. ``check_routes`` refuses to build an
app with a route that declares none, so a new route cannot be left open by
omission.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.routing import APIRoute

from ._auth import (
    OPEN_PATHS,
    SCOPES,
    KeyCache,
    Principal,
    is_loopback,
    local_identity,
    token_principal,
)
from ._config import Settings
from .errors import FlywheelError, ForbiddenError


def requires(*scopes: str) -> Any:
    """A route dependency: the request's principal must hold one of ``scopes``."""
    unknown = set(scopes) - set(SCOPES)
    if unknown or not scopes:
        raise ValueError(f"requires(): unknown or no scopes {sorted(unknown)}")

    def check(request: Request) -> Principal:
        principal: Principal | None = getattr(request.state, "principal", None)
        if principal is None or not principal.allows(*scopes):
            who = principal.identity if principal else "this request"
            raise ForbiddenError(
                f"{who} may not call this route: it needs a key with scope "
                f"{' or '.join(scopes)}"
            )
        return principal

    check.flywheel_scopes = tuple(scopes)  # type: ignore[attr-defined]
    return Depends(check)


def route_scopes(route: APIRoute) -> tuple[str, ...] | None:
    """The scopes a route declared with ``requires``, or None."""
    for dep in route.dependant.dependencies:
        scopes = getattr(dep.call, "flywheel_scopes", None)
        if scopes is not None:
            return tuple(scopes)
    return None


def check_routes(app: FastAPI) -> None:
    """Every API route outside ``OPEN_PATHS`` declares its scopes (documented in OpenAPI).

    Raises:
        FlywheelError: A route declares none (the app is not built).
    """
    for route in _api_routes(app.routes):
        scopes = route_scopes(route)
        if scopes is None:
            if route.path in OPEN_PATHS:
                continue
            raise FlywheelError(
                f"route {sorted(route.methods)} {route.path} declares no scopes; add "
                "dependencies=[requires(...)] (flywheel/_authz.py)"
            )
        route.openapi_extra = {**(route.openapi_extra or {}), "x-flywheel-scopes": list(scopes)}


def _api_routes(routes: Any) -> list[APIRoute]:
    out: list[APIRoute] = []
    for r in routes:
        if hasattr(r, "original_router"):
            out += _api_routes(r.original_router.routes)
        elif isinstance(r, APIRoute):
            out.append(r)
    return out


_HOST_HEADER_OK = ("localhost", "127.0.0.1", "[::1]", "::1")
#: While no key exists, how stale the "no key" answer may be: the first key
#: ends local mode within this many seconds.
LOCAL_RECHECK_S = 1.0


def _loopback_request(scope: dict[str, Any], headers: dict[str, str]) -> bool:
    client = scope.get("client") or ("", 0)
    host = headers.get("host", "")
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    return is_loopback(str(client[0])) and name.lower() in _HOST_HEADER_OK


class AuthMiddleware:
    """Pure ASGI middleware: authenticate, then set ``scope['state']['principal']``."""

    def __init__(self, app: Any, cache: KeyCache, settings: Settings, local_token: str = "") -> None:
        self.app, self.cache, self.settings = app, cache, settings
        #: the token `flywheel serve` writes into the store directory (``_local_server``):
        #: the CLI beside the server acts as the local operator with every scope
        self.local_token = local_token
        #: ``local:USER`` of this process, looked up once (getpass reads the user database:
        #: about 20 us, which every request of a local client paid)
        self.local_identity = local_identity()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            principal = self._authenticate(scope, headers)
        except ForbiddenError as exc:
            await _deny(send, 403, "ForbiddenError", exc.message)
            return
        except FlywheelError as exc:
            await _deny(send, exc.http_status, type(exc).__name__, exc.message)
            return
        if principal is None:
            await _deny(send, 401, "AuthError", self._why_401())
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)

    def _authenticate(self, scope: dict[str, Any], headers: dict[str, str]) -> Principal | None:
        asked = headers.get("x-flywheel-project", "").strip()
        default = self.settings.project
        if self.settings.auth == "off":
            return Principal("anonymous", asked or default, frozenset(SCOPES), "", "anonymous")
        auth = headers.get("authorization", "")
        key = auth[7:].strip() if auth.lower().startswith("bearer ") else headers.get(
            "x-flywheel-key", "").strip()
        if key and self.local_token and hmac.compare_digest(key.encode(), self.local_token.encode()):
            return Principal(self.local_identity, asked or default, frozenset(SCOPES), "", "local")
        if key:
            token = token_principal(self.settings, key, asked or default)
            if token is not None:
                return token
            principal = self.cache.principal_of(key)
            if principal is not None and asked and asked != principal.project:
                raise ForbiddenError(f"this key belongs to project {principal.project!r}, "
                                     f"not {asked!r}")
            return principal
        if (self.settings.auth == "auto" and self.settings.admin_token is None
                and _loopback_request(scope, headers) and not self.cache.keys(LOCAL_RECHECK_S)):
            return Principal(self.local_identity, asked or default, frozenset(SCOPES), "", "local")
        return None

    def _why_401(self) -> str:
        if self.settings.auth == "auto" and self.settings.admin_token is None and not self.cache.keys():
            return ("no API key exists yet, so only loopback clients are served; create the "
                    "first with `flywheel keys create --project PROJECT --scope admin --name NAME`")
        return ("a valid project API key is required (Authorization: Bearer KEY); create one "
                "with `flywheel keys create`")


async def _deny(send: Any, status: int, kind: str, message: str) -> None:
    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer")]})
    await send({"type": "http.response.body", "body": body})
