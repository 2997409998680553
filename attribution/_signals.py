"""Deterministic failure signals over the steps of one trace.

Each signal is cheap, explainable and names a step: errors (and which of them
are the environment's fault), retries without change, arguments from stale
or untrusted sources (argument provenance), writes without a later check,
completion claims without verification, budget hits, and claims whose facts
appear in nothing the agent observed before ("tool used does not mean truth
acquired": a number that no tool returned was made up). The attributor
weighs them; nothing here reads evaluation labels.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flywheel import NotFoundError, Store
from flywheel.values import MAX_CUT, MIN_STR, is_number, near_copy, observed_leaves, same_value

#: Span attributes that carry evaluation labels; the loader drops them so no
#: signal can read them (Who&When labels, harness-injected faults).
LABEL_PREFIXES: tuple[str, ...] = ("flywheel.sim.", "whowhen.label.", "flywheel.label.")

#: Span attributes that carry a message's speaker and role.
AGENT_KEYS = ("gen_ai.agent.name", "agent.name", "flywheel.agent.name")
ROLE_KEYS = ("flywheel.message.role", "gen_ai.message.role", "message.role")

_STEPS_SQL = """
SELECT s.span_id AS span_id, s.parent_span_id AS parent_span_id, s.kind AS kind,
       s.tool_name AS tool_name, s.span_name AS span_name, s.arguments AS arguments,
       s.result AS result, s.input AS input, s.output AS output, s.agent_name AS agent_name,
       s.service_name AS service_name, s.status AS status, s.error AS error,
       s.start_time AS start_time
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

_EXIT_FAIL = re.compile(
    r"exitcode:\s*[1-9]\d*|Traceback \(most recent call last\)|\bexecution failed\b", re.IGNORECASE
)
_ENV_ERROR = re.compile(
    r"time[d ]?out|timeout|\b50[0234]\b|service unavailable|connection (?:refused|reset|error)|"
    r"temporarily unavailable|rate.?limit|\b429\b|network is unreachable|name resolution",
    re.IGNORECASE,
)
_BUDGET = re.compile(
    r"budget\s*(?:exhausted|exceeded|hit)|budgetexhausted|max(?:imum)?[_ ]turns", re.IGNORECASE
)
_CLAIM = re.compile(
    r"\b(?:task (?:is )?(?:complete|completed|done|solved)|successfully (?:completed|done|sent|"
    r"transferred|booked|updated)|has been (?:verified|confirmed|completed)|verified|confirmed|"
    r"final answer|the answer is|TERMINATE)\b",
    re.IGNORECASE,
)
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_CODE = re.compile(r"```")
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_NO_ACTION = re.compile(r"there is no code|no code (?:block )?(?:to|from)", re.IGNORECASE)


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
    def acts(self) -> bool:
        """Whether the step emits an action: a tool call, or code for someone to run."""
        if self.kind == "tool":
            return True
        return bool(_CODE.search(self.text)) or bool(self.attributes.get("gen_ai.tool.call.id"))


