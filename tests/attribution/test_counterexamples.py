"""Each signal on what it must catch and on the counter-examples it must not.

Steps are built by hand (no log of any benchmark is read). The counter-examples
are the shapes that made the old grounding signal fire on nothing: quoted UI
labels and form limits, pages and tool output, echoed inputs, code, links,
runtime notices; and, for the other signals, the look-alikes of their evidence.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from flywheel.attribution import (
    UNDETERMINED,
    UNKNOWN,
    all_signals,
    attribute_steps,
    steps_from_rows,
)


def msg(i: int, text: str, agent: str = "A", *, observed: str = "", **attrs: str) -> dict[str, Any]:
    return {
        "span_id": f"s{i}",
        "kind": "llm",
        "output": text,
        "input": observed,
        "agent_name": agent,
        "attributes": attrs,
    }


def tool(
    i: int, args: Any, result: str, *, name: str = "search", status: str = "ok", error: str = ""
) -> dict[str, Any]:
    return {
        "span_id": f"s{i}",
        "kind": "tool",
        "tool_name": name,
        "arguments": json.dumps(args),
        "result": result,
        "status": status,
        "error": error,
    }


def kinds(rows: list[dict[str, Any]], kind: str) -> list[int]:
    return [g.index for g in all_signals(steps_from_rows(rows)) if g.kind == kind]


TASK = msg(0, "How many visitors did the museum have in 2019?", "user")


# -- ungrounded facts ------------------------------------------------------------------
def test_a_figure_stated_in_own_words_and_used_later_is_ungrounded() -> None:
    rows = [
        TASK,
        msg(1, "The museum had 48,213 visitors.", "Researcher"),
        msg(2, "So the answer is 48213.", "Writer"),
    ]
    assert kinds(rows, "ungrounded_fact") == [1]


@pytest.mark.parametrize(
    "said",
    [
        "I typed 'museum visitors 2019' into '0 characters out of 2000'.",  # quoted box label
        'The form says "maximum 2500 characters", so I shortened the query.',  # quoted form limit
        "I opened https://example.org/stats/48213/report and read it.",  # a link
        "I read /data/2019/48213/visitors.csv line by line.",  # a path
        "I ran:\n```python\nvisitors = 48213\nprint(visitors)\n```",  # code is not a claim
        "The tool printed `48213` for me.",  # inline code
    ],
)
def test_quoted_material_links_paths_and_code_are_not_claims(said: str) -> None:
    rows = [TASK, msg(1, said, "Surfer"), msg(2, "The figure 48213 is what we need.", "Writer")]
    assert 1 not in kinds(rows, "ungrounded_fact")


def test_page_chrome_and_tool_output_are_observations_not_claims() -> None:
    page = "Search results. 0 characters out of 2000. Viewport shows 17%. Visitors 2019: 48,213"
    rows = [
        TASK,
        msg(1, "I searched for it.", "Surfer", observed=page),
        tool(2, {"q": "museum"}, "HTTP 200, 1532 bytes, visitors=48213"),
        msg(3, "It had 48,213 visitors; the page limit was 2000 characters.", "Writer"),
    ]
    assert kinds(rows, "ungrounded_fact") == []


def test_an_echo_of_the_task_or_of_a_call_is_not_new() -> None:
    rows = [
        TASK,
        msg(1, "Looking up visitors for 2019 now.", "Researcher"),
        tool(2, {"year": 2019, "limit": 250}, '{"visitors": 48213}'),
        msg(3, "I asked the API for 2019 with a limit of 250; it returned 48213.", "Writer"),
    ]
    assert kinds(rows, "ungrounded_fact") == []


def test_a_figure_nobody_uses_is_not_flagged_but_an_answer_is_used() -> None:
    unused = [
        TASK,
        msg(1, "Fun fact: it opened in 1872.", "Researcher"),
        msg(2, "I will look the visitors up.", "Researcher"),
    ]
    assert kinds(unused, "ungrounded_fact") == []
    in_answer = [
        TASK,
        msg(1, "I will look it up.", "Researcher"),
        msg(2, "About 51,000 visitors.", "Writer"),
    ]
    assert kinds(in_answer, "ungrounded_fact") == [2]


def test_a_runtime_notice_is_neither_a_claim_nor_speech() -> None:
    notice = msg(
        1,
        "There is nothing to execute in the last 3 messages.",
        "Runner",
        **{"flywheel.message.notice": "true"},
    )
    rows = [TASK, notice, msg(2, "Please continue with step 3 of 3.", "Lead")]
    assert kinds(rows, "ungrounded_fact") == []


def test_a_total_of_a_structured_field_is_derived_not_made_up() -> None:
    rows = [
        TASK,
        tool(1, {}, json.dumps([{"month": 1, "visitors": 1200}, {"month": 2, "visitors": 1350}])),
        msg(2, "Together that makes 2550 visitors.", "Analyst"),
        msg(3, "Answer: 2550", "Writer"),
    ]
    assert kinds(rows, "ungrounded_fact") == []


# -- errors: whose fault ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("error", "kind", "category"),
    [
        ("NameError: name 'df' is not defined", "bad_call", "argument_generation"),
        ("HTTP 422: validation error on field 'date'", "bad_call", "argument_generation"),
        ("ReadTimeout: timed out after 30 s", "environment_error", "environment_caused"),
        ("HTTP 503 Service Unavailable", "environment_error", "environment_caused"),
        ("403 Forbidden", "call_refused", "execution"),
        ("the device reported a jam", "error", "execution"),
    ],
)
def test_what_an_error_says_decides_whose_fault_it_is(error: str, kind: str, category: str) -> None:
    rows = [
        TASK,
        msg(1, "Calling the tool.", "Coder"),
        tool(2, {"q": 1}, "", status="error", error=error),
    ]
    a = attribute_steps(steps_from_rows(rows))
    chosen = next(e for e in a.evidence if e["chosen"])
    assert (chosen["kind"], a.category) == (kind, category)
    if category != "environment_caused":
        assert (a.causal_index, a.agent) == (1, "Coder")  # the turn that made the call


def test_an_error_a_later_call_got_past_is_only_a_concern() -> None:
    rows = [
        TASK,
        msg(1, "Try.", "Coder"),
        tool(2, {"q": 1}, "", status="error", error="KeyError: 'x'"),
        msg(3, "Fixed.", "Coder"),
        tool(4, {"q": 2}, '{"visitors": 48213}'),
    ]
    sig = all_signals(steps_from_rows(rows))
    repaired = [g for g in sig if g.kind.endswith("_repaired")]
    assert repaired and repaired[0].weight < 0.5 and "repaired at step 4" in repaired[0].evidence


def test_framework_phrases_mean_nothing_outside_their_adapter() -> None:
    """``exitcode: 1`` and ``TERMINATE`` are AutoGen's words: no error in a plain trace."""
    rows = [
        TASK,
        msg(1, "Run it.", "Coder"),
        tool(2, {"code": "x"}, "exitcode: 1 (execution failed)"),
        msg(3, "All good. TERMINATE", "Coder"),
    ]
    sig = all_signals(steps_from_rows(rows))
    assert not any(g.kind in ("error", "bad_call", "claim_without_verification") for g in sig)


