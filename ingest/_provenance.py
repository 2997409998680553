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
partial    at least half of the value's tokens were observed, or an   0.4-0.7
           identifier inside it (URL, e-mail, account number) was
none       found nowhere: attributed to the model                     0.50
delegated  matched (as above) in an untrusted source the user named,  match
           and authorised by the delegation rule (``_provenance_flow``)
========== ========================================================== =====

Ambiguity rule: when several observations match at the best method, a
trusted source (user, system) is preferred -- the principal's own words
explain the value -- else the most recent untrusted one; the record is marked
ambiguous, lists the alternatives, and its confidence is multiplied by 0.8.
Trivial values (booleans, integers from -10 to 10, one- or two-character
strings) are ``constant``: they match everything and prove nothing. A span
that repeats its child span's observation verbatim (a retrieval wrapping the
tool call that did the read) is one observation, the child's.

Extraction: ``field`` when the value is a whole field of a structured
result (or a whole short text), ``prose`` when it was cut out of free text
(where injected instructions live), ``embedded`` when the value is text
carrying an identifier (a link, an address, an account number) that only an
untrusted source held. Flags and delegation: ``_provenance_flow``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flywheel.tools import split_name

from ._fingerprint import (
    argument_fingerprints,
    fingerprint,
    identifier_tokens,
    leaves,
    normalise,
    tokens,
    value_fingerprints,
)
from ._provenance_flow import Flow
from ._provenance_policy import ProvenancePolicy
from ._tools import trace_catalog
from ._turns import parse_turns

SOURCE_KINDS = ("user", "system", "tool_result", "retrieval", "memory", "model", "constant")
TRUSTED_KINDS = frozenset({"user", "system"})
METHOD_CONFIDENCE = {"declared": 1.0, "exact": 0.95, "normalised": 0.85, "none": 0.5}
PROVENANCE_PREFIX = "flywheel.provenance."

__all__ = [
    "SOURCE_KINDS",
    "ArgumentProvenance",
    "Observation",
    "ProvenancePolicy",
    "declare_provenance",
    "infer_provenance",
    "observations",
]


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
    #: instructions live), "embedded" when it is text carrying an identifier
    #: only an untrusted source held, "" when no source was found.
    extraction: str = ""


def _is_trivial(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int | float):
        return -10 <= value <= 10
    return len(str(value).strip()) <= 2


