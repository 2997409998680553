"""Ingest's routes: the OTLP/HTTP receiver, health, metrics, and trace reads.

``POST /v1/traces`` follows OTLP/HTTP: protobuf or JSON (415 otherwise),
optional gzip, 413 above the body limit, 400 with a ``google.rpc.Status`` for
a malformed body, 503 + ``Retry-After`` when the log is too far behind the
store, and 200 with ``ExportTraceServiceResponse`` (its ``partial_success``
counts rejected spans) only once the accepted spans are durable.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import zlib
from collections.abc import AsyncIterator, Mapping
from concurrent.futures.process import BrokenProcessPool
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from google.rpc import status_pb2
from starlette.requests import ClientDisconnect

from flywheel import (
    FlywheelError,
    OverloadedError,
    PayloadTooLarge,
    Settings,
    Store,
    UserError,
    request_project,
    requires,
)

from ._api_provenance import router as provenance_router
from ._api_tools import router as tools_router
from ._api_traces import router as traces_router
from ._decode_pool import DecodePool
from ._limits import Limits
from ._decode import decode_body
from ._otlp import DecodedBatch, encode_response
from ._writer import SpanWriter

log = logging.getLogger("flywheel.ingest")
router = APIRouter()
router.include_router(traces_router)
router.include_router(provenance_router)
router.include_router(tools_router)

_TYPES = {"application/x-protobuf", "application/json"}


def store_identity(store: Store) -> str:
    """What a write-ahead log belongs to: the chDB directory, or server + database."""
    path = getattr(store, "path", None)
    if path:
        return f"chdb://{path}?database={store.database}"
    parsed = urlparse(store.url)
    return f"clickhouse://{parsed.hostname}:{parsed.port or 8123}/{store.database}"


def wal_dir_for(settings: Settings, store: Store) -> Path:
    """Where ``store``'s write-ahead log lives: configured, else derived from the store.

    chDB: inside the store's directory, one log per database. A ClickHouse
    server: ``.flywheel/wal/<host>-<port>-<database>`` under the working
    directory. Either way two stores never share a log, and the log's lock
    keeps a second process off it.
    """
    if settings.ingest.wal_dir is not None:
        return Path(settings.ingest.wal_dir)
    path = getattr(store, "path", None)
    if path:
        return Path(path) / "flywheel_wal" / store.database
    parsed = urlparse(store.url)
    key = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{parsed.hostname}-{parsed.port or 8123}-{store.database}")
    return Path(".flywheel/wal") / key


def open_writer(settings: Settings, store: Store) -> SpanWriter:
    """The store's span writer over its own log (refused when another process holds it)."""
    path = getattr(store, "path", None)
    legacy = Path(path).parent / "wal" if path else None
    if settings.ingest.wal_dir is None and legacy is not None and any(legacy.glob("*.wal")):
        log.warning("an earlier version's write-ahead log is at %s (shared by every store in "
                    "that folder); its unfinished records are not replayed: drain it with that "
                    "version, then remove it", legacy)
    return SpanWriter(store, wal_dir_for(settings, store), settings.ingest,
                      identity=store_identity(store))


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Start the durable writer (replaying its log) and stop it cleanly.

    ``flywheel serve`` opens the writer before the server starts (a log held
    by another process is a one-line error there); otherwise it opens here.
    """
    settings: Settings = app.state.settings
    writer = getattr(app.state, "opened_writer", None)
    app.state.opened_writer = None  # used once: a lifespan entered again opens its own
    if writer is None:
        writer = await run_in_threadpool(open_writer, settings, app.state.store)
    app.state.writer = writer
    # the server's Arrow buffers come from the C heap, which the writer trims once idle:
    # Arrow's own pool (mimalloc) kept about 45 MiB more at peak under ingest load
    # (bench/ingest_throughput.py-like runs, 8 x 500 spans: 732-734 against 774-789 MiB)
    pa.set_memory_pool(pa.system_memory_pool())
    workers = settings.ingest.decode_workers
    app.state.decode_pool = await run_in_threadpool(DecodePool, workers) if workers > 0 else None
    app.state.decode_pool_lock = asyncio.Lock()
    writer.start()
    try:
        yield
    finally:
        await run_in_threadpool(writer.stop)
        if app.state.decode_pool is not None:
            await run_in_threadpool(app.state.decode_pool.close)


def _otlp_error(status: int, message: str, content_type: str, headers: dict[str, str] | None = None
                ) -> tuple[int, bytes, str, dict[str, str] | None]:
    st = status_pb2.Status(code={400: 3, 413: 8, 415: 3, 503: 14}.get(status, 2), message=message)
    if content_type == "application/json":
        body = json.dumps({"code": st.code, "message": message}).encode()
        return status, body, "application/json", headers
    return status, st.SerializeToString(), "application/x-protobuf", headers


def _gunzip(body: bytes, limit: int) -> bytes:
    """A gzip body decoded whole: every member (RFC 1952 allows several), at most ``limit`` bytes."""
    out: list[bytes] = []
    size, rest = 0, body
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = d.decompress(rest, limit - size + 1)
        except zlib.error as exc:
            raise UserError(f"malformed gzip body: {exc}") from exc
        size += len(chunk)
        if size > limit or d.unconsumed_tail:
            raise PayloadTooLarge(f"request body over {limit} bytes after gunzip")
        if not d.eof:
            raise UserError("malformed gzip body: it ends inside a member (truncated)")
        out.append(chunk)
        rest = d.unused_data
        if not rest.strip(b"\0"):  # trailing zero padding is allowed, as gzip(1) does
            return b"".join(out)


async def _read_body(headers: Mapping[str, str], chunks: AsyncIterator[bytes], limit: int) -> bytes:
    declared = headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"request body of {declared} bytes is over the limit of {limit}")
    parts, size = [], 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body is over the limit of {limit} bytes")
        parts.append(chunk)
    return b"".join(parts)


@router.post(
    "/v1/traces",
    operation_id="export_traces",
    dependencies=[requires("ingest")],
    summary="OTLP/HTTP trace export (protobuf or JSON, optionally gzip).",
    responses={400: {"description": "malformed body"}, 413: {"description": "too large"},
               415: {"description": "unsupported content type"},
               503: {"description": "overloaded; retry after Retry-After seconds"}},
)
async def export_traces(request: Request) -> Response:
    """Accept spans; answer only when they are durable."""
    # the server answers this path from ``asgi_routes`` (below) without FastAPI's request
    # machinery; this route is the same export for a principal that handler leaves to
    # FastAPI (its 403), and the route's OpenAPI entry
    status, body, media_type, headers = await export(
        request.app, request.headers, request.stream(), request_project(request))
    return Response(body, status, headers=headers, media_type=media_type)


async def export(app: Any, headers: Mapping[str, str], chunks: AsyncIterator[bytes],
                 project: str) -> tuple[int, bytes, str, dict[str, str] | None]:
    """``POST /v1/traces`` as (status, body, media type, extra headers), whichever route got it.

    ``headers`` are the request's, looked up by lower-case names.
    """
    settings: Settings = app.state.settings
    writer: SpanWriter = app.state.writer
    ctype = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype not in _TYPES:
        return _otlp_error(415, f"unsupported content type {ctype!r}; use application/x-protobuf "
                           "or application/json", "application/json")
    encoding = headers.get("content-encoding", "identity").strip().lower()
    if encoding not in {"identity", "gzip", ""}:
        return _otlp_error(415, f"unsupported content encoding {encoding!r}; use gzip", ctype)
    with writer.receiving_request():
        return await _export(app, headers, chunks, project, settings, writer, ctype, encoding)


async def _export(app: Any, headers: Mapping[str, str], chunks: AsyncIterator[bytes], project: str,
                  settings: Settings, writer: SpanWriter, ctype: str,
                  encoding: str) -> tuple[int, bytes, str, dict[str, str] | None]:
    """``export`` once the content type and encoding are known."""
    limit = settings.ingest.max_body_bytes
    try:
        declared = headers.get("content-length", "")
        writer.check_capacity(int(declared) if declared.isdigit() and int(declared) <= limit else 0)
        body = await _read_body(headers, chunks, limit)
        if encoding == "gzip":
            body = _gunzip(body, limit)
        pool: DecodePool | None = getattr(app.state, "decode_pool", None)
        if pool is not None:
            try:
                payload, accepted, rejected, reasons, truncated, error = await pool.decode(
                    body, ctype, project, Limits.from_settings(settings.ingest))
            except BrokenProcessPool:
                await _restart_pool(app, pool)
                raise OverloadedError("a decode worker exited; the pool was restarted, "
                                      "retry this request", retry_after=1) from None
            if error:
                raise UserError(error)
            batch = await run_in_threadpool(writer.submit_ipc, payload, accepted, rejected, reasons,
                                            truncated)
        else:
            batch = await run_in_threadpool(
                _decode_and_log, writer, body, ctype, settings, project)
    except OverloadedError as exc:
        return _otlp_error(503, exc.message, ctype, {"Retry-After": str(max(1, round(exc.retry_after)))})
    except FlywheelError as exc:
        return _otlp_error(exc.http_status, exc.message, ctype)
    except Exception as exc:  # noqa: BLE001 - never acknowledged, so nothing is lost: the client retries a 503
        log.exception("export failed before its spans were durable (answered 503, not stored)")
        writer.stats.last_error = f"export failed: {type(exc).__name__}: {exc}"
        return _otlp_error(503, f"the spans were not stored ({type(exc).__name__}); retry later",
                           ctype, {"Retry-After": "1"})
    writer.stats.rejected_spans += batch.rejected
    writer.stats.truncated.update(batch.truncated)
    return 200, encode_response(batch, ctype), ctype, None


async def _asgi_chunks(receive: Any) -> AsyncIterator[bytes]:
    """The request body as it arrives (``Request.stream`` without the ``Request``)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunk = message.get("body", b"")
        if chunk:
            yield chunk
        if not message.get("more_body", False):
            return


