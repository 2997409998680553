"""JSON documents (AgentDojo environment dumps, API state) as canonical records.

The rule, so that the same document always yields the same records:

* **Resource type** is the path of field names from the root, joined by dots
  (``bank_account.transactions``, ``slack.user_inbox``). Map keys and list
  positions never enter the type; they enter the key. An optional ``prefix``
  is put in front.
* **Namespace level** (the root and nested structs): scalar children become
  the fields of one record of that struct's type (the root's type is ``$``),
  keyed by the map keys and list keys on the way down. Container children are
  collections:

  - a *map* (a dict keyed by data: names, URLs, file names) contributes one
    element per entry, keyed by the entry's key;
  - a *list* contributes one element per item, keyed by
    1. for lists of objects: the first id-like field (``id``, ``id_``,
       ``uuid``, ``key``, ``email``, ``name``, ``url``, ``path``) that every
       item has as a scalar and whose values are unique;
    2. for lists of scalars: the value itself (set semantics; a repeated value
       gets ``#2``, ``#3``...), so removing one member of a list of users is a
       deletion of that user, not a shift of every later position;
    3. otherwise the list index.
  - a struct (a dict with fixed field names) is descended into.
* **Element level**: a scalar element is a record with one field ``value``; an
  object element is one record whose fields are its scalars, its lists of
  scalars (as JSON arrays) and its nested objects flattened with dotted names;
  lists of objects (and hinted maps) inside an element are sub-collections of
  type ``<type>.<field>``; a list element that is itself a list extends the key.
* **Map or struct?** ``maps`` (globs on the resource type) says which dicts are
  maps; ``maps_from_pydantic`` derives them from a pydantic model's ``dict[...]``
  fields, which is how AgentDojo environments are read. Without a hint, a
  namespace-level dict whose keys are not all identifiers is a map.
"""

from __future__ import annotations

import fnmatch
import json
import types
import typing
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from ._adapters import register_adapter
from ._records import Record

ID_FIELDS: tuple[str, ...] = ("id", "id_", "uuid", "key", "email", "name", "url", "path")

ROOT_TYPE = "$"


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool)


def _key_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


