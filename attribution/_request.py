"""The request a run serves, and how far the step that takes it on drifts from it.

The playbook's *understanding* failure is an agent optimising for a goal other
than the one stated. The cheapest evidence of it sits where the task is taken
on: the first agent to speak restates what it will do, and a restatement that
keeps almost none of the request's distinctive terms is working on another
problem. Terms are words of three or more letters and numbers (lower-cased,
common function words dropped); nothing here knows a framework or a language
beyond those stop words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._steps import Signal, Step

_TERM = re.compile(r"[A-Za-z][A-Za-z'-]{2,}|\d+(?:\.\d+)?")
#: Words too common to be a term of a request.
_STOP = frozenset(
    "the and for are was were with from that this which what who whom whose how many much "
    "when where does did its their there then than into your you give answer please can "
    "could would should will have has had been being not but any all each our they them "
    "also only more most some such use using used".split()
)
#: A step taking the task that drops at least this share of the request's terms is working
#: on another problem (it keeps fewer than a quarter of them): a finding, not a weak cue.
DRIFT_FINDING = 0.75
#: A request with fewer distinct terms is too short for a share to mean much (one word
#: would be a sixth of it or more): a paraphrase of a short question can drop them all.
MIN_TERMS = 6
#: The finding's weight: strong enough to decide the step (the attributor's 0.7).
DRIFT_WEIGHT = 0.75


def request_of(steps: Sequence[Step]) -> str:
    """The request the run serves: ``flywheel.run.request`` on a span, else a root agent's input."""
    for s in steps:
        req = s.attributes.get("flywheel.run.request", "")
        if req.strip():
            return req
    for s in steps:
        if s.kind == "agent" and not s.parent_span_id and s.input.strip():
            return s.input
    return ""


def terms(text: str) -> set[str]:
    """The distinctive terms of ``text``: words of 3+ letters and numbers, lower-cased."""
    return {t.lower() for t in _TERM.findall(text)} - _STOP


def taking_step(steps: Sequence[Step]) -> Step | None:
    """The step that takes the task on: the first one whose speaker says something."""
    return next((s for s in steps if s.speaks and s.said.strip()), None)


def task_drift(request: str, step: Step) -> float:
    """The share of the request's terms that the step taking the task does not mention.

    0 without a request (nothing to compare) or when the step is the request itself.
    """
    want = terms(request)
    if not want:
        return 0.0
    said = terms(step.said) | terms(step.input)
    return 1.0 - len(want & said) / len(want)


def drift_signals(steps: Sequence[Step]) -> list[Signal]:
    """``task_drift`` (understanding): the step taking the task keeps under a quarter of its terms.

    Only a request of ``MIN_TERMS`` or more distinct terms is compared; the steps after the
    one taking the task are not (working steps use their own words).
    """
    step = taking_step(steps)
    request = request_of(steps)
    if step is None or len(terms(request)) < MIN_TERMS:
        return []
    drift = task_drift(request, step)
    if drift < DRIFT_FINDING:
        return []
    return [
        Signal(
            "task_drift",
            step.index,
            "understanding",
            DRIFT_WEIGHT,
            f"the step taking the task on mentions {1 - drift:.0%} of the request's terms",
        )
    ]
