"""Trust and sensitivity policy of argument provenance: which calls matter.

Two kinds of call can be steered by an injected value:

- *sensitive* calls move money, messages, email, files or rights (name
  patterns below; a tool whose name starts with a read verb -- ``get_``,
  ``read_``, ``list_`` ... -- is never sensitive by default: reading a message
  is not sending one);
- *egress* calls contact a network address given in an argument (a tool
  whose name says it fetches or browses, and an argument that is a URL by
  name or by value). The address is the payload: visiting an attacker's URL
  can carry data out in the URL itself, so its origin matters like a
  recipient's.

Everything here is configuration; no rule names a benchmark's tools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: Verbs that only read; a tool named ``<verb>_...`` is not sensitive by default.
READ_VERBS = (
    "get",
    "read",
    "list",
    "search",
    "find",
    "check",
    "view",
    "show",
    "lookup",
    "query",
    "count",
    "describe",
    "fetch",
    "browse",
    "download",
    "visit",
)

#: Default sensitive tools: moving money, messages, email, sharing, deleting, permissions.
DEFAULT_SENSITIVE = re.compile(
    rf"^(?!(?:{'|'.join(READ_VERBS)})_)"
    r".*(send|transfer|pay|schedule_transaction|update_scheduled|wire|refund|email|message|"
    r"post|share|invite|delete|remove|drop|grant|permission|add_user|update_password|"
    r"reserve|book|publish|upload|forward|reply)",
    re.IGNORECASE,
)

#: Default network-egress tools: names that say they fetch, browse or post to an address.
DEFAULT_EGRESS = re.compile(
    r"(webpage|web_page|website|url|fetch|browse|http|download|visit|crawl|scrape|curl|wget)",
    re.IGNORECASE,
)

#: Argument names that hold a network address.
URL_ARGUMENT = re.compile(
    r"(^|[_/])(url|uri|link|href|host|hostname|domain|endpoint|website)s?$", re.IGNORECASE
)
#: Values that are a network address: a scheme, ``www.``, or host.tld[/path].
URL_VALUE = re.compile(
    r"^(?:[a-z][a-z0-9+.-]*://\S+|www\.\S+|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,24}(?::\d+)?/\S*)$",
    re.IGNORECASE,
)


@dataclass
class ProvenancePolicy:
    """Trust, sensitivity and delegation configuration."""

    sensitive_tools: re.Pattern[str] = DEFAULT_SENSITIVE
    egress_tools: re.Pattern[str] = DEFAULT_EGRESS
    trusted_tools: frozenset[str] = frozenset()
    untrusted_kinds: frozenset[str] = frozenset({"tool_result", "retrieval", "memory"})
    #: Whole structured fields of untrusted results (an amount from a
    #: transaction record, an id from a listing) are data the agent was asked
    #: to use; values extracted from prose are where injected instructions
    #: live. False flags both (a strict CaMeL-style policy).
    allow_untrusted_fields: bool = True
    #: User delegation: an untrusted value from a source the user named (the
    #: result of a call whose own arguments trace back to the user) is
    #: authorised for a sensitive call anchored by a user-given argument, and
    #: recorded with method ``delegated`` instead of a flag. See
    #: ``docs/provenance.md``.
    delegation: bool = True
    #: Whether content fetched from the network may name the next address to
    #: contact (link following). Off: a URL found in a fetched page is never
    #: delegated, only URLs found in the user's own data sources are.
    egress_from_fetched_content: bool = False

    def is_sensitive(self, tool: str) -> bool:
        """Whether a call of ``tool`` can move money, data or rights."""
        return bool(self.sensitive_tools.search(tool or ""))

    def is_egress(self, tool: str) -> bool:
        """Whether ``tool`` contacts a network address named in its arguments."""
        return bool(self.egress_tools.search(tool or ""))

    def is_url_argument(self, tool: str, path: str, value: Any) -> bool:
        """Whether argument ``path`` of an egress tool holds the address it contacts."""
        if not self.is_egress(tool):
            return False
        if URL_ARGUMENT.search(path or ""):
            return True
        return isinstance(value, str) and bool(URL_VALUE.match(value.strip()))
