"""Sampling traces into promotion candidates by a declared, versioned policy.

Why a policy file: which traces become eval tasks decides what the eval set
measures, so the rule is written down (``promote-policy.toml`` or ``.json``),
versioned with the eval set (its digest is stamped on every candidate and
copied into each release manifest), and never improvised per run.

Failures come first (traces-to-release-gate 22.1: learn from real failures):
a trace is a failure when its root span ended in error (or, optionally, any
span did), an outcome attribute says it failed, a feedback score attribute is
negative, argument provenance flagged an argument, or the side-effect
analysis found an unauthorized or critical change. Successes are sampled per
slice, so rare cohorts are not drowned by the busy ones: each slice keeps its
``per_slice`` traces with the smallest seeded hash of the trace id, which is
reproducible and independent of read order. One incident can also be
promoted explicitly by trace id. Every candidate keeps its source trace id.
"""

from __future__ import annotations

import hashlib
import json
import time
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from flywheel.promote._redact_types import RedactionPolicy
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from flywheel import NotFoundError, Store, UserError

#: Version of the policy file format.
POLICY_SCHEMA_VERSION = 1

_ERROR_CODES = ("Error", "STATUS_CODE_ERROR")


class OutcomeRule(BaseModel):
    """An attribute whose value marks a failed outcome (any span of the trace)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    attribute: str = Field(min_length=1, description="Span attribute key.")
    failed_values: list[str] = Field(
        description="Values (case-insensitive) that mean the run failed."
    )


class FailureRules(BaseModel):
    """What makes a trace a failure candidate."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root_error: bool = Field(default=True, description="Root span ended with status Error.")
    any_span_error: bool = Field(default=False, description="Any span ended with status Error.")
    outcomes: list[OutcomeRule] = Field(
        default_factory=lambda: [
            OutcomeRule(attribute="flywheel.outcome.utility", failed_values=["false", "0"]),
            OutcomeRule(attribute="flywheel.outcome", failed_values=["fail", "failed", "failure"]),
            OutcomeRule(
                attribute="flywheel.trial.status", failed_values=["error", "budget_exhausted"]
            ),
        ],
        description="Outcome attributes and the values that mean failure.",
    )
    feedback_attributes: list[str] = Field(
        default_factory=lambda: [
            "flywheel.feedback.score",
            "feedback.score",
            "user.feedback.score",
        ],
        description="Numeric feedback attributes; a value below feedback_below is negative.",
    )
    feedback_below: float = Field(
        default=0.0, description="Feedback scores below this are negative."
    )
    provenance_flags: list[str] | None = Field(
        default=None, description="Provenance flags that count (None: every flag)."
    )
    side_effects: bool = Field(
        default=True,
        description="Unauthorized or critical side effects (side_effect_results) count.",
    )
    max_failures: int = Field(default=500, ge=0, description="At most this many failures per run.")


class SuccessSampling(BaseModel):
    """How successes are sampled: a seeded, stratified sample per slice."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    per_slice: int = Field(default=5, ge=0, description="Successes kept per slice.")
    seed: int = Field(default=0, description="Seed of the per-slice hash order.")


class SamplingPolicy(BaseModel):
    """The declared promotion policy (one file, versioned with the eval set)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    name: str = Field(default="default", min_length=1, description="Policy name.")
    version: int = Field(default=1, ge=1, description="Bump when the rules change.")
    evalset: str = Field(
        default="default", min_length=1, description="Eval set the candidates feed."
    )
    project: str = Field(default="default", description="Project whose traces are sampled.")
    since: str | None = Field(
        default=None, description="Only traces since (ISO time or 7d, 24h...)."
    )
    until: str | None = Field(default=None, description="Only traces before (same forms).")
    slice_attributes: list[str] = Field(
        default_factory=lambda: ["flywheel.slice", "flywheel.suite", "gen_ai.agent.name"],
        description="Attributes naming a trace's slice, first present wins; else service name.",
    )
    failures: FailureRules = Field(default_factory=FailureRules)
    successes: SuccessSampling = Field(default_factory=SuccessSampling)
    held_out_fraction: float = Field(
        default=0.3, ge=0.0, le=1.0, description="Share of drafted tasks put in the held-out split."
    )
    budget_factor: float = Field(
        default=2.0, gt=0.0, description="Drafted budgets: observed usage times this factor."
    )
    redaction: RedactionPolicy = Field(
        default_factory=RedactionPolicy, description="What redaction replaces (keys, deny lists)."
    )

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical policy JSON: names this exact policy."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def policy_id(self) -> str:
        """``name@version#digest12``: what candidates and manifests record."""
        return f"{self.name}@{self.version}#{self.digest[:12]}"


def load_policy(path: str | Path | None) -> SamplingPolicy:
    """Read a policy file (``.toml`` or ``.json``); None gives the default policy.

    Raises:
        UserError: Missing file, unreadable syntax or an invalid field (named).
    """
    if path is None:
        return SamplingPolicy()
    p = Path(path)
    if not p.is_file():
        raise UserError(f"policy file {p} not found; pass --policy FILE (.toml or .json)")
    text = p.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text) if p.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"policy file {p} is not valid {p.suffix[1:] or 'JSON'}: {exc}") from exc
    try:
        return SamplingPolicy.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "policy"
        raise UserError(f"policy file {p}: {where}: {first.get('msg')}") from exc


