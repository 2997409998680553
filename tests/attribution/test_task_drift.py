"""The understanding finding: the step taking the task on works on another problem.

Steps are built by hand (no benchmark log is read). The finding must fire when the
step that takes the task keeps almost none of the request's terms, and must not
fire on the look-alikes: a step that quotes or paraphrases the request, a short
request reworded, later working steps in their own words, a run with no request.
"""

from __future__ import annotations

from typing import Any

from flywheel.attribution import all_signals, attribute_steps, steps_from_rows

REQUEST = (
    "Which gyms in West Virginia are within five miles by car of the Mothman Museum in "
    "Point Pleasant, not counting gymnastics centers?"
)


def msg(i: int, text: str, agent: str, **attrs: str) -> dict[str, Any]:
    return {
        "span_id": f"s{i}",
        "kind": "llm",
        "output": text,
        "agent_name": agent,
        "attributes": attrs,
    }


def run(first: str, *later: str, request: str = REQUEST) -> list[dict[str, Any]]:
    attrs = {"flywheel.run.request": request} if request else {}
    rows = [msg(0, first, "Lead", **attrs)]
    rows += [msg(i, text, "Coder" if i % 2 else "Lead") for i, text in enumerate(later, 1)]
    return rows


def drift(rows: list[dict[str, Any]]) -> list[int]:
    return [g.index for g in all_signals(steps_from_rows(rows)) if g.kind == "task_drift"]


def test_a_step_taking_on_another_problem_is_the_decisive_understanding_finding() -> None:
    rows = run(
        "Task: the script fails with exit code 1 and prints 'unknown language'. "
        "Plan: review the code, find the bug, fix it.",
        "```python\nprint('debugging')\n```",
        "Fixed.",
    )
    assert drift(rows) == [0]
    a = attribute_steps(steps_from_rows(rows), assume_failed=True)
    chosen = next(e for e in a.evidence if e["chosen"])
    got = (a.causal_index, a.agent, a.category, chosen["kind"])
    assert got == (0, "Lead", "understanding", "task_drift")


def test_a_step_quoting_the_request_is_no_finding() -> None:
    assert drift(run(f"Task: {REQUEST} Plan: search a map, then list the gyms.")) == []


def test_a_paraphrase_keeping_the_names_is_no_finding() -> None:
    # keeps gyms, West, Virginia, Mothman, Museum, Point, Pleasant, miles: well over a quarter
    rows = run(
        "Find the gyms (no gymnastics centers) a short drive, under 5 miles, from the "
        "Mothman Museum at Point Pleasant, West Virginia."
    )
    assert drift(rows) == []


def test_a_short_request_reworded_entirely_is_no_finding() -> None:
    rows = run(
        "Look up the Louvre's attendance figures for that year.",
        request="How many visitors did the Louvre have in 2019?",  # 3 terms: too few
    )
    assert drift(rows) == []


def test_later_working_steps_in_their_own_words_are_not_compared() -> None:
    rows = run(
        f"Task: {REQUEST}",
        "```python\nprint(haversine(a, b))\n```",
        "The distance computation returned 3.2; next the opening hours.",
    )
    assert drift(rows) == []


def test_without_a_request_nothing_is_compared() -> None:
    assert drift(run("Task: fix the script that prints 'unknown language'.", request="")) == []