async def _export_asgi(app: Any, scope: dict[str, Any], receive: Any, send: Any) -> bool:
    """``POST /v1/traces`` as a plain ASGI handler (``asgi_routes``).

    The hot route skips FastAPI's routing, dependency solving and request
    objects. The authentication middleware ran before it; a principal without
    scope ``ingest`` is left to the FastAPI route (False), which answers its 403.
    """
    principal = scope.get("state", {}).get("principal")
    if principal is None or not principal.allows("ingest"):
        return False
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    status, body, media_type, extra = await export(app, headers, _asgi_chunks(receive),
                                                   principal.project)
    raw = [(b"content-length", str(len(body)).encode()), (b"content-type", media_type.encode())]
    raw += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
    return True


#: Routes answered as plain ASGI handlers inside the authentication middleware
#: (``flywheel._app``): (method, path) -> handler(app, scope, receive, send) -> handled.
asgi_routes = {("POST", "/v1/traces"): _export_asgi}


async def _restart_pool(app: FastAPI, broken: DecodePool) -> None:
    """Replace a pool whose worker died (killed, out of memory).

    A broken pool fails every later request: without this, one lost worker
    would turn the receiver into 5xx for good.
    """
    async with app.state.decode_pool_lock:
        if app.state.decode_pool is not broken:  # another request restarted it already
            return
        log.error("a decode worker exited; restarting the decode pool")
        app.state.decode_pool = await run_in_threadpool(DecodePool, broken.workers)
        await run_in_threadpool(broken.close)


