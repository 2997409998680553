"""Ingest's commands: ``serve``, ``ingest FILE``, ``traces list|show`` and ``tools ...``."""

from __future__ import annotations

import os
from pathlib import Path

import click

from flywheel import check_serving, local_identity, mask, record_audit
from flywheel._clikit import CliContext, echo_json, pass_cli, print_table, progress_bar



@click.command("serve")
@click.option("--host", default=None, help="Bind address (default 127.0.0.1; FLYWHEEL_INGEST__HOST).")
@click.option("--port", type=int, default=None, help="Port (default 4318; FLYWHEEL_INGEST__PORT).")
@click.option("--wal-dir", type=click.Path(file_okay=False), default=None,
              help="Write-ahead log directory (default beside the chDB store).")
@click.option("--decode-workers", type=int, default=None,
              help="Processes decoding OTLP bodies (default 0 with the compiled decoder, "
                   "which decodes in the receiver without the GIL; else 1).")
@click.option("--insecure-no-auth", is_flag=True,
              help="Serve without authentication (FLYWHEEL_AUTH=off): anyone who reaches the "
              "port acts as 'anonymous' with every scope.")
@pass_cli
def serve_cmd(obj: CliContext, host: str | None, port: int | None, wal_dir: str | None,
              decode_workers: int | None, insecure_no_auth: bool) -> None:
    """Run the platform: OTLP/HTTP receiver on /v1/traces and the REST API.

    Any address but loopback needs authentication: a key or FLYWHEEL_ADMIN_TOKEN
    must exist, or --insecure-no-auth must say so.
    """
    import uvicorn

    from flywheel._app import create_app

    settings = obj.settings.for_serving()
    if host:
        settings.ingest.host = host
    if port:
        settings.ingest.port = port
    if wal_dir:
        settings.ingest.wal_dir = Path(wal_dir)
    if decode_workers is not None:
        settings.ingest.decode_workers = decode_workers
    elif "FLYWHEEL_INGEST__DECODE_WORKERS" not in os.environ:
        from ._decode import AVAILABLE

        # the compiled decoder runs without the GIL in the receiver; Python decoding moves
        # off the receiver's GIL into a worker process
        settings.ingest.decode_workers = 0 if AVAILABLE else 1
    if insecure_no_auth:
        settings.auth = "off"
    from ._api import open_writer

    store = obj.store()
    warning = check_serving(settings, store, settings.ingest.host)
    writer = open_writer(settings, store)  # a log held by another server: one-line error here
    app = create_app(settings, store)
    app.state.opened_writer = writer
    record_audit(store, "server.start", actor=local_identity(),
                 detail={"host": settings.ingest.host, "port": settings.ingest.port,
                         "auth": settings.auth, "admin_token": settings.admin_token is not None})
    if warning:
        click.echo(warning, err=True)
    click.echo(
        f"flywheel serving on http://{settings.ingest.host}:{settings.ingest.port} "
        f"(OTLP: /v1/traces, API: /api, store: {mask(settings.store)}, auth: {settings.auth})",
        err=True,
    )
    # while it serves, CLI commands on this store find it through a file in the store
    # directory (written and removed by the app's lifespan: uvicorn re-raises SIGTERM)
    app.state.announce = (settings.store, settings.ingest.host, settings.ingest.port)
    uvicorn.run(app, host=settings.ingest.host, port=settings.ingest.port,
                log_level="warning", access_log=False, timeout_keep_alive=30)


@click.command("ingest")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the import summary as JSON.")
@pass_cli
def ingest_cmd(obj: CliContext, files: tuple[str, ...], as_json: bool) -> None:
    """Import OTLP JSON files or directories of them (the OpenTelemetry file exporter's format)."""
    from ._files import import_otlp_json, otlp_files

    files = tuple(str(f) for f in otlp_files(files))
    store = obj.store()
    results = []
    with progress_bar("importing", len(files), enabled=not as_json) as advance:
        for f in files:
            results.append(import_otlp_json(store, f, project=obj.settings.project))
            advance()
    if as_json:
        echo_json({"files": results})
        return
    for r in results:
        extra = f", {r.rejected} rejected ({'; '.join(r.reasons or [])})" if r.rejected else ""
        click.echo(f"{r.path}: {r.spans} spans from {r.requests} request(s){extra}")


@click.command("provenance")
@click.argument("trace_id")
@click.option("--recompute", is_flag=True, help="Infer again instead of reading stored records.")
@click.option("--json", "as_json", is_flag=True, help="Print the records as JSON.")
@pass_cli
def provenance_cmd(obj: CliContext, trace_id: str, recompute: bool, as_json: bool) -> None:
    """Where every tool argument of a trace came from (source, method, trust, flags)."""
    from ._provenance_store import compute_provenance, read_provenance

    server = obj.server()
    if server is not None:  # a running server holds the store: ask its API
        doc = server.get(f"/api/traces/{trace_id}/provenance", recompute=recompute or None)
        rows = doc["arguments"]
    else:
        store, project = obj.store(), obj.settings.project
        if recompute:
            compute_provenance(store, trace_id, project=project)
        rows = read_provenance(store, trace_id, project=project)
    flagged = sum(1 for r in rows if r["flags"])
    delegated = sum(1 for r in rows if r["method"] == "delegated")
    if as_json:
        echo_json({"trace_id": trace_id, "arguments": rows,
                   "flagged": flagged, "delegated": delegated})
        return
    from rich.markup import escape

    rows_out = []
    for r in rows:
        trust = "trusted" if r["trusted"] else (
            "delegated" if r["method"] == "delegated" else "UNTRUSTED")
        rows_out.append([r["span_id"], escape(r["tool_name"]), escape(r["path"]), r["source_kind"],
                         r["source_span_id"] or "-", r["method"], f"{r['confidence']:.2f}",
                         trust, ",".join(r["flags"]) or "-"])
    print_table(
        ["span", "tool", "argument", "source", "source span", "method", "conf", "trust", "flags"],
        rows_out, ids=(0, 4), right=(6,), title=f"argument provenance of {trace_id}",
        caption=f"{flagged} flagged, {delegated} untrusted but delegated by the user",
    )


def register(cli: click.Group) -> None:
    """Add ingest's commands to the ``flywheel`` CLI."""
    cli.add_command(serve_cmd)
    cli.add_command(ingest_cmd)
    cli.add_command(provenance_cmd)
    from ._cli_tools import register_tools

    register_tools(cli)
    try:
        from ._cli_traces import register_traces
    except ImportError:  # pragma: no cover - the read side lands separately
        return
    register_traces(cli)