# -- placeholders, empty results ---------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        {"video": "<video_id>"},
        {"key": "YOUR_API_KEY"},
        {"url": "https://example.com/data.csv"},
        {"path": "path/to/file.csv"},
    ],
)
def test_a_placeholder_argument_is_argument_generation(args: dict[str, str]) -> None:
    rows = [TASK, msg(1, "Fetching.", "Coder"), tool(2, args, "{}")]
    a = attribute_steps(steps_from_rows(rows))
    assert kinds(rows, "placeholder_argument") == [2]
    assert a.category == "argument_generation" and a.causal_index == 1


@pytest.mark.parametrize(
    "rows",
    [
        [
            TASK,
            msg(1, "Fetching.", "Coder"),
            tool(2, {"url": "https://www.museum.org/stats/2019"}, "{}"),
        ],
        # the placeholder came with the task: it is the user's text, not a value the agent skipped
        [
            msg(0, "Summarise https://example.com/report for me.", "user"),
            msg(1, "OK.", "Coder"),
            tool(2, {"url": "https://example.com/report"}, "report text"),
        ],
        # talking about placeholders is not passing one
        [
            TASK,
            msg(1, "I will not use a placeholder like <video_id>.", "Coder"),
            tool(2, {"v": "dQw4w9WgXcQ"}, "{}"),
        ],
    ],
)
def test_real_values_and_given_placeholders_are_not_flagged(rows: list[dict[str, Any]]) -> None:
    assert kinds(rows, "placeholder_argument") == []


