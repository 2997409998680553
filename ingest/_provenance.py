"""Argument provenance: for every tool argument, where its value came from.

Declared provenance (span attributes ``flywheel.provenance.<path>.source``,
``.span_id``, ``.ref``, written by ``declare_provenance``) wins. Otherwise it
is inferred by value flow: each argument leaf is matched, on salted
fingerprints (``_fingerprint``), against the observations that precede the
call in the same trace -- user and system messages, tool results, retrieved
documents, memory reads. Method and confidence:

========== ========================================================== =====
method     meaning                                                    conf.
========== ========================================================== =====
declared   the agent said so on the span                              1.00
exact      the verbatim value (or a verbatim token run) was observed  0.95
normalised equal after case/space/number/JSON normalisation           0.85
partial    at least half of the value's tokens were observed          0.4-0.7
none       found nowhere: attributed to the model                     0.50
========== ========================================================== =====

Ambiguity rule: when several observations match at the best method, a
trusted source (user, system) is preferred -- the principal's own words
explain the value -- else the most recent untrusted one; the record is marked
ambiguous, lists the alternatives, and its confidence is multiplied by 0.8.
Trivial values (booleans, integers from -10 to 10, one- or two-character
strings) are ``constant``: they match everything and prove nothing.

Flags: an argument of a sensitive tool whose source is untrusted is flagged
when its value was *extracted from prose* (a substring of a longer text:
where injected instructions live); a value that is a whole structured field
of an untrusted result (an amount from a transaction record) is recorded as
untrusted but not flagged unless ``allow_untrusted_fields`` is off. Memory
writes with untrusted content are always flagged.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._fingerprint import argument_fingerprints, leaves, value_fingerprints

SOURCE_KINDS = ("user", "system", "tool_result", "retrieval", "memory", "model", "constant")
TRUSTED_KINDS = frozenset({"user", "system"})
METHOD_CONFIDENCE = {"declared": 1.0, "exact": 0.95, "normalised": 0.85, "none": 0.5}
_METHOD_RANK = {"exact": 3, "normalised": 2, "partial": 1}
PROVENANCE_PREFIX = "flywheel.provenance."

#: Default sensitive tools: moving money, messages, email, sharing, deleting, permissions.
DEFAULT_SENSITIVE = re.compile(
    r"(send|transfer|pay|schedule_transaction|update_scheduled|wire|refund|email|message|"
    r"post|share|invite|delete|remove|drop|grant|permission|add_user|update_password|"
    r"reserve|book|publish|upload)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Observation:
    """Something the agent saw: a message, a tool result, a document, a memory."""

    span_id: str
    index: int  # step order in the trace
    kind: str  # user | system | tool_result | retrieval | memory
    ref: str  # short reference: tool name, message role/index
    exact: frozenset[int]
    norm: frozenset[int]
    tokens: frozenset[int]
    trusted: bool
    fields: frozenset[int] = frozenset()


@dataclass
class ArgumentProvenance:
    """Where one argument leaf of one tool call came from."""

    span_id: str
    tool: str
    path: str
    source_kind: str
    source_span_id: str
    source_ref: str
    method: str
    confidence: float
    trusted: bool
    ambiguous: bool = False
    alternatives: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    #: "field" when the value is a whole structured field of its source,
    #: "prose" when it was extracted from free text (where injected
    #: instructions live), "" when no source was found.
    extraction: str = ""


@dataclass
class ProvenancePolicy:
    """Trust and sensitivity configuration."""

    sensitive_tools: re.Pattern[str] = DEFAULT_SENSITIVE
    trusted_tools: frozenset[str] = frozenset()
    untrusted_kinds: frozenset[str] = frozenset({"tool_result", "retrieval", "memory"})
    #: Whole structured fields of untrusted results (an amount from a
    #: transaction record, an id from a listing) are data the agent was asked
    #: to use; values extracted from prose are where injected instructions
    #: live. False flags both (a strict CaMeL-style policy).
    allow_untrusted_fields: bool = True

    def is_sensitive(self, tool: str) -> bool:
        """Whether a call of ``tool`` can move money, data or rights."""
        return bool(self.sensitive_tools.search(tool or ""))


def _is_trivial(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int | float):
        return -10 <= value <= 10
    return len(str(value).strip()) <= 2


def _messages(text: str) -> list[tuple[str, Any]]:
    """(role, content) pairs from GenAI, OpenAI or OpenInference message JSON."""
    if not text:
        return []
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return [("user", text)]
    if isinstance(doc, dict) and "messages" in doc:
        doc = doc["messages"]
    if isinstance(doc, str):
        return [("user", doc)]
    out = []
    if isinstance(doc, list):
        for m in doc:
            if not isinstance(m, dict):
                continue
            role = str(m.get("role", "user")).lower()
            if "parts" in m:
                content = [
                    p.get("content", p.get("text", p.get("response", p.get("result"))))
                    for p in m["parts"] if isinstance(p, dict)
                ]
            else:
                content = m.get("content")
            out.append((role, content))
    return out


def observations(steps: Sequence[Mapping[str, Any]], salt: bytes, policy: ProvenancePolicy) -> list[Observation]:
    """Every observation of a trace, in step order, as fingerprints."""
    obs: list[Observation] = []
    seen_messages: set[int] = set()

    def add(step: Mapping[str, Any], index: int, kind: str, ref: str, value: Any) -> None:
        exact, norm, toks, fields = value_fingerprints(value, salt)
        if not exact:
            return
        trusted = kind in TRUSTED_KINDS or (
            kind == "tool_result" and str(step.get("tool_name", "")) in policy.trusted_tools
        )
        obs.append(Observation(str(step["span_id"]), index, kind, ref, frozenset(exact),
                               frozenset(norm), frozenset(toks), trusted, frozenset(fields)))

    for index, step in enumerate(steps):
        kind = step.get("kind")
        if kind == "tool":
            add(step, index, "tool_result", str(step.get("tool_name", "")), step.get("result", ""))
        elif kind == "retrieval":
            add(step, index, "retrieval", str(step.get("span_name", "")), step.get("output", ""))
        elif kind == "memory_read":
            add(step, index, "memory", str(step.get("span_name", "")), step.get("output", ""))
        elif kind in ("llm", "agent"):
            for i, (role, content) in enumerate(_messages(str(step.get("input", "")))):
                if role not in ("user", "system", "developer", "human"):
                    continue
                key = hash((role, json.dumps(content, sort_keys=True, default=str)))
                if key in seen_messages:
                    continue
                seen_messages.add(key)
                src = "system" if role in ("system", "developer") else "user"
                add(step, index, src, f"{role} message {i}", content)
    return obs


def declared(attributes: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Declared provenance on a span: ``path -> {source, span_id, ref}``."""
    out: dict[str, dict[str, str]] = {}
    for key, value in attributes.items():
        if not key.startswith(PROVENANCE_PREFIX):
            continue
        path, _, field_name = key[len(PROVENANCE_PREFIX):].rpartition(".")
        if path and field_name in ("source", "span_id", "ref"):
            out.setdefault(path, {})[field_name] = value
    return out