@dataclass
class Signal:
    """One piece of deterministic evidence that a step went wrong.

    ``index`` is where it shows; ``cause_index`` (default ``index``) the step
    the signal blames; ``weight`` in [0, 1] is how strongly it implies a failure.
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
        steps.append(
            Step(
                index=i,
                span_id=_s(r.get("span_id")),
                parent_span_id=_s(r.get("parent_span_id")),
                kind=_s(r.get("kind")) or "other",
                span_name=_s(r.get("span_name")),
                tool_name=_s(r.get("tool_name")),
                agent=agent,
                role=role,
                arguments=_s(r.get("arguments")),
                result=_s(r.get("result")),
                input=_s(r.get("input")),
                output=_s(r.get("output")),
                status=_s(r.get("status")) or "unset",
                error=_s(r.get("error")),
                service_name=_s(r.get("service_name")),
                attributes=attrs,
            )
        )
    return steps


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


# -- helpers -----------------------------------------------------------------------------
def _failed(step: Step) -> str:
    """The failure text of a step ('' when it did not fail)."""
    if step.status == "error":
        return step.error or "status error"
    if step.is_observation:
        m = _EXIT_FAIL.search(step.text[:400])
        if m:
            return step.text[:200]
    return ""


def actor_before(steps: Sequence[Step], index: int) -> int:
    """The step that issued step ``index``'s call: the nearest earlier model turn.

    Falls back to the parent span, then to the nearest earlier step that acted.
    """
    for j in range(index - 1, -1, -1):
        if steps[j].kind == "llm":
            return j
    parent = steps[index].parent_span_id
    for j in range(index - 1, -1, -1):
        if steps[j].span_id == parent and not steps[j].is_observation:
            return j
    for j in range(index - 1, -1, -1):
        if not steps[j].is_observation and steps[j].acts:
            return j
    return index


def _numbers(text: str) -> list[str]:
    """Multi-digit figures stated in prose (code blocks hold parameters, not claims)."""
    out = []
    for n in _NUM.findall(_CODE_BLOCK.sub(" ", text)):
        n = n.rstrip(",.").replace(",", "")
        if len(n.replace(".", "")) >= 3:
            out.append(n)
    return out


def _args(step: Step) -> Any:
    try:
        return json.loads(step.arguments) if step.arguments else {}
    except (json.JSONDecodeError, TypeError):
        return step.arguments


# -- signals -----------------------------------------------------------------------------
def error_signals(steps: Sequence[Step]) -> list[Signal]:
    """Failed steps: environment faults, budget hits, execution errors blamed on their caller."""
    out: list[Signal] = []
    for s in steps:
        msg = _failed(s)
        if not msg:
            continue
        blob = f"{msg} {s.attributes.get('error.type', '')}"
        if _BUDGET.search(blob) or s.attributes.get("flywheel.budget.exhausted") in (
            "true",
            "True",
            "1",
        ):
            out.append(Signal("budget_hit", s.index, "budget_exhaustion", 0.95, msg[:200]))
        elif _ENV_ERROR.search(blob):
            out.append(Signal("environment_error", s.index, "environment_caused", 0.55, msg[:200]))
        else:
            cause = actor_before(steps, s.index) if s.is_observation else s.index
            out.append(Signal("error", s.index, "execution", 0.5, msg[:200], cause))
    for s in steps:  # budget hits recorded on spans that did not fail
        if s.attributes.get("flywheel.budget.exhausted") in ("true", "True", "1") and not _failed(
            s
        ):
            out.append(
                Signal(
                    "budget_hit",
                    s.index,
                    "budget_exhaustion",
                    0.95,
                    s.attributes.get("flywheel.budget.which", "budget exhausted"),
                )
            )
    return out


def retry_signals(steps: Sequence[Step]) -> list[Signal]:
    """The same call repeated unchanged after it failed: the agent did not recover."""
    out: list[Signal] = []
    failed: dict[tuple[str, str], int] = {}
    for s in steps:
        if s.kind != "tool" or not s.arguments.strip() or s.arguments.strip() in ("{}", "null"):
            continue  # a call without arguments repeats trivially
        key = (s.tool_name, s.arguments)
        if key in failed:
            out.append(
                Signal(
                    "retry_without_change",
                    s.index,
                    "recovery",
                    0.6,
                    f"{s.tool_name} repeated with the same arguments after step "
                    f"{failed[key]} failed",
                    failed[key],
                )
            )
        if _failed(s):
            failed.setdefault(key, s.index)
    return out


def provenance_signals(
    steps: Sequence[Step], provenance: Sequence[Mapping[str, Any]]
) -> list[Signal]:
    """Arguments from untrusted or stale sources; the cause is the earlier read.

    A value is stale when the same tool was read again between the source and
    the use and returned something else. An argument to a sensitive tool
    taken from untrusted content (provenance flag) is blamed on the read it
    came from: the agent believed it (perception), whatever it did next.
    """
    by_span = {s.span_id: s for s in steps}
    out: list[Signal] = []
    for rec in provenance:
        use = by_span.get(str(rec.get("span_id", "")))
        src = by_span.get(str(rec.get("source_span_id", "")))
        if use is None:
            continue
        path = rec.get("path", "$")
        if src is not None and src.index < use.index and src.tool_name:
            later = [
                s
                for s in steps[src.index + 1 : use.index]
                if s.tool_name == src.tool_name and s.is_observation and s.text != src.text
            ]
            if later:
                out.append(
                    Signal(
                        "stale_argument",
                        use.index,
                        "perception",
                        0.9,
                        f"{use.tool_name}.{path} came from {src.tool_name} at step "
                        f"{src.index}, re-read at step {later[-1].index} with a new value",
                        src.index,
                    )
                )
                continue
        if "untrusted_argument_to_sensitive_tool" in (rec.get("flags") or []):
            cause = src.index if src is not None else use.index
            out.append(
                Signal(
                    "untrusted_argument",
                    use.index,
                    "perception",
                    0.85,
                    f"{use.tool_name}.{path} taken from untrusted "
                    f"{rec.get('source_kind')} {rec.get('source_ref', '')}",
                    cause,
                )
            )
    return out


def write_check_signals(steps: Sequence[Step], is_write: Any = None) -> list[Signal]:
    """A state-changing call with no observation after it: nothing checked the write."""
    from flywheel.tools import ToolCatalog

    def _writes(s: Step) -> bool:
        catalog = ToolCatalog()
        catalog.add_attributes(s.tool_name, s.attributes)
        try:
            args = json.loads(s.arguments) if s.arguments else None
        except json.JSONDecodeError:
            args = None  # a bare-string argument names no action
        return catalog.for_call(s.tool_name, args).writes

    is_write = is_write or _writes
    out: list[Signal] = []
    for s in steps:
        if s.kind != "tool" or not is_write(s) or _failed(s):
            continue
        checked = any(
            t.is_observation
            and t.tool_name != s.tool_name
            or t.attributes.get("flywheel.seam") == "verifier"
            for t in steps[s.index + 1 :]
        )
        if not checked:
            out.append(
                Signal(
                    "write_without_check",
                    s.index,
                    "verification",
                    0.3,
                    f"{s.tool_name} changed state and nothing read it back",
                )
            )
    return out


def claim_signals(steps: Sequence[Step]) -> list[Signal]:
    """A completion claim after a failure that nothing later repaired.

    The claim is where the failure surfaced; it names the unrepaired failure.
    """
    out: list[Signal] = []
    last_fail: int | None = None
    for s in steps:
        if s.is_observation:
            if _failed(s):
                last_fail = s.index
            elif last_fail is not None and s.text.strip():
                last_fail = None  # a later successful observation: repaired or moved on
            continue
        if last_fail is not None and _CLAIM.search(s.text):
            out.append(
                Signal(
                    "claim_without_verification",
                    s.index,
                    "verification",
                    0.45,
                    f"completion claimed after the failure at step {last_fail} "
                    "with no successful check since",
                    s.index,
                )
            )
            last_fail = None
    return out


def grounding_signals(steps: Sequence[Step], *, start: int = 1) -> list[Signal]:
    """Facts (multi-digit numbers) that appear in nothing observed before the step.

    An agent message or call argument that states a figure no earlier message,
    task text or tool result contained made that figure up (or took it from
    somewhere the trace cannot see): a grounding failure. Observations are the
    evidence, so they are never flagged themselves; a model turn's own input
    (its prompt) counts as observed before its output.
    """
    out: list[Signal] = []
    seen = ""
    fields: dict[str, list[float]] = {}  # numeric fields of structured results, by key
    for s in steps:
        body = s.arguments if s.kind == "tool" else s.text
        if s.kind not in ("agent", "tool"):
            # a turn reads its input (prompt, the page a browsing agent was shown) before
            # it speaks: figures there are observed, not stated
            seen += " " + s.input.replace(",", "")
        if s.index >= start and not s.is_observation:
            new = [
                n
                for n in dict.fromkeys(_numbers(body))
                if n not in seen and not _aggregate_of(n, fields)
            ]
            if new:
                out.append(
                    Signal(
                        "ungrounded_fact",
                        s.index,
                        "perception",
                        0.7,
                        "figures not seen before: " + ", ".join(new[:6]),
                    )
                )
        # an enclosing agent span's output is written when the run ends: only its input
        # (the task) was known at its start
        said = "" if s.kind == "agent" else (s.output or s.result or "")
        seen += " " + (s.input or "") + " " + said + " " + (s.arguments or "")
        seen = seen.replace(",", "")
        if s.is_observation:
            _collect_fields(s.text, fields)
    return out


def _collect_fields(text: str, fields: dict[str, list[float]]) -> None:
    """Add a JSON result's numeric leaves to ``fields``, keyed by their field name."""
    if not text.startswith(("{", "[")):
        return
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return
    stack: list[Any] = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                if is_number(x):
                    fields.setdefault(str(k), []).append(float(x))
                else:
                    stack.append(x)
        elif isinstance(v, list):
            stack.extend(v)


