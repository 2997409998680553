"""Token usage and cost of a trace, each model call counted once.

Instrumentation libraries put usage in two places: on the span of each model
call, and again on an ancestor that sums the calls beneath it. Adding both
counts every token twice. Per convention:

- OTel GenAI: ``gen_ai.usage.*`` on inference spans (``chat``,
  ``text_completion``, ``generate_content``, ``embeddings``) is one call's;
  the same keys on ``invoke_agent`` or a workflow root (raw SDK programs
  often record the episode there) are a sum.
- pydantic-ai: ``gen_ai.usage.*`` on ``chat`` spans is one call's;
  ``gen_ai.aggregated_usage.*`` on the agent run is a sum.
- OpenInference: ``llm.token_count.*`` on LLM / EMBEDDING spans is one
  call's; on AGENT / CHAIN spans (smolagents' run) it is a sum.
- OpenLLMetry: ``gen_ai.usage.*`` / ``llm.usage.*`` on spans with
  ``llm.request.type`` is one call's; on workflow / task spans a sum.
- Langfuse: ``usage_details`` / ``cost_details`` of a generation is one
  call's; of a span, agent or chain a sum.

The rule, one for every convention: the steps the normaliser classifies as
``llm`` (model calls) carry a call's own usage and are summed. Usage on any
other step (agent, chain, workflow, tool, other) is taken to be an aggregate
of the calls beneath it; it counts only when no model call of the trace
reports that quantity (a client that records episode totals alone), and then
the largest aggregate is used (a root total covers the nested ones). Each
quantity (input, output, total tokens, cost) falls back on its own, so calls
that report tokens and a root that reports cost give both.

Known limit: two stacked instrumentors that both record one call as a model
call (a framework's chat span with the SDK's span inside it) are both summed.

The trace list computes the same rule in SQL (``trace_summaries``: call sums
in ``input_tokens`` ..., aggregate maxima in ``agg_input_tokens`` ..., and
``_read.USAGE_SQL``); tests hold the two equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

#: Step kind whose usage is a model call's own.
CALL_KIND = "llm"
USAGE_FIELDS = ("input_tokens", "output_tokens", "total_tokens", "cost")


@dataclass(frozen=True)
class Usage:
    """Usage of a trace with every model call counted once."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost: float = 0.0


def trace_usage(steps: Iterable[Any]) -> Usage:
    """The trace's usage under the rule above.

    ``steps`` are agent steps (``Step`` models or ``agent_steps`` rows): each
    has ``kind`` and the fields ``input_tokens``, ``output_tokens``,
    ``total_tokens`` and ``cost``.
    """
    calls = dict.fromkeys(USAGE_FIELDS, 0)
    aggregates = dict.fromkeys(USAGE_FIELDS, 0)
    for step in steps:
        row = step if isinstance(step, Mapping) else None
        own = (row.get("kind") if row is not None else step.kind) == CALL_KIND
        for name in USAGE_FIELDS:
            value = (row.get(name, 0) if row is not None else getattr(step, name)) or 0
            if own:
                calls[name] += value
            elif value > aggregates[name]:
                aggregates[name] = value
    return _counted_once(calls, aggregates)


def table_usage(steps: pa.Table) -> Usage:
    """``trace_usage`` of the steps in an Arrow table (columns ``kind`` and the usage fields).

    The same rule, computed column by column (a 50,000-span trace in a few ms).
    """
    if not steps.num_rows:
        return Usage()
    own = pc.equal(steps["kind"], CALL_KIND)
    other = pc.invert(own)
    calls = {n: pc.sum(pc.filter(steps[n], own)).as_py() or 0 for n in USAGE_FIELDS}
    aggregates = {n: pc.max(pc.filter(steps[n], other)).as_py() or 0 for n in USAGE_FIELDS}
    return _counted_once(calls, aggregates)


def _counted_once(calls: Mapping[str, Any], aggregates: Mapping[str, Any]) -> Usage:
    """The rule: model calls' sums, else the largest aggregate, per quantity."""
    got = {n: calls[n] if calls[n] > 0 else aggregates[n] for n in USAGE_FIELDS}
    return Usage(
        input_tokens=int(got["input_tokens"]),
        output_tokens=int(got["output_tokens"]),
        total_tokens=int(got["total_tokens"]),
        cost=float(got["cost"]),
    )
