"""Data shapes shared by redaction and dedupe: a trace step, reports, policy.

A trace reaches promotion as a list of steps (one per span that carries text):
the tool name, its arguments and result (usually JSON text), and the model's
input and output texts. Plain dataclasses inside; the policy is a pydantic
model because it is read from a file that is versioned with the eval set.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flywheel.pii import ALL_ENTITIES, KEY_LABELS, check_entities, normalise_key
from flywheel.pii import DEFAULT_KEY_RULES as _PII_KEY_RULES
from flywheel.pii import DEFAULT_KEY_SUFFIXES as _PII_KEY_SUFFIXES
from pydantic import BaseModel, ConfigDict, Field, field_validator

#: The text-bearing fields of a step, in the order they are processed.
STEP_FIELDS: tuple[str, ...] = ("input_text", "arguments", "result", "output_text")


@dataclass(frozen=True)
class TraceStep:
    """One span of a trace as promotion sees it.

    Attributes:
        span_id: The span's id (kept, never redacted).
        tool_name: Tool called by this span, or None for model/agent spans.
        arguments: Tool arguments, usually a JSON string (bare values allowed).
        result: Tool result, usually a JSON string.
        input_text: Model/agent input (text or JSON messages).
        output_text: Model/agent output (text or JSON messages).
        texts: Further text attributes to redact, by attribute name.
    """

    span_id: str = ""
    tool_name: str | None = None
    arguments: str | None = None
    result: str | None = None
    input_text: str | None = None
    output_text: str | None = None
    texts: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TraceStep:
        """Build a step from a loose dict (``tool``/``name``, ``args``, ``input``... accepted).

        Non-string arguments/results (already-parsed JSON) are serialised.
        """

        def text(*keys: str) -> str | None:
            for k in keys:
                if k in d and d[k] is not None:
                    v = d[k]
                    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            return None

        return cls(
            span_id=str(d.get("span_id", "")),
            tool_name=d.get("tool_name", d.get("tool", d.get("name"))),
            arguments=text("arguments", "args"),
            result=text("result", "output_value"),
            input_text=text("input_text", "input"),
            output_text=text("output_text", "output"),
            texts=dict(d.get("texts", {}) or {}),
        )

    def field_items(self) -> list[tuple[str, str]]:
        """Return ``(field name, text)`` for every non-empty text field."""
        out = [(f, v) for f in STEP_FIELDS if (v := getattr(self, f)) is not None]
        out.extend((f"texts.{k}", v) for k, v in self.texts.items() if v is not None)
        return out


@dataclass(frozen=True)
class RedactionFinding:
    """Where something was redacted: location, entity type, rule, count (never the value)."""

    step: int
    span_id: str
    field: str
    path: str
    entity: str
    rule: str
    count: int

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "step": self.step,
            "span_id": self.span_id,
            "field": self.field,
            "path": self.path,
            "entity": self.entity,
            "rule": self.rule,
            "count": self.count,
        }


@dataclass(frozen=True)
class RedactionReport:
    """What was redacted in one trace.

    Attributes:
        findings: One row per (step, field, JSON path, entity, rule).
        distinct: Distinct values (= pseudonyms) per entity type.
    """

    findings: tuple[RedactionFinding, ...] = ()
    distinct: Mapping[str, int] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        """Occurrences replaced, per entity type."""
        c: Counter[str] = Counter()
        for f in self.findings:
            c[f.entity] += f.count
        return dict(sorted(c.items()))

    @property
    def total(self) -> int:
        """All occurrences replaced."""
        return sum(f.count for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (no redacted values anywhere)."""
        return {
            "schema_version": 1,
            "total": self.total,
            "counts": self.counts,
            "distinct": dict(sorted(self.distinct.items())),
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass(frozen=True)
class RedactedTrace:
    """A redacted copy of a trace plus its report."""

    steps: tuple[TraceStep, ...]
    report: RedactionReport


#: Default key rules and suffixes: the multilingual vocabulary of ``flywheel.pii``.
DEFAULT_KEY_RULES: dict[str, str] = dict(_PII_KEY_RULES)
DEFAULT_KEY_SUFFIXES: dict[str, str] = dict(_PII_KEY_SUFFIXES)
_LABEL = re.compile(r"^[A-Z][A-Z0-9_]{0,31}$")


class RedactionPolicy(BaseModel):
    """Which entities, keys, patterns and deny-listed strings are redacted.

    Read from the promotion policy file; every field has a safe default. A bad
    policy (unknown entity type, a regular expression that does not compile, a
    key rule whose key folds to nothing so it can match no key, a label that
    is not ``A-Z0-9_``) is refused with a message naming the entry.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    entities: tuple[str, ...] = Field(
        default=ALL_ENTITIES,
        description="Entity types detected in free text: " + ", ".join(ALL_ENTITIES) + ".",
    )
    key_rules: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_KEY_RULES),
        description="Normalised JSON key -> label; the whole value under that key is redacted. "
        "Label AUTO means: the detected entity type, NAME for a person-like value.",
    )
    key_suffixes: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_KEY_SUFFIXES),
        description="Normalised key suffix -> label, for keys like recipient_email.",
    )
    deny_strings: dict[str, list[str]] = Field(
        default_factory=dict, description="Label -> exact strings always redacted (case-sensitive)."
    )
    deny_patterns: dict[str, list[str]] = Field(
        default_factory=dict, description="Label -> regular expressions always redacted."
    )
    propagate_min_length: int = Field(
        default=3,
        description="Found values at least this long are also replaced wherever else they "
        "appear in the trace (keeps pseudonyms consistent across spans).",
    )
    max_json_depth: int = Field(
        default=3, description="How many levels of JSON-inside-a-JSON-string are parsed."
    )

    @field_validator("entities")
    @classmethod
    def _known_entities(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return check_entities(v)

    @field_validator("key_rules", "key_suffixes")
    @classmethod
    def _keys_match_something(cls, v: dict[str, str]) -> dict[str, str]:
        for key, label in v.items():
            if not normalise_key(key):
                raise ValueError(
                    f"key rule {key!r} matches no key (it has no letters or digits); "
                    "name the JSON key whose value to redact"
                )
            if not _LABEL.match(str(label)):
                raise ValueError(
                    f"key rule {key!r}: label {label!r} is not a label; use one of "
                    + ", ".join(KEY_LABELS)
                )
        return v

    @field_validator("deny_patterns")
    @classmethod
    def _patterns_compile(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        for label, patterns in v.items():
            for pat in patterns:
                try:
                    compiled = re.compile(pat)
                except re.error as exc:
                    raise ValueError(
                        f"deny pattern {pat!r} for {label} is not a valid regular expression: {exc}"
                    ) from None
                if compiled.match(""):
                    raise ValueError(
                        f"deny pattern {pat!r} for {label} matches the empty string; "
                        "it would redact nothing useful"
                    )
        return v
