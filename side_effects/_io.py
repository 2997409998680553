"""Reading states and policies from files (for the CLI and the harness)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from flywheel import UserError

from ._adapters import adapter_names, get_adapter
from ._json_doc import JsonDocumentAdapter
from ._policy import Profile, Scope
from ._records import SNAPSHOT_FORMAT, Snapshot

_SQLITE_MAGIC = b"SQLite format 3\x00"


def load_state(
    path: str | Path,
    *,
    adapter: str | None = None,
    maps: Sequence[str] = (),
    json_adapter: JsonDocumentAdapter | None = None,
) -> Snapshot:
    """Snapshot a state file or directory, choosing the adapter from what it is.

    A directory is read with ``dirtree``, a SQLite file with ``sqlite``, a
    ``flywheel.snapshot/1`` JSON file as stored records, any other JSON with
    ``json`` (``maps`` globs as its map hints). ``adapter`` forces a choice.
    ``json_adapter``: the JSON reader to use (``load_states`` shares one, so
    the states of one run are read with one layout).
    """
    p = Path(path)
    if not p.exists():
        raise UserError(f"state {p} does not exist; pass a JSON file, a SQLite file or a directory")
    try:
        if adapter:
            if adapter not in adapter_names():
                raise UserError(
                    f"unknown adapter {adapter!r}; choose one of {', '.join(adapter_names())}"
                )
            if adapter == "json":
                reader = json_adapter or JsonDocumentAdapter(maps=list(maps))
                return Snapshot.from_records(reader.records(orjson.loads(p.read_bytes())))
            return Snapshot.from_records(get_adapter(adapter).records(p))
        if p.is_dir():
            return Snapshot.from_records(get_adapter("dirtree").records(p))
        with p.open("rb") as fh:
            head = fh.read(16)
        if head == _SQLITE_MAGIC:
            return Snapshot.from_records(get_adapter("sqlite").records(p))
        doc = orjson.loads(p.read_bytes())
    except UserError:
        raise
    except (OSError, ValueError, KeyError, orjson.JSONDecodeError) as exc:
        raise UserError(f"cannot read state {p}: {exc}") from exc
    if isinstance(doc, dict) and doc.get("format") == SNAPSHOT_FORMAT:
        try:
            return Snapshot.from_json(doc)
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{p} is not a valid {SNAPSHOT_FORMAT} file: {exc}") from exc
    try:
        reader = json_adapter or JsonDocumentAdapter(maps=list(maps))
        return Snapshot.from_records(reader.records(doc))
    except ValueError as exc:
        raise UserError(f"cannot read JSON state {p}: {exc}; pass --map GLOB hints") from exc


def load_states(
    paths: Sequence[str | Path], *, adapter: str | None = None, maps: Sequence[str] = ()
) -> list[Snapshot]:
    """Several states of one environment, JSON documents read with one shared layout."""
    reader = JsonDocumentAdapter(maps=list(maps))
    return [load_state(p, adapter=adapter, maps=maps, json_adapter=reader) for p in paths]


def load_model(path: str | Path, model: type[BaseModel], what: str) -> Any:
    """Read a pydantic model (scope, profile) from a JSON file with a user-facing error."""
    p = Path(path)
    try:
        return model.model_validate_json(p.read_text())
    except FileNotFoundError as exc:
        raise UserError(f"{what} file {p} does not exist") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ()))
        raise UserError(
            f"{what} file {p} is invalid at {where or 'top level'}: {first.get('msg')}"
        ) from exc


def load_scope(path: str | Path) -> Scope:
    """A scope from JSON."""
    scope: Scope = load_model(path, Scope, "scope")
    return scope


def load_profile(path: str | Path) -> Profile:
    """A profile from JSON."""
    profile: Profile = load_model(path, Profile, "profile")
    return profile