#: Bounds of the aggregate check: values per field and the largest total, in cents.
_MAX_TERMS, _MAX_CENTS = 64, 10**7


def _aggregate_of(figure: str, fields: dict[str, list[float]]) -> bool:
    """Whether ``figure`` is the sum of some values of one field of a structured result.

    A total over read records (the spending of a month: the sum of the
    amounts of its transactions) is derived from what was observed, not made
    up. Only fields of JSON results count (a sum over free text would make
    almost any figure reachable); exact to the cent, positive values, at
    most ``_MAX_TERMS`` values per field.
    """
    try:
        target = round(float(figure) * 100)
    except ValueError:
        return False
    if target <= 0 or target > _MAX_CENTS:
        return False
    for values in fields.values():
        positive = [v for v in values[-_MAX_TERMS:] if v > 0]
        cents = [round(v * 100) for v in positive]
        if len(cents) < 2 or any(
            abs(c - v * 100) > 1e-6 for c, v in zip(cents, positive, strict=True)
        ):
            continue  # too few values, or finer than cents
        if sum(cents) < target:
            continue  # even all of them fall short
        reach = 1  # bit i set: some subset sums to i cents
        mask = (1 << (target + 1)) - 1
        for c in cents:
            reach = (reach | (reach << c)) & mask
        if reach >> target & 1:
            return True
    return False


