"""``flywheel review``: start the reviewer app against a running platform."""

from __future__ import annotations

import click
from flywheel.tui._client import DEFAULT_URL

from flywheel import UserError


def register(cli: click.Group) -> None:
    """Add ``review`` to the CLI."""

    @cli.command("review")
    @click.option("--url", default=DEFAULT_URL, show_default=True, envvar="FLYWHEEL_URL",
                  help="Base URL of the platform (`flywheel serve`).")
    @click.option("--api-key", envvar="FLYWHEEL_API_KEY",
                  help="Your review key (`flywheel keys create --scope review --name YOU`).")
    @click.option("--reviewer", envvar="FLYWHEEL_REVIEWER",
                  help="Check that the key is this reviewer's (the key's identity is what "
                  "every review event records).")
    def review(url: str, api_key: str | None, reviewer: str | None) -> None:
        """Work the promotion queue: claim, inspect, edit, approve or reject (a Textual app)."""
        from flywheel.tui._client import ApiError, whoami
        from flywheel.tui._factory import make_app

        try:
            me = whoami(url, api_key)
        except ApiError as exc:
            raise UserError(f"{url}: {exc.message}") from exc
        if "review" not in me.get("scopes", []):
            raise UserError(f"the key of {me.get('identity')!r} has no review scope; create a "
                            "review key with `flywheel keys create --scope review --name YOU`")
        if reviewer and reviewer.strip() != me["identity"]:
            raise UserError(f"this key acts as {me['identity']!r}, not {reviewer.strip()!r}: "
                            "review events record the key's identity; use your own key")
        make_app(url, reviewer=me["identity"], api_key=api_key).run()
