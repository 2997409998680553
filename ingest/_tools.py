"""The tool catalog of a trace: the core's tool semantics fed with what the spans declare.

Tool definitions arrive on spans (``flywheel.tools.definitions_from_attributes``:
``gen_ai.tool.definitions``, OpenInference ``llm.tools`` and ``tool.*``, MCP
``tools/list`` results) and an agent may declare ``flywheel.tool.*`` on a
tool span. ``load_steps`` fetches those attributes; this module hands them to
a ``ToolCatalog`` -- the project's (manifest, observations) when given, else
an empty one. ``list_tools`` / ``show_tool`` answer ``flywheel tools`` and
``GET /api/tools`` from every tool a project's traces called or defined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flywheel import Store
from flywheel.tools import (
    ATTRIBUTE_PREFIX,
    DEFINITION_KEYS,
    ToolCatalog,
    ToolDefinition,
    definitions_from_attributes,
    manifest_entries,
    project_catalog,
)


def trace_catalog(steps: Sequence[Mapping[str, Any]], base: ToolCatalog | None = None) -> ToolCatalog:
    """``base`` (or a new catalog) with every definition and declaration the trace's spans carry."""
    catalog = base if base is not None else ToolCatalog()
    for step in steps:
        attrs = step.get("attributes") or {}
        if not attrs:
            continue
        defs, bad = definitions_from_attributes(attrs, step.get("output") or None)
        catalog.unreadable_definitions += bad
        for d in defs:
            catalog.add_definition(d)
        tool = str(step.get("tool_name") or "")
        if tool and any(k.startswith(ATTRIBUTE_PREFIX) for k in attrs):
            catalog.add_attributes(tool, attrs)
    return catalog


_SEEN_TOOLS_SQL = """
SELECT DISTINCT tool_name FROM agent_steps
WHERE project_id = {p:String} AND tool_name != '' LIMIT 10000
"""
_SEEN_DEFINITIONS_SQL = """
SELECT DISTINCT mapFilter((k, v) -> arrayExists(p -> startsWith(k, p), {keys:Array(String)})
                          OR (k = 'output.value' AND SpanAttributes['mcp.method.name'] = 'tools/list'),
                          SpanAttributes) AS attributes
FROM {table:Identifier}
WHERE ProjectId = {p:String}
  AND arrayExists(k -> arrayExists(p -> startsWith(k, p), {keys:Array(String)}), mapKeys(SpanAttributes))
LIMIT 20000
"""


def project_tools(store: Store, project: str) -> ToolCatalog:
    """The project's catalog: manifest, observations, and every tool its traces called or defined."""
    catalog = project_catalog(store, project)
    rows = store.query(
        _SEEN_DEFINITIONS_SQL,
        {"table": store.otel_table, "p": project, "keys": list(DEFINITION_KEYS)},
    )
    steps = [{"attributes": r["attributes"], "tool_name": r["attributes"].get(
        "gen_ai.tool.name", r["attributes"].get("tool.name", ""))} for r in rows]
    trace_catalog(steps, catalog)
    for r in store.query(_SEEN_TOOLS_SQL, {"p": project}):
        catalog.add_definition(ToolDefinition(r["tool_name"], origin="agent_steps"))
    return catalog


def list_tools(store: Store, project: str) -> list[dict[str, Any]]:
    """Every known tool of the project with each decision and its source (``as_dict``)."""
    catalog = project_tools(store, project)
    return [catalog.semantics(n).as_dict() for n in catalog.names()]


def show_tool(store: Store, project: str, name: str) -> dict[str, Any]:
    """One tool's semantics, with its manifest entry if the user declared one."""
    catalog = project_tools(store, project)
    out = catalog.semantics(name).as_dict()
    out["known"] = name in catalog.names()
    out["manifest"] = manifest_entries(store, project).get(name)
    return out