def test_an_empty_result_is_evidence_but_zero_and_failures_are_not() -> None:
    assert kinds([TASK, msg(1, "Query.", "C"), tool(2, {"q": 1}, "[]")], "empty_result") == [2]
    assert kinds([TASK, msg(1, "Query.", "C"), tool(2, {"q": 1}, "0")], "empty_result") == []
    failed = [TASK, msg(1, "Query.", "C"), tool(2, {"q": 1}, "", status="error", error="boom")]
    assert kinds(failed, "empty_result") == []


# -- claims, reviews, giving up -----------------------------------------------------------
def test_a_claim_after_an_unrepaired_failure_but_not_a_quoted_one_or_after_a_check() -> None:
    fail = tool(2, {"q": 1}, "", status="error", error="boom")
    claim = [TASK, msg(1, "Go.", "C"), fail, msg(3, "Task completed and verified.", "C")]
    assert kinds(claim, "claim_without_verification") == [3]
    quoted = [
        TASK,
        msg(1, "Go.", "C"),
        fail,
        msg(3, "The log says 'task completed', which is wrong.", "C"),
    ]
    assert kinds(quoted, "claim_without_verification") == []
    checked = [
        TASK,
        msg(1, "Go.", "C"),
        fail,
        tool(3, {"q": 2}, '{"ok": 1}'),
        msg(4, "Verified.", "C"),
    ]
    assert kinds(checked, "claim_without_verification") == []


def test_a_negative_review_blames_the_step_it_reviewed_and_a_positive_one_nothing() -> None:
    def review(i: int, **a: str) -> dict[str, Any]:
        return {
            "span_id": f"s{i}",
            "kind": "other",
            "agent_name": "Lead",
            "attributes": {f"flywheel.review.{k}": v for k, v in a.items()},
        }

    rows = [
        TASK,
        msg(1, "Search for it.", "Lead"),
        msg(2, "I scrolled down.", "Surfer"),
        review(3, progress="true", in_loop="false"),
        msg(4, "I scrolled again.", "Surfer"),
        review(5, progress="false", in_loop="true"),
    ]
    sig = [g for g in all_signals(steps_from_rows(rows)) if g.kind == "review_no_progress"]
    assert [(g.index, g.cause, g.category) for g in sig] == [(5, 4, "recovery")]
    assert kinds(rows[:4], "review_no_progress") == []


def test_giving_up_despite_good_reads_but_not_a_quoted_give_up() -> None:
    read = tool(1, {"q": 1}, '{"visitors": 48213}')
    assert kinds(
        [TASK, read, msg(2, "I couldn't find the number.", "W")], "gave_up_despite_results"
    ) == [2]
    quoted = msg(2, "The site said 'could not find page' but the count is 48213.", "W")
    assert kinds([TASK, read, quoted], "gave_up_despite_results") == []


# -- failure, success and abstention ---------------------------------------------------------
def test_a_trace_that_declares_success_gets_no_failure_category() -> None:
    rows = [TASK, msg(1, "It had 51,000 visitors.", "W"), msg(2, "Answer: 51000", "W")]
    rows[0]["attributes"] = {"flywheel.outcome.utility": "true"}
    a = attribute_steps(steps_from_rows(rows))
    assert not a.failed and a.category == UNDETERMINED and a.outcome == "none"
    assert any(e["kind"] == "ungrounded_fact" for e in a.evidence)  # kept, as a concern
    assert attribute_steps(steps_from_rows(rows), assume_failed=True).failed  # unless told


def test_weak_concerns_alone_do_not_make_a_failure() -> None:
    rows = [TASK, msg(1, "Writing.", "W"), tool(2, {"x": 1}, "", name="send_email")]
    a = attribute_steps(steps_from_rows(rows))
    assert not a.failed and a.category == UNDETERMINED