@dataclass(frozen=True)
class TraceFacts:
    """What sampling knows about one trace (read in one pass over the span table)."""

    trace_id: str
    start_ns: int
    service: str
    root_error: bool
    error_spans: int
    attributes: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Sampled:
    """One sampled trace: why it was chosen and its slice.

    Attributes:
        trace_id: The source trace.
        source: ``failure``, ``success`` or ``explicit``.
        reasons: Why (``root-error``, ``outcome:flywheel.outcome.utility=false``,
            ``feedback:-1``, ``provenance:untrusted_memory_write``,
            ``side-effect:unauthorized``, ``stratified:seed=0``, ``explicit``).
        slice: The slice the trace belongs to.
        start_ns: Trace start.
    """

    trace_id: str
    source: str
    reasons: tuple[str, ...]
    slice: str
    start_ns: int


_FACTS_SQL = """
SELECT TraceId AS trace_id,
       toUnixTimestamp64Nano(min(Timestamp)) AS t0,
       anyIf(ServiceName, ParentSpanId = '') AS root_service,
       any(ServiceName) AS any_service,
       maxIf(StatusCode IN {{codes:Array(String)}}, ParentSpanId = '') AS root_error,
       countIf(StatusCode IN {{codes:Array(String)}}) AS error_spans,
       groupArrayArray(arrayMap(k -> concat(k, '\x1f', SpanAttributes[k]),
           arrayFilter(k -> SpanAttributes[k] != '', {{keys:Array(String)}}))) AS attrs
FROM {table}
WHERE ProjectId = {{project:String}} {where}
GROUP BY TraceId
"""


def _policy_keys(policy: SamplingPolicy) -> list[str]:
    keys = list(policy.slice_attributes)
    keys += [r.attribute for r in policy.failures.outcomes]
    keys += list(policy.failures.feedback_attributes)
    return list(dict.fromkeys(keys))


def read_facts(
    store: Store,
    policy: SamplingPolicy,
    *,
    trace_ids: list[str] | None = None,
    now_ns: int | None = None,
) -> list[TraceFacts]:
    """One grouped read of the span table: status, service and policy attributes per trace."""
    from flywheel.ingest import parse_time

    params: dict[str, Any] = {
        "project": policy.project,
        "codes": list(_ERROR_CODES),
        "keys": _policy_keys(policy),
    }
    where = []
    since = parse_time(policy.since, now_ns=now_ns)
    until = parse_time(policy.until, now_ns=now_ns)
    if since is not None:
        where.append("AND Timestamp >= fromUnixTimestamp64Nano({since:Int64})")
        params["since"] = since
    if until is not None:
        where.append("AND Timestamp < fromUnixTimestamp64Nano({until:Int64})")
        params["until"] = until
    if trace_ids is not None:
        where.append("AND TraceId IN {ids:Array(String)}")
        params["ids"] = trace_ids
    sql = _FACTS_SQL.format(table=store.otel_table, where=" ".join(where))
    out = []
    for r in store.query(sql, params):
        attrs: dict[str, list[str]] = defaultdict(list)
        for kv in r["attrs"] or []:
            k, _, v = kv.partition("\x1f")
            attrs[k].append(v)
        out.append(
            TraceFacts(
                trace_id=r["trace_id"],
                start_ns=int(r["t0"]),
                service=r["root_service"] or r["any_service"] or "",
                root_error=bool(r["root_error"]),
                error_spans=int(r["error_spans"]),
                attributes=dict(attrs),
            )
        )
    return out


def _table_exists(store: Store, table: str) -> bool:
    return bool(
        store.scalar(
            "SELECT count() AS n FROM system.tables"
            " WHERE database = {db:String} AND name = {t:String}",
            {"db": store.database, "t": table},
        )
    )


def provenance_flags(store: Store, project: str) -> dict[str, set[str]]:
    """Trace id -> provenance flags raised on any of its tool arguments."""
    rows = store.query(
        "SELECT trace_id, groupUniqArrayArray(flags) AS f FROM argument_provenance FINAL"
        " WHERE project_id = {p:String} AND notEmpty(flags) GROUP BY trace_id",
        {"p": project},
    )
    return {r["trace_id"]: set(r["f"]) for r in rows}


def side_effect_flags(store: Store, project: str) -> dict[str, set[str]]:
    """Trace id -> side-effect flags (``unauthorized``, ``critical:CATEGORY``), if analysed."""
    if not _table_exists(store, "side_effect_results"):
        return {}
    rows = store.query(
        "SELECT trace_id, max(unauthorized) AS u, max(blocking) AS b,"
        " groupUniqArrayArray(mapKeys(mapFilter((k, v) -> v > 0, critical))) AS cats"
        " FROM side_effect_results FINAL WHERE project_id = {p:String} AND trace_id != ''"
        " GROUP BY trace_id",
        {"p": project},
    )
    out: dict[str, set[str]] = {}
    for r in rows:
        flags = {f"critical:{c}" for c in r["cats"] or []}
        if r["u"]:
            flags.add("unauthorized")
        if r["b"]:
            flags.add("blocking")
        if flags:
            out[r["trace_id"]] = flags
    return out


