"""The deterministic attributor: which step caused a failure, which surfaced it, who, why.

Signals (``_signals``) each name a step where something showed and the step
they blame. The attributor picks the decisive signal -- budget hits first
(an outcome, not a component), then the heaviest evidence, earliest blame on
ties -- and walks the argument-provenance graph backwards from the blamed
step: a tool call whose argument came from an earlier read is blamed on that
read (a refund with a stale amount surfaces at argument generation; the
cause is the read). The responsible agent is the speaker of the causal step,
or, for a tool result, of the step that issued the call. Confidence is the
decisive signal's weight, raised a little by independent agreeing signals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ._signals import Signal, Step, actor_before, all_signals
from ._taxonomy import UNDETERMINED, multi_agent_category

VERSION = "det-1"

#: Signal kinds that carry their own outcome (not a component of the agent).
_OUTCOME_KINDS = {"budget_hit": "budget_exhaustion"}
#: Priors, not evidence of failure: where to look once a trace is known to have failed.
PRIOR_KINDS = frozenset({"first_action", "first_contribution"})


@dataclass
class Attribution:
    """Where a trace went wrong, as evidence for a person to check."""

    trace_id: str
    failed: bool
    category: str
    outcome: str  # failure | budget_exhaustion | environment_caused | none
    surfaced_span_id: str
    surfaced_index: int
    causal_span_id: str
    causal_index: int
    agent: str
    confidence: float
    evidence: list[dict[str, Any]] = field(default_factory=list)
    attributor: str = "deterministic"
    version: str = VERSION
    service_name: str = ""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def _speaker(steps: Sequence[Step], index: int) -> str:
    """The agent responsible for step ``index``: its speaker, or the caller of a result."""
    s = steps[index]
    if s.is_observation:
        j = actor_before(steps, index)
        if j != index:
            return steps[j].agent or s.agent
    if s.agent:
        return s.agent
    for j in range(index, -1, -1):  # an unnamed span inherits its enclosing agent's name
        if steps[j].agent:
            return steps[j].agent
    return s.service_name


def walk_back(steps: Sequence[Step], provenance: Sequence[Mapping[str, Any]], index: int) -> int:
    """Follow argument provenance from ``index`` to the earliest untrusted source.

    From a tool call, each argument's source step is visited; a source that is
    a tool result is followed again through the arguments of the call that
    produced it, while sources are untrusted observations. Returns the
    earliest step reached (``index`` itself when nothing leads back).
    """
    by_span = {s.span_id: s for s in steps}
    sources: dict[str, list[str]] = {}
    for rec in provenance:
        src = str(rec.get("source_span_id") or "")
        if src and not rec.get("trusted", True):
            sources.setdefault(str(rec.get("span_id")), []).append(src)
    seen: set[int] = set()
    frontier = [index]
    best = index
    while frontier:
        i = frontier.pop()
        if i in seen:
            continue
        seen.add(i)
        for src in sources.get(steps[i].span_id, []):
            s = by_span.get(src)
            if s is not None and s.index < i:
                best = min(best, s.index)
                frontier.append(s.index)
    return best


def _choose(signals: Sequence[Signal], assume_failed: bool) -> Signal | None:
    if not assume_failed and all(g.kind in PRIOR_KINDS for g in signals):
        return None
    budget = [g for g in signals if g.kind in _OUTCOME_KINDS]
    if budget:
        return min(budget, key=lambda g: g.index)
    if not signals:
        return None
    top = max(g.weight for g in signals)
    return min((g for g in signals if g.weight == top), key=lambda g: (g.cause, g.index))


def _evidence(steps: Sequence[Step], g: Signal, chosen: Signal | None) -> dict[str, Any]:
    return {
        "kind": g.kind,
        "index": g.index,
        "cause_index": g.cause,
        "span_id": steps[g.index].span_id,
        "category": g.category,
        "weight": g.weight,
        "detail": g.evidence,
        "chosen": g is chosen,
    }


def attribute_steps(
    steps: Sequence[Step],
    provenance: Sequence[Mapping[str, Any]] = (),
    *,
    trace_id: str = "",
    assume_failed: bool = False,
) -> Attribution:
    """Attribute one trace's failure from its steps (and argument provenance).

    Without failure evidence the trace is ``undetermined`` (not failed) unless
    ``assume_failed`` says the run is known to have failed (a failed eval
    trial, a labelled failure corpus); then the priors name the likeliest
    step, with low confidence.
    """
    if not steps:
        return Attribution(trace_id, False, UNDETERMINED, "none", "", -1, "", -1, "", 0.0)
    signals = all_signals(steps, provenance)
    chosen = _choose(signals, assume_failed)
    service = next((s.service_name for s in steps if s.service_name), "")
    if chosen is None:
        last = steps[-1]
        return Attribution(
            trace_id,
            False,
            UNDETERMINED,
            "none",
            last.span_id,
            last.index,
            last.span_id,
            last.index,
            _speaker(steps, last.index),
            0.0,
            evidence=[_evidence(steps, g, None) for g in signals],
            service_name=service,
        )
    cause = walk_back(steps, provenance, chosen.cause)
    category = chosen.category
    agents = {s.agent for s in steps if s.agent and not s.is_observation}
    if len(agents) > 1:
        category = multi_agent_category(category)
    outcome = _OUTCOME_KINDS.get(chosen.kind) or (
        "environment_caused" if category == "environment_caused" else "failure"
    )
    agreeing = {g.kind for g in signals if g.cause == chosen.cause and g.kind != chosen.kind}
    confidence = min(0.99, chosen.weight + 0.05 * len(agreeing))
    evidence = [_evidence(steps, g, chosen) for g in signals]
    return Attribution(
        trace_id=trace_id,
        failed=outcome != "none",
        category=category,
        outcome=outcome,
        surfaced_span_id=steps[chosen.index].span_id,
        surfaced_index=chosen.index,
        causal_span_id=steps[cause].span_id,
        causal_index=cause,
        agent=_speaker(steps, cause),
        confidence=round(confidence, 3),
        evidence=evidence,
        service_name=service,
    )


def attribute_trace(
    store: Any,
    trace_id: str,
    *,
    project: str = "default",
    provenance: bool = True,
    assume_failed: bool = False,
) -> Attribution:
    """Attribute a stored trace (labels are dropped on load; see ``LABEL_PREFIXES``)."""
    from flywheel.ingest import read_provenance

    from ._signals import load_trace

    steps = load_trace(store, trace_id, project)
    prov: list[dict[str, Any]] = []
    if provenance and any(
        s.kind in ("tool", "memory_write") and s.arguments.strip() not in ("", "{}") for s in steps
    ):
        prov = read_provenance(store, trace_id, project=project)
    return attribute_steps(steps, prov, trace_id=trace_id, assume_failed=assume_failed)