def _as_text(value: Any) -> str:
    """A tool result as text: a string as is, else canonical JSON (JSON text is parsed first)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def observations(
    steps: Sequence[Mapping[str, Any]], salt: bytes, policy: ProvenancePolicy
) -> list[Observation]:
    """Every observation of a trace, in step order, as fingerprints."""
    obs: list[Observation] = []
    seen_messages: set[int] = set()

    def add(
        step: Mapping[str, Any], index: int, kind: str, ref: str, value: Any, tool: str = ""
    ) -> None:
        exact, norm, toks, fields = value_fingerprints(value, salt)
        if not exact:
            return
        if kind in TRUSTED_KINDS:
            # the same request seen again (the agent span's input, then each chat
            # turn's history) is one source, not an ambiguity
            key = hash((kind, frozenset(exact)))
            if key in seen_messages:
                return
            seen_messages.add(key)
        tool = tool or str(step.get("tool_name", ""))
        trusted = kind in TRUSTED_KINDS or (kind == "tool_result" and tool in policy.trusted_tools)
        obs.append(
            Observation(
                str(step["span_id"]),
                index,
                kind,
                ref,
                frozenset(exact),
                frozenset(norm),
                frozenset(toks),
                trusted,
                frozenset(fields),
            )
        )

    results: list[str] = []  # tool steps' results so far, as text
    for index, step in enumerate(steps):
        kind = step.get("kind")
        if kind == "tool":
            add(step, index, "tool_result", str(step.get("tool_name", "")), step.get("result", ""))
            results.append(_as_text(step.get("result")))
        elif kind == "retrieval":
            add(step, index, "retrieval", str(step.get("span_name", "")), step.get("output", ""))
        elif kind == "memory_read":
            add(step, index, "memory", str(step.get("span_name", "")), step.get("output", ""))
        elif kind in ("llm", "agent"):
            # turns typed by ``_turns``: a tool result is one wherever the library put it
            turns = step.get("input_turns")
            if turns is None:
                turns = parse_turns(str(step.get("input") or ""), "user")
            for i, turn in enumerate(turns):
                if turn.role == "tool_result":
                    # a result in the model's history is its tool span's, when that was seen
                    text = _as_text(turn.content)
                    # the same result in another encoding (YAML in the history, JSON on
                    # the span) holds the same leaves: compare those, not the text
                    leaves_seen = value_fingerprints(turn.content, salt)[0]
                    if not any(len(r) > 2 and r in text for r in results) and not any(
                        leaves_seen and leaves_seen <= o.exact for o in obs if o.kind == "tool_result"
                    ):
                        ref = turn.tool_name or f"tool result {i}"
                        add(step, index, "tool_result", ref, turn.content, turn.tool_name)
                    continue
                if turn.role not in TRUSTED_KINDS:
                    continue
                key = hash((turn.role, json.dumps(turn.content, sort_keys=True, default=str)))
                if key in seen_messages:
                    continue
                seen_messages.add(key)
                add(step, index, turn.role, f"{turn.role} message {i}", turn.content)
    # a span that repeats its child's observation verbatim (a retrieval wrapping
    # the read that did the work) saw nothing new: keep the child's, which names the call
    parent = {str(s["span_id"]): str(s.get("parent_span_id") or "") for s in steps}
    repeated = {(parent[o.span_id], o.exact) for o in obs if parent.get(o.span_id)}
    return [o for o in obs if o.kind in TRUSTED_KINDS or (o.span_id, o.exact) not in repeated]


def declared(attributes: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Declared provenance on a span: ``path -> {source, span_id, ref}``."""
    out: dict[str, dict[str, str]] = {}
    for key, value in attributes.items():
        if not key.startswith(PROVENANCE_PREFIX):
            continue
        path, _, field_name = key[len(PROVENANCE_PREFIX) :].rpartition(".")
        if path and field_name in ("source", "span_id", "ref"):
            out.setdefault(path, {})[field_name] = value
    return out


def declare_provenance(
    span: Any, path: str, source: str, *, span_id: str = "", ref: str = ""
) -> None:
    """Record on an OTel span where argument ``path`` came from (the agent-side helper).

    ``path`` uses ``/`` between levels (``items/0/iban``); ``source`` is one of
    ``SOURCE_KINDS``. Any OTel SDK in any language can write the same keys.
    """
    if source not in SOURCE_KINDS:
        raise ValueError(
            f"unknown provenance source {source!r}; use one of {', '.join(SOURCE_KINDS)}"
        )
    span.set_attribute(f"{PROVENANCE_PREFIX}{path}.source", source)
    if span_id:
        span.set_attribute(f"{PROVENANCE_PREFIX}{path}.span_id", span_id)
    if ref:
        span.set_attribute(f"{PROVENANCE_PREFIX}{path}.ref", ref[:200])


def _match(
    leaf: Any, salt: bytes, candidates: Iterable[Observation]
) -> tuple[str, float, list[Observation]]:
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


def _embedded(leaf: Any, salt: bytes, candidates: Sequence[Observation]) -> list[Observation]:
    """Untrusted observations holding an identifier of ``leaf`` that no trusted one holds.

    A model-written message that carries an attacker's link or account number
    matches its source on that identifier alone; the prose around it is the
    model's. Sorted best first: most such identifiers held, then most recent.
    """
    if not isinstance(leaf, str):
        return []
    score: dict[int, int] = {}
    for ident in identifier_tokens(leaf):
        fp = fingerprint("n:" + normalise(ident), salt)
        holders = [o for o in candidates if fp in o.tokens or fp in o.norm]
        if holders and not any(o.trusted for o in holders):
            for o in holders:
                score[id(o)] = score.get(id(o), 0) + 1
    found = [o for o in candidates if id(o) in score]
    return sorted(found, key=lambda o: (score[id(o)], o.index), reverse=True)


