"""What every package's CLI file shares: the context, JSON output, progress."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ._config import Settings
from ._local_server import ServerClient, find_server, held_by_server
from ._store import Store, open_store


@dataclass
class CliContext:
    """Settings from flags and environment, and the store opened on first use.

    While ``flywheel serve`` holds the embedded store, ``server()`` is its REST
    API (commands with a route send their work there) and ``store()`` is a
    one-line error naming the server and what to do (``flywheel._local_server``).
    """

    settings: Settings
    _store: Store | None = field(default=None, repr=False)
    _server: ServerClient | None = field(default=None, repr=False)

    def server(self) -> ServerClient | None:
        """The local server holding the embedded store (None: open the store here)."""
        if self._server is None and self._store is None:
            found = find_server(self.settings.store)
            if found is not None:
                self._server = ServerClient(found, self.settings.project)
        return self._server

    def store(self, *, migrate: bool = True) -> Store:
        """The configured store, migrated to the current schema."""
        if self._store is None:
            held = held_by_server(self.settings.store, _command_name())
            if held is not None:
                raise held
            self._store = open_store(
                self.settings.store,
                cluster=self.settings.cluster,
                otel_table=self.settings.otel_table,
            )
            if migrate:
                self._store.migrate()
        return self._store

    def close(self) -> None:
        """Close the store (or the server connection) if it was opened."""
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._server is not None:
            self._server.close()
            self._server = None


def _command_name() -> str:
    """The running command without the program name (``traces list``), for messages."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return "COMMAND"
    return ctx.command_path.partition(" ")[2] or ctx.command_path


pass_cli = click.make_pass_decorator(CliContext)


def _default(o: Any) -> Any:
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    if hasattr(o, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(o)
    if isinstance(o, set | frozenset | tuple):
        return list(o)
    if isinstance(o, bytes):
        return o.hex()
    return str(o)


def echo_json(obj: Any) -> None:
    """Print ``obj`` as JSON on stdout (pydantic models and dataclasses allowed)."""
    click.echo(json.dumps(obj, default=_default, indent=2, ensure_ascii=False))


def print_table(
    headers: list[str],
    rows: list[list[str]],
    *,
    ids: tuple[int, ...] = (0,),
    right: tuple[int, ...] = (),
    title: str | None = None,
    caption: str | None = None,
    stderr: bool = False,
) -> None:
    """A table for people on a terminal, plain columns for scripts and pipes.

    Cells may hold rich markup (escape values with ``rich.markup.escape``).
    On a terminal the table takes the terminal's width; the columns in
    ``ids`` (identifiers) never wrap or shorten, the others fold. Piped or
    redirected, it prints plain text columns separated by two spaces, every
    cell in full on one line (no width limit, no markup), with the title and
    caption as ``#`` lines, so ``grep``/``awk`` see whole identifiers.
    """
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    console = Console(stderr=stderr, highlight=False)
    if console.is_terminal:
        table = Table(title=title, caption=caption, header_style="bold", box=None, pad_edge=False)
        for i, head in enumerate(headers):
            width = max([len(Text.from_markup(r[i]).plain) for r in rows] + [len(head)])
            table.add_column(
                escape(head),
                justify="right" if i in right else "left",
                no_wrap=i in ids,
                min_width=width if i in ids else None,
                overflow="fold",
            )
        for r in rows:
            table.add_row(*r)
        console.print(table)
        return
    plain = [headers] + [[" ".join(Text.from_markup(c).plain.split()) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in plain) for i in range(len(headers))]
    out = sys.stderr if stderr else sys.stdout
    if title:
        print(f"# {title}", file=out)
    for r in plain:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        print("  ".join(cells).rstrip(), file=out)
    if caption:
        print(f"# {caption}", file=out)


def stderr_console() -> Console:
    """A console on stderr, so stdout stays clean for ``--json``."""
    return Console(stderr=True)


@contextmanager
def progress_bar(description: str, total: int | None, *, enabled: bool = True) -> Iterator[Any]:
    """A rich progress bar on stderr; yields ``advance(n=1)``.

    Disabled (a no-op) when ``enabled`` is false or stderr is not a terminal,
    so scripts and CI logs stay quiet.
    """
    if not enabled or not sys.stderr.isatty():
        yield lambda n=1: None
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=stderr_console(),
    )
    with progress:
        task = progress.add_task(description, total=total)
        yield lambda n=1: progress.advance(task, n)
