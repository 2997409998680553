"""Encoded stretches of a string, decoded so detectors see what they hold.

A value hidden in ``?email=jane%40example.org``, in a base64 attachment or
a form body is invisible to a detector reading the raw text. ``segments``
finds such stretches; each comes with a rewriter that decodes it, hands the
decoded text (and, for query and form parameters, the parameter name, so key
rules apply) to a callback, and encodes the callback's answer the same way:

- URLs (``scheme://``): the host and the path structure stay; every query
  and fragment parameter value, each path segment and a userinfo password
  are handed over decoded (RFC 3986 percent-decoding, ``+`` as space in
  queries);
- ``application/x-www-form-urlencoded`` bodies (``a=1&b=2``, WHATWG URL);
- base64 and base64url runs of 16+ characters (RFC 4648) that decode to
  printable UTF-8 text; binary data is not text and is left alone;
- other percent-encoded runs (``jane%40example.org``);
- tables written as text (CSV, TSV, semicolon-separated, markdown) whose first
  line is a header with at least one column a default key rule knows
  (``surname,given,dob``): each cell is handed over with its column's header
  as its key, so ``dob`` applies to a bare ``1983-06-14`` in a CSV row as it
  does under a JSON key;
- labelled fields written in text, whose label a default key rule knows: a JSON or
  Python pair pasted into prose (``Scan: {"surname": "OKAFOR", ...}``), a bare key
  and a quoted value as code writes objects (``{nom: "Santoni"}``, ``email='a@b.fr'``), an
  unquoted ``key=value`` whose key names a credential (logfmt, properties, flags), a line
  ``Label: value`` (``Nachname: Okafor``, ``- date of birth: 1983-06-14``) and a
  form body written as one line of a longer text; each value is handed over
  with its label as its key (kinds ``pair``, ``line``, ``form``);
- HTML character references, quoted-printable bodies, vCard and iCalendar
  properties, read first (``flywheel.pii._markup``; kinds ``html``, ``qp``,
  ``vcard``).
"""

from __future__ import annotations

import base64
import binascii
import csv
import json
import re
import urllib.parse
from collections.abc import Callable

from flywheel.pii._keys import key_label
from flywheel.pii._markup import content_lines, html_references, quoted_printable
from flywheel.pii._types import OnText, Segment

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,15}://[^\s\"'<>`\\]+")
_FORM = re.compile(r"\A[\w.\-\[\]%+]+=[^&=\s]*(?:&[\w.\-\[\]%+]+=[^&\s]*)+\Z")
_B64 = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{16,}={0,2}(?![A-Za-z0-9+/=_\-])")
_PCT = re.compile(r"[\w.\-+~]*(?:%[0-9A-Fa-f]{2}[\w.\-+~]*)+")
_SAFE = "<>_-.~@"


def _quote(text: str, plus: bool) -> str:
    return urllib.parse.quote_plus(text, safe=_SAFE) if plus else urllib.parse.quote(text, safe=_SAFE)


def _rewrite_pairs(query: str, on_text: OnText, sep: str = "&") -> str:
    parts = []
    for pair in query.split(sep):
        k, eq, v = pair.partition("=")
        if not eq:
            parts.append(pair)
            continue
        dk = urllib.parse.unquote_plus(k)
        dv = urllib.parse.unquote_plus(v)
        nv = on_text(dv, dk) if dv else dv
        parts.append(pair if nv == dv else f"{k}={_quote(nv, plus=True)}")
    return sep.join(parts)


#: A userinfo written with an unencoded ``#`` or ``?`` (``postgres://app:pa#ss@db/x``):
#: RFC 3986 forbids it, people type it, and a parser would read the rest as a fragment.
_RAW_USERINFO = re.compile(r"\A([a-zA-Z][a-zA-Z0-9+.\-]*://)([^/@\s]*[#?][^/@\s]*)@(.*)\Z", re.S)


