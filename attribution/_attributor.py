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

from ._signals import all_signals
from ._steps import TRUE, Signal, Step, actor_before
from ._taxonomy import UNDETERMINED, UNKNOWN, multi_agent_category

VERSION = "det-2"

#: Signal kinds that carry their own outcome (not a component of the agent).
_OUTCOME_KINDS = {"budget_hit": "budget_exhaustion"}
#: Priors, not evidence of failure: where to look once a trace is known to have failed.
PRIOR_KINDS = frozenset({"first_action", "first_contribution"})
#: Evidence this strong shows a failure by itself (a trace that declares no outcome).
FAILURE_WEIGHT = 0.5
#: Evidence this strong names the causal step; weaker evidence shows where a failure
#: surfaced, and in a run known to have failed the priors place the cause instead.
DECISIVE_WEIGHT = 0.7
#: A category needs this much evidence at the blamed step; below it the answer is ``unknown``.
MIN_CATEGORY_SCORE = 0.5


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
    #: Every category with evidence at the blamed step, strongest first: ``[[category, score]]``.
    category_scores: list[list[Any]] = field(default_factory=list)
    #: The MAST cluster of the category when several agents speak ('' otherwise).
    cluster: str = ""
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


def declared_outcome(steps: Sequence[Step]) -> str:
    """``failure``, ``success`` or '' from the outcome a trace declares about itself.

    Read from the attributes a harness or an application sets on its spans
    (``flywheel.outcome.utility``, ``flywheel.outcome``, ``flywheel.outcome.security``
    -- an attack that succeeded is a failure -- and ``flywheel.trial.status``) and
    from a root span that ended in error.
    """
    verdict = ""
    for s in steps:
        a = s.attributes
        if a.get("flywheel.outcome.security") in TRUE:
            return "failure"
        if a.get("flywheel.trial.status") in ("error", "budget_exhausted"):
            return "failure"
        if s.parent_span_id == "" and s.status == "error" and s.kind in ("agent", "other"):
            return "failure"
        utility = a.get("flywheel.outcome.utility", a.get("flywheel.outcome", "")).lower()
        if utility in ("false", "0", "fail", "failed", "failure"):
            return "failure"
        if utility in ("true", "1", "success", "succeeded", "pass", "passed"):
            verdict = "success"
    return verdict


def _choose(signals: Sequence[Signal], known_failed: bool) -> Signal | None:
    """The decisive signal.

    A budget hit; else the earliest strong one; else a prior or the heaviest
    evidence (priors first in a run known to have failed).
    """
    evidence = [g for g in signals if g.kind not in PRIOR_KINDS]
    if not known_failed and not any(g.weight >= FAILURE_WEIGHT for g in evidence):
        return None
    budget = [g for g in evidence if g.kind in _OUTCOME_KINDS]
    if budget:
        return min(budget, key=lambda g: g.index)
    strong = [g for g in evidence if g.weight >= DECISIVE_WEIGHT]
    if strong:
        return min(strong, key=lambda g: (g.cause, -g.weight, g.index))
    priors = [g for g in signals if g.kind in PRIOR_KINDS]
    pool = (priors or evidence) if known_failed else (evidence or priors)
    if not pool:
        return None
    top = max(g.weight for g in pool)
    return min((g for g in pool if g.weight == top), key=lambda g: (g.cause, g.index))


def category_scores(signals: Sequence[Signal], cause: int) -> list[list[Any]]:
    """Evidence per category: ``1 - prod(1 - w)`` over its signals, strongest first.

    A signal counts with its full weight when it blames the causal step and
    with half of it when it blames another step (it is about the run, not the
    step), so evidence elsewhere shows as a runner-up but cannot settle the
    category of the blamed step on its own.
    """
    miss: dict[str, float] = {}
    for g in signals:
        if g.category and g.kind not in PRIOR_KINDS:
            w = g.weight if g.cause == cause else g.weight / 2
            miss[g.category] = miss.get(g.category, 1.0) * (1.0 - w)
    return sorted(([c, round(1.0 - m, 3)] for c, m in miss.items()), key=lambda cs: -cs[1])


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

    A trace that declares success (``declared_outcome``) is not failed, whatever
    its signals say (they stay in the evidence, none chosen). A trace that
    declares nothing is failed only on evidence of weight ``FAILURE_WEIGHT`` or
    more, unless ``assume_failed`` says the run is known to have failed (a
    failed eval trial, a labelled failure corpus); then the priors name the
    likeliest step when nothing stronger does. The category is the best
    supported one at the blamed step when its score reaches
    ``MIN_CATEGORY_SCORE``, else ``unknown``; ``category_scores`` has them all.
    """
    if not steps:
        return Attribution(trace_id, False, UNDETERMINED, "none", "", -1, "", -1, "", 0.0)
    signals = all_signals(steps, provenance)
    declared = declared_outcome(steps)
    known_failed = assume_failed or declared == "failure"
    chosen = None if declared == "success" and not assume_failed else _choose(signals, known_failed)
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
    scores = category_scores(signals, chosen.cause)
    category = scores[0][0] if scores and scores[0][1] >= MIN_CATEGORY_SCORE else UNKNOWN
    agents = {s.agent for s in steps if s.agent and s.speaks}
    mast = multi_agent_category(category)  # the category itself when no cluster applies
    cluster = mast if len(agents) > 1 and mast != category else ""
    outcome = _OUTCOME_KINDS.get(chosen.kind) or (
        "environment_caused" if category == "environment_caused" else "failure"
    )
    confidence = scores[0][1] if scores else chosen.weight
    return Attribution(
        trace_id=trace_id,
        failed=True,
        category=category,
        outcome=outcome,
        surfaced_span_id=steps[chosen.index].span_id,
        surfaced_index=chosen.index,
        causal_span_id=steps[cause].span_id,
        causal_index=cause,
        agent=_speaker(steps, cause),
        confidence=round(min(0.99, confidence), 3),
        evidence=[_evidence(steps, g, chosen) for g in signals],
        category_scores=scores,
        cluster=cluster,
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

    from ._steps import load_trace

    steps = load_trace(store, trace_id, project)
    prov: list[dict[str, Any]] = []
    if provenance and any(
        s.kind in ("tool", "memory_write") and s.arguments.strip() not in ("", "{}") for s in steps
    ):
        prov = read_provenance(store, trace_id, project=project)
    return attribute_steps(steps, prov, trace_id=trace_id, assume_failed=assume_failed)
