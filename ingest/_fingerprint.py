"""Salted fingerprints of normalised values, so provenance survives redaction.

Provenance is inferred on fingerprints, never on raw values: the same code
resolves a raw trace and its redacted copy, as long as the fingerprints were
computed at ingest, before any masking. The normalisation and the hash are
the core's (``flywheel.values``), shared with side effects. Two families per
value:

- ``exact``: the verbatim text (and verbatim token n-grams of longer texts);
- ``norm``: after normalisation -- case folded, whitespace collapsed, number
  formats unified (``1,100.00`` -> ``1100``), spaces removed inside
  identifier-like tokens (``GB29 NWBK 6016`` -> ``gb29nwbk6016``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from flywheel.values import fingerprint, normalise

from ._encodings import structured

_TOKEN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|[\w@.+:/<>-]+", re.UNICODE)
_SENTENCE_JOIN = re.compile(r"(?<=[a-z0-9])\.(?=[A-Z][a-z])")
#: Words too common to show that two texts share an origin (partial matches ignore them).
STOPWORDS = frozenset(
    "a an and are as at be but by for from has have i in is it its me my no not of on or our "
    "so that the their them they this to was we were will with you your".split()
)
#: Longest token n-gram fingerprinted inside a long text.
MAX_NGRAM = 12


def leaves(value: Any, path: str = "", *, open_text: bool = False) -> Iterator[tuple[str, Any]]:
    r"""Leaf values of a JSON document with their paths (``a/0/b``).

    Strings that hold JSON are opened too (tool results often do), so nested
    documents match like any other; a JSON-encoded string (``"line\nline"``)
    is its decoded text. With ``open_text`` (an observed result), a text in
    any structured encoding -- YAML, a Python repr, Markdown tables,
    key-value lines (``_encodings``) -- is opened as well, at its top level,
    so a field is a field whatever the encoding.
    """
    if isinstance(value, str):
        s = value.strip()
        if s[:1] in '{["' and len(s) > 1:
            try:
                inner = json.loads(s)
            except (json.JSONDecodeError, RecursionError):
                inner = None
            if isinstance(inner, dict | list) or (isinstance(inner, str) and s[0] == '"'):
                # a JSON-encoded string result is its decoded text, not its escapes
                yield from leaves(inner, path, open_text=open_text)
                return
        if open_text:
            doc = structured(s)
            if doc is not None:
                yield from leaves(doc, path)
                return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{path}/{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}/{i}" if path else str(i))
    elif value is not None and value != "":
        yield path, value


def tokens(text: str) -> list[str]:
    """Word-like tokens (keeps emails, IBANs, URLs, decimals, ``10,000`` whole)."""
    out = []
    for tok in _TOKEN.findall(text):
        for t in _SENTENCE_JOIN.split(tok):  # "site.com.Then": a missing space, not a host
            t = t.strip(".,:;")
            if t:
                out.append(t)
    return out


_IDENTIFIER = re.compile(
    r"^(?:\S+@\S+\.\w+"  # e-mail
    r"|[a-z][a-z0-9+.-]*://\S+|www\.\S+"  # URL
    r"|[\w-]+(?:\.[\w-]+)*\.[a-z]{2,24}(?:/\S*)?"  # host.tld[/path]
    r"|(?=[\w-]*\d{5})[\w-]{6,}"  # account numbers, IBANs, phone numbers
    r"|(?:~|\.{1,2})?/[\w.@%+-]+(?:/[\w.@%+-]*)+|~/[\w.@%+-]+)$",  # file paths
    re.IGNORECASE,
)
#: A query-string parameter's value (``?d=acct-5521&x=1``).
_QUERY_VALUE = re.compile(r"[?&][\w.-]+=([^&\s#]{4,})")


def identifier_tokens(text: str) -> list[str]:
    """Sub-values of ``text`` that address something: e-mails, URLs, hosts, account
    numbers, file paths, query-string values.

    These are what an injected instruction needs to smuggle into otherwise
    model-written text (a phishing link, an attacker's IBAN, a path inside a
    shell command, a parameter of a URL), so they are traced on their own.
    """
    found = [t for t in tokens(text) if len(t) >= 6 and _IDENTIFIER.match(t)]
    found += [v for v in _QUERY_VALUE.findall(text) if v not in found]
    return found


#: A text leaf with at least this many tokens is prose, not a field value.
PROSE_TOKENS = 6


def value_fingerprints(value: Any, salt: bytes) -> tuple[set[int], set[int], set[int], set[int]]:
    """(exact, norm, token, field) fingerprints of everything an observation holds.

    Exact and normalised fingerprints cover each leaf and each token n-gram of
    leaf texts (n <= MAX_NGRAM); the token set holds single normalised tokens,
    used for partial matches; the field set holds the whole values of short
    leaves (structured fields), so a match can tell a value *copied from a
    field* from a value *extracted from prose*. Every leaf of a structured
    result (a record, a list) is a field whatever its length -- a channel
    name, a whole message body; in a bare text result only a short whole
    text is (under ``PROSE_TOKENS`` tokens).
    """
    exact: set[int] = set()
    norm: set[int] = set()
    toks: set[int] = set()
    fields: set[int] = set()
    all_leaves = list(leaves(value, open_text=True))
    structured = len(all_leaves) > 1 or any(path for path, _ in all_leaves)
    for _, leaf in all_leaves:
        raw = str(leaf) if not isinstance(leaf, bool) else ("true" if leaf else "false")
        exact.add(fingerprint("x:" + raw.strip(), salt))
        norm.add(fingerprint("n:" + normalise(leaf), salt))
        if structured or not isinstance(leaf, str) or len(tokens(leaf)) < PROSE_TOKENS:
            fields.add(fingerprint("n:" + normalise(leaf), salt))
        if isinstance(leaf, str):
            raw_toks = tokens(leaf)
            norm_toks = [normalise(t) for t in raw_toks]
            for t in norm_toks:
                toks.add(fingerprint("n:" + t, salt))
            if len(raw_toks) > 1:
                for n in range(1, min(MAX_NGRAM, len(raw_toks)) + 1):
                    for i in range(len(raw_toks) - n + 1):
                        exact.add(fingerprint("x:" + " ".join(raw_toks[i : i + n]), salt))
                        norm.add(fingerprint("n:" + " ".join(norm_toks[i : i + n]), salt))
                        if n > 1:  # grouped identifiers written with spaces
                            norm.add(fingerprint("n:" + "".join(norm_toks[i : i + n]), salt))
    return exact, norm, toks, fields


def argument_fingerprints(leaf: Any, salt: bytes) -> tuple[int, int, list[int]]:
    """(exact, norm, per-token) fingerprints of one argument value.

    The per-token list leaves out ``STOPWORDS``: sharing "the" and "is" with a
    document says nothing about where a sentence came from.
    """
    raw = str(leaf) if not isinstance(leaf, bool) else ("true" if leaf else "false")
    norm_text = normalise(leaf)
    toks = (
        [
            fingerprint("n:" + normalise(t), salt)
            for t in tokens(str(leaf))
            if t.casefold() not in STOPWORDS
        ]
        if isinstance(leaf, str)
        else []
    )
    exact_text = raw.strip()
    if isinstance(leaf, str) and len(tokens(leaf)) > 1:
        exact_text = " ".join(tokens(leaf))
    return fingerprint("x:" + exact_text, salt), fingerprint("n:" + norm_text, salt), toks
