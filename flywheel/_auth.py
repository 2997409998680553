"""Credentials: project API keys with scopes and identities, and who a request is.

Keys look like ``fwk_<id>_<secret>``; the store keeps only the SHA-256 of the
whole key (table ``auth_keys``, one row per change of a key: created,
revoked). A key belongs to one project and carries

- an **identity**: who acts (its name; a reviewer's key is named after the
  reviewer, and review events record that name, never a header);
- **scopes**, least privilege:

  ======== ==========================================================
  ingest   write spans (``POST /v1/traces``) and nothing else: an agent's
           key cannot read traces
  read     every read route, and analysis that stores what it derives;
           trace text (``GET /api/traces/{id}`` and its spans) comes
           redacted, as a reviewer sees it
  raw      with ``read``: that trace text as recorded (unredacted); alone
           it opens no route
  review   the review queue and candidates, and review events
  admin    keys, the audit log, the effective configuration (releases
           are made against the store, ``flywheel evalset release``,
           and record who released)
  ======== ==========================================================

A request acts as a :class:`Principal`: a key's identity and scopes, the
bootstrap admin token (``admin-token``, scope admin, from a secret), the
local operator (``local:USER``: with ``auth = auto`` and no credential
configured yet, loopback clients only) or ``anonymous`` (``auth = off``, the
explicit opt-out). ``flywheel/_authz.py`` enforces this on the web.

Revocation is monotonic: a key is live while no row of it says ``revoked``;
reads aggregate every row of a key (``max(revoked)``), so the answer does not
depend on merges or on which shard or replica holds the revoke row.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import ipaddress
import re
import secrets
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ._secrets import mask
from .errors import FlywheelError, NotFoundError, UserError

if TYPE_CHECKING:
    from ._config import Settings
    from ._store import Store

#: Every scope a key may carry (see the module docstring).
SCOPES: tuple[str, ...] = ("ingest", "read", "raw", "review", "admin")
#: Paths without project data, served without a credential.
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/docs", "/redoc", "/openapi.json", "/metrics"})
KEYS_TABLE = "auth_keys"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._@+-]{0,99}")
_PROJECT = re.compile(r"[A-Za-z0-9_-]{1,100}")
#: Every row of every key folded to its state; correct whatever rows each shard holds.
KEY_STATE_SQL = (
    "SELECT key_id, argMin(key_hash, at) AS k_hash, argMin(project_id, at) AS k_project,"
    " argMin(identity, at) AS k_identity, argMin(scopes, at) AS k_scopes,"
    " max(revoked) AS is_revoked, toUnixTimestamp64Nano(min(at)) AS k_created,"
    " argMin(actor, at) AS k_created_by, argMax(actor, revoked) AS k_last_actor"
    " FROM {table} {where} GROUP BY key_id {having} ORDER BY k_project, k_created"
)


@dataclass(frozen=True)
class Principal:
    """Who a request (or a command) acts as.

    Attributes:
        identity: The name recorded on everything it does (a key's name,
            ``admin-token``, ``local:USER`` or ``anonymous``).
        project: The project it acts for.
        scopes: What it may do.
        key_id: The key's id ("" when not a key).
        via: ``key``, ``admin-token``, ``local`` or ``anonymous``.
    """

    identity: str
    project: str
    scopes: frozenset[str]
    key_id: str = ""
    via: str = "key"

    def allows(self, *scopes: str) -> bool:
        """True when it holds at least one of ``scopes``."""
        return bool(self.scopes.intersection(scopes))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (scopes in canonical order)."""
        return {
            "identity": self.identity,
            "project": self.project,
            "scopes": [s for s in SCOPES if s in self.scopes],
            "key_id": self.key_id,
            "via": self.via,
        }


