"""The attributor: which step caused a failure, which surfaced it, who, why, how sure.

Signals (``_signals``, ``_grounding``) each name a step where something showed
and the step they blame. Strong evidence decides: a budget hit first (an
outcome, not a component), then the earliest signal of weight
``DECISIVE_WEIGHT`` or more; in a trace failed on its evidence alone the
heaviest signal does. Otherwise -- weak evidence in a run known to have failed
-- the learned model (``_model``, features in ``_features``) gives every step a
probability and the category mixed over them; a category whose evidence lies
only at other steps and whose probability is below ``MIN_CATEGORY_PROB`` is not
named (``unknown``, the probabilities as runner-ups); in a trace with no evidence at
all the location prior (the first action or contribution) names the step. From the blamed
step the argument-provenance graph is walked backwards: a tool call whose
argument came from an earlier untrusted read is blamed on that read. The
responsible agent is the speaker of the causal step, or, for a tool result, of
the step that issued the call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ._features import step_features
from ._model import AttributionModel, has_evidence, load_model
from ._signals import all_signals
from ._steps import TRUE, Signal, Step, actor_before
from ._taxonomy import UNDETERMINED, UNKNOWN, multi_agent_category

VERSION = "det-3"

#: Signal kinds that carry their own outcome (not a component of the agent).
_OUTCOME_KINDS = {"budget_hit": "budget_exhaustion"}
#: Priors, not evidence of failure: where to look once a trace is known to have failed.
PRIOR_KINDS = frozenset({"first_action", "first_contribution"})
#: Evidence this strong shows a failure by itself (a trace that declares no outcome).
FAILURE_WEIGHT = 0.5
#: Evidence this strong names the causal step and its category by itself; weaker
#: evidence in a run known to have failed is weighed by the learned model.
DECISIVE_WEIGHT = 0.7
#: The model names a category with evidence at the blamed step, or one whose probability
#: reaches this; otherwise ``unknown``, with the model's probabilities as the runner-ups.
MIN_CATEGORY_PROB = 0.5


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
    #: How sure the attributor is of the causal step (the model's probability, or a
    #: finding's weight).
    step_confidence: float = 0.0
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


def _decisive(signals: Sequence[Signal]) -> Signal | None:
    """The decisive signal: a budget hit, else the earliest strong one (``DECISIVE_WEIGHT``)."""
    strong = [g for g in signals if g.kind not in PRIOR_KINDS and g.weight >= DECISIVE_WEIGHT]
    budget = [g for g in strong if g.kind in _OUTCOME_KINDS]
    if budget:
        return min(budget, key=lambda g: g.index)
    if strong:
        return min(strong, key=lambda g: (g.cause, -g.weight, g.index))
    return None


def category_scores(signals: Sequence[Signal], cause: int) -> list[list[Any]]:
    """Evidence per category from signals alone: ``1 - prod(1 - w)``, strongest first.

    A signal counts with its full weight when it blames the causal step and
    with half of it when it blames another step. Used with a finding, where the
    category is settled and the rest are concerns.
    """
    miss: dict[str, float] = {}
    for g in signals:
        if g.category and g.kind not in PRIOR_KINDS:
            w = g.weight if g.cause == cause else g.weight / 2
            miss[g.category] = miss.get(g.category, 1.0) * (1.0 - w)
    return sorted(([c, round(1.0 - m, 3)] for c, m in miss.items()), key=lambda cs: -cs[1])


def _why(model: AttributionModel, f: Mapping[str, float], category: str) -> str:
    """The features that pushed the blamed step and its category, largest first."""
    step = sorted(
        ((k, model.step_weights.get(k, 0.0) * v) for k, v in f.items() if v),
        key=lambda kv: -abs(kv[1]),
    )
    cat = sorted(
        (
            (k, w * f.get(k, 0.0))
            for k, w in model.evidence_weights.get(category, {}).items()
            if f.get(k, 0.0)
        ),
        key=lambda kv: -abs(kv[1]),
    )
    out = "step: " + (", ".join(f"{k} {v:+.2f}" for k, v in step[:4] if v) or "none")
    if category != UNKNOWN:
        out += f"; {category}: " + (", ".join(f"{k} {v:+.2f}" for k, v in cat[:3]) or "prior")
    return out


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
    model: AttributionModel | None = None,
) -> Attribution:
    """Attribute one trace's failure from its steps (and argument provenance).

    A trace that declares success (``declared_outcome``) is not failed, whatever
    its signals say (they stay in the evidence, none chosen). A trace that
    declares nothing is failed only on evidence of weight ``FAILURE_WEIGHT`` or
    more, unless ``assume_failed`` says the run is known to have failed (a
    failed eval trial, a labelled failure corpus). A finding settles step and
    category; otherwise ``model`` (default: the shipped one) gives the likeliest
    step and the best-supported category with its probability, the others in
    ``category_scores``; ``unknown`` only when no category has any evidence.
    """
    if not steps:
        return Attribution(trace_id, False, UNDETERMINED, "none", "", -1, "", -1, "", 0.0)
    signals = all_signals(steps, provenance)
    declared = declared_outcome(steps)
    known_failed = assume_failed or declared == "failure"
    evidence = [g for g in signals if g.kind not in PRIOR_KINDS]
    failed = (declared != "success" or assume_failed) and (
        known_failed or any(g.weight >= FAILURE_WEIGHT for g in evidence)
    )
    service = next((s.service_name for s in steps if s.service_name), "")
    if not failed:
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
    chosen = _decisive(signals)
    if chosen is None and not known_failed:  # failed on evidence: the heaviest one says where
        top = max(g.weight for g in evidence)
        chosen = min((g for g in evidence if g.weight == top), key=lambda g: (g.cause, g.index))
    c = (
        _finding_choice(signals, chosen)
        if chosen is not None
        else _model_choice(steps, signals, evidence, model or load_model())
    )
    blamed, chosen, category = c.blamed, c.chosen, c.category
    cause = walk_back(steps, provenance, blamed)
    agents = {s.agent for s in steps if s.agent and s.speaks}
    mast = multi_agent_category(category)  # the category itself when no cluster applies
    cluster = mast if len(agents) > 1 and mast != category else ""
    kind = chosen.kind if chosen is not None else ""
    outcome = _OUTCOME_KINDS.get(kind) or (
        "environment_caused" if category == "environment_caused" else "failure"
    )
    return Attribution(
        trace_id=trace_id,
        failed=True,
        category=category,
        outcome=outcome,
        surfaced_span_id=steps[c.surfaced].span_id,
        surfaced_index=c.surfaced,
        causal_span_id=steps[cause].span_id,
        causal_index=cause,
        agent=_speaker(steps, cause),
        confidence=round(min(0.99, float(c.confidence)), 3),
        evidence=[_evidence(steps, g, chosen) for g in signals] + c.extra,
        category_scores=c.scores,
        cluster=cluster,
        step_confidence=round(min(0.99, float(c.step_confidence)), 3),
        service_name=service,
    )


@dataclass
class _Choice:
    """Where the failure is placed, and why (one of the two ways of ``attribute_steps``)."""

    blamed: int
    surfaced: int
    chosen: Signal | None
    category: str
    confidence: float
    scores: list[Any]
    step_confidence: float
    extra: list[dict[str, Any]] = field(default_factory=list)


def _finding_choice(signals: Sequence[Signal], chosen: Signal) -> _Choice:
    """A decisive signal names the causal step and the best-supported category."""
    scores = category_scores(signals, chosen.cause)
    return _Choice(
        chosen.cause, chosen.index, chosen, scores[0][0], scores[0][1], scores, chosen.weight
    )


def _model_choice(
    steps: Sequence[Step],
    signals: Sequence[Signal],
    evidence: Sequence[Signal],
    model: AttributionModel,
) -> _Choice:
    """The learned model places the cause; its step is a ``model`` evidence entry."""
    feats = step_features(steps, signals, PRIOR_KINDS)
    pred = model.predict(feats)
    blamed = pred.step
    # no evidence of a failure anywhere: the model's cues (facts, claims, roles) are
    # weaker than the location prior (the first action, or the first contribution)
    prior = None if evidence else next((g for g in signals if g.kind in PRIOR_KINDS), None)
    if prior is not None:
        blamed = prior.cause
    step_confidence = pred.step_probs[blamed]
    scores: list[Any] = []
    category, confidence = UNKNOWN, 0.0
    if pred.category_probs:
        category, confidence = pred.category_probs[0]
        scores = pred.category_probs
        if confidence < MIN_CATEGORY_PROB and not has_evidence([feats[blamed]], category):
            category = UNKNOWN  # its evidence is at other, less likely steps
    at = [g for g in evidence if g.cause == blamed]
    chosen = max(at, key=lambda g: (g.weight, -g.index)) if at else prior
    surfaced = chosen.index if chosen is not None else blamed
    entry = {
        "kind": "model",
        "index": blamed,
        "cause_index": blamed,
        "span_id": steps[blamed].span_id,
        "category": category if category != UNKNOWN else "",
        "weight": round(step_confidence, 3),
        "detail": f"step probability {step_confidence:.2f}; "
        + _why(model, feats[blamed], category),
        "chosen": chosen is None,
    }
    return _Choice(blamed, surfaced, chosen, category, confidence, scores, step_confidence, [entry])


def attribution_features(
    steps: Sequence[Step], provenance: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, float]]:
    """The model's features of every step of a trace (what ``fit_model`` learns from)."""
    return step_features(steps, all_signals(steps, provenance), PRIOR_KINDS)


def load_for_attribution(
    store: Any, trace_id: str, *, project: str = "default", provenance: bool = True
) -> tuple[list[Step], list[dict[str, Any]]]:
    """A stored trace's steps (labels dropped, see ``LABEL_PREFIXES``) and argument provenance."""
    from flywheel.ingest import read_provenance

    from ._steps import load_trace

    steps = load_trace(store, trace_id, project)
    prov: list[dict[str, Any]] = []
    if provenance and any(
        s.kind in ("tool", "memory_write") and s.arguments.strip() not in ("", "{}") for s in steps
    ):
        prov = read_provenance(store, trace_id, project=project)
    return steps, prov


def attribute_trace(
    store: Any,
    trace_id: str,
    *,
    project: str = "default",
    provenance: bool = True,
    assume_failed: bool = False,
    model: AttributionModel | None = None,
) -> Attribution:
    """Attribute a stored trace (labels are dropped on load; see ``LABEL_PREFIXES``)."""
    steps, prov = load_for_attribution(store, trace_id, project=project, provenance=provenance)
    return attribute_steps(steps, prov, trace_id=trace_id, assume_failed=assume_failed, model=model)