def declare_provenance(span: Any, path: str, source: str, *, span_id: str = "", ref: str = "") -> None:
    """Record on an OTel span where argument ``path`` came from (the agent-side helper).

    ``path`` uses ``/`` between levels (``items/0/iban``); ``source`` is one of
    ``SOURCE_KINDS``. Any OTel SDK in any language can write the same keys.
    """
    if source not in SOURCE_KINDS:
        raise ValueError(f"unknown provenance source {source!r}; use one of {', '.join(SOURCE_KINDS)}")
    span.set_attribute(f"{PROVENANCE_PREFIX}{path}.source", source)
    if span_id:
        span.set_attribute(f"{PROVENANCE_PREFIX}{path}.span_id", span_id)
    if ref:
        span.set_attribute(f"{PROVENANCE_PREFIX}{path}.ref", ref[:200])


def _match(leaf: Any, salt: bytes, candidates: Iterable[Observation]) -> tuple[str, float, list[Observation]]:
    x, n, toks = argument_fingerprints(leaf, salt)
    best_rank, best_conf, best = 0, 0.0, []
    for ob in candidates:
        if x in ob.exact:
            rank, conf = 3, METHOD_CONFIDENCE["exact"]
        elif n in ob.norm:
            rank, conf = 2, METHOD_CONFIDENCE["normalised"]
        elif len(toks) >= 2:
            hit = sum(1 for t in toks if t in ob.tokens) / len(toks)
            if hit < 0.5:
                continue
            rank, conf = 1, 0.4 + 0.3 * hit
        else:
            continue
        if rank > best_rank:
            best_rank, best_conf, best = rank, conf, [ob]
        elif rank == best_rank:
            best.append(ob)
            best_conf = max(best_conf, conf)
    method = {3: "exact", 2: "normalised", 1: "partial"}.get(best_rank, "none")
    return method, best_conf, best


