"""``make_app``: the one way to build the app, shared by ``flywheel review`` and the tests."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
from flywheel.tui._client import DEFAULT_URL, ReviewClient
from flywheel.tui.app import ReviewApp


def make_app(
    url: str = DEFAULT_URL,
    *,
    reviewer: str,
    api_key: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    clock: Callable[[], int] = time.time_ns,
) -> ReviewApp:
    """The reviewer app over the API at ``url``.

    Args:
        url: Base URL of the platform.
        reviewer: The identity of ``api_key`` (``flywheel review`` asks the
            server: ``whoami``); the server records that identity on every event.
        api_key: The reviewer's key (a review key names its reviewer).
        transport: httpx transport (tests: ``httpx.ASGITransport(create_app(...))``).
        clock: Nanosecond clock for ages (snapshots pin it).
    """
    client = ReviewClient(url, reviewer=reviewer, api_key=api_key, transport=transport)
    return ReviewApp(client, clock=clock)