def _args(step: Mapping[str, Any]) -> Any:
    text = step.get("arguments") if step.get("kind") == "tool" else step.get("input")
    try:
        return json.loads(text) if text else {}
    except (json.JSONDecodeError, TypeError):
        return text


def _record(
    step: Mapping[str, Any],
    tool: str,
    path: str,
    leaf: Any,
    decl: Mapping[str, Mapping[str, str]],
    salt: bytes,
    before: Sequence[Observation],
    clean_memory: set[int],
    echoes: Mapping[str, set[int]],
) -> ArgumentProvenance:
    """The provenance of one argument leaf (before flags)."""
    span = str(step["span_id"])
    if path in decl:
        d = decl[path]
        kind = d.get("source", "model")
        return ArgumentProvenance(
            span,
            tool,
            path,
            kind,
            d.get("span_id", ""),
            d.get("ref", ""),
            "declared",
            1.0,
            kind in TRUSTED_KINDS or kind in ("model", "constant"),
        )
    if _is_trivial(leaf):
        return ArgumentProvenance(span, tool, path, "constant", "", "", "none", 0.5, True)
    _, n_fp, _ = argument_fingerprints(leaf, salt)
    # a result echoing its own call's argument ("sent 100 to X") is not where the value came from
    before = [o for o in before if n_fp not in echoes.get(o.span_id, ())]
    method, conf, found = _match(leaf, salt, before)
    if n_fp in clean_memory:
        found = [dataclasses.replace(o, trusted=True) if o.kind == "memory" else o for o in found]
    carriers = _embedded(leaf, salt, before) if isinstance(leaf, str) else []
    extraction = ""
    if carriers and method in ("none", "partial"):
        # the identifier, not the surrounding prose, says where the value came from
        method, conf, found, extraction = "partial", 0.6, carriers, "embedded"
    if not found:
        return ArgumentProvenance(
            span, tool, path, "model", "", "", "none", METHOD_CONFIDENCE["none"], True
        )
    trusted = [o for o in found if o.trusted]
    if extraction == "embedded":
        primary = found[0]
    else:
        primary = trusted[0] if trusted else max(found, key=lambda o: o.index)
    ambiguous = len({(o.span_id, o.ref) for o in found}) > 1
    if not extraction:
        if n_fp in primary.fields:
            extraction = "field"
        elif (
            not primary.trusted and len(tokens(str(leaf))) > 1 and any(o in carriers for o in found)
        ):
            extraction = "embedded"  # text cut from untrusted prose, carrying an identifier
        else:
            extraction = "prose"
    return ArgumentProvenance(
        span,
        tool,
        path,
        primary.kind,
        primary.span_id,
        primary.ref,
        method,
        round(conf * (0.8 if ambiguous else 1.0), 3),
        primary.trusted,
        ambiguous,
        [f"{o.kind}:{o.span_id}:{o.ref}" for o in found if o is not primary][:5],
        extraction=extraction,
    )


def _forms(word: str) -> set[str]:
    """A word's inflected forms (plural, 3rd person, past, -ing), to match either way."""
    stem = word[:-1] if word.endswith("e") else word
    base = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
    return {word, base, word + "s", word + "es", word + "d", word + "ed", stem + "ing"}


def _holds(tokens: frozenset[int] | set[int], word: str, salt: bytes) -> bool:
    return any(fingerprint("n:" + normalise(f), salt) in tokens for f in _forms(word))


def _requested(obs: Sequence[Observation], salt: bytes):  # noqa: ANN202 - a predicate
    """Whether the user's own messages hold a word in any of its forms (on fingerprints)."""
    said: set[int] = set()
    for o in obs:
        if o.kind == "user":
            said |= o.tokens
    return lambda word: _holds(said, word, salt)


