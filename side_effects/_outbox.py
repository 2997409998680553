"""Outboxes of external messages (email, chat, HTTP) and permission maps as records."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ._adapters import register_adapter
from ._records import Record

OUTBOX_TYPE = "outbox"
PERMISSION_TYPE = "permission"


def _load(source: Any) -> Any:
    if isinstance(source, str | Path) and Path(source).exists():
        text = Path(source).read_text()
        if str(source).endswith(".jsonl"):
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return json.loads(text)
    return source


def _flat(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            out.update(_flat(v, f"{prefix}{k}."))
        elif isinstance(v, list | tuple):
            out[f"{prefix}{k}"] = [
                x
                if isinstance(x, str | int | float | bool) or x is None
                else json.dumps(x, sort_keys=True)
                for x in v
            ]
        else:
            out[f"{prefix}{k}"] = v
    return out


@register_adapter
class OutboxAdapter:
    """Messages that left (or would leave) the sandbox: one record per message.

    Source: a list of message dicts (or a ``.json``/``.jsonl`` file). Each
    message names its ``channel`` (``email``, ``chat``, ``http``...; default
    ``message``); the resource type is ``outbox.<channel>`` so the default
    profile tags every new one as external communication. Key: the message's
    ``id`` when present, else its position (an outbox is append-only).
    """

    name = "outbox"

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix

    def records(self, source: Any) -> Iterable[Record]:
        """Yield one record per message."""
        for i, msg in enumerate(_load(source) or []):
            channel = str(msg.get("channel", "message"))
            key = str(msg["id"]) if msg.get("id") is not None else str(i)
            fields = _flat({k: v for k, v in msg.items() if k != "channel"})
            yield Record(f"{self.prefix}{OUTBOX_TYPE}.{channel}", (key,), fields)


@register_adapter
class PermissionMapAdapter:
    """Permission maps (ACLs, sharing settings, roles) as one record per grant.

    Source: either ``{resource: {principal: permission-or-list}}`` or a list of
    ``{"resource", "principal", "permission"}`` grants. Key: ``(resource,
    principal)``; field ``permission`` (a sorted list when several). A widened
    grant is an update, a new principal a creation, a revoked one a deletion;
    the default profile tags all three as permission changes.
    """

    name = "permissions"

    def __init__(self, prefix: str = "") -> None:
        self.rtype = f"{prefix}{PERMISSION_TYPE}"

    def records(self, source: Any) -> Iterable[Record]:
        """Yield one record per (resource, principal) grant."""
        data = _load(source) or {}
        grants: dict[tuple[str, str], set[str]] = {}
        if isinstance(data, Mapping):
            for resource, principals in data.items():
                for principal, perm in dict(principals).items():
                    perms = perm if isinstance(perm, list | tuple | set) else [perm]
                    grants.setdefault((str(resource), str(principal)), set()).update(
                        map(str, perms)
                    )
        else:
            for g in data:
                grants.setdefault((str(g["resource"]), str(g["principal"])), set()).add(
                    str(g["permission"])
                )
        for (resource, principal), perms in sorted(grants.items()):
            value: Any = sorted(perms) if len(perms) > 1 else next(iter(perms))
            yield Record(self.rtype, (resource, principal), {"permission": value})