def _decode_and_log(
    writer: SpanWriter, body: bytes, ctype: str, settings: Settings, project: str
) -> DecodedBatch:
    try:
        batch = decode_body(body, ctype, project=project, limits=Limits.from_settings(settings.ingest))
    except FlywheelError:
        raise
    except Exception as exc:  # a decoder bug must not become a 5xx; it is logged
        log.exception("undecodable OTLP body")
        raise UserError(f"undecodable OTLP body ({type(exc).__name__})") from exc
    writer.submit(batch.table)
    return batch


@router.get("/healthz", operation_id="healthz", summary="The process is up.")
async def healthz() -> dict[str, str]:
    """Liveness: answers while the process serves requests."""
    return {"status": "ok"}


@router.get(
    "/readyz", operation_id="readyz",
    summary="Ready when the store answers, the writer runs and the log's disk has room.",
    responses={503: {"description": "not ready (the body says which part is not)"}},
)
async def readyz(request: Request) -> JSONResponse:
    """Readiness tells the truth: it asks the store, the writer thread and the log's disk."""
    store = request.app.state.store
    ok = await run_in_threadpool(store.ping)
    writer: SpanWriter | None = getattr(request.app.state, "writer", None)
    body: dict[str, object] = {"store": "ok" if ok else "unavailable"}
    ready = ok
    if writer is not None:
        writer.ensure_running()
        health = writer.health()
        body.update(health)
        body["wal_lag_bytes"] = health["wal"]["lag_bytes"]
        ready = ready and health["writer"]["alive"] and health["wal"]["writable"] \
            and writer.state in ("running", "replaying")
    body["status"] = "ready" if ready else "not ready"
    return JSONResponse(body, status_code=200 if ready else 503)


@router.get("/metrics", operation_id="metrics", summary="Ingest counters and gauges (Prometheus text).")
async def metrics(request: Request) -> Response:
    """Spans accepted, rejected, inserted, quarantined; writer and log health."""
    from ._metrics import render

    body, content_type = render(request.app.state.writer)
    return Response(body, media_type=content_type)
