"""Formatting and form rules without a terminal; the public surface is pinned."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from flywheel.tui._client import trace_structure
from flywheel.tui._task_form import build_task, form_values, validate
from flywheel.tui._view import age, argument_lines, badge, flags, next_open, parse_rule, rules_body

from flywheel import tui


def test_public_api() -> None:
    assert sorted(tui.__all__) == ["ApiError", "DEFAULT_URL", "ReviewApp", "ReviewClient",
                                   "StepRow", "make_app"]


def test_age_and_flags() -> None:
    s = 1_000_000_000
    assert [age(0, 5 * s), age(1, 45 * s), age(1, 3700 * s), age(1, 3 * 86400 * s + 1)] == [
        "-", "44s", "1h", "3d"]
    row = {"reasons": ["provenance:untrusted_argument_to_sensitive_tool", "side-effect:mail"],
           "golden": True, "review": {"edited": False}}
    assert flags(row) == "PS.G."


def test_next_open_prefers_my_claim() -> None:
    rows = [{"candidate_id": "a", "review": {"status": "open"}},
            {"candidate_id": "b", "review": {"status": "claimed", "claimed_by": "me"}}]
    assert next_open(rows, "me")["candidate_id"] == "b"  # type: ignore[index]
    assert next_open(rows, "you")["candidate_id"] == "a"  # type: ignore[index]
    assert next_open([{"review": {"status": "approved"}}], "me") is None


def test_untrusted_arguments_read_without_colour() -> None:
    rec = {"span_id": "s", "path": "iban", "source_kind": "tool_result", "source_ref": "read_inbox",
           "method": "exact", "confidence": 0.95, "trusted": False, "flags": ["f"]}
    assert badge(rec) == "! [untrusted tool_result:read_inbox exact .95]"
    user = {**rec, "path": "amount", "source_kind": "user", "trusted": True, "flags": []}
    lines = argument_lines(json.dumps({"iban": "<IBAN_1>", "amount": 3, "x": 1}), [rec, user])
    untrusted = "! [untrusted tool_result:read_inbox exact .95] flags: f"
    assert lines[0] == (f"! iban = <IBAN_1>  {untrusted}", True)
    assert lines[1] == ("  amount = 3  [user exact .95]", False)
    assert lines[2] == ("  x = 1  [no provenance]", False)


def test_trace_structure_drops_every_text() -> None:
    detail = {"spans": [{"span_id": "a", "parent_span_id": "", "depth": 0, "name": "execute_tool x",
                         "status_message": "card 4111", "step": {
                             "kind": "tool", "tool_name": "x", "arguments": {"card": "4111"},
                             "result": "4111", "error": "4111 declined", "status": "error",
                             "duration_ns": 2_000_000, "input_tokens": 1, "output_tokens": 2}}]}
    (row,) = trace_structure(detail)
    assert "4111" not in repr(row)
    assert (row.kind, row.tool_name, row.duration_ms, row.has_error) == ("tool", "x", 2.0, True)


def test_rules() -> None:
    assert parse_rule("key:card_holder=name") == ("key", "card_holder", "NAME")
    assert parse_rule("deny:name=Lee Smith") == ("deny", "NAME", "Lee Smith")
    with pytest.raises(ValueError, match="key:JSON_KEY=LABEL"):
        parse_rule("card_holder")
    body = rules_body([("key", "k", "NAME"), ("deny", "NAME", "a"), ("deny", "NAME", "b")])
    assert body == {"key_rules": {"k": "NAME"}, "deny_strings": {"NAME": ["a", "b"]}}


TASK = {
    "task_id": "t1", "slice": "s", "expected_tools": ["a"],
    "criteria": [{"id": "budget", "kind": "budget", "role": "mandatory",
                  "grader": {"name": "budget", "args": {"max_tool_calls": 2}}}],
    "metadata": {"split": "dev", "budgets": {"max_tool_calls": 2}},
}


def test_form_round_trip_and_budgets_in_both_places() -> None:
    values = form_values(TASK)
    values["budgets"] = '{"max_tool_calls": 5}'
    values["golden"] = True
    task, errors = build_task(TASK, values)
    assert errors == {} and validate(task, "t1") == {}
    assert task["metadata"]["budgets"] == {"max_tool_calls": 5}
    assert task["criteria"][0]["grader"]["args"] == {"max_tool_calls": 5}
    assert task["golden"] is True and task["expected_tools"] == ["a"]


def test_form_errors_land_on_their_field() -> None:
    values = form_values(TASK)
    values["split"] = "train"
    task, _ = build_task(TASK, values)
    assert "split" in validate(task, "t1")
    values = form_values(TASK)
    values["slice"] = 7
    values["criteria"] = "[]"
    task, _ = build_task(TASK, values)
    assert set(validate(task, "t1")) == {"criteria"}
    task, errors = build_task(TASK, {**form_values(TASK), "expected_state": "{"})
    assert set(errors) == {"expected_state"}


def test_cli_review_help() -> None:
    from flywheel.cli import cli

    out = CliRunner().invoke(cli, ["review", "--help"])
    assert out.exit_code == 0
    assert "--url" in out.output and "--reviewer" in out.output and "--api-key" in out.output


def test_conversation_reads_library_message_shapes() -> None:
    """LangChain's constructor JSON and OpenAI messages read as turns; plain text as is."""
    from flywheel.tui._view import conversation

    lc = json.dumps([
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "SystemMessage"],
         "kwargs": {"content": "You are a librarian.", "type": "system"}},
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
         "kwargs": {"content": "Renew my loan", "type": "human"}},
    ])
    shown = conversation(lc, "user")
    assert shown.splitlines() == ["system: You are a librarian.", "user: Renew my loan"]
    assert '"lc"' not in shown and "constructor" not in shown
    openai = json.dumps([{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "renew", "arguments": "{\"loan\": 7}"}}]}])
    assert "tool_call: renew(" in conversation(openai, "assistant")
    assert conversation("just words", "user") == "just words"
    assert conversation('{"a": 1}', "user").startswith("{")  # no turns: pretty JSON
