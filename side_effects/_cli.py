"""``flywheel side-effects``: diff two states, classify, derive a scope."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel, ValidationError

from flywheel import UserError
from flywheel._clikit import CliContext, echo_json

from ._adapters import adapter_names
from ._analyze import analyze
from ._diff import diff
from ._from_trace import calls_from_trace
from ._io import load_profile, load_scope, load_state
from ._policy import Profile, default_profile
from ._provenance import Observation
from ._reconcile import ToolCall
from ._scope import derive_scope
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


def _suite_maps(suite: str | None) -> tuple[str, ...]:
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


def _profile(profile: str | None, suite: str | None) -> Profile:
    if profile and suite:
        raise UserError("pass either --profile or --agentdojo-suite, not both")
    if profile:
        return load_profile(profile)
    if suite:
        from ._agentdojo import agentdojo_profile

        return agentdojo_profile(suite)
    return default_profile()


def _cli_context(option: str) -> CliContext:
    """The flywheel store's context (an option that reads or writes the store needs it)."""
    ctx = click.get_current_context().find_object(CliContext)
    if ctx is None:
        raise UserError(f"{option} needs the flywheel store (run through `flywheel`)")
    return ctx


def register(cli: click.Group) -> None:
    """Add the ``side-effects`` group to the CLI."""

    @cli.group("side-effects")
    def group() -> None:
        """State snapshots, typed diffs and side-effect classification."""

    state_opts = [
        click.option(
            "--before",
            "before",
            required=True,
            type=click.Path(),
            help="State s0: JSON document, flywheel.snapshot/1 file, SQLite file or directory.",
        ),
        click.option(
            "--after", "after", required=True, type=click.Path(), help="State sT (same kinds)."
        ),
        click.option(
            "--adapter",
            type=click.Choice(adapter_names()),
            default=None,
            help="Force an adapter instead of detecting one.",
        ),
        click.option(
            "--map",
            "maps",
            multiple=True,
            help="Glob of resource types that are maps (JSON adapter hint); repeatable.",
        ),
    ]

    def with_state(f: Callable[..., None]) -> Callable[..., None]:
        for opt in reversed(state_opts):
            f = opt(f)
        return f

    @group.command("diff")
    @with_state
    @click.option(
        "--scope",
        "scope_path",
        type=click.Path(),
        help="Scope JSON (expected deltas, allowances, noise).",
    )
    @click.option(
        "--profile", "profile_path", type=click.Path(), help="Profile JSON (sinks, permissions...)."
    )
    @click.option(
        "--agentdojo-suite", "suite", help="Use the declared profile of an AgentDojo suite."
    )
    @click.option(
        "--calls",
        "calls_path",
        type=click.Path(),
        help="Tool calls JSON ([{name, args, status, span_id, error}]) to reconcile with.",
    )
    @click.option(
        "--observations",
        "obs_path",
        type=click.Path(),
        help="Provenance observations JSON ([{text|fingerprint, source_kind, trusted, ...}]).",
    )
    @click.option(
        "--trace",
        "trace",
        help="Take the tool calls and observations from this stored trace "
        "(instead of --calls/--observations).",
    )
    @click.option("--trial-id", help="Store the result in the store under this trial id.")
    @click.option("--trace-id", default="", help="Trace id recorded with a stored result.")
    @click.option(
        "--fail-on-critical", is_flag=True, help="Exit 2 when a critical side effect is found."
    )
    @click.option(
        "--json", "as_json", is_flag=True, help="Print deltas, decisions and gate input as JSON."
    )
    def diff_cmd(
        before: str,
        after: str,
        adapter: str | None,
        maps: tuple[str, ...],
        scope_path: str | None,
        profile_path: str | None,
        suite: str | None,
        calls_path: str | None,
        obs_path: str | None,
        trace: str | None,
        trial_id: str | None,
        trace_id: str,
        fail_on_critical: bool,
        as_json: bool,
    ) -> None:
        """Diff two states and classify every change (intended, benign, unauthorized)."""
        maps = maps or _suite_maps(suite)
        s0 = load_state(before, adapter=adapter, maps=maps)
        st = load_state(after, adapter=adapter, maps=maps)
        scope = load_scope(scope_path) if scope_path else None
        profile = _profile(profile_path, suite)
        if trace and (calls_path or obs_path):
            raise UserError("--trace takes calls and observations from the trace; "
                            "drop --calls/--observations or --trace")
        calls = _load_list(calls_path, ToolCall, "calls") if calls_path else None
        obs = _load_list(obs_path, Observation, "observations") if obs_path else []
        if trace:
            cli_ctx = _cli_context("--trace")
            calls, obs = calls_from_trace(
                cli_ctx.store(), trace, project=cli_ctx.settings.project
            )
            trace_id = trace_id or trace
        report = analyze(s0, st, scope=scope, profile=profile, calls=calls, observations=obs)
        deltas, cls, gate = report.deltas, report.classification, report.gate
        if trial_id:
            ctx = _cli_context("--trial-id")
            store_report(ctx.store(), trial_id, report, trace_id=trace_id,
                         project_id=ctx.settings.project)
        if as_json:
            echo_json(
                {
                    "before": {"path": before, "records": len(s0)},
                    "after": {"path": after, "records": len(st)},
                    "scope_path": scope_path,
                    "trial_id": trial_id,
                    **report.to_json(),
                }
            )
        else:
            c = cls.counts()
            click.echo(
                f"{len(s0)} -> {len(st)} records, {len(deltas)} delta(s): "
                f"{c['intended']} intended, {c['benign']} benign, {c['unauthorized']} unauthorized"
                + ("" if scope else " (no --scope: nothing is in scope)")
            )
            for d in cls.decisions:
                cats = ",".join(d.category_names) or "-"
                click.echo(
                    f"  {d.status:<12} {d.delta.kind:<7} {d.delta.ref}  [{cats}; {d.tier}] "
                    f"{d.rule_id}: {d.reason}"
                )
            rec = report.reconciliation
            if rec is not None:
                for u in rec.unexplained:
                    click.echo(f"  unexplained: {u.ref} ({u.kind}) - no tool call explains it")
                for f in rec.calls:
                    click.echo(f"  call #{f.call_index} {f.name}: {f.finding}: {f.reason}")
            crit = {k: v for k, v in gate.counts.items() if v}
            click.echo(
                "critical events: " + (", ".join(f"{k}={v}" for k, v in crit.items()) or "none")
            )
        if fail_on_critical and gate.blocking:
            sys.exit(2)  # click.Exit would be swallowed by the non-standalone main

    @group.command("scope")
    @with_state
    @click.option("--agentdojo-suite", "suite", help="Read states with this suite's map hints.")
    @click.option("--task-id", help="Task id recorded in the scope.")
    @click.option(
        "-o", "--output", type=click.Path(), help="Write the scope here (default stdout)."
    )
    def scope_cmd(
        before: str,
        after: str,
        adapter: str | None,
        maps: tuple[str, ...],
        suite: str | None,
        task_id: str | None,
        output: str | None,
    ) -> None:
        """Derive a scope from a reference (ground-truth) run's before/after states."""
        maps = maps or _suite_maps(suite)
        s0 = load_state(before, adapter=adapter, maps=maps)
        st = load_state(after, adapter=adapter, maps=maps)
        scope = derive_scope(
            diff(s0, st), task_id=task_id, source=f"reference run {Path(after).name}"
        )
        text = scope.model_dump_json(indent=2)
        if output:
            Path(output).write_text(text + "\n")
            click.echo(
                f"scope with {len(scope.expected)} expected delta(s) written to {output}", err=True
            )
        else:
            click.echo(text)

    @group.command("adapters")
    @click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
    def adapters_cmd(as_json: bool) -> None:
        """List the registered snapshot adapters."""
        names = adapter_names()
        if as_json:
            echo_json({"adapters": names})
        else:
            for n in names:
                click.echo(n)
