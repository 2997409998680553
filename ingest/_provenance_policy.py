"""Trust and sensitivity policy of argument provenance: which calls matter.

Whether a call matters is the core's tool semantics (``flywheel.tools``):

- *sensitive* calls are writes (additive or destructive, by the project's
  manifest, the agent's ``flywheel.tool.*`` attributes, MCP annotations, an
  observed state change, or inference from the tool's name, description,
  schema and action argument; an unknown tool counts as a write);
- *egress* calls reach the open world and take a network address as an
  argument (by name -- ``url``, ``link``, ``endpoint`` -- or by value). The
  address is the payload: visiting an attacker's URL can carry data out in
  the URL itself, so its origin matters like a recipient's.

The catalog defaults to one built from the tool definitions the trace itself
carries (``gen_ai.tool.definitions``, OpenInference ``llm.tools``, MCP
``tools/list``); ``compute_provenance`` adds the project's manifest and
observations. Nothing here names a benchmark's tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from flywheel.tools import ToolCatalog, ToolSemantics, is_address_argument



@dataclass
class ProvenancePolicy:
    """Trust, sensitivity and delegation configuration."""

    #: The project's tool semantics; None: a catalog of the trace's own tool definitions.
    catalog: ToolCatalog | None = None
    trusted_tools: frozenset[str] = frozenset()
    untrusted_kinds: frozenset[str] = frozenset({"tool_result", "retrieval", "memory"})
    #: Whole structured fields of untrusted results (an amount from a
    #: transaction record, an id from a listing) are data the agent was asked
    #: to use; values extracted from prose are where injected instructions
    #: live. False flags both (a strict CaMeL-style policy).
    allow_untrusted_fields: bool = True
    #: User delegation: an untrusted value from a source the user named (the
    #: result of a call whose own arguments trace back to the user) is
    #: authorised for a sensitive call anchored by a user-given argument, and
    #: recorded with method ``delegated`` instead of a flag. See
    #: ``docs/provenance.md``.
    delegation: bool = True
    #: Whether content fetched from the network may name the next address to
    #: contact (link following). Off: a URL found in a fetched page is never
    #: delegated, only URLs found in the user's own data sources are.
    egress_from_fetched_content: bool = False
    _tools: ToolCatalog = field(default_factory=ToolCatalog, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.catalog is not None:
            self._tools = self.catalog

    def for_trace(self, catalog: ToolCatalog) -> ProvenancePolicy:
        """This policy asking ``catalog`` (a trace's definitions added) about tools."""
        out = replace(self, catalog=catalog)
        return out

    @property
    def tools(self) -> ToolCatalog:
        """The catalog this policy asks."""
        return self._tools

    def semantics(self, tool: str, args: Any = None) -> ToolSemantics:
        """What a call of ``tool`` (with ``args``) does."""
        return self._tools.for_call(tool or "", args)

    def is_sensitive(self, tool: str, args: Any = None) -> bool:
        """Whether a call of ``tool`` can change state (money, data, rights, messages...)."""
        return self.semantics(tool, args).sensitive

    def is_egress(self, tool: str, args: Any = None) -> bool:
        """Whether ``tool`` reaches the open world (a network address, people)."""
        return self.semantics(tool, args).open_world

    def is_url_argument(self, tool: str, path: str, value: Any, args: Any = None) -> bool:
        """Whether argument ``path`` of an open-world call holds the address it contacts."""
        return self.is_egress(tool, args) and is_address_argument(path, value)
