"""Declared semantics: MCP tool annotations, the project's manifest, ``flywheel.tool.*``.

MCP tool annotations (``readOnlyHint``, ``destructiveHint``,
``idempotentHint``, ``openWorldHint``; ``title`` is known and carries no
decision) are hints from the tool's server. Where an annotations object is
present, a hint it leaves out takes the MCP specification's default:
``readOnlyHint`` false, ``destructiveHint`` true, ``idempotentHint`` false
(both meaningful only for a tool that is not read-only), ``openWorldHint``
true. Unknown keys are ignored and counted.

A manifest entry (TOML or JSON, per project) or a span's ``flywheel.tool.*``
attributes declare fields directly:

.. code-block:: toml

    [tools.CashAppSendPayment]
    effect = "destructive"          # read | additive | destructive ("write" = additive)
    reach = "egress"                # closed | egress | communication
    touches = ["money"]             # money credentials permissions messages files code
    reversible = false
    idempotent = false
    annotations = { readOnlyHint = false }   # MCP hints, read as above
    description = "Withdraw money to a bank account"

A malformed value raises ``ToolDeclarationError`` naming the tool and the field.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flywheel.errors import ToolDeclarationError

from ._model import FIELDS, Decision, ToolDefinition, check_value

MCP_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
MCP_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
MCP_KNOWN = frozenset({*MCP_HINTS, "title"})
#: Fields a manifest entry may carry besides the decisions.
ENTRY_FIELDS = frozenset({*FIELDS, "annotations", "description", "parameters", "name"})
_ALIASES = {"effect": {"write": "additive", "read-only": "read", "readonly": "read"}}
#: Span attribute prefix an agent uses to declare its tools' semantics.
ATTRIBUTE_PREFIX = "flywheel.tool."


@dataclass(frozen=True)
class Declaration:
    """What one source declares about one tool: decisions and a definition."""

    decisions: dict[str, Decision] = field(default_factory=dict)
    definition: ToolDefinition | None = None
    ignored_keys: tuple[str, ...] = ()


def annotation_decisions(
    tool: str, annotations: Any, origin: str = "MCP annotation"
) -> tuple[dict[str, Decision], tuple[str, ...]]:
    """Decisions from an MCP annotations object, and the keys it ignored.

    Raises:
        ToolDeclarationError: not an object, or a hint that is not a boolean.
    """
    if annotations is None:
        return {}, ()
    if not isinstance(annotations, Mapping):
        raise ToolDeclarationError(
            f"tool {tool!r}: annotations must be an object of MCP hints, got {annotations!r:.60}"
        )
    ignored = tuple(sorted(str(k) for k in annotations if k not in MCP_KNOWN))
    hints: dict[str, tuple[bool, bool]] = {}  # hint -> (value, explicit)
    for hint in MCP_HINTS:
        if hint in annotations:
            value = annotations[hint]
            if not isinstance(value, bool):
                raise ToolDeclarationError(
                    f"tool {tool!r}: annotation {hint} must be true or false, got {value!r:.60}"
                )
            hints[hint] = (value, True)
        else:
            hints[hint] = (MCP_DEFAULTS[hint], False)

    def why(hint: str) -> tuple[str, float]:
        value, explicit = hints[hint]
        text = f"{origin} {hint}={str(value).lower()}"
        return (text, 0.8) if explicit else (f"MCP default {hint}={str(value).lower()}", 0.6)

    out: dict[str, Decision] = {}
    read_only = hints["readOnlyHint"][0]
    if read_only:
        text, conf = why("readOnlyHint")
        out["effect"] = Decision("read", "declared", text, conf)
        out["idempotent"] = Decision(True, "declared", text, conf)
        out["reversible"] = Decision(True, "declared", text, conf)
    else:
        d_text, d_conf = why("destructiveHint")
        r_text, r_conf = why("readOnlyHint")
        effect = "destructive" if hints["destructiveHint"][0] else "additive"
        out["effect"] = Decision(effect, "declared", f"{r_text}, {d_text}", min(d_conf, r_conf))
        i_text, i_conf = why("idempotentHint")
        out["idempotent"] = Decision(hints["idempotentHint"][0], "declared", i_text, i_conf)
    w_text, w_conf = why("openWorldHint")
    if not hints["openWorldHint"][0]:
        out["reach"] = Decision("closed", "declared", w_text, w_conf)
    else:
        out["reach"] = Decision("egress", "declared", w_text, w_conf)
    return out, ignored


def declaration(tool: str, entry: Any, origin: str) -> Declaration:
    """A manifest entry or an attribute set read into decisions (see module docstring).

    Raises:
        ToolDeclarationError: unknown field, or a value outside its field's domain.
    """
    if not isinstance(entry, Mapping):
        raise ToolDeclarationError(f"tool {tool!r}: {origin} entry must be a table/object")
    decisions: dict[str, Decision] = {}
    for key, raw in entry.items():
        if key not in ENTRY_FIELDS:
            raise ToolDeclarationError(
                f"tool {tool!r}: unknown field {key!r} in {origin}; "
                f"use {', '.join(sorted(ENTRY_FIELDS - {'name'}))}"
            )
        if key not in FIELDS:
            continue
        value = _ALIASES.get(key, {}).get(raw, raw) if isinstance(raw, str) else raw
        if key == "touches" and isinstance(value, str):
            value = [t.strip() for t in value.split(",") if t.strip()]
        try:
            checked = check_value(key, value)
        except ValueError as exc:
            raise ToolDeclarationError(f"tool {tool!r}: field {key} {exc}") from None
        decisions[key] = Decision(checked, "declared", origin, 1.0 if origin == "manifest" else 0.9)
    ann, ignored = annotation_decisions(tool, entry.get("annotations"), f"{origin} annotation")
    for key, dec in ann.items():
        decisions.setdefault(key, dec)
    parameters = entry.get("parameters")
    if parameters is not None and not isinstance(parameters, Mapping):
        raise ToolDeclarationError(f"tool {tool!r}: field parameters must be a JSON schema object")
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise ToolDeclarationError(f"tool {tool!r}: field description must be text")
    definition = ToolDefinition(tool, description, parameters, entry.get("annotations"), origin)
    return Declaration(decisions, definition, ignored)


def parse_manifest(text: str | bytes, *, fmt: str | None = None) -> dict[str, Declaration]:
    """A tool manifest (TOML ``[tools.NAME]`` tables, or JSON ``{"tools": {NAME: {...}}}``
    or a JSON list of objects with ``name``) read into declarations by tool name.

    Raises:
        ToolDeclarationError: unreadable document, or any malformed entry (the first).
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if fmt is None:  # "[tools.x]" opens TOML and JSON alike: JSON first, then TOML
        head = text.lstrip()[:1]
        fmt = "json" if head == "{" or (head == "[" and _json_ok(text)) else "toml"
    try:
        doc: Any = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ToolDeclarationError(f"tool manifest is not valid {fmt.upper()}: {exc}") from None
    tools = doc.get("tools", doc) if isinstance(doc, Mapping) else doc
    if isinstance(tools, list):
        entries: dict[str, Any] = {}
        for i, item in enumerate(tools):
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                raise ToolDeclarationError(f"tool manifest entry {i}: needs a string field 'name'")
            entries[item["name"]] = item
        tools = entries
    if not isinstance(tools, Mapping):
        raise ToolDeclarationError("tool manifest: expected a 'tools' table of tool entries")
    return {str(name): declaration(str(name), entry, "manifest") for name, entry in tools.items()}


def _json_ok(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def attribute_declaration(tool: str, attributes: Mapping[str, Any]) -> Declaration:
    """``flywheel.tool.<field>`` span attributes (strings; ``touches`` comma-separated).

    Raises:
        ToolDeclarationError: a malformed value (the caller records it on the trace).
    """
    entry: dict[str, Any] = {}
    for key, value in attributes.items():
        if not key.startswith(ATTRIBUTE_PREFIX):
            continue
        name = key[len(ATTRIBUTE_PREFIX) :]
        if name == "annotations" and isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise ToolDeclarationError(
                    f"tool {tool!r}: attribute {key} must be a JSON object"
                ) from None
        if name in ENTRY_FIELDS - {"name"}:
            entry[name] = value
    return declaration(tool, entry, "span attribute") if entry else Declaration()
