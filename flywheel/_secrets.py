"""Secrets never reach output: masking of store URLs, API keys and tokens.

Every place that prints or logs something a user configured goes through
``mask``: the CLI's error hook, the API's error handler, ``flywheel config``,
``serve``'s banner and the log records of the process (``install_log_masking``). It removes

- the password of any ``scheme://user:password@host`` URL (``***``);
- the secret part of a project API key (``fwk_<id>_***``: the id stays, so a
  key can still be named);
- the value of the configured admin token, and any further literal secret
  registered with ``register_secret`` (wherever it appears).

Masking is textual on purpose: an error from a driver or a library may embed
a URL we never built, and the hook still catches it.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

#: ``scheme://user:PASSWORD@host``; the password runs to the last ``@`` before the host.
_URL_PASSWORD = re.compile(
    r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]*:)(?P<pw>[^\s/]+)(?=@[^\s@/]*(?:[/?#\s'\"]|$))"
)
_KEY = re.compile(r"\b(fwk_[0-9a-f]{6,32}_)[A-Za-z0-9_-]{8,}")
MASK = "***"

_literals: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Mask ``value`` wherever it appears in later output (tokens from settings)."""
    if value and len(value) >= 8:
        with _lock:
            _literals.add(value)


def mask(text: str) -> str:
    """``text`` with URL passwords, API key secrets and registered secrets replaced."""
    if not text:
        return text
    out = _URL_PASSWORD.sub(lambda m: m.group("head") + MASK, text)
    out = _KEY.sub(lambda m: m.group(1) + MASK, out)
    with _lock:
        literals = sorted(_literals, key=len, reverse=True)
    for value in literals:
        out = out.replace(value, MASK)
    return out


_installed = False


def install_log_masking() -> None:
    """Mask the message of every log record this process creates (idempotent).

    A record factory rather than a filter: filters on a logger do not see
    records that propagate from its children, and handlers belong to whoever
    configured logging (uvicorn, the user).
    """
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record is logging's to report
            return record
        masked = mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        return record

    logging.setLogRecordFactory(factory)


def settings_view(settings: Any) -> dict[str, Any]:
    """Settings as shown to people (``flywheel config``, ``GET /api/config``): secrets masked."""
    data = settings.model_dump(mode="json")
    data["store"] = mask(str(data.get("store", "")))
    if data.get("admin_token"):
        data["admin_token"] = MASK
    return data
