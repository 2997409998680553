"""``flywheel promote sample|dedupe|redact|draft|run|queue``: thin commands over the API."""

from __future__ import annotations

from typing import Any

import click

from flywheel import local_identity
from flywheel._clikit import CliContext, echo_json, pass_cli, progress_bar, stderr_console


def register(cli: click.Group) -> None:
    """Add the ``promote`` group to the ``flywheel`` command."""
    cli.add_command(promote_group)


@click.group("promote")
def promote_group() -> None:
    """Turn production traces into reviewed eval tasks (sample -> dedupe -> redact -> draft)."""


_policy_opt = click.option(
    "--policy",
    "policy_path",
    type=click.Path(),
    default=None,
    help="Promotion policy file (.toml or .json); default: the built-in policy.",
)
_json_opt = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
_evalset_opt = click.option(
    "--evalset", default=None, help="Only candidates feeding this eval set."
)


def _policy(obj: CliContext, path: str | None) -> Any:
    from flywheel.promote._sampling import load_policy

    policy = load_policy(path)
    if path is None and obj.settings.project != policy.project:
        policy = policy.model_copy(update={"project": obj.settings.project})
    return policy


def _stage_rows(cands: list[Any]) -> list[dict[str, Any]]:
    return [c.summary() for c in cands]


def _do_sample(obj: CliContext, policy: Any, trace_ids: tuple[str, ...], golden: bool) -> list[Any]:
    from flywheel.promote._candidates import sample_candidates

    return sample_candidates(obj.store(), policy, trace_ids=list(trace_ids) or None, golden=golden)


@promote_group.command("sample")
@_policy_opt
@click.option(
    "--trace", "trace_ids", multiple=True, help="Promote this trace explicitly (repeatable)."
)
@click.option(
    "--golden", is_flag=True, help="Mark explicitly promoted incidents as golden (must-not-break)."
)
@_json_opt
@pass_cli
def sample_cmd(
    obj: CliContext,
    policy_path: str | None,
    trace_ids: tuple[str, ...],
    golden: bool,
    as_json: bool,
) -> None:
    """Sample candidates by the policy (failures first), or promote traces by id."""
    policy = _policy(obj, policy_path)
    cands = _do_sample(obj, policy, trace_ids, golden)
    if as_json:
        echo_json({"policy": policy.policy_id, "sampled": _stage_rows(cands)})
        return
    fails = sum(c.source == "failure" for c in cands)
    click.echo(
        f"{len(cands)} candidate(s) sampled ({fails} failure(s)) by policy {policy.policy_id}"
    )


@promote_group.command("dedupe")
@_evalset_opt
@_json_opt
@pass_cli
def dedupe_cmd(obj: CliContext, evalset: str | None, as_json: bool) -> None:
    """Collapse near-duplicate candidates (MinHash + LSH, verified by exact Jaccard)."""
    from flywheel.promote._candidates import dedupe_candidates, list_candidates

    store = obj.store()
    n = len(
        list_candidates(store, project=obj.settings.project, evalset=evalset, stages=["sampled"])
    )
    with progress_bar("dedupe", n, enabled=not as_json) as advance:
        out = dedupe_candidates(
            store, project=obj.settings.project, evalset=evalset, progress=advance
        )
    _report_stage(
        out, as_json, "deduplicated", extra=lambda o: sum(c.stage == "duplicate" for c in o)
    )


@promote_group.command("redact")
@_evalset_opt
@_policy_opt
@click.option(
    "--workers", default=1, show_default=True, help="Redaction processes (0: one per CPU)."
)
@_json_opt
@pass_cli
def redact_cmd(
    obj: CliContext, evalset: str | None, policy_path: str | None, workers: int, as_json: bool
) -> None:
    """Redact PII in the deduplicated candidates (consistent pseudonyms per trace)."""
    from flywheel.promote._candidates import list_candidates, redact_candidates

    store = obj.store()
    policy = _policy(obj, policy_path)
    n = len(
        list_candidates(store, project=obj.settings.project, evalset=evalset, stages=["deduped"])
    )
    with progress_bar("redact", n, enabled=not as_json) as advance:
        out = redact_candidates(
            store,
            project=obj.settings.project,
            evalset=evalset,
            policy=policy.redaction,
            workers=workers,
            progress=advance,
        )
    _report_stage(out, as_json, "redacted")


@promote_group.command("draft")
@_evalset_opt
@_policy_opt
@_json_opt
@pass_cli
def draft_cmd(obj: CliContext, evalset: str | None, policy_path: str | None, as_json: bool) -> None:
    """Draft a task from every redacted candidate (for review)."""
    from flywheel.promote._candidates import list_candidates
    from flywheel.promote._draft import draft_candidates

    store = obj.store()
    policy = _policy(obj, policy_path)
    n = len(
        list_candidates(store, project=obj.settings.project, evalset=evalset, stages=["redacted"])
    )
    with progress_bar("draft", n, enabled=not as_json) as advance:
        out = draft_candidates(
            store,
            project=obj.settings.project,
            evalset=evalset,
            held_out_fraction=policy.held_out_fraction,
            budget_factor=policy.budget_factor,
            progress=advance,
        )
    _report_stage(out, as_json, "drafted")


