r"""Scan anything about to leave the system: by detector (releases) and by known value (tests).

Why: the release rule is "no raw PII in a released eval set". A release
cannot know the original values, so ``scan_document`` runs every detector
over every string of a bundle -- keys too, JSON held in strings, URL query
values, base64 and percent-encoded runs decoded -- and reports each finding
by entity type and path, never by value. Where a stricter check is cheap the
scan is stricter than redaction: a bare digit run that passes a national id
scheme checking a birth date is a finding without an id word (``strict-id``). Pseudonyms (``<EMAIL_1>``) are not
findings. ``find_leaks`` checks for known values (a test knows what it
planted), also inside JSON stored as a string, where escaping (``\\n``,
``\\u00e9``) would hide a plain substring search; ``find_values`` does the
same for values a caller knows are personal (the release's second witness:
what the source trace held under personal keys) and reports them by path and
type like a detector.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path
from dataclasses import dataclass
from typing import Any

from flywheel.pii._decode import segments
from flywheel.pii._detector import ALL_ENTITIES, PSEUDONYM, shared_detector
from flywheel.pii._keys import key_label, value_label


def strings_in(node: Any, max_depth: int = 4) -> list[str]:
    """Every string in ``node`` (keys too), also decoded from JSON held in strings."""
    out: list[str] = []
    stack: list[tuple[Any, int]] = [(node, 0)]
    while stack:
        cur, depth = stack.pop()
        if isinstance(cur, str):
            out.append(cur)
            if depth < max_depth and cur.lstrip()[:1] in ("{", "[", '"'):
                try:
                    stack.append((json.loads(cur), depth + 1))
                except ValueError:
                    pass
        elif isinstance(cur, dict):
            for k, v in cur.items():
                stack.append((k, depth))
                stack.append((v, depth))
        elif isinstance(cur, (list, tuple)):
            stack.extend((v, depth) for v in cur)
        elif cur is not None:
            out.append(str(cur))
    return out


def find_leaks(node: Any, values: Iterable[str]) -> list[str]:
    """The ``values`` that occur as a substring of any string in ``node``."""
    haystack = "\x00".join(strings_in(node))
    return sorted({v for v in values if v and v in haystack})


def find_leaks_in_dir(directory: str | Path, values: Iterable[str]) -> dict[str, list[str]]:
    """Scan every file under ``directory`` (JSON/JSONL decoded, else text) for ``values``.

    Returns:
        File path (relative) -> leaked values, only for files with a leak.
    """
    wanted = [v for v in values if v]
    root = Path(directory)
    leaks: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        docs: list[Any] = [text]
        if path.suffix == ".json":
            try:
                docs.append(json.loads(text))
            except ValueError:
                pass
        elif path.suffix == ".jsonl":
            for line in text.splitlines():
                try:
                    docs.append(json.loads(line))
                except ValueError:
                    pass
        found = find_leaks(docs, wanted)
        if found:
            leaks[str(path.relative_to(root))] = found
    return leaks


@dataclass(frozen=True)
class Finding:
    """A detected value: where (a JSON path) and what type, never the value."""

    path: str
    entity: str
    rule: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready."""
        return {"path": self.path, "entity": self.entity, "rule": self.rule}