@register_adapter
class JsonDocumentAdapter:
    """Records from a JSON document (a parsed dict or list), by the rule above."""

    name = "json"

    def __init__(
        self,
        prefix: str = "",
        maps: Sequence[str] = (),
        structs: Sequence[str] = (),
        id_fields: Sequence[str] = ID_FIELDS,
    ) -> None:
        self.prefix = prefix
        self.maps = tuple(maps)
        self.structs = tuple(structs)
        self.id_fields = tuple(id_fields)

    def records(self, source: Any) -> Iterable[Record]:
        """Yield the records of a parsed JSON document."""
        if isinstance(source, BaseModel):
            source = source.model_dump(mode="json")
        if isinstance(source, dict):
            root = self.prefix or ROOT_TYPE
            if source and self._is_map(root, source, in_record=False):
                for k, x in source.items():
                    yield from self._elem(x, root, (str(k),))
            else:
                yield from self._struct(source, self.prefix, ())
        elif isinstance(source, list):
            yield from self._list(source, self.prefix or ROOT_TYPE, ())
        else:
            yield Record(self.prefix or ROOT_TYPE, (), {"value": source})

    # -- helpers -----------------------------------------------------------
    def _hinted(self, rtype: str, globs: tuple[str, ...]) -> bool:
        return any(fnmatch.fnmatchcase(rtype, g) for g in globs)

    def _is_map(self, rtype: str, node: dict[str, Any], *, in_record: bool) -> bool:
        if self._hinted(rtype, self.maps):
            return True
        if in_record or self._hinted(rtype, self.structs):
            return False
        return any(not str(k).isidentifier() for k in node)

    @staticmethod
    def _child(rtype: str, name: str) -> str:
        return f"{rtype}.{name}" if rtype else name

    def _struct(self, node: dict[str, Any], rtype: str, key: tuple[str, ...]) -> Iterator[Record]:
        fields: dict[str, Any] = {}
        for name, v in node.items():
            child = self._child(rtype, str(name))
            if _scalar(v):
                fields[str(name)] = v
            elif isinstance(v, dict):
                if self._is_map(child, v, in_record=False):
                    for k, x in v.items():
                        yield from self._elem(x, child, (*key, str(k)))
                else:
                    yield from self._struct(v, child, key)
            elif isinstance(v, list):
                yield from self._list(v, child, key)
            else:
                fields[str(name)] = v
        if fields:
            yield Record(rtype or ROOT_TYPE, key, fields)

    def element_keys(self, items: list[Any]) -> list[str]:
        """Keys of a list's elements by the id-field / value / index rule."""
        if all(_scalar(x) for x in items):
            seen: dict[str, int] = {}
            out = []
            for x in items:
                k = _key_text(x)
                n = seen.get(k, 0) + 1
                seen[k] = n
                out.append(k if n == 1 else f"{k}#{n}")
            return out
        if items and all(isinstance(x, dict) for x in items):
            for f in self.id_fields:
                vals = [x.get(f) for x in items]
                if all(v is not None and _scalar(v) for v in vals):
                    texts = [_key_text(v) for v in vals]
                    if len(set(texts)) == len(texts):
                        return texts
        return [str(i) for i in range(len(items))]

    def _list(self, items: list[Any], rtype: str, key: tuple[str, ...]) -> Iterator[Record]:
        for k, x in zip(self.element_keys(items), items, strict=True):
            yield from self._elem(x, rtype, (*key, k))

    def _elem(self, x: Any, rtype: str, key: tuple[str, ...]) -> Iterator[Record]:
        if isinstance(x, dict):
            fields: dict[str, Any] = {}
            subs: list[Record] = []
            self._flatten(x, rtype, key, "", fields, subs)
            yield Record(rtype, key, fields)
            yield from subs
        elif isinstance(x, list):
            yield from self._list(x, rtype, key)
        else:
            yield Record(rtype, key, {"value": x})

    def _flatten(
        self,
        d: dict[str, Any],
        rtype: str,
        key: tuple[str, ...],
        prefix: str,
        fields: dict[str, Any],
        subs: list[Record],
    ) -> None:
        for name, v in d.items():
            fname = f"{prefix}{name}"
            child = f"{rtype}.{fname}"
            if _scalar(v):
                fields[fname] = v
            elif isinstance(v, list) and all(_scalar(x) for x in v):
                fields[fname] = list(v)
            elif isinstance(v, dict):
                if self._is_map(child, v, in_record=True):
                    for k, x in v.items():
                        subs.extend(self._elem(x, child, (*key, str(k))))
                else:
                    self._flatten(v, rtype, key, f"{fname}.", fields, subs)
            elif isinstance(v, list):
                subs.extend(self._list(v, child, key))
            else:
                fields[fname] = v


def _unwrap(ann: Any) -> list[Any]:
    """The concrete types inside Optional/Union/Annotated."""
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(ann)[0])
    if origin in (typing.Union, types.UnionType):
        out: list[Any] = []
        for a in typing.get_args(ann):
            if a is not type(None):
                out.extend(_unwrap(a))
        return out
    return [ann]


def maps_from_pydantic(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Resource-type paths of every ``dict[...]`` field of a pydantic model, recursively.

    These are the ``maps`` hint for ``JsonDocumentAdapter`` so that a model's
    dumps are read with its own notion of map versus struct.
    """
    out: list[str] = []
    seen: set[tuple[type, str]] = set()

    def walk(ann: Any, path: str) -> None:
        for t in _unwrap(ann):
            origin = typing.get_origin(t)
            if origin is dict:
                out.append(path)
                walk(typing.get_args(t)[1] if typing.get_args(t) else Any, path)
            elif origin in (list, tuple, set, frozenset, Sequence):
                for a in typing.get_args(t):
                    if a is not Ellipsis:
                        walk(a, path)
            elif isinstance(t, type) and issubclass(t, BaseModel):
                if (t, path) in seen:
                    continue
                seen.add((t, path))
                for name, f in t.model_fields.items():
                    walk(f.annotation, f"{path}.{name}" if path else name)

    walk(model, prefix)
    return sorted(set(out))
