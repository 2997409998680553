"""Text formats that carry values in their own syntax, read so detectors see the values.

A name written ``H&eacute;lo&iuml;se`` in an HTML page, ``No=C3=A9`` in a
quoted-printable e-mail body, or ``N:Woods;Hazel;;;`` in a vCard is invisible to
detectors that read the raw text. Each reader below finds such stretches and
returns them as ``flywheel.pii._decode.Segment`` values: the rewriter hands the
decoded text (or a property's value with a key that says what it is) to the
callback and encodes the callback's answer the same way.

- HTML character references (the HTML standard's named references, with their
  semicolon, and decimal or hexadecimal numeric ones): every line holding one is
  decoded; on the way back exactly the characters that were written as
  references are written as numeric references again.
- Quoted-printable (RFC 2045 section 6.7): the lines from the first to the last
  that hold an encoded multi-byte UTF-8 character (``=C3=A9``) or a soft line
  break; decoded as UTF-8 (Windows-1252 when that fails) with ``quopri``, and
  re-encoded line for line.
- vCard (RFC 6350, and 2.1/3.0) and iCalendar (RFC 5545) content lines between
  ``BEGIN:VCARD``/``BEGIN:VCALENDAR`` and their ``END``: each property's value
  is handed over with a key the key rules know (``FN``/``N`` a name, ``ADR``/
  ``LABEL`` an address, ``BDAY`` a birth date, ``TEL``/``EMAIL``); other
  properties with their own name as the key (``NOTE``: read as text), and a
  ``CN`` parameter (an attendee's or organiser's common name) as a contact unless
  its ``CUTYPE`` says it is a room, resource or group.
  Folded lines are unfolded; a rewritten property is written unfolded.
"""

from __future__ import annotations

import html
import html.entities
import quopri
import re
from collections.abc import Callable

from flywheel.pii._types import OnText, Segment

# -- HTML character references ---------------------------------------------------

_CHARREF = re.compile(r"&(?:#[0-9]{2,7};|#[xX][0-9a-fA-F]{2,6};|[A-Za-z][A-Za-z0-9]{1,31};)")
_NAMED = html.entities.html5  # "eacute;" -> "é"


def _ref_text(ref: str) -> str | None:
    """The character(s) one reference stands for, or None when it is no reference."""
    if ref[1] == "#":
        try:
            cp = int(ref[3:-1], 16) if ref[2] in "xX" else int(ref[2:-1])
        except ValueError:
            return None
        return chr(cp) if 0 < cp < 0x110000 and not 0xD800 <= cp < 0xE000 else None
    return _NAMED.get(ref[1:])


def _unescape(line: str) -> tuple[str, frozenset[str]]:
    """``line`` with its references decoded, and the characters that were references."""
    written: set[str] = set()

    def one(m: re.Match[str]) -> str:
        text = _ref_text(m.group())
        if text is None:
            return m.group()
        written.update(text)
        return text

    return _CHARREF.sub(one, line), frozenset(written)


def _escape(text: str, written: frozenset[str]) -> str:
    return "".join(f"&#{ord(c)};" if c in written else c for c in text)


def html_references(text: str) -> list[Segment]:
    """Lines of ``text`` that hold HTML character references."""
    if "&" not in text or ";" not in text or not _CHARREF.search(text):
        return []
    out: list[Segment] = []
    pos = 0
    for line in text.split("\n"):
        if "&" in line and _CHARREF.search(line):
            decoded, written = _unescape(line)
            if written:

                def rewrite(
                    f: OnText, raw: str = line, dec: str = decoded, w: frozenset[str] = written
                ) -> str:
                    new = f(dec, None)
                    return raw if new == dec else _escape(new, w)

                out.append(Segment(pos, pos + len(line), "html", rewrite))
        pos += len(line) + 1
    return out


# -- quoted-printable --------------------------------------------------------------

#: An encoded UTF-8 lead byte and continuation byte, or a soft line break.
_QP_MARK = re.compile(r"=[C-F][0-9A-F]=[89AB][0-9A-F]|=\r?$", re.M)


def _qp_decode(raw: str) -> str | None:
    try:
        data = quopri.decodestring(raw.encode("ascii"))
    except (UnicodeEncodeError, ValueError):
        return None  # quoted-printable is ASCII; this stretch is something else
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def quoted_printable(text: str) -> list[Segment]:
    """The quoted-printable stretch of ``text``: whole lines, first to last marked one."""
    if "=" not in text:
        return []
    marks = [
        m.start()
        for m in _QP_MARK.finditer(text)
        if m.group().startswith("=") and len(m.group()) > 2
    ]
    if not marks:
        return []
    start = text.rfind("\n", 0, marks[0]) + 1
    end = text.find("\n", marks[-1])
    end = len(text) if end < 0 else end
    raw = text[start:end]
    decoded = _qp_decode(raw)
    if decoded is None or decoded == raw:
        return []

    def rewrite(f: OnText) -> str:
        new = f(decoded, None)
        return raw if new == decoded else _qp_encode(new)

    return [Segment(start, end, "qp", rewrite)]


