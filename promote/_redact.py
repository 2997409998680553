"""Redact a trace: key-path rules, deny lists, every ``flywheel.pii`` detector, consistent pseudonyms.

Why two passes: a value found anywhere in a trace (an email under an
``email`` key, a phone number Presidio saw in a tool result) must get the same
pseudonym everywhere else it appears -- in other spans, inside JSON strings,
inside longer text -- so tool arguments and results still match and argument
provenance still holds. Pass one walks every field and registers what it
finds; pass two rewrites every string, replacing detected spans and every
literal occurrence of a registered value.

Encoded values are decoded first (``flywheel.pii.segments``): a URL keeps its
host and path structure and has each query value redacted, a base64 or
percent-encoded run is decoded, redacted and encoded again, a form body is
redacted parameter by parameter (key rules apply to parameter names).

Pseudonyms are ``<LABEL_n>`` with ``n`` counted per label in order of first
appearance within the trace (``<EMAIL_1>``, ``<PHONE_2>``...), one per
identity (``_pseudonyms``: phones by E.164 with a national number read in the
trace's country, names by their words in any order, emails case-folded...),
and the same identity found in a URL, a base64 blob or prose gets the same
pseudonym. Tokens are assigned between the passes, with the whole trace seen.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from flywheel.pii import (
    CONDITIONAL_LABELS,
    DEFAULT_KEY_RULES,
    PSEUDONYM,
    Detection,
    Detector,
    derived_label,
    is_identifier,
    longest_first,
    names_a_thing,
    normalise_key,
    organisation_like,
    own_name_key,
    person_like,
    segments,
    suffix_applies,
    thing_key,
    value_label,
)
from flywheel.pii import shared_detector as _shared_detector
from flywheel.promote._pseudonyms import Pseudonyms
from flywheel.promote._redact_types import (
    RedactedTrace,
    RedactionFinding,
    RedactionPolicy,
    RedactionReport,
    TraceStep,
)

# Values under a credential key that hold no credential.
_NOT_A_SECRET = re.compile(
    r"(?i)\A(?:\*+|x{3,}|null|none|true|false|bearer|basic|redacted|<[^>]*>|\$\{[^}]*\}"
    r"|(?!\d{3}\Z).{0,3})\Z"  # three digits are a card's security code ("cvv": "482")
)
# Under a contact-ish key (AUTO): letters then 8+ digits, or digits only: an account number.
_ACCOUNT_LIKE = re.compile(r"\A(?:[A-Z]{2,4}\d{8,32}|\d{8,20})\Z")
# Under a contact-ish key (AUTO): one to five capitalised words, nothing else.
#: The members of a field written as a name/value pair: the name, then the value.
_PAIR_NAME_KEYS = ("label", "name", "field", "fieldName", "field_name", "key", "title", "question")
_PAIR_VALUE_KEYS = frozenset(("value", "answer", "val", "response"))
_PERSON_LIKE = re.compile(r"\A[^\W\d_][^\W\d_'’.\-]*(?:[ '’.\-]+[^\W\d_]+){0,4}\.?\Z")

# Scores used to order competing spans after length (longest always wins).
_DENY_SCORE = 3.0
_PROPAGATED_SCORE = 0.01  # at equal length a detection names the rule
#: The capitalised word right before a position (up to 30 characters back, one space or tab).
_WORD_BEFORE = re.compile(r"(?<![\w'’\-])([^\W\d_][^\W\d_'’\-]{1,29})[ \t]\Z")


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _json_path(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if _PLAIN_KEY.fullmatch(key) else f"{path}[{json.dumps(key)}]"


def _try_json(text: str) -> tuple[Any, bool]:
    """Parse ``text`` as JSON if it looks like an object, array or string."""
    head = text.lstrip()[:1]
    if head not in ("{", "[", '"'):
        return text, False
    try:
        return json.loads(text), True
    except ValueError:
        return text, False


class Redactor:
    """Redacts traces under one policy; reusable across traces (detections are cached).

    Args:
        policy: What to redact; defaults to ``RedactionPolicy()``.
        detector: A prebuilt ``Detector`` (shares its cache); built if omitted.
    """

    def __init__(
        self, policy: RedactionPolicy | None = None, detector: Detector | None = None
    ) -> None:
        self.policy = policy or RedactionPolicy()
        self.detector = detector or _shared_detector(self.policy.entities)
        self._key_rules = {normalise_key(k): v for k, v in self.policy.key_rules.items()}
        self._suffixes = sorted(
            ((normalise_key(k), v) for k, v in self.policy.key_suffixes.items()),
            key=lambda kv: -len(kv[0]),
        )
        self._deny: list[tuple[re.Pattern[str], str]] = []
        for label, values in self.policy.deny_strings.items():
            if values:
                alts = "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))
                self._deny.append((re.compile(alts), label))
        for label, patterns in self.policy.deny_patterns.items():
            for p in patterns:  # compiled once by the policy's validator already
                self._deny.append((re.compile(p), label))
        self._key_cache: dict[str, str | None] = {}
        # The language tables (flywheel.pii.derived_label) extend the default rules; a policy
        # that replaces them keeps only its own.
        self._derived = DEFAULT_KEY_RULES.items() <= self._key_rules.items()

    def key_label(self, key: str) -> str | None:
        """The label a JSON key imposes on its whole value, or None."""
        hit = self._key_cache.get(key, "")
        if hit != "":
            return hit
        norm = normalise_key(key)
        label = self._key_rules.get(norm)
        if label is None:
            for suffix, lab in self._suffixes:
                if norm.endswith(suffix):
                    label = lab if suffix_applies(norm, suffix, lab) else None
                    break
        if label is None and self._derived and norm not in self._key_rules:
            label = derived_label(key)  # the language tables (flywheel.pii.derived_label)
        self._key_cache[key] = label
        return label

    def redact_trace(self, steps: Sequence[TraceStep | Mapping[str, Any]]) -> RedactedTrace:
        """Return a redacted copy of ``steps`` and a report of what was replaced.

        Steps may be ``TraceStep`` or loose dicts (see ``TraceStep.from_dict``).
        """
        return _TraceJob(
            self, [s if isinstance(s, TraceStep) else TraceStep.from_dict(s) for s in steps]
        ).run()

    def redact_many(
        self, traces: Iterable[Sequence[TraceStep | Mapping[str, Any]]]
    ) -> list[RedactedTrace]:
        """Redact several traces in this process (pseudonyms restart per trace)."""
        return [self.redact_trace(t) for t in traces]

    def redact_document(
        self,
        node: Any,
        *,
        keep_keys: frozenset[str] = frozenset(),
        plain_paths: re.Pattern[str] | None = None,
    ) -> tuple[Any, RedactionReport]:
        """Redact one JSON-ready document (keys too) with the same two passes as a trace.

        Pseudonyms already in ``node`` stay; new ones continue each label's
        numbering after the highest there, so no token names two values.
        Values under a key in ``keep_keys`` are returned as they are. A value
        whose JSON path (``$.spans[0].name``) ``plain_paths`` matches is the
        document's own schema field, redacted as text: no key rule applies
        to it (a span's ``name`` is no person's name).
        Findings carry step ``-1`` and field ``document``.
        """
        job = _TraceJob(self, [])
        job.keep = keep_keys
        job.plain = plain_paths
        job.pseudo.reserve(node)
        job.loc = (-1, "", "document")
        out = node
        for job.write in (False, True):
            if job.write:
                job.pseudo.settle()
            out = job._node(node, "$", None, 0)
        return out, job.report()


class _TraceJob:
    """The two passes over one trace."""

    def __init__(self, redactor: Redactor, steps: Sequence[TraceStep]) -> None:
        self.r = redactor
        self.steps = list(steps)
        self.pseudo = Pseudonyms(redactor.policy.propagate_min_length)
        self.tool_names = {s.tool_name for s in self.steps if s.tool_name}
        self.findings: Counter[tuple[int, str, str, str, str, str]] = Counter()
        self.write = False
        self.loc: tuple[int, str, str] = (0, "", "")
        self.keep: frozenset[str] = frozenset()
        self.plain: re.Pattern[str] | None = None
        self.segments: dict[str, list[Any]] = {}  # encoded stretches by text (``_text``)

    # -- driving -------------------------------------------------------
    def run(self) -> RedactedTrace:
        parsed: list[list[tuple[str, Any, bool]]] = []
        for step in self.steps:
            fields = []
            for name, text in step.field_items():
                tree, is_json = _try_json(text)
                fields.append((name, tree, is_json))
            parsed.append(fields)
        for self.write in (False, True):
            if self.write:
                self.pseudo.settle()
            out_steps = []
            for i, (step, fields) in enumerate(zip(self.steps, parsed, strict=True)):
                new_values: dict[str, str] = {}
                for name, tree, is_json in fields:
                    self.loc = (i, step.span_id, name)
                    new = self._node(tree, "$", None, 0)
                    if self.write:
                        if is_json:
                            new_values[name] = (
                                json.dumps(new, ensure_ascii=False)
                                if new != tree
                                else step_text(step, name)
                            )
                        else:
                            new_values[name] = new
                if step.tool_name:
                    # A tool name may be a span name ("GET /users/jane@x.org"): redacted as text.
                    self.loc = (i, step.span_id, "tool_name")
                    tool = self._text(step.tool_name, "$")
                    if self.write and tool != step.tool_name:
                        new_values["tool_name"] = tool
                out_steps.append(_rebuild(step, new_values) if self.write else step)
        return RedactedTrace(steps=tuple(out_steps), report=self.report())

    def report(self) -> RedactionReport:
        findings = tuple(
            RedactionFinding(step=s, span_id=sid, field=f, path=p, entity=e, rule=rule, count=n)
            for (s, sid, f, p, e, rule), n in sorted(self.findings.items())
        )
        return RedactionReport(findings=findings, distinct=self.pseudo.distinct())

    def _note(self, path: str, label: str, rule: str, n: int = 1) -> None:
        if self.write:
            self.findings[(*self.loc, path, label, rule)] += n

    # -- tree walk -----------------------------------------------------
    def _node(self, node: Any, path: str, label: str | None, depth: int) -> Any:
        if isinstance(node, str):
            return self._string(node, path, label, depth)
        if isinstance(node, dict):
            out = {}
            pair = self._pair_label(node)
            for k, v in node.items():
                if k in self.keep:
                    out[k] = v
                    continue
                nk = self._text(k, path + ".<key>") if isinstance(k, str) else k
                child = _json_path(path, nk)
                if self.plain is not None and self.plain.match(child):
                    out[nk] = self._node(v, child, None, depth)
                    continue
                child_label = self.r.key_label(k) if isinstance(k, str) else None
                if child_label is None and pair is not None and k in _PAIR_VALUE_KEYS:
                    child_label = pair  # {"label": "Date of birth", "value": "..."}
                if child_label == "NAME" and names_a_thing(k, node):
                    child_label = None  # {"name": "Canela", "breed": ...}: a dog's name, read as text
                if child_label == "SECRET_IF_RANDOM" and label is not None:
                    child_label = None  # {"mail": {"mailgun_key": ...}}: the object's label holds
                if child_label is None and label == "AUTO" and thing_key(k):
                    out[nk] = self._node(v, child, None, depth)  # a device's serial in a record
                    continue
                out[nk] = self._node(v, child, child_label or label, depth)
            return out
        if isinstance(node, list):
            return [self._node(v, _json_path(path, i), label, depth) for i, v in enumerate(node)]
        if label is not None and isinstance(node, (int, float)) and not isinstance(node, bool):
            if label in CONDITIONAL_LABELS:  # a number under such a key: only what it is
                label = self._conditional(label, str(node))
                if label is None:
                    return node
            return self._whole(str(node), path, label)
        return node

    def _pair_label(self, node: dict[Any, Any]) -> str | None:
        """The label of a field written as a name/value pair, or None.

        A form's fields, a CRM's custom fields, OpenTelemetry's ``{"key": ..., "value": ...}``
        attributes: the label its name would give as a key, a person's name only when the
        value is person-like (AUTO).
        """
        if len(node) > 6 or not any(k in node for k in _PAIR_VALUE_KEYS):
            return None
        for nk in _PAIR_NAME_KEYS:
            name = node.get(nk)
            if isinstance(name, str) and 0 < len(name) <= 60:
                label = self.r.key_label(name)
                if label == "NAME" and own_name_key(name):
                    return "AUTO"
                return label
        return None

    def _string(self, s: str, path: str, label: str | None, depth: int) -> str:
        if label is not None and s.strip():
            stripped = s.strip()
            if PSEUDONYM.fullmatch(stripped):
                return s
            if label in CONDITIONAL_LABELS:
                label = self._conditional(label, stripped)
                if label is None:
                    return self._text(s, path, depth)
            if label == "NAME" and (
                s in self.tool_names or is_identifier(stripped) or organisation_like(stripped)
            ):
                return self._text(s, path, depth)
            if label == "SECRET" and _NOT_A_SECRET.match(stripped):
                return s
            if label == "SECRET" and value_label(label, stripped) is None:
                return self._text(s, path, depth)  # a dated business reference, read as text
            if label in ("PHONE", "DOB", "IP", "CARD", "IBAN", "SSN") and not any(
                c.isdigit() for c in stripped
            ):
                return self._text(s, path, depth)
            return self._whole(s, path, label)
        if depth < self.r.policy.max_json_depth and len(s) >= 2 and s.lstrip()[:1] in ("{", "["):
            tree, ok = _try_json(s)
            if ok and isinstance(tree, (dict, list)):
                new = self._node(tree, path, None, depth + 1)
                return json.dumps(new, ensure_ascii=False) if self.write and new != tree else s
        return self._text(s, path, depth)

    def _conditional(self, label: str, s: str) -> str | None:
        """The label a conditional key rule gives this value (or None: read it as text)."""
        return self._auto_label(s) if label == "AUTO" else value_label(label, s)

    def _auto_label(self, s: str) -> str | None:
        """AUTO keys: the detected type of the whole value, NAME for a person-like value."""
        dets = self.r.detector.detect(s)
        if len(dets) == 1 and dets[0].end - dets[0].start >= len(s) - 2:
            return dets[0].label
        if _PERSON_LIKE.match(s) and person_like(s):  # lower-case registers too (person_like)
            return "NAME"
        if _ACCOUNT_LIKE.match(s.replace(" ", "")):
            return "ACCOUNT"  # an account number of a scheme no detector knows
        return None

    def _whole(self, s: str, path: str, label: str) -> str:
        token = self.pseudo.get(label, s)
        self._note(path, label, "key")
        return token

    def _decoded(self, path: str, kind: str, depth: int) -> Any:
        """The callback a segment rewriter calls with a decoded value (and its key, if any)."""

        def on_text(decoded: str, key: str | None) -> str:
            sub = f"{path}<{kind}>"
            label = self.r.key_label(key) if key else None
            if kind == "line" and label == "NAME" and (own_name_key(key) or not _PERSON_LIKE.match(decoded)):
                # "Name: Standard plan", "assignee: queue/ops, see ..." in prose: the rest of a
                # line is a name only when person-like
                label = "AUTO"
            elif kind in ("line", "pair") and label == "CARD":
                label = None  # a library or loyalty "card" in prose: only what the detectors find
            if depth >= 4:
                return decoded
            return self._string(decoded, sub, label, depth + 1)

        return on_text

    def _text(self, s: str, path: str, depth: int = 0) -> str:
        segs: list[Any] = []
        if depth < 4 and len(s) >= 8:
            segs = self.segments.get(s)  # type: ignore[assignment]
            if segs is None:  # found once per trace: the second pass reuses them
                segs = self.segments[s] = segments(s)
        spans: list[tuple[Detection, str]] = []
        for pattern, label in self.r._deny:
            for m in pattern.finditer(s):
                if m.end() > m.start():
                    spans.append((Detection(m.start(), m.end(), label, _DENY_SCORE), "deny"))
        for det in self.r.detector.detect(s):
            spans.append((det, "pattern" if det.rule == "pattern" else det.rule))
        if self.write and self.pseudo.literals:
            for start, end in self.pseudo.occurrences(s):
                given = _given_name_before(s, start, self.pseudo.literals[s[start:end]])
                if given < start:  # "Aarav Sharma" in a trace that named "Kavita Sharma"
                    spans.append((Detection(given, end, "NAME", _PROPAGATED_SCORE), "family"))
                else:
                    spans.append((Detection(start, end, "", _PROPAGATED_SCORE), "propagated"))
        # A secret covering a whole encoded run wins (a JWT is one credential); other
        # detections inside an encoded run give way to the decoded run's own redaction.
        kept_segs = [
            g
            for g in segs
            if not any(
                d.label == "SECRET" and d.start <= g.start and g.end <= d.end for d, _ in spans
            )
        ]
        spans = [
            (d, rule)
            for d, rule in spans
            if all(d.end <= g.start or d.start >= g.end for g in kept_segs)
        ]
        rewritten = {id(g): g.rewrite(self._decoded(path, g.kind, depth)) for g in kept_segs}
        if not spans and all(rewritten[id(g)] == s[g.start : g.end] for g in kept_segs):
            return s
        rule_of = {id(d): rule for d, rule in spans}
        chosen = longest_first([d for d, _ in spans])
        if not self.write:
            for d in chosen:
                if d.label:
                    self.pseudo.get(d.label, s[d.start : d.end])
            return s
        pieces: list[tuple[int, int, str]] = [
            (g.start, g.end, rewritten[id(g)])
            for g in kept_segs
            if rewritten[id(g)] != s[g.start : g.end]
        ]
        for d in chosen:
            value = s[d.start : d.end]
            token = self.pseudo.get(d.label, value) if d.label else self.pseudo.literals[value]
            label = token[1 : token.rindex("_")]
            self._note(path, label, rule_of[id(d)])
            pieces.append((d.start, d.end, token))
        pieces.sort()
        parts: list[str] = []
        pos = 0
        for start, end, text in pieces:
            parts.append(s[pos:start])
            parts.append(text)
            pos = end
        parts.append(s[pos:])
        return "".join(parts)


def _given_name_before(s: str, start: int, token: str) -> int:
    """Where a person's name begins when a name word the trace already named follows a given name.

    A surname found once (``Kavita Sharma``) is propagated wherever it occurs;
    a capitalised word just before it that reads as a person's word (a first
    name, or in no language's common vocabulary: ``Aarav Sharma``, not ``Dear
    Sharma``) is the given name of another member of the family, so the two
    words are one new name. Returns ``start`` when there is none.
    """
    if not token.startswith("<NAME_"):
        return start
    m = _WORD_BEFORE.search(s, max(0, start - 31), start)
    if m is None or not m.group(1)[0].isupper() or m.group(1).isupper():
        return start
    return m.start(1) if person_like(m.group(1)) else start


def step_text(step: TraceStep, name: str) -> str:
    """Read a field (``texts.X`` for extra texts) from a step."""
    if name.startswith("texts."):
        return step.texts[name[6:]]
    value = getattr(step, name)
    assert isinstance(value, str)
    return value


def _rebuild(step: TraceStep, values: dict[str, str]) -> TraceStep:
    texts = dict(step.texts)
    direct: dict[str, str] = {}
    for name, v in values.items():
        if name.startswith("texts."):
            texts[name[6:]] = v
        else:
            direct[name] = v
    return replace(step, texts=texts, **direct)


def redact_trace(
    steps: Sequence[TraceStep | Mapping[str, Any]], policy: RedactionPolicy | None = None
) -> RedactedTrace:
    """Redact one trace with a fresh ``Redactor`` (use a ``Redactor`` for many)."""
    return Redactor(policy).redact_trace(steps)
