"""Literal gates: a cheap test that a regular expression cannot match a text.

Why: secret detection runs some forty regular expressions (detect-secrets'
provider patterns, our own formats) over every string, and most strings hold
none of the literals those patterns require (``AKIA``, ``ghp_``, ``xox``,
``password``...). Scanning with a case-insensitive alternation costs far more
than ``in`` on a few literals, so each pattern gets a gate derived from its own
parse tree: a set of literals at least one of which every match contains. A
pattern whose tree gives no such set (every alternative must contribute one)
gets no gate and always runs, so a gate never loses a match.

The tree comes from the standard library's regular-expression parser
(``re._parser``, the parser ``re.compile`` itself uses); when it is not
importable, no pattern is gated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

#: A gate: ``(text, lower_text) -> may the pattern match``.
Gate = Callable[[str, str], bool]

_MIN_LITERAL = 2


def _always(text: str, lower: str) -> bool:
    return True


def _best(
    seq: Sequence[Any], parser: Any, consts: Any, least: int = _MIN_LITERAL
) -> tuple[str, ...] | None:
    """The most selective literal set one of which every match of ``seq`` contains.

    Only literals of ``least`` characters or more count.
    """
    candidates: list[tuple[str, ...]] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) >= least:
            candidates.append(("".join(run),))
        run.clear()

    for op, av in seq:
        if op is consts.LITERAL:
            run.append(chr(av))
            continue
        flush()
        if op is consts.SUBPATTERN:
            # A scoped case flag, ``(?i:...)`` or ``(?-i:...)``, changes what its
            # literals match; the gate is one test per pattern, so none come from it.
            scoped = (av[1] | av[2]) & re.IGNORECASE
            inner = None if scoped else _best(av[-1], parser, consts, least)
        elif op is consts.BRANCH:
            alts = [_best(alt, parser, consts, least) for alt in av[1]]
            inner = None if any(a is None for a in alts) else tuple(x for a in alts for x in a)  # type: ignore[union-attr]
        elif op in (consts.MAX_REPEAT, consts.MIN_REPEAT) and av[0] >= 1:
            inner = _best(av[2], parser, consts, least)
        else:
            inner = None
        if inner:
            candidates.append(inner)
    flush()
    if not candidates:
        return None
    return max(candidates, key=lambda c: (min(len(x) for x in c), -len(c)))


def literals(pattern: re.Pattern[str], least: int = _MIN_LITERAL) -> tuple[str, ...] | None:
    """Literals one of which every match of ``pattern`` contains, or None when there are none.

    Only literals of ``least`` characters or more count.
    """
    try:
        from re import _constants as consts  # type: ignore[attr-defined]
        from re import _parser as parser  # type: ignore[attr-defined]

        tree = parser.parse(pattern.pattern, pattern.flags)
    except (ImportError, AttributeError, re.error):
        return None
    return _best(list(tree), parser, consts, least)


def trie_pattern(words: set[str] | frozenset[str]) -> str:
    """One regular expression matching any of ``words``, as a prefix tree: an alternation of
    hundreds of words is tried word by word at each position, a tree letter by letter."""
    root: dict[str, dict] = {}
    for w in words:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, dict]) -> str:
        alts = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return "(?:" + body + ")?" if "" in node else body

    return build(root)


def literal_gate(pattern: re.Pattern[str]) -> Gate:
    """A gate for ``pattern`` (see the module docstring)."""
    found = literals(pattern)
    if not found:
        return _always
    folded = bool(pattern.flags & re.IGNORECASE)
    lits = sorted({x.lower() for x in found} if folded else set(found))
    if folded and any(len(x.lower()) != len(x) for x in found):
        return _always
    if len(lits) == 1:
        lit = lits[0]
        return (lambda text, lower: lit in lower) if folded else (lambda text, lower: lit in text)
    rx = re.compile(trie_pattern(set(lits)))
    return (lambda text, lower: rx.search(lower) is not None) if folded else (
        lambda text, lower: rx.search(text) is not None
    )


def case_sensitive_gate(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    """``literal_gate`` of a pattern without a case flag, as ``gate(text)``.

    For a pattern scanned on lower-cased text, pass that text. Raises
    ``ValueError`` for a case-insensitive pattern (its gate needs the
    lower-cased text too: use ``literal_gate``).
    """
    if pattern.flags & re.IGNORECASE:
        raise ValueError(
            f"pattern {pattern.pattern[:40]!r} is case-insensitive: gate it with literal_gate"
        )
    gate = literal_gate(pattern)
    return lambda text: gate(text, text)
