"""``/api/tools``: each tool's semantics with the source of every decision; overrides."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Request
from fastapi.concurrency import run_in_threadpool

from flywheel import request_principal, request_project, requires
from flywheel.tools import delete_tool, import_manifest, set_tool

from ._models import ApiError
from ._tools import list_tools, show_tool

router = APIRouter(prefix="/api/tools", tags=["tools"])
_E400: dict[int | str, dict[str, Any]] = {
    400: {"model": ApiError, "description": "Malformed manifest or entry (names tool and field)."}
}


@router.get("", operation_id="list_tools", dependencies=[requires("read")],
            summary="Every known tool with effect, reach, touches, reversibility, idempotence "
            "and the source of each decision.")
async def list_tools_route(request: Request) -> dict[str, Any]:
    """Tools the project's traces, manifest and observations know."""
    tools = await run_in_threadpool(list_tools, request.app.state.store, request_project(request))
    return {"tools": tools}


@router.get("/{name}", operation_id="get_tool", dependencies=[requires("read")], summary="One tool's decisions and their sources.")
async def get_tool_route(request: Request, name: str) -> dict[str, Any]:
    """One tool (an unknown name is judged by its name alone; ``known`` says so)."""
    return await run_in_threadpool(show_tool, request.app.state.store, request_project(request),
                                   name)


@router.put("/{name}", operation_id="set_tool", responses=_E400, dependencies=[requires("admin")],
            summary="Override one tool's semantics (a manifest entry: effect, reach, touches, "
            "reversible, idempotent, annotations, description, parameters).")
async def set_tool_route(
    request: Request, name: str, entry: dict[str, Any] = Body(...)
) -> dict[str, Any]:
    """Declare a tool; the answer is its semantics afterwards."""
    store, project = request.app.state.store, request_project(request)
    who = request_principal(request).identity
    await run_in_threadpool(lambda: set_tool(store, project, name, entry, actor=who))
    return await run_in_threadpool(show_tool, store, project, name)


@router.delete("/{name}", operation_id="delete_tool", dependencies=[requires("admin")],
               summary="Remove a tool's manifest entry.")
async def delete_tool_route(request: Request, name: str) -> dict[str, Any]:
    """Remove the override; other sources decide again."""
    store, project = request.app.state.store, request_project(request)
    who = request_principal(request).identity
    removed = await run_in_threadpool(lambda: delete_tool(store, project, name, actor=who))
    return {"name": name, "removed": removed}


@router.post("/manifest", operation_id="import_tool_manifest", responses=_E400,
             dependencies=[requires("admin")],
             summary="Import a tool manifest (TOML or JSON text in the body).")
async def import_manifest_route(request: Request) -> dict[str, Any]:
    """Store every entry of the manifest, or none when one is malformed (400)."""
    body = await request.body()
    replace = request.query_params.get("replace") in ("1", "true")
    store, project = request.app.state.store, request_project(request)
    who = request_principal(request).identity
    names = await run_in_threadpool(
        lambda: import_manifest(store, project, body, replace=replace, actor=who))
    return {"declared": names}