def _child(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if str(key).isidentifier() else f"{path}[{json.dumps(key)}]"


_PLACEHOLDERS = {"", "null", "none", "true", "false", "***", "redacted"}
# A label as a value ({"password": "SECRET"} in a redaction policy) is no credential.
_LABEL_VALUE = re.compile(r"\A[A-Z][A-Z0-9_]*\Z")
#: An HTTP authentication scheme before a credential (RFC 9110): "Bearer <SECRET_1>" is a
#: redacted credential, as the bare pseudonym is.
_AUTH_SCHEME = re.compile(r"(?i)\A(?:bearer|basic|token|digest|negotiate)[ \t]+")


def _redacted(value: str) -> bool:
    """A pseudonym, alone or after an authentication scheme: what redaction wrote, no value."""
    v = _AUTH_SCHEME.sub("", value.strip(), count=1)
    return PSEUDONYM.fullmatch(v) is not None


#: Key labels whose finding depends on the value (``value_label``): a generated-looking
#: value under a ``...key`` field, any credential but a dated business reference.
_VALUE_DEPENDENT = ("SECRET_IF_RANDOM", "SECRET")


class _Scan:
    def __init__(self, entities: Iterable[str]) -> None:
        self.det = shared_detector(tuple(entities))
        self.found: list[Finding] = []

    def node(self, node: Any, path: str, depth: int) -> None:
        if isinstance(node, str):
            self.text(node, path, depth)
        elif isinstance(node, dict):
            for k, v in node.items():
                self.text(str(k), path + ".<key>", depth)
                label = key_label(str(k)) if isinstance(v, str) else None
                if label in _VALUE_DEPENDENT:
                    label = value_label(label, v)
                if (
                    isinstance(v, str)
                    and label == "SECRET"
                    and v.strip().lower() not in _PLACEHOLDERS
                    and not _LABEL_VALUE.match(v.strip())
                    and not _redacted(v)
                    and len(v.strip()) >= 4
                ):
                    self.found.append(Finding(_child(path, k), "SECRET", "key"))
                    continue
                self.node(v, _child(path, k), depth)
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                self.node(v, _child(path, i), depth)

    def text(self, s: str, path: str, depth: int) -> None:
        if depth < 4 and s.lstrip()[:1] in ("{", "[", '"'):
            try:
                self.node(json.loads(s), path, depth + 1)
                return
            except ValueError:
                pass
        segs = segments(s) if depth < 4 else []
        for seg in segs:

            def on_text(decoded: str, key: str | None, _p: str = path, _k: str = seg.kind) -> str:
                lab = key_label(key) if key is not None else None
                if lab in _VALUE_DEPENDENT:
                    lab = value_label(lab, decoded)
                if lab == "SECRET" and decoded.strip():
                    if not _redacted(decoded) and len(decoded) >= 4:
                        self.found.append(Finding(f"{_p}<{_k}:{key}>", "SECRET", "key"))
                    return decoded
                self.text(decoded, f"{_p}<{_k}>", depth + 1)
                return decoded

            seg.rewrite(on_text)
        dets = self.det.detect(s)
        for d in dets:
            inside = [g for g in segs if g.start <= d.start and d.end <= g.end]
            if inside and d.label != "SECRET":
                continue  # judged on the decoded text instead
            self.found.append(Finding(path, d.label, d.rule))
        if "NATIONAL_ID" in self.det.labels and sum(c.isdigit() for c in s) >= 10:
            # stricter than redaction: a birth-dated id with no id word (``strict_ids``);
            # imported here: the id tables load python-stdnum and wordfreq, which a server
            # that only reads traces never needs
            from flywheel.pii._ids import strict_ids

            for a, b in strict_ids(s):
                if all(b <= d.start or a >= d.end for d in dets):
                    self.found.append(Finding(path, "NATIONAL_ID", "strict-id"))
                    break


def scan_document(
    node: Any, *, root: str = "$", entities: Iterable[str] = ALL_ENTITIES
) -> list[Finding]:
    """Every detector over every string of ``node`` (see the module docstring).

    Returns:
        One finding per (path, entity, rule), in path order.
    """
    scan = _Scan(entities)
    scan.node(node, root, 0)
    return sorted(set(scan.found), key=lambda f: (f.path, f.entity, f.rule))


def find_values(
    node: Any, values: Mapping[str, str], *, root: str = "$", rule: str = "source-value"
) -> list[Finding]:
    """Where any of ``values`` (value -> entity type) occurs in ``node``, by path, never the value.

    A value counts where it stands as a whole word (``Ana`` is not in
    ``Banana``), in any string or key, in JSON held in a string and in its
    percent-decoded form; e-mail addresses match in any case. Pseudonyms are
    never compared (a value is never a pseudonym).
    """
    wanted = [(v, e) for v, e in values.items() if v]
    if not wanted:
        return []
    found: set[Finding] = set()
    stack: list[tuple[Any, str, int]] = [(node, root, 0)]
    while stack:
        cur, path, depth = stack.pop()
        if isinstance(cur, dict):
            for k, v in cur.items():
                stack.append((str(k), path + ".<key>", depth))
                stack.append((v, _child(path, k), depth))
        elif isinstance(cur, (list, tuple)):
            stack.extend((v, _child(path, i), depth) for i, v in enumerate(cur))
        elif isinstance(cur, str):
            if depth < 4 and cur.lstrip()[:1] in ("{", "[", '"'):
                try:
                    stack.append((json.loads(cur), path, depth + 1))
                    continue
                except ValueError:
                    pass
            texts = {cur}
            if "%" in cur or "+" in cur:
                texts.add(urllib.parse.unquote_plus(cur))
            for value, entity in wanted:
                if any(_occurs(value, t, entity == "EMAIL") for t in texts):
                    found.add(Finding(path, entity, rule))
        elif cur is not None and not isinstance(cur, bool):
            for value, entity in wanted:
                if _occurs(value, str(cur), False):
                    found.add(Finding(path, entity, rule))
    return sorted(found, key=lambda f: (f.path, f.entity, f.rule))


def _occurs(value: str, text: str, fold: bool) -> bool:
    if fold:
        value, text = value.casefold(), text.casefold()
    start = text.find(value)
    while start != -1:
        end = start + len(value)
        if (start == 0 or not _word(text[start - 1]) or not _word(value[0])) and (
            end == len(text) or not _word(text[end]) or not _word(value[-1])
        ):
            return True
        start = text.find(value, start + 1)
    return False


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"
