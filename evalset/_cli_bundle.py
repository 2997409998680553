"""``flywheel evalset release|export|verify|exposure|versions``: thin commands over ``_bundle``."""

from __future__ import annotations

import click

from flywheel import local_identity
from flywheel._clikit import CliContext, echo_json, pass_cli
from flywheel.errors import UserError


def register_bundle(cli: click.Group) -> None:
    """Add the ``evalset`` group (versioned bundles) to the ``flywheel`` command."""
    cli.add_command(evalset_group)


_root_opt = click.option(
    "--root",
    type=click.Path(),
    default=None,
    envvar="FLYWHEEL_EVALSETS_DIR",
    help="Directory of released versions (default: beside the chDB store or ./.flywheel/evalsets).",
)
_json_opt = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")


def _root(obj: CliContext, root: str | None) -> str:
    from flywheel.evalset import default_root

    return str(root) if root else str(default_root(obj.settings.store))


@click.group("evalset")
def evalset_group() -> None:
    """Immutable, content-addressed eval-set versions."""


@evalset_group.command("release")
@click.argument("name")
@_root_opt
@click.option(
    "--max-held-out-uses",
    type=int,
    default=None,
    help="Decisions the held-out split may steer before retiring (default: parent's, or 5).",
)
@_json_opt
@pass_cli
def release_cmd(
    obj: CliContext, name: str, root: str | None, max_held_out_uses: int | None, as_json: bool
) -> None:
    """Release the approved tasks of NAME as a new version (a no-op when nothing changed)."""
    from flywheel.evalset._bundle import release_from_store

    result = release_from_store(
        obj.store(),
        _root(obj, root),
        name,
        project=obj.settings.project,
        max_held_out_uses=max_held_out_uses,
        released_by=local_identity(),
    )
    if as_json:
        echo_json(result.to_dict())
        return
    d = result.to_dict()
    what = "released" if result.created else "unchanged, still"
    log = d["changelog"]
    click.echo(
        f"{what} {d['ref']} ({d['tasks']} tasks; dev {d['splits'].get('dev', 0)}, "
        f"held-out {d['splits'].get('held-out', 0)}; +{len(log['added'])} ~{len(log['changed'])} "
        f"-{len(log['removed'])}, retired {len(log['retired'])}) at {d['path']}"
    )


@evalset_group.command("export")
@click.argument("ref")
@click.argument("out_dir", type=click.Path())
@_root_opt
@_json_opt
@pass_cli
def export_cmd(obj: CliContext, ref: str, out_dir: str, root: str | None, as_json: bool) -> None:
    """Copy version REF (NAME@VERSION) and its exposure log to OUT_DIR, verified."""
    from flywheel.evalset._bundle import export_bundle, verify_bundle

    out = export_bundle(_root(obj, root), ref, out_dir)
    rep = verify_bundle(out)
    if as_json:
        echo_json(rep.to_dict())
    else:
        click.echo(f"exported {rep.name}@{rep.version} ({rep.tasks} tasks) to {out}")


@evalset_group.command("verify")
@click.argument("directory", type=click.Path())
@_json_opt
def verify_cmd(directory: str, as_json: bool) -> None:
    """Recompute every hash of a bundle directory (no database); exit 1 on any problem."""
    from flywheel.evalset._bundle import verify_bundle

    rep = verify_bundle(directory)
    if as_json:
        echo_json(rep.to_dict())
    else:
        for p in rep.problems:
            click.echo(f"problem: {p}", err=True)
        if rep.ok:
            flag = "; held-out split flagged for retirement" if rep.retire else ""
            click.echo(
                f"ok: {rep.name}@{rep.version}, {rep.tasks} tasks, splits {rep.splits}, "
                f"held-out uses {rep.held_out_uses}{flag}"
            )
    if not rep.ok:
        raise UserError(f"{directory} does not verify: {len(rep.problems)} problem(s)")


@evalset_group.command("exposure")
@click.argument("ref")
@click.option(
    "--decision", default=None, help="Record one use of the held-out split: what it decided."
)
@click.option("--config", "configs", multiple=True, help="A configuration compared (repeatable).")
@_root_opt
@_json_opt
@pass_cli
def exposure_cmd(
    obj: CliContext,
    ref: str,
    decision: str | None,
    configs: tuple[str, ...],
    root: str | None,
    as_json: bool,
) -> None:
    """Record (with --decision) or show how often REF's held-out split steered a decision."""
    from flywheel.evalset._bundle import exposure_status, record_exposure

    r = _root(obj, root)
    status = (
        record_exposure(r, ref, decision, by=local_identity(), configs=configs)
        if decision is not None
        else exposure_status(r, ref)
    )
    if as_json:
        echo_json(status.to_dict())
        return
    flag = " -> retire the held-out split into dev at the next release" if status.retire else ""
    click.echo(
        f"{status.name}@{status.version}: held-out used {status.uses}/{status.max_uses}{flag}"
    )


@evalset_group.command("versions")
@click.argument("name")
@_root_opt
@_json_opt
@pass_cli
def versions_cmd(obj: CliContext, name: str, root: str | None, as_json: bool) -> None:
    """List the released versions of NAME, oldest first."""
    from flywheel.evalset._bundle import versions

    rows = versions(_root(obj, root), name)
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        click.echo(
            f"{r['sequence']:>3}  {name}@{r['version']}  parent {r['parent'] or '-'}  "
            f"{r['tasks']} tasks"
        )
