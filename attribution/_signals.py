"""Deterministic failure signals over the steps of one trace.

Each signal is cheap, explainable, names the step where it shows and the step
it blames, and carries the category its evidence supports: errors (what kind
of error says whose fault it was), retries without change, arguments from
stale or untrusted sources (argument provenance), placeholder arguments,
departures from a recalled plan, writes without a later check, completion
claims without a successful check, a supervisor's verdict that the run made no
progress, giving up despite good reads, grounding (``_grounding``: facts
nobody observed, misread values) and the step taking the task on working on another
problem (``_request``). Signals read generic step fields only
(``_steps``); a framework's own phrases are turned into those fields by its
importer adapter (``_formats``). Nothing here reads evaluation labels.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from typing import Any

from flywheel.values import near_copy, observed_leaves, same_value

from ._grounding import near_copy_signals, ungrounded_fact_signals
from ._request import drift_signals
from ._steps import TRUE, Signal, Step, actor_before, affirms, call_arguments

#: A tool output that reports an error although the span was not marked failed: it starts
#: by saying so (``Error: ...``), or it ends in a Python traceback (the header, then the
#: exception as the last line). A traceback quoted in the middle of a page is not the call's.
_SAYS_ERROR = re.compile(r"\A\s*(?:error|exception)\b", re.IGNORECASE)
_TRACEBACK_HEAD = "Traceback (most recent call last)"
_EXCEPTION_LINE = re.compile(r"^\s*(?:[\w.]+\.)?\w*(?:Error|Exception)\b:?.*$")
_BUDGET = re.compile(
    r"budget\s*(?:exhausted|exceeded|hit)|budgetexhausted|max(?:imum)?[_ ]turns"
    r"(?:\s+(?:reached|exceeded|exhausted))",
    re.IGNORECASE,
)
#: A Python (or network stack) exception name in an error message; the last one is the
#: exception the error ended in (a traceback's final line).
_EXCEPTION_NAME = re.compile(r"(?<![\w])(?:[\w]+\.)*(\w+(?:Error|Exception|Timeout|Refused))\b")
#: Whose fault an exception is, by its standard name. Names of the language and of the
#: common network stacks (socket, urllib3/requests/httpx timeouts), not of any framework.
_EXCEPTION_CLASSES: tuple[tuple[str, str, float, re.Pattern[str]], ...] = (
    (
        "environment_error",
        "environment_caused",
        0.55,
        re.compile(
            r"(?:Timeout|Connection|ConnectionRefused|ConnectionReset|ConnectionAborted|"
            r"BrokenPipe|ReadTimeout|ConnectTimeout|Connect|Proxy|RemoteDisconnected|"
            r"ServiceUnavailable|TooManyRequests|RateLimit)(?:Error|Exception)?|\w*Timeout|"
            r"gaierror",
        ),
    ),
    (
        "call_refused",
        "execution",
        0.55,
        re.compile(r"Permission(?:Error|Denied\w*)|\w*Forbidden\w*"),
    ),
    (
        "bad_call",
        "argument_generation",
        0.6,
        re.compile(
            r"(?:Syntax|Indentation|Name|Type|Attribute|Key|Index|Value|Import|ModuleNotFound|"
            r"UnboundLocal|ZeroDivision|JSONDecode|Assertion|FileNotFound|Validation)Error",
        ),
    ),
)
#: An HTTP status code said as one: after ``HTTP``, ``status`` or ``code``, or followed by its
#: standard reason phrase (RFC 9110, from ``http.HTTPStatus``). A bare number is not one.
_REASONS = "|".join(re.escape(h.phrase) for h in HTTPStatus if h.value >= 400)
_HTTP_STATUS = re.compile(
    r"(?:\bHTTP(?:/[\d.]+)?|\bstatus(?:[ _]code)?|\bcode|\berror|\bresponse)\W{0,3}([45]\d\d)\b"
    r"|\b([45]\d\d)\b\W{0,3}(?:" + _REASONS + r"|Client Error|Server Error)",
    re.IGNORECASE,
)
#: Whose fault an error is by HTTP status (RFC 9110 semantics): a server-side or throttling
#: status is the environment's, 401/403 a refusal, 400/422 a request the caller got wrong.
_STATUS_CLASSES: dict[int, tuple[str, str, float]] = {
    **{
        c: ("environment_error", "environment_caused", 0.55) for c in (408, 429, 500, 502, 503, 504)
    },
    401: ("call_refused", "execution", 0.55),
    403: ("call_refused", "execution", 0.55),
    400: ("bad_call", "argument_generation", 0.6),
    422: ("bad_call", "argument_generation", 0.6),
}
#: Whose fault an error is from what its words say, when it names no exception or status.
ERROR_CLASSES: tuple[tuple[str, str, float, re.Pattern[str]], ...] = (
    (
        "environment_error",
        "environment_caused",
        0.55,
        re.compile(
            r"timed out|\btime-?outs?\b|service unavailable|"
            r"connection (?:refused|reset|error|aborted)|"
            r"temporarily unavailable|rate.?limit(?:ed| exceeded)|too many requests|"
            r"network is unreachable|name resolution",
            re.IGNORECASE,
        ),
    ),
    (
        "call_refused",
        "execution",
        0.55,
        re.compile(
            r"unauthori[sz]ed|forbidden|permission denied|access denied|not allowed|"
            r"quota (?:exceeded|exhausted)",
            re.IGNORECASE,
        ),
    ),
    (
        "bad_call",
        "argument_generation",
        0.6,
        re.compile(
            r"bad request|invalid (?:argument|parameter|input|value)|validation error|"
            r"is not defined|missing \d* ?required",
            re.IGNORECASE,
        ),
    ),
)


def _failed(step: Step) -> str:
    """The failure text of a step ('' when it did not fail)."""
    if step.status == "error":
        return step.error or "status error"
    if step.is_observation and _reports_error(step.text):
        return step.text.strip()[:200]
    return ""


def _reports_error(text: str) -> bool:
    """Whether a result says it is an error, or ends in a traceback (not one it quotes)."""
    if _SAYS_ERROR.match(text[:200]):
        return True
    if _TRACEBACK_HEAD not in text:
        return False
    lines = [ln for ln in text.rstrip().splitlines()[-3:] if ln.strip()]
    return bool(lines) and _EXCEPTION_LINE.match(lines[-1]) is not None


#: Weight of an error that a later call of the same tool got past.
REPAIRED_WEIGHT = 0.3


def _repaired_at(steps: Sequence[Step], failed: Step) -> int | None:
    """The first later call of the same tool that succeeded (the run got past the error)."""
    if not failed.is_observation:
        return None
    for t in steps[failed.index + 1 :]:
        if (
            t.kind == "tool"
            and t.tool_name == failed.tool_name
            and not _failed(t)
            and t.text.strip()
        ):
            return t.index
    return None


def classify_error(message: str) -> tuple[str, str, float]:
    """``(signal kind, category, weight)`` of an error message.

    The exception the error ended in decides first (its standard name: a
    timeout or connection error is the environment's, a permission error a
    refusal, a name/type/key/syntax error a call the agent got wrong), then an
    HTTP status said as one (``HTTP 503``, ``429 Too Many Requests``; a bare
    number in the message is data, not a status), then what the words say;
    anything else is an execution error.
    """
    names = _EXCEPTION_NAME.findall(message)
    for name in reversed(names):
        for kind, category, weight, rx in _EXCEPTION_CLASSES:
            if rx.fullmatch(name):
                return kind, category, weight
    for m in _HTTP_STATUS.finditer(message):
        hit = _STATUS_CLASSES.get(int(m.group(1) or m.group(2)))
        if hit:
            return hit
    for kind, category, weight, rx in ERROR_CLASSES:
        if rx.search(message):
            return kind, category, weight
    return "error", "execution", 0.5


# -- signals -----------------------------------------------------------------------------
def error_signals(steps: Sequence[Step]) -> list[Signal]:
    """Failed steps: environment faults, budget hits, execution errors blamed on their caller."""
    out: list[Signal] = []
    for s in steps:
        msg = _failed(s)
        if not msg:
            continue
        blob = f"{msg} {s.attributes.get('error.type', '')}"
        if _BUDGET.search(blob) or s.attributes.get("flywheel.budget.exhausted") in TRUE:
            out.append(Signal("budget_hit", s.index, "budget_exhaustion", 0.95, msg[:200]))
            continue
        kind, category, weight = classify_error(blob)
        fixed = _repaired_at(steps, s)
        if (
            fixed is not None
        ):  # a later call of the same tool went through: a concern, not the failure
            kind, weight, msg = (
                f"{kind}_repaired",
                REPAIRED_WEIGHT,
                f"{msg[:160]} (repaired at step {fixed})",
            )
        if category == "environment_caused":
            out.append(Signal(kind, s.index, category, weight, msg[:200]))
        else:
            cause = actor_before(steps, s.index) if s.is_observation else s.index
            out.append(Signal(kind, s.index, category, weight, msg[:200], cause))
    for s in steps:  # budget hits recorded on spans that did not fail
        if s.attributes.get("flywheel.budget.exhausted") in TRUE and not _failed(s):
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

    A value is stale when the same call (tool and arguments) was read again
    between the source and the use and returned something else. An argument
    to a sensitive tool taken from untrusted content (provenance flag) is
    blamed on the read it came from: the agent believed it (perception),
    whatever it did next -- strong evidence (0.85) when the run declares the
    attack succeeded (``flywheel.outcome.security``), moderate (0.6) otherwise.
    """
    by_span = {s.span_id: s for s in steps}
    # an untrusted flow is strong evidence where the run is known to have been attacked
    # (the injection succeeded); elsewhere it is a value read and used, often on purpose
    attacked = any(s.attributes.get("flywheel.outcome.security") in TRUE for s in steps)
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
                if s.tool_name == src.tool_name
                and s.arguments == src.arguments
                and s.is_observation
                and s.text != src.text
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
                    0.85 if attacked else 0.6,
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