def rewrite_url(url: str, on_text: OnText) -> str:
    """``url`` with its path segments, userinfo password, query and fragment values rewritten."""
    raw = _RAW_USERINFO.match(url)
    if raw:
        scheme, userinfo, rest = raw.groups()
        user, colon, pw = userinfo.partition(":")
        nu = on_text(user, "username") if user else user
        npw = on_text(pw, "password") if pw else pw
        return f"{scheme}{nu}{colon}{npw}@" + rewrite_url(scheme + rest, on_text)[len(scheme) :]
    try:
        sp = urllib.parse.urlsplit(url)
    except ValueError:
        return url
    netloc = sp.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, colon, pw = userinfo.partition(":")
        nu = on_text(urllib.parse.unquote(user), "username") if user else user
        npw = on_text(urllib.parse.unquote(pw), "password") if pw else pw
        netloc = f"{_quote(nu, False) if nu != urllib.parse.unquote(user) else user}"
        if colon:
            netloc += ":" + (pw if npw == urllib.parse.unquote(pw) else _quote(npw, False))
        netloc += "@" + host
    segs = []
    for seg in sp.path.split("/"):
        dec = urllib.parse.unquote(seg)
        new = on_text(dec, None) if len(dec) >= 4 else dec
        segs.append(seg if new == dec else _quote(new, False))
    query = _rewrite_pairs(sp.query, on_text) if sp.query else sp.query
    frag = sp.fragment
    if frag:
        frag = _rewrite_pairs(frag, on_text) if "=" in frag else frag
    return urllib.parse.urlunsplit((sp.scheme, netloc, "/".join(segs), query, frag))


def decode_base64(token: str) -> str | None:
    """The UTF-8 text a base64/base64url token decodes to, or None (binary, not base64)."""
    core = token.rstrip("=")
    if len(core) < 16 or core.isalpha() or core.isdigit():
        return None
    pad = core + "=" * (-len(core) % 4)
    urlsafe = "-" in core or "_" in core
    try:
        raw = (base64.urlsafe_b64decode if urlsafe else base64.b64decode)(pad)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    if len(text) < 4 or sum(c.isprintable() or c in "\n\r\t" for c in text) < 0.95 * len(text):
        return None
    return text


def _rewrite_base64(token: str, on_text: OnText) -> str:
    text = decode_base64(token)
    if text is None:
        return token
    new = on_text(text, None)
    if new == text:
        return token
    urlsafe = "-" in token or "_" in token
    enc = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(new.encode()).decode()
    padded = token.endswith("=") or len(token) % 4 == 0  # unpadded style only if it was
    return enc if padded else enc.rstrip("=")


def _rewrite_pct(run: str, on_text: OnText) -> str:
    dec = urllib.parse.unquote(run)
    new = on_text(dec, None)
    return run if new == dec else _quote(new, False)


#: A header cell: a short field name (letters first, at most four words).
_HEADER_CELL = re.compile(r"\A[ ]*[^\W\d][\w.()/#\-]*(?:[ ][\w.()/#\-]+){0,3}[ ]*\Z")
#: A rule line under (or around) a header: markdown ``|---|:--:|``, psql ``----+----``,
#: MySQL ``+----+----+``.
_MD_RULE = re.compile(r"\A[ ]*[|+]?[ ]*:?-{3,}:?[ ]*(?:[|+][ ]*:?-{3,}:?[ ]*)*[|+]?[ ]*\Z")
_DELIMITERS = ("|", "\t", ";", ",")


def _outer_bars(core: str) -> bool:
    """A table row written between bars (markdown, the MySQL client), not only split by them."""
    return len(core) >= 2 and core.startswith("|") and core.endswith("|")


def _cells(line: str, delim: str) -> list[str] | None:
    """The cells of one table line (quoted CSV cells unquoted), or None when it is no row."""
    if delim == "|":
        core = line.strip()
        if _outer_bars(core):
            return core[1:-1].split("|")  # markdown, MySQL client
        return core.split("|") if " | " in core else None  # psql, sqlite, hand-written
    if '"' in line:
        try:
            return next(csv.reader([line], delimiter=delim))
        except (csv.Error, StopIteration):
            return None
    return line.split(delim)


def _rewrite_row(line: str, delim: str, headers: list[str], on_text: OnText) -> str:
    cells = _cells(line, delim) or []
    new = []
    for cell, head in zip(cells, headers, strict=False):
        core = cell.strip()
        changed = on_text(core, head) if core else core
        new.append(cell if changed == core else cell.replace(core, changed, 1))
    if new == cells:
        return line
    if delim == "|":
        lead = line[: len(line) - len(line.lstrip())]
        return f"{lead}|{'|'.join(new)}|" if _outer_bars(line.strip()) else lead + "|".join(new)
    if '"' in line:
        out: list[str] = []
        csv.writer(_ListWriter(out), delimiter=delim, lineterminator="").writerow(new)
        return "".join(out)
    return delim.join(new)


class _ListWriter:
    def __init__(self, out: list[str]) -> None:
        self.write = out.append


