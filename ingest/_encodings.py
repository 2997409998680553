"""Structured values in text, whatever the encoding: JSON, YAML, Python reprs, Markdown
tables, key-value lines.

Agents show tool results to models as JSON, YAML (AgentDojo's default), Python
reprs (``str(result)`` of a dict or a pydantic model), Markdown tables and
``key: value`` text. Provenance tells a value *copied from a field* from one
*cut out of prose* (where injected instructions live), so a field must be a
field in every encoding: ``structured`` returns the document a text encodes,
or None for prose.

Python reprs are parsed with ``ast`` and converted node by node (literals,
containers, and ``Name(key=value, ...)`` constructor calls as mappings);
nothing is ever evaluated. YAML is read with ``yaml.safe_load`` (no object
construction) and accepted only when the text is laid out as YAML -- at
least two ``key: value`` or ``- item`` lines, or a one-item list -- and loads
to a mapping or a list, so a sentence with a colon stays prose.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

import yaml

#: Longest text parsed as a structured document (larger ones stay text).
MAX_CHARS = 1_000_000
_YAML_LINE = re.compile(r"^\s*(?:- |[\w][\w .'/()-]{0,60}:(?:\s|$))")
_KV_LINE = re.compile(r"^\s*([\w][\w .-]{0,40}?)\s*(?::|=)\s*(.*)$")
_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


def structured(text: str) -> Any:
    """The mapping or list ``text`` encodes (see the module docstring), else None."""
    s = text.strip()
    if len(s) < 2 or len(s) > MAX_CHARS:
        return None
    for parse in (_json, _python, _markdown, _yaml, _key_values):
        try:
            value = parse(s)
        except (ValueError, SyntaxError, RecursionError, MemoryError, yaml.YAMLError, TypeError):
            continue
        if isinstance(value, dict | list) and value:
            return value
    return None


def _json(s: str) -> Any:
    if s[0] not in "{[":
        return None
    return json.loads(s)


def _python(s: str) -> Any:
    if s[0] not in "{[(" and not re.match(r"^[A-Za-z_][\w.]*\(", s):
        return None
    return _literal(ast.parse(s, mode="eval").body)


def _literal(node: ast.AST) -> Any:
    """A Python expression node as data, without evaluating anything."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {str(_literal(k)) if k is not None else "**": _literal(v)
                for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand)
        if isinstance(value, int | float):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
        # a constructor repr: Email(id_='1', sender='a@b') -> its fields; datetime(2024, 5, 1)
        # -> its arguments joined, as the repr shows them
        if node.keywords:
            out = {str(k.arg): _literal(k.value) for k in node.keywords if k.arg}
            if node.args:
                out["args"] = [_literal(a) for a in node.args]
            return out
        return ", ".join(str(_literal(a)) for a in node.args)
    if isinstance(node, ast.Name):
        return node.id  # an enum or a constant shown by name
    if isinstance(node, ast.Attribute):
        return node.attr
    raise ValueError(f"not a literal: {type(node).__name__}")


def _yaml(s: str) -> Any:
    lines = [line for line in s.splitlines() if line.strip()]
    laid_out = sum(1 for line in lines if _YAML_LINE.match(line))
    if laid_out < 2 and not (len(lines) == 1 and lines[0].lstrip().startswith("- ")):
        return None  # one "key: value" line is a sentence with a colon; one "- item" a list
    return yaml.load(s, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass


class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses duplicate keys (YAML would keep the last silently,
    losing data: key-value records separated by blank lines look like that)."""


def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    keys = [loader.construct_object(k, deep=deep) for k, _ in node.value]
    if len(keys) != len(set(map(str, keys))):
        raise yaml.YAMLError("duplicate key")
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def _markdown(s: str) -> Any:
    """A Markdown document with tables: each row (header cells as keys), each list item
    and each paragraph outside the tables (nothing of the text is dropped)."""
    lines = s.splitlines()
    out: list[Any] = []
    para: list[str] = []
    tables = 0

    def flush() -> None:
        if para:
            out.append("\n".join(para))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if (line.strip().startswith("|") and i + 1 < len(lines)
                and _MD_SEPARATOR.match(lines[i + 1])):
            flush()
            tables += 1
            head = _cells(line)
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                out.append(dict(zip(head, _cells(lines[i]), strict=False)))
                i += 1
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            flush()
        elif stripped[:2] in ("- ", "* "):
            flush()
            out.append(stripped[2:].strip())
        else:
            para.append(stripped)
        i += 1
    flush()
    return out if tables else None


def _cells(line: str) -> list[str]:
    body = line.strip().strip("|")
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def _key_values(s: str) -> Any:
    """``key: value`` / ``key = value`` lines; blank lines separate records.

    A line that is not ``key: value`` continues the previous value (a value
    written over several lines, blank lines included); before the first key
    it makes the text prose.
    """
    if s.startswith("- "):
        return _items(s)
    records: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    last = ""
    blank = False
    for line in s.splitlines():
        if not line.strip():
            blank = True
            continue
        m = _KV_LINE.match(line)
        if m is None:
            if current is None:
                return None  # a line of prose before any key: not key-value text
            current[last] += ("\n\n" if blank else "\n") + line.strip()
        else:
            if current is None or (blank and m.group(1).strip() in current):
                current = {}  # a blank line, then a key seen again: the next record
                records.append(current)
            last = m.group(1).strip()
            current[last] = m.group(2).strip()
        blank = False
    records = [{k: v.strip() for k, v in r.items()} for r in records]
    if sum(len(r) for r in records) < 2:
        return None
    return records[0] if len(records) == 1 else records


def _items(s: str) -> list[str] | None:
    """``- item`` lines; a line that is not an item continues the previous one."""
    items: list[str] = []
    blank = False
    for line in s.splitlines():
        if not line.strip():
            blank = True
            continue
        if line.startswith("- "):
            items.append(line[2:].strip())
        elif items:
            items[-1] += ("\n\n" if blank else "\n") + line.strip()
        blank = False
    return [i.strip() for i in items] or None
