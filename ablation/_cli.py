"""``flywheel ablate``: oracle-component ablations with paired intervals, resumable."""

from __future__ import annotations

import time
from typing import Any

import click
from flywheel.harness import SEAMS, Budget, TrialRecord
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from flywheel._clikit import CliContext, echo_json, pass_cli, stderr_console

from ._ablate import load_plan, load_results, run_ablation
from ._ablate_report import analyse, to_markdown
from ._plan import build_plan, write_outputs


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
    """Baseline and oracle configurations on the same tasks (see the help text)."""
    plan = None
    if not resume or suite or evalset_ref:
        plan = build_plan(
            suite=suite, evalset=evalset_ref, store_url=obj.settings.store,
            evalset_root_dir=evalset_root, skip_unrunnable=skip_unrunnable, tasks=_csv(tasks),
            agent=agent_text, oracles=_csv(oracles), order=_csv(order), lattice=lattice,
            runs=runs, seed=seed, hazards=hazards,
            budget=Budget(budget_calls, budget_writes, budget_tokens, budget_wall),
            confidence=confidence,
        )
    store = obj.store()
    project = obj.settings.project
    run, elapsed = _run_with_progress(store, plan, resume, workers, project, quiet=as_json)
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
        doc["files"] = write_outputs(rep, doc, out_dir)
    if as_json:
        echo_json(doc)
        return
    click.echo(to_markdown(rep))
    click.echo(
        f"ran {run.ran} trial(s) ({run.skipped} skipped) in {elapsed:.1f} s; "
        f"spend ${run.spend:.4f}" + (f"; report in {out_dir}" if out_dir else "")
    )


def _run_with_progress(
    store: Any, plan: Any, resume: str | None, workers: int, project: str, *, quiet: bool
) -> tuple[Any, float]:
    """``run_ablation`` under a progress bar on stderr (spend and tokens); (run, seconds)."""
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("spend {task.fields[spend]}"),
        console=stderr_console(),
        transient=True,
        disable=quiet,
    )
    state: dict[str, Any] = {"spend": 0.0, "tokens": 0}
    run_plan = plan if plan is not None else load_plan(store, str(resume), project=project)
    with progress:
        bar = progress.add_task("ablate", total=None, spend="$0.0000")

        def on_start(ablation_id: str, total: int, todo: int) -> None:
            progress.update(bar, description=f"ablate {ablation_id}", total=todo)
            if not quiet:
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
    return run, time.perf_counter() - t0


def register(cli: click.Group) -> None:
    """Add ``flywheel ablate``."""
    cli.add_command(ablate_cmd)
