"""Tool semantics: the one taxonomy every package asks about what a tool call does.

For each tool: effect (``read``, ``additive`` or ``destructive`` write),
reach (``closed``, ``egress``, ``communication``), what it touches (money,
credentials, permissions, messages, files, code), reversibility and
idempotence -- each a ``Decision`` with its source (declared, observed,
inferred, default) and confidence. Provenance sensitivity (ingest),
write guesses (side effects), the retrieval seam (harness), reversibility
tiers (safety), tool paths (promote) and write checks (attribution) all read
it here, so they agree.

Sources, strongest first: a project's manifest and the agent's
``flywheel.tool.*`` span attributes and MCP tool annotations (declared);
state changes recorded in an environment (observed); the tool's name in any
case style, its description, JSON schema, HTTP method and action arguments
(inferred). Unknown tools take the cautious side.

    >>> tool_semantics("CashAppSendPayment").effect.value
    'additive'
    >>> tool_semantics("OutlookReadMessage").writes
    False
"""

from functools import lru_cache

from ._catalog import ToolCatalog, ToolObservation
from ._declared import (
    ATTRIBUTE_PREFIX,
    MCP_DEFAULTS,
    Declaration,
    ToolDeclarationError,
    annotation_decisions,
    parse_manifest,
)
from ._definitions import DEFINITION_KEYS, definitions_from_attributes
from ._infer import action_of, is_address, is_address_argument, refine_for_call
from ._model import FIELDS, SOURCES, Decision, ToolDefinition, ToolSemantics
from ._store import (
    delete_tool,
    import_manifest,
    load_manifest,
    load_observations,
    manifest_entries,
    project_catalog,
    record_observations,
    set_tool,
)
from ._vocabulary import ADDRESSING_PARAMETERS, EFFECTS, REACHES, TOUCHES
from ._words import split_name


@lru_cache(maxsize=4096)
def _plain(name: str) -> ToolSemantics:
    return ToolCatalog().semantics(name)


def tool_semantics(name: str, definition: ToolDefinition | None = None) -> ToolSemantics:
    """Semantics of a tool with no project data: from its definition, or its name alone."""
    if definition is None:
        return _plain(name)
    return ToolCatalog(definitions=[definition]).semantics(name)


def call_semantics(name: str, args: object = None) -> ToolSemantics:
    """Semantics of one call of ``name`` with ``args`` (no project data; see ``ToolCatalog``)."""
    return refine_for_call(_plain(name), args) if args else _plain(name)


__all__ = [
    "ADDRESSING_PARAMETERS",
    "ATTRIBUTE_PREFIX",
    "DEFINITION_KEYS",
    "EFFECTS",
    "FIELDS",
    "MCP_DEFAULTS",
    "REACHES",
    "SOURCES",
    "TOUCHES",
    "Decision",
    "Declaration",
    "ToolCatalog",
    "ToolDeclarationError",
    "ToolDefinition",
    "ToolObservation",
    "ToolSemantics",
    "action_of",
    "annotation_decisions",
    "call_semantics",
    "definitions_from_attributes",
    "delete_tool",
    "import_manifest",
    "is_address",
    "is_address_argument",
    "load_manifest",
    "load_observations",
    "manifest_entries",
    "parse_manifest",
    "project_catalog",
    "record_observations",
    "refine_for_call",
    "set_tool",
    "split_name",
    "tool_semantics",
]
