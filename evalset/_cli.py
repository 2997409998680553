"""``flywheel gate`` and ``flywheel grade``: thin commands over the public functions."""

from __future__ import annotations

import sys

import click

from flywheel._clikit import echo_json


def register(cli: click.Group) -> None:
    """Add ``gate``, ``grade`` and the ``evalset`` group to the ``flywheel`` group."""
    from ._cli_bundle import register_bundle

    cli.add_command(gate_cmd)
    cli.add_command(grade_cmd)
    register_bundle(cli)


@click.command("gate")
@click.option(
    "--evalset",
    "evalset_dir",
    required=True,
    type=click.Path(),
    help="Eval-set directory (tasks.jsonl).",
)
@click.option("--baseline", required=True, type=click.Path(), help="Baseline trials (JSONL).")
@click.option("--candidate", required=True, type=click.Path(), help="Candidate trials (JSONL).")
@click.option(
    "--rules", required=True, type=click.Path(), help="Predeclared rule file (gate.toml)."
)
@click.option(
    "--out", "out_dir", required=True, type=click.Path(), help="Directory for report.json/.md/.png."
)
@click.option(
    "--scorecard",
    "scorecard",
    type=click.Path(),
    help="Safety scorecard JSON (`flywheel scorecard --evalset DIR --json`) for the same eval "
    "set version; every row whose gate blocks is a blocking reason.",
)
@click.option(
    "--config-id",
    "config_ids",
    multiple=True,
    metavar="ARM=ID",
    help="Keep only this configuration in an arm whose file holds several, e.g. "
    "--config-id candidate=cand_v2 (repeatable; arms: baseline, candidate).",
)
@click.option("--json", "as_json", is_flag=True, help="Print report.json to stdout.")
def gate_cmd(
    evalset_dir: str,
    baseline: str,
    candidate: str,
    rules: str,
    out_dir: str,
    scorecard: str | None,
    config_ids: tuple[str, ...],
    as_json: bool,
) -> None:
    """Apply the release rule: exit 0 ship, 2 block or insufficient evidence, 1 bad input."""
    from flywheel.evalset._gate import gate_paths

    from flywheel.errors import UserError

    picks: dict[str, str] = {}
    for item in config_ids:
        arm, sep, cid = item.partition("=")
        if not sep or not cid:
            raise UserError(f"--config-id {item!r}: write ARM=ID, e.g. candidate=cand_v2")
        picks[arm.strip()] = cid.strip()
    result = gate_paths(
        evalset_dir, baseline, candidate, rules, scorecard=scorecard, config_ids=picks,
        out_dir=out_dir,
    )
    if as_json:
        echo_json(result.report)
    else:
        click.echo(f"verdict: {result.verdict}")
        for reason in result.reasons:
            click.echo(f"  - [{reason.code}] {reason.message}")
        click.echo(f"report: {result.files['md']}")
    if result.exit_code:
        # SystemExit, not ctx.exit: the core group runs click with
        # standalone_mode=False, where click would turn Exit into a return value.
        sys.exit(result.exit_code)


@click.command("grade")
@click.option(
    "--evalset",
    "evalset_dir",
    required=True,
    type=click.Path(),
    help="Eval-set directory (tasks.jsonl).",
)
@click.option("--trials", required=True, type=click.Path(), help="Trials to grade (JSONL).")
@click.option("--out", "out_file", required=True, type=click.Path(), help="Graded trials (JSONL).")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict counts as JSON.")
def grade_cmd(evalset_dir: str, trials: str, out_file: str, as_json: bool) -> None:
    """Grade trials against their tasks' criteria (four-verdict rule)."""
    from flywheel.evalset._bundle_read import load_evalset
    from flywheel.evalset._graders import GradingContext, grade_trial
    from flywheel.evalset._trials_io import read_trials, write_trials
    from flywheel.evalset._verdict import tally

    from flywheel.errors import UserError

    es = load_evalset(evalset_dir)
    items = read_trials(trials)
    unknown = sorted({t.task_id for t in items} - set(es.tasks))
    if unknown:
        raise UserError(f"trials reference task(s) not in {evalset_dir}: {', '.join(unknown[:5])}")
    context = GradingContext(base_dir=es.base_dir)
    cache: dict[str, object] = {}
    graded = [grade_trial(es.tasks[t.task_id], t, context, cache=cache) for t in items]  # type: ignore[arg-type]
    write_trials(out_file, graded)
    t = tally(g.verdict for g in graded if g.verdict is not None)
    summary = {
        "trials": t.n,
        "accepted": t.accepted,
        "failed": t.failed,
        "pending": t.pending,
        "unknown": t.unknown,
        "rate": t.rate,
        "lo": float(t.bounds.lo),
        "hi": float(t.bounds.hi),
        "out": out_file,
    }
    if as_json:
        echo_json(summary)
    else:
        click.echo(
            f"{t.accepted}/{t.n} accepted, {t.failed} failed, {t.pending} pending, "
            f"{t.unknown} unknown -> {out_file}"
        )
