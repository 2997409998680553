"""The failure taxonomy: where an agent run went wrong.

Single-agent categories are the playbook's decomposition ("Where did it
actually go wrong?"); the multi-agent extension is MAST's three clusters.
Budget exhaustion and environment-caused failures are separate *outcomes*:
they are not a component of the agent to fix (the first is a safety bound
doing its job, the second is the tool stack, "tool used does not mean truth
acquired").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

#: Single-agent components, in pipeline order.
SINGLE_AGENT: tuple[str, ...] = (
    "understanding",  # optimised for a goal other than the stated one
    "planning",  # right goal, a route that cannot reach it
    "perception",  # could not read (or made up) the state it acted on; grounding
    "tool_selection",  # wrong instrument
    "argument_generation",  # right tool, wrong values
    "execution",  # a correct call the world refused (permissions, rate limits, races)
    "memory",  # a constraint stated earlier was gone later
    "recovery",  # something failed and the agent did not notice / repeated it
    "verification",  # claimed completion without checking
)

#: Multi-agent clusters (MAST).
MULTI_AGENT: tuple[str, ...] = (
    "specification",  # system design / role and task specification issues
    "inter_agent_misalignment",  # agents talking past each other, withheld or ignored input
    "task_verification",  # premature termination, no or wrong verification of the result
)

#: Outcomes that are not a component failure of the agent.
OUTCOMES: tuple[str, ...] = ("budget_exhaustion", "environment_caused")

#: No failure found: the trace looks healthy (or declares success), or the failure left no trace.
UNDETERMINED = "undetermined"
#: A failure, but no category has enough evidence of its own: see the runner-up scores.
UNKNOWN = "unknown"

CATEGORIES: tuple[str, ...] = (*SINGLE_AGENT, *MULTI_AGENT, *OUTCOMES, UNKNOWN, UNDETERMINED)

DESCRIPTIONS: dict[str, str] = {
    "understanding": "optimised for a goal other than the one stated",
    "planning": "right goal, a route that cannot reach it",
    "perception": "could not read, or invented, the state it acted on (grounding)",
    "tool_selection": "wrong instrument for the job",
    "argument_generation": "right tool, wrong values passed to it",
    "execution": "the call was correct and the world refused it",
    "memory": "a constraint stated earlier was gone later",
    "recovery": "something failed and the agent did not notice or repeated it unchanged",
    "verification": "claimed completion without checking",
    "specification": "the task or roles were specified so that the system could not succeed",
    "inter_agent_misalignment": "an agent ignored, contradicted or withheld another's input",
    "task_verification": "the team ended or accepted a result without real verification",
    "budget_exhaustion": "a call, token, money, wall-clock or depth budget was hit",
    "environment_caused": "the tool stack failed (outage, timeout, bad data); not the agent",
    UNKNOWN: "a failure whose category the evidence does not settle (see the runner-ups)",
    UNDETERMINED: "no failure found",
}

#: Single-agent category -> the multi-agent cluster it belongs to when several agents speak.
MULTI_AGENT_OF: dict[str, str] = {
    "understanding": "specification",
    "planning": "specification",
    "verification": "task_verification",
    "recovery": "inter_agent_misalignment",
}

#: The reference agent's injected hazards (ablation harness, ``flywheel.sim.fault``)
#: -> the category an attributor should name. For scoring only.
HAZARD_CATEGORY: dict[str, str] = {
    "wrong_tool": "tool_selection",
    "forget_constraint": "memory",
    "wrong_argument": "argument_generation",
    "misread_result": "perception",
    "skip_verification": "verification",
    "obey_injection": "perception",
}


def multi_agent_category(category: str) -> str:
    """The MAST cluster for a single-agent category (itself when none applies)."""
    return MULTI_AGENT_OF.get(category, category)


def is_outcome(category: str) -> bool:
    """Whether ``category`` is an outcome rather than a component of the agent."""
    return category in OUTCOMES


#: Share of a batch's answers one category may take before the batch is reported as
#: near-constant (an attributor that names one category for everything tells nothing).
NEAR_CONSTANT_SHARE = 0.6


def category_distribution(
    categories: Iterable[str], *, max_share: float = NEAR_CONSTANT_SHARE
) -> dict[str, Any]:
    """How a batch's answers spread over the categories, and a warning when one dominates.

    ``{"total", "counts": [[category, n], ...] most frequent first, "top", "top_share",
    "warning"}``; ``warning`` is '' unless the most frequent answer (``unknown``
    included: abstaining on everything is near-constant too) is more than
    ``max_share`` of two or more answers.
    """
    counts = Counter(categories)
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    top, n = ranked[0] if ranked else ("", 0)
    share = n / total if total else 0.0
    warning = (
        f"near-constant output: {top} is {n} of {total} answers ({100 * share:.0f} % > "
        f"{100 * max_share:.0f} %)"
        if total >= 2 and share > max_share
        else ""
    )
    return {
        "total": total,
        "counts": [[c, k] for c, k in ranked],
        "top": top,
        "top_share": round(share, 4),
        "warning": warning,
    }