def _qp_encode(text: str) -> str:
    """Quoted-printable of ``text``, its lines kept as they are.

    ``quopri`` would also wrap long lines with soft breaks, moving text the reader (and a
    diff) expects in place.
    """
    return "".join(
        c
        if c in "\r\n\t" or (" " <= c <= "~" and c != "=")
        else "".join(f"={b:02X}" for b in c.encode())
        for c in text
    )


# -- vCard and iCalendar content lines ----------------------------------------------

_BLOCK = re.compile(r"(?im)^BEGIN:(VCARD|VCALENDAR)\r?$.*?^END:\1\r?$", re.S)
_PARAM = r';[A-Za-z0-9\-]+=(?:"[^"]*"|[^;:,"\r\n]*)(?:,(?:"[^"]*"|[^;:,"\r\n]*))*'
_CONTENT_LINE = re.compile(
    r"(?P<name>(?:[A-Za-z0-9\-]+\.)?[A-Za-z0-9\-]+)(?P<params>(?:"
    + _PARAM
    + r"|;[A-Za-z0-9\-]+)*):(?P<value>.*)\Z",
    re.S,
)
_CN = re.compile(r'(?i)(?<=;CN=)(?:"[^"]*"|[^;:"]*)')
#: A calendar user that is no person (RFC 5545 CUTYPE): its CN is read as text.
_NOT_A_PERSON = re.compile(r"(?i);CUTYPE=(?:ROOM|RESOURCE|GROUP|UNKNOWN)\b")
#: Properties whose value is one of our types: the key the key rules read it under.
_PROPERTY_KEYS = {
    "FN": "full_name",
    "N": "name",
    "NICKNAME": "nickname",
    "ADR": "address",
    "LABEL": "address",
    "BDAY": "birthday",
    "TEL": "phone",
    "EMAIL": "email",
}
#: Structured values (components separated by ``;``): handed over whole, not unescaped.
_STRUCTURED = frozenset(("N", "ADR"))
_NO_VALUE = frozenset(("BEGIN", "END", "VERSION", "PRODID", "CALSCALE", "METHOD", "UID", "KIND"))
_TEXT_ESCAPES = {"\\n": "\n", "\\N": "\n", "\\,": ",", "\\;": ";", "\\\\": "\\"}
_TEXT_ESCAPE = re.compile(r"\\[nN,;\\]")


def _unescape_text(value: str) -> str:
    return _TEXT_ESCAPE.sub(lambda m: _TEXT_ESCAPES[m.group()], value)


def _escape_text(value: str) -> str:
    return value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def _logical_lines(block: str) -> list[tuple[int, int, str]]:
    """``(start, end, unfolded line)`` of each content line of a block (offsets in it)."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for raw in block.split("\n"):
        end = pos + len(raw)
        line = raw.rstrip("\r")
        if line[:1] in (" ", "\t") and out:
            s, _, prev = out[-1]
            out[-1] = (s, end, prev + line[1:])
        else:
            out.append((pos, end, line))
        pos = end + 1
    return out


def _property(line: str) -> Callable[[OnText], str] | None:
    """The rewriter of one content line, or None when it holds nothing to read."""
    m = _CONTENT_LINE.match(line)
    if m is None:
        return None
    name = m.group("name").rsplit(".", 1)[-1].upper()
    if name in _NO_VALUE:
        return None
    params, value = m.group("params"), m.group("value")
    key = _PROPERTY_KEYS.get(name, name)
    structured = name in _STRUCTURED

    def rewrite(f: OnText) -> str:
        new_params = params
        if "CN=" in params.upper():
            cn_key = None if _NOT_A_PERSON.search(params) else "contact"
            new_params = _CN.sub(lambda c: _rewrite_cn(c.group(), f, cn_key), params)
        if not value.strip():
            new_value = value
        elif structured:
            new_value = f(value, key)
        else:
            plain = _unescape_text(value)
            got = f(plain, key)
            new_value = value if got == plain else _escape_text(got)
        if new_params == params and new_value == value:
            return line
        return f"{m.group('name')}{new_params}:{new_value}"

    return rewrite


def _rewrite_cn(raw: str, f: OnText, key: str | None) -> str:
    quoted = raw.startswith('"')
    core = raw[1:-1] if quoted else raw
    new = f(core, key) if core.strip() else core
    return raw if new == core else (f'"{new}"' if quoted else new)


def content_lines(text: str) -> list[Segment]:
    """VCard and iCalendar properties in ``text``, one segment per content line."""
    if "BEGIN:" not in text.upper():
        return []
    out: list[Segment] = []
    for block in _BLOCK.finditer(text):
        base = block.start()
        for start, end, line in _logical_lines(block.group()):
            rewrite = _property(line)
            if rewrite is None:
                continue
            raw = block.group()[start:end]
            if raw.endswith("\r"):
                end -= 1
                raw = raw[:-1]

            def seg_rewrite(
                f: OnText, r: Callable[[OnText], str] = rewrite, raw: str = raw, ln: str = line
            ) -> str:
                new = r(f)
                return raw if new == ln else new

            out.append(Segment(base + start, base + end, "vcard", seg_rewrite))
    return out