def _empty(v: Any) -> bool:
    return v in ("", 0, [], {}, None, False)


def _recalled_call(step: Step) -> dict[str, Any] | None:
    """A planned call the agent recalled (a memory read or plan holding ``{name, args}``)."""
    if step.kind not in ("memory_read", "other") or not step.text.startswith("{"):
        return None
    try:
        doc = json.loads(step.text)
    except json.JSONDecodeError:
        return None
    if (
        isinstance(doc, dict)
        and isinstance(doc.get("name"), str)
        and isinstance(doc.get("args"), dict)
    ):
        return doc
    return None


def plan_signals(steps: Sequence[Step]) -> list[Signal]:
    """A call that departs from the call the agent had just recalled or planned.

    Blamed on the step that emitted the call (the model turn before it): a
    different tool is tool selection; a planned value gone blank is memory (the
    constraint was lost); a changed value is argument generation, or perception
    when the changed value was read from an earlier observation.
    """
    out: list[Signal] = []
    plan: dict[str, Any] | None = None
    reads: list[tuple[int, str]] = []  # (step, text) of observations so far
    observed: list[tuple[int, Any]] = []  # (step, scalar) read from observations so far
    for s in steps:
        recalled = _recalled_call(s)
        if recalled is not None:
            plan = recalled
            continue
        if s.kind != "tool":
            if s.is_observation:
                reads.append((s.index, s.text))
                observed += [(s.index, v) for v in observed_leaves(s.text)]
            continue
        if plan is not None:
            cause = actor_before(steps, s.index)
            # what the turn that made the call had read (not this call's own result)
            seen = " ".join(t for j, t in reads if j < cause)
            before = [(j, v) for j, v in observed if j < cause]
            args = _args(s)
            if s.tool_name and s.tool_name != plan["name"]:
                out.append(
                    Signal(
                        "tool_deviates_from_plan",
                        s.index,
                        "tool_selection",
                        0.8,
                        f"called {s.tool_name}, planned {plan['name']}",
                        cause,
                    )
                )
            elif isinstance(args, dict):
                for k, want in plan["args"].items():
                    got = args.get(k)
                    if got == want:
                        continue
                    if _empty(got) and not _empty(want):
                        out.append(
                            Signal(
                                "constraint_lost",
                                s.index,
                                "memory",
                                0.8,
                                f"{s.tool_name}.{k} blank, planned {str(want)[:40]}",
                                cause,
                            )
                        )
                    elif (j_how := _read_nearly(got, want, before)) is not None:
                        j, how = j_how
                        out.append(
                            Signal(
                                "argument_from_misread",
                                s.index,
                                "perception",
                                0.8,
                                f"{s.tool_name}.{k}={str(got)[:40]} is {how} of a value read "
                                f"at step {j}, planned {str(want)[:40]}",
                                cause,
                            )
                        )
                    elif str(got) and re.search(
                        r"(?<![\w.])" + re.escape(str(got)) + r"(?![\w])", seen
                    ):
                        out.append(
                            Signal(
                                "argument_from_misread",
                                s.index,
                                "perception",
                                0.8,
                                f"{s.tool_name}.{k}={str(got)[:40]} read from an earlier "
                                f"result, planned {str(want)[:40]}",
                                cause,
                            )
                        )
                    else:
                        out.append(
                            Signal(
                                "argument_deviates_from_plan",
                                s.index,
                                "argument_generation",
                                0.8,
                                f"{s.tool_name}.{k}={str(got)[:40]}, planned {str(want)[:40]}",
                                cause,
                            )
                        )
                    break
            plan = None
        reads.append((s.index, s.text))
        observed += [(s.index, v) for v in observed_leaves(s.text)]
    return out


