"""The one exception tree of trace-flywheel.

Library code raises these; the CLI maps them to a one-line message and an exit
code (one hook in ``flywheel.cli``), the REST API to an HTTP status and a JSON
body ``{"error": {"type", "message"}}`` (one handler in each app factory).
Foreign exceptions are mapped at the edge that meets them and chained
``from exc``.

::

    FlywheelError                 exit 1, HTTP 500
    ├── UserError                 exit 1, HTTP 400  bad input the user can fix
    │   ├── NotFoundError         exit 1, HTTP 404
    │   ├── ConflictError         exit 1, HTTP 409  e.g. a review decided meanwhile
    │   ├── LeakRefused           exit 1, HTTP 422  a release still holds personal data
    │   ├── PayloadTooLarge       exit 1, HTTP 413
    │   └── ToolDeclarationError  exit 1, HTTP 400  a malformed tool manifest or annotation
    ├── AuthError                 exit 1, HTTP 401
    │   └── ForbiddenError        exit 1, HTTP 403
    ├── OverloadedError           exit 1, HTTP 503 (with Retry-After)
    └── StoreUnavailable          exit 3, HTTP 503  the store did not answer
"""

from __future__ import annotations


class FlywheelError(Exception):
    """Base of every error the platform raises on purpose."""

    exit_code: int = 1
    http_status: int = 500

    @property
    def message(self) -> str:
        """The one-line message shown to the user."""
        return str(self)


class UserError(FlywheelError):
    """Bad input that the user can fix (a value, a file, a flag)."""

    http_status = 400


class ToolDeclarationError(UserError):
    """A tool manifest, annotation or attribute that cannot be read (names tool and field)."""


class NotFoundError(UserError):
    """A named thing (trace, task, trial, version) does not exist."""

    http_status = 404


class ConflictError(UserError):
    """The request conflicts with state changed meanwhile (never overwritten)."""

    http_status = 409


class LeakRefused(UserError):
    """A release or export holds personal data or secrets no reviewer excepted.

    ``findings`` lists each one as task id, JSON path and entity type (never the value).
    """

    http_status = 422

    def __init__(self, message: str, findings: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.findings = findings or []


class PayloadTooLarge(UserError):
    """A request body or attribute is over its size limit."""

    http_status = 413


class AuthError(FlywheelError):
    """No or an unknown credential."""

    http_status = 401


class ForbiddenError(AuthError):
    """A valid credential without rights to the requested project."""

    http_status = 403


class OverloadedError(FlywheelError):
    """The service is over its declared limits; the client should retry later."""

    http_status = 503

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StoreUnavailable(FlywheelError):
    """The ClickHouse store (embedded or server) did not answer."""

    exit_code = 3
    http_status = 503
