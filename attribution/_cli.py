"""``flywheel attribute``, ``calibrate-judge`` and ``import-whowhen``: failure attribution."""

from __future__ import annotations

import click

from flywheel import UserError
from flywheel._clikit import CliContext, echo_json, pass_cli, progress_bar

from ._attributor import PRIOR_KINDS, Attribution, attribute_trace
from ._calibration import (
    attribute_with_judge,
    calibrate_judge,
    calibrations_table,
    judge_gate,
    parse_judge,
)
from ._store import save_attributions, select_traces
from ._taxonomy import UNKNOWN, category_distribution
from ._whowhen import import_whowhen


def _since(value: str | None) -> int | None:
    if not value:
        return None
    try:
        from flywheel.ingest import parse_time
    except ImportError:  # pragma: no cover - ingest always ships it
        raise UserError("--since needs ingest's time parser") from None
    return parse_time(value)


def _line(a: Attribution) -> str:
    if not a.failed:
        concerns = sorted({e["kind"] for e in a.evidence if e["kind"] not in PRIOR_KINDS})
        return f"{a.trace_id}  no failure found" + (
            f" (concerns: {', '.join(concerns)})" if concerns else ""
        )
    where = (
        f"step {a.causal_index}"
        if a.causal_index == a.surfaced_index
        else f"caused at step {a.causal_index}, surfaced at step {a.surfaced_index}"
    )
    line = (
        f"{a.trace_id}  {a.category:<24} {where}  agent {a.agent or '-'}  "
        f"confidence {a.confidence:.2f}"
    )
    if a.category == UNKNOWN:
        ups = ", ".join(f"{c} {v:.2f}" for c, v in a.category_scores[:3]) or "none"
        line += f"  (evidence too weak; runner-ups: {ups})"
    return line


@click.command("attribute")
@click.argument("trace_id", required=False)
@click.option(
    "--all", "all_traces", is_flag=True, help="Attribute every trace matching the filter."
)
@click.option("--service", help="Only traces of this service (with --all).")
@click.option(
    "--since", help="Only traces started at/after: ISO 8601, 15m, 2h, 7d, epoch s (with --all)."
)
@click.option("--limit", type=int, help="At most this many traces (with --all).")
@click.option(
    "--failed",
    "assume_failed",
    is_flag=True,
    help="The trace(s) are known failures: name the likeliest step even without error "
    "evidence (low confidence).",
)
@click.option(
    "--judge",
    "judge_spec",
    metavar="URL[#MODEL]",
    help="Also ask a model judge (OpenAI-compatible chat endpoint; key from "
    "FLYWHEEL_JUDGE_API_KEY or OPENAI_API_KEY). Used only when a stored calibration "
    "(flywheel calibrate-judge) reaches --min-kappa; otherwise the deterministic "
    "attribution stands and the command says so.",
)
@click.option(
    "--min-kappa",
    type=float,
    default=None,
    help="Kappa a judge's stored calibration must reach (default FLYWHEEL_JUDGE_MIN_KAPPA or 0.6).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the attributions as JSON.")