@dataclass(frozen=True)
class ApiKey:
    """A stored key (never the secret itself)."""

    key_id: str
    project_id: str
    identity: str
    scopes: tuple[str, ...]
    revoked: bool
    created_at: int
    created_by: str = ""
    revoked_by: str = ""
    key_hash: str = field(default="", repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, without the hash."""
        d = asdict(self)
        d.pop("key_hash")
        d["scopes"] = list(self.scopes)
        return d


def local_identity() -> str:
    """``local:USER``: the operator on this machine (the CLI, or loopback before any key)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"local:{user}"


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def check_project(project: str) -> str:
    """A valid project id, else ``UserError``."""
    if not _PROJECT.fullmatch(project or ""):
        raise UserError(f"invalid project id {project!r}: letters, digits, '-' and '_' only")
    return project


def check_scopes(scopes: Any) -> tuple[str, ...]:
    """Scopes in canonical order; ``UserError`` for none or an unknown one."""
    given = [scopes] if isinstance(scopes, str) else list(scopes or ())
    unknown = sorted(set(given) - set(SCOPES))
    if unknown or not given:
        what = f"unknown scope(s) {', '.join(map(repr, unknown))}" if unknown else "no scope given"
        raise UserError(f"{what}; a key needs one or more of {', '.join(SCOPES)}")
    return tuple(s for s in SCOPES if s in given)


def create_key(
    store: Store, project: str, scopes: Any, *, name: str = "", actor: str = ""
) -> str:
    """Create a key for ``project`` with ``scopes``; the returned key is shown once.

    Args:
        store: The store.
        project: The project the key acts for.
        scopes: One or more of ``SCOPES``.
        name: The key's identity (required for ``review``: the reviewer's
            name); unnamed keys act as ``key:<id>``.
        actor: Who creates it (recorded on the key and in the audit log).

    Raises:
        UserError: Bad project, scope or name.
    """
    from ._audit import record_audit

    check_project(project)
    scopes = check_scopes(scopes)
    name = (name or "").strip()
    if name and not _NAME.fullmatch(name):
        raise UserError(
            f"invalid key name {name!r}: up to 100 letters, digits, spaces and . _ @ + - "
            "(names with ':' are reserved for local:USER, key:ID, admin-token)"
        )
    if "review" in scopes and not name:
        raise UserError("a review key needs --name: the reviewer it stands for")
    key_id = secrets.token_hex(6)
    key = f"fwk_{key_id}_{secrets.token_urlsafe(24)}"
    identity = name or f"key:{key_id}"
    store.insert(KEYS_TABLE, {
        "key_id": [key_id], "key_hash": [_hash(key)], "project_id": [project],
        "identity": [identity], "scopes": [list(scopes)], "revoked": [0],
        "actor": [actor], "at": [time.time_ns()],
    })
    record_audit(store, "key.create", actor=actor, project=project, target=key_id,
                 detail={"identity": identity, "scopes": list(scopes)})
    return key


def _key_rows(store: Store, where: str = "", params: dict[str, Any] | None = None,
              having: str = "") -> list[ApiKey]:
    rows = store.query(KEY_STATE_SQL.format(table=KEYS_TABLE, where=where, having=having),
                       params or {})
    return [ApiKey(r["key_id"], r["k_project"], r["k_identity"], tuple(r["k_scopes"]),
                   bool(r["is_revoked"]), int(r["k_created"]), r["k_created_by"],
                   r["k_last_actor"] if r["is_revoked"] else "", r["k_hash"]) for r in rows]


def list_keys(store: Store, *, project: str | None = None) -> list[ApiKey]:
    """Every key (of ``project`` when given) in its current state."""
    if project is None:
        return _key_rows(store)
    return _key_rows(store, "WHERE project_id = {p:String}", {"p": project})


def revoke_key(store: Store, key_id: str, *, actor: str = "", project: str | None = None) -> ApiKey:
    """Revoke a key by id (every server notices within its cache TTL, 5 s).

    Args:
        store: The store.
        key_id: The key's id (the part after ``fwk_``).
        actor: Who revokes it (recorded).
        project: Only a key of this project (an admin key's reach).

    Raises:
        NotFoundError: No such key (in ``project``).
    """
    from ._audit import record_audit

    found = [k for k in _key_rows(store, "WHERE key_id = {k:String}", {"k": key_id})
             if project is None or k.project_id == project]
    if not found:
        raise NotFoundError(f"no API key {key_id}" + (f" in project {project!r}" if project else ""))
    k = found[0]
    store.insert(KEYS_TABLE, {
        "key_id": [key_id], "key_hash": [k.key_hash], "project_id": [k.project_id],
        "identity": [k.identity], "scopes": [list(k.scopes)], "revoked": [1],
        "actor": [actor], "at": [time.time_ns()],
    })
    record_audit(store, "key.revoke", actor=actor, project=k.project_id, target=key_id,
                 detail={"identity": k.identity, "was_revoked": k.revoked})
    return ApiKey(k.key_id, k.project_id, k.identity, k.scopes, True, k.created_at,
                  k.created_by, actor)


class KeyCache:
    """Live keys by key id, refreshed every ``ttl`` seconds (one query).

    A key id the cache does not hold is looked up once in the store (a key
    created a moment ago works at once), ``lookups_per_s`` a second on
    average with bursts of ``burst`` (a token bucket), so unknown keys cannot
    turn into a flood of store queries.

    A list older than its age limit is reloaded in a background thread while
    requests go on with it, for at most ``grace`` seconds more; older than
    that (or never loaded, or invalidated, or ``ttl`` 0) it is reloaded
    before the answer. Authentication runs on the server's event loop, and
    the embedded store answers one statement at a time: a reload waiting
    behind a large span insert would stall every request. A revocation
    takes effect within ``ttl`` plus the time the store takes to answer
    (at most ``grace``).
    """

    def __init__(self, store: Store, ttl: float = 5.0, lookups_per_s: float = 10.0,
                 burst: int = 20, grace: float = 5.0) -> None:
        self.store, self.ttl, self.grace = store, ttl, grace
        self._at = 0.0
        self._loaded = False  # False: the next use loads before answering
        self._generation = 0  # moved by invalidate: a reload begun before it is not kept
        self._reloading = False
        self._keys: dict[str, ApiKey] = {}
        self._lock = threading.Lock()
        self._rate, self._burst = lookups_per_s, float(burst)
        self._tokens, self._filled = float(burst), time.monotonic()

    def invalidate(self) -> None:
        """Reload on next use (after creating or revoking a key in this process)."""
        with self._lock:
            self._loaded = False
            self._generation += 1

    def keys(self, max_age: float | None = None) -> dict[str, ApiKey]:
        """key_id -> every live key (reloaded when older than ``max_age``, default the TTL)."""
        limit = self.ttl if max_age is None else max_age
        with self._lock:
            age = time.monotonic() - self._at
            if self._loaded and age <= limit:
                return self._keys
            if self._loaded and self.ttl > 0 and age <= limit + self.grace:
                if not self._reloading:
                    self._reloading = True
                    threading.Thread(target=self._reload, args=(True,), name="key-cache",
                                     daemon=True).start()
                return self._keys
        self._reload(False)
        return self._keys

    def _reload(self, background: bool) -> None:
        with self._lock:
            generation = self._generation
        try:
            live = _key_rows(self.store, having="HAVING is_revoked = 0")
        except FlywheelError:
            if not background:
                raise
            return  # the request that finds the list past its grace reloads and reports it
        finally:
            if background:
                with self._lock:
                    self._reloading = False
        with self._lock:
            if generation == self._generation:
                self._keys = {k.key_id: k for k in live}
                self._at = time.monotonic()
                self._loaded = True

    def _lookup(self, key_id: str) -> ApiKey | None:
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self._burst, self._tokens + (now - self._filled) * self._rate)
            self._filled = now
            if self._tokens < 1:
                return None
            self._tokens -= 1
        found = _key_rows(self.store, "WHERE key_id = {k:String}", {"k": key_id},
                          having="HAVING is_revoked = 0")
        if not found:
            return None
        with self._lock:
            self._keys = {**self._keys, key_id: found[0]}
        return found[0]

    def principal_of(self, key: str) -> Principal | None:
        """Who a presented key is, else None (unknown, revoked; constant-time compare)."""
        parts = key.split("_")
        if len(parts) < 3 or parts[0] != "fwk" or not parts[1]:
            return None
        k = self.keys().get(parts[1]) or self._lookup(parts[1])
        if k is None or not hmac.compare_digest(k.key_hash, _hash(key)):
            return None
        return Principal(k.identity, k.project_id, frozenset(k.scopes), k.key_id, "key")


