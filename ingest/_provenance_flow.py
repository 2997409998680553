"""Flags and user delegation: which untrusted argument flows a monitor should see.

The question is the playbook's "data is not instruction": an action whose
target or payload was chosen by text the agent *read* rather than by the
user is the signature of an injection. Flags, per argument leaf:

- ``untrusted_argument_to_sensitive_tool``: a sensitive call (money,
  messages, email, sharing, deleting, rights) takes a value from an untrusted
  source -- cut from prose, or text carrying an identifier (``embedded``);
  whole structured fields are data the agent was asked to use and pass
  unless ``allow_untrusted_fields`` is off;
- ``untrusted_url_to_egress_tool``: an egress call (fetch, browse, post to a
  URL) contacts an address from an untrusted source -- a visit can carry data
  out in the URL itself;
- ``untrusted_memory_write``: a memory write stores untrusted content.

Delegation (capability-style information flow, as in CaMeL): the user may
name a source and ask the agent to take a value from it ("invite Dora; her
e-mail is on www.dora-website.com"). Such a value is untrusted but
authorised; its record gets method ``delegated`` and no flag, so it stays
visible. A value is delegated when all of:

1. its source is the result of a *user-directed* call: one with at least
   one non-constant argument, every one of which is trusted (user, system,
   model, trusted tool, clean memory), a whole field, or itself delegated --
   so the user named the source, directly or through sources they named;
   a call without arguments (a bare listing) names nothing;
2. it is a looked-up value, not text carrying an identifier (``embedded``):
   delegation never authorises a link or an address smuggled into a message;
3. the call is anchored: for a sensitive call, another argument comes from
   the user or the system, verbatim or normalised, not merely sharing words
   with the request (the user chose *whom or what* the action is
   about -- ``invite_user(user="Dora" <- user, email <- her page)`` passes,
   ``invite_user(user="Fred" <- the page, email <- the page)`` does not;
   a content argument anchors only when no untrusted source holds its
   value too -- a word of the request that the stolen data happens to
   contain is a coincidence); or
   the call acts on the principal's own records -- no argument chooses a
   party, an address or an account, nothing of high stakes (money,
   credentials, permissions, code) is touched, it stays in a closed world --
   and the user's own words name its action ("update my account information
   from the file" -> ``update_user_info(street, city)``); for
   an egress URL, the URL is its own target, so instead its source must not
   be fetched content itself (no link following from the web), unless
   ``egress_from_fetched_content`` is on.

Memory writes are never delegated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from flywheel.tools import ADDRESSING_PARAMETERS as ADDRESSING
from flywheel.tools import split_name

if TYPE_CHECKING:  # pragma: no cover
    from ._provenance import ArgumentProvenance
    from ._provenance_policy import ProvenancePolicy

DELEGABLE_KINDS = frozenset({"tool_result", "retrieval"})
#: What a call may touch and still be delegated on the user's naming its action alone.
HIGH_STAKES = frozenset({"money", "credentials", "permissions", "code"})
#: Matches that say the value *is* the source's (a partial match only shares words with it).
STRONG = frozenset({"declared", "exact", "normalised"})


class Flow:
    """The per-trace state of the rules: which sources the user directed, which were fetched."""

    def __init__(
        self, policy: ProvenancePolicy, requested: Callable[[str], bool] = lambda verb: False
    ) -> None:
        self.policy = policy
        #: whether the user's own words name a verb (any of its forms)
        self.requested = requested
        self.directed: dict[str, bool] = {}
        self.fetched: dict[str, bool] = {}

    def _own_records(self, tool: str, call: Sequence[tuple[ArgumentProvenance, Any]], args: Any) -> bool:
        """Whether a call the user asked for by name acts only on the principal's own records."""
        sem = self.policy.semantics(tool, args)
        if not sem.verb or sem.open_world or sem.touches.value & HIGH_STAKES:
            return False
        if any(ADDRESSING & set(split_name(rec.path)) for rec, _ in call):
            return False
        return self.requested(sem.verb)

    def _anchored(self, call: Sequence[tuple[ArgumentProvenance, Any]]) -> bool:
        """Whether the user or the system gave one of the call's arguments for its purpose.

        The anchor must say whom or what the call is about (an addressing
        argument: user, recipient, channel, account...), or be a value only the
        principal said: a content value that the untrusted data holds too (the
        stolen text happens to contain a word of the request) is a coincidence,
        not a choice.
        """
        for rec, _ in call:
            if not (
                rec.trusted
                and rec.source_kind not in ("constant", "model")
                and rec.method in STRONG
            ):
                continue  # not user/system, a trusted tool, clean memory
            if ADDRESSING & set(split_name(rec.path)):
                return True
            if not any(a.split(":", 1)[0] in self.policy.untrusted_kinds for a in rec.alternatives):
                return True
        return False

    def _delegable(self, rec: ArgumentProvenance, *, url: bool, anchored: bool) -> bool:
        if not self.policy.delegation or rec.extraction == "embedded":
            return False
        if rec.source_kind not in DELEGABLE_KINDS or not self.directed.get(rec.source_span_id):
            return False
        if url:
            return self.policy.egress_from_fetched_content or not self.fetched.get(
                rec.source_span_id
            )
        return anchored

    def _allowed_field(self, rec: ArgumentProvenance) -> bool:
        return rec.extraction == "field" and self.policy.allow_untrusted_fields

    def judge(
        self, kind: str, tool: str, call: Sequence[tuple[ArgumentProvenance, Any]], args: Any = None
    ) -> None:
        """Set flags (and method ``delegated``) on the records of one call."""
        sensitive = self.policy.is_sensitive(tool, args)
        anchored = self._anchored(call) or (sensitive and self._own_records(tool, call, args))
        for rec, leaf in call:
            if rec.trusted or rec.source_kind not in self.policy.untrusted_kinds:
                continue
            if kind == "memory_write":
                rec.flags.append("untrusted_memory_write")
                continue
            url = self.policy.is_url_argument(tool, rec.path, leaf, args)
            if not (url or sensitive) or self._allowed_field(rec):
                continue
            if self._delegable(rec, url=url, anchored=anchored):
                rec.method = "delegated"
                continue
            rec.flags.append(
                "untrusted_url_to_egress_tool" if url else "untrusted_argument_to_sensitive_tool"
            )

    def note_source(
        self,
        span_id: str,
        tool: str,
        call: Sequence[tuple[ArgumentProvenance, Any]],
        *,
        fetched: bool | None = None,
        args: Any = None,
    ) -> None:
        """Remember whether the result of this call (or retrieval) is a user-directed source."""
        kept = [(rec, leaf) for rec, leaf in call if rec.source_kind != "constant"]
        url_args = [
            rec for rec, leaf in kept if self.policy.is_url_argument(tool, rec.path, leaf, args)
        ]
        self.fetched[span_id] = bool(url_args) if fetched is None else fetched
        self.directed[span_id] = bool(kept) and all(
            rec.trusted
            or rec.method == "delegated"
            or self._allowed_field(rec)
            or (not rec.flags and self._delegable(rec, url=rec in url_args, anchored=True))
            for rec, _ in kept
        )
