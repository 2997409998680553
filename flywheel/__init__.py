"""trace-flywheel core: configuration, errors, the ClickHouse store and migrations."""

from ._auth import ApiKey, create_key, list_keys, request_project, revoke_key
from ._canonical import canonical_json, sha256_hex
from ._config import DEFAULT_STORE, IngestSettings, Settings
from ._migrations import PACKAGES, apply_migrations, package_migrations
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
    raise AttributeError(f"module 'flywheel' has no attribute {name!r}")

__all__ = [
    "ApiKey",
    "create_app",
    "create_key",
    "list_keys",
    "request_project",
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