def test_a_declared_failure_and_a_successful_attack_are_failures() -> None:
    for attrs in ({"flywheel.outcome.utility": "false"}, {"flywheel.outcome.security": "true"}):
        rows = [dict(TASK, attributes=attrs), msg(1, "```python\nprint(1)\n```", "Coder")]
        a = attribute_steps(steps_from_rows(rows))
        assert a.failed and a.causal_index == 1


def test_weak_evidence_is_unknown_with_its_runner_ups() -> None:
    rows = [
        TASK,
        msg(1, "```python\nprint(lookup())\n```", "Coder"),
        tool(2, {"code": "print(lookup())"}, "[]"),
        msg(3, "I will try again later.", "Coder"),
    ]
    a = attribute_steps(steps_from_rows(rows), assume_failed=True)
    assert a.failed and a.causal_index == 1 and a.category == "argument_generation"
    only_prior = [
        TASK,
        msg(1, "```python\nprint(1)\n```", "Coder"),
        tool(2, {"code": "print(1)"}, "1"),
    ]
    b = attribute_steps(steps_from_rows(only_prior), assume_failed=True)
    assert b.failed and b.category == UNKNOWN and b.category_scores == []
    elsewhere = [*only_prior, msg(3, "Next.", "Coder"), tool(4, {"code": "f()"}, "[]")]
    # a model that firmly blames the first action (the shipped fit is near a tie between
    # steps 1 and 3 here, so which one it picks says nothing about abstention)
    from flywheel.attribution import prior_model

    firm = prior_model()
    firm.step_weights["first_action"] = 4.0
    c = attribute_steps(steps_from_rows(elsewhere), assume_failed=True, model=firm)
    assert c.causal_index == 1
    # evidence at another step weighs only as much as that step is likely: a runner-up
    assert c.category == UNKNOWN and [k for k, _ in c.category_scores] == ["argument_generation"]
    assert c.category_scores[0][1] < 0.5


# -- artifacts of the earlier signal code: numbers in logs, quoted pages, code, denials -------
@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ("KeyError: 503", "bad_call"),  # a key that happens to look like a status code
        ("IndexError: index 500 is out of bounds for axis 0 with size 3", "bad_call"),
        ("NameError: name 'timeout' is not defined", "bad_call"),  # a variable called timeout
        ("ValueError: expected at most 429 rows", "bad_call"),
        ("the device rejected the value 403", "error"),  # a bare number is data, not a status
        ("PermissionError: [Errno 13] Permission denied: 'out.csv'", "call_refused"),
        ("requests.exceptions.HTTPError: 429 Client Error: Too Many Requests", "environment_error"),
        ("ReadTimeout: HTTPSConnectionPool read timed out", "environment_error"),
        ("HTTP/1.1 400 Bad Request", "bad_call"),
    ],
)
def test_an_error_is_classified_by_its_exception_or_a_stated_status_not_a_stray_number(
    error: str, kind: str
) -> None:
    rows = [TASK, msg(1, "Calling.", "Coder"), tool(2, {"q": 1}, "", status="error", error=error)]
    assert [g.kind for g in all_signals(steps_from_rows(rows)) if g.index == 2] == [kind]


def test_a_traceback_quoted_in_a_page_is_not_a_failed_call_but_one_it_ends_in_is() -> None:
    tb = 'Traceback (most recent call last):\n  File "x.py", line 1\nKeyError: 1\n'
    page = "Q: why does this fail?\n" + tb + "A: the key is missing; use dict.get instead."
    quoted = [TASK, msg(1, "Searching.", "C"), tool(2, {"q": "KeyError"}, page)]
    assert [
        g for g in all_signals(steps_from_rows(quoted)) if g.kind in ("bad_call", "error")
    ] == []
    ended = [TASK, msg(1, "Running.", "C"), tool(2, {"code": "d[1]"}, "partial output\n" + tb)]
    assert kinds(ended, "bad_call") == [2]
    assert kinds([TASK, msg(1, "Go.", "C"), tool(2, {"q": 1}, "Error: no such table")], "error")


