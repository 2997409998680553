"""``flywheel side-effects``: diff two states, classify, derive or learn a scope.

Thin: each command parses its options, calls one public function
(``diff_files``, ``scope_from_files``, ``adapter_names``) and prints.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from flywheel._clikit import CliContext, echo_json

from ._adapters import adapter_names
from ._files import describe_scope, diff_files, render_report, scope_from_files


def _store_and_project(needed: bool) -> tuple[object | None, str]:
    """The flywheel store (only when an option needs it) and the project."""
    ctx = click.get_current_context().find_object(CliContext)
    if ctx is None or not needed:
        return None, ctx.settings.project if ctx else "default"
    return ctx.store(), ctx.settings.project


_ADAPTER = click.option(
    "--adapter",
    type=click.Choice(adapter_names()),
    default=None,
    help="Force an adapter instead of detecting one.",
)
_MAPS = click.option(
    "--map",
    "maps",
    multiple=True,
    help="Glob of resource types that are maps (JSON adapter hint, rarely needed); repeatable.",
)


def _with(*opts: Callable[..., object]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def deco(f: Callable[..., None]) -> Callable[..., None]:
        for opt in reversed(opts):
            f = opt(f)  # type: ignore[assignment]
        return f

    return deco


@click.group("side-effects")
def group() -> None:
    """State snapshots, typed diffs and side-effect classification."""


@group.command("diff")
@click.option(
    "--before",
    required=True,
    type=click.Path(),
    help="State s0: JSON document, flywheel.snapshot/1 file, SQLite file or directory.",
)
@click.option("--after", required=True, type=click.Path(), help="State sT (same kinds).")
@_with(_ADAPTER, _MAPS)
@click.option(
    "--scope",
    "scope_path",
    type=click.Path(),
    help="Scope JSON (expected deltas, constraints, allowances, noise).",
)
@click.option(
    "--profile", "profile_path", type=click.Path(), help="Profile JSON (sinks, permissions...)."
)
@click.option("--agentdojo-suite", "suite", help="Use the declared profile of an AgentDojo suite.")
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
    help="Provenance observations JSON ([{text|fingerprint, source_kind, ...}]).",
)
@click.option(
    "--trace",
    "trace",
    help="Take the tool calls and observations from this stored "
    "trace (instead of --calls/--observations).",
)
@click.option("--trial-id", help="Store the result in the store under this trial id.")
@click.option("--trace-id", default="", help="Trace id recorded with a stored result.")
@click.option(
    "--fail-on-critical",
    is_flag=True,
    help="Exit 2 on a critical side effect or a change outside the scope.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print deltas, decisions, findings and gate input as JSON.",
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
    """Diff two states, classify every change, report omissions, wrong values and extras."""
    store, project = _store_and_project(bool(trace or trial_id))
    fd = diff_files(
        before,
        after,
        adapter=adapter,
        maps=maps,
        scope_path=scope_path,
        profile_path=profile_path,
        suite=suite,
        calls_path=calls_path,
        observations_path=obs_path,
        trace=trace,
        store=store,  # type: ignore[arg-type]
        project=project,
        trial_id=trial_id,
        trace_id=trace_id,
    )
    if as_json:
        echo_json(fd.to_json())
    else:
        for line in render_report(fd):
            click.echo(line)
    if fail_on_critical and fd.report.gate.blocking:
        sys.exit(2)  # click.Exit would be swallowed by the non-standalone main


@group.command("scope")
@click.option(
    "--before",
    "befores",
    required=True,
    multiple=True,
    type=click.Path(),
    help="s0 of the correct run(s): once for all, or once per --after.",
)
@click.option(
    "--after",
    "afters",
    required=True,
    multiple=True,
    type=click.Path(),
    help="End state of a correct run, or the expected snapshot; repeat for "
    "several correct runs (the scope keeps what they agree on).",
)
@_with(_ADAPTER, _MAPS)
@click.option("--agentdojo-suite", "suite", help="Read states with this suite's map hints.")
@click.option("--task-id", help="Task id recorded in the scope.")
@click.option("-o", "--output", type=click.Path(), help="Write the scope here (default stdout).")
def scope_cmd(
    befores: tuple[str, ...],
    afters: tuple[str, ...],
    adapter: str | None,
    maps: tuple[str, ...],
    suite: str | None,
    task_id: str | None,
    output: str | None,
) -> None:
    """Derive a scope from an expected snapshot, or learn one from several correct runs."""
    scope = scope_from_files(
        befores, afters, adapter=adapter, maps=maps, suite=suite, task_id=task_id
    )
    text = scope.model_dump_json(indent=2)
    if output:
        Path(output).write_text(text + "\n")
        click.echo(f"{describe_scope(scope)}; written to {output}", err=True)
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


def register(cli: click.Group) -> None:
    """Add the ``side-effects`` group (``diff``, ``scope``, ``adapters``) to the CLI."""
    cli.add_command(group)
