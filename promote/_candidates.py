"""Promotion candidates in the store: one row per candidate, newest stage wins.

A candidate is a sampled trace on its way to becoming a task: sampled ->
deduped (or ``duplicate`` of an earlier candidate of its cluster) ->
redacted -> drafted. Each stage writes the whole row again with a newer
``updated_at`` (table ``promote_candidates``, migration 010), so a reader
takes the newest row; the review that follows is a separate append-only
event log (``_review.py``). Only redacted text is ever written here.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from flywheel.promote._redact_types import TraceStep

from flywheel import NotFoundError, Store

#: Pipeline stages, in order (``duplicate`` ends a candidate's pipeline).
STAGES: tuple[str, ...] = ("sampled", "deduped", "duplicate", "redacted", "drafted")
TABLE = "promote_candidates"
#: Root-span attributes drafting may read (identifiers only: never free text, which may hold PII).
ROOT_ATTRIBUTES = frozenset(
    {
        "flywheel.env.s0_ref",
        "flywheel.env.sT_ref",
        "flywheel.env.id",
        "flywheel.trial.id",
        "flywheel.task.id",
        "flywheel.suite",
        "flywheel.golden",
        "flywheel.injection_task.id",
        "flywheel.environment",
    }
)


#: Span id of the stand-in step that carries a trace's root attributes through redaction.
ROOT_STEP = "__root__"
#: The slice attribute, redacted with the root attributes (it names the task and the manifest).
SLICE_ATTRIBUTE = "flywheel.slice"


def root_step(material: TraceMaterial | None, slice_: str) -> TraceStep:
    """The stand-in step whose texts are the root attributes drafting copies, and the slice.

    Redacted with the trace, so a pseudonym in an environment reference is the
    same as in the steps, and nothing drafting copies from attributes is raw.
    """
    attrs = dict(material.root_attributes) if material is not None else {}
    attrs[SLICE_ATTRIBUTE] = slice_
    return TraceStep(span_id=ROOT_STEP, texts=attrs)


def candidate_id(project: str, evalset: str, trace_id: str) -> str:
    """A stable id: promoting a trace twice into one eval set finds the same candidate."""
    return "cand-" + hashlib.sha256(f"{project}\0{evalset}\0{trace_id}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Candidate:
    """One candidate row (see the module docstring)."""

    project_id: str
    candidate_id: str
    trace_id: str
    evalset: str
    source: str
    reasons: tuple[str, ...]
    slice: str
    policy_id: str
    policy_version: int
    stage: str
    cluster_id: str = ""
    cluster_size: int = 0
    duplicate_of: str = ""
    redacted_steps: str = ""
    redaction_report: str = ""
    draft: str = ""
    sampled_at: int = 0
    updated_at: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def steps(self) -> list[TraceStep]:
        """The redacted steps (empty before redaction)."""
        if not self.redacted_steps:
            return []
        return [
            TraceStep.from_dict(d)
            for d in json.loads(self.redacted_steps)
            if d.get("span_id") != ROOT_STEP
        ]

    def root_attributes(self) -> dict[str, str] | None:
        """The trace's root attributes that drafting copies, redacted (None: redacted before
        root attributes were, or not redacted yet)."""
        if not self.redacted_steps:
            return None
        for d in json.loads(self.redacted_steps):
            if d.get("span_id") == ROOT_STEP:
                return dict(d.get("texts") or {})
        return None

    def report(self) -> dict[str, Any]:
        """The redaction report (types, paths, counts; never values)."""
        return json.loads(self.redaction_report) if self.redaction_report else {}

    def task(self) -> dict[str, Any] | None:
        """The drafted task as JSON (None before drafting)."""
        return json.loads(self.draft) if self.draft else None

    def summary(self) -> dict[str, Any]:
        """JSON-ready fields without the large bodies."""
        d = asdict(self)
        for k in ("redacted_steps", "redaction_report", "draft", "extra"):
            d.pop(k)
        d["reasons"] = list(self.reasons)
        return d


_COLUMNS = (
    "project_id",
    "candidate_id",
    "trace_id",
    "evalset",
    "source",
    "reasons",
    "slice",
    "policy_id",
    "policy_version",
    "stage",
    "cluster_id",
    "cluster_size",
    "duplicate_of",
    "redacted_steps",
    "redaction_report",
    "draft",
    "sampled_at",
    "updated_at",
)


def write_candidates(store: Store, candidates: Sequence[Candidate]) -> int:
    """Write candidate rows (a newer ``updated_at`` than any earlier row of each)."""
    if not candidates:
        return 0
    now = time.time_ns()
    rows = [replace(c, updated_at=max(now, c.updated_at + 1)) for c in candidates]
    cols: dict[str, list[Any]] = {k: [] for k in _COLUMNS}
    for c in rows:
        for k in _COLUMNS:
            v = getattr(c, k)
            cols[k].append(list(v) if k == "reasons" else v)
    return store.insert(TABLE, cols)


_SELECT = (
    "SELECT project_id, candidate_id, trace_id, evalset, source, reasons, slice, policy_id,"
    " policy_version, stage, cluster_id, cluster_size, duplicate_of, {bodies}"
    " toUnixTimestamp64Nano(sampled_at) AS sampled_at,"
    " toUnixTimestamp64Nano(updated_at) AS updated_at"
    " FROM promote_candidates FINAL WHERE project_id = {{project:String}}"
)
_BODIES = "redacted_steps, redaction_report, draft,"
_NO_BODIES = "'' AS redacted_steps, '' AS redaction_report, '' AS draft,"


def _row(r: dict[str, Any]) -> Candidate:
    return Candidate(
        project_id=r["project_id"],
        candidate_id=r["candidate_id"],
        trace_id=r["trace_id"],
        evalset=r["evalset"],
        source=r["source"],
        reasons=tuple(r["reasons"] or ()),
        slice=r["slice"],
        policy_id=r["policy_id"],
        policy_version=int(r["policy_version"]),
        stage=r["stage"],
        cluster_id=r["cluster_id"],
        cluster_size=int(r["cluster_size"]),
        duplicate_of=r["duplicate_of"],
        redacted_steps=r["redacted_steps"],
        redaction_report=r["redaction_report"],
        draft=r["draft"],
        sampled_at=int(r["sampled_at"]),
        updated_at=int(r["updated_at"]),
    )


def list_candidates(
    store: Store,
    *,
    project: str = "default",
    evalset: str | None = None,
    stages: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
    bodies: bool = False,
) -> list[Candidate]:
    """Candidates of ``project`` (newest row of each), oldest sample first."""
    sql = _SELECT.format(bodies=_BODIES if bodies else _NO_BODIES)
    params: dict[str, Any] = {"project": project}
    if evalset is not None:
        sql += " AND evalset = {evalset:String}"
        params["evalset"] = evalset
    if stages:
        sql += " AND stage IN {stages:Array(String)}"
        params["stages"] = list(stages)
    if ids is not None:
        sql += " AND candidate_id IN {ids:Array(String)}"
        params["ids"] = list(ids)
    sql += " ORDER BY sampled_at, candidate_id"
    return [_row(r) for r in store.query(sql, params)]


def get_candidate(store: Store, cid: str, *, project: str = "default") -> Candidate:
    """One candidate with its bodies.

    Raises:
        NotFoundError: No such candidate in the project.
    """
    found = list_candidates(store, project=project, ids=[cid], bodies=True)
    if not found:
        raise NotFoundError(
            f"no candidate {cid!r} in project {project!r}; list them with `flywheel promote queue`"
        )
    return found[0]


def known_trace_ids(store: Store, *, project: str, evalset: str) -> set[str]:
    """Trace ids already promoted into ``evalset`` (sampling skips them)."""
    rows = store.query(
        "SELECT DISTINCT trace_id FROM promote_candidates WHERE project_id = {p:String}"
        " AND evalset = {e:String}",
        {"p": project, "e": evalset},
    )
    return {r["trace_id"] for r in rows}


#: The steps of many traces, their text from their span rows in one pass (ingest's
#: ``steps_with_text``: the ALIAS columns would read the span table once per block).
_STEPS_SQL = """
SELECT trace_id, span_id, parent_span_id, kind, tool_name, arguments, result, input, output,
       status, error, input_tokens, output_tokens, total_tokens, cost, duration_ns,
       toUnixTimestamp64Nano(start_time) AS start_ns