@pass_cli
def attribute_cmd(
    obj: CliContext,
    trace_id: str | None,
    all_traces: bool,
    service: str | None,
    since: str | None,
    limit: int | None,
    assume_failed: bool,
    judge_spec: str | None,
    min_kappa: float | None,
    as_json: bool,
) -> None:
    """Where did a failed trace go wrong: category, causal and surfaced step, agent, evidence."""
    if bool(trace_id) == all_traces:
        raise UserError("give one TRACE_ID or --all (with --service/--since/--limit to filter)")
    if (service or since or limit) and not all_traces:
        raise UserError("--service, --since and --limit apply to --all only")
    store = obj.store()
    project = obj.settings.project
    judge = parse_judge(judge_spec) if judge_spec else None
    use_judge, why = (
        judge_gate(store, judge, project=project, min_kappa=min_kappa)
        if judge is not None
        else (False, "")
    )
    if judge is not None and not use_judge:
        click.echo(f"{why}; using the deterministic attribution", err=True)
    if trace_id:
        a = attribute_trace(
            store, trace_id.strip().lower(), project=project, assume_failed=assume_failed
        )
        save_attributions(store, [a], project=project)
        if use_judge and judge is not None:
            a, _ = attribute_with_judge(
                store, a.trace_id, judge, a, project=project, min_kappa=min_kappa
            )
            save_attributions(store, [a], project=project)
        if as_json:
            echo_json({**a.to_json(), "judge_gate": why} if judge is not None else a.to_json())
            return
        if use_judge:
            click.echo(why)
        click.echo(_line(a))
        for e in a.evidence:
            mark = "*" if e["chosen"] else " "
            click.echo(f" {mark} step {e['index']:>3} {e['kind']:<28} {e['detail'][:100]}")
        return
    ids = select_traces(
        store, project=project, service=service, since_ns=_since(since), limit=limit
    )
    out: list[Attribution] = []
    with progress_bar("attributing", len(ids), enabled=not as_json) as advance:
        for tid in ids:
            a = attribute_trace(store, tid, project=project, assume_failed=assume_failed)
            if use_judge and judge is not None:
                save_attributions(store, [a], project=project)
                a, _ = attribute_with_judge(
                    store, tid, judge, a, project=project, min_kappa=min_kappa
                )
            out.append(a)
            if len(out) % 200 == 0:
                save_attributions(store, out[-200:], project=project)
            advance(1)
    save_attributions(store, out[len(out) - len(out) % 200 :], project=project)
    dist = category_distribution(a.category for a in out)
    if as_json:
        echo_json([a.to_json() for a in out])
    else:
        for a in out:
            click.echo(_line(a))
        summary = ", ".join(f"{c} {k}" for c, k in dist["counts"])
        click.echo(f"{len(out)} trace(s) attributed; categories: {summary or 'none'}")
    if dist["warning"]:
        click.echo(f"warning: {dist['warning']}", err=True)


@click.command("import-whowhen")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the imported trace ids as JSON.")
@pass_cli
def import_whowhen_cmd(obj: CliContext, directory: str, as_json: bool) -> None:
    """Import Who&When failure logs (one trace per log; labels kept for scoring only)."""
    from ._whowhen import iter_logs

    total = sum(1 for _ in iter_logs(directory))
    with progress_bar("importing", total, enabled=not as_json) as advance:
        ids = import_whowhen(
            obj.store(), directory, project=obj.settings.project, on_progress=advance
        )
    if as_json:
        echo_json({"directory": directory, "traces": ids})
    else:
        click.echo(f"{len(ids)} log(s) imported from {directory} as traces")


@click.command("calibrate-judge")
@click.option(
    "--judge",
    "judge_spec",
    required=True,
    metavar="URL[#MODEL]",
    help="OpenAI-compatible chat endpoint (key from FLYWHEEL_JUDGE_API_KEY or OPENAI_API_KEY).",
)
@click.option(
    "--labels",
    default="whowhen:algorithm-generated",
    show_default=True,
    help="Labelled set: whowhen:SUBSET (imported logs) or faults (reference-agent "
    "trials with injected faults).",
)
@click.option("--limit", type=int, help="At most this many labelled traces.")
@click.option(
    "--min-kappa",
    type=float,
    default=None,
    help="Kappa every dimension must reach (default FLYWHEEL_JUDGE_MIN_KAPPA or 0.6).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the calibration as JSON.")
@pass_cli
def calibrate_judge_cmd(
    obj: CliContext,
    judge_spec: str,
    labels: str,
    limit: int | None,
    min_kappa: float | None,
    as_json: bool,
) -> None:
    """Measure a model judge against labels (Cohen's kappa, exact agreement) and store it."""
    from ._calibration import labelled_set

    store = obj.store()
    project = obj.settings.project
    judge = parse_judge(judge_spec)
    total = len(labelled_set(store, labels, project=project, limit=limit))
    with progress_bar("asking the judge", total, enabled=not as_json) as advance:
        rec = calibrate_judge(
            store,
            judge,
            labels,
            project=project,
            limit=limit,
            min_kappa=min_kappa,
            on_progress=advance,
        )
    if as_json:
        echo_json(rec)
        return
    for line in calibrations_table([rec]):
        click.echo(line)


def register(cli: click.Group) -> None:
    """Add ``attribute``, ``calibrate-judge`` and ``import-whowhen`` to the ``flywheel`` CLI."""
    cli.add_command(attribute_cmd)
    cli.add_command(calibrate_judge_cmd)
    cli.add_command(import_whowhen_cmd)
