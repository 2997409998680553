"""One call from states (and a trace) to a side-effect report: what a harness uses.

``analyze(s0, sT, ...)`` diffs, classifies, reconciles with the tool calls,
checks the end state against the scope's expectations (omissions, wrong
values, extras) and builds the gate input. Given the snapshots taken after
each call (``step_snapshots``), it also finds changes made and undone within
the run (a message sent and deleted again counts as sent) and attributes
every delta to its call exactly; without them, attribution is inferred from
call outcomes, tool semantics and argument values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flywheel.tools import ToolObservation
from flywheel.values import value_fingerprint

from ._classify import Classification, classify, hidden_creations, transient_deltas
from ._diff import Delta, diff
from ._findings import Finding, count_gaps, find_gaps
from ._gate import GateInput, gate_input
from ._policy import Profile, Scope, default_profile
from ._provenance import Observation
from ._reconcile import Reconciliation, ToolCall, communicates, reconcile
from ._records import Snapshot


@dataclass
class SideEffectReport:
    """Everything side-effect analysis found about one run."""

    deltas: list[Delta]
    transient: list[Delta]
    classification: Classification
    reconciliation: Reconciliation | None
    gate: GateInput
    s0_digest: str
    st_digest: str
    profile: Profile
    scope: Scope | None
    findings: list[Finding] = field(default_factory=list)
    observed_tools: list[ToolObservation] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (decisions, findings, reconciliation, gate input, digests)."""
        return {
            "s0_digest": self.s0_digest,
            "st_digest": self.st_digest,
            "profile": self.profile.name,
            "scope": self.scope.source if self.scope else None,
            "findings": [f.to_json() for f in self.findings],
            "finding_counts": count_gaps(self.findings),
            **self.classification.to_json(),
            "reconciliation": self.reconciliation.to_json() if self.reconciliation else None,
            "observed_tools": [
                {"tool": o.tool, "calls": o.count, "evidence": o.evidence}
                for o in self.observed_tools
            ],
            "gate": {**self.gate.model_dump(mode="json"), "blocking": self.gate.blocking},
        }


def _sent(
    calls: Sequence[ToolCall] | None, steps: Sequence[Sequence[Delta]] | None
) -> dict[tuple[Any, int | None], str]:
    """Creations made by calls that reach people, keyed as ``classify`` reads them."""
    if calls is None or steps is None:
        return {}
    out: dict[tuple[Any, int | None], str] = {}
    for call, step in zip(calls, steps, strict=True):
        why = communicates(call) if any(d.kind == "created" for d in step) else None
        if why is None:
            continue
        for d in step:
            if d.kind == "created":
                out[(d.rid, d.step)] = why
                out.setdefault((d.rid, None), why)
    return out


def analyze(
    s0: Snapshot,
    st: Snapshot,
    *,
    scope: Scope | None = None,
    profile: Profile | None = None,
    calls: Sequence[ToolCall] | None = None,
    step_snapshots: Sequence[Snapshot] | None = None,
    observations: Sequence[Observation] = (),
    fingerprint_fn: Callable[[str], int] = value_fingerprint,
    run_id: str | None = None,
) -> SideEffectReport:
    """Diff, classify, reconcile and summarise one run.

    Args:
        s0: state before the run.
        st: state after the run.
        scope: the task's scope (None: nothing is in scope).
        profile: the environment's profile (None: ``default_profile()``).
        calls: the run's tool calls in order (None: no reconciliation).
        step_snapshots: the state after each call (same length as ``calls``).
        observations: provenance observations for information movement.
        fingerprint_fn: the function the observations' fingerprints used.
        run_id: recorded on gate events.
    """
    profile = profile or default_profile()
    deltas = diff(s0, st)
    steps: list[list[Delta]] | None = None
    transient: list[Delta] = []
    if step_snapshots is not None:
        if calls is None or len(step_snapshots) != len(calls):
            raise ValueError("step_snapshots needs calls of the same length")
        prev, steps = s0, []
        for i, snap in enumerate(step_snapshots):
            steps.append(diff(prev, snap, step=i))
            prev = snap
        transient = transient_deltas(deltas, steps)
    cls = classify(
        deltas,
        s0,
        scope,
        profile,
        transient=transient,
        observations=observations,
        fingerprint_fn=fingerprint_fn,
        hidden=hidden_creations(transient),
        sent=_sent(calls, steps),
    )
    rec = None
    if calls is not None:
        rec = reconcile(
            calls,
            [d.delta for d in cls.decisions],
            step_deltas=steps,
            profile=profile,
            classification=cls,
            states=(s0, st),
        )
    return SideEffectReport(
        deltas=deltas,
        transient=transient,
        classification=cls,
        reconciliation=rec,
        gate=gate_input(cls, run_id=run_id),
        s0_digest=s0.digest(),
        st_digest=st.digest(),
        profile=profile,
        scope=scope,
        findings=find_gaps(cls, calls),
        observed_tools=observed_tools(calls, rec),
    )


def observed_tools(
    calls: Sequence[ToolCall] | None, reconciliation: Reconciliation | None
) -> list[ToolObservation]:
    """Tools whose calls changed the recorded state in this run (the catalog's *observed* source).

    A tool is observed to write when a state change was attributed to one of
    its calls, by replay of step snapshots or by the call's arguments. Calls
    that changed nothing say nothing (a write may fail or find nothing to do),
    so only changes are recorded.
    """
    if not calls or reconciliation is None:
        return []
    evidence: dict[str, str] = {}
    for a in reconciliation.attributions:
        for i in a.call_indexes:
            if 0 <= i < len(calls):
                evidence.setdefault(calls[i].name, f"{a.kind} {a.delta_ref} by {a.method}")
    counts: dict[str, int] = {}
    for c in calls:
        counts[c.name] = counts.get(c.name, 0) + 1
    return [ToolObservation(n, True, e, counts[n]) for n, e in sorted(evidence.items())]

