"""The steps of one trace as the attributor sees them: who spoke, what they said, what they saw.

A step is one span (labels removed). Its text is split by role: what the
agent *said* (a model turn's or message's own words), what it *observed*
(a tool's result, a page it was shown, its prompt) and what it *did* (a tool
call's arguments). A model turn's words are the assistant turns ingest reads
from its output, whatever the library's message shape
(``flywheel.ingest.parse_turns``).
An agent's *own words* are what it said without the material it quotes --
code, quoted strings, links -- so a figure in ``I typed 'x' into '0
characters out of 2000'`` is not a figure the agent stated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flywheel import NotFoundError, Store

#: Span attributes that carry evaluation labels; the loader drops them so no
#: signal can read them (Who&When labels, harness-injected faults).
LABEL_PREFIXES: tuple[str, ...] = ("flywheel.sim.", "whowhen.label.", "flywheel.label.")

#: Span attributes that carry a message's speaker and role.
AGENT_KEYS = ("gen_ai.agent.name", "agent.name", "flywheel.agent.name")
ROLE_KEYS = ("flywheel.message.role", "gen_ai.message.role", "message.role")
TRUE = ("true", "True", "1")

_STEPS_SQL = """
SELECT s.span_id AS span_id, s.parent_span_id AS parent_span_id, s.kind AS kind,
       s.tool_name AS tool_name, s.span_name AS span_name, s.arguments AS arguments,
       s.result AS result, s.input AS input, s.output AS output, s.agent_name AS agent_name,
       s.service_name AS service_name, s.status AS status, s.error AS error,
       s.start_time AS start_time, toUnixTimestamp64Nano(s.start_time) AS start_ns,
       s.duration_ns AS duration_ns
FROM agent_steps AS s FINAL
WHERE s.project_id = {p:String} AND s.trace_id = {t:String}
ORDER BY s.start_time, s.span_id
"""

_ATTRS_SQL = """
SELECT SpanId AS span_id,
       mapFilter((k, v) -> NOT (startsWith(k, 'flywheel.sim.') OR startsWith(k, 'whowhen.label.')
                                OR startsWith(k, 'flywheel.label.')), SpanAttributes) AS attributes
FROM {table:Identifier}
WHERE TraceId = {t:String} AND ProjectId = {p:String}
"""

_CODE = re.compile(r"```[\w+-]*\n")
_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
#: Material an agent quotes rather than states: code, inline code, quoted strings
#: (an apostrophe inside a word opens nothing), markdown link targets, URLs, paths, and
#: logs (Python tracebacks, lines opening with a timestamp or a log level).
_QUOTED = re.compile(
    r"```.*?(?:```|\Z)|`[^`\n]*`|(?<![\w'])'[^'\n]{1,400}'(?![\w'])|\"[^\"\n]{1,400}\"|"
    r"“[^”\n]{1,400}”|‘[^’\n]{1,400}’|\]\([^)\s]*\)|\bhttps?://\S+|\bwww\.\S+|(?:file|s3)://\S+|"
    r"(?<!\w)(?:/[\w.-]+){2,}|"
    # a Python traceback printed into the message, up to the exception it ends in
    r"(?m:Traceback \(most recent call last\):.*?"
    r"(?:^[\w.]*(?:Error|Exception|Exit|Interrupt)\b[^\n]*|\Z))|"
    # a log record pasted into the message: a line opening with a timestamp or a level
    r"(?m:^[ \t]*(?:\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d[^\n]*|"
    r"\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL|TRACE)\]?(?::| -)[^\n]*))",
    re.DOTALL,
)
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")


@dataclass
class Step:
    """One span of a trace as the attributor sees it (labels removed)."""

    index: int
    span_id: str
    parent_span_id: str = ""
    kind: str = "other"
    span_name: str = ""
    tool_name: str = ""
    agent: str = ""
    role: str = ""
    arguments: str = ""
    result: str = ""
    input: str = ""
    output: str = ""
    status: str = "unset"
    error: str = ""
    service_name: str = ""
    attributes: dict[str, str] = field(default_factory=dict)
    #: Whether a model turn asked for a tool (one of its output turns is a tool call).
    calls_tools: bool = False
    #: Start and end (ns since the epoch); -1 when unknown (steps then follow their index).
    start_ns: int = -1
    end_ns: int = -1

    @property
    def text(self) -> str:
        """What the step said or returned: a tool's result, else the output, else the input."""
        if self.kind == "tool":
            return self.result or self.output
        return self.output or self.input

    @property
    def is_observation(self) -> bool:
        """Whether the step brings outside state in (a tool result, retrieval, memory read)."""
        return self.kind in ("tool", "retrieval", "memory_read")

    @property
    def is_notice(self) -> bool:
        """A runtime notice (routing, "nothing to run"): not an agent's words, not the world's."""
        return self.attributes.get("flywheel.message.notice") in TRUE

    @property
    def speaks(self) -> bool:
        """Whether the step is an agent's words (a model turn or message; no tool, no plumbing)."""
        return self.kind == "llm" and not self.is_notice

    @property
    def said(self) -> str:
        """The agent's words (a model turn's output text); '' for steps that do not speak."""
        return self.output if self.speaks else ""

    @property
    def own_words(self) -> str:
        """What the agent said without what it quotes (code, quoted strings, links, paths)."""
        return _QUOTED.sub(" ", self.said)

    @property
    def ends_run(self) -> bool:
        """The speaker declared the run finished (a final answer, a termination word)."""
        return self.attributes.get("flywheel.message.ends_run") in TRUE

    @property
    def acts(self) -> bool:
        """Whether the step emits an action: a tool call, or code for someone to run."""
        if self.kind == "tool":
            return True
        return (
            bool(_CODE.search(self.said))
            or bool(self.attributes.get("gen_ai.tool.call.id"))
            or self.attributes.get("flywheel.message.acted") in TRUE
            or self.calls_tools
        )