FROM {steps}
ORDER BY trace_id, start_time, span_id
"""


@dataclass
class TraceMaterial:
    """A trace as promotion reads it: steps (raw), usage and root attributes."""

    trace_id: str
    steps: list[TraceStep] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost: float = 0.0
    start_ns: int = 0
    end_ns: int = 0
    root_error: bool = False
    root_attributes: dict[str, str] = field(default_factory=dict)


def load_traces(
    store: Store, trace_ids: Sequence[str], *, project: str
) -> dict[str, TraceMaterial]:
    """Steps (one ``TraceStep`` per text-bearing span, in start order) and usage per trace.

    Steps are read through ingest's normaliser: tool arguments and results
    without library wrappers, a model step's input and output as its turns
    (``turns_text``). Raw text: the caller redacts before anything is written.
    """
    from flywheel.ingest import normalise_steps, steps_with_text, trace_usage, turns_text

    out: dict[str, TraceMaterial] = {}
    rows_of: dict[str, list[dict[str, Any]]] = {}
    ids = list(dict.fromkeys(trace_ids))
    sql = _STEPS_SQL.format(steps=steps_with_text(
        "project_id = {project:String} AND trace_id IN {ids:Array(String)}", final=True))
    for i in range(0, len(ids), 2000):
        chunk = ids[i : i + 2000]
        for r in store.query(sql, {"project": project, "ids": chunk}):
            m = out.setdefault(r["trace_id"], TraceMaterial(r["trace_id"]))
            start, end = int(r["start_ns"]), int(r["start_ns"]) + int(r["duration_ns"])
            m.start_ns = start if not m.start_ns else min(m.start_ns, start)
            m.end_ns = max(m.end_ns, end)
            rows_of.setdefault(r["trace_id"], []).append(r)
            if not r["parent_span_id"] and r["status"] == "error":
                m.root_error = True
        roots = store.query(
            f"SELECT TraceId AS trace_id, SpanAttributes AS a FROM {store.otel_table}"
            " WHERE ProjectId = {project:String} AND TraceId IN {ids:Array(String)}"
            " AND ParentSpanId = ''",
            {"project": project, "ids": chunk},
        )
        for r in roots:
            if r["trace_id"] in out:
                attrs = {k: v for k, v in (r["a"] or {}).items() if k in ROOT_ATTRIBUTES}
                out[r["trace_id"]].root_attributes.update(attrs)
    for tid, rows in rows_of.items():
        m = out[tid]
        u = trace_usage(rows)  # each model call counted once
        m.input_tokens, m.output_tokens = u.input_tokens, u.output_tokens
        m.total_tokens, m.cost = u.total_tokens, u.cost
        for r in normalise_steps(rows):
            is_tool = r["kind"] == "tool"
            texts = {"error": r["error"]} if r["error"] else {}
            inp = turns_text(r["input_turns"]) if r["input_turns"] else r["input"]
            outp = turns_text(r["output_turns"]) if r["output_turns"] else r["output"]
            if not (r["arguments"] or r["result"] or inp or outp or texts or is_tool):
                continue
            m.steps.append(
                TraceStep(
                    span_id=r["span_id"],
                    tool_name=(r["tool_name"] or None) if is_tool else None,
                    arguments=r["arguments"] or None,
                    result=r["result"] or None,
                    input_text=inp or None,
                    output_text=outp or None,
                    texts=texts,
                )
            )
    return out


def steps_json(steps: Sequence[TraceStep]) -> str:
    """Redacted steps as stored in ``promote_candidates.redacted_steps``."""
    return json.dumps(
        [{k: v for k, v in asdict(s).items() if v not in (None, {}, "")} for s in steps],
        ensure_ascii=False,
    )


# -- stages ---------------------------------------------------------------


def sample_candidates(
    store: Store,
    policy: Any,
    *,
    trace_ids: Sequence[str] | None = None,
    golden: bool = False,
) -> list[Candidate]:
    """Sample by ``policy`` (or promote ``trace_ids`` explicitly) and write new candidates.

    Traces already promoted into the policy's eval set are skipped, so running
    the sampler again only adds what is new.
    """
    from flywheel.promote._sampling import sample, sample_one

    known = known_trace_ids(store, project=policy.project, evalset=policy.evalset)
    if trace_ids is not None:
        picked = [sample_one(store, policy, t) for t in trace_ids]
        picked = [s for s in picked if s.trace_id not in known]
    else:
        picked = sample(store, policy, exclude=known)
    now = time.time_ns()
    out = [
        Candidate(
            project_id=policy.project,
            candidate_id=candidate_id(policy.project, policy.evalset, s.trace_id),
            trace_id=s.trace_id,
            evalset=policy.evalset,
            source=s.source,
            reasons=(*s.reasons, *(("golden",) if golden else ())),
            slice=s.slice,
            policy_id=policy.policy_id,
            policy_version=policy.version,
            stage="sampled",
            sampled_at=now,
            updated_at=now,
        )
        for s in picked
    ]
    write_candidates(store, out)
    record_policy(store, policy)
    return out


def record_policy(store: Store, policy: Any) -> None:
    """Keep the policy's canonical JSON under its id (a release copies it into its manifest).

    Deny-listed strings are PII by definition: they are kept as SHA-256 hashes only.
    """
    doc = policy.model_dump(mode="json")
    deny = doc.get("redaction", {}).get("deny_strings", {})
    for label, values in deny.items():
        deny[label] = sorted("sha256:" + hashlib.sha256(v.encode()).hexdigest() for v in values)
    body = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    store.insert(
        "promote_policies",
        {
            "project_id": [policy.project],
            "policy_id": [policy.policy_id],
            "name": [policy.name],
            "version": [policy.version],
            "digest": [policy.digest],
            "body": [body],
            "first_used": [time.time_ns()],
        },
    )


def dedupe_candidates(
    store: Store,
    *,
    project: str = "default",
    evalset: str | None = None,
    params: Any = None,
    progress: Any = None,
    index_production: bool = True,
) -> list[Candidate]:
    """Assign sampled candidates to near-duplicate clusters (``StoreDedupeIndex``).

    The first candidate of a cluster goes on (stage ``deduped``); later ones
    become ``duplicate`` with ``duplicate_of`` naming it. Every candidate
    records its cluster id and size. With ``index_production`` the project's
    other traces not yet in the index are added too (after the candidates,
    so a candidate represents its cluster), which makes the size how often
    production hit that task, not how often the sampler picked it.
    """
    from flywheel.promote._dedupe import StoreDedupeIndex

    todo = list_candidates(store, project=project, evalset=evalset, stages=["sampled"])
    if not todo:
        return []
    # Failures first, so a failed run represents its cluster (its evidence is what we promote).
    rank = {"failure": 0, "explicit": 1, "success": 2}
    todo.sort(key=lambda c: (rank.get(c.source, 3), -len(c.reasons), c.sampled_at, c.candidate_id))
    index = StoreDedupeIndex(store, params, project=project)
    material = load_traces(store, [c.trace_id for c in todo], project=project)
    assignments = index.add_traces(
        [(c.trace_id, material[c.trace_id].steps if c.trace_id in material else []) for c in todo]
    )
    if index_production:
        index_traces(store, index, project=project)
    clusters = index._cluster_rows(sorted({a.cluster_id for a in assignments}))
    sizes = {cid: c.size for cid, c in clusters.items()}
    # Earlier candidates already placed in these clusters (any eval set of the project).
    placed: dict[tuple[str, str], str] = {}
    for c in list_candidates(store, project=project, stages=["deduped", "redacted", "drafted"]):
        if c.cluster_id:
            placed.setdefault((c.evalset, c.cluster_id), c.candidate_id)
    out = []
    for c, a in zip(todo, assignments, strict=True):
        first = placed.get((c.evalset, a.cluster_id))
        if first is None:
            placed[(c.evalset, a.cluster_id)] = c.candidate_id
            out.append(
                replace(
                    c,
                    stage="deduped",
                    cluster_id=a.cluster_id,
                    cluster_size=sizes.get(a.cluster_id, 1),
                )
            )
        else:
            out.append(
                replace(
                    c,
                    stage="duplicate",
                    cluster_id=a.cluster_id,
                    cluster_size=sizes.get(a.cluster_id, 1),
                    duplicate_of=first,
                )
            )
        if progress:
            progress()
    write_candidates(store, out)
    return out


def index_traces(store: Store, index: Any, *, project: str, chunk: int = 2000) -> int:
    """Add the project's traces that the dedupe index has not seen; return how many."""
    rows = store.query(
        "SELECT DISTINCT trace_id FROM trace_summaries WHERE project_id = {p:String}"
        " AND trace_id NOT IN (SELECT trace_id FROM dedupe_signatures WHERE params = {k:String})"
        " ORDER BY trace_id",
        {"p": project, "k": index.namespace},
    )
    ids = [r["trace_id"] for r in rows]
    for i in range(0, len(ids), chunk):
        material = load_traces(store, ids[i : i + chunk], project=project)
        index.add_traces([(t, material[t].steps) for t in ids[i : i + chunk] if t in material])
    return len(ids)


