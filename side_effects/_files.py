"""Side-effect analysis of state files: what ``flywheel side-effects`` runs, as functions.

``diff_files`` reads two states (and optionally a scope, a profile, calls,
observations or a stored trace), analyses them and stores the result for a
trial; ``scope_from_files`` builds a scope from one or several correct runs'
state files; ``render_report`` is the text the CLI prints. The CLI only parses
its options and prints.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from flywheel import Store, UserError

from ._analyze import SideEffectReport, analyze
from ._diff import diff
from ._findings import count_gaps
from ._from_trace import calls_from_trace
from ._io import load_profile, load_scope, load_states
from ._policy import Profile, Scope, default_profile
from ._provenance import Observation
from ._reconcile import ToolCall
from ._scope import ReferenceRun, learn_scope
from ._store import store_report


def _load_list(path: str, model: type[BaseModel], what: str) -> list[Any]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read {what} file {path}: {exc}") from exc
    if not isinstance(data, list):
        raise UserError(f"{what} file {path} must hold a JSON list")
    try:
        return [model.model_validate(x) for x in data]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ()))
        raise UserError(f"{what} file {path} is invalid at {where}: {first.get('msg')}") from exc


def suite_maps(suite: str | None) -> tuple[str, ...]:
    """An AgentDojo suite's map hints (empty without a suite)."""
    if not suite:
        return ()
    from ._agentdojo import agentdojo_maps

    try:
        return tuple(agentdojo_maps(suite))
    except KeyError:
        raise UserError(
            f"unknown AgentDojo suite {suite!r}; use banking, slack, workspace or travel"
        ) from None


def resolve_profile(profile: str | None, suite: str | None) -> Profile:
    """A profile file, an AgentDojo suite's declared profile, or the default."""
    if profile and suite:
        raise UserError("pass either --profile or --agentdojo-suite, not both")
    if profile:
        return load_profile(profile)
    if suite:
        from ._agentdojo import agentdojo_profile

        return agentdojo_profile(suite)
    return default_profile()


@dataclass
class FileDiff:
    """A report and the inputs it was made from."""

    report: SideEffectReport
    before: str
    after: str
    records: tuple[int, int]
    scope_path: str | None
    trial_id: str | None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "before": {"path": self.before, "records": self.records[0]},
            "after": {"path": self.after, "records": self.records[1]},
            "scope_path": self.scope_path,
            "trial_id": self.trial_id,
            **self.report.to_json(),
        }


def diff_files(
    before: str,
    after: str,
    *,
    adapter: str | None = None,
    maps: Sequence[str] = (),
    scope_path: str | None = None,
    profile_path: str | None = None,
    suite: str | None = None,
    calls_path: str | None = None,
    observations_path: str | None = None,
    trace: str | None = None,
    store: Store | None = None,
    project: str = "default",
    trial_id: str | None = None,
    trace_id: str = "",
) -> FileDiff:
    """Diff two state files, classify, reconcile, check the scope; store for a trial.

    ``trace`` (with ``store``) takes the calls and observations from a stored
    trace instead of files; ``trial_id`` (with ``store``) stores the result.
    """
    if trace and (calls_path or observations_path):
        raise UserError(
            "--trace takes calls and observations from the trace; "
            "drop --calls/--observations or --trace"
        )
    maps = tuple(maps) or suite_maps(suite)
    s0, st = load_states([before, after], adapter=adapter, maps=maps)
    scope = load_scope(scope_path) if scope_path else None
    profile = resolve_profile(profile_path, suite)
    calls = _load_list(calls_path, ToolCall, "calls") if calls_path else None
    obs = _load_list(observations_path, Observation, "observations") if observations_path else []
    if trace:
        if store is None:
            raise UserError("--trace needs the flywheel store (run through `flywheel`)")
        calls, obs = calls_from_trace(store, trace, project=project)
        trace_id = trace_id or trace
    report = analyze(
        s0, st, scope=scope, profile=profile, calls=calls, observations=obs, run_id=trial_id
    )
    if trial_id:
        if store is None:
            raise UserError("--trial-id needs the flywheel store (run through `flywheel`)")
        store_report(store, trial_id, report, trace_id=trace_id, project_id=project)
    return FileDiff(report, before, after, (len(s0), len(st)), scope_path, trial_id)