@pytest.mark.parametrize(
    "code",
    [
        "if low < limit and high > limit:\n    print(high)",  # comparisons
        "html = '<div>' + body + '</div>'",  # markup
        "dummy_df = load()\nprint(dummy_df.shape)",  # a name
        "# placeholder for the result\nresult = compute()",  # a comment
    ],
)
def test_code_that_mentions_brackets_or_filler_words_passes_no_placeholder(code: str) -> None:
    rows = [TASK, msg(1, "Running.", "Coder"), tool(2, {"code": code}, "ok", name="python")]
    assert kinds(rows, "placeholder_argument") == []


def test_a_filler_value_in_code_is_a_placeholder() -> None:
    rows = [
        TASK,
        msg(1, "Running.", "Coder"),
        tool(2, {"code": 'fetch(api_key="dummy")'}, "ok", name="python"),
    ]
    assert kinds(rows, "placeholder_argument") == [2]


@pytest.mark.parametrize(
    "said",
    [
        "This has not been verified yet.",
        "Has the transfer been confirmed?",
        "We have yet to confirm the figure.",
    ],
)
def test_a_denied_or_asked_claim_is_no_claim(said: str) -> None:
    fail = tool(2, {"q": 1}, "", status="error", error="boom")
    rows = [TASK, msg(1, "Go.", "C"), fail, msg(3, said, "C")]
    assert kinds(rows, "claim_without_verification") == []


def test_a_pasted_log_is_quoted_material_not_a_claim() -> None:
    said = (
        "Here is what the server printed:\n"
        "2024-05-01 12:00:01 INFO served 48213 requests on port 8080\n"
        "WARNING: disk 9731 MB free\n"
        "Nothing else happened."
    )
    rows = [TASK, msg(1, said, "Ops"), msg(2, "Port 8080 and 9731 MB noted.", "Writer")]
    assert 1 not in kinds(rows, "ungrounded_fact")
    # positive control: the same figures stated in its own words are claims
    own = msg(1, "The server served 48213 requests and has 9731 MB free.", "Ops")
    assert kinds([TASK, own, msg(2, "So 48213 then.", "Writer")], "ungrounded_fact") == [1]


def test_a_speaker_repeating_its_own_figure_is_not_a_use_another_agent_taking_it_up_is() -> None:
    """An action template said every turn (an unquoted form limit) is not a claim used."""
    said = "I typed museum visitors into the search box (0 characters out of 2000)."
    rows = [TASK, msg(1, said, "Surfer"), msg(2, said, "Surfer"), msg(3, "Still looking.", "Lead")]
    assert kinds(rows, "ungrounded_fact") == []
    taken_up = [*rows[:2], msg(2, "The limit of 2000 is our answer's bound.", "Lead"), rows[3]]
    assert kinds(taken_up, "ungrounded_fact") == [1]
    called = [*rows[:2], tool(2, {"max_chars": 2000}, "ok"), rows[3]]
    assert kinds(called, "ungrounded_fact") == [1]


def test_framework_phrases_live_only_in_the_adapter_module() -> None:
    """Signal, grounding, feature and attributor code names no framework's words.

    AutoGen / Magentic-One phrases belong to ``_formats.py`` (the importer's
    per-framework adapters, declared there); LangGraph / OpenInference have no
    adapter at all. The Who&When importer names only the log's own fields.
    """
    from pathlib import Path

    import flywheel.attribution as pkg

    phrases = (
        "terminate",
        "exitcode",
        "there is no code",
        "plan for solving",
        "initial plan",
        "request satisfied",
        "orchestrator",
        "websurfer",
        "magentic",
        "ledger",
        "characters out of",
        "langgraph",
        "openinference",
        "computer_terminal",
    )
    root = Path(pkg.__file__).parent
    for path in sorted(root.glob("*.py")):
        if path.name in ("_formats.py", "_whowhen.py", "__init__.py"):
            continue
        code = "\n".join(
            line
            for line in path.read_text().lower().splitlines()
            if not line.lstrip().startswith("#")
        )
        # docstrings may name the adapter module's conventions as examples; code may not
        code = re.sub(r'""".*?"""', "", code, flags=re.DOTALL)
        found = [p for p in phrases if p in code]
        assert not found, f"{path.name} names {found}"


