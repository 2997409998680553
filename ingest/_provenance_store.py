"""Provenance against the store: load a trace's steps, infer, persist, read."""

from __future__ import annotations

import secrets
import time
from dataclasses import asdict
from typing import Any

from flywheel import NotFoundError, Store
from flywheel.tools import DEFINITION_KEYS, project_catalog

from ._provenance import ArgumentProvenance, ProvenancePolicy, infer_provenance
from ._turns import normalise_steps

_STEPS_SQL = """
SELECT s.span_id AS span_id, s.parent_span_id AS parent_span_id, s.kind AS kind,
       s.tool_name AS tool_name, s.span_name AS span_name, s.arguments AS arguments,
       s.result AS result, s.input AS input, s.output AS output, s.start_time AS start_time,
       s.status AS status, s.error AS error
FROM agent_steps AS s FINAL
WHERE s.project_id = {p:String} AND s.trace_id = {t:String}
ORDER BY s.start_time, s.span_id
"""

#: Span attributes provenance reads: declared provenance, and what spans say about tools
#: (``flywheel.tools.DEFINITION_KEYS``: definitions, descriptions, annotations, MCP lists).
_DECLARED_SQL = """
SELECT SpanId AS span_id,
       mapFilter((k, v) -> startsWith(k, 'flywheel.provenance.')
                 OR arrayExists(p -> startsWith(k, p), {keys:Array(String)})
                 OR (k = 'output.value' AND SpanAttributes['mcp.method.name'] = 'tools/list'),
                 SpanAttributes) AS attributes
FROM {table:Identifier}
WHERE TraceId = {t:String} AND ProjectId = {p:String}
  AND arrayExists(k -> startsWith(k, 'flywheel.provenance.')
                  OR arrayExists(p -> startsWith(k, p), {keys:Array(String)}), mapKeys(SpanAttributes))
"""


def project_salt(store: Store, project: str) -> bytes:
    """The project's fingerprint salt, created once (random, 32 bytes)."""
    rows = store.query("SELECT salt FROM project_salts FINAL WHERE project_id = {p:String} "
                       "ORDER BY created_at LIMIT 1", {"p": project})
    if rows:
        return bytes.fromhex(rows[0]["salt"])
    salt = secrets.token_hex(32)
    store.insert("project_salts", {"project_id": [project], "salt": [salt], "created_at": [time.time_ns()]})
    # a concurrent creator may have won: read back the oldest
    rows = store.query("SELECT salt FROM project_salts WHERE project_id = {p:String} "
                       "ORDER BY created_at LIMIT 1", {"p": project})
    return bytes.fromhex(rows[0]["salt"])


def load_steps(store: Store, trace_id: str, project: str = "default") -> list[dict[str, Any]]:
    """A trace's agent steps in order, with declared-provenance attributes attached.

    Steps are normalised (``_turns.normalise_steps``): model steps carry typed
    turns, tool steps their arguments and results without library wrappers.
    """
    steps = store.query(_STEPS_SQL, {"p": project, "t": trace_id})
    if not steps:
        raise NotFoundError(f"trace {trace_id} not found in project {project}")
    attrs = {r["span_id"]: r["attributes"] for r in store.query(
        _DECLARED_SQL,
        {"table": store.otel_table, "t": trace_id, "p": project, "keys": list(DEFINITION_KEYS)})}
    for s in steps:
        s["attributes"] = attrs.get(s["span_id"], {})
    return list(normalise_steps(steps))


def compute_provenance(
    store: Store, trace_id: str, *, project: str = "default", policy: ProvenancePolicy | None = None
) -> list[ArgumentProvenance]:
    """Infer a trace's argument provenance and store it (idempotent).

    Tools are judged by the project's catalog (manifest, observations) plus the
    definitions the trace carries, unless ``policy`` brings its own catalog.
    """
    policy = policy or ProvenancePolicy()
    if policy.catalog is None:
        policy = policy.for_trace(project_catalog(store, project))
    records = infer_provenance(load_steps(store, trace_id, project), project_salt(store, project), policy)
    if records:
        now = time.time_ns()
        cols: dict[str, list[Any]] = {k: [] for k in asdict(records[0])}
        for r in records:
            for k, v in asdict(r).items():
                cols[k].append(v)
        cols["tool_name"] = cols.pop("tool")
        n = len(records)
        store.insert("argument_provenance", {
            "project_id": [project] * n, "trace_id": [trace_id] * n, **cols, "computed_at": [now] * n})
    return records


def read_provenance(store: Store, trace_id: str, *, project: str = "default") -> list[dict[str, Any]]:
    """Stored provenance of a trace (latest computation), computing it if absent."""
    sql = ("SELECT span_id, tool_name, path, source_kind, source_span_id, source_ref, method, "
           "confidence, trusted, ambiguous, alternatives, flags, extraction FROM argument_provenance FINAL "
           "WHERE project_id = {p:String} AND trace_id = {t:String} ORDER BY span_id, path")
    rows = store.query(sql, {"p": project, "t": trace_id})
    if not rows:
        compute_provenance(store, trace_id, project=project)
        rows = store.query(sql, {"p": project, "t": trace_id})
    return rows