def _read_nearly(
    got: Any, want: Any, observed: Sequence[tuple[int, Any]]
) -> tuple[int, str] | None:
    """Where and how a changed argument was misread: ``(step, how)`` or None.

    The planned value was in a result and the argument is a near-copy of it
    (``near_copy``), or the argument is another value of the same result
    (a neighbouring field). Latest read first.
    """
    for j, v in reversed(observed):
        if same_value(v, want):
            how = near_copy(got, v)
            if how:
                return j, f"a near-copy ({how})"
    for j, v in reversed(observed):
        if same_value(v, got) and any(i == j and same_value(w, want) for i, w in observed):
            return j, "a neighbouring field"
    return None


def near_copy_signals(steps: Sequence[Step]) -> list[Signal]:
    """A call argument that nothing observed holds, but that is a near-copy of a value read.

    Without a plan to compare against: the value was not made up from
    nothing (``grounding_signals``) -- it is almost a value a tool returned
    (digits transposed, off by one, truncated, one character changed; see
    ``near_copy``), so the agent misread it (perception). Blamed on the model
    turn that made the call; the evidence names the read. Strings of
    ``MIN_STR``+ characters and numbers of 3+ digits only, so small values
    that are close by chance are not flagged.
    """
    out: list[Signal] = []
    observed: list[tuple[int, Any]] = []
    text = ""
    for s in steps:
        if s.kind == "tool":
            args = _args(s)
            if isinstance(args, dict):
                for k, got in args.items():
                    if not _distinctive(got) or re.search(
                        r"(?<![\w.])" + re.escape(str(got)) + r"(?![\w])", text
                    ):
                        continue
                    turn = actor_before(steps, s.index)
                    hit = next(
                        (
                            (j, v, h)
                            for j, v in reversed(observed)
                            if j < turn and (h := near_copy(got, v))
                        ),
                        None,
                    )
                    if hit is not None:
                        j, v, how = hit
                        out.append(
                            Signal(
                                "near_copy_of_observed",
                                s.index,
                                "perception",
                                0.75,
                                f"{s.tool_name}.{k}={str(got)[:40]} is a near-copy ({how}) of "
                                f"{str(v)[:40]} read at step {j}",
                                turn,
                            )
                        )
                        break
        if s.is_observation:
            observed += [(s.index, v) for v in observed_leaves(s.text)]
        if s.kind not in ("llm", "agent"):  # a turn's output holds the call; an agent's, the end
            text += " " + s.input + " " + s.text
        else:
            text += " " + s.input
    return out + _answer_near_copies(steps)


