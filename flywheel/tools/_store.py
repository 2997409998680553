"""The project's tool manifest and observations in the store (tables of migration 020)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ._catalog import ToolCatalog, ToolObservation
from ._declared import Declaration, ToolDeclarationError, declaration, parse_manifest
from ._model import ToolDefinition

if TYPE_CHECKING:  # pragma: no cover
    from flywheel._store import Store

_MANIFEST_SQL = (
    "SELECT tool_name, argMax(entry, updated_at) AS entry, argMax(deleted, updated_at) AS deleted "
    "FROM tool_manifest WHERE project_id = {p:String} GROUP BY tool_name ORDER BY tool_name"
)
_OBSERVED_SQL = (
    "SELECT tool_name, max(c) AS changed, sum(n) AS calls, argMax(e, c * 1e18 + t) AS evidence "
    "FROM (SELECT tool_name, trace_id, argMax(changed_state, observed_at) AS c, "
    "argMax(calls, observed_at) AS n, argMax(evidence, observed_at) AS e, "
    "max(observed_at) AS t FROM tool_observations WHERE project_id = {p:String} "
    "GROUP BY tool_name, trace_id) GROUP BY tool_name ORDER BY tool_name"
)


def manifest_entries(store: Store, project: str) -> dict[str, dict[str, Any]]:
    """The project's manifest as stored: tool -> entry (as the user wrote it)."""
    rows = store.query(_MANIFEST_SQL, {"p": project})
    return {r["tool_name"]: json.loads(r["entry"]) for r in rows if not r["deleted"]}


def load_manifest(store: Store, project: str) -> dict[str, Declaration]:
    """The project's manifest read into declarations (entries were checked when written)."""
    return {
        name: declaration(name, entry, "manifest")
        for name, entry in manifest_entries(store, project).items()
    }


def _write(store: Store, project: str, entries: Mapping[str, Any], deleted: bool = False) -> None:
    now = time.time_ns()
    names = sorted(entries)
    store.insert(
        "tool_manifest",
        {
            "project_id": [project] * len(names),
            "tool_name": names,
            "entry": [json.dumps(entries[n], sort_keys=True, default=str) for n in names],
            "deleted": [int(deleted)] * len(names),
            "updated_at": [now] * len(names),
        },
    )


def import_manifest(
    store: Store, project: str, text: str | bytes, *, fmt: str | None = None, replace: bool = False,
    actor: str = "",
) -> list[str]:
    """Store a manifest document (TOML or JSON); returns the tools it declares.

    Every entry is checked before anything is written (a malformed one raises
    ``ToolDeclarationError`` and stores nothing). ``replace`` removes the
    project's other entries. Audited (``config.tools``) as ``actor``.
    """
    parsed = parse_manifest(text, fmt=fmt)
    entries = {name: _raw_entry(d) for name, d in parsed.items()}
    if replace:
        stale = set(manifest_entries(store, project)) - set(entries)
        if stale:
            _write(store, project, {n: {} for n in stale}, deleted=True)
    if entries:
        _write(store, project, entries)
    _audit(store, project, actor, "import", sorted(entries), replace=replace)
    return sorted(entries)


def _audit(store: Store, project: str, actor: str, op: str, names: list[str], **extra: Any) -> None:
    """A tool-semantics change is a configuration change: it moves flags and tiers."""
    from flywheel._audit import record_audit

    record_audit(store, "config.tools", actor=actor, project=project, target=",".join(names),
                 detail={"op": op, **extra})


def _raw_entry(decl: Declaration) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, dec in decl.decisions.items():
        if dec.origin == "manifest":
            out[key] = sorted(dec.value) if isinstance(dec.value, frozenset) else dec.value
    d = decl.definition
    if d is not None:
        if d.description:
            out["description"] = d.description
        if d.parameters is not None:
            out["parameters"] = d.parameters
        if d.annotations is not None:
            out["annotations"] = d.annotations
    return out


def set_tool(
    store: Store, project: str, name: str, entry: Mapping[str, Any], *, actor: str = ""
) -> Declaration:
    """Declare (override) one tool's semantics; raises ``ToolDeclarationError`` when malformed."""
    if not name or not isinstance(name, str):
        raise ToolDeclarationError("tool name must be a non-empty string")
    decl = declaration(name, entry, "manifest")
    _write(store, project, {name: _raw_entry(decl)})
    _audit(store, project, actor, "set", [name], fields=sorted(entry))
    return decl


def delete_tool(store: Store, project: str, name: str, *, actor: str = "") -> bool:
    """Remove a tool's manifest entry (its semantics fall back to the other sources)."""
    if name not in manifest_entries(store, project):
        return False
    _write(store, project, {name: {}}, deleted=True)
    _audit(store, project, actor, "delete", [name])
    return True


def record_observations(
    store: Store, project: str, trace_id: str, observations: Iterable[ToolObservation]
) -> int:
    """Record what a recorded environment showed about tools' calls in one trace."""
    rows = list(observations)
    if not rows:
        return 0
    now = time.time_ns()
    store.insert(
        "tool_observations",
        {
            "project_id": [project] * len(rows),
            "tool_name": [o.tool for o in rows],
            "trace_id": [trace_id] * len(rows),
            "changed_state": [int(o.changed_state) for o in rows],
            "calls": [o.count for o in rows],
            "evidence": [o.evidence[:300] for o in rows],
            "observed_at": [now] * len(rows),
        },
    )
    return len(rows)


def load_observations(store: Store, project: str) -> list[ToolObservation]:
    """Per tool, whether any recorded call changed state (and the evidence of one that did)."""
    return [
        ToolObservation(r["tool_name"], bool(r["changed"]), r["evidence"], int(r["calls"]))
        for r in store.query(_OBSERVED_SQL, {"p": project})
    ]


def project_catalog(
    store: Store, project: str, definitions: Iterable[ToolDefinition] = ()
) -> ToolCatalog:
    """A catalog of the project's manifest and observations, plus definitions seen on spans."""
    return ToolCatalog(
        manifest=load_manifest(store, project),
        observations=load_observations(store, project),
        definitions=definitions,
    )