@pytest.mark.parametrize(
    ("said", "feature", "value"),
    [
        ("I assume the rate is 5 percent.", "assumed_state", 1.0),  # positive control
        ("I will not assume any values; I will look them up.", "assumed_state", 0.0),
        ("Should we use simulated data?", "assumed_state", 0.0),
        ("The result is correct.", "unchecked_conclusion", 1.0),  # positive control
        ("This result is not correct.", "unchecked_conclusion", 0.0),
        ("Is the answer correct?", "unchecked_conclusion", 0.0),
    ],
)
def test_category_features_read_statements_not_denials_or_questions(
    said: str, feature: str, value: float
) -> None:
    from flywheel.attribution import attribution_features

    feats = attribution_features(steps_from_rows([TASK, msg(1, said, "Analyst")]))
    assert feats[1][feature] == value


def test_a_traceback_in_an_agents_message_is_a_log_not_a_claim() -> None:
    said = (
        "Nothing to summarize.\nError processing publish message\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/agent/runner.py", line 1234, in run\n'
        "    handle(msg)\nValueError: payload 5678 too large\n"
        "I will try again."
    )
    rows = [TASK, msg(1, said, "Surfer"), msg(2, "Lines 1234 and 5678 noted.", "Lead")]
    assert 1 not in kinds(rows, "ungrounded_fact")


# -- the remaining signals: a counter-example beside each positive control --------------------
def test_a_retry_is_an_unchanged_repeat_of_a_failed_call_only() -> None:
    fail = tool(1, {"id": "h1"}, "", name="book", status="error", error="invalid id")
    same = tool(2, {"id": "h1"}, "", name="book", status="error", error="invalid id")
    assert kinds([TASK, fail, same], "retry_without_change") == [2]  # positive control
    changed = tool(2, {"id": "h2"}, "booked", name="book")
    assert kinds([TASK, fail, changed], "retry_without_change") == []
    ok = tool(1, {"id": "h1"}, "booked", name="book")
    assert (
        kinds([TASK, ok, tool(2, {"id": "h1"}, "booked", name="book")], "retry_without_change")
        == []
    )
    bare = tool(1, {}, "", name="refresh", status="error", error="boom")
    assert kinds([TASK, bare, tool(2, {}, "", name="refresh")], "retry_without_change") == []


@pytest.mark.parametrize(
    ("error", "budget"),
    [
        ("max turns reached after 30 rounds", True),
        ("BudgetExhausted: calls", True),
        ("ValueError: maximum turns must be positive", False),  # a message about a setting
        ("the budget spreadsheet could not be parsed", False),
    ],
)
def test_a_budget_hit_is_said_as_one(error: str, budget: bool) -> None:
    rows = [TASK, msg(1, "Go.", "C"), tool(2, {"q": 1}, "", status="error", error=error)]
    assert bool(kinds(rows, "budget_hit")) is budget


def _prov(use: str, src: str, flags: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "span_id": use,
            "path": "amount",
            "source_kind": "tool_result",
            "source_span_id": src,
            "trusted": False,
            "flags": flags,
        }
    ]


def test_a_value_is_stale_only_when_a_later_read_changed_it() -> None:
    read = tool(1, {}, '{"amount": 12.5}', name="get_charge")
    again_same = tool(2, {}, '{"amount": 12.5}', name="get_charge")
    again_new = tool(2, {}, '{"amount": 99.0}', name="get_charge")
    use = tool(3, {"amount": 12.5}, "ok", name="refund")
    stale = all_signals(steps_from_rows([TASK, read, again_new, use]), _prov("s3", "s1", []))
    assert [g.kind for g in stale if g.kind == "stale_argument"] == ["stale_argument"]
    fresh = all_signals(steps_from_rows([TASK, read, again_same, use]), _prov("s3", "s1", []))
    assert not [g for g in fresh if g.kind == "stale_argument"]


def test_an_untrusted_source_is_evidence_only_when_flagged_for_a_sensitive_call() -> None:
    rows = [TASK, tool(1, {}, "pay XX99", name="read_inbox"), tool(2, {"iban": "XX99"}, "ok")]
    flagged = all_signals(
        steps_from_rows(rows), _prov("s2", "s1", ["untrusted_argument_to_sensitive_tool"])
    )
    assert [g.kind for g in flagged if g.kind == "untrusted_argument"] == ["untrusted_argument"]
    assert not [
        g
        for g in all_signals(steps_from_rows(rows), _prov("s2", "s1", []))
        if "untrusted" in g.kind
    ]


