"""The importer's framework adapters: framework phrases in, generic step fields out.

Hand-written messages in the shape of each framework's logs (no real log is
read). What an adapter turns a message into is what the signals see, so the
framework's words (``exitcode:``, ``TERMINATE``, ``Updated Ledger``, ``Next
speaker``) must end up as status, kind and ``flywheel.*`` attributes.
"""

from __future__ import annotations

import json

from flywheel.attribution import speaker_of
from flywheel.attribution._formats import ADAPTERS, adapter_for


def names(history: list[dict[str, str]]) -> str:
    return adapter_for(history).name


AUTOGEN = [
    {"name": "Planner", "role": "assistant", "content": "# Task\nCount the rows."},
    {
        "name": "Computer_terminal",
        "role": "user",
        "content": "There is no code from the last 1 message for me to execute. Group chat ...",
    },
    {"name": "Coder", "role": "user", "content": "Here:\n```python\nprint(len(rows))\n```"},
    {
        "name": "Computer_terminal",
        "role": "user",
        "content": "exitcode: 1 (execution failed)\nCode output: "
        "Traceback (most recent call last):\n"
        "  File \"x.py\", line 1, in <module>\nNameError: name 'rows' is not defined\n",
    },
    {"name": "Checker", "role": "user", "content": "It is 12 rows.\n\nTERMINATE"},
]


def test_autogen_executor_runs_become_tool_calls_with_their_outcome() -> None:
    a = adapter_for(AUTOGEN)
    assert a.name == "autogen-groupchat"
    notice, run, end = a.message(AUTOGEN, 1), a.message(AUTOGEN, 3), a.message(AUTOGEN, 4)
    assert notice.kind == "other" and notice.attributes == {"flywheel.message.notice": "true"}
    assert run.kind == "tool" and run.status == "error"
    assert run.error == "NameError: name 'rows' is not defined"
    assert run.arguments == "print(len(rows))"  # the code it ran: the nearest earlier code
    assert run.result.startswith("Traceback")
    assert end.said == "It is 12 rows." and end.attributes["flywheel.message.ends_run"] == "true"
    ok = [
        *AUTOGEN[:3],
        {
            "name": "Computer_terminal",
            "content": "exitcode: 0 (execution succeeded)\nCode output: 12\n",
        },
    ]
    assert (
        adapter_for(ok).message(ok, 3).status == "ok"
        and adapter_for(ok).message(ok, 3).result.strip() == "12"
    )


LEDGER = {
    "is_request_satisfied": {"reason": "Not yet.", "answer": False},
    "is_in_loop": {"reason": "Scrolling the same page again.", "answer": True},
    "is_progress_being_made": {"reason": "No new information.", "answer": False},
    "next_speaker": {"reason": "-", "answer": "WebSurfer"},
}
MAGENTIC = [
    {"role": "human", "content": "Find the opening hours."},
    {"role": "Orchestrator (thought)", "content": "Updated Ledger:\n" + json.dumps(LEDGER)},
    {"role": "Orchestrator (-> WebSurfer)", "content": "Search for the hours."},
    {"role": "Orchestrator (thought)", "content": "Next speaker WebSurfer"},
    {
        "role": "WebSurfer",
        "content": "I typed 'hours' into '0 characters out of 2000'.\n\nHere is a "
        "screenshot of [Search](https://www.bing.com). Open 9-17.",
    },
    {
        "role": "ComputerTerminal",
        "content": "The script ran, then exited with Unix exit code: 1\n"
        "Its output was:\nKeyError: 'h'",
    },
    {"role": "Orchestrator (termination condition)", "content": "FINAL ANSWER: 9 to 5"},
]


def test_magentic_one_ledgers_routing_pages_and_terminal() -> None:
    a = adapter_for(MAGENTIC)
    assert a.name == "magentic-one"
    review = a.message(MAGENTIC, 1)
    assert review.kind == "other" and review.said == ""
    assert review.attributes["flywheel.review.in_loop"] == "true"
    assert review.attributes["flywheel.review.progress"] == "false"
    assert "Scrolling the same page" in review.attributes["flywheel.review.reason"]
    assert a.message(MAGENTIC, 3).attributes == {"flywheel.message.notice": "true"}
    surf = a.message(MAGENTIC, 4)
    assert surf.said == "I typed 'hours' into '0 characters out of 2000'."
    assert (
        surf.observed.startswith("Here is a screenshot")
        and surf.attributes["flywheel.message.acted"] == "true"
    )
    term = a.message(MAGENTIC, 5)
    assert (term.kind, term.status, term.error) == ("tool", "error", "KeyError: 'h'")
    end = a.message(MAGENTIC, 6)
    assert (end.speaker, end.channel) == ("Orchestrator", "termination condition")
    assert end.attributes["flywheel.message.ends_run"] == "true"
    # the runner's lines in the termination message are not the Orchestrator's words
    stopped = [
        *MAGENTIC[:-1],
        {
            "role": "Orchestrator (termination condition)",
            "content": "Max time (1500s) reached.\n  response = await client.create(messages)\n"
            "FINAL ANSWER: 9 to 5\nSCENARIO.PY COMPLETE !#!#\nRUN.SH COMPLETE !#!#",
        },
    ]
    assert a.message(stopped, 6).said == "FINAL ANSWER: 9 to 5"


def test_plain_messages_are_read_as_words_and_the_speaker_is_cleaned() -> None:
    plain = [
        {"role": "user", "content": "hi"},
        {"name": "Helper (draft)", "content": "exitcode: 1"},
    ]
    assert names(plain) == "messages" and ADAPTERS[-1].name == "messages"
    m = adapter_for(plain).message(plain, 1)
    assert (m.kind, m.status, m.said, m.speaker, m.channel) == (
        "llm",
        "",
        "exitcode: 1",
        "Helper",
        "draft",
    )
    assert speaker_of({"role": "Orchestrator (-> WebSurfer)"}) == ("Orchestrator", "-> WebSurfer")


def test_autogen_code_in_a_language_it_cannot_run_is_an_invalid_argument() -> None:
    h = [
        {"name": "Coder", "content": '```json\n{"a": 1}\n```'},
        {
            "name": "Computer_terminal",
            "content": "exitcode: 1 (execution failed)\nCode output: \nunknown language json",
        },
    ]
    m = adapter_for(h).message(h, 1)
    assert m.status == "error" and m.error.startswith("invalid argument: unknown language json")