def token_principal(settings: Settings, presented: str, project: str) -> Principal | None:
    """The admin-token principal when ``presented`` is the configured admin token."""
    token = settings.admin_token.get_secret_value() if settings.admin_token else ""
    if token and hmac.compare_digest(token.encode(), presented.encode()):
        return Principal("admin-token", project, frozenset({"admin"}), "", "admin-token")
    return None


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    host = (host or "").strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class AuthState:
    """The true authentication state of a store under some settings."""

    mode: str
    live_keys: int | None
    admin_token: bool
    enforcement: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def live_key_count(store: Store) -> int | None:
    """How many live keys the store holds (None: not migrated or not answering)."""
    from .errors import FlywheelError

    try:
        return len(_key_rows(store, having="HAVING is_revoked = 0"))
    except FlywheelError:
        return None


def auth_state(settings: Settings, live_keys: int | None) -> AuthState:
    """What a server with ``settings`` enforces over a store with ``live_keys`` (None: unknown)."""
    token = bool(settings.admin_token and settings.admin_token.get_secret_value())
    live = live_keys
    if settings.auth == "off":
        how = "off: no authentication, every request acts as 'anonymous' (explicit opt-out)"
    elif settings.auth == "required" or token or live:
        how = "keys: every request needs a key (or the admin token) with the route's scope"
    elif live is None:
        how = "unknown: the store did not answer (keys are required once one exists)"
    else:
        how = (f"local: no key exists yet, so only loopback clients are served, acting as "
               f"{local_identity()}; the first key turns this off")
    return AuthState(settings.auth, live, token, how)


