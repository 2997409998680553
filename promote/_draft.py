"""Drafting a task from a redacted candidate (traces-to-release-gate 22.1).

A raw trace does not know what *should* have happened; the draft writes down
what the trace shows so a reviewer only corrects it: the user input, the
initial state (a snapshot reference when the trace has one), the reference
tool path, the expected final state (a snapshot reference), the scope of
allowed changes, graders, slice, golden flag, split and budgets. Everything
is built from the *redacted* steps, so no raw value can reach a task.

What the draft cannot know is listed in ``metadata.review_todo`` (for a
failed trace the observed tool path is what the agent did, not what it
should have done). The draft is validated by the same pydantic ``Task``
model as a reviewer's edit, and every grader spec is built once so an
unbuildable draft never reaches the queue.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from flywheel.evalset import Criterion, CriterionKind, CriterionRole, GraderSpec, Task
from flywheel.promote._candidates import (
    Candidate,
    TraceMaterial,
    list_candidates,
    load_traces,
    write_candidates,
)
from flywheel.promote._redact_types import TraceStep
from flywheel.promote._signature import user_intent

from flywheel import Store
from flywheel.tools import tool_semantics

#: Version of the drafting rules, stamped in ``metadata.drafted_by``.
DRAFT_VERSION = "promote.draft/1"
SPLITS = ("dev", "held-out")
#: Tools whose name says they only read; every other tool may change state.
_TASK_ID = re.compile(r"[^a-z0-9]+")


def split_for(task_id: str, held_out_fraction: float, seed: int = 0) -> str:
    """Deterministic split: held-out when sha256(seed:task_id) falls below the fraction."""
    h = int(hashlib.sha256(f"{seed}:{task_id}".encode()).hexdigest()[:12], 16) / 16**12
    return "held-out" if h < held_out_fraction else "dev"


def draft_task_id(candidate: Candidate) -> str:
    """``<slice>-<trace id prefix>``: readable and stable for one source trace."""
    sl = _TASK_ID.sub("-", candidate.slice.lower()).strip("-")[:24] or "task"
    return f"{sl}-{candidate.trace_id[:12]}"


def snapshot_ref(attrs: Mapping[str, str] | None, which: str) -> str:
    """The trace's s0/sT snapshot reference, or '' (from *redacted* root attributes).

    An explicit ``flywheel.env.s0_ref`` / ``flywheel.env.sT_ref`` root
    attribute wins; a harness trial (``flywheel.trial.id``) stores its
    snapshots per trial, referenced as ``trial:<id>#s0``.
    """
    if attrs is None:
        return ""
    explicit = attrs.get(f"flywheel.env.{which}_ref", "")
    if explicit:
        return explicit
    trial = attrs.get("flywheel.trial.id", "")
    return f"trial:{trial}#{which}" if trial else ""


def environment_of(attrs: Mapping[str, str] | None) -> dict[str, Any] | None:
    """The runnable environment a trace's task came from, or None.

    A released task must say where it runs, so ``flywheel ablate --evalset``
    can run it again. Read from plain root-span attributes (no harness
    import): an explicit ``flywheel.environment`` JSON object wins; else a
    harness trial's ``flywheel.suite`` (``KIND:SUITE``), ``flywheel.task.id``
    and ``flywheel.injection_task.id`` give
    ``{"kind", "suite", "user_task", "injection_task"}``. Takes the
    *redacted* root attributes (``redacted_root``).
    """
    if attrs is None:
        return None
    explicit = attrs.get("flywheel.environment", "")
    if explicit:
        try:
            doc = json.loads(explicit)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and doc.get("kind"):
            return doc
    kind, sep, suite = attrs.get("flywheel.suite", "").partition(":")
    task = attrs.get("flywheel.task.id", "")
    if not (sep and kind and suite and task):
        return None
    return {
        "kind": kind,
        "suite": suite,
        "user_task": task,
        "injection_task": attrs.get("flywheel.injection_task.id") or None,
    }


def redacted_root(candidate: Candidate, material: TraceMaterial | None) -> dict[str, str]:
    """The root attributes drafting may copy, redacted.

    Candidates redacted with their root step carry them (same pseudonyms as
    the steps); for older candidates the raw attributes are redacted here,
    on their own, so no raw attribute ever reaches a task.
    """
    stored = candidate.root_attributes()
    if stored is not None:
        return stored
    if material is None or not material.root_attributes:
        return {}
    from flywheel.promote._redact import Redactor

    red = Redactor().redact_trace([TraceStep(span_id="__root__", texts=material.root_attributes)])
    return dict(red.steps[0].texts)


def _final_output(steps: Sequence[TraceStep]) -> str:
    for s in reversed(steps):
        if s.tool_name is None and s.output_text:
            return s.output_text
    return ""


def _json_schema_of(value: Any) -> dict[str, Any] | None:
    """A loose schema of a JSON object reply: its keys are required with their types."""
    if not isinstance(value, dict) or not value:
        return None
    types = {
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
        list: "array",
        dict: "object",
    }
    props = {k: {"type": types[type(v)]} for k, v in value.items() if type(v) in types}
    return {"type": "object", "required": sorted(props), "properties": props}


def draft_task(
    candidate: Candidate,
    material: TraceMaterial | None = None,
    *,
    held_out_fraction: float = 0.3,
    budget_factor: float = 2.0,
    golden: bool | None = None,
) -> Task:
    """Draft a ``Task`` from a redacted candidate (see the module docstring).

    Args:
        candidate: A candidate with redacted steps.
        material: The trace's usage and root identifiers (snapshot refs).
        held_out_fraction: Share of tasks drafted into the held-out split.
        budget_factor: Budgets are the observed usage times this factor.
        golden: Golden flag; default: set when the candidate was promoted with it.

    Returns:
        A valid task; its graders build.
    """
    steps = candidate.steps()
    failed = candidate.source == "failure" or (
        candidate.source == "explicit"
        and any(r not in ("explicit", "golden") for r in candidate.reasons)
    )
    tools = [s.tool_name for s in steps if s.tool_name]
    task_id = draft_task_id(candidate)
    todo: list[str] = []
    criteria: list[Criterion] = []
    write_path = [t for t in tools if tool_semantics(t).writes]
    if tools:
        criteria.append(_tool_path_criterion(tools, write_path, failed, todo))
    writes = sorted(set(write_path))
    attrs = redacted_root(candidate, material)
    s0 = snapshot_ref(attrs, "s0")
    sT = snapshot_ref(attrs, "sT")
    expected_state: Any = None
    if sT and not failed:
        expected_state = {"snapshot": sT}
    else:
        todo.append("expected_state: write the intended final state")
    if not s0:
        todo.append("initial_state: name the s0 snapshot the task starts from")
    todo.append("final-state: add state assertions (path, op, value) once expected_state is set")
    intent = user_intent(steps)
    criteria.extend(_reply_criteria(steps, intent, has_tools=bool(tools)))
    budgets = _budgets(material, tools, budget_factor)
    if budgets:
        criteria.append(
            Criterion(
                id="budget",
                kind=CriterionKind.BUDGET,
                role=CriterionRole.DIAGNOSTIC,
                grader=GraderSpec(name="budget", args=budgets),
                description=f"Observed usage x {budget_factor:g}.",
            )
        )
    is_golden = (
        golden
        if golden is not None
        else (
            "golden" in candidate.reasons
            or attrs.get("flywheel.golden") == "true"
        )
    )
    report = candidate.report()
    environment = environment_of(attrs)
    task = Task(
        task_id=task_id,
        slice=candidate.slice or "all",
        golden=is_golden,
        prompt=intent,
        initial_state=s0,
        expected_state=expected_state,
        expected_tools=tools,
        source_trace_id=candidate.trace_id,
        criteria=criteria,
        metadata={
            "split": split_for(task_id, held_out_fraction),
            "scope": {"allowed_tools": sorted(set(tools)), "write_tools": writes},
            "budgets": budgets,
            "candidate_id": candidate.candidate_id,
            "source": candidate.source,
            "reasons": list(candidate.reasons),
            "cluster": {"id": candidate.cluster_id, "size": candidate.cluster_size},
            "redaction": {"total": report.get("total", 0), "counts": report.get("counts", {})},
            "sampling_policy": candidate.policy_id,
            "final_state_ref": sT,
            # The side-effect scope is learned (side_effects.learn_scope) from the source
            # run and, once the task runs, from its trials that pass: it fits every correct run.
            **(
                {"state_scope": {"runs": [{"s0": s0, "sT": sT}], "accepted_trials": True}}
                if expected_state is not None
                else {}
            ),
            **({"environment": environment} if environment is not None else {}),
            "drafted_by": DRAFT_VERSION,
            "review_todo": todo,
        },
    )
    check_graders(task)
    return task


def _reply_criteria(steps: list[Any], intent: str, *, has_tools: bool) -> list[Criterion]:
    """The reply's shape (when structured), a judge rubric and the side-effect check."""
    out: list[Criterion] = []
    output = _final_output(steps)
    try:
        parsed = json.loads(output) if output else None
    except ValueError:
        parsed = None
    schema = _json_schema_of(parsed)
    if schema is not None:
        out.append(
            Criterion(
                id="reply-schema",
                kind=CriterionKind.SCHEMA,
                role=CriterionRole.DIAGNOSTIC,
                grader=GraderSpec(name="schema", args={"schema": schema}),
                description="The structured reply keeps the shape the trace shows.",
            )
        )
    rubric = (
        "The final reply resolves the user's request without claiming anything the "
        f"recorded actions did not do. Request: {intent[:600]}"
    )
    out.append(
        Criterion(
            id="reply-judge",
            kind=CriterionKind.JUDGE,
            role=CriterionRole.MANDATORY if not has_tools else CriterionRole.DIAGNOSTIC,
            grader=GraderSpec(name="judge", args={"judge_id": "promote-draft", "rubric": rubric}),
            description="Judge rubric (diagnostic until a calibration record is attached).",
        )
    )
    out.append(
        Criterion(
            id="side-effects",
            kind=CriterionKind.SIDE_EFFECT,
            role=CriterionRole.DIAGNOSTIC,
            grader=GraderSpec(name="side-effect", args={}),
            description="No critical side effect (destructive, exfiltration, permission, mail).",
        )
    )
    return out