#: Flag of a call with no argument to trace whose action untrusted input may have chosen.
CONTROL_FLAG = "untrusted_control_flow"
#: Path of the record that stands for the call itself (it has no argument leaf).
CALL_PATH = "$call"


def _control_record(
    step: Mapping[str, Any],
    tool: str,
    before: Sequence[Observation],
    salt: bytes,
    requested: Any,
    policy: ProvenancePolicy,
) -> ArgumentProvenance | None:
    """A sensitive call without arguments to trace, after untrusted input, not asked for.

    The user asked for it when their own words hold at least half of the tool's
    name words (``LightsOffAll`` after "turn off all the lights"). Otherwise,
    the untrusted observation holding most of those words (the text that
    asked for it) is its source (confidence 0.6), else the latest untrusted
    observation (0.4): a lower-confidence flag beats silence.
    """
    untrusted = [o for o in before if not o.trusted and o.kind in policy.untrusted_kinds]
    if not untrusted:
        return None
    words = [w for w in split_name(tool) if len(w) >= 3]
    if words and sum(requested(w) for w in words) * 2 >= len(words):
        return None
    scored = [(sum(_holds(o.tokens, w, salt) for w in words), o.index, o) for o in untrusted]
    hits, _, source = max(scored, key=lambda t: (t[0], t[1]))
    conf = 0.6 if hits and hits * 2 >= len(words) else 0.4
    return ArgumentProvenance(
        str(step["span_id"]), tool, CALL_PATH, source.kind, source.span_id, source.ref,
        "partial" if hits else "none", conf, False, flags=[CONTROL_FLAG], extraction="control",
    )


def infer_provenance(
    steps: Sequence[Mapping[str, Any]],
    salt: bytes,
    policy: ProvenancePolicy | None = None,
) -> list[ArgumentProvenance]:
    """Provenance of every argument leaf of every tool call in one trace.

    ``steps`` are agent steps in start order (dicts with span_id, kind,
    tool_name, arguments, result, input, output, and optional attributes and
    parent_span_id). Flags and delegation follow ``_provenance_flow``.
    """
    policy = policy or ProvenancePolicy()
    policy = policy.for_trace(trace_catalog(steps, policy.catalog))
    obs = observations(steps, salt, policy)
    records: list[ArgumentProvenance] = []
    requested = _requested(obs, salt)
    flow = Flow(policy, requested)
    # Memory is as trustworthy as what was written into it: values this trace
    # wrote from trusted sources come back trusted; values written from
    # untrusted sources, and memory that predates the trace, do not.
    clean_memory: set[int] = set()
    echoes: dict[str, set[int]] = {}  # span -> normalised fingerprints of its call's arguments
    for index, step in enumerate(steps):
        kind = step.get("kind")
        if kind not in ("tool", "memory_write", "retrieval"):
            continue
        tool = str(step.get("tool_name") or step.get("span_name") or "")
        decl = declared(step.get("attributes") or {})
        before = [o for o in obs if o.index < index]
        call: list[tuple[ArgumentProvenance, Any]] = []
        args = _args(step)
        for path, leaf in leaves(args):
            rec = _record(step, tool, path or "$", leaf, decl, salt, before, clean_memory, echoes)
            if not _is_trivial(leaf):
                echoes.setdefault(str(step["span_id"]), set()).add(
                    argument_fingerprints(leaf, salt)[1]
                )
            if kind == "memory_write" and rec.trusted:
                clean_memory.add(argument_fingerprints(leaf, salt)[1])
            call.append((rec, leaf))
        if kind == "retrieval":  # a query, not a call: only whether the user directed it
            flow.note_source(str(step["span_id"]), tool, call, fetched=False, args=args)
            continue
        flow.judge(kind, tool, call, args)
        flow.note_source(str(step["span_id"]), tool, call, args=args)
        records.extend(rec for rec, _ in call)
        if kind == "tool" and all(rec.source_kind == "constant" for rec, _ in call):
            if policy.is_sensitive(tool, args):
                control = _control_record(step, tool, before, salt, requested, policy)
                if control is not None:
                    records.append(control)
    return records
