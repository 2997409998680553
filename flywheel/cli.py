"""The ``flywheel`` command: global options, error mapping, and registration.

This module only registers: each package keeps its subcommands in its own
``_cli.py`` with ``register(cli)``. A ``FlywheelError`` prints one line and
exits with its code; Ctrl-C exits 130; nothing prints a traceback unless
``FLYWHEEL_DEBUG=1``.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click
from pydantic import ValidationError

from . import __version__
from ._audit import read_audit
from ._auth import (
    SCOPES,
    auth_state,
    create_key,
    list_keys,
    live_key_count,
    local_identity,
    revoke_key,
)
from ._clikit import CliContext, echo_json, pass_cli
from ._config import Settings
from ._secrets import install_log_masking, mask, settings_view
from .errors import FlywheelError

#: Packages whose ``_cli.register`` adds commands, in help order, with the
#: heading ``flywheel --help`` shows above their commands (where the job lives).
COMMAND_PACKAGES = {
    "ingest": "Receive and read traces (ingest/)",
    "promote": "Promote incidents to reviewed eval tasks (promote/)",
    "evalset": "Eval sets, grading and the release gate (evalset/)",
    "side_effects": "Side effects from state diffs (side_effects/)",
    "harness": "Run agents on stateful environments (harness/)",
    "attribution": "Failure attribution (attribution/)",
    "safety": "Safety scorecard (safety/)",
    "ablation": "Oracle-component ablations (ablation/)",
    "tui": "Review in the terminal (tui/)",
}
#: The top-level commands each package registers: a command imports only its
#: own package's CLI module (a second or more of imports saved on every run);
#: ``--help`` loads them all. ``tests/flywheel/test_cli_startup.py`` holds this
#: table equal to what each ``register`` adds.
PACKAGE_COMMANDS = {
    "ingest": ("serve", "ingest", "provenance", "tools", "traces"),
    "promote": ("promote",),
    "evalset": ("evalset", "gate", "grade"),
    "side_effects": ("side-effects",),
    "harness": ("analyse", "demo", "run"),
    "attribution": ("attribute", "calibrate-judge", "import-whowhen"),
    "safety": ("scorecard",),
    "ablation": ("ablate",),
    "tui": ("review",),
}
CORE_HEADING = "Store, settings and keys (flywheel/)"


class FlywheelGroup(click.Group):
    """A click group that maps the exception tree to exit codes.

    ``--help`` lists the commands under the package that owns them.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sections: dict[str, list[str]] = {}
        self.loaded: set[str] = set()

    def load_package(self, package: str) -> list[str]:
        """Register ``package``'s commands (once); return the names it added."""
        if package not in self.loaded:
            before = set(self.commands)
            importlib.import_module(f"flywheel.{package}._cli").register(self)
            self.loaded.add(package)
            self.sections[COMMAND_PACKAGES[package]] = sorted(set(self.commands) - before)
        return self.sections[COMMAND_PACKAGES[package]]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A package's command, its CLI module imported on first use."""
        if cmd_name not in self.commands:
            owner = next((p for p, names in PACKAGE_COMMANDS.items() if cmd_name in names), None)
            if owner is None:  # an unknown name: every package may still add it
                for package in COMMAND_PACKAGES:
                    self.load_package(package)
            else:
                self.load_package(owner)
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command (all packages loaded)."""
        for package in COMMAND_PACKAGES:
            self.load_package(package)
        return super().list_commands(ctx)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """One section per package, so the help says where each job lives."""
        self.list_commands(ctx)
        owned = {name for names in self.sections.values() for name in names}
        core = [n for n in self.list_commands(ctx) if n not in owned]
        ordered = [(h, self.sections[h]) for h in COMMAND_PACKAGES.values() if h in self.sections]
        for heading, names in [(CORE_HEADING, core), *ordered]:
            rows = []
            for name in sorted(names):
                cmd = self.get_command(ctx, name)
                if cmd is not None and not cmd.hidden:
                    rows.append((name, cmd.get_short_help_str(formatter.width - 24)))
            if rows:
                with formatter.section(heading):
                    formatter.write_dl(rows)

    def main(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D102
        try:
            rv = super().main(*args, **{**kwargs, "standalone_mode": False})
            if isinstance(rv, int) and not isinstance(rv, bool):
                sys.exit(rv)  # ctx.exit(code) returns the code without standalone mode
            return rv
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.message = mask(exc.message)
            exc.show()
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("aborted", err=True)
            sys.exit(130)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except FlywheelError as exc:
            if os.environ.get("FLYWHEEL_DEBUG"):
                raise
            click.echo(f"error: {mask(exc.message)}", err=True)
            sys.exit(exc.exit_code)
        except ValidationError as exc:
            if os.environ.get("FLYWHEEL_DEBUG"):
                raise
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            click.echo(mask(f"error: invalid setting {where}: {first.get('msg')}"), err=True)
            sys.exit(1)


@click.group(cls=FlywheelGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="flywheel")
@click.option(
    "--store",
    envvar="FLYWHEEL_STORE",
    help="chdb:///PATH (embedded, default ./.flywheel/store) or clickhouse://USER:PASS@HOST:8123/DB.",
)
@click.option("--otel-table", envvar="FLYWHEEL_OTEL_TABLE", help="Span table (default otel_traces).")
@click.option("--project", envvar="FLYWHEEL_PROJECT", help="Project id (default 'default').")
@click.option("--cluster", envvar="FLYWHEEL_CLUSTER", help="ClickHouse cluster name (cluster mode).")
@click.pass_context
def cli(
    ctx: click.Context,
    store: str | None,
    otel_table: str | None,
    project: str | None,
    cluster: str | None,
) -> None:
    """trace-flywheel: agent traces in, eval sets and release decisions out."""
    overrides = {
        k: v
        for k, v in {
            "store": store, "otel_table": otel_table, "project": project, "cluster": cluster
        }.items()
        if v
    }
    install_log_masking()
    cli_ctx = CliContext(Settings(**overrides))
    ctx.obj = cli_ctx
    ctx.call_on_close(cli_ctx.close)


@cli.command("migrate")
@click.option("--json", "as_json", is_flag=True, help="Print the applied migrations as JSON.")
@pass_cli
def migrate_cmd(obj: CliContext, as_json: bool) -> None:
    """Create or upgrade every table of the store."""
    applied = obj.store(migrate=False).migrate()
    if as_json:
        echo_json({"store": mask(obj.settings.store), "applied": applied})
    else:
        click.echo(f"{len(applied)} migration(s) applied to {mask(obj.settings.store)}")


@cli.command("config")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@pass_cli
def config_cmd(obj: CliContext, as_json: bool) -> None:
    """Show the settings `flywheel serve` runs with (flags > FLYWHEEL_* environment > defaults)
    and the auth state."""
    served = _served_config(obj)
    if served is not None:  # a running server holds the store: its settings are the truth
        data = served
    else:
        data = settings_view(obj.settings.for_serving())
        live: int | None = 0  # an embedded store not created yet holds no key
        if _store_exists(obj.settings.store):
            try:
                live = live_key_count(obj.store(migrate=False))
            except FlywheelError:
                live = None  # the store did not answer: the state says unknown
        data["auth_state"] = auth_state(obj.settings, live).to_dict()
    if as_json:
        echo_json(data)
        return
    for k, v in data.items():
        for name, value in (v.items() if isinstance(v, dict) else [("", v)]):
            click.echo(f"{k}{'.' + name if name else ''}: {value}")


def _served_config(obj: CliContext) -> dict[str, Any] | None:
    """The running local server's settings and true auth state (None: no server holds the
    store, or it did not answer: then the store is read here, or the state is unknown)."""
    server = obj.server()
    if server is None:
        return None
    try:
        remote = server.get("/api/config")
    except FlywheelError:
        return None
    data = dict(remote["settings"])
    data["auth_state"] = remote["auth"]
    data["served_by"] = server.server.url
    return data


def _store_exists(url: str) -> bool:
    """False for an embedded store whose directory is absent (showing config creates nothing)."""
    if not url.startswith("chdb://"):
        return True
    from urllib.parse import unquote, urlparse

    p = urlparse(url)
    path = unquote(p.netloc + p.path)
    path = path[1:] if path.startswith(("/./", "/../")) else path
    return os.path.isdir(path)


@cli.command("audit")
@click.option("--project", "audit_project", default=None, help="Only this project's entries.")
@click.option("--action", default=None, help="Only this action (key.create, evalset.release...).")
@click.option("--limit", type=int, default=100, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@pass_cli
def audit_cmd(obj: CliContext, audit_project: str | None, action: str | None, limit: int,
              as_json: bool) -> None:
    """The audit log, newest first: keys, releases, exceptions, server starts (who and when)."""
    rows = read_audit(obj.store(), project=audit_project, action=action, limit=limit)
    if as_json:
        echo_json(rows)
        return
    import datetime as dt

    for e in rows:
        when = dt.datetime.fromtimestamp(e.at / 1e9, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        click.echo(f"{when}Z  {e.action:<17} {e.actor:<20} {e.project or '-':<12} {e.target}")


@cli.group("keys")
def keys_group() -> None:
    """Project API keys with scopes (stored hashed; see `flywheel config` for the auth state)."""


@keys_group.command("create")
@click.option("--project", "key_project", required=True, help="Project the key acts for.")
@click.option("--scope", "scopes", multiple=True, required=True, type=click.Choice(SCOPES),
              help="What the key may do (repeatable): ingest (agents: write spans only), "
              "read, review (a named reviewer), admin (keys, audit, configuration).")
@click.option("--name", default="", help="The key's identity (required for review: the reviewer).")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@pass_cli
def keys_create(obj: CliContext, key_project: str, scopes: tuple[str, ...], name: str,
                as_json: bool) -> None:
    """Create a key; it is printed once and never stored in clear."""
    server = obj.server()
    if server is not None:  # a running server holds the store: its key routes
        key = server.post("/api/keys", {"scopes": list(scopes), "name": name},
                          project=key_project)["key"]
    else:
        key = create_key(obj.store(), key_project, scopes, name=name, actor=local_identity())
    if as_json:
        echo_json({"project": key_project, "scopes": list(scopes), "name": name, "key": key})
    else:
        click.echo(key)


@keys_group.command("list")
@click.option("--project", "key_project", default=None,
              help="Only this project's keys (through a running server: this or the "
              "configured project).")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@pass_cli
def keys_list(obj: CliContext, key_project: str | None, as_json: bool) -> None:
    """List keys (ids, projects, identities, scopes; never secrets)."""
    server = obj.server()
    if server is not None:
        keys = list(server.get("/api/keys", project=key_project or obj.settings.project))
    else:
        keys = [k.to_dict() for k in list_keys(obj.store(), project=key_project)]
    if as_json:
        echo_json(keys)
        return
    for k in keys:
        state = "revoked" if k["revoked"] else "live"
        click.echo(f"{k['key_id']}  {k['project_id']:<20} {state:<8} {','.join(k['scopes']):<24} "
                   f"{k['identity']}")


@keys_group.command("revoke")
@click.argument("key_id")
@click.option("--project", "key_project", default=None,
              help="The key's project, through a running server (default: the configured one).")
@pass_cli
def keys_revoke(obj: CliContext, key_id: str, key_project: str | None) -> None:
    """Revoke a key by id, or by the key itself (refused at once by a server it goes
    through, within 5 s by any other)."""
    parts = key_id.split("_")
    if len(parts) >= 3 and parts[0] == "fwk":  # the whole key: its id is the second part
        key_id = parts[1]
    server = obj.server()
    if server is not None:
        server.post(f"/api/keys/{key_id}/revoke", project=key_project or obj.settings.project)
    else:
        revoke_key(obj.store(), key_id, actor=local_identity(), project=key_project)
    click.echo(f"revoked {key_id}")


def main() -> None:
    """Console-script entry point."""
    cli.main(prog_name="flywheel")