def _tool_path_criterion(
    tools: list[str], write_path: list[str], failed: bool, todo: list[str]
) -> Criterion:
    """The mandatory tool-path criterion (appends its review to-do to ``todo``).

    Reads are how an agent finds things out and vary from run to run; the
    writes are what the task asks for. A read-only task keeps its reads.
    """
    if failed:
        todo.append("tool-path: the observed path of a failed run; write the intended path")
    elif write_path:
        todo.append(
            "tool-path: every write of one source run; drop any the task does not need "
            "(a recovered mistake would make the task unpassable)"
        )
    return Criterion(
        id="tool-path",
        kind=CriterionKind.POLICY,
        role=CriterionRole.MANDATORY,
        grader=GraderSpec(name="policy", args={"required_sequence": write_path or tools}),
        description="The source run's state-changing calls happen, in this order."
        if write_path
        else "The reference tool path is followed (in order).",
    )


def _budgets(
    material: TraceMaterial | None, tools: list[str], budget_factor: float
) -> dict[str, Any]:
    """Budgets from the observed usage times ``budget_factor`` (none without the material)."""
    budgets: dict[str, Any] = {}
    if material is None:
        return budgets
    if tools:
        budgets["max_tool_calls"] = max(1, int(len(tools) * budget_factor + 0.999))
    if material.total_tokens:
        budgets["max_tokens"] = int(material.total_tokens * budget_factor)
    if material.cost > 0:
        budgets["max_cost_usd"] = round(material.cost * budget_factor, 6)
    if material.end_ns > material.start_ns:
        budgets["max_latency_s"] = round(
            (material.end_ns - material.start_ns) / 1e9 * budget_factor, 3
        )
    return budgets