def _answer_near_copies(steps: Sequence[Step]) -> list[Signal]:
    """The final answer quotes a near-copy of a value of a structured result it read.

    Only the last model turn, and only values of JSON results (fields: an
    amount, an IBAN, a room name), so free text is never compared word by
    word. A value the answer quotes exactly, or that appeared anywhere
    before, is not a misread.
    """
    last = next((s for s in reversed(steps) if s.kind == "llm"), None)
    if last is None:
        return []
    answer = _CODE_BLOCK.sub(" ", last.output)[:2000]
    # everything said or read before the answer; an enclosing agent span's output is the
    # answer itself (written when the run ends), so only its input counts
    before = " ".join(
        (s.input + " " + s.text) for s in steps[: last.index] if s.kind not in ("llm", "agent")
    ) + " ".join(s.input for s in steps[: last.index + 1] if s.kind in ("llm", "agent"))
    for s in reversed(steps[: last.index]):
        if not s.is_observation or not s.text.startswith(("{", "[")):
            continue
        for v in dict.fromkeys(observed_leaves(s.text)):
            how, quoted = _quoted_near_copy(answer, v, before)
            if how:
                return [
                    Signal(
                        "near_copy_of_observed",
                        last.index,
                        "perception",
                        0.75,
                        f"the answer's {quoted[:40]!r} is a near-copy ({how}) of "
                        f"{str(v)[:40]!r} read at step {s.index}",
                    )
                ]
    return []


