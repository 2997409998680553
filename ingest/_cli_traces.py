"""``flywheel traces list|show``: the trace read side in the terminal.

Thin over ``ingest._read`` and ``ingest._trace`` (a trace is read and printed a page
at a time); both commands take ``--json`` (the same models the
REST API returns), else print a rich table or an indented step tree.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Iterator

import click
from rich.console import Console
from rich.markup import escape

from flywheel._clikit import CliContext, ServerClient, echo_json, pass_cli, print_table

from ._models import SpanNode, TraceDetail, TraceList, TraceSummary
from ._read import MAX_LIMIT, encode_cursor, list_traces, parse_time
from ._trace import FIRST_PAGE_SPANS, MAX_PAGE_SPANS, iter_trace, paged

_KIND_STYLE = {
    "llm": "cyan",
    "tool": "magenta",
    "agent": "bold blue",
    "retrieval": "green",
    "memory_read": "yellow",
    "memory_write": "yellow",
    "guardrail": "red",
    "other": "dim",
}


def _when(ns: int) -> str:
    return dt.datetime.fromtimestamp(ns / 1e9, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def _ms(ms: float) -> str:
    if ms >= 10_000:
        return f"{ms / 1000:.1f} s"
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def _console() -> Console:
    """Stdout console; piped output gets wide rows instead of 80 columns."""
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=200)
    return console


@click.group("traces")
def traces_group() -> None:
    """List and open stored traces."""


@traces_group.command("list")
@click.option("--service", help="Service name of the root span.")
@click.option(
    "--since", help="Started at or after: ISO 8601, a duration ago (15m, 2h, 7d), epoch s."
)
@click.option("--until", help="Started before (same forms as --since).")
@click.option("--status", type=click.Choice(["ok", "error"]), help="Root span status.")
@click.option(
    "--has-error/--no-error", "has_error", default=None, help="Some span errored / no span errored."
)
@click.option("--tool", help="The trace called this tool.")
@click.option(
    "--text", help="Case-insensitive text in a step's input, output, arguments or result."
)
@click.option(
    "--limit", type=click.IntRange(1, MAX_LIMIT), default=50, show_default=True, help="Page size."
)
@click.option("--offset", type=click.IntRange(0), default=0, help="Rows to skip.")
@click.option("--cursor", help="next_cursor printed by the previous page.")
@click.option("--json", "as_json", is_flag=True, help="Print {traces, next_cursor} as JSON.")
@pass_cli
def list_cmd(
    obj: CliContext,
    service: str | None,
    since: str | None,
    until: str | None,
    status: str | None,
    has_error: bool | None,
    tool: str | None,
    text: str | None,
    limit: int,
    offset: int,
    cursor: str | None,
    as_json: bool,
) -> None:
    """Traces, newest first, filtered by service, time, status, errors, tool or text."""
    server = obj.server()
    if server is not None:  # a running server holds the store: ask its API
        page = TraceList.model_validate(server.get(
            "/api/traces", service=service, since=since, until=until, status=status,
            has_error=has_error, tool=tool, text=text, limit=limit, offset=offset,
            cursor=cursor))
        _print_list(page.traces, page.next_cursor, as_json)
        return
    traces = list_traces(
        obj.store(),
        project=obj.settings.project,
        service=service,
        since_ns=parse_time(since),
        until_ns=parse_time(until),
        status=status,
        has_error=has_error,
        tool=tool,
        text=text,
        limit=limit,
        offset=offset,
        cursor=cursor,
    )
    nxt = encode_cursor(traces[-1]) if len(traces) == limit else None
    _print_list(traces, nxt, as_json)


def _print_list(traces: list[TraceSummary], nxt: str | None, as_json: bool) -> None:
    if as_json:
        echo_json({"traces": traces, "next_cursor": nxt})
        return
    if not traces:
        click.echo("no traces match")
        return
    print_table(_LIST_HEADERS, _rows(traces), ids=(0, 1), right=(4, 5, 7, 8))
    if nxt:
        click.echo(f"more: --cursor {nxt}")


_LIST_HEADERS = ["trace id", "started (UTC)", "service", "root", "spans", "errors", "tools",
                 "tokens", "duration", "status"]


def _rows(traces: list[TraceSummary]) -> list[list[str]]:
    return [
        [
            t.trace_id,
            _when(t.start_ns),
            escape(t.service_name),
            escape(t.root_name),
            str(t.span_count),
            f"[red]{t.error_count}[/]" if t.error_count else "0",
            escape(", ".join(t.tool_names)) or "-",
            str(t.total_tokens),
            _ms(t.duration_ms),
            "[red]error[/]" if t.status == "error" else "ok",
        ]
        for t in traces
    ]


@traces_group.command("show")
@click.argument("trace_id")
@click.option(
    "--attributes/--no-attributes",
    default=None,
    help="Raw span attributes: printed on request; in --json unless --no-attributes.",
)
@click.option("--offset", type=click.IntRange(0), default=0,
              help="First span to print (its position in the tree).")
@click.option("--limit", type=click.IntRange(1), default=None,
              help="Spans to print (default all, read and printed a page at a time).")
@click.option("--json", "as_json", is_flag=True, help="Print the trace as JSON (streamed).")
@pass_cli
def show_cmd(obj: CliContext, trace_id: str, attributes: bool | None, offset: int,
             limit: int | None, as_json: bool) -> None:
    """One trace as an indented step tree: kind, tool, duration, tokens, status."""
    attributes = as_json if attributes is None else attributes
    server = obj.server()
    if server is not None:  # a running server holds the store: page through its API
        pages = _api_pages(server, trace_id, attributes, offset, limit)
    else:
        pages = iter_trace(obj.store(), trace_id, project=obj.settings.project,
                           attributes=attributes, offset=offset, limit=limit,
                           page=MAX_PAGE_SPANS, first_page=FIRST_PAGE_SPANS)
    if as_json:
        _stream_json(pages)
    else:
        _stream_tree(pages, attributes)


def _api_pages(server: ServerClient, trace_id: str, attributes: bool, offset: int,
               limit: int | None) -> Iterator[TraceDetail]:
    """``iter_trace`` through ``GET /api/traces/{id}``: a small first page (its lines come
    before the rest is read), then the largest pages (each request reads the outline)."""

    def fetch(at: int, size: int) -> TraceDetail:
        return TraceDetail.model_validate(server.get(
            f"/api/traces/{trace_id}", attributes=attributes, offset=at, limit=size))

    return paged(fetch, offset=offset, limit=limit, page=MAX_PAGE_SPANS,
                 first_page=FIRST_PAGE_SPANS)


def _stream_json(pages: Iterator[TraceDetail]) -> None:
    """The TraceDetail document, written as its pages arrive (one span per line)."""
    out = sys.stdout
    first, last, n = None, None, 0
    for page in pages:
        if first is None:
            first = page
            head = page.model_dump(mode="json", include={"trace_id", "project", "summary", "roots"})
            out.write(json.dumps(head, ensure_ascii=False, indent=2)[:-2] + ',\n  "spans": [')
        for node in page.spans:
            out.write(("\n    " if n == 0 else ",\n    ") + node.model_dump_json())
            n += 1
        out.flush()
        last = page
    assert first is not None and last is not None  # iter_trace yields at least one page
    out.write(f'\n  ],\n  "offset": {first.offset},\n'
              f'  "next_offset": {json.dumps(last.next_offset)}\n}}\n')


def _stream_tree(pages: Iterator[TraceDetail], attributes: bool) -> None:
    console = _console()
    last = None
    for page in pages:
        if last is None:
            _print_header(console, page)
        lines: list[str] = []
        for node in page.spans:
            lines.append(_line(node))
            if attributes:
                pad = "  " * (node.depth + 2)
                for k, v in sorted(node.attributes.items()):
                    lines.append(f"{pad}[dim]{escape(k)}[/] = {escape(_clip(v, 200))}")
        if lines:  # one print per page: rich's per-call cost adds up
            console.print("\n".join(lines), soft_wrap=True)
        last = page
    if last is not None and last.next_offset is not None:
        console.print(f"more: --offset {last.next_offset}", style="dim", soft_wrap=True)


def _print_header(console: Console, d: TraceDetail) -> None:
    s = d.summary
    status = "[red]error[/]" if s.status == "error" else "ok"
    console.print(
        f"[bold]trace {d.trace_id}[/]  {escape(s.service_name)}  {escape(s.root_name)}",
        soft_wrap=True,
    )
    console.print(
        f"started {_when(s.start_ns)} UTC  duration {_ms(s.duration_ms)}  spans {s.span_count}  "
        f"errors {s.error_count}  tool calls {s.tool_calls}  tokens {s.total_tokens}  "
        f"cost {s.cost:.4g}  status {status}",
        soft_wrap=True,
    )


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _line(node: SpanNode) -> str:
    st = node.step
    style = _KIND_STYLE.get(st.kind, "")
    parts = [f"{st.order:>4}  {'  ' * node.depth}[{style}]{st.kind}[/]"]
    parts.append(escape(st.tool_name) if st.tool_name else escape(node.name))
    if st.kind == "tool" and st.arguments not in (None, "", {}):
        parts.append(f"[dim]{escape(_clip(_compact(st.arguments), 60))}[/]")
    parts.append(_ms(st.duration_ms))
    if st.total_tokens:
        parts.append(f"{st.total_tokens} tok")
    if st.status == "error":
        parts.append(f"[red]error[/]{': ' + escape(_clip(st.error, 80)) if st.error else ''}")
    else:
        parts.append(f"[dim]{st.status}[/]")
    return "  ".join(parts)


def _compact(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def register_traces(cli: click.Group) -> None:
    """Add the ``traces`` group to the ``flywheel`` CLI."""
    cli.add_command(traces_group)
