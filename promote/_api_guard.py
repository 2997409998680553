"""The review API's last check: what ``/api/promote`` returns carries no detected value.

Why: redaction runs over a trace's steps when its candidate is drafted, but a
review response carries more than the redacted steps -- the drafted task, a
reviewer's edited task and reasons, the slice and sampling reasons,
provenance paths, a leak exception's path -- and what a candidate held when
it was drafted was judged by the detectors of that day. Every response body
passes through the same ``Redactor`` as the trace (the default policy plus the
rules reviewers added to the candidate) just before it is sent, so a value
the detectors find never leaves through the review API, whichever field it
sits in. Pseudonyms already in the body stay; new ones continue each
label's numbering.

Kept as they are: reviewer identities (``reviewer``, ``claimed_by``,
``decided_by``: the API's own attribution from the ``X-Flywheel-Reviewer``
header, not trace content), and a reviewer's ``task_sha256`` /
``approved_sha256`` digests (a hash of the task as stored, which an approval
must be able to quote).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from flywheel import Store

if TYPE_CHECKING:
    from flywheel.promote._redact import Redactor

#: Keys whose values are the review API's own attribution or digests, never redacted.
KEPT_KEYS: frozenset[str] = frozenset(
    {"reviewer", "claimed_by", "decided_by", "task_sha256", "approved_sha256"}
)


def _redactor(store: Store | None, candidate_id: str | None, project: str) -> Redactor:
    # imported on the first guarded response: the redactor's tables (word frequencies,
    # check-digit schemes, month names) cost an idle server ~45 MB and half a second
    from flywheel.promote._redact import Redactor
    from flywheel.promote._redact_types import RedactionPolicy

    if store is None or not candidate_id:
        return Redactor(RedactionPolicy())
    from flywheel.promote._rerun import merged_policy, stored_rules

    keys, deny = stored_rules(store, candidate_id, project=project)
    return Redactor(merged_policy(keys, deny) if keys or deny else RedactionPolicy())


#: Keys of a trace view (``GET /api/traces/{id}``) that are the tree's structure, never text.
VIEW_KEPT_KEYS: frozenset[str] = frozenset(
    {
        "trace_id",
        "span_id",
        "parent_span_id",
        "children",
        "roots",
        "project",
        "tool_call_id",
        "next_cursor",
    }
)


#: Fields of the trace view's own schema that a key rule would misread (a span's or an
#: event's ``name``, the summary's ``session_id``): redacted as text, like any string.
VIEW_PLAIN_PATHS = re.compile(
    r"\A\$(?:\.spans\[\d+\])?(?:\.events\[\d+\])?\.name\Z"
    r"|\A\$(?:\.summary|\.traces\[\d+\])\.session_id\Z"
)


def redact_trace_view(body: Any) -> Any:
    """A trace or span view (JSON-ready) as a ``read`` key without ``raw`` may see it.

    The default policy over every string (attribute keys too), pseudonyms
    consistent within the body (one page of a trace: they restart on the
    next page); the ids that hold the tree together are kept.
    """
    from flywheel.promote._redact import Redactor
    from flywheel.promote._redact_types import RedactionPolicy

    redacted, _ = Redactor(RedactionPolicy()).redact_document(
        body, keep_keys=VIEW_KEPT_KEYS, plain_paths=VIEW_PLAIN_PATHS
    )
    return redacted


def candidate_view(store: Store, cand: Any, state: Any, *, project: str = "default") -> dict[str, Any]:
    """A candidate as a reviewer reads it, guarded: the one redaction of review and release.

    The body of ``GET /api/promote/candidates/{id}`` (candidate summary,
    redacted steps, the report's finding paths as ``report_findings``,
    provenance, task, review) through ``guard_response``. An approval stores
    this view's ``task`` (``promote._review.record_event``), so a value the
    review view hides -- found by today's detectors, by a reviewer's rule, or
    only in the context of the whole candidate -- is not in the released task.

    Args:
        store: The store.
        cand: The ``Candidate``.
        state: Its ``ReviewState``.
        project: The candidate's project.
    """
    from flywheel.ingest import read_provenance

    from flywheel import UserError

    try:
        prov = read_provenance(store, cand.trace_id, project=project)
    except UserError:
        prov = []
    body = {
        "candidate": cand.summary(),
        "redacted_steps": [
            {k: v for k, v in s.__dict__.items() if v not in (None, {}, "")} for s in cand.steps()
        ],
        # The report's counts are keyed by label (NAME: 3): only its paths are text.
        "report_findings": cand.report().get("findings", []),
        "provenance": prov,
        "task": state.task,
        "review": state.to_dict(with_events=True),
    }
    guarded: dict[str, Any] = guard_response(
        body, store=store, candidate_id=cand.candidate_id, project=project
    )
    return guarded


def guard_response(
    body: Any,
    *,
    store: Store | None = None,
    candidate_id: str | None = None,
    project: str = "default",
) -> Any:
    """``body`` (JSON-ready) with every detected value replaced by a pseudonym.

    Args:
        body: A response body (dicts, lists, strings, numbers).
        store: The store holding the candidate's added redaction rules.
        candidate_id: The candidate the body is about (its rules apply); None
            for bodies about several candidates (the default policy applies).
        project: The candidate's project.
    """
    redacted, _ = _redactor(store, candidate_id, project).redact_document(body, keep_keys=KEPT_KEYS)
    return redacted
