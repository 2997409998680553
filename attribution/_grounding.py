"""Grounding: facts an agent states that nothing it observed holds, and misread values.

**Ungrounded facts.** A fact here is a figure (three or more digits) that an
agent *asserts in its own words* -- not in what it quotes (code, quoted UI
text such as a search box labelled ``0 characters out of 2000``, links,
paths), not in a page or tool output it was shown, not in a runtime notice --
and that appears in nothing the run had seen before: the task, earlier
messages, tool results, the step's own prompt or page. It counts only when the
run *uses* it: a later step repeats it in its own words or passes it to a
call, so the figure went into a decision or the answer. A figure that is the
sum of some values of one field of a structured result is derived, not made
up (``_aggregate_of``). The first message of a run, when nothing prompted it,
is the task itself: what it states is given, not claimed.

**Near-copies (misreads).** A value almost equal to one a tool returned (digits
transposed, off by one, truncated, one character changed; ``near_copy``) was
read wrong: see ``near_copy_signals``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from flywheel.values import MAX_CUT, MIN_STR, is_number, near_copy, observed_leaves

from ._steps import Signal, Step, actor_before, call_arguments, figures, has_token, without_code


def _heard(s: Step) -> str:
    """What a step makes known when it starts: its input (prompt, page) and its call."""
    return " ".join((s.input, s.arguments)).replace(",", "")


def _told(s: Step) -> str:
    """What a step makes known when it ends: its output or result.

    An agent span's output is the run's answer, written when the run ends.
    """
    return "" if s.kind == "agent" else (s.output or s.result or "").replace(",", "")


def _newly_ended(steps: Sequence[Step]) -> list[list[int]]:
    """For each step, the steps that ended after the previous step started and before it did.

    By time when every step has one, else by index (a step has ended when the
    next one starts). The output of a span that encloses others (a workflow, a
    graph node) is written when it ends, after its children: ordering by end
    time keeps it out of what its children had seen. Linear after sorting.
    """
    if not all(s.start_ns >= 0 for s in steps):
        return [[s.index - 1] if s.index else [] for s in steps]
    by_end = sorted(steps, key=lambda t: (t.end_ns, t.index))
    out: list[list[int]] = [[] for _ in steps]
    k = 0
    for s in sorted(steps, key=lambda t: (t.start_ns, t.index)):
        while k < len(by_end) and by_end[k].end_ns < s.start_ns:
            out[s.index].append(by_end[k].index)
            k += 1
    return out


def _uses(s: Step) -> str:
    """Where a step can use a figure: its own words, or the arguments of the call it makes."""
    if s.kind == "tool":
        return s.arguments.replace(",", "")
    return s.own_words.replace(",", "")


def _takes_up(claimant: Step, t: Step, answer: int) -> bool:
    """Whether a later step's repeat of a figure is a use of the claim.

    A call passing it, the run's answer, or another agent's words: the claim
    went into a decision. The claimant repeating itself is not a use (an
    action template said every turn, a label it copied again).
    """
    return t.kind == "tool" or t.index == answer or (t.agent != claimant.agent and t.speaks)


def _answer_index(steps: Sequence[Step]) -> int:
    """The run's answer: the first step declaring the run finished, else the last that speaks."""
    end = next((s.index for s in steps if s.ends_run and s.own_words.strip()), None)
    if end is not None:
        return end
    return next((s.index for s in reversed(steps) if s.speaks and s.own_words.strip()), -1)


def ungrounded_fact_signals(steps: Sequence[Step]) -> list[Signal]:
    """Figures an agent asserted that nothing seen before held and that the run used.

    Used: a later step repeats the figure in its own words or passes it to a
    call (the asserting turn's own call included: it acts on the figure), or
    the figure is in the run's answer. Weight 0.75 when an earlier step's
    figure is carried into the answer, else 0.6 (a figure made up in the answer
    itself shows where the failure surfaced: the guess, not what caused it). The signal sits on
    the asserting step (perception: it stated state it had not read); the evidence names the
    figures and their use.
    """
    out: list[Signal] = []
    seen = ""
    fields: dict[str, list[float]] = {}  # numeric fields of structured results, by key
    answer = _answer_index(steps)
    ended = _newly_ended(steps)
    for s in steps:
        seen += " " + _heard(s)  # a turn reads its prompt / page before it speaks
        seen += " " + " ".join(_told(steps[j]) for j in ended[s.index])
        if s.speaks and (s.index > 0 or s.input):  # a first message without a prompt is the task
            new = [
                n
                for n in figures(s.own_words)
                if not has_token(n, seen)
                and not _aggregate_of(n, fields)
                and not _scaled_from(n, figures(seen, digits=1))
            ]
            used: list[tuple[str, int]] = []
            for n in new:
                j = next(
                    (
                        t.index
                        for t in steps[s.index + 1 :]
                        if has_token(n, _uses(t)) and _takes_up(s, t, answer)
                    ),
                    None,
                )
                if j is not None or s.index == answer:
                    used.append((n, s.index if j is None else j))
            if used:
                # stated before the answer and carried into it: decisive; stated in the
                # answer itself, the answer is where a failure surfaced (a guess), not its cause
                final = s.index != answer and any(
                    answer >= 0
                    and (
                        has_token(n, _uses(steps[answer]))
                        or any(_scaled_from(m, [n]) for m in figures(_uses(steps[answer])))
                    )
                    for n, _ in used
                )
                out.append(
                    Signal(
                        "ungrounded_fact",
                        s.index,
                        "perception",
                        0.75 if final else 0.6,
                        "stated, never observed, used: "
                        + ", ".join(f"{n} (step {j})" for n, j in used[:6])
                        + (" -- in the answer" if final else ""),
                    )
                )
        if s.is_observation:
            _collect_fields(s.text, fields)
    return out


#: Small counts a figure may be multiplied or divided by (two tickets, per person, a dozen).
_COUNTS = range(2, 13)


def _scaled_from(figure: str, known: Sequence[str]) -> bool:
    """Whether ``figure`` is a known figure times or divided by a small count (to the cent).

    Two tickets at 725 make 1450: derived from what was observed, not made up.
    """
    try:
        target = float(figure)
    except ValueError:
        return False
    for k in known:
        try:
            x = float(k)
        except ValueError:
            continue
        if x and any(
            abs(target - x * c) < 0.005 or abs(target - round(x / c, 2)) < 0.005 for c in _COUNTS
        ):
            return True
    return False


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
            args = call_arguments(s)
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
    last = next((s for s in reversed(steps) if s.speaks), None)
    if last is None:
        return []
    answer = without_code(last.output)[:2000]
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