def check_serving(settings: Settings, store: Store, host: str) -> str | None:
    """Refuse to serve a non-loopback address without authentication.

    Returns:
        A warning to print (auth explicitly off), or None.

    Raises:
        UserError: ``host`` is not loopback and no credential exists (the
            message says how to create the first key, or how to opt out).
    """
    if settings.admin_token is not None and len(settings.admin_token.get_secret_value()) < 32:
        raise UserError("FLYWHEEL_ADMIN_TOKEN is shorter than 32 characters; generate one with "
                        "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`")
    if settings.auth == "off":
        return (f"WARNING: authentication is off (FLYWHEEL_AUTH=off): anyone who reaches "
                f"{host} reads traces, reviews and administers as 'anonymous'")
    state = auth_state(settings, live_key_count(store))
    if is_loopback(host) or state.admin_token or state.live_keys:
        return None
    raise UserError(
        f"refusing to serve on {host} without authentication: no API key exists yet. Create "
        f"the first admin key against the store: `flywheel --store {mask(settings.store)} "
        f"keys create --project {settings.project} --scope admin --name NAME`, or set "
        "FLYWHEEL_ADMIN_TOKEN from a secret and create keys with POST /api/keys; to serve "
        "without authentication on purpose, pass --insecure-no-auth (FLYWHEEL_AUTH=off)"
    )


def request_principal(request: Any) -> Principal:
    """Who a request acts as (set by the auth middleware).

    Raises:
        AuthError: No principal (a route outside the middleware).
    """
    from .errors import AuthError

    principal = getattr(request.state, "principal", None)
    if principal is None:
        raise AuthError("this request is not authenticated")
    return principal  # type: ignore[no-any-return]


def request_project(request: Any) -> str:
    """The project a request acts for (set by the middleware)."""
    principal = getattr(request.state, "principal", None)
    if principal is not None:
        return principal.project  # type: ignore[no-any-return]
    return request.app.state.settings.project  # type: ignore[no-any-return]