def scope_from_files(
    befores: Sequence[str],
    afters: Sequence[str],
    *,
    adapter: str | None = None,
    maps: Sequence[str] = (),
    suite: str | None = None,
    task_id: str | None = None,
) -> Scope:
    """A scope from correct runs' state files: one s0 for all, or one s0 per end state.

    One pair gives the expected deltas of that run (an expected snapshot);
    several are learned from (``learn_scope``).
    """
    if not afters:
        raise UserError("pass at least one --after state")
    if len(befores) not in (1, len(afters)):
        raise UserError(
            f"{len(befores)} --before for {len(afters)} --after: pass one --before for all, "
            "or one per --after"
        )
    maps = tuple(maps) or suite_maps(suite)
    pairs = list(zip(befores * len(afters) if len(befores) == 1 else befores, afters, strict=True))
    runs = []
    for b, a in pairs:
        s0, st = load_states([b, a], adapter=adapter, maps=maps)
        runs.append(ReferenceRun(diff(s0, st), (), s0, Path(a).name))
    source = f"reference run {Path(afters[0]).name}" if len(runs) == 1 else None
    return learn_scope(runs, task_id=task_id, source=source)


def _fields(vs: Sequence[Any]) -> str:
    return ", ".join(v.field for v in vs)


def render_report(fd: FileDiff) -> list[str]:
    """The text lines the CLI prints for a diff."""
    report = fd.report
    c = report.classification.counts()
    g = count_gaps(report.findings)
    lines = [
        f"{fd.records[0]} -> {fd.records[1]} records, {len(report.deltas)} delta(s): "
        f"{c['intended']} intended, {c['benign']} benign, {c['unauthorized']} unauthorized"
        + ("" if report.scope else " (no --scope: nothing is in scope)")
    ]
    for d in report.classification.decisions:
        cats = ",".join(d.category_names) or "-"
        lines.append(
            f"  {d.status:<12} {d.delta.kind:<7} {d.delta.ref}  [{cats}; {d.tier}] "
            f"{d.rule_id}: {d.reason}"
        )
        vol = [
            v
            for v in d.fields
            if v.verdict == "volatile" or v.note in ("timestamp", "uuid", "increased")
        ]
        if vol:
            lines.append(
                "      volatile (set by the system, not compared): "
                + ", ".join(f"{v.field} [{v.note.split(':')[0]}]" for v in vol)
            )
        if d.attribution:
            lines.append(f"      {d.attribution}")
    if report.scope is not None:
        lines.append(
            f"scope check: {g['omission']} omission(s), {g['wrong_value']} wrong value(s), "
            f"{g['extra']} extra(s)"
        )
        for f in report.findings:
            calls = f" (calls {', '.join(map(str, f.calls))})" if f.calls else ""
            lines.append(f"  {f.kind:<11} {f.ref}: {f.reason}{calls}")
    rec = report.reconciliation
    if rec is not None:
        lines += [
            f"  unexplained: {u.ref} ({u.kind}) - no tool call explains it" for u in rec.unexplained
        ]
        lines += [f"  call #{x.call_index} {x.name}: {x.finding}: {x.reason}" for x in rec.calls]
    crit = {k: v for k, v in report.gate.counts.items() if v}
    lines.append("critical events: " + (", ".join(f"{k}={v}" for k, v in crit.items()) or "none"))
    return lines


def describe_scope(scope: Scope) -> str:
    """One line about a scope: expectations, runs, relaxations."""
    req = sum(1 for e in scope.expected if e.required)
    return (
        f"scope with {len(scope.expected)} expected delta(s) ({req} required) learned from "
        f"{scope.learned_from} run(s), {len(scope.relaxed)} relaxation(s)"
        + (
            ": " + "; ".join(f"{r.resource_type}.{r.field} {r.how}" for r in scope.relaxed[:8])
            if scope.relaxed
            else ""
        )
    )
