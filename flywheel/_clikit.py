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
from ._store import Store, open_store


@dataclass
class CliContext:
    """Settings from flags and environment, and the store opened on first use."""

    settings: Settings
    _store: Store | None = field(default=None, repr=False)

    def store(self, *, migrate: bool = True) -> Store:
        """The configured store, migrated to the current schema."""
        if self._store is None:
            self._store = open_store(
                self.settings.store,
                cluster=self.settings.cluster,
                otel_table=self.settings.otel_table,
            )
            if migrate:
                self._store.migrate()
        return self._store

    def close(self) -> None:
        """Close the store if it was opened."""
        if self._store is not None:
            self._store.close()
            self._store = None


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


def stderr_console() -> Console:
    """A console on stderr, so stdout stays clean for ``--json``."""
    return Console(stderr=True)


@contextmanager
def progress_bar(description: str, total: int | None, *, enabled: bool = True) -> Iterator[Any]:
    """A rich progress bar on stderr; yields ``advance(n=1)``.

    Disabled (a no-op) when ``enabled`` is false or stderr is not a terminal
    and ``total`` is unknown, so scripts and CI logs stay quiet.
    """
    if not enabled:
        yield lambda n=1: None
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=stderr_console(),
        transient=not sys.stderr.isatty(),
    )
    with progress:
        task = progress.add_task(description, total=total)
        yield lambda n=1: progress.advance(task, n)
