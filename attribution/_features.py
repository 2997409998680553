"""Evidence features of each step: what the learned attribution model weighs.

Signals (``_signals``, ``_grounding``) are discrete findings with a hand-set
weight. Features are their graded, per-step reading plus a few cues the
playbook's definitions of the categories name ("Where did it actually go
wrong?"), each defined on generic step fields only (what an agent said in its
own words, what it was shown, what its call returned; the ``flywheel.*``
attributes an importer adapter sets). Nothing here knows a framework's or a
benchmark's phrases; nothing reads a label.

Two kinds of feature:

- **location** features (``STEP_FEATURES``) say how likely a step is to be
  where the failure started: structure (the first step that acted, the step
  that took the task, the answer, relative position) and evidence strength;
- **category** features (``CATEGORY_EVIDENCE``) are positive evidence for
  one category each, after the playbook:

  perception      a fact stated in own words that nothing seen before holds
                  (``unobserved_facts``), the agent saying it assumes or makes up
                  the state it works on (``assumed_state``), a statement of state
                  without acting (``states_without_acting``), and grounding signals;
  argument_generation  a step that passed values to a call (``acts``), a call it
                  made that failed on its own fault or returned nothing, placeholders;
  execution       a correct call the world refused (refused or failed calls);
  environment_caused  timeouts, 5xx, rate limits;
  recovery        a step that answered a failure by failing again
                  (``failed_again``), repeated calls, a reviewer's "in a loop";
  verification    a conclusion or check claimed in own words without acting
                  (``unchecked_conclusion``), the run's answer, a reviewer that
                  accepted the result (``review_accepts``), claims after failures;
  planning        a step that sets or replaces the plan (``sets_plan``), an
                  instruction to another agent (``instructs``), a reviewer's "no progress";
  understanding   the step that took the task restating a different one
                  (``task_drift``: share of the request's terms it drops); the
                  first plan (``frames_task``, a role: it weighs understanding
                  but does not make it nameable -- the plan is where the team's
                  goal is set, so where a goal other than the stated one enters);
  memory, tool_selection  their signals (plan departures) only.

Every feature is a float in [0, 1] (counts are squashed), 0 meaning "no
evidence", so a category whose features are all 0 at every step has no
evidence at all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from ._request import request_of, task_drift, terms
from ._signals import _failed
from ._steps import Signal, Step, affirms

#: Location features, in the order of the step model's weights.
STEP_FEATURES: tuple[str, ...] = (
    "speaks",
    "acts",
    "first_action",
    "first_contribution",
    "takes_task",
    "answer",
    "position",
    "evidence",
    "unobserved_facts",
    "unobserved_arguments",
    "assumed_state",
    "unchecked_conclusion",
    "after_failure",
    "call_failed",
    "task_drift",
    "instructs",
    "sets_plan",
    "review_accepts",
)

#: Category -> its positive evidence (features and ``signal:<category>``, the combined
#: weight of that category's signals blaming the step).
CATEGORY_EVIDENCE: dict[str, tuple[str, ...]] = {
    "perception": (
        "signal:perception",
        "unobserved_facts",
        "unobserved_arguments",
        "assumed_state",
        "states_without_acting",
    ),
    "argument_generation": (
        "signal:argument_generation",
        "acts",
        "call_failed",
        "unobserved_arguments",
    ),
    "execution": ("signal:execution",),
    "environment_caused": ("signal:environment_caused",),
    "recovery": ("signal:recovery", "failed_again"),
    "verification": (
        "signal:verification",
        "unchecked_conclusion",
        "answer",
        "review_accepts",
    ),
    "planning": ("signal:planning", "sets_plan", "instructs"),
    "understanding": ("signal:understanding", "task_drift", "frames_task"),
    "memory": ("signal:memory",),
    "tool_selection": ("signal:tool_selection",),
}

#: Features that say what role a step plays, not that anything went wrong: they weigh a
#: category but do not make it nameable (a category needs other evidence in the trace).
ROLE_FEATURES: frozenset[str] = frozenset({"acts", "answer", "frames_task"})

#: The categories the model chooses among (budget exhaustion is decided by its finding).
MODEL_CATEGORIES: tuple[str, ...] = tuple(CATEGORY_EVIDENCE)

#: A figure of two or more digits, or a capitalised word that does not open a sentence
#: (a name): the facts a sentence states.
_FACT = re.compile(
    r"(?<![\w.])\d[\d,.]*\d(?![\w])"
    r"|(?<![.!?:\n#*>-])(?<![.!?:\n#*>-] )(?<=[\w,;)] )[A-Z][A-Za-z]{2,}\b"
)
#: An agent saying the state it works on is assumed, simulated or made up (English).
_ASSUMED = re.compile(
    r"\b(?:assum(?:e|es|ed|ing|ption)|simulat(?:e|es|ed|ing|ion)|hypothetical(?:ly)?|"
    r"mock(?:ed)?|dummy|placeholder|fictional|made[- ]up|let's say|suppose|"
    r"(?:sample|example|illustrative|fake) (?:data|values?|numbers?|dataset)|"
    r"for (?:demonstration|illustration)(?: purposes)?)\b",
    re.IGNORECASE,
)
#: A claim that something is concluded, checked or correct, in own words (English).
_CONCLUSION = re.compile(
    r"\b(?:verified|confirm(?:s|ed)?|correct(?:ly)?|accurate(?:ly)?|i agree|agreed|"
    r"final answer|the answer is|in conclusion|conclude[sd]?|"
    r"task (?:is )?(?:complete|done|solved))\b",
    re.IGNORECASE,
)
#: A figure of two or more digits (a value passed to a call), and a fenced code block.
_FIGURE = re.compile(r"(?<![\w.])\d[\d,]*\.?\d+(?![\w])")
_CODE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def _squash(count: int) -> float:
    """A count as a float in [0, 1): 0 -> 0, 1 -> 0.5, 3 -> 0.75."""
    return count / (count + 1.0)


def _facts(text: str) -> set[str]:
    return {m.group().replace(",", "").lower() for m in _FACT.finditer(text)}


def signal_strength(signals: Sequence[Signal], index: int, category: str) -> float:
    """``1 - prod(1 - w)`` over the signals of ``category`` that blame step ``index``."""
    miss = 1.0
    for g in signals:
        if g.category == category and g.cause == index:
            miss *= 1.0 - g.weight
    return 1.0 - miss


def step_features(
    steps: Sequence[Step], signals: Sequence[Signal], priors: frozenset[str] = frozenset()
) -> list[dict[str, float]]:
    """Every feature (location and category) of every step, in step order.

    ``signals`` are the trace's signals; those whose kind is in ``priors``
    (location priors, not evidence) are left out of the evidence features.
    """
    evidence = [g for g in signals if g.kind not in priors and g.category]
    n = len(steps)
    request = request_of(steps)
    first_act = next((s.index for s in steps if s.speaks and s.acts), None)
    first_speaker = next((s.index for s in steps if s.speaks and s.said.strip()), None)
    first_contrib = next(
        (s.index for s in steps if s.speaks and s.said.strip() and s.index != first_speaker), None
    )
    first_plan = next(
        (s.index for s in steps if s.attributes.get("flywheel.message.plan") == "true"), None
    )
    answer = next((s.index for s in steps if s.ends_run and s.own_words.strip()), None)
    if answer is None:
        answer = next((s.index for s in reversed(steps) if s.speaks and s.own_words.strip()), None)
    seen: set[str] = _facts(request) | {t for t in terms(request)}
    last_failed = False  # the latest observation failed and no agent has spoken since
    out: list[dict[str, float]] = []
    for s in steps:
        i = s.index
        seen |= _facts(s.input) | terms(s.input)
        own = s.own_words if s.speaks else ""
        result = _result_of(steps, i) if s.speaks and s.acts else None
        call_failed = result is not None and bool(_failed(result))
        new = (_facts(own) - seen) if (i > 0 or s.input) else set()
        passed = _figures(_passed_values(s)) - seen if s.speaks or s.kind == "tool" else set()
        f: dict[str, float] = {
            "speaks": float(s.speaks),
            "acts": float(s.speaks and s.acts),
            "first_action": float(i == first_act),
            "first_contribution": float(i == first_contrib),
            "takes_task": float(i == first_speaker),
            "answer": float(i == answer),
            "position": i / (n - 1) if n > 1 else 0.0,
            "unobserved_facts": _squash(len(new)),
            "unobserved_arguments": _squash(len(passed)),
            "assumed_state": float(bool(own) and affirms(_ASSUMED, own)),
            "unchecked_conclusion": float(bool(own) and not s.acts and affirms(_CONCLUSION, own)),
            "after_failure": float(s.speaks and last_failed),
            "call_failed": float(call_failed),
            "failed_again": float(s.speaks and last_failed and call_failed),
            "task_drift": task_drift(request, s) if i == first_speaker else 0.0,
            "instructs": float(s.speaks and bool(s.attributes.get("flywheel.message.to"))),
            "sets_plan": float(s.attributes.get("flywheel.message.plan") == "true"),
            "frames_task": float(i == first_plan),
            "review_accepts": float(s.attributes.get("flywheel.review.satisfied") == "true"),
        }
        f["states_without_acting"] = f["unobserved_facts"] * float(s.speaks and not s.acts)
        strengths = {}
        for category, names in CATEGORY_EVIDENCE.items():
            key = f"signal:{category}"
            if key in names:
                strengths[key] = signal_strength(evidence, i, category)
        f.update(strengths)
        f["evidence"] = 1.0 - math.prod(1.0 - v for v in strengths.values())
        out.append(f)
        if s.speaks:
            last_failed = False
        if s.is_observation:
            last_failed = bool(_failed(s))
        seen |= _facts(s.said or s.text) | _facts(s.arguments)
        seen |= terms(s.said or s.text)
    return out


def _passed_values(s: Step) -> str:
    """What a step passes to a call: a tool call's arguments, or the code it wrote to be run."""
    if s.kind == "tool":
        return s.arguments
    return "\n".join(_CODE.findall(s.said))


def _figures(text: str) -> set[str]:
    return {m.group().replace(",", "") for m in _FIGURE.finditer(text)}


def _result_of(steps: Sequence[Step], index: int) -> Step | None:
    """The observation that answered step ``index``'s action (before the next agent speaks)."""
    for t in steps[index + 1 :]:
        if t.is_observation:
            return t
        if t.speaks:
            return None
    return None
