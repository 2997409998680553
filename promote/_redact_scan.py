r"""Scan anything about to leave the system for values that must not be there.

Why: the release rule is "no raw PII in a released eval set", and the only
convincing check is to look for every original value in what was written --
including inside JSON that is itself stored as a string, where escaping
(``\\n``, ``\\u00e9``) would hide a plain substring search.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


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
