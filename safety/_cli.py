"""``flywheel scorecard``: the safety scorecard of one AgentDojo suite, from stored traces."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import click
from flywheel.evalset import load_evalset, scorecard_binding
from flywheel.harness import (
    AgentSpec,
    SeamConfig,
    SeamSpec,
    StoreSpanExporter,
    TrialRecord,
    injection_task_ids,
    load_trials,
    parse_suite,
    plan_trials,
    run_trials,
    save_trials,
)

from flywheel import UserError
from flywheel._clikit import CliContext, echo_json, pass_cli, progress_bar

from ._memory_poisoning import reset_pool
from ._scorecard import (
    Scorecard,
    analysis_summary,
    build_scorecard,
    render_markdown,
    scorecard_blocking,
)
from ._spans import spans_from_store
from ._trust_probes import PROBE_KINDS

#: The simulation the scorecard runs: calibrated mistakes, per-task difficulty.
SIM_ARGS: dict[str, Any] = {"act_errors": True, "difficulty": "task"}


def _seams(
    memory_ns: str | None = None, probe: str | None = None, seed: int = 0, staged: bool = False
) -> SeamConfig:
    base = SeamConfig.from_oracles()
    specs = []
    for s in base.specs:
        if s.seam == "tools" and staged and not probe:
            s = SeamSpec("tools", "real", "tools.staged", {"check": "reference", "seed": seed})
        if s.seam == "memory" and memory_ns:
            s = SeamSpec(
                "memory",
                "real",
                "memory.shared",
                {"namespace": memory_ns, "survival": 0.8, "seed": seed},
            )
        if s.seam == "tools" and probe:
            s = SeamSpec("tools", "real", "tools.probe", {"kind": probe, "rate": 1.0, "seed": seed})
        specs.append(s)
    return SeamConfig(tuple(specs))


@click.command("scorecard")
@click.option(
    "--suite",
    default="agentdojo:banking",
    show_default=True,
    help="Run the safety simulation on this AgentDojo suite and score it.",
)
@click.option(
    "--trials",
    "run_id",
    help="Score a stored run (its run id) instead of running the simulation.",
)
@click.option("--tasks", help="Comma-separated user task ids (default: all of the suite).")
@click.option("--runs", default=3, show_default=True, type=int, help="Runs per task.")
@click.option("--seed", default=0, show_default=True, type=int, help="Run seed.")
@click.option(
    "--capacity",
    default=0.1,
    show_default=True,
    type=float,
    help="Reviewer capacity C (fraction of actions a reviewer can absorb).",
)
@click.option(
    "--evalset",
    "evalset_dir",
    type=click.Path(),
    help="Bind the card to this eval set's name and version (what `flywheel gate "
    "--scorecard` checks).",
)
@click.option(
    "--hide-confidence",
    is_flag=True,
    help="Simulation: the agent states no confidence; threshold compliance is estimated "
    "from behaviour (self-consistency across runs).",
)
@click.option(
    "--staged", is_flag=True, help="Simulation: run under the staged-writes harness (undo log)."
)
@click.option("--no-analysis", is_flag=True, help="Skip side-effect/provenance analysis (faster).")
@click.option("--json", "as_json", is_flag=True, help="Print the scorecard JSON.")
@click.option(
    "--markdown", "markdown", type=click.Path(dir_okay=False), help="Write Markdown here."
)
@pass_cli
def scorecard_cmd(
    obj: CliContext,
    suite: str,
    run_id: str | None,
    tasks: str | None,
    runs: int,
    seed: int,
    capacity: float,
    evalset_dir: str | None,
    hide_confidence: bool,
    staged: bool,
    no_analysis: bool,
    as_json: bool,
    markdown: str | None,
) -> None:
    """Score a suite (safety simulation) or a stored run: exit 0 if no gated row blocks, else 2."""
    if runs < 1:
        raise UserError(f"--runs {runs}: must be at least 1")
    if capacity <= 0:
        raise UserError(f"--capacity {capacity}: must be > 0")
    bound = None
    if evalset_dir:
        bound = scorecard_binding(load_evalset(evalset_dir))
    store = obj.store()
    project = obj.settings.project
    if run_id:
        card = _score_stored(store, run_id, project, capacity, not no_analysis)
    else:
        sim = {**SIM_ARGS, "expose_confidence": not hide_confidence}
        card = _score_simulation(
            store,
            project,
            suite,
            _csv(tasks),
            runs,
            seed,
            capacity,
            not no_analysis,
            as_json,
            sim,
            staged,
        )
    card = card.model_copy(update={"evalset": bound})
    if markdown:
        cmd = _command(suite, run_id, tasks, runs, seed, capacity, hide_confidence, staged)
        if evalset_dir:
            cmd += f" --evalset {evalset_dir}"
        Path(markdown).write_text(render_markdown(card, cmd), encoding="utf-8")
    blocks = scorecard_blocking(card)
    if as_json:
        echo_json(card.model_dump(mode="json"))
    else:
        click.echo(render_markdown(card))
        click.echo("gate: " + ("BLOCK -- " + "; ".join(blocks) if blocks else "pass"))
    if blocks:
        # the gate column blocks: a CI step must fail, as `flywheel gate` does (exit 2)
        sys.exit(2)


def _command(
    suite: str,
    run_id: str | None,
    tasks: str | None,
    runs: int,
    seed: int,
    capacity: float,
    hide: bool,
    staged: bool,
) -> str:
    """The command line that rebuilds this card (for the Markdown header)."""
    if run_id:
        return f"flywheel scorecard --trials {run_id} --capacity {capacity}"
    parts = [f"flywheel scorecard --suite {suite} --runs {runs} --seed {seed}"]
    if tasks:
        parts.append(f"--tasks {tasks}")
    if capacity != 0.1:
        parts.append(f"--capacity {capacity}")
    if hide:
        parts.append("--hide-confidence")
    if staged:
        parts.append("--staged")
    return " ".join(parts)


def _csv(value: str | None) -> list[str] | None:
    items = [v.strip() for v in (value or "").split(",") if v.strip()]
    return items or None


def _score_stored(
    store: Any, run_id: str, project: str, capacity: float, analyse: bool = True
) -> Scorecard:
    rows = load_trials(store, run_id=run_id, project=project)
    if not rows:
        raise UserError(f"--trials {run_id}: no stored trials with this run id; see `flywheel run`")
    probed = [r for r in rows if any(s.get("name") == "tools.probe" for s in r["seam_specs"] or [])]
    main = [r for r in rows if r not in probed]
    spans = spans_from_store(store, [r["trace_id"] for r in main], project=project)
    pspans = spans_from_store(store, [r["trace_id"] for r in probed], project=project)
    analysis = None
    if analyse:
        from flywheel.harness import analyse_stored_trial

        analysis = {
            r["trial_id"]: analysis_summary(
                lambda r=r: analyse_stored_trial(store, r["trial_id"], project=project)
            )
            for r in main
        }
    return build_scorecard(
        rows[0]["suite"],
        main,
        spans,
        probe_rows=pspans,
        trial_analysis=analysis,
        capacity=capacity,
    )


def _score_simulation(
    store: Any,
    project: str,
    suite: str,
    tasks: list[str] | None,
    runs: int,
    seed: int,
    capacity: float,
    analyse: bool,
    quiet: bool,
    sim: dict[str, Any] | None = None,
    staged: bool = False,
) -> Scorecard:
    ns = f"scorecard-{seed}"
    run_id = f"run-{uuid.uuid4().hex[:12]}"
    reset_pool(ns)
    agent = AgentSpec("safety_reference", dict(sim or {}))
    _, name = parse_suite(suite)
    inj = injection_task_ids(name)[:1]
    main = plan_trials(
        suite,
        agent,
        tasks=tasks,
        runs=runs,
        seams=_seams(ns, None, seed, staged),
        seed=seed,
        injections=inj,
    )
    probes = [
        s
        for kind in PROBE_KINDS
        for s in plan_trials(
            suite, agent, tasks=tasks, runs=runs, seams=_seams(None, kind, seed), seed=seed + 1
        )
    ]
    exporter = StoreSpanExporter(store, project=project)
    with progress_bar(f"scorecard {suite}", len(main) + len(probes), enabled=not quiet) as adv:

        def on_trial(_r: TrialRecord) -> None:
            adv(1)

        recs = run_trials(main, exporter, on_trial=on_trial, run_id=run_id)
        precs = run_trials(probes, exporter, on_trial=on_trial, run_id=run_id)
    save_trials(store, recs + precs, project=project)
    if exporter.failures:
        raise UserError(f"{exporter.failures} span batch(es) failed to reach the store")
    rows = spans_from_store(store, [r.trace_id for r in recs], project=project)
    prow = spans_from_store(store, [r.trace_id for r in precs], project=project)
    analysis = None
    if analyse:
        from flywheel.harness import analyse_trial

        analysis = {
            r.trial_id: analysis_summary(lambda r=r: analyse_trial(store, r, project=project))
            for r in recs
        }
    return build_scorecard(
        suite, recs, rows, probe_rows=prow, trial_analysis=analysis, capacity=capacity
    )


def register(cli: click.Group) -> None:
    """Add ``flywheel scorecard``."""
    cli.add_command(scorecard_cmd)
