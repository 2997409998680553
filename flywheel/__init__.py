"""trace-flywheel core: configuration, errors, the ClickHouse store and migrations."""

from ._audit import AuditEntry, read_audit, record_audit
from ._auth import (
    SCOPES,
    ApiKey,
    AuthState,
    Principal,
    auth_state,
    check_serving,
    create_key,
    list_keys,
    local_identity,
    request_principal,
    request_project,
    revoke_key,
)
from ._canonical import canonical_json, sha256_hex
from ._config import DEFAULT_STORE, IngestSettings, Settings
from ._migrations import PACKAGES, apply_migrations, package_migrations
from ._secrets import mask
from ._store import Store, open_store
from .errors import (
    AuthError,
    ConflictError,
    FlywheelError,
    ForbiddenError,
    LeakRefused,
    NotFoundError,
    OverloadedError,
    PayloadTooLarge,
    StoreUnavailable,
    UserError,
)

__version__ = "0.1.0"


def __getattr__(name: str):  # noqa: ANN202 - PEP 562: the app factory loads FastAPI on first use
    if name == "create_app":
        from ._app import create_app

        return create_app
    if name == "requires":  # a FastAPI dependency: loads FastAPI
        from ._authz import requires

        return requires
    raise AttributeError(f"module 'flywheel' has no attribute {name!r}")

__all__ = [
    "SCOPES",
    "ApiKey",
    "AuditEntry",
    "AuthState",
    "Principal",
    "auth_state",
    "check_serving",
    "create_app",
    "create_key",
    "list_keys",
    "local_identity",
    "mask",
    "read_audit",
    "record_audit",
    "request_principal",
    "request_project",
    "requires",
    "revoke_key",
    "sha256_hex",
    "DEFAULT_STORE",
    "PACKAGES",
    "AuthError",
    "ConflictError",
    "FlywheelError",
    "ForbiddenError",
    "LeakRefused",
    "IngestSettings",
    "NotFoundError",
    "OverloadedError",
    "PayloadTooLarge",
    "Settings",
    "Store",
    "StoreUnavailable",
    "UserError",
    "__version__",
    "apply_migrations",
    "canonical_json",
    "open_store",
    "package_migrations",
]
