"""The tool catalog of a trace: the core's tool semantics fed with what the spans declare.

Tool definitions arrive on spans (``flywheel.tools.definitions_from_attributes``:
``gen_ai.tool.definitions``, OpenInference ``llm.tools`` and ``tool.*``, MCP
``tools/list`` results) and an agent may declare ``flywheel.tool.*`` on a
tool span. ``load_steps`` fetches those attributes; this module hands them to
a ``ToolCatalog`` -- the project's (manifest, observations) when given, else
an empty one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flywheel.tools import ATTRIBUTE_PREFIX, ToolCatalog, definitions_from_attributes


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
