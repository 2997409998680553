"""Every detector behind one cached call: patterns, secrets, names, addresses, birth dates, ids.

Why one class: redaction (``flywheel.promote``) and the release scanner
(``flywheel.evalset``) must see the same things, or a release could pass a
value the redactor was never able to find (or refuse what it always
replaces). Engines are heavy (Presidio, the name list), so one ``Detector``
per entity set is shared per process (``shared_detector``), and results are
cached by text because traces repeat the same strings.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

from flywheel.pii._spoken import SPOKEN_LABELS, spoken_numbers
from flywheel.pii._types import ENTITIES, Detection, longest_first

#: Every entity, the default of a redaction policy and of the release scan.
ALL_ENTITIES: tuple[str, ...] = tuple(ENTITIES)
#: A pseudonym written by redaction (``<EMAIL_3>``): never a finding.
PSEUDONYM = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>")
_ID_LIKE = re.compile(
    r"""\A(?:
        [0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}
      | \d{4}-\d{2}-\d{2}(?:[T\x20]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?
      | -?\d{1,6}(?:\.\d+)?
      | [a-z_]{1,40}
    )\Z""",
    re.VERBOSE,
)


def check_entities(entities: Sequence[str]) -> tuple[str, ...]:
    """The entities, or ``ValueError`` naming the first unknown one."""
    for e in entities:
        if e not in ENTITIES:
            raise ValueError(f"unknown entity type {e!r}; choose from {', '.join(ENTITIES)}")
    return tuple(entities)


class Detector:
    """All detectors for ``entities``, non-overlapping results, an LRU cache by text.

    Args:
        entities: Entity names (keys of ``ENTITIES``); all by default.
        analyzer: A prebuilt Presidio analyzer to share; built on first use.
        cache_size: Texts whose detections are remembered.
    """

    def __init__(
        self,
        entities: Sequence[str] = ALL_ENTITIES,
        analyzer: object | None = None,
        cache_size: int = 50_000,
    ) -> None:
        self.entities = check_entities(entities)
        self.labels = {ENTITIES[e] for e in self.entities}
        self._analyzer = analyzer
        self._patterns: object | None = None
        self._cache: OrderedDict[str, tuple[Detection, ...]] = OrderedDict()
        self._cache_size = cache_size
        self.calls = self.hits = 0

    def _pattern_detector(self):  # noqa: ANN202 - lazy: Presidio is imported on first use
        if self._patterns is None:
            from flywheel.pii._patterns import PatternDetector

            self._patterns = PatternDetector(self.entities, self._analyzer)
        return self._patterns

    def detect(self, text: str) -> tuple[Detection, ...]:
        """Non-overlapping detections in ``text``, longest first wins (cached)."""
        self.calls += 1
        hit = self._cache.get(text)
        if hit is not None:
            self.hits += 1
            self._cache.move_to_end(text)
            return hit
        result = tuple(self._detect(text))
        self._cache[text] = result
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return result

    def _detect(self, text: str) -> list[Detection]:
        if len(text) < 4 or _ID_LIKE.match(text):
            return []
        from flywheel.pii import _people, _secrets

        labels = self.labels
        found: list[Detection] = []
        if labels & {"EMAIL", "PHONE", "CARD", "IBAN", "IP", "SSN"}:
            found += self._pattern_detector().detect(text)
        if "SECRET" in labels:
            found += _secrets.detect_secrets(text)
        if "NAME" in labels:
            found += _people.detect_names(text)
        if "ADDRESS" in labels:
            found += _people.detect_addresses(text)
        if "DOB" in labels:
            found += _people.detect_birth_dates(text)
        if "NATIONAL_ID" in labels:
            found += _people.detect_national_ids(text)
        if "<" in text and labels & {"NATIONAL_ID", "NAME"}:
            from flywheel.pii._mrz import detect_mrz

            found += detect_mrz(text, labels)
        if labels & SPOKEN_LABELS and len(text) >= 20:
            found += spoken_numbers(text, self._detect)
        if not found:
            return []
        if "SECRET" in labels and "EMAIL" in labels:
            found = _no_email_inside_credential(found)
        tokens = [(m.start(), m.end()) for m in PSEUDONYM.finditer(text)] if "<" in text else []
        if tokens:
            found = [d for d in found if all(d.end <= s or d.start >= e for s, e in tokens)]
        return longest_first(found)


def _no_email_inside_credential(found: list[Detection]) -> list[Detection]:
    """Drop an e-mail that begins inside a credential: ``user:pa#ss@db.host`` is a password
    before a host, not a mailbox ``ss@db.host`` (which, being longer, would win)."""
    secrets = [d for d in found if d.label == "SECRET"]
    if not secrets:
        return found
    return [
        d
        for d in found
        if d.label != "EMAIL" or not any(s.start <= d.start < s.end for s in secrets)
    ]


_SHARED: dict[tuple[str, ...], Detector] = {}
_SHARED_LOCK = threading.Lock()


def shared_detector(entities: Sequence[str] = ALL_ENTITIES) -> Detector:
    """The process's ``Detector`` for ``entities`` (engines load once per process)."""
    key = check_entities(entities)
    with _SHARED_LOCK:
        det = _SHARED.get(key)
        if det is None:
            analyzer = next((d._analyzer for d in _SHARED.values() if d._analyzer), None)
            det = _SHARED[key] = Detector(key, analyzer)
        return det
