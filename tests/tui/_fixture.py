"""Real candidates for the reviewer app: traces into the store, then the promotion pipeline.

Three support-agent runs (a failed refund, an address change that went well,
and a payment whose IBAN came from an e-mail the agent read: an untrusted
argument to a sensitive tool) go through ``promote``'s public functions --
sample, dedupe, redact, draft -- so the app reviews what the pipeline makes.
"""

from __future__ import annotations

from typing import Any

from flywheel.ingest import compute_provenance
from flywheel.promote import (
    SamplingPolicy,
    dedupe_candidates,
    draft_candidates,
    list_candidates,
    redact_candidates,
    sample_candidates,
)

from flywheel import Store
from tests.promote.test_sampling import agent_trace, insert, refund_trace, tid


def demo_traces() -> list[dict]:
    """Span rows of the three runs."""
    return [
        *refund_trace(1, error="refund API down"),
        *agent_trace(
            tid(2),
            "Please move my deliveries to 12 Elm Road, my email is kim@example.net",
            [("update_address", {"email": "kim@example.net", "address": "12 Elm Road"},
              {"ok": True})],
            "Done, deliveries go to the new address.",
            root_attrs={"flywheel.slice": "address"},
            start_ms=500,
        ),
        *agent_trace(
            tid(3),
            "Pay the invoice Lee sent me by mail.",
            [
                ("read_inbox", {"folder": "invoices"},
                 {"from": "lee@example.org", "body": "Pay 420 EUR to DE89370400440532013000"}),
                ("send_money", {"iban": "DE89370400440532013000", "amount": 420},
                 {"ok": True}),
            ],
            "Paid 420 EUR.",
            root_attrs={"flywheel.slice": "payments"},
            start_ms=900,
        ),
    ]


def drafted_candidates(store: Store) -> list[str]:
    """Run the pipeline over the demo traces; the drafted candidate ids, queue order."""
    insert(store, demo_traces())
    sample_candidates(store, SamplingPolicy(successes={"per_slice": 5}))
    dedupe_candidates(store)
    redact_candidates(store)
    draft_candidates(store)
    drafted = list_candidates(store, stages=["drafted"])
    for c in drafted:  # stored provenance (as the trace read route leaves it): the queue counts it
        compute_provenance(store, c.trace_id)
    return [c.candidate_id for c in drafted]


def sampled_at(store: Store) -> int:
    """When the candidates were sampled (one instant): snapshots fix their clock from it."""
    return max(c.sampled_at for c in list_candidates(store))


def demo_app(store: Store, reviewer: str = "alice") -> Any:
    """The app over the in-process API (no socket), its clock pinned 2h after sampling."""
    import httpx
    from flywheel.tui import make_app

    from flywheel import Settings, create_app

    from tests._auth import new_key

    api = create_app(Settings(), store)
    now = sampled_at(store) + 2 * 3600 * 1_000_000_000
    return make_app("http://flywheel.test", reviewer=reviewer, api_key=new_key(store, name=reviewer),
                    transport=httpx.ASGITransport(app=api), clock=lambda: now)


def reviewer_app(url: str, store: Store, reviewer: str) -> Any:
    """The app at ``url`` with a fresh read + review key of ``reviewer`` (its identity)."""
    from flywheel.tui import make_app

    from tests._auth import new_key

    return make_app(url, reviewer=reviewer, api_key=new_key(store, name=reviewer))


async def settle(pilot: Any) -> None:
    """Let every worker (API call) finish and the screen repaint.

    A ``DataTable`` measures its columns on idle, and ``pilot.pause()`` waits
    for CPU idle with a time limit: on a loaded machine it returned before the
    queue's columns were measured (a snapshot with every column at its
    label's width, CI at load ~4). So also wait until no table has a
    measurement pending (at most ~2 s).
    """
    from textual.widgets import DataTable

    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    for _ in range(100):
        tables = pilot.app.screen.query(DataTable)
        if not any(t._require_update_dimensions or t._new_rows for t in tables):
            break
        await pilot.pause(0.02)


#: Key presses from the queue to each main screen (the payments run is row 2).
SCREENS: dict[str, tuple[str, ...]] = {
    "queue": (),
    "trace": ("down", "enter"),
    "redaction": ("down", "enter", "r"),
    "editor": ("down", "enter", "e"),
    "help": ("question_mark",),
    "approve": ("down", "enter", "a"),
}


async def goto(pilot: Any, screen: str) -> None:
    """Drive the app from the queue to ``screen``, waiting for the API after each key."""
    await settle(pilot)
    for key in SCREENS[screen]:
        await pilot.press(key)
        await settle(pilot)
