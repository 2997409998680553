"""``flywheel ablate``: oracle-component ablations with paired intervals, resumable."""

from __future__ import annotations

import os
import time
from typing import Any

import click
from flywheel.harness import SEAMS, Budget, TrialRecord, parse_agent, parse_hazards
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

from ._ablate import AblationPlan, load_plan, load_results, run_ablation
from ._ablate_evalset import evalset_root as _evalset_root
from ._ablate_evalset import load_evalset_source
from ._ablate_report import analyse, plot_png, to_markdown


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


_HELP = """Baseline and oracle configurations on the same tasks: which component to fix first.

\b
Source (one of):
  --suite agentdojo:SUITE       the suite's user tasks (--tasks picks some);
                                graded by AgentDojo's utility check (the
                                `agentdojo-utility` grader)
  --evalset NAME@VERSION        a released eval set (verified first); each
                                task runs in its metadata.environment and is
                                graded by its own criteria (--tasks picks
                                task ids; --skip-unrunnable leaves out tasks
                                without a runnable environment, and the
                                report lists them)

Every configuration runs the same (task, run) cells with the same seeds and
budget, one fresh environment per trial; every trial is a trace in the
store, graded with evalset.grade_trial (acceptance = every mandatory
criterion passes). The report gives, per configuration: acceptance
[Wilson], the paired delta vs the baseline [task-clustered bootstrap;
Newcombe + McNemar with --runs 1], the marginal step, pass^k and its delta,
cost and tokens per accepted task, the rank, the oracle order, and the
caveat that deltas are not additive. Interrupted? Re-run with
--resume ABLATION_ID.

\b
Examples:
  flywheel ablate --suite agentdojo:banking --oracles planner,tools --runs 3
  flywheel ablate --evalset banking@3f2a --oracles planner,tools --runs 2 --out rep/

More: docs/ablation.md.
"""


@click.command("ablate", help=_HELP)
@click.option("--suite", help="agentdojo:banking | agentdojo:slack | agentdojo:travel | "
              "agentdojo:workspace.")
@click.option("--evalset", "evalset_ref",
              help="NAME@VERSION (a unique version prefix, or NAME for the latest): run a "
              "released eval set's tasks, graded by their criteria.")
@click.option("--evalset-root", type=click.Path(file_okay=False), default=None,
              envvar="FLYWHEEL_EVALSETS_DIR",
              help="Directory of released versions (default: beside the chDB store or "
              "./.flywheel/evalsets; the same as `flywheel evalset --root`).")
@click.option("--skip-unrunnable", is_flag=True,
              help="With --evalset: skip tasks without a runnable environment (listed in the "
              "report) instead of refusing the run.")
@click.option("--tasks", help="Comma-separated task ids: user tasks of the suite, or task ids "
              "of the eval set (default: all).")
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
    evalset_root: str | None,
    skip_unrunnable: bool,
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

    if suite and evalset_ref:
        raise UserError("--suite and --evalset are two sources; give one of them")
    if skip_unrunnable and not evalset_ref:
        raise UserError("--skip-unrunnable applies to --evalset only")
    plan: AblationPlan | None = None
    if not resume or suite or evalset_ref:
        if not suite and not evalset_ref:
            raise UserError(
                "give a source: --suite agentdojo:SUITE or --evalset NAME@VERSION "
                "(or --resume ABLATION_ID)"
            )
        agent = parse_agent(agent_text)
        if hazards:
            if agent.name != "reference":
                raise UserError("--hazard applies to --agent reference only")
            agent = type(agent)(agent.name, {**agent.args, "rates": parse_hazards(hazards)})
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
        source: dict[str, Any] = {"suite": suite or "", "tasks": tuple(_csv(tasks))}
        if evalset_ref:
            src = load_evalset_source(
                _evalset_root(obj.settings.store, evalset_root),
                evalset_ref,
                tasks=_csv(tasks),
                skip_unrunnable=skip_unrunnable,
            )
            source = {
                "suite": f"evalset:{src.ref}",
                "tasks": tuple(_csv(tasks)),
                "evalset": src.ref,
                "evalset_sha256": src.manifest_sha256,
                "evalset_path": str(src.path),
                "units": src.units,
                "skipped": tuple(t for t, _ in src.unrunnable),
            }
        plan = AblationPlan(
            agent=agent,
            oracles=tuple(declared),
            lattice=lattice,
            runs=runs,
            budget=Budget(budget_calls, budget_writes, budget_tokens, budget_wall),
            seed=seed,
            **source,
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
    run_plan = plan if plan is not None else load_plan(store, str(resume), project=project)
    with progress:
        bar = progress.add_task("ablate", total=None, spend="$0.0000")

        def on_start(ablation_id: str, total: int, todo: int) -> None:
            progress.update(bar, description=f"ablate {ablation_id}", total=todo)
            if not as_json:
                stderr_console().print(
                    f"ablation {ablation_id}: {total} trial(s), {total - todo} already in the "
                    f"store; resume with --resume {ablation_id}"
                )
                if run_plan.skipped:
                    stderr_console().print(
                        f"skipped {len(run_plan.skipped)} task(s) without a runnable "
                        f"environment: {', '.join(run_plan.skipped)}"
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


def register(cli: click.Group) -> None:
    """Add ``flywheel ablate``."""
    cli.add_command(ablate_cmd)
