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


def gated(pattern: re.Pattern[str]) -> bool:
    """Whether ``literal_gate`` gives ``pattern`` a gate (else the pattern always runs)."""
    return literal_gate(pattern) is not _always


def any_gate(patterns: Sequence[re.Pattern[str]]) -> Gate:
    """One gate for the ``gated`` ones of several patterns: true where any of their gates is.

    Why: a loop over many gated patterns (detect-secrets' provider formats, the
    street-line shapes) asked each gate in turn, one scan of the text per
    pattern, on texts that mostly hold none of their literals; one scan for
    all of them says when none can pass. Same answers as
    ``any(literal_gate(p)(text, lower) for p in patterns if gated(p))``.
    """
    exact: set[str] = set()
    folded: set[str] = set()
    for p in patterns:
        found = literals(p)
        if not found:
            continue  # no gate: the caller runs it anyway
        if p.flags & re.IGNORECASE:
            if any(len(x.lower()) != len(x) for x in found):
                continue  # literal_gate gives it none either
            folded |= {x.lower() for x in found}
        else:
            exact |= set(found)
    in_text = re.compile(trie_pattern(exact)) if exact else None
    in_lower = re.compile(trie_pattern(folded)) if folded else None

    def gate(text: str, lower: str) -> bool:
        return (in_text is not None and in_text.search(text) is not None) or (
            in_lower is not None and in_lower.search(lower) is not None
        )

    return gate


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


def prefix_tree(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` compiled with each alternation as a prefix tree: the same matches, faster.

    Why: ``re`` tries the alternatives of an alternation one by one at every
    position where it can start; an alternation of hundreds of words (role words,
    greetings, titles, id words) costs that many tries per word of the text.
    Alternatives that begin with the same literal character are joined under it,
    in their own order (``ab|x|ac`` becomes ``a(?:b|c)|x`` only when ``x`` begins
    with a literal other than ``a``: an alternative with no literal first
    character ends every group, so at any position the alternatives that can
    match are tried in the original order, and every match is the original one).
    Under a case flag, literals join by the one lower-case form they match (a
    letter with more case forms than two, such as ``s``/``ſ`` or ``k``/``K``
    (Kelvin), joins nothing). Joined recursively, on the parse tree ``re``
    itself builds (``re._parser``), and compiled with the original source and
    flags, so ``.pattern`` (and the literal gates read from it) are unchanged.
    A parser this code does not know leaves the pattern as it is.
    """
    try:
        import _sre  # type: ignore[import-not-found]
        from re import _compiler, _parser  # type: ignore[attr-defined]
        from re import _constants as consts  # type: ignore[attr-defined]

        if pattern.flags & re.LOCALE:
            return pattern
        tree = _parser.parse(pattern.pattern, pattern.flags)
        state = tree.state
        joiner = _Joiner(_parser.SubPattern, state, consts, _compiler, pattern.flags | state.flags)
        tree = joiner.sub_of(tree, bool((pattern.flags | state.flags) & re.IGNORECASE))
        if not joiner.changed:
            return pattern
        indexgroup: list[str | None] = [None] * state.groups
        for name, i in state.groupdict.items():
            indexgroup[i] = name
        return _sre.compile(  # type: ignore[no-any-return]
            pattern.pattern,
            pattern.flags | state.flags,
            _compiler._code(tree, pattern.flags),
            state.groups - 1,
            state.groupdict,
            tuple(indexgroup),
        )
    except Exception:  # noqa: BLE001 - another Python's parser: the pattern as written
        return pattern


class _Joiner:
    """The parse-tree walk of ``prefix_tree``."""

    def __init__(self, sub: Any, state: Any, consts: Any, compiler: Any, flags: int) -> None:
        import _sre  # type: ignore[import-not-found]

        self.sub, self.state, self.c = sub, state, consts
        self.changed = False
        # as re._compiler reads a literal under a case flag
        if flags & re.UNICODE:
            self.lower, self.cased = _sre.unicode_tolower, _sre.unicode_iscased
            self.fixes = compiler._EXTRA_CASES
        else:
            self.lower, self.cased, self.fixes = _sre.ascii_tolower, _sre.ascii_iscased, {}

    def sub_of(self, sub: Any, icase: bool) -> Any:
        return self.sub(self.state, self.items(list(sub.data), icase))

    def items(self, items: list[Any], icase: bool) -> list[Any]:
        c = self.c
        out: list[Any] = []
        for op, av in items:
            if op is c.BRANCH:
                alts = [self.sub_of(a, icase) for a in av[1]]
                out.append((op, (av[0], self._join(alts, icase))))
            elif op is c.SUBPATTERN:
                group, add, remove, body = av
                inner = (icase or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
                out.append((op, (group, add, remove, self.sub_of(body, inner))))
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
                out.append((op, (av[0], av[1], self.sub_of(av[2], icase))))
            elif op in (c.ASSERT, c.ASSERT_NOT):
                out.append((op, (av[0], self.sub_of(av[1], icase))))
            elif op is c.ATOMIC_GROUP:
                out.append((op, self.sub_of(av, icase)))
            else:
                out.append((op, av))  # conditional groups and the rest stay as parsed
        return out

    def _lead(self, alt: Any, icase: bool) -> int | None:
        """What an alternative's first character matches, as a key (None: not one literal)."""
        op, av = alt.data[0] if alt.data else (None, None)
        if op is not self.c.LITERAL:
            return None
        if not icase or not self.cased(av):
            return av  # type: ignore[no-any-return]
        low = self.lower(av)
        return None if low in self.fixes else -1 - low  # type: ignore[no-any-return]

    def _join(self, alts: list[Any], icase: bool) -> list[Any]:
        groups: list[list[Any]] = []
        open_: dict[int, list[Any]] = {}
        for alt in alts:
            lead = self._lead(alt, icase)
            if lead is None:
                open_ = {}  # an alternative with no literal lead: nothing joins across it
                groups.append([alt])
            elif lead in open_:
                open_[lead].append(alt)
            else:
                open_[lead] = [alt]
                groups.append(open_[lead])
        out = []
        for g in groups:
            if len(g) == 1:
                out.append(g[0])
                continue
            self.changed = True
            rests = self._join([self.sub(self.state, a.data[1:]) for a in g], icase)
            out.append(self.sub(self.state, [g[0].data[0], (self.c.BRANCH, (None, rests))]))
        return out


def prefix_trees(namespace: dict[str, Any]) -> None:
    """Replace every compiled pattern of a module's ``namespace`` by its ``prefix_tree``.

    Called at the end of a detector module: its patterns match as written, faster.
    """
    for name, value in list(namespace.items()):
        if isinstance(value, re.Pattern):
            namespace[name] = prefix_tree(value)