#: A claim that the work is done or checked, in an agent's own words.
_CLAIM = re.compile(
    r"\b(?:task (?:is )?(?:complete|completed|done|solved)|successfully (?:completed|done|sent|"
    r"transferred|booked|updated)|has been (?:verified|confirmed|completed)|verified|confirmed|"
    r"final answer|the answer is)\b",
    re.IGNORECASE,
)


def claim_signals(steps: Sequence[Step]) -> list[Signal]:
    """A completion claim after a failure that nothing later repaired.

    A claim is a completion or verification statement in the agent's own
    words, or a step that declares the run finished (``ends_run``). The claim
    is where the failure surfaced; it names the unrepaired failure.
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
        if last_fail is not None and s.speaks and (affirms(_CLAIM, s.own_words) or s.ends_run):
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


#: Values that stand for a value nobody filled in: template markers (``<video_id>``,
#: ``<your name>``, ``YOUR_API_KEY``), RFC 2606 example domains, ``path/to/``, filler words.
#: A marker is one identifier of two or more words joined by ``_``/``-`` in angle brackets,
#: or one that starts with your/insert/enter/replace: a one-word tag (``<div>``, ``<T>``)
#: is markup or a type, and ``a < b and c > d`` is a comparison. Filler words count as a
#: value (a quoted string that starts with one, or the whole argument), not as a name or a
#: comment in code (``dummy_df = ...``, ``# placeholder for the result``).
_PLACEHOLDER = re.compile(
    r"<(?:[a-z]+(?:[_-][a-z]+)+|(?:your|insert|enter|replace)[ _-][a-z]+(?:[ _-][a-z]+)*)>|"
    r"\b(?:YOUR|INSERT|ENTER|REPLACE)_[A-Z_]+\b|\byour[_-](?:api[_-]?)?(?:key|token|id|name|file|path|url)\b|"
    r"\bexample\.(?:com|org|net)\b|\bpath/to/|"
    r"(?:[\"']|\A)\s*(?:placeholder|dummy|lorem ipsum|x{4,})\b",
    re.IGNORECASE,
)


def placeholder_signals(steps: Sequence[Step]) -> list[Signal]:
    """A call made with a placeholder value instead of a real one (argument generation).

    Blamed on the turn that made the call. A placeholder the task or an
    earlier observation already holds is somebody else's text, not the call's.
    """
    out: list[Signal] = []
    seen = ""
    for s in steps:
        if s.kind == "tool" and s.arguments:
            m = next(
                (
                    m
                    for m in _PLACEHOLDER.finditer(s.arguments)
                    if m.group().strip("\"' ").lower() not in seen
                ),
                None,
            )
            if m is not None:
                out.append(
                    Signal(
                        "placeholder_argument",
                        s.index,
                        "argument_generation",
                        0.6,
                        f"{s.tool_name or 'the call'} was given {m.group().strip()[:40]!r}, "
                        "a placeholder",
                        actor_before(steps, s.index),
                    )
                )
        if s.is_observation or not s.speaks or s.index == 0:  # results, and the task itself
            seen += " " + (s.input + " " + s.text).lower()
        else:
            seen += " " + s.input.lower()
    return out


#: What a call returns when it found nothing.
_EMPTY = frozenset({"", "[]", "{}", "null", "none", '""', "''", "nan", "()", "set()"})


def empty_result_signals(steps: Sequence[Step]) -> list[Signal]:
    """A call that succeeded and returned nothing: it asked for something that is not there.

    In a failed run that is a call whose arguments (query, code, path) did not
    reach the state the agent needed (argument generation), blamed on the turn
    that made it. Moderate evidence: an empty answer can also be the truth.
    """
    out: list[Signal] = []
    for s in steps:
        if s.kind != "tool" or _failed(s):
            continue
        text = s.text.strip()
        if text.lower() in _EMPTY or re.fullmatch(r"\[\s*\]|\{\s*\}", text):
            out.append(
                Signal(
                    "empty_result",
                    s.index,
                    "argument_generation",
                    0.5,
                    f"{s.tool_name or 'the call'} succeeded and returned nothing "
                    f"({text[:20] or 'empty'})",
                    actor_before(steps, s.index),
                )
            )
    return out


def review_signals(steps: Sequence[Step]) -> list[Signal]:
    """A supervising agent's verdict that the run stopped progressing or is looping.

    Reviews are generic attributes an importer adapter or an instrumentation
    sets (``flywheel.review.progress`` / ``flywheel.review.in_loop``). The first
    negative verdict blames the step it reviewed: the latest contribution of
    another agent before it (the reviewer does not review itself). Looping is
    a failure the agent did not recover from; no progress, a route that does
    not reach the goal.
    """
    for r in steps:
        progress = r.attributes.get("flywheel.review.progress")
        loop = r.attributes.get("flywheel.review.in_loop")
        if progress not in ("false", "False", "0") and loop not in TRUE:
            continue
        j = next(
            (
                t.index
                for t in reversed(steps[: r.index])
                if t.agent != r.agent and (t.speaks or t.is_observation)
            ),
            None,
        )
        if j is None:
            return []
        j = actor_before(steps, j) if steps[j].is_observation else j
        looping = loop in TRUE
        return [
            Signal(
                "review_no_progress",
                r.index,
                "recovery" if looping else "planning",
                0.5,
                f"{r.agent or 'a reviewer'} judged the run "
                + ("in a loop" if looping else "not progressing")
                + f" after step {j}: {r.attributes.get('flywheel.review.reason', '')[:120]}",
                j,
            )
        ]
    return []


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
            args = call_arguments(s)
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
                    0.7,
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
    last = next((s for s in reversed(steps) if s.speaks), None)
    if last is None or not _GIVE_UP.search(last.own_words[:2000]):
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
            0.7,
            f"final answer gives up after {len(reads)} successful read(s)",
        )
    ]


def action_signals(steps: Sequence[Step]) -> list[Signal]:
    """The first step that acted (code or a tool call): a weak prior for the decisive step.

    With no stronger evidence, the first concrete action is where a wrong
    approach is committed; later steps mostly execute and echo it. Priors are
    not evidence of a failure and support no category.
    """
    for s in steps:
        if s.speaks and s.acts:
            return [
                Signal(
                    "first_action", s.index, "", 0.2, "first concrete action (code or tool call)"
                )
            ]
    for s in steps[1:]:  # nobody acted: the first contribution after the task set the course
        if s.speaks and s.said.strip():
            return [
                Signal("first_contribution", s.index, "", 0.1, "first contribution; no step acted")
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
        + placeholder_signals(steps)
        + empty_result_signals(steps)
        + review_signals(steps)
        + ungrounded_fact_signals(steps)
        + giveup_signals(steps)
        + drift_signals(steps)
        + action_signals(steps)
    )
    return sorted(sig, key=lambda g: (g.index, -g.weight))
