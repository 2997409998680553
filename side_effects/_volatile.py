"""Volatile fields: values the system sets on a write, recognised from one run.

A scope built from one run must not pin what the clock, an id generator or a
counter wrote, or every honest re-run fails. Three kinds, each recognised by
the value's **type** and by its **change pattern** in this run's diff (no
second run needed):

* **clock** (``timestamp``): every new value is a date-time -- ISO-8601 with
  a time of day, or an integer of epoch seconds or milliseconds between 2000
  and 2100 -- later than every value the same field held at s0 (the clock
  moves forward), and either the field's name says it records a time of
  writing (``Profile.clock_fields``: ``*_at``, ``*modified*``,
  ``*timestamp*``...), or it changed on every written record of its type (at
  least two), or its every new value is to the second (non-zero seconds or
  a fraction, an epoch off the minute: a machine's clock, where times people
  choose fall on the minute), or its every new value lies within an hour of
  a clock so recognised in the same diff (written at the moment of the
  write). A date without a time of day (a due date, an appointment day) is
  content, never volatile.
* **generated id** (``uuid``): every new value is a UUID.
* **counter** (``increased``): integers whose name says they count
  (``Profile.counter_fields``: ``*version*``, ``*revision*``, ``next_*``...)
  and whose every new value is above the old one (an update) or above every
  s0 value of the field (a creation: the next id).

Each finding says which kind and why, so the diff and the scope can print it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ._diff import Delta
from ._paths import leaves
from ._policy import Profile, glob_any
from ._records import Snapshot

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$")
_UUID = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"
)
_INDEX = re.compile(r"\[\d+\]")


def as_time(v: Any) -> dt.datetime | None:
    """An ISO-8601 date-time with a time of day as an aware datetime, else None."""
    if not isinstance(v, str) or not _ISO.match(v):
        return None
    try:
        t = dt.datetime.fromisoformat(v.replace("Z", "+00:00").replace(" ", "T"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


def is_uuid(v: Any) -> bool:
    """A canonical UUID string."""
    return isinstance(v, str) and bool(_UUID.match(v))


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_EPOCH = (946_684_800, 4_102_444_800)  # 2000-01-01 .. 2100-01-01, in seconds


def as_clock(v: Any) -> dt.datetime | None:
    """A date-time a clock could have written: ISO-8601 with a time of day, or epoch s / ms."""
    if _int(v):
        lo, hi = _EPOCH
        if lo <= v < hi:
            return dt.datetime.fromtimestamp(v, dt.UTC)
        if lo * 1000 <= v < hi * 1000:
            return dt.datetime.fromtimestamp(v / 1000, dt.UTC)
        return None
    return as_time(v)


def to_the_second(v: Any) -> bool:
    """A time written by a machine's clock: seconds or a fraction that are not zero."""
    if _int(v):
        return v % (60_000 if v >= _EPOCH[0] * 1000 else 60) != 0
    t = as_time(v)
    return t is not None and (t.second != 0 or t.microsecond != 0)


_DIGIT_RUNS = re.compile(r"\d+")


def _separators(s: str) -> list[tuple[int, str]]:
    return [(i, c) for i, c in enumerate(s) if not c.isalnum()]


def same_generator(a: str, b: str) -> bool:
    """Whether two different key parts look like two outputs of one id generator.

    Generated ids carry digits and keep one shape: two UUIDs; the same text
    around different numbers (``INV-5060`` / ``INV-5061``, ``10`` / ``11``);
    or the same length and separators with digits in both (random slugs
    ``p_f8bb256a`` / ``p_33bfdaef``, ULIDs). Names a call chose (``Dora`` /
    ``Charlie``, ``general`` / ``general#2``) and addresses (``@``, spaces)
    do not.
    """
    if a == b:
        return True
    if is_uuid(a) and is_uuid(b):
        return True
    if any(c in x for x in (a, b) for c in "@ "):
        return False
    skel = _DIGIT_RUNS.sub("#", a)
    if "#" in skel and skel == _DIGIT_RUNS.sub("#", b):
        return True
    return (
        len(a) == len(b)
        and any(c.isdigit() for c in a)
        and any(c.isdigit() for c in b)
        and _separators(a) == _separators(b)
    )


_HOUR = dt.timedelta(hours=1)


def _leaf(path: str) -> str:
    return path.rsplit(".", 1)[-1].replace("[]", "")


def _at(node: Any, steps: Sequence[tuple[str, bool]]) -> list[Any]:
    """Values at a generic path (``[]``: every element of a list of objects)."""
    nodes = [node]
    for name, every in steps:
        nxt = []
        for n in nodes:
            if isinstance(n, dict) and name in n:
                v = n[name]
                if every and isinstance(v, list):
                    nxt.extend(v)
                else:
                    nxt.append(v)
        nodes = nxt
    return nodes