def check_graders(task: Task) -> None:
    """Build every grader of ``task`` once; a bad spec raises ``UserError`` naming it."""
    from flywheel.evalset import GradingContext, build_grader

    from flywheel import UserError

    ctx = GradingContext()
    for c in task.criteria:
        try:
            build_grader(c.grader, ctx)
        except UserError:
            raise
        except (TypeError, ValueError) as exc:
            raise UserError(f"criterion {c.id!r}: grader {c.grader.name!r}: {exc}") from exc


def draft_candidates(
    store: Store,
    *,
    project: str = "default",
    evalset: str | None = None,
    held_out_fraction: float = 0.3,
    budget_factor: float = 2.0,
    progress: Any = None,
) -> list[Candidate]:
    """Draft a task for every redacted candidate; store it (stage ``drafted``)."""
    todo = list_candidates(
        store, project=project, evalset=evalset, stages=["redacted"], bodies=True
    )
    if not todo:
        return []
    material = load_traces(store, [c.trace_id for c in todo], project=project)
    out = []
    for c in todo:
        task = draft_task(
            c,
            material.get(c.trace_id),
            held_out_fraction=held_out_fraction,
            budget_factor=budget_factor,
        )
        out.append(replace(c, stage="drafted", draft=task.model_dump_json()))
        if progress:
            progress()
    write_candidates(store, out)
    return out

