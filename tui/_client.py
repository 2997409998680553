"""An async client for the platform's review API: the TUI's only I/O.

The reviewer app is a client of the REST API (not of the store), so several
reviewers can work one queue from their own terminals. The reviewer is the
identity of the API key (a review key is named after its reviewer; the
server records that name on every event, whatever the client says); every
write sends the review version the reviewer saw; the server answers 409 when someone acted meanwhile, and this
client raises ``ApiError`` with ``conflict`` set, so the app can show it and
reload instead of retrying over somebody else's decision.

What crosses into the app is the redacted material only: the trace read
route is used for the span tree's *structure* (kind, tool, duration, tokens,
status), and every text field of it is dropped on receipt (see
``trace_structure``); argument and result texts come from the candidate's
redacted steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

DEFAULT_URL = "http://127.0.0.1:4318"


class ApiError(Exception):
    """The API answered with an error (or did not answer).

    Attributes:
        status: HTTP status (0 when the server could not be reached).
        kind: The error type from the API's ``{"error": {"type", "message"}}`` body.
        message: The one-line message, shown to the reviewer as is.
    """

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message

    @property
    def conflict(self) -> bool:
        """Someone else acted first (409): nothing was written."""
        return self.status == 409

    @property
    def missing_route(self) -> bool:
        """The server does not offer this route (404/405 without an API error body)."""
        return self.status in (404, 405) and self.kind == "HTTPError"


@dataclass(frozen=True)
class StepRow:
    """One span of the tree as an agent step: structure only, never a value."""

    span_id: str
    parent_span_id: str
    depth: int
    name: str
    kind: str
    tool_name: str
    duration_ms: float
    input_tokens: int
    output_tokens: int
    status: str
    has_error: bool


def trace_structure(detail: dict[str, Any]) -> list[StepRow]:
    """Keep the span tree's structure from ``GET /api/traces/{id}``; drop every text.

    Arguments, results, inputs, outputs, error texts and status messages may
    hold raw PII: they are not copied (the redacted ones come with the candidate).
    """
    rows = []
    for s in detail.get("spans", []):
        step = s.get("step") or {}
        rows.append(
            StepRow(
                span_id=s.get("span_id", ""),
                parent_span_id=s.get("parent_span_id", ""),
                depth=int(s.get("depth", 0)),
                name=str(step.get("tool_name") or s.get("name", "")).split("\n")[0][:60],
                kind=step.get("kind", "other"),
                tool_name=step.get("tool_name", ""),
                duration_ms=float(step.get("duration_ns", 0)) / 1e6,
                input_tokens=int(step.get("input_tokens", 0)),
                output_tokens=int(step.get("output_tokens", 0)),
                status=step.get("status", "unset"),
                has_error=bool(step.get("error")) or step.get("status") == "error",
            )
        )
    return rows


def whoami(url: str, api_key: str | None, *, timeout: float = 10.0) -> dict[str, Any]:
    """Ask the platform at ``url`` who ``api_key`` is (synchronously, before the app starts).

    Raises:
        ApiError: The server refused the key, or did not answer.
    """
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        r = httpx.get(f"{url.rstrip('/')}/api/auth/whoami", headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        raise ApiError(0, "Unreachable", f"the platform at {url} did not answer "
                       f"({type(exc).__name__}); start it with `flywheel serve` or pass --url") from exc
    try:
        body = r.json()
    except ValueError:
        body = {}
    if r.status_code >= 400:
        err = body.get("error") if isinstance(body, dict) else None
        msg = str(err.get("message")) if isinstance(err, dict) else f"HTTP {r.status_code}"
        raise ApiError(r.status_code, str((err or {}).get("type", "HTTPError")), msg)
    return dict(body)


class ReviewClient:
    """Async calls of the review API (``/api/promote``) and the trace read API.

    Args:
        url: Base URL of the platform (``flywheel serve``), or any URL when
            ``transport`` is given.
        reviewer: The key's identity (``whoami``), shown and used to tell the
            reviewer's own claims apart; the server attributes events by the key.
        api_key: Project API key (sent as ``Authorization: Bearer``); without one
            the server serves only loopback clients, and only before any key exists.
        transport: An httpx transport (tests pass ``httpx.ASGITransport``).
        timeout: Seconds per request.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        reviewer: str,
        api_key: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.url = url.rstrip("/")
        self.reviewer = reviewer
        headers = {}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.AsyncClient(
            base_url=self.url, headers=headers, transport=transport, timeout=timeout
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def _call(self, method: str, path: str, **kw: Any) -> Any:
        try:
            r = await self._http.request(method, path, **kw)
        except httpx.HTTPError as exc:
            raise ApiError(
                0,
                "Unreachable",
                f"the platform at {self.url} did not answer ({type(exc).__name__}); "
                "start it with `flywheel serve` or pass --url",
            ) from exc
        if r.status_code >= 400:
            try:
                err = r.json()["error"]
                kind, msg = str(err["type"]), str(err["message"])
            except (ValueError, KeyError, TypeError):
                kind, msg = "HTTPError", f"{method} {path}: HTTP {r.status_code}"
            raise ApiError(r.status_code, kind, msg)
        return r.json()

    # -- reads ---------------------------------------------------------------

    async def whoami(self) -> dict[str, Any]:
        """The identity, project and scopes of this client's key."""
        return dict(await self._call("GET", "/api/auth/whoami"))

    async def queue(self, **filters: Any) -> list[dict[str, Any]]:
        """Queue rows (filters: evalset, status, slice, source, reviewer, reason, limit)."""
        params = {k: v for k, v in filters.items() if v not in (None, "")}
        params.setdefault("limit", 1000)
        page = await self._call("GET", "/api/promote/queue", params=params)
        return list(page["items"])

    async def reviewers(self) -> list[dict[str, Any]]:
        """Per-reviewer progress rows."""
        return list(await self._call("GET", "/api/promote/reviewers"))

    async def candidate(self, candidate_id: str) -> dict[str, Any]:
        """Redacted steps, redaction report, provenance, task and review events."""
        return dict(await self._call("GET", f"/api/promote/candidates/{candidate_id}"))

    async def trace_steps(self, trace_id: str) -> list[StepRow]:
        """The span tree's structure (see ``trace_structure``), every page of it."""
        detail: dict[str, Any] = {}
        offset: int | None = 0
        while offset is not None:
            page = await self._call("GET", f"/api/traces/{trace_id}",
                                    params={"attributes": False, "offset": offset})
            detail = {**page, "spans": [*detail.get("spans", []), *page["spans"]]}
            offset = page.get("next_offset")
        return trace_structure(detail)

    async def provenance(self, trace_id: str) -> list[dict[str, Any]]:
        """Per-argument provenance records of a trace."""
        body = await self._call("GET", f"/api/traces/{trace_id}/provenance")
        return list(body["arguments"])

    # -- writes (attributed, based on the version the reviewer saw) ----------

    @staticmethod
    def _cand(candidate_id: str, action: str) -> str:
        return f"/api/promote/candidates/{candidate_id}/{action}"

    async def claim(self, candidate_id: str, base_version: int) -> dict[str, Any]:
        """Claim a candidate."""
        body = {"base_version": base_version}
        return dict(await self._call("POST", self._cand(candidate_id, "claim"), json=body))

    async def unclaim(
        self, candidate_id: str, base_version: int, reason: str = ""
    ) -> dict[str, Any]:
        """Give a claimed candidate back (skip)."""
        body = {"base_version": base_version, "reason": reason}
        return dict(await self._call("POST", self._cand(candidate_id, "unclaim"), json=body))

    async def edit(
        self, candidate_id: str, base_version: int, task: dict[str, Any]
    ) -> dict[str, Any]:
        """Replace the task (validated server-side by the same ``Task`` model)."""
        body = {"base_version": base_version, "task": task}
        return dict(await self._call("PUT", self._cand(candidate_id, "task"), json=body))

    async def decide(
        self, candidate_id: str, base_version: int, decision: str, reason: str = ""
    ) -> dict[str, Any]:
        """Approve, reject (reason) or needs-info (reason)."""
        body = {"base_version": base_version, "decision": decision, "reason": reason}
        return dict(await self._call("POST", self._cand(candidate_id, "decision"), json=body))

    async def reopen(
        self, candidate_id: str, base_version: int, reason: str = ""
    ) -> dict[str, Any]:
        """Reopen a decided candidate (an approval is withdrawn from the next release)."""
        body = {"base_version": base_version, "reason": reason}
        return dict(await self._call("POST", self._cand(candidate_id, "reopen"), json=body))

    async def redact(
        self, candidate_id: str, base_version: int, rules: dict[str, Any]
    ) -> dict[str, Any]:
        """Re-run redaction of one candidate with extra key rules / deny strings.

        ``rules`` is ``{"key_rules": {key: LABEL}, "deny_strings": {LABEL: [text]}}``;
        the server keeps them for the candidate. An older server without the
        route raises ``ApiError`` with ``missing_route`` set.
        """
        body = {"base_version": base_version, **rules}
        return dict(await self._call("POST", self._cand(candidate_id, "redact"), json=body))
