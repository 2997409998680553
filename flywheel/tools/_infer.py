"""Inferred semantics: from the name's words, the description, the JSON schema and the call.

The name's verb decides the effect (the first verb that is not also a noun --
``SmartLockUnlockFrontDoor`` unlocks, ``OutlookReadMessage`` reads); with no
verb in the name, the description's first verb does; with neither, a name
that is only a report noun (``WeatherForecast``) reads; otherwise the tool is
unknown and takes the cautious default (a write that may reach the network).
Nouns of the name and description, parameter names and JSON-schema formats
say what is touched and how far the tool reaches. A call refines its tool:
an action-like argument (``action``, ``operation``, ``mode``, ``method``)
names the operation, an HTTP method its RFC 9110 semantics.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from ._model import Decision, ToolDefinition, ToolSemantics
from ._vocabulary import (
    ACTION_ARGUMENTS,
    AMBIGUOUS,
    FORMATS,
    HTTP_METHODS,
    IRREVERSIBLE_WORDS,
    METHOD_ARGUMENTS,
    NOUNS,
    PARAMETERS,
    READ_NOUNS,
    URL_ARGUMENT,
    URL_VALUE,
    VERBS,
)
from ._words import lemma, prose_words, split_name

#: Words at the start of a description that are not its verb.
_FILLER = frozenset("this tool function use used to the a an will can may it that which".split())
#: Prefixes that make a predicate (``is_available``, ``hasAccess``): reads.
_PREDICATES = frozenset({"is", "has", "can", "should", "does"})


def find_verb(words: list[str], *, in_name: bool = True) -> tuple[str, str] | None:
    """(word, lemma) of the call's verb among ``words``, or None.

    In a name the first verb that is not also a common noun wins, else the
    first ambiguous one; past participles (``shared``, ``scheduled``) are
    adjectives there. In a description, the first verb form wins.
    """
    fallback = None
    for i, w in enumerate(words):
        if w in _PREDICATES:
            if i == 0 and in_name and len(words) > 1:
                return w, "is"
            continue
        if in_name and w.endswith("ed") and w not in VERBS:
            continue
        lem = lemma(w, VERBS)
        if lem is None:
            continue
        if not in_name or lem not in AMBIGUOUS:
            return w, lem
        if fallback is None:
            fallback = (w, lem)
    return fallback


def _nouns(words: Iterable[str], table: Mapping[str, tuple[tuple[str, ...], str]]):
    for w in words:
        lem = lemma(w, table)
        if lem is not None:
            yield lem, table[lem]


def _schema_properties(schema: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """(name, subschema) of every property in a JSON schema, nested ones included."""
    out: list[tuple[str, Mapping[str, Any]]] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        props = node.get("properties")
        if isinstance(props, Mapping):
            for k, v in props.items():
                out.append((str(k), v if isinstance(v, Mapping) else {}))
                stack.append(v)
        for key in ("items", "anyOf", "oneOf", "allOf"):
            sub = node.get(key)
            stack.extend(sub if isinstance(sub, list) else [sub])
    return out


def parameter_hints(names: Iterable[str], formats: Iterable[str] = ()) -> list[tuple[str, str, str]]:
    """(touch or "", reach, why) for argument names and JSON-schema string formats."""
    out: list[tuple[str, str, str]] = []
    for name in names:
        words = split_name(name)
        joined = "_".join(words)
        keys = [joined] if joined in PARAMETERS else []
        keys += [lem for lem, _ in _nouns(words, PARAMETERS)]
        for key in dict.fromkeys(keys):
            touches, reach = PARAMETERS[key]
            for t in touches or ("",):
                out.append((t, reach, f"parameter '{name}'"))
    for fmt in formats:
        if fmt in FORMATS:
            touches, reach = FORMATS[fmt]
            for t in touches or ("",):
                out.append((t, reach, f"parameter format '{fmt}'"))
    return out


def _description_verb(description: str) -> tuple[str, str] | None:
    words = [w for w in prose_words(description.split(".")[0])[:16]]
    while words and words[0] in _FILLER:
        words.pop(0)
    return find_verb(words, in_name=False)


def name_verb(name: str) -> tuple[str, str] | None:
    """The verb of a tool name; in a dotted or slashed id the last part is the method.

    Google and AWS method ids (``compute.instances.delete``, ``s3:PutObject``,
    ``/repos/{owner}/merge``) put the operation last and services first, so the
    last segment is read first (``compute`` there is a service, not a verb).
    """
    segments = [s for s in re.split(r"[./:]", name or "") if s]
    if len(segments) > 1:
        verb = find_verb(split_name(segments[-1]))
        if verb is not None:
            return verb
    return find_verb(split_name(name))


def infer(defn: ToolDefinition) -> ToolSemantics:
    """Semantics of a tool from its name, description and parameter schema (see module)."""
    name_words = split_name(defn.name)
    desc_words = prose_words(defn.description)
    verb = name_verb(defn.name)
    dverb = None
    if verb is not None and verb[1] == "is":
        effect = Decision("read", "inferred", f"name predicate '{verb[0]}'", 0.7)
        verb_row = ("read", "closed", (), None)
    elif verb is not None:
        verb_row = VERBS[verb[1]]
        effect = Decision(verb_row[0], "inferred", f"name verb '{verb[0]}'", 0.7)
    else:
        dverb = _description_verb(defn.description)
        if dverb is not None and dverb[1] != "is":
            verb_row = VERBS[dverb[1]]
            effect = Decision(verb_row[0], "inferred", f"description verb '{dverb[0]}'", 0.5)
        elif name_words and lemma(name_words[-1], READ_NOUNS):
            verb_row = ("read", "closed", (), None)
            effect = Decision("read", "inferred", f"name reports '{name_words[-1]}'", 0.4)
        else:
            verb_row = ("additive", "egress", (), None)
            effect = Decision(
                "additive", "default", "no verb in name or description: treated as a write", 0.3
            )
    writes = effect.value != "read"
    props = _schema_properties(defn.parameters)
    formats = [str(s.get("format")) for _, s in props if s.get("format")]
    touches: dict[str, str] = {t: f"verb '{verb[0] if verb else ''}'" for t in verb_row[2]}
    reach_votes: list[tuple[str, str]] = []
    if verb_row[1] != "closed":
        reach_votes.append((verb_row[1], effect.origin))
    for words, where in ((name_words, "name"), (desc_words, "description")):
        for lem, (nt, nr) in _nouns(words, NOUNS):
            for t in nt:
                touches.setdefault(t, f"{where} word '{lem}'")
            if nr != "closed" and (writes or nr == "egress") and where == "name":
                reach_votes.append((nr, f"name word '{lem}'"))
    for t, r, why in parameter_hints([n for n, _ in props], formats):
        if t:
            touches.setdefault(t, why)
        if r != "closed" and (writes or r == "egress"):
            reach_votes.append((r, why))
    if reach_votes:
        value, why = _reach_vote(reach_votes)
        reach = Decision(value, "inferred", why, 0.6)
    elif effect.source == "default":
        reach = Decision("egress", "default", "unknown tool: may reach the network", 0.3)
    else:
        reach = Decision("closed", "inferred", "nothing says it reaches outside", 0.5)
    touch_decision = Decision(
        frozenset(touches),
        "inferred" if touches else effect.source,
        "; ".join(f"{t}: {w}" for t, w in sorted(touches.items())) or "nothing at stake named",
        0.6 if touches else 0.4,
    )
    if verb is not None and verb[1] != "is":
        verb_word = verb[1]
    elif effect.origin.startswith("description verb") and dverb is not None:
        verb_word = dverb[1]
    else:
        verb_word = ""
    return ToolSemantics(
        defn.name,
        effect,
        reach,
        touch_decision,
        _reversible(effect, verb_row, touches, reach.value, desc_words),
        _idempotent(effect),
        verb=verb_word,
    )


def _reach_vote(votes: list[tuple[str, str]]) -> tuple[str, str]:
    """Communication beats egress (a person is reached); the first reason of the winner."""
    for kind in ("communication", "egress"):
        for value, why in votes:
            if value == kind:
                return value, why
    return votes[0]


def _reversible(
    effect: Decision,
    verb_row: tuple[str, str, tuple[str, ...], bool | None],
    touches: Mapping[str, str],
    reach: str,
    desc_words: list[str],
) -> Decision:
    if effect.value == "read":
        return Decision(True, effect.source, "reads change nothing", effect.confidence)
    if verb_row[3] is False:
        return Decision(False, effect.source, f"{effect.origin}: cannot be undone in general", 0.6)
    if IRREVERSIBLE_WORDS & set(desc_words):
        return Decision(False, "inferred", "description says it cannot be undone", 0.6)
    for stake in ("money", "code"):
        if stake in touches:
            return Decision(False, "inferred", f"moves {stake}: {touches[stake]}", 0.5)
    if reach == "communication":
        return Decision(False, "inferred", "reaches people: a message cannot be unsent", 0.5)
    if "credentials" in touches and effect.value == "destructive":
        return Decision(False, "inferred", f"replaces credentials: {touches['credentials']}", 0.5)
    if effect.source == "default":
        return Decision(False, "default", "unknown tool: assumed irreversible", 0.3)
    return Decision(True, "inferred", f"{effect.origin}: state can be set back", 0.5)


def _idempotent(effect: Decision) -> Decision:
    if effect.value == "read":
        return Decision(True, effect.source, "reads are idempotent", effect.confidence)
    if effect.value == "destructive":
        return Decision(True, "inferred", "set/replace/delete: repeating changes nothing more", 0.4)
    return Decision(False, effect.source, "creates something new each call", 0.4)


def action_of(args: Any) -> tuple[str, str] | None:
    """(argument, value) of an action-like argument of a call (``action="delete"``), or None."""
    if not isinstance(args, Mapping):
        return None
    for key, value in args.items():
        if isinstance(value, str) and value and (
            str(key).lower() in ACTION_ARGUMENTS or "_".join(split_name(str(key))) in ACTION_ARGUMENTS
        ):
            return str(key), value
    return None


def refine_for_call(sem: ToolSemantics, args: Any) -> ToolSemantics:
    """The semantics of one call: an action or HTTP-method argument names the operation.

    The argument may make a call more cautious than its tool (``files(action="delete")``
    writes); it makes it less cautious only when nothing but the default decided
    the tool's effect. A manifest entry is never refined.
    """
    if sem.effect.origin == "manifest":
        return sem
    names = [str(k) for k in args] if isinstance(args, Mapping) else []
    out = sem
    found = action_of(args)
    if found is not None:
        key, value = found
        method = HTTP_METHODS.get(value.strip().lower())
        if method is not None and (key.lower() in METHOD_ARGUMENTS or value.isupper()):
            eff = Decision(method[0], "inferred", f"HTTP method {key}={value.upper()}", 0.8)
            idem = Decision(method[1], "inferred", f"RFC 9110: {value.upper()}", 0.8)
            # a tool that wraps HTTP has the method's semantics, lower or higher
            wraps = bool(_HTTPISH & set(split_name(sem.name))) and sem.effect.source != "declared"
            out = _apply(out, eff, idem, may_lower=wraps)
        else:
            verb = find_verb(split_name(value))
            if verb is not None and verb[1] != "is":
                row = VERBS[verb[1]]
                eff = Decision(row[0], "inferred", f"action argument {key}={value!r}", 0.7)
                before = out
                out = _apply(out, eff, None)
                if out is not before:
                    out = replace(out, verb=verb[1])
                if row[2] and out.writes:
                    out = out.with_decision("touches", Decision(
                        out.touches.value | frozenset(row[2]), "inferred",
                        f"action argument {key}={value!r}", 0.6))
                if row[1] != "closed" and out.writes and not out.open_world:
                    out = out.with_decision("reach", Decision(
                        row[1], "inferred", f"action argument {key}={value!r}", 0.6))
    if names and not out.open_world:
        for _, r, why in parameter_hints(names):
            if r == "egress" or (r == "communication" and out.writes):
                out = out.with_decision("reach", Decision(r, "inferred", f"call has {why}", 0.5))
                break
    if names and not out.open_world:
        for key, value in args.items():
            if is_address(value):
                why = f"argument {key} is a network address"
                out = out.with_decision("reach", Decision("egress", "inferred", why, 0.6))
                break
    return out


def is_address(value: Any) -> bool:
    """Whether a value is a network address (a scheme, ``www.``, or host.tld/path)."""
    return isinstance(value, str) and bool(URL_VALUE.match(value.strip()))


def is_address_argument(path: str, value: Any) -> bool:
    """Whether argument ``path`` holds a network address, by its name or its value."""
    return bool(URL_ARGUMENT.search(path or "")) or is_address(value)


#: Name words of a tool that wraps an HTTP request (its method argument decides).
_HTTPISH = frozenset("http https request api rest curl fetch call webhook endpoint client".split())
_RANK = {"read": 0, "additive": 1, "destructive": 2}


def _apply(
    sem: ToolSemantics, effect: Decision, idempotent: Decision | None, *, may_lower: bool = False
) -> ToolSemantics:
    lowers = _RANK[effect.value] < _RANK[sem.effect.value]
    if lowers and not may_lower and sem.effect.source != "default":
        return sem
    if effect.value == sem.effect.value and sem.effect.source != "default":
        return sem
    out = sem.with_decision("effect", effect)
    if idempotent is not None:
        out = out.with_decision("idempotent", idempotent)
    if effect.value == "read":
        out = out.with_decision("reversible", Decision(True, "inferred", "reads change nothing", 0.7))
    return out
