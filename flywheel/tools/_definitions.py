"""Tool definitions where they arrive on spans: OTel GenAI, OpenInference, MCP.

- OTel GenAI: ``gen_ai.tool.definitions`` on chat spans (a JSON list of
  ``{"type": "function", "name", "description", "parameters"}``, or the
  OpenAI ``{"function": {...}}`` form); ``gen_ai.tool.name`` with
  ``gen_ai.tool.description`` on ``execute_tool`` spans;
- OpenInference: ``llm.tools.N.tool.json_schema`` on LLM spans (each a JSON
  tool definition) and ``tool.name`` / ``tool.description`` /
  ``tool.parameters`` on TOOL spans;
- MCP: a ``tools/list`` result (``{"tools": [{"name", "description",
  "inputSchema", "annotations"}]}``) on an MCP client span
  (``mcp.method.name``), in ``output.value`` or ``gen_ai.tool.call.result``;
  any definition above may carry an MCP ``annotations`` object too.

Nothing here raises on a malformed definition: it is skipped and counted,
as ingest counts a bad span, never failing the read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ._model import ToolDefinition

_OI_TOOL = re.compile(r"^llm\.tools\.\d+\.tool\.json_schema$")
#: Attribute keys (or prefixes) a definition can arrive in; what a store query must fetch.
DEFINITION_KEYS = (
    "gen_ai.tool.definitions",
    "gen_ai.tool.name",
    "gen_ai.tool.description",
    "llm.tools.",
    "tool.name",
    "tool.description",
    "tool.parameters",
    "mcp.method.name",
    "flywheel.tool.",
)


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return None
    return value


def _one(obj: Any, origin: str) -> ToolDefinition | None:
    if not isinstance(obj, Mapping):
        return None
    fn = obj.get("function") if isinstance(obj.get("function"), Mapping) else obj
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    params = fn.get("parameters", fn.get("inputSchema", fn.get("input_schema")))
    annotations = fn.get("annotations", obj.get("annotations"))
    desc = fn.get("description")
    return ToolDefinition(
        name,
        desc if isinstance(desc, str) else "",
        _json(params) if isinstance(params, str) else params,
        annotations,
        origin,
    )


def _many(doc: Any, origin: str) -> Iterator[ToolDefinition]:
    if isinstance(doc, Mapping) and isinstance(doc.get("tools"), list):
        doc = doc["tools"]
    if isinstance(doc, Mapping):
        doc = [doc]
    if isinstance(doc, list):
        for item in doc:
            d = _one(item, origin)
            if d is not None:
                yield d


def definitions_from_attributes(
    attributes: Mapping[str, Any], output: Any = None
) -> tuple[list[ToolDefinition], int]:
    """Tool definitions carried by one span's attributes, and how many were unreadable."""
    out: list[ToolDefinition] = []
    bad = 0

    def take(raw: Any, origin: str) -> None:
        nonlocal bad
        found = list(_many(_json(raw), origin))
        if not found:
            bad += 1
        out.extend(found)

    if "gen_ai.tool.definitions" in attributes:
        take(attributes["gen_ai.tool.definitions"], "gen_ai.tool.definitions")
    for key in sorted(k for k in attributes if _OI_TOOL.match(k)):
        take(attributes[key], "llm.tools")
    if str(attributes.get("mcp.method.name", "")) == "tools/list":
        raw = output if output is not None else attributes.get(
            "output.value", attributes.get("gen_ai.tool.call.result")
        )
        take(raw, "mcp tools/list")
    for name_key, desc_key, params_key, origin in (
        ("gen_ai.tool.name", "gen_ai.tool.description", None, "gen_ai.tool.description"),
        ("tool.name", "tool.description", "tool.parameters", "tool.description"),
    ):
        name = attributes.get(name_key)
        if isinstance(name, str) and name and (
            attributes.get(desc_key) or (params_key and attributes.get(params_key))
        ):
            params = _json(attributes.get(params_key)) if params_key else None
            out.append(ToolDefinition(name, str(attributes.get(desc_key) or ""), params, None, origin))
    return out, bad
