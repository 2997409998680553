"""Canonical trace signature: the shingle set near-duplicate detection compares.

Two traces are "the same task" when the user asked for the same thing and the
agent took the same tool path with the same kind of arguments, whatever the
ids, timestamps, amounts, names and small wording differences. The signature
keeps exactly those parts, normalised, as a set of string shingles:

=================  ==========================================================
shingle            meaning
=================  ==========================================================
``i:TOKEN``        a content word of the user intent (stop words dropped)
``b:TOK1 TOK2``    two consecutive content words of the intent
``t:TOOL``         a tool the trace called
``s:A>B``          consecutive tools (``^`` start, ``$`` end), i.e. tool bigrams
``s3:A>B>C``       tool trigrams (same padding)
``p:A>B>...``      the whole tool path
``k:TOOL.PATH``    an argument key path passed to a tool
``a:TOOL.PATH=V``  a short argument value after masking (``<num>``, ``<id>``...)
``a2:``, ``a3:``   copies of ``a:`` for values with no mask left in them
                   (``plan=premium``, ``reason=damaged``): the task's literal
                   target counts three times, a cheap weighted Jaccard
``w:TOOL.PATH:T``  a content word of a long (free text) argument value
=================  ==========================================================

Measured on ``duplicate_traces`` (16 hand-written support tasks with
paraphrases, plus invented tasks): same-task pairs have Jaccard 0.43 at
minimum and 0.6 at the 5th percentile; different-task pairs 0.48 at most
(upgrade vs downgrade a plan), 0.14 at the 99.9th percentile. Hence the
default verification threshold 0.5 in ``DedupeParams``.

Masking (intent text and argument values alike): e-mail addresses -> ``<email>``,
URLs -> ``<url>``, UUIDs and long hex -> ``<id>``, dates and times -> ``<ts>``,
any token containing a digit (order numbers, amounts, ids like ``O-4412``) ->
``<num>``, pseudonyms left by redaction (``<EMAIL_1>``) -> their lower-case
type. Tool results are not part of the signature: they describe the world, not
the task.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np
import xxhash
from flywheel.promote._redact_types import TraceStep

#: Intent words carry no task meaning; dropped before shingling.
STOP_WORDS: frozenset[str] = frozenset(
    """a an the and or but if then of to in on at for from by with about as into is are was were
    be been being am do does did can could would should will shall may might must i me my mine
    we us our you your yours he she it its they them their this that these those there here
    please pls thanks thank hi hello hey just also so very really want wanted need needed like
    would could help kindly some any all no not up out over again now today asap quick quickly
    get got good morning afternoon evening cheers regards best team there dear ok okay
    thx ty""".split()
)

#: Long free-text argument values contribute at most this many word shingles.
MAX_WORDS_PER_VALUE = 24
#: Argument values up to this many characters (after masking) become one ``a:`` shingle.
SHORT_VALUE_CHARS = 48
#: Weight (number of copies) of an argument value that has no mask in it.
LITERAL_VALUE_WEIGHT = 3

_PSEUDONYM = re.compile(r"<([A-Z]+)_\d+>")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"https?://\S+|www\.\S+")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_HEX = re.compile(r"\b[0-9a-f]{12,}\b")
_DATETIME = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?\b"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]m)?\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
)
_NUMTOKEN = re.compile(r"[\w#./:-]*\d[\w#./:-]*")
_WORD = re.compile(r"<\w+>|[^\W\d_]+(?:'[^\W\d_]+)?")


def normalise_text(text: str) -> str:
    """Lower-case, NFKC, and mask ids, timestamps, numbers, emails and URLs."""
    t = _PSEUDONYM.sub(lambda m: f" <{m.group(1).lower()}> ", text)
    t = unicodedata.normalize("NFKC", t).lower()
    t = _EMAIL.sub(" <email> ", t)
    t = _URL.sub(" <url> ", t)
    t = _UUID.sub(" <id> ", t)
    t = _DATETIME.sub(" <ts> ", t)
    t = _HEX.sub(" <id> ", t)
    t = _NUMTOKEN.sub(" <num> ", t)
    return " ".join(t.split())


def content_words(text: str) -> list[str]:
    """Normalised words of ``text`` without stop words (placeholders kept)."""
    return [w for w in _WORD.findall(normalise_text(text)) if w not in STOP_WORDS and len(w) > 1]


#: Content words of an intent below which a trace with no tool call is not compared.
MIN_INTENT_WORDS = 3


@dataclass(frozen=True)
class TraceSignature:
    """What dedupe compares: the normalised intent, tool path and shingles."""

    intent: str
    tools: tuple[str, ...]
    shingles: frozenset[str]

    def hashes(self) -> np.ndarray:
        """64-bit hashes of the shingles (sorted, unique): what the store keeps."""
        return shingle_hashes(self.shingles)

    @property
    def informative(self) -> bool:
        """Whether it says what the task was: a tool called, or an intent of three or more
        content words. Two signatures that say nothing are equal without being the same
        task (every chat-only trace whose request the reader could not find would make one
        cluster), so dedupe never makes such a trace a duplicate."""
        return bool(self.tools) or sum(s.startswith("i:") for s in self.shingles) >= MIN_INTENT_WORDS


def shingle_hashes(shingles: frozenset[str] | set[str]) -> np.ndarray:
    """xxh3-64 of each shingle, sorted and unique, as ``uint64``."""
    arr = np.fromiter(
        (xxhash.xxh3_64_intdigest(s.encode()) for s in shingles),
        dtype=np.uint64,
        count=len(shingles),
    )
    return np.unique(arr)


def _message_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            if isinstance(part, dict):
                value = part.get("content") or part.get("text")
                if isinstance(value, str):
                    texts.append(value)
        return " ".join(texts) if texts else None
    return None


def user_intent(steps: Sequence[TraceStep]) -> str:
    """The first user text of the trace.

    The first step with an ``input_text`` wins; when that text is a JSON list
    of chat messages (GenAI ``gen_ai.input.messages`` or OpenAI style), the
    first ``role: user`` message's text (or ``parts``/``content`` parts) is used.
    """
    for step in steps:
        text = step.input_text
        if not text:
            continue
        head = text.lstrip()[:1]
        if head in ("[", "{"):
            try:
                msgs = json.loads(text)
            except ValueError:
                return text
            if isinstance(msgs, dict):
                msgs = msgs.get("messages", [msgs])
            if isinstance(msgs, list):
                for m in msgs:
                    if isinstance(m, dict) and m.get("role") == "user":
                        found = _message_text(m.get("content", m.get("parts")))
                        if found:
                            return found
        return text
    return ""


def _leaves(node: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for v in node:
            yield from _leaves(v, f"{path}[]")
    else:
        yield path, node


def _argument_shingles(tool: str, arguments: str | None, out: set[str]) -> None:
    if not arguments:
        return
    try:
        tree = json.loads(arguments)
    except ValueError:
        tree = arguments
    if isinstance(tree, dict) and set(tree) <= {"args", "kwargs"} and "kwargs" in tree:
        tree = tree["kwargs"]  # smolagents wraps arguments as {"args": [], "kwargs": {...}}
    for path, value in _leaves(tree, ""):
        where = f"{tool}.{path}" if path else tool
        out.add(f"k:{where}")
        if isinstance(value, bool) or value is None:
            masked = json.dumps(value)
        elif isinstance(value, (int, float)):
            masked = "<num>"
        else:
            masked = normalise_text(str(value))
        if len(masked) <= SHORT_VALUE_CHARS:
            out.add(f"a:{where}={masked}")
            if "<" not in masked:
                out.update(f"a{k}:{where}={masked}" for k in range(2, LITERAL_VALUE_WEIGHT + 1))
        else:
            words = [w for w in _WORD.findall(masked) if w not in STOP_WORDS and len(w) > 1]
            for w in words[:MAX_WORDS_PER_VALUE]:
                out.add(f"w:{where}:{w}")


def trace_signature(steps: Sequence[TraceStep], intent: str | None = None) -> TraceSignature:
    """Build the canonical signature of a trace (see the module docstring).

    Args:
        steps: The trace's steps in span order.
        intent: The user intent text, if known; else taken from the steps.

    Returns:
        The signature; an empty trace has an empty shingle set.
    """
    text = intent if intent is not None else user_intent(steps)
    words = content_words(text)
    shingles: set[str] = {f"i:{w}" for w in words}
    shingles.update(f"b:{a} {b}" for a, b in zip(words, words[1:], strict=False))
    tools = tuple(s.tool_name for s in steps if s.tool_name)
    shingles.update(f"t:{t}" for t in tools)
    path = ("^", *tools, "$")
    shingles.update(f"s:{a}>{b}" for a, b in zip(path, path[1:], strict=False))
    shingles.update(f"s3:{a}>{b}>{c}" for a, b, c in zip(path, path[1:], path[2:], strict=False))
    shingles.add("p:" + ">".join(tools))
    for step in steps:
        if step.tool_name:
            _argument_shingles(step.tool_name, step.arguments, shingles)
    return TraceSignature(intent=" ".join(words), tools=tools, shingles=frozenset(shingles))


def jaccard(a: AbstractSet[Any], b: AbstractSet[Any]) -> float:
    """Exact Jaccard similarity |A n B| / |A u B|; two empty sets count as 1.0."""
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def jaccard_hashes(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard of two sorted unique ``uint64`` shingle-hash arrays."""
    if a.size == 0 and b.size == 0:
        return 1.0
    inter = np.intersect1d(a, b, assume_unique=True).size
    return inter / (a.size + b.size - inter)
