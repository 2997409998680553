"""One embedded store, many clients: the server that holds it, and how the CLI reaches it.

chDB lets one process open a store directory. While ``flywheel serve`` holds
it, the server writes ``flywheel-server.json`` into the directory (mode 0600:
its URL, its process id and a token made at start, never stored elsewhere)
and removes it when it stops. A CLI command on the same store finds the file,
checks that the process still runs, and sends its work through the REST API
with the token (``Authorization: Bearer TOKEN``: the server's own operator,
every scope; whoever may read the store directory may act on the store
anyway). A command without a route says so in one line naming the server
(see ``held_by_server``).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._store import chdb_path
from .errors import (
    AuthError,
    ConflictError,
    FlywheelError,
    ForbiddenError,
    NotFoundError,
    StoreUnavailable,
    UserError,
)

SERVER_FILE = "flywheel-server.json"
#: Seconds a CLI call waits for the server (a 50,000-span page is well under this).
TIMEOUT_S = 120.0


@dataclass(frozen=True)
class LocalServer:
    """A running ``flywheel serve`` over an embedded store."""

    url: str
    token: str
    pid: int
    store: str

    def describe(self) -> str:
        """``flywheel serve (pid N) at URL``."""
        return f"flywheel serve (pid {self.pid}) at {self.url}"


def new_token() -> str:
    """A fresh server token (32 random bytes, URL-safe)."""
    return secrets.token_urlsafe(32)


def announce(store_url: str, url: str, token: str) -> Path | None:
    """Write the server file into an embedded store's directory; None for a server store.

    Written whole under a temporary name, then renamed, readable by the owner only.
    """
    path = chdb_path(store_url)
    if path is None:
        return None
    target = Path(path).expanduser().resolve() / SERVER_FILE
    tmp = target.with_name(f".{SERVER_FILE}.{os.getpid()}")
    doc = {"url": url, "token": token, "pid": os.getpid(), "store": store_url}
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(doc, fh)
    os.replace(tmp, target)
    return target


def withdraw(path: Path | None) -> None:
    """Remove the server file this process wrote (a newer server's file is left alone)."""
    if path is None:
        return
    try:
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass  # already gone or replaced: nothing of ours to remove


@contextmanager
def announced(store_url: str, host: str, port: int, token: str) -> Iterator[Path | None]:
    """The server file present while the block runs (a server bound to every address is
    reached on loopback)."""
    where = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    where = f"[{where}]" if ":" in where else where
    path = announce(store_url, f"http://{where}:{port}", token)
    try:
        yield path
    finally:
        withdraw(path)


def find_server(store_url: str) -> LocalServer | None:
    """The live server holding this embedded store, if its file says so and it runs."""
    path = chdb_path(store_url)
    if path is None:
        return None
    file = Path(path).expanduser().resolve() / SERVER_FILE
    try:
        doc = json.loads(file.read_text())
        server = LocalServer(str(doc["url"]), str(doc["token"]), int(doc["pid"]), store_url)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no server file (or one being written): open the store directly
    if server.pid == os.getpid() or not _alive(server.pid):
        return None
    return server


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def held_by_server(store_url: str, command: str) -> FlywheelError | None:
    """The one-line error for a command that needs the store itself while a server holds it."""
    server = find_server(store_url)
    if server is None:
        return None
    return StoreUnavailable(
        f"the store {store_url} is held by {server.describe()}; `flywheel {command}` needs "
        f"the store itself: stop the server (Ctrl-C in its terminal, or `kill {server.pid}`) "
        f"and run the command again (the API at {server.url}/docs works meanwhile)"
    )


#: HTTP status -> the error of the one tree the CLI prints in one line.
_ERRORS: dict[int, type[FlywheelError]] = {
    400: UserError, 401: AuthError, 403: ForbiddenError, 404: NotFoundError,
    409: ConflictError, 413: UserError, 422: UserError,
}


class ServerClient:
    """The REST API of a local server, with its token; errors as the one tree's."""

    def __init__(self, server: LocalServer, project: str) -> None:
        import httpx

        self.server = server
        self._http = httpx.Client(
            base_url=server.url, timeout=TIMEOUT_S,
            headers={"Authorization": f"Bearer {server.token}", "X-Flywheel-Project": project},
        )

    def get(self, path: str, *, project: str | None = None, **params: Any) -> Any:
        """GET ``path`` (``None`` parameters left out) for ``project`` (default: the
        configured one); the decoded JSON body."""
        return self._call("GET", path, project, params=_given(params))

    def post(self, path: str, body: Any = None, *, project: str | None = None,
             **params: Any) -> Any:
        """POST ``body`` as JSON to ``path``; the decoded JSON body."""
        return self._call("POST", path, project, json=body, params=_given(params))

    def _call(self, method: str, path: str, project: str | None, **kw: Any) -> Any:
        import httpx

        headers = {"X-Flywheel-Project": project} if project else {}
        try:
            resp = self._http.request(method, path, headers=headers, **kw)
        except httpx.HTTPError as exc:
            raise StoreUnavailable(
                f"{self.server.describe()} holds the store but did not answer ({exc}); "
                "check the server's terminal, or stop it and run the command again"
            ) from exc
        if resp.status_code < 400:
            return resp.json()
        try:
            message = resp.json()["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = resp.text.strip().splitlines()[0] if resp.text.strip() else resp.reason_phrase
        if resp.status_code == 422 and isinstance(message, list | dict):
            message = json.dumps(message)[:300]
        kind = _ERRORS.get(resp.status_code, StoreUnavailable if resp.status_code >= 500
                           else FlywheelError)
        raise kind(f"{message} (from {self.server.describe()})")

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()


def _given(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}