def _tables(text: str) -> list[Segment]:
    """Tables in ``text``: a header line that names a known key, then rows of as many cells."""
    if "\n" not in text:
        return []
    lines = text.split("\n")
    starts = [0]
    for ln in lines[:-1]:
        starts.append(starts[-1] + len(ln) + 1)
    out: list[Segment] = []
    i = 0
    while i < len(lines) - 1:
        found = None
        for delim in _DELIMITERS:
            if delim not in lines[i]:
                continue
            head = _cells(lines[i].rstrip("\r"), delim)
            if (
                not head
                or len(head) < 2
                or not all(_HEADER_CELL.match(h) for h in head)
                or not any(key_label(h.strip()) for h in head)
            ):
                continue
            j = i + 1
            if delim == "|" and j < len(lines) and _MD_RULE.match(lines[j]):
                j += 1
            first = j
            while j < len(lines) and len(_cells(lines[j].rstrip("\r"), delim) or ()) == len(head):
                j += 1
            if j > first:
                found = (delim, [h.strip() for h in head], first, j)
                break
        if found is None:
            i += 1
            continue
        delim, headers, first, end = found
        rows = range(first, end)

        def rewrite(f: OnText, d: str = delim, h: list[str] = headers, r: range = rows) -> str:
            return "\n".join(
                _rewrite_row(lines[k], d, h, f) if k in r else lines[k] for k in range(r.start, r.stop)
            )

        start = starts[first]
        stop = starts[end - 1] + len(lines[end - 1])
        out.append(Segment(start, stop, "table", rewrite))
        i = end
    return out


#: A JSON (or Python ``repr``) string pair inside text: the key, then a double- or
#: single-quoted value on the same line.
_QUOTED_PAIR = re.compile(
    r"""(?P<q>["'])(?P<k>[^"'\\\n]{1,40})(?P=q)[ \t]*:[ \t]*"""
    r"""(?:"(?P<dv>(?:[^"\\\n]|\\.){1,300})"|'(?P<sv>[^'\\\n]{1,300})')"""
)
#: A bare key and a quoted value, as code and its logs write objects: a PHP or JavaScript
#: object (``{nom: "Santoni"}``), keyword arguments (``Client(email='a@b.fr')``), a Ruby
#: hash (``name => "x"``), an HTML attribute. Not the end of a longer word or a dotted path.
_BARE_PAIR = re.compile(
    r"""(?<![\w"'.\-])(?P<k>[A-Za-z_][A-Za-z0-9_]{0,39})[ \t]*(?::|=>|=)[ \t]*"""
    r"""(?:"(?P<dv>(?:[^"\\\n]|\\.){1,300})"|'(?P<sv>[^'\\\n]{1,300})')"""
)
_BARE_PAIR_HINT = re.compile(r"""\w[ \t]*(?::|=>|=)[ \t]*["']""")
#: ``key=value`` with nothing quoted, as logfmt, properties files, ``.env`` lines, command-line
#: flags and Java's ``toString`` write it (``sevdesk.api-token=...``, ``--password=...``):
#: read only for keys naming a credential, the value up to a space, quote or separator.
_PLAIN_PAIR = re.compile(
    r"""(?<![\w.])(?P<k>[A-Za-z_][\w.\-]{0,60})=(?P<v>[^\s"',;&\])}]{4,200})"""
)
_CREDENTIAL_LABELS = frozenset(("SECRET", "SECRET_IF_RANDOM"))
#: A line ``Label: value`` (or ``label = value``), optionally a list item: one to four
#: words of a label, then the rest of the line.
_LABEL_LINE = re.compile(
    r"(?m)^[ \t]*(?:[-*•>][ \t]*)?(?P<k>[^\W\d_]+(?:[ ._\-][^\W\d_]+){0,3}\d?)[ \t]*(?::[ \t]+|=[ \t]*)"
    r"(?P<v>[^\s][^\n]{0,200}?)[ \t\r]*$"
)
#: Labels whose value may hold commas (a name written ``Surname, First``, an address).
_MANY_WORD_LABELS = frozenset(("NAME", "AUTO", "ADDRESS"))
#: Where a one-value field written on a line ends: a comma, semicolon, bar or parenthesis.
_NEXT_FIELD = re.compile(r"[,;|][ \t]|[ \t][(|]|[ \t]-[ \t]")
#: A form body as one line of a text (``imie=Jan&nazwisko=Kowal``).
_FORM_LINE = re.compile(r"(?m)^[\w.\-\[\]%+]+=[^&=\s]*(?:&[\w.\-\[\]%+]+=[^&\s]*)+$")