def generic_path(path: str) -> str:
    """A path with list positions erased (``slots[2].at`` -> ``slots[].at``)."""
    return _INDEX.sub("[]", path)


@dataclass(frozen=True, slots=True)
class Volatile:
    """A field recognised as set by the system; ``kind`` is the constraint it gets."""

    kind: str  # "timestamp" | "uuid" | "increased"
    reason: str


class VolatileIndex:
    """Volatile fields of one diff, by (resource type, generic path)."""

    def __init__(self, s0: Snapshot | None, deltas: Sequence[Delta], profile: Profile) -> None:
        self.profile = profile
        self.s0 = s0
        self._s0_values: dict[tuple[str, str], list[Any]] = {}
        news: dict[tuple[str, str], list[tuple[Any, Any, str]]] = {}
        written: dict[str, int] = {}
        touched: dict[tuple[str, str], int] = {}
        for d in deltas:
            if d.kind == "deleted":
                continue
            written[d.resource_type] = written.get(d.resource_type, 0) + 1
            if d.kind == "created":
                pairs: Iterable[tuple[str, Any, Any]] = (
                    (p, None, v) for p, v in leaves(d.after or {})
                )
            else:
                pairs = ((c.field, c.before, c.after) for c in d.changes if c.op != "removed")
            seen: set[str] = set()
            for path, before, after in pairs:
                g = generic_path(path)
                news.setdefault((d.resource_type, g), []).append((before, after, d.kind))
                if g not in seen:
                    seen.add(g)
                    touched[(d.resource_type, g)] = touched.get((d.resource_type, g), 0) + 1
        self.found: dict[tuple[str, str], Volatile] = {}
        self._clock: list[dt.datetime] = []
        named = [k for k in news if glob_any(_leaf(k[1]), profile.clock_fields)]
        for rtype, g in [*named, *(k for k in news if k not in named)]:
            vals = news[(rtype, g)]
            every = written[rtype] >= 2 and touched[(rtype, g)] == written[rtype]
            v = self._judge(rtype, g, vals, every_write=every)
            if v is not None:
                self.found[(rtype, g)] = v
                if v.kind == "timestamp" and not v.reason.endswith("the write's clock"):
                    self._clock += [t for _, a, _ in vals if (t := as_clock(a)) is not None]

    def get(self, rtype: str, path: str) -> Volatile | None:
        """The finding for one field of one type, or None."""
        return self.found.get((rtype, generic_path(path)))

    def _old_values(self, rtype: str, g: str) -> list[Any]:
        """Every s0 value of one field (generic path) across the records of one type."""
        if self.s0 is None:
            return []
        got = self._s0_values.get((rtype, g))
        if got is None:
            steps = [(part.replace("[]", ""), part.endswith("[]")) for part in g.split(".")]
            got = []
            for t, k in self.s0.raw:
                if t == rtype:
                    got.extend(_at(self.s0.fields((t, k)), steps))
            self._s0_values[(rtype, g)] = got
        return got

    def _judge(
        self, rtype: str, g: str, vals: list[tuple[Any, Any, str]], *, every_write: bool
    ) -> Volatile | None:
        name = _leaf(g)
        afters = [a for _, a, _ in vals]
        if all(is_uuid(a) for a in afters):
            return Volatile("uuid", "a generated UUID")
        times = [as_clock(a) for a in afters]
        if all(t is not None for t in times):
            olds = [t for v in self._old_values(rtype, g) if (t := as_clock(v)) is not None]
            olds += [t for b, _, _ in vals if (t := as_clock(b)) is not None]
            latest = max(olds, default=None)
            later = latest is None or all(t > latest for t in times if t is not None)
            named = glob_any(name, self.profile.clock_fields)
            near = bool(self._clock) and all(
                t is not None and min(abs(t - c) for c in self._clock) <= _HOUR for t in times
            )
            precise = all(to_the_second(a) for a in afters)
            if later and (named or every_write or precise or near):
                why = (
                    "its name records a time of writing"
                    if named
                    else "set on every write"
                    if every_write
                    else "written to the second"
                    if precise
                    else "written with the write's clock"
                )
                return Volatile("timestamp", f"a timestamp later than every s0 value; {why}")
            return None
        if all(_int(a) for a in afters) and glob_any(name, self.profile.counter_fields):
            olds_c = [v for v in self._old_values(rtype, g) if _int(v)]
            ok = True
            for before, after, kind in vals:
                if kind == "created":
                    ok &= not olds_c or after > max(olds_c)
                else:
                    ok &= _int(before) and after > before
            if ok:
                return Volatile("increased", "a counter: its name counts and it went up")
        return None