def slice_of(facts: TraceFacts, policy: SamplingPolicy) -> str:
    """The first slice attribute present on the trace, else its service name, else 'all'."""
    for key in policy.slice_attributes:
        values = [v for v in facts.attributes.get(key, []) if v]
        if values:
            return values[0]
    return facts.service or "all"


def failure_reasons(
    facts: TraceFacts,
    policy: SamplingPolicy,
    prov: set[str] | None = None,
    side: set[str] | None = None,
) -> list[str]:
    """Why ``facts`` is a failure under ``policy`` (empty: a success)."""
    rules = policy.failures
    reasons: list[str] = []
    if rules.root_error and facts.root_error:
        reasons.append("root-error")
    if rules.any_span_error and facts.error_spans and not facts.root_error:
        reasons.append(f"span-errors:{facts.error_spans}")
    for rule in rules.outcomes:
        failed = {v.lower() for v in rule.failed_values}
        for v in facts.attributes.get(rule.attribute, []):
            if v.strip().lower() in failed:
                reasons.append(f"outcome:{rule.attribute}={v.strip().lower()}")
                break
    for key in rules.feedback_attributes:
        for v in facts.attributes.get(key, []):
            try:
                score = float(v)
            except ValueError:
                continue
            if score < rules.feedback_below:
                reasons.append(f"feedback:{key}={score:g}")
                break
    for flag in sorted(prov or ()):
        if rules.provenance_flags is None or flag in rules.provenance_flags:
            reasons.append(f"provenance:{flag}")
    if rules.side_effects:
        reasons.extend(f"side-effect:{f}" for f in sorted(side or ()))
    return reasons


def seeded_rank(seed: int, trace_id: str) -> str:
    """The order key of the seeded success sample: sha256(seed:trace_id)."""
    return hashlib.sha256(f"{seed}:{trace_id}".encode()).hexdigest()


def sample(
    store: Store,
    policy: SamplingPolicy,
    *,
    exclude: set[str] | None = None,
    now_ns: int | None = None,
) -> list[Sampled]:
    """Apply ``policy`` to the traces of its project: failures first, then successes.

    Failures are ordered by number of reasons (most alarming first), then
    newest first, capped at ``failures.max_failures``. Successes are the
    ``successes.per_slice`` traces of each slice with the smallest seeded
    hash. ``exclude`` holds trace ids already promoted (skipped).

    Returns:
        The sampled traces; empty when the project has no trace.
    """
    exclude = exclude or set()
    facts = [f for f in read_facts(store, policy, now_ns=now_ns) if f.trace_id not in exclude]
    prov = provenance_flags(store, policy.project) if facts else {}
    side = (
        side_effect_flags(store, policy.project) if facts and policy.failures.side_effects else {}
    )
    failures: list[Sampled] = []
    successes: dict[str, list[TraceFacts]] = defaultdict(list)
    for f in facts:
        reasons = failure_reasons(f, policy, prov.get(f.trace_id), side.get(f.trace_id))
        sl = slice_of(f, policy)
        if reasons:
            failures.append(Sampled(f.trace_id, "failure", tuple(reasons), sl, f.start_ns))
        else:
            successes[sl].append(f)
    failures.sort(key=lambda s: (-len(s.reasons), -s.start_ns, s.trace_id))
    out = failures[: policy.failures.max_failures]
    seed = policy.successes.seed
    for sl in sorted(successes):
        ranked = sorted(successes[sl], key=lambda f: seeded_rank(seed, f.trace_id))
        for f in ranked[: policy.successes.per_slice]:
            out.append(Sampled(f.trace_id, "success", (f"stratified:seed={seed}",), sl, f.start_ns))
    return out


def sample_one(store: Store, policy: SamplingPolicy, trace_id: str) -> Sampled:
    """Explicit promotion of one incident by trace id (whatever the policy would say).

    Raises:
        NotFoundError: The project has no span of ``trace_id``.
    """
    from flywheel.ingest import normalize_trace_id

    tid = normalize_trace_id(trace_id)
    unbounded = policy.model_copy(update={"since": None, "until": None})
    facts = read_facts(store, unbounded, trace_ids=[tid])
    if not facts:
        raise NotFoundError(
            f"no trace {tid} in project {policy.project!r}; list traces with `flywheel traces list`"
        )
    f = facts[0]
    prov = provenance_flags(store, policy.project).get(tid)
    side = side_effect_flags(store, policy.project).get(tid)
    reasons = ["explicit", *failure_reasons(f, policy, prov, side)]
    return Sampled(tid, "explicit", tuple(reasons), slice_of(f, policy), f.start_ns)


def now_ns() -> int:
    """Wall-clock ns (one place, so tests can read it)."""
    return time.time_ns()
