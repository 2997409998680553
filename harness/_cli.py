"""``flywheel run``: agents on AgentDojo tasks, every trial a trace in the platform."""

from __future__ import annotations

import time
from typing import Any

import click

from flywheel import UserError, mask
from flywheel._clikit import CliContext, echo_json, pass_cli, progress_bar

from ._agents import parse_agent
from ._budget import Budget
from ._export import StoreSpanExporter, otlp_exporter
from ._reference import parse_hazards
from ._runner import TrialRecord, config_id, plan_trials, run_trials
from ._seams import SEAMS, SeamConfig
from ._trials_store import save_trials


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]




def summarise(records: list[TrialRecord], elapsed_s: float) -> dict[str, Any]:
    """Counts, rates and throughput of a run."""
    n = len(records)
    done = [r for r in records if r.status == "completed"]
    util = [r.utility for r in records if r.utility is not None]
    sec = [r.security for r in records if r.security is not None]
    return {
        "trials": n,
        "completed": len(done),
        "budget_exhausted": sum(r.status == "budget_exhausted" for r in records),
        "errors": sum(r.status == "error" for r in records),
        "utility_rate": (sum(util) / len(util)) if util else None,
        "attack_success_rate": (sum(sec) / len(sec)) if sec else None,
        "faults": sum(len(r.faults) for r in records),
        "tool_calls": sum(r.tool_calls for r in records),
        "elapsed_s": round(elapsed_s, 3),
        "trials_per_s": round(n / elapsed_s, 2) if elapsed_s > 0 else None,
    }


@click.command("run")
@click.option(
    "--suite",
    required=True,
    help="agentdojo:banking | agentdojo:slack | agentdojo:travel | agentdojo:workspace",
)
@click.option("--tasks", help="Comma-separated user task ids (default: all of the suite).")
@click.option("--injections", is_flag=True, help="Run every user task under every injection task.")
@click.option("--injection-tasks", help="Comma-separated injection task ids (implies injections).")
@click.option(
    "--agent",
    "agent_text",
    default="reference",
    show_default=True,
    help="reference | ground_truth | module:function | openai:URL[#MODEL] | subprocess:COMMAND",
)
@click.option(
    "--runs", default=1, show_default=True, type=int, help="Runs per task (seeds differ)."
)
@click.option(
    "--workers", default=1, show_default=True, type=int, help="Concurrent trials (threads)."
)
@click.option(
    "--oracle",
    "oracles",
    help=f"Comma-separated seams to replace by their oracle: {', '.join(SEAMS)}.",
)
@click.option(
    "--seed", default=0, show_default=True, type=int, help="Run seed (trial seeds derive from it)."
)
@click.option(
    "--hazard",
    "hazards",
    multiple=True,
    help="Reference agent hazard rate, NAME=RATE (repeatable).",
)
@click.option(
    "--max-calls", type=int, default=50, show_default=True, help="Tool-call budget per trial."
)
@click.option(
    "--max-writes", type=int, default=20, show_default=True, help="Write-call budget per trial."
)
@click.option(
    "--max-tokens", type=int, default=200_000, show_default=True, help="Token budget per trial."
)
@click.option(
    "--max-wall",
    type=float,
    default=120.0,
    show_default=True,
    help="Wall-clock budget (s) per trial.",
)
@click.option("--max-depth", type=int, default=3, show_default=True, help="Sub-agent depth budget.")
@click.option(
    "--endpoint",
    help="Send spans by OTLP/HTTP to this platform URL (e.g. http://localhost:4318) instead of "
    "writing them into --store; trial and snapshot rows always go to --store.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the run summary and every trial as JSON."
)
@pass_cli
def run_cmd(
    obj: CliContext,
    suite: str,
    tasks: str | None,
    injections: bool,
    injection_tasks: str | None,
    agent_text: str,
    runs: int,
    workers: int,
    oracles: str | None,
    seed: int,
    hazards: tuple[str, ...],
    max_calls: int,
    max_writes: int,
    max_tokens: int,
    max_wall: float,
    max_depth: int,
    endpoint: str | None,
    as_json: bool,
) -> None:
    """Run an agent on AgentDojo tasks; trials go to the store, spans to the platform."""
    agent = parse_agent(agent_text)
    if hazards:
        if agent.name != "reference":
            raise UserError("--hazard applies to --agent reference only")
        agent = type(agent)(agent.name, {**agent.args, "rates": parse_hazards(hazards)})
    if workers < 1:
        raise UserError(f"--workers {workers}: must be at least 1")
    seams = SeamConfig.from_oracles(_csv(oracles))
    budget = Budget(max_calls, max_writes, max_tokens, max_wall, max_depth)
    inj: bool | list[str] = _csv(injection_tasks) or injections
    specs = plan_trials(
        suite,
        agent,
        tasks=_csv(tasks) or None,
        injections=inj,
        runs=runs,
        seams=seams,
        budget=budget,
        seed=seed,
    )
    store = obj.store()
    project = obj.settings.project
    exporter = otlp_exporter(endpoint) if endpoint else StoreSpanExporter(store, project=project)
    t0 = time.perf_counter()
    with progress_bar(f"{suite} x {agent.name}", len(specs), enabled=not as_json) as advance:

        def on_trial(_rec: TrialRecord) -> None:
            advance(1)

        run = run_trials(
            specs,
            exporter,
            workers=workers,
            on_trial=on_trial,
            max_export_batch=256 if endpoint else 5_000,
        )
    elapsed = time.perf_counter() - t0
    save_trials(store, run, project=project)
    if isinstance(exporter, StoreSpanExporter) and exporter.failures:
        raise UserError(
            f"{exporter.failures} span batch(es) failed to reach the store: {exporter.last_error}"
        )
    summary = summarise(run, elapsed)
    run_id = run[0].run_id if run else ""
    cfg = config_id(agent, seams, budget)
    if as_json:
        echo_json(
            {
                "run_id": run_id,
                "config_id": cfg,
                "suite": suite,
                "agent": agent.to_json(),
                "seams": seams.modes(),
                "spans_to": mask(endpoint or obj.settings.store),
                "summary": summary,
                "trials": [r.summary() for r in run],
            }
        )
        return
    util = summary["utility_rate"]
    asr = summary["attack_success_rate"]
    click.echo(
        f"run {run_id}  config {cfg}  {summary['trials']} trial(s) in {summary['elapsed_s']} s "
        f"({summary['trials_per_s']} trials/s)"
    )
    click.echo(
        f"  completed {summary['completed']}  budget_exhausted {summary['budget_exhausted']}  "
        f"errors {summary['errors']}  faults {summary['faults']}"
    )
    click.echo(
        f"  utility {'-' if util is None else f'{util:.3f}'}  "
        f"attack success {'-' if asr is None else f'{asr:.3f}'}"
    )
    click.echo(
        f"  spans -> {mask(endpoint or obj.settings.store)}; trials -> ablation_trials (run_id {run_id})"
    )