def _quoted_near_copy(answer: str, v: Any, before: str) -> tuple[str, str]:
    """``(how, quoted)`` when ``answer`` holds a near-copy of ``v`` but not ``v`` itself."""
    if isinstance(v, str):
        if len(v) < MIN_STR or v in answer:
            return "", ""
        for k in range(1, min(MAX_CUT, len(v) // 2) + 1):  # truncated
            cut = v[:-k]
            alone = [  # occurrences before that are not just the start of the full value
                m
                for m in re.finditer(re.escape(cut), before)
                if not before.startswith(v, m.start())
            ]
            if re.search(re.escape(cut) + r"(?![\w])", answer) and not alone:
                return "truncated", cut
        n = len(v)
        for i in range(0, len(answer) - n + 1):
            w = answer[i : i + n]
            if w[0] in v[:2] and (how := near_copy(w, v)) and w not in before:
                return how, w
        return "", ""
    for m in re.finditer(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])", answer):
        token = m.group().replace(",", "")
        if len(token.replace(".", "")) < 2 or re.search(
            r"(?<![\w.])" + re.escape(token) + r"(?![\w])", before.replace(",", "")
        ):
            continue
        how = near_copy(float(token), v)
        if how:
            return how, m.group()
    return "", ""


def _distinctive(v: Any) -> bool:
    if isinstance(v, str):
        return len(v) >= MIN_STR
    return is_number(v) and len(str(abs(v)).replace(".", "").strip("0")) >= 3


def verify_signals(steps: Sequence[Step]) -> list[Signal]:
    """A call left unchecked in a trace whose other calls were checked by a verifier.

    Only where the trace shows a verifier at all (spans with
    ``flywheel.seam=verifier`` or named ``verify``, or a run that declares one
    with ``flywheel.seam.verifier``): skipping it is then a choice, blamed on
    the turn that made the call.
    """

    def is_check(s: Step) -> bool:
        return s.attributes.get("flywheel.seam") == "verifier" or s.span_name == "verify"

    declared = any(
        s.attributes.get("flywheel.seam.verifier", "") not in ("", "none", "off") for s in steps
    )
    if not declared and not any(is_check(s) for s in steps):
        return []
    out: list[Signal] = []
    for s in steps:
        if s.kind != "tool" or _failed(s):
            continue
        nxt = next(
            (t for t in steps[s.index + 1 :] if t.kind in ("tool", "llm") or is_check(t)), None
        )
        if nxt is None or not is_check(nxt):
            out.append(
                Signal(
                    "unverified_call",
                    s.index,
                    "verification",
                    0.5,
                    f"{s.tool_name} was not checked; other calls were",
                    actor_before(steps, s.index),
                )
            )
    return out


_GIVE_UP = re.compile(
    r"could ?n[o']t find|can ?n[o']t find|unable to (?:find|locate|determine)|"
    r"\(not sure\)|no (?:relevant )?information (?:was )?found",
    re.IGNORECASE,
)


def giveup_signals(steps: Sequence[Step]) -> list[Signal]:
    """A final answer that gives up although the reads it relied on succeeded.

    The state was there and was returned; the agent did not read it
    (perception). Only the last model turn is considered.
    """
    last = next((s for s in reversed(steps) if s.kind == "llm"), None)
    if last is None or not _GIVE_UP.search(last.text[:2000]):
        return []
    reads = [
        s
        for s in steps[: last.index]
        if s.is_observation
        and not _failed(s)
        and s.text.strip() not in ("", "null", "[]", "{}", '""')
    ]
    if not reads:
        return []
    return [
        Signal(
            "gave_up_despite_results",
            last.index,
            "perception",
            0.6,
            f"final answer gives up after {len(reads)} successful read(s)",
        )
    ]


def action_signals(steps: Sequence[Step]) -> list[Signal]:
    """The first step that acted (code or a tool call): a weak prior for the decisive step.

    With no stronger evidence, the first concrete action is where a wrong
    approach is committed; later steps mostly execute and echo it.
    """
    for s in steps:
        if s.is_observation or _NO_ACTION.search(s.text[:200]):
            continue
        if s.acts:
            return [
                Signal(
                    "first_action",
                    s.index,
                    "planning",
                    0.2,
                    "first concrete action (code or tool call)",
                )
            ]
    for s in steps[1:]:  # nobody acted: the first contribution after the task set the course
        if not s.is_observation and not _NO_ACTION.search(s.text[:200]) and s.text.strip():
            return [
                Signal(
                    "first_contribution",
                    s.index,
                    "planning",
                    0.1,
                    "first contribution; no step acted",
                )
            ]
    return []


def all_signals(
    steps: Sequence[Step], provenance: Sequence[Mapping[str, Any]] = ()
) -> list[Signal]:
    """Every deterministic signal of a trace, in step order."""
    sig = (
        error_signals(steps)
        + retry_signals(steps)
        + provenance_signals(steps, provenance)
        + plan_signals(steps)
        + near_copy_signals(steps)
        + verify_signals(steps)
        + write_check_signals(steps)
        + claim_signals(steps)
        + grounding_signals(steps)
        + giveup_signals(steps)
        + action_signals(steps)
    )
    return sorted(sig, key=lambda g: (g.index, -g.weight))
