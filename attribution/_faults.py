"""Scoring against the harness's injected faults (evaluation only).

The reference agent records each injected fault on the model-turn span that
carries it (``flywheel.sim.fault``, ``flywheel.sim.component``). These are
labels: the attributor's loader drops them, and only this module reads them,
to score category and root-cause-span accuracy per fault type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flywheel import Store

from ._attributor import Attribution, attribute_trace
from ._taxonomy import HAZARD_CATEGORY


@dataclass
class InjectedFault:
    """One labelled span: the fault kinds injected there, in step (start) order."""

    span_id: str
    kinds: list[str]
    start_ns: int


def read_faults(store: Store, trace_id: str, project: str = "default") -> list[InjectedFault]:
    """The trace's fault-labelled spans, earliest first."""
    rows = store.query(
        "SELECT SpanId AS span_id, SpanAttributes['flywheel.sim.fault'] AS f, Timestamp AS ts "
        "FROM {table:Identifier} WHERE TraceId = {t:String} AND ProjectId = {p:String} "
        "AND f != '' ORDER BY ts, span_id",
        {"table": store.otel_table, "t": trace_id, "p": project},
    )
    return [
        InjectedFault(r["span_id"], [k for k in r["f"].split(",") if k], int(r["ts"])) for r in rows
    ]


def score_faults(
    store: Store,
    trace_ids: Sequence[str],
    *,
    project: str = "default",
    single_fault_only: bool = True,
) -> dict[str, Any]:
    """Per fault type: category accuracy and root-cause-span accuracy.

    A trial counts under a fault type when its first labelled span carries
    exactly that one kind (``single_fault_only``: and no other span is
    labelled), so the expected answer is unambiguous. The category is right
    when it equals ``HAZARD_CATEGORY[kind]``; the span is right when the
    causal span is the labelled span. n = 0 for a type: its accuracies are None.
    """
    per: dict[str, dict[str, int]] = {}
    details: list[dict[str, Any]] = []
    for tid in trace_ids:
        faults = read_faults(store, tid, project)
        if not faults or len(faults[0].kinds) != 1 or (single_fault_only and len(faults) > 1):
            continue
        kind = faults[0].kinds[0]
        a: Attribution = attribute_trace(store, tid, project=project, assume_failed=True)
        ok_cat = a.category == HAZARD_CATEGORY.get(kind)
        ok_span = a.causal_span_id == faults[0].span_id
        c = per.setdefault(kind, {"n": 0, "category": 0, "span": 0, "both": 0})
        c["n"] += 1
        c["category"] += ok_cat
        c["span"] += ok_span
        c["both"] += ok_cat and ok_span
        details.append(
            {
                "trace_id": tid,
                "fault": kind,
                "category": a.category,
                "expected": HAZARD_CATEGORY.get(kind),
                "span_ok": ok_span,
            }
        )
    table = {
        k: {
            "n": v["n"],
            "category_accuracy": v["category"] / v["n"] if v["n"] else None,
            "span_accuracy": v["span"] / v["n"] if v["n"] else None,
            "both_accuracy": v["both"] / v["n"] if v["n"] else None,
        }
        for k, v in sorted(per.items())
    }
    return {"per_fault": table, "trials": details}