def _report_stage(out: list[Any], as_json: bool, verb: str, extra: Any = None) -> None:
    if as_json:
        echo_json({verb: _stage_rows(out)})
        return
    note = f" ({extra(out)} duplicate(s))" if extra else ""
    click.echo(f"{len(out)} candidate(s) {verb}{note}")


@promote_group.command("run")
@_policy_opt
@click.option(
    "--trace", "trace_ids", multiple=True, help="Promote this trace explicitly (repeatable)."
)
@click.option("--golden", is_flag=True, help="Mark explicitly promoted incidents as golden.")
@click.option(
    "--workers", default=1, show_default=True, help="Redaction processes (0: one per CPU)."
)
@_json_opt
@pass_cli
def run_cmd(
    obj: CliContext,
    policy_path: str | None,
    trace_ids: tuple[str, ...],
    golden: bool,
    workers: int,
    as_json: bool,
) -> None:
    """Sample, dedupe, redact and draft in one go; the drafts wait in the review queue."""
    from flywheel.promote._candidates import dedupe_candidates, redact_candidates
    from flywheel.promote._draft import draft_candidates

    store = obj.store()
    policy = _policy(obj, policy_path)
    project, evalset = policy.project, policy.evalset
    sampled = _do_sample(obj, policy, trace_ids, golden)
    with progress_bar("dedupe", len(sampled), enabled=not as_json) as advance:
        deduped = dedupe_candidates(store, project=project, evalset=evalset, progress=advance)
    kept = sum(c.stage == "deduped" for c in deduped)
    with progress_bar("redact", kept, enabled=not as_json) as advance:
        redacted = redact_candidates(
            store,
            project=project,
            evalset=evalset,
            policy=policy.redaction,
            workers=workers,
            progress=advance,
        )
    with progress_bar("draft", len(redacted), enabled=not as_json) as advance:
        drafted = draft_candidates(
            store,
            project=project,
            evalset=evalset,
            held_out_fraction=policy.held_out_fraction,
            budget_factor=policy.budget_factor,
            progress=advance,
        )
    summary = {
        "policy": policy.policy_id,
        "evalset": evalset,
        "sampled": len(sampled),
        "failures": sum(c.source == "failure" for c in sampled),
        "duplicates": len(deduped) - kept,
        "redacted": len(redacted),
        "pii_replaced": sum(c.report().get("total", 0) for c in redacted),
        "drafted": [c.candidate_id for c in drafted],
    }
    if as_json:
        echo_json(summary)
        return
    stderr_console().print(
        f"sampled {summary['sampled']} ({summary['failures']} failures), "
        f"{summary['duplicates']} duplicate(s), redacted {summary['redacted']} "
        f"({summary['pii_replaced']} PII values), drafted {len(drafted)}"
    )
    click.echo(f"{len(drafted)} draft(s) wait for review in eval set {evalset!r}")


@promote_group.command("queue")
@_evalset_opt
@click.option("--status", default=None, help="open, claimed, needs-info, approved or rejected.")
@click.option("--slice", "slice_", default=None, help="Only this slice.")
@click.option("--limit", default=100, show_default=True)
@_json_opt
@pass_cli
def queue_cmd(
    obj: CliContext,
    evalset: str | None,
    status: str | None,
    slice_: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """List the review queue."""
    from flywheel.promote._review import queue

    items = queue(
        obj.store(),
        project=obj.settings.project,
        evalset=evalset,
        status=status,
        slice=slice_,
        limit=limit,
    )
    if as_json:
        echo_json([i.to_dict() for i in items])
        return
    for i in items:
        d = i.to_dict()
        click.echo(
            f"{d['candidate_id']}  {d['review']['status']:<10} v{d['review']['version']:<3} "
            f"{d['source']:<8} {d['slice']:<16} {d['task_id']}  {','.join(d['reasons'])}"
        )
    click.echo(f"{len(items)} candidate(s)")


@promote_group.command("allow-leak")
@click.argument("evalset")
@click.option("--task", "task_id", required=True, help="Task id the release scanner reported.")
@click.option("--path", "path", required=True, help="JSON path the release scanner reported.")
@click.option("--entity", required=True, help="Entity type reported (NAME, EMAIL, SECRET...).")
@click.option("--reason", required=True, help="What you checked at that path.")
@click.option("--json", "as_json", is_flag=True, help="Print the event as JSON.")
@pass_cli
def allow_leak_cmd(
    obj: CliContext,
    evalset: str,
    task_id: str,
    path: str,
    entity: str,
    reason: str,
    as_json: bool,
) -> None:
    """Let one finding of the release scanner into EVALSET's releases (an append-only event).

    Recorded as the operator of this machine (``local:USER``); reviewers with a
    key record it through ``POST /api/promote/leak-exceptions``.
    """
    from flywheel.promote import record_leak_exception

    out = record_leak_exception(
        obj.store(),
        evalset=evalset,
        task_id=task_id,
        path=path,
        entity=entity,
        reviewer=local_identity(),
        reason=reason,
        project=obj.settings.project,
    )
    if as_json:
        echo_json(out)
    else:
        click.echo(f"exception recorded: {task_id or 'manifest'} {path} {entity} by {out['reviewer']}")