def test_a_write_is_unchecked_only_when_nothing_reads_after_it() -> None:
    write = tool(1, {"id": 7, "status": "done"}, "ok", name="update_record")
    assert kinds([TASK, write], "write_without_check") == [1]  # positive control
    read_back = tool(2, {"id": 7}, '{"status": "done"}', name="get_record")
    assert kinds([TASK, write, read_back], "write_without_check") == []
    read = tool(1, {"id": 7}, '{"status": "open"}', name="get_record")
    assert kinds([TASK, read], "write_without_check") == []


def test_a_skipped_check_counts_only_where_the_trace_checks_other_calls() -> None:
    def verify(i: int) -> dict[str, Any]:
        return {"span_id": f"s{i}", "kind": "other", "span_name": "verify", "output": "ok"}

    calls = [TASK, tool(1, {"q": 1}, "a"), tool(2, {"q": 2}, "b")]
    assert kinds(calls, "unverified_call") == []  # no verifier anywhere: nothing was skipped
    checked = [TASK, tool(1, {"q": 1}, "a"), verify(2), tool(3, {"q": 2}, "b"), verify(4)]
    assert kinds(checked, "unverified_call") == []
    skipped = [TASK, tool(1, {"q": 1}, "a"), verify(2), tool(3, {"q": 2}, "b")]
    assert kinds(skipped, "unverified_call") == [3]


# -- the location prior when nothing is evidence; the plan that frames the task ---------------
def _prefers_assumed_state() -> Any:
    from flywheel.attribution import prior_model

    m = prior_model()
    m.step_weights["assumed_state"] = 6.0  # a model that would blame the step assuming its data
    return m


_NO_EVIDENCE = [
    TASK,
    msg(1, "```python\nprint(count_visitors(2019))\n```", "Coder"),
    tool(2, {"code": "print(count_visitors(2019))"}, "48213"),
    msg(3, "Let's assume the museum was closed in March.", "Analyst"),
]


def test_without_any_evidence_the_location_prior_names_the_step() -> None:
    steps = steps_from_rows(_NO_EVIDENCE)
    assert [g.kind for g in all_signals(steps)] == ["first_action"]  # nothing else fires
    a = attribute_steps(steps, assume_failed=True, model=_prefers_assumed_state())
    chosen = next(e for e in a.evidence if e["chosen"])
    assert (a.causal_index, a.agent, chosen["kind"]) == (1, "Coder", "first_action")


def test_with_weak_evidence_the_model_still_places_the_step() -> None:
    rows = [*_NO_EVIDENCE, msg(4, "Checking.", "Analyst"), tool(5, {"code": "f()"}, "[]")]
    steps = steps_from_rows(rows)
    assert any(g.kind == "empty_result" for g in all_signals(steps))  # weak evidence exists
    a = attribute_steps(steps, assume_failed=True, model=_prefers_assumed_state())
    assert a.causal_index == 3  # the model's step, not the prior


def test_only_the_first_plan_frames_the_task_and_it_alone_names_nothing() -> None:
    from flywheel.attribution import attribution_features, prior_model

    plan = {"flywheel.message.plan": "true"}
    rows = [
        TASK,
        msg(1, "Plan: count the 2019 visitors.", "Lead", **plan),
        msg(2, "New plan: ask the museum.", "Lead", **plan),
        msg(3, "Done.", "Lead"),
    ]
    feats = attribution_features(steps_from_rows(rows))
    assert [f["frames_task"] for f in feats] == [0.0, 1.0, 0.0, 0.0]
    m = prior_model()
    m.evidence_weights["understanding"]["frames_task"] = 5.0
    role_only = [dict(f, task_drift=0.0) for f in feats]
    assert "understanding" not in [c for c, _ in m.predict(role_only).category_probs]
    drift = [dict(f, task_drift=0.6 if f["frames_task"] else 0.0) for f in role_only]
    assert m.predict(drift).category_probs[0][0] == "understanding"