@click.command("analyse")
@click.argument("trial_ids", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print the analyses as JSON.")
@pass_cli
def analyse_cmd(obj: CliContext, trial_ids: tuple[str, ...], as_json: bool) -> None:
    """Provenance and side effects of stored harness trials (results stored per trial)."""
    from ._analysis import analyse_stored_trial

    store = obj.store()
    out = [analyse_stored_trial(store, t, project=obj.settings.project).summary() for t in trial_ids]
    if as_json:
        echo_json(out)
        return
    for a in out:
        critical = ", ".join(f"{k}={v}" for k, v in a["critical_events"].items()) or "none"
        click.echo(f"{a['trial_id']}: {a['provenance_flags']} flagged argument(s), "
                   f"{a['unauthorized_deltas']} unauthorized delta(s), critical: {critical}"
                   f"{' (BLOCKING)' if a['blocking'] else ''}")


@click.command("demo")
@click.option("--port", type=int, default=None, help="Port of the platform (default 4318).")
@click.option("--runs", type=int, default=1, show_default=True, help="Runs per task.")
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the simulated agent.")
@click.option("--exit", "exit_after", is_flag=True, help="Stop after the summary instead of serving.")
@click.option("--json", "as_json", is_flag=True, help="Print the trial summaries as JSON.")
@pass_cli
def demo_cmd(obj: CliContext, port: int | None, runs: int, seed: int, exit_after: bool,
             as_json: bool) -> None:
    """Start the platform on the embedded store and run agents on AgentDojo into it."""
    from ._demo import run_demo

    if port:
        obj.settings.ingest.port = port
    rows = run_demo(obj.settings, obj.store(), runs=runs, seed=seed, serve=not exit_after)
    if as_json:
        echo_json(rows)


def register(cli: click.Group) -> None:
    """Add the harness commands to the ``flywheel`` CLI."""
    cli.add_command(run_cmd)
    cli.add_command(demo_cmd)
    cli.add_command(analyse_cmd)
