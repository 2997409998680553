"""``flywheel ablate``: oracle-component ablations with paired intervals, resumable."""

from __future__ import annotations

import os
import time
from typing import Any

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from flywheel import UserError
from flywheel._clikit import CliContext, echo_json, pass_cli, stderr_console

from ._ablate import AblationPlan, load_results, run_ablation
from ._ablate_report import analyse, plot_png, to_markdown
from ._agents import parse_agent
from ._budget import Budget
from ._runner import TrialRecord
from ._seams import SEAMS


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


@click.command("ablate")
@click.option("--suite", help="agentdojo:banking | agentdojo:slack | agentdojo:travel | "
              "agentdojo:workspace (an --evalset NAME@VERSION source is not implemented yet).")
@click.option("--evalset", "evalset_ref",
              help="NAME@VERSION: run an eval set's tasks (not implemented yet; use --suite).")
@click.option("--tasks", help="Comma-separated user task ids (default: all of the suite).")
@click.option("--agent", "agent_text", default="reference", show_default=True,
              help="reference | ground_truth | module:function | openai:URL[#MODEL] | "
              "subprocess:COMMAND")
@click.option("--oracles", default=",".join(SEAMS), show_default=True,
              help="Seams to ablate with their oracle.")
@click.option("--order", help="Declared order of the marginal deltas (default: --oracles order).")
@click.option("--lattice", is_flag=True,
              help="Run every subset of the oracles (2^k configurations).")
@click.option("--runs", default=3, show_default=True, type=int,
              help="Runs per task (paired seeds).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the trial seeds.")
@click.option("--hazard", "hazards", multiple=True,
              help="Reference agent hazard rate, NAME=RATE (repeatable).")
@click.option("--budget-calls", type=int, default=50, show_default=True,
              help="Tool-call budget per trial (the same for every configuration).")
@click.option("--budget-writes", type=int, default=20, show_default=True)
@click.option("--budget-tokens", type=int, default=200_000, show_default=True)
@click.option("--budget-wall", type=float, default=120.0, show_default=True,
              help="Wall-clock budget (s) per trial.")
@click.option("--workers", default=1, show_default=True, type=int, help="Concurrent trials.")
@click.option("--resume", "resume", help="Continue an interrupted ablation by its id.")
@click.option("--confidence", default=0.95, show_default=True, type=float)
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Write report.md, report.json and ablation.png here.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_cli
def ablate_cmd(
    obj: CliContext,
    suite: str | None,
    evalset_ref: str | None,
    tasks: str | None,
    agent_text: str,
    oracles: str,
    order: str | None,
    lattice: bool,
    runs: int,
    seed: int,
    hazards: tuple[str, ...],
    budget_calls: int,
    budget_writes: int,
    budget_tokens: int,
    budget_wall: float,
    workers: int,
    resume: str | None,
    confidence: float,
    out_dir: str | None,
    as_json: bool,
) -> None:
    """Baseline and oracle configurations on the same tasks: which component to fix first."""
    from ._cli import _hazards

    if evalset_ref:
        raise UserError(
            f"--evalset {evalset_ref}: eval-set sources are not implemented for ablate yet; "
            "use --suite agentdojo:SUITE [--tasks ...]"
        )
    plan: AblationPlan | None = None
    if not resume or suite:
        if not suite:
            raise UserError("--suite is required (e.g. agentdojo:banking), or --resume ABLATION_ID")
        agent = parse_agent(agent_text)
        if hazards:
            if agent.name != "reference":
                raise UserError("--hazard applies to --agent reference only")
            agent = type(agent)(agent.name, {**agent.args, "rates": _hazards(hazards)})
        chosen = _csv(oracles)
        declared = _csv(order) or chosen
        if sorted(declared) != sorted(chosen):
            raise UserError(
                f"--order {order!r} must list exactly the --oracles ({','.join(chosen)})"
            )
        if not declared:
            raise UserError(f"--oracles: name at least one of {', '.join(SEAMS)}")
        if not 0.5 <= confidence < 1.0:
            raise UserError(f"--confidence {confidence}: choose a level in [0.5, 1), e.g. 0.95")
        plan = AblationPlan(
            suite=suite,
            agent=agent,
            oracles=tuple(declared),
            lattice=lattice,
            runs=runs,
            budget=Budget(budget_calls, budget_writes, budget_tokens, budget_wall),
            seed=seed,
            tasks=tuple(_csv(tasks)),
        )
        plan.trials()  # validate suite, tasks and runs before anything is written
    store = obj.store()
    project = obj.settings.project
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("spend {task.fields[spend]}"),
        console=stderr_console(),
        transient=True,
        disable=as_json,
    )
    state: dict[str, Any] = {"spend": 0.0, "tokens": 0}
    with progress:
        bar = progress.add_task("ablate", total=None, spend="$0.0000")

        def on_start(ablation_id: str, total: int, todo: int) -> None:
            progress.update(bar, description=f"ablate {ablation_id}", total=todo)
            if not as_json:
                stderr_console().print(
                    f"ablation {ablation_id}: {total} trial(s), {total - todo} already in the "
                    f"store; resume with --resume {ablation_id}"
                )

        def on_trial(rec: TrialRecord) -> None:
            state["spend"] += rec.cost
            state["tokens"] += rec.input_tokens + rec.output_tokens
            progress.update(
                bar, advance=1, spend=f"${state['spend']:.4f} / {state['tokens']:,} tok"
            )

        t0 = time.perf_counter()
        run = run_ablation(
            store, plan, resume=resume, workers=workers, project=project,
            on_start=on_start, on_trial=on_trial,
        )
    elapsed = time.perf_counter() - t0
    rows = load_results(store, run.ablation_id, project=project)
    rep = analyse(run.plan, rows, ablation_id=run.ablation_id, confidence=confidence)
    doc = rep.to_json()
    doc["run"] = {
        "ran": run.ran,
        "skipped": run.skipped,
        "elapsed_s": round(elapsed, 3),
        "trials_per_s": round(run.ran / elapsed, 2) if elapsed > 0 and run.ran else None,
        "spend": run.spend,
    }
    if out_dir:
        import json

        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "report.md"), "w", encoding="utf-8") as fh:
            fh.write(to_markdown(rep))
        with open(os.path.join(out_dir, "report.json"), "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2)
        plot_png(rep, os.path.join(out_dir, "ablation.png"))
        doc["files"] = [os.path.join(out_dir, f) for f in ("report.md", "report.json",
                                                           "ablation.png")]
    if as_json:
        echo_json(doc)
        return
    click.echo(to_markdown(rep))
    click.echo(
        f"ran {run.ran} trial(s) ({run.skipped} skipped) in {elapsed:.1f} s; "
        f"spend ${run.spend:.4f}" + (f"; report in {out_dir}" if out_dir else "")
    )


def register_ablate(cli: click.Group) -> None:
    """Add ``flywheel ablate``."""
    cli.add_command(ablate_cmd)
