"""Credentials for tests: keys with scopes, and the local-operator base URL.

A server with no key serves loopback clients only (as ``local:USER``), so an
in-process client (``httpx.ASGITransport``, client 127.0.0.1) must also send a
loopback ``Host``: use ``LOCAL`` as its base URL. Tests that need a named
reviewer, another project or a scope create a key with ``key_headers``.
"""

from __future__ import annotations

from typing import Any

from flywheel import create_key

#: Base URL of in-process clients that act as the local operator (no key exists).
LOCAL = "http://127.0.0.1"


def bearer(key: str) -> dict[str, str]:
    """``Authorization: Bearer KEY``."""
    return {"authorization": f"Bearer {key}"}


def new_key(store: Any, *scopes: str, project: str = "default", name: str = "") -> str:
    """A fresh key (``scopes`` default: read and review, the reviewer app's needs)."""
    return create_key(store, project, scopes or ("read", "review"), name=name, actor="test")


def key_headers(store: Any, *scopes: str, project: str = "default", name: str = "") -> dict[str, str]:
    """Headers of a fresh key with ``scopes``."""
    return bearer(new_key(store, *scopes, project=project, name=name))


class Reviewers:
    """Review keys by reviewer name, created on first use (each a read + review key)."""

    def __init__(self, store: Any, project: str = "default") -> None:
        self.store, self.project = store, project
        self._keys: dict[str, dict[str, str]] = {}

    def __getitem__(self, name: str) -> dict[str, str]:
        if name not in self._keys:
            self._keys[name] = key_headers(self.store, "read", "review", project=self.project,
                                           name=name)
        return self._keys[name]