@dataclass
class Signal:
    """One piece of deterministic evidence that a step went wrong.

    ``index`` is where it shows; ``cause_index`` (default ``index``) the step
    the signal blames; ``weight`` in [0, 1] is how strongly it implies a failure
    *and* its category.
    """

    kind: str
    index: int
    category: str
    weight: float
    evidence: str
    cause_index: int | None = None

    @property
    def cause(self) -> int:
        """The blamed step."""
        return self.index if self.cause_index is None else self.cause_index


def _s(v: Any) -> str:
    return "" if v is None else str(v)


def _model_words(row: Mapping[str, Any], output: str) -> tuple[str, bool]:
    """A model turn's own words and whether it asked for a tool, from ingest's turns.

    Every library's message shape is read by ``flywheel.ingest.parse_turns``;
    an output it finds no turn in is taken as the words themselves.
    """
    from flywheel.ingest import parse_turns

    turns = row.get("output_turns")
    if turns is None:
        turns = parse_turns(output, "assistant")
    if not turns:
        return output, False
    words = [t.content for t in turns if t.role == "assistant" and isinstance(t.content, str)]
    return "\n".join(w for w in words if w), any(t.role == "tool_call" for t in turns)


def steps_from_rows(rows: Sequence[Mapping[str, Any]]) -> list[Step]:
    """Steps from agent_steps-shaped dicts (label attributes dropped)."""
    steps: list[Step] = []
    for i, r in enumerate(rows):
        attrs = {
            k: _s(v)
            for k, v in dict(r.get("attributes") or {}).items()
            if not k.startswith(LABEL_PREFIXES)
        }
        agent = _s(r.get("agent_name")) or next((attrs[k] for k in AGENT_KEYS if attrs.get(k)), "")
        role = next((attrs[k] for k in ROLE_KEYS if attrs.get(k)), "")
        kind = _s(r.get("kind")) or "other"
        output = _s(r.get("output"))
        calls = False
        if kind == "llm":
            output, calls = _model_words(r, output)
        steps.append(
            Step(
                index=i,
                span_id=_s(r.get("span_id")),
                parent_span_id=_s(r.get("parent_span_id")),
                kind=kind,
                span_name=_s(r.get("span_name")),
                tool_name=_s(r.get("tool_name")),
                agent=agent,
                role=role,
                arguments=_s(r.get("arguments")),
                result=_s(r.get("result")),
                input=_s(r.get("input")),
                output=output,
                calls_tools=calls,
                status=_s(r.get("status")) or "unset",
                error=_s(r.get("error")),
                service_name=_s(r.get("service_name")),
                attributes=attrs,
                start_ns=int(r.get("start_ns", -1)),
                end_ns=int(r.get("start_ns", -1)) + int(r.get("duration_ns") or 0)
                if r.get("start_ns") is not None
                else -1,
            )
        )
    _inherit_agents(steps)
    return steps


