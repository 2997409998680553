"""Near-copies: a value that is almost, but not exactly, one the agent observed.

A misread is a value taken from a tool result and got wrong -- two adjacent
digits transposed, an amount off by one, a string (an IBAN) cut short, one
character changed -- or a neighbouring field of the same result copied
instead of the right one (an exact copy of the wrong value). A generated
(ungrounded) wrong value has no such relation to what was read. These pure
functions decide the relation; the signals and the reference agent's fault
injector share them, so the injected fault and its detector agree on what a
misread looks like.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Strings shorter than this are too short for a near-copy to mean anything.
MIN_STR = 4
#: At most this many characters may be cut off a truncated copy.
MAX_CUT = 4


def is_number(v: Any) -> bool:
    """An int or float, not a bool."""
    return isinstance(v, int | float) and not isinstance(v, bool)


def leaves(value: Any) -> list[Any]:
    """The scalar values (strings, numbers) inside a JSON value, in document order."""
    out: list[Any] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))
        elif isinstance(v, str) or is_number(v):
            out.append(v)
    return out


def observed_leaves(text: str) -> list[Any]:
    """The scalars of an observation's text: JSON leaves, else its whitespace tokens."""
    try:
        return leaves(json.loads(text))
    except (json.JSONDecodeError, TypeError, ValueError):
        return [t.strip(".,;:()[]{}\"'") for t in text.split() if len(t) >= MIN_STR]


def same_value(a: Any, b: Any) -> bool:
    """Equal as values: numbers numerically (100 == 100.0), anything else as text."""
    if is_number(a) and is_number(b):
        return float(a) == float(b)
    return str(a) == str(b)


def _digits(v: Any) -> str:
    return repr(float(v)) if isinstance(v, float) else str(v)


def _adjacent_swap(a: str, b: str) -> bool:
    if len(a) != len(b) or a == b:
        return False
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return (
        len(diff) == 2
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and (a[diff[1]] == b[diff[0]])
    )


def near_copy(got: Any, seen: Any) -> str:
    """How ``got`` is a near-copy of ``seen`` ('' when it is not, or is equal).

    Numbers: off by one (|got - seen| == 1) or two adjacent digits
    transposed. Strings of at least ``MIN_STR`` characters: two adjacent
    characters transposed, cut short by 1..``MAX_CUT`` characters (keeping
    at least half), or one character changed (strings of 8+ characters).
    Anything else -- a reversed string, a number off by 2 or 10, a value of
    another type -- is not a near-copy.
    """
    if same_value(got, seen):
        return ""
    if is_number(got) and is_number(seen):
        if abs(float(got) - float(seen)) == 1:
            return "off by one"
        return "digits transposed" if _adjacent_swap(_digits(got), _digits(seen)) else ""
    if not (isinstance(got, str) and isinstance(seen, str)) or len(seen) < MIN_STR:
        return ""
    if _adjacent_swap(got, seen):
        return "characters transposed"
    if seen.startswith(got) and 0 < len(seen) - len(got) <= MAX_CUT and 2 * len(got) >= len(seen):
        return "truncated"
    if len(got) == len(seen) >= 8 and sum(x != y for x, y in zip(got, seen, strict=True)) == 1:
        return "one character changed"
    return ""


def _field_like(s: str) -> bool:
    """A short one-line string: a field's value, not a whole document."""
    return MIN_STR <= len(s) <= 64 and "\n" not in s


def misreadings(value: Any, result: Any) -> list[tuple[str, Any]]:
    """Ways to misread ``value`` out of ``result`` (for the fault injector), in a fixed order.

    When ``value`` is in the result, its near-copies (``near_copy`` holds for
    each) and the other leaves of the same type (a neighbouring field);
    otherwise only same-type leaves of the result (the agent took a value
    from the result, the wrong one). Neighbouring fields exist only in a
    structured (dict or list) result and are short one-line values. Empty
    when the result offers nothing.
    """
    found = leaves(result)
    grounded = any(same_value(value, x) for x in found)
    same_type = [
        x
        for x in dict.fromkeys(json.dumps(x) for x in found)
        for x in [json.loads(x)]
        if (is_number(x) and is_number(value)) or (isinstance(x, str) and isinstance(value, str))
    ]
    out: list[tuple[str, Any]] = [
        ("neighbouring field", x)
        for x in same_type
        if not same_value(x, value)
        and (not isinstance(x, str) or _field_like(x))
        and isinstance(result, dict | list)  # a bare text result has no fields
    ][:8]
    if not grounded:
        return out
    near: list[tuple[str, Any]] = []
    if is_number(value):
        near.append(("off by one", value + 1))
        s = _digits(value)
        for i in range(len(s) - 1):
            if s[i].isdigit() and s[i + 1].isdigit() and s[i] != s[i + 1] and (i or s[1] != "."):
                t = s[:i] + s[i + 1] + s[i] + s[i + 2 :]
                if not t.startswith("0") or t.startswith("0."):
                    near.append(("digits transposed", type(value)(float(t))))
    elif isinstance(value, str) and len(value) >= MIN_STR:
        for i in range(len(value) - 1):
            if value[i].isalnum() and value[i + 1].isalnum() and value[i] != value[i + 1]:
                near.append(
                    ("characters transposed", value[:i] + value[i + 1] + value[i] + value[i + 2 :])
                )
        cut = min(MAX_CUT, len(value) // 2)
        near += [("truncated", value[:-k]) for k in range(1, cut + 1)]
    return [(h, v) for h, v in near if near_copy(v, value) == h] + out


_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")


def answer_misreadings(answer: str, result: Any, *, max_values: int = 5) -> list[tuple[str, str]]:
    """Ways to misread a value of ``result`` that ``answer`` quotes: ``(how, misread answer)``.

    A value the answer took from the result -- a string of ``MIN_STR``+
    characters it contains, or a number it states -- is replaced by one of
    its ``misreadings``. An answer that quotes nothing of the result (a
    derived total, a count) offers no misreading: it was not read.
    """
    out: list[tuple[str, str]] = []
    used = 0
    for leaf in dict.fromkeys(json.dumps(x) for x in leaves(result)):
        value = json.loads(leaf)
        if used >= max_values:
            break
        if isinstance(value, str):
            if len(value) < MIN_STR or value not in answer:
                continue
            used += 1
            out += [
                (how, answer.replace(value, v, 1))
                for how, v in misreadings(value, result)
                if isinstance(v, str)
            ]
            continue
        for m in _NUMBER.finditer(answer):
            token = m.group().replace(",", "")
            if len(token.replace(".", "")) < 2 or not same_value(float(token), value):
                continue
            used += 1
            for how, v in misreadings(value, result):
                text = str(int(v)) if "." not in token and float(v).is_integer() else str(v)
                if not same_value(float(text), value):
                    out.append((how, answer[: m.start()] + text + answer[m.end() :]))
            break
    return out
