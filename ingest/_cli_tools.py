"""``flywheel tools list|show|import|set|unset``: what each tool does, and why."""

from __future__ import annotations

from pathlib import Path

import click

from flywheel import UserError, local_identity
from flywheel._clikit import CliContext, echo_json, pass_cli
from flywheel.tools import EFFECTS, FIELDS, REACHES, delete_tool, import_manifest, set_tool

from ._tools import list_tools, show_tool


@click.group("tools")
def tools_group() -> None:
    """Tool semantics: effect, reach, touches, reversibility, each with its source."""


def _line(t: dict) -> str:
    eff, reach = t["effect"], t["reach"]
    touches = ",".join(t["touches"]["value"]) or "-"
    return (f"{t['name']:40} {eff['value']:11} {eff['source']:8} {reach['value']:13} "
            f"{touches:24} {t['tier']}")


@tools_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print every tool's decisions as JSON.")
@pass_cli
def list_cmd(obj: CliContext, as_json: bool) -> None:
    """Every tool the project's traces, manifest and observations know."""
    tools = list_tools(obj.store(), obj.settings.project)
    if as_json:
        echo_json({"tools": tools})
        return
    click.echo(f"{'tool':40} {'effect':11} {'source':8} {'reach':13} {'touches':24} tier")
    for t in tools:
        click.echo(_line(t))


@tools_group.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the decisions as JSON.")
@pass_cli
def show_cmd(obj: CliContext, name: str, as_json: bool) -> None:
    """Each decision about tool NAME with the source that made it."""
    t = show_tool(obj.store(), obj.settings.project, name)
    if as_json:
        echo_json(t)
        return
    click.echo(f"{name}{'' if t['known'] else '  (not seen in this project: name only)'}")
    for f in FIELDS:
        d = t[f]
        value = ",".join(d["value"]) if isinstance(d["value"], list) else d["value"]
        click.echo(f"  {f:11} {str(value) or '-':22} {d['source']:9} {d['confidence']:.2f}  "
                   f"{d['origin']}")
    click.echo(f"  sensitive   {t['sensitive']}  (tier {t['tier']})")
    for p in t["problems"]:
        click.echo(f"  problem: {p}")
    if t["ignored_keys"]:
        click.echo(f"  ignored annotation keys ({len(t['ignored_keys'])}): "
                   f"{', '.join(t['ignored_keys'])}")


@tools_group.command("import")
@click.argument("manifest", type=click.Path())
@click.option("--replace", is_flag=True, help="Remove manifest entries the file does not name.")
@pass_cli
def import_cmd(obj: CliContext, manifest: str, replace: bool) -> None:
    """Declare tools from a manifest file (TOML or JSON; see docs/tools.md)."""
    path = Path(manifest)
    if not path.is_file():
        raise UserError(f"no such manifest file: {manifest}")
    fmt = "json" if path.suffix == ".json" else "toml" if path.suffix == ".toml" else None
    names = import_manifest(obj.store(), obj.settings.project, path.read_bytes(), fmt=fmt,
                            replace=replace, actor=local_identity())
    click.echo(f"{len(names)} tools declared from {manifest}")


@tools_group.command("set")
@click.argument("name")
@click.option("--effect", type=click.Choice(EFFECTS))
@click.option("--reach", type=click.Choice(REACHES))
@click.option("--touches", help="Comma-separated: money,credentials,permissions,messages,files,code.")
@click.option("--reversible/--irreversible", default=None)
@click.option("--idempotent/--not-idempotent", default=None)
@pass_cli
def set_cmd(obj: CliContext, name: str, effect: str | None, reach: str | None,
            touches: str | None, reversible: bool | None, idempotent: bool | None) -> None:
    """Override tool NAME's semantics (a manifest entry; the strongest source)."""
    entry = {k: v for k, v in {"effect": effect, "reach": reach, "touches": touches,
                                "reversible": reversible, "idempotent": idempotent}.items()
             if v is not None}
    if not entry:
        raise UserError("nothing to set; pass --effect, --reach, --touches, "
                        "--reversible/--irreversible or --idempotent/--not-idempotent")
    set_tool(obj.store(), obj.settings.project, name, entry, actor=local_identity())
    click.echo(f"{name}: declared {', '.join(sorted(entry))}")


@tools_group.command("unset")
@click.argument("name")
@pass_cli
def unset_cmd(obj: CliContext, name: str) -> None:
    """Remove tool NAME's manifest entry (the other sources decide again)."""
    if not delete_tool(obj.store(), obj.settings.project, name, actor=local_identity()):
        raise UserError(f"tool {name!r} has no manifest entry in project {obj.settings.project}")
    click.echo(f"{name}: manifest entry removed")


def register_tools(cli: click.Group) -> None:
    """Add ``flywheel tools`` to the CLI."""
    cli.add_command(tools_group)