def _json_pair(raw: str, key: str) -> Callable[[OnText], str]:
    def rewrite(f: OnText) -> str:
        try:
            value = json.loads(f'"{raw}"')
        except ValueError:
            return raw
        new = f(value, key)
        return raw if new == value else json.dumps(new, ensure_ascii=False)[1:-1]

    return rewrite


def _fields(text: str, free: Callable[[int, int], bool]) -> list[Segment]:
    """Labelled fields in text (see the module docstring): only labels a key rule knows."""
    out: list[Segment] = []
    if "\n" in text and "&" in text:
        for m in _FORM_LINE.finditer(text):
            if free(m.start(), m.end()):
                out.append(Segment(m.start(), m.end(), "form", lambda f, t=m.group(): _rewrite_pairs(t, f)))
    pairs = []
    if '":' in text or "':" in text or '" :' in text:
        pairs.append(_QUOTED_PAIR)
    if _BARE_PAIR_HINT.search(text):
        pairs.append(_BARE_PAIR)
    for rx in pairs:
        for m in rx.finditer(text):
            key = m.group("k")
            if key_label(key) is None:
                continue
            g = "dv" if m.group("dv") is not None else "sv"
            s, e = m.start(g), m.end(g)
            if not free(s, e):
                continue
            raw = m.group(g)
            rewrite = _json_pair(raw, key) if g == "dv" else (lambda f, v=raw, k=key: f(v, k))
            out.append(Segment(s, e, "pair", rewrite))
    if "=" in text:
        urls = [m.span() for m in _URL.finditer(text)] if "://" in text else []
        for m in _PLAIN_PAIR.finditer(text):
            key = m.group("k")
            if key_label(key) not in _CREDENTIAL_LABELS:
                continue
            s, e = m.span("v")
            if free(s, e) and all(e <= a or s >= b for a, b in urls):  # a query is the URL's
                value = m.group("v")
                out.append(Segment(s, e, "pair", lambda f, v=value, k=key: f(v, k)))
    if ":" not in text:
        return out
    for m in _LABEL_LINE.finditer(text):
        key = m.group("k")
        label = key_label(key)
        value = m.group("v")
        if label is None or value.startswith("//"):
            continue
        if label not in _MANY_WORD_LABELS:  # "client_ip: 10.0.0.7, app v3.8": one value
            value = _NEXT_FIELD.split(value, maxsplit=1)[0]
        s = m.start("v")
        e = s + len(value)
        if free(s, e):
            out.append(Segment(s, e, "line", lambda f, v=value, k=key: f(v, k)))
    return out


def segments(text: str) -> list[Segment]:
    """The encoded stretches of ``text``, not overlapping, in order."""
    out: list[Segment] = []
    if _FORM.match(text):
        return [Segment(0, len(text), "form", lambda f: _rewrite_pairs(text, f))]
    taken: list[tuple[int, int]] = []

    def free(s: int, e: int) -> bool:
        return all(e <= a or s >= b for a, b in taken)

    # Formats with their own syntax first: what they hold is read decoded (flywheel.pii._markup).
    readers = [content_lines, quoted_printable, html_references]
    if "\n" in text:
        readers.append(_tables)
    for reader in readers:
        for seg in reader(text):
            if free(seg.start, seg.end):
                out.append(seg)
                taken.append((seg.start, seg.end))

    for seg in _fields(text, free):
        if free(seg.start, seg.end):
            out.append(seg)
            taken.append((seg.start, seg.end))

    if "://" in text:
        for m in _URL.finditer(text):
            url = m.group().rstrip(".,;:)]}!?")
            if free(m.start(), m.start() + len(url)):
                out.append(Segment(m.start(), m.start() + len(url), "url", lambda f, u=url: rewrite_url(u, f)))
                taken.append((m.start(), m.start() + len(url)))

    if len(text) >= 16:
        for m in _B64.finditer(text):
            if free(m.start(), m.end()) and decode_base64(m.group()) is not None:
                tok = m.group()
                out.append(Segment(m.start(), m.end(), "base64", lambda f, t=tok: _rewrite_base64(t, f)))
                taken.append((m.start(), m.end()))
    if "%" in text:
        for m in _PCT.finditer(text):
            if free(m.start(), m.end()):
                run = m.group()
                out.append(Segment(m.start(), m.end(), "percent", lambda f, r=run: _rewrite_pct(r, f)))
                taken.append((m.start(), m.end()))
    out.sort(key=lambda s: s.start)
    return out
