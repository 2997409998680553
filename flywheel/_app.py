"""The REST app factory: one FastAPI app, one router module per package.

Like the CLI entry, this is the one place that gathers every package: each
package in ``API_PACKAGES`` has ``flywheel.<package>._api`` with ``router``
(an ``APIRouter``) and optionally ``lifespan(app)`` (an async context manager
for its background work) and ``redact_trace_view(body)`` (the redactor the
trace routes apply for a key without scope ``raw``; set on
``app.state.redact_trace_view``, None when no package offers one) and
``asgi_routes`` (``{(method, path): handler(app, scope, receive, send)}``: a
hot route answered as plain ASGI inside the authentication middleware; a
handler returning False leaves the request to the FastAPI route of that path,
which must exist: it declares the scopes and documents the route). Errors of the exception tree become ``{"error": {"type", "message"}}``
with the error's HTTP status, in one handler, secrets masked. Every route
declares its scopes (``flywheel._authz``); the app is not built otherwise.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from types import ModuleType
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from . import __version__
from ._auth import KeyCache
from ._authz import AuthMiddleware, check_routes
from ._config import Settings
from ._local_server import announced, new_token
from ._secrets import install_log_masking, mask, register_secret
from ._store import Store, open_store
from .errors import FlywheelError, OverloadedError

#: Packages that may contribute a router, in mount order.
API_PACKAGES = ("ingest", "promote", "side_effects", "attribution")


def _api_modules() -> list[ModuleType]:
    return [importlib.import_module(f"flywheel.{package}._api") for package in API_PACKAGES]


def error_body(exc: FlywheelError) -> dict[str, dict[str, str]]:
    """The one JSON shape of every error the API returns."""
    return {"error": {"type": type(exc).__name__, "message": mask(exc.message)}}


class PlainRoutes:
    """ASGI middleware (inside authentication) answering ``asgi_routes`` without FastAPI."""

    def __init__(self, app: Any, fastapi_app: FastAPI, routes: dict[tuple[str, str], Any]) -> None:
        self.app, self.fastapi_app, self.routes = app, fastapi_app, routes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            handler = self.routes.get((scope["method"], scope["path"]))
            if handler is not None and await handler(self.fastapi_app, scope, receive, send):
                return
        await self.app(scope, receive, send)


def create_app(settings: Settings | None = None, store: Store | None = None) -> FastAPI:
    """Build the platform's app over ``store`` (opened from ``settings`` if absent)."""
    settings = settings or Settings()
    install_log_masking()
    if settings.admin_token is not None:
        register_secret(settings.admin_token.get_secret_value())
    owns_store = store is None
    if store is None:
        store = open_store(settings.store, cluster=settings.cluster, otel_table=settings.otel_table)
        store.migrate()
    modules = _api_modules()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for module in modules:
                if hasattr(module, "lifespan"):
                    await stack.enter_async_context(module.lifespan(app))
            if getattr(app.state, "announce", None):  # `flywheel serve`: see _local_server
                stack.enter_context(announced(*app.state.announce, app.state.local_token))
            yield
        if owns_store:
            store.close()

    app = FastAPI(
        title="trace-flywheel",
        version=__version__,
        summary="OTLP ingest, traces, promotion, eval sets and release gates for AI agents.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.store = store

    @app.exception_handler(FlywheelError)
    async def _flywheel_error(request: Request, exc: FlywheelError) -> JSONResponse:
        headers = {}
        if isinstance(exc, OverloadedError):
            headers["Retry-After"] = str(max(1, round(exc.retry_after)))
        return JSONResponse(error_body(exc), status_code=exc.http_status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        message = mask(f"{where}: {first.get('msg', 'invalid')}")
        body = {"error": {"type": "UserError", "message": message}}
        return JSONResponse(body, status_code=400)

    from ._api_admin import router as admin_router

    app.include_router(admin_router)
    for module in modules:
        app.include_router(module.router)
    app.state.redact_trace_view = next(
        (m.redact_trace_view for m in modules if hasattr(m, "redact_trace_view")), None
    )
    check_routes(app)
    app.state.key_cache = KeyCache(store)
    app.state.local_token = new_token()  # written into the store directory by `flywheel serve`
    register_secret(app.state.local_token)
    fast = {k: v for m in modules for k, v in getattr(m, "asgi_routes", {}).items()}
    if fast:
        app.add_middleware(PlainRoutes, fastapi_app=app, routes=fast)
    app.add_middleware(AuthMiddleware, cache=app.state.key_cache, settings=settings,
                       local_token=app.state.local_token)
    return app