def infer_provenance(
    steps: Sequence[Mapping[str, Any]],
    salt: bytes,
    policy: ProvenancePolicy | None = None,
) -> list[ArgumentProvenance]:
    """Provenance of every argument leaf of every tool call in one trace.

    ``steps`` are agent steps in start order (dicts with span_id, kind,
    tool_name, arguments, result, input, output, and optional attributes).
    """
    policy = policy or ProvenancePolicy()
    obs = observations(steps, salt, policy)
    records: list[ArgumentProvenance] = []
    # Memory is as trustworthy as what was written into it: values this trace
    # wrote from trusted sources come back trusted; values written from
    # untrusted sources, and memory that predates the trace, do not.
    clean_memory: set[int] = set()
    for index, step in enumerate(steps):
        if step.get("kind") not in ("tool", "memory_write"):
            continue
        tool = str(step.get("tool_name") or step.get("span_name") or "")
        args_text = step.get("arguments") if step.get("kind") == "tool" else step.get("input")
        try:
            args = json.loads(args_text) if args_text else {}
        except (json.JSONDecodeError, TypeError):
            args = args_text
        decl = declared(step.get("attributes") or {})
        before = [o for o in obs if o.index < index]
        for path, leaf in leaves(args):
            path = path or "$"
            if path in decl:
                d = decl[path]
                kind = d.get("source", "model")
                rec = ArgumentProvenance(
                    str(step["span_id"]), tool, path, kind, d.get("span_id", ""), d.get("ref", ""),
                    "declared", 1.0, kind in TRUSTED_KINDS or kind in ("model", "constant"))
            elif _is_trivial(leaf):
                rec = ArgumentProvenance(str(step["span_id"]), tool, path, "constant", "", "",
                                         "none", 0.5, True)
            else:
                method, conf, found = _match(leaf, salt, before)
                _, n_fp, _ = argument_fingerprints(leaf, salt)
                if n_fp in clean_memory:
                    found = [
                        dataclasses.replace(o, trusted=True) if o.kind == "memory" else o
                        for o in found
                    ]
                if not found:
                    rec = ArgumentProvenance(str(step["span_id"]), tool, path, "model", "", "",
                                             "none", METHOD_CONFIDENCE["none"], True)
                else:
                    trusted = [o for o in found if o.trusted]
                    primary = trusted[0] if trusted else max(found, key=lambda o: o.index)
                    ambiguous = len({(o.span_id, o.ref) for o in found}) > 1
                    rec = ArgumentProvenance(
                        str(step["span_id"]), tool, path, primary.kind, primary.span_id, primary.ref,
                        method, round(conf * (0.8 if ambiguous else 1.0), 3), primary.trusted,
                        ambiguous,
                        [f"{o.kind}:{o.span_id}:{o.ref}" for o in found if o is not primary][:5],
                        extraction="field" if n_fp in primary.fields else "prose",
                    )
            if step.get("kind") == "memory_write" and rec.trusted:
                clean_memory.add(argument_fingerprints(leaf, salt)[1])
            if not rec.trusted and rec.source_kind in policy.untrusted_kinds:
                if step.get("kind") == "memory_write":
                    rec.flags.append("untrusted_memory_write")
                elif policy.is_sensitive(tool) and (
                    rec.extraction != "field" or not policy.allow_untrusted_fields
                ):
                    rec.flags.append("untrusted_argument_to_sensitive_tool")
            records.append(rec)
    return records