def _inherit_agents(steps: list[Step]) -> None:
    """Name the agent of spans that carry none from the span tree.

    The nearest ancestor that names one; else, in a workflow whose root has
    two or more differently named children (a graph's nodes, a crew's
    members), the name of the root's child the span sits under.
    """
    by_id = {s.span_id: s for s in steps}

    def chain(s: Step) -> list[Step]:
        out, seen = [], set()
        while s.parent_span_id in by_id and s.parent_span_id not in seen:
            seen.add(s.parent_span_id)
            s = by_id[s.parent_span_id]
            out.append(s)
        return out

    roots = [s for s in steps if s.parent_span_id not in by_id]
    members = {s.span_name for s in steps if s.parent_span_id in {r.span_id for r in roots}}
    for s in steps:
        if s.agent:
            continue
        up = chain(s)
        named = next((a.agent for a in up if a.agent), "")
        if not named and len(members) >= 2 and up:
            top = up[-2] if len(up) >= 2 else s
            named = top.span_name
        s.agent = named


def load_trace(store: Store, trace_id: str, project: str = "default") -> list[Step]:
    """A stored trace's steps in start order, without label attributes."""
    from flywheel.ingest import normalise_steps

    rows = store.query(_STEPS_SQL, {"p": project, "t": trace_id})
    if not rows:
        raise NotFoundError(
            f"trace {trace_id} not found in project {project}; "
            "list traces with `flywheel traces list`"
        )
    attrs = {
        r["span_id"]: r["attributes"]
        for r in store.query(_ATTRS_SQL, {"table": store.otel_table, "t": trace_id, "p": project})
    }
    for r in rows:
        r["attributes"] = attrs.get(r["span_id"], {})
    normalise_steps(rows)  # tool arguments and results without library wrappers
    steps = steps_from_rows(rows)
    ordered = sorted(steps, key=lambda s: (_step_index(s), s.index))
    for i, s in enumerate(ordered):
        s.index = i
    return ordered


def _step_index(s: Step) -> int:
    try:
        return int(s.attributes.get("flywheel.step.index", s.index))
    except ValueError:
        return s.index


def actor_before(steps: Sequence[Step], index: int) -> int:
    """The step that issued step ``index``'s call: the nearest earlier model turn.

    Falls back to the parent span, then to the nearest earlier step that acted.
    Runtime notices never issue calls.
    """
    for j in range(index - 1, -1, -1):
        if steps[j].speaks:
            return j
    parent = steps[index].parent_span_id
    for j in range(index - 1, -1, -1):
        if steps[j].span_id == parent and not steps[j].is_observation:
            return j
    for j in range(index - 1, -1, -1):
        if not steps[j].is_observation and steps[j].acts:
            return j
    return index


def figures(text: str, digits: int = 3) -> list[str]:
    """Figures in ``text`` with ``digits`` or more digits, commas dropped, in order, once each."""
    out = []
    for n in _NUM.findall(text):
        n = n.rstrip(",.").replace(",", "")
        if len(n.replace(".", "")) >= digits:
            out.append(n)
    return list(dict.fromkeys(out))


#: Words before a statement that deny it ("has not been verified", "I will not assume").
_NEGATED = re.compile(r"\b(?:not|never|no|cannot|unable|without|yet to|nor)\b|n't\b", re.IGNORECASE)


def affirms(pattern: re.Pattern[str], words: str) -> bool:
    """Whether ``words`` state ``pattern``, neither denied nor asked.

    Denied: a negation among the four words before the match, in its sentence.
    Asked: its sentence ends in ``?``.
    """
    for m in pattern.finditer(words):
        start = max(words.rfind(c, 0, m.start()) for c in ".!?\n")
        before = words[start + 1 : m.start()]
        ends = [k for k in (words.find(c, m.end()) for c in ".!?\n") if k >= 0]
        asked = bool(ends) and words[min(ends)] == "?"
        if not asked and not _NEGATED.search(" ".join(before.split()[-4:])):
            return True
    return False


def has_token(token: str, text: str) -> bool:
    """Whether ``token`` occurs in ``text`` as a whole figure or word."""
    return re.search(r"(?<![\w.])" + re.escape(token) + r"(?![\w]|\.\d)", text) is not None


def without_code(text: str) -> str:
    """``text`` with fenced code blocks removed."""
    return _CODE_BLOCK.sub(" ", text)


def call_arguments(step: Step) -> Any:
    """A tool call's arguments, parsed (the raw string when it is not JSON)."""
    try:
        return json.loads(step.arguments) if step.arguments else {}
    except (json.JSONDecodeError, TypeError):
        return step.arguments
