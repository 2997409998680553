"""``flywheel review``: start the reviewer app against a running platform."""

from __future__ import annotations

import getpass
import os

import click
from flywheel.tui._client import DEFAULT_URL

from flywheel import UserError


def register(cli: click.Group) -> None:
    """Add ``review`` to the CLI."""

    @cli.command("review")
    @click.option("--url", default=DEFAULT_URL, show_default=True, envvar="FLYWHEEL_URL",
                  help="Base URL of the platform (`flywheel serve`).")
    @click.option("--reviewer", envvar="FLYWHEEL_REVIEWER",
                  help="Your name on every review event (default: the login name).")
    @click.option("--api-key", envvar="FLYWHEEL_API_KEY", help="Project API key when auth is on.")
    def review(url: str, reviewer: str | None, api_key: str | None) -> None:
        """Work the promotion queue: claim, inspect, edit, approve or reject (a Textual app)."""
        from flywheel.tui._factory import make_app

        name = (reviewer or os.environ.get("USER") or _login()).strip()
        if not name:
            raise UserError("no reviewer name; pass --reviewer NAME or set FLYWHEEL_REVIEWER")
        make_app(url, reviewer=name, api_key=api_key).run()


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""