def redact_candidates(
    store: Store,
    *,
    project: str = "default",
    evalset: str | None = None,
    policy: Any = None,
    workers: int = 1,
    progress: Any = None,
) -> list[Candidate]:
    """Redact the deduplicated candidates' traces and store redacted steps and reports.

    Pseudonyms are consistent within a trace (see ``promote._redact``); raw
    text is read from the store, redacted in memory and never written.
    """
    from flywheel.promote._redact_batch import redact_traces, worker_count
    from flywheel.promote._redact_types import RedactionPolicy

    todo = list_candidates(store, project=project, evalset=evalset, stages=["deduped"])
    if not todo:
        return []
    material = load_traces(store, [c.trace_id for c in todo], project=project)
    traces = [
        [*(material[c.trace_id].steps if c.trace_id in material else []),
         root_step(material.get(c.trace_id), c.slice)]
        for c in todo
    ]
    redaction = policy if isinstance(policy, RedactionPolicy) else RedactionPolicy()
    out = []
    batch = 64 * worker_count(workers)  # each worker gets several chunks of every batch
    for i in range(0, len(todo), batch):
        done = redact_traces(traces[i : i + batch], redaction, workers=workers)
        for c, red in zip(todo[i : i + batch], done, strict=True):
            root = red.steps[-1]
            out.append(
                replace(
                    c,
                    stage="redacted",
                    slice=root.texts.get(SLICE_ATTRIBUTE, c.slice),
                    redacted_steps=steps_json(red.steps),
                    redaction_report=json.dumps(red.report.to_dict()),
                )
            )
        if progress:
            progress(len(done))
    write_candidates(store, out)
    return out
