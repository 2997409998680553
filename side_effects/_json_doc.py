"""JSON documents (AgentDojo environment dumps, API state) as canonical records.

The rule, so that the same document always yields the same records, and so
that the records are the things a task changes (an order, a user, a message)
without hints in most documents:

* **Resource type** is the path of field names from the root, joined by dots
  (``bank_account.transactions``, ``users.payment_methods``). Map keys and
  list positions never enter the type; they enter the key. An optional
  ``prefix`` is put in front.
* **Namespace level** (the root and nested structs): scalar children become
  the fields of one record of that struct's type (the root's type is ``$``),
  keyed by the map keys and list keys on the way down. Container children are
  collections:

  - a *map* (a dict keyed by data: user names, codes, URLs, file names)
    contributes one element per entry, keyed by the entry's key;
  - a *list* contributes one element per item, keyed by
    1. for lists of objects: the first id-like field that every item has as
       a scalar with unique values: ``id``, ``id_``, ``_id``, ``uuid``, then
       ``<singular of the list's name>_id`` (``reservations`` ->
       ``reservation_id``, also camelCase ``reservationId``), then ``key``,
       ``email``, ``name``, ``url``, ``path``; at namespace level, failing
       that, the id field of a sibling list whose records have largely the
       same fields (an ``archive`` beside ``notices`` keeps ``notice_id``),
       when unique here too;
    2. for lists of scalars: the value itself (set semantics; a repeated value
       gets ``#2``, ``#3``...), so removing one member of a list of users is a
       deletion of that user, not a shift of every later position;
    3. otherwise the list index.
  - a struct (a dict with fixed field names) is descended into.
* **Element level** (one record): a scalar element is a record with one field
  ``value``; an object element is one record holding its fields as they are:
  scalars, lists of scalars, nested objects, and **lists of objects without
  identity** (a reservation's flights, an order's lines). A change inside
  them is an update of that record, named by path (``flights[1].date``).
  What has identity of its own becomes a sub-collection of type
  ``<type>.<field>``, keyed by the parent's key plus its own: a nested list
  of objects with an id field proper (``id``, ``id_``, ``_id``, ``uuid``: a
  record's short lists often carry a foreign key such as ``payment_id`` that
  is unique only until the second payment with the same card, and a name or
  e-mail identifies a list of its own but not a part of a record), and a
  nested map. A list element
  that is itself a list extends the key.
* **Map or struct?** ``maps`` (globs on the resource type) says which dicts are
  maps and ``structs`` which are not; ``maps_from_pydantic`` derives the maps
  from a pydantic model's ``dict[...]`` fields, which is how AgentDojo
  environments are read (``infer=False``: the schema is complete). Otherwise
  the shape decides: a dict is a map when its keys are not all identifiers
  (dates, codes with dashes, e-mail addresses), when every value is an object
  carrying its own key in a field, when every value is an object and every
  key carries a digit (user handles, flight numbers), or (outside a record) when it has
  at least two values and all are objects with largely the same field names
  (users keyed by user name). Inside a record only the first two apply, so a
  record's ``billing`` and ``shipping`` addresses stay fields.
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

#: Id-like fields (rule 1), strongest first; ``{singular}`` is the list's name made singular.
ID_FIELDS: tuple[str, ...] = (
    "id",
    "id_",
    "_id",
    "uuid",
    "{singular}_id",
    "{singular}Id",
    "key",
    "email",
    "name",
    "url",
    "path",
)
#: How many of ``ID_FIELDS`` are ids proper (the rest identify only namespace-level lists).
STRONG_IDS = 4

ROOT_TYPE = "$"


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _scalar(v: Any) -> bool:
    return type(v) in _SCALARS or isinstance(v, str | int | float)


def _key_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _singular(name: str) -> str:
    """``reservations`` -> ``reservation``, ``entries`` -> ``entry`` (English plural forms)."""
    if name.endswith("ies") and len(name) > 4:
        return name[:-3] + "y"
    if name.endswith(("sses", "shes", "ches", "xes")):
        return name[:-2]
    if name.endswith("s") and not name.endswith("ss"):
        return name[:-1]
    return name


def _similar_shapes(values: Iterable[Any]) -> bool:
    """At least two objects whose field names mostly agree (a collection, not a struct)."""
    shapes = [frozenset(v) for v in values]
    if len(shapes) < 2 or not all(shapes):
        return False
    common = frozenset.intersection(*shapes)
    union = frozenset.union(*shapes)
    return len(common) * 2 >= len(union)


def _self_keyed(node: dict[str, Any]) -> bool:
    """Every value is an object holding its own map key in some scalar field."""
    if not node:
        return False
    for k, v in node.items():
        if not isinstance(v, dict) or not any(
            _scalar(x) and x is not None and _key_text(x) == str(k) for x in v.values()
        ):
            return False
    return True


def _unique(items: list[dict[str, Any]], f: str) -> bool:
    """Every item has ``f`` as a non-null scalar, and no two share a value."""
    vals = [x.get(f) for x in items]
    if not all(v is not None and _scalar(v) for v in vals):
        return False
    return len({_key_text(v) for v in vals}) == len(vals)


def _data_keyed(node: dict[str, Any]) -> bool:
    """Every key carries a digit and every value is an object (``mia_li_3668``, ``HX042``)."""
    return all(any(ch.isdigit() for ch in str(k)) and isinstance(v, dict) for k, v in node.items())


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
        infer: bool = True,
    ) -> None:
        self.prefix = prefix
        self.maps = tuple(maps)
        self.structs = tuple(structs)
        self.id_fields = tuple(id_fields)
        self.infer = infer
        self._hint_cache: dict[tuple[str, bool], bool | None] = {}
        # Shape decisions are taken once per resource type and kept: the records of one
        # type share one layout, and two snapshots read by one adapter share it too.
        self._map_cache: dict[tuple[str, bool], bool] = {}
        self._id_cache: dict[str, str | None] = {}
        self._names_cache: dict[tuple[str, bool], tuple[str, ...]] = {}

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
    def _hint(self, rtype: str, in_record: bool) -> bool | None:
        """True/False when a hint (or a complete schema) decides, None to infer."""
        got = self._hint_cache.get((rtype, in_record), ...)
        if got is ...:
            if any(fnmatch.fnmatchcase(rtype, g) for g in self.maps):
                got = True
            elif any(fnmatch.fnmatchcase(rtype, g) for g in self.structs) or not self.infer:
                got = False
            else:
                got = None
            self._hint_cache[(rtype, in_record)] = got
        return got  # type: ignore[return-value]

    def _is_map(self, rtype: str, node: dict[str, Any], *, in_record: bool) -> bool:
        got = self._map_cache.get((rtype, in_record))
        if got is not None:
            return got
        hint = self._hint(rtype, in_record)
        if hint is not None:
            return hint
        if not node:
            return False
        got = (
            any(not str(k).isidentifier() for k in node)
            or _self_keyed(node)
            or _data_keyed(node)
            or (
                not in_record
                and all(isinstance(v, dict) for v in node.values())
                and _similar_shapes(node.values())
            )
        )
        self._map_cache[(rtype, in_record)] = got
        return got

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
                yield from self._list(v, child, key, (node, rtype))
            else:
                fields[str(name)] = v
        if fields:
            yield Record(rtype or ROOT_TYPE, key, fields)

    def _id_names(self, rtype: str, nested: bool) -> tuple[str, ...]:
        got = self._names_cache.get((rtype, nested))
        if got is None:
            singular = _singular(rtype.rsplit(".", 1)[-1])
            patterns = self.id_fields[:STRONG_IDS] if nested else self.id_fields
            got = tuple(p.format(singular=singular) for p in patterns)
            self._names_cache[(rtype, nested)] = got
        return got

    def _id_field(self, items: list[Any], rtype: str, *, nested: bool = False) -> str | None:
        """The id-like field of a list of objects (rule 1), or None."""
        cached = self._id_cache.get(rtype, "")
        if cached and _unique(items, cached):
            return cached
        first = items[0]
        for f in self._id_names(rtype, nested):
            v0 = first.get(f)
            if v0 is None or not _scalar(v0):
                continue
            if _unique(items, f):
                self._id_cache[rtype] = f
                return f
        return None

    def _sibling_id(
        self, items: list[dict[str, Any]], siblings: tuple[dict[str, Any], str]
    ) -> str | None:
        """The id field of a sibling list whose records have this list's shape (rule 1b).

        An archive, a trash or a recalled list beside the collection its records
        came from keeps their identity (``notice_id``), though its own name
        does not give the field.
        """
        node, parent = siblings
        mine = frozenset(items[0])
        for name, other in node.items():
            if other is items or not isinstance(other, list) or not other:
                continue
            if not all(isinstance(x, dict) for x in other):
                continue
            f = self._id_field(other, self._child(parent, str(name)))
            theirs = frozenset(other[0])
            if (
                f is not None
                and f in mine
                and len(mine & theirs) * 2 >= len(mine | theirs)
                and _unique(items, f)
            ):
                return f
        return None

    def element_keys(
        self,
        items: list[Any],
        rtype: str = "",
        siblings: tuple[dict[str, Any], str] | None = None,
    ) -> list[str]:
        """Keys of a list's elements by the id-field / value / index rule.

        ``siblings``: the namespace the list sits in and its type, for rule 1b.
        """
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
            f = self._id_field(items, rtype)
            if f is None and siblings is not None:
                f = self._sibling_id(items, siblings)
                if f is not None:
                    self._id_cache[rtype] = f
            if f is not None:
                return [_key_text(x[f]) for x in items]
        return [str(i) for i in range(len(items))]

    def _list(
        self,
        items: list[Any],
        rtype: str,
        key: tuple[str, ...],
        siblings: tuple[dict[str, Any], str] | None = None,
    ) -> Iterator[Record]:
        for k, x in zip(self.element_keys(items, rtype, siblings), items, strict=True):
            yield from self._elem(x, rtype, (*key, k))

    def _elem(self, x: Any, rtype: str, key: tuple[str, ...]) -> Iterator[Record]:
        if isinstance(x, dict):
            subs: list[Record] = []
            fields = self._own(x, rtype, key, "", subs)
            yield Record(rtype, key, fields)
            yield from subs
        elif isinstance(x, list):
            yield from self._list(x, rtype, key)
        else:
            yield Record(rtype, key, {"value": x})

    def _own(
        self, d: dict[str, Any], rtype: str, key: tuple[str, ...], prefix: str, subs: list[Record]
    ) -> dict[str, Any]:
        """The part of an element that belongs to its record; the rest goes to ``subs``.

        Returns ``d`` itself when nothing has identity of its own (no copy).
        """
        out: dict[str, Any] | None = None
        scalars = _SCALARS
        for name, v in d.items():
            if type(v) in scalars:
                continue
            child = f"{rtype}.{prefix}{name}"
            kept: Any = v
            if isinstance(v, dict):
                if v and self._is_map(child, v, in_record=True):
                    for k, x in v.items():
                        subs.extend(self._elem(x, child, (*key, str(k))))
                    kept = None
                elif not scalars.issuperset(map(type, v.values())):
                    kept = self._own(v, rtype, key, f"{prefix}{name}.", subs)
            elif isinstance(v, list) and v and isinstance(v[0], dict):
                if (
                    all(isinstance(i, dict) for i in v)
                    and self._id_field(v, child, nested=True) is not None
                ):
                    subs.extend(self._list(v, child, key))
                    kept = None
            if kept is not v:
                if out is None:
                    out = dict(d)
                if kept is None:
                    del out[name]
                else:
                    out[name] = kept
        return d if out is None else out


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
