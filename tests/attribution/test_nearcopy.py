"""Near-copies: what counts as a misread value, and the signal that names it."""

from __future__ import annotations

import json

from flywheel.attribution import attribute_steps, near_copy, steps_from_rows
from flywheel.harness import corrupt
from hypothesis import given
from hypothesis import strategies as st

from flywheel.values import misreadings


def test_the_near_copy_families() -> None:
    assert near_copy(1235, 1234) == "off by one"
    assert near_copy(1243, 1234) == "digits transposed"
    assert near_copy(4.0, 5.0) == "off by one"
    assert near_copy("GB29NWBK60161331926891", "GB29NWBK60161331926819") == "characters transposed"
    assert near_copy("GB29NWBK601613319268", "GB29NWBK60161331926819") == "truncated"
    assert near_copy("GB29NWBK60161331926818", "GB29NWBK60161331926819") == "one character changed"
    # not near: equal, far, reversed, another type, too short
    for got, seen in [(1234, 1234), (1236, 1234), (1334, 1234), ("dcba", "abcd"), ("12", 12)]:
        assert near_copy(got, seen) == "", (got, seen)
    assert near_copy("ab", "ba") == ""


class _Rng:
    def __init__(self, i: int) -> None:
        self.i = i

    def choice(self, xs):  # noqa: ANN001, ANN201 - a fixed stand-in for random.Random (tests only)
        return xs[self.i % len(xs)]


@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=0, max_value=2))
def test_a_generated_wrong_integer_is_never_a_near_copy(v: int, i: int) -> None:
    assert near_copy(corrupt(v, _Rng(i)), v) == ""


@given(st.text(alphabet="ABCDEFGHIJ0123456789", min_size=4, max_size=30))
def test_a_generated_wrong_string_is_never_a_near_copy_unless_a_palindrome(v: str) -> None:
    w = corrupt(v, _Rng(0))
    if v[::-1] != v and sum(a != b for a, b in zip(v, v[::-1], strict=True)) > 2:
        assert near_copy(w, v) == ""


@given(
    st.one_of(
        st.integers(min_value=10, max_value=10**6),
        st.text(alphabet="ABCDEF0123456789", min_size=4, max_size=24),
    )
)
def test_every_misreading_of_a_read_value_is_near_or_a_neighbour(v: object) -> None:
    result = {"items": [{"value": v}, {"value": 7 if isinstance(v, int) else "other-field"}]}
    for how, w in misreadings(v, result):
        assert w != v
        assert how == "neighbouring field" or near_copy(w, v) == how


def _trace(amount: float | str) -> list:
    read = {"amount": 1234.5, "iban": "GB29NWBK60161331926819"}
    return steps_from_rows(
        [
            {"span_id": "t", "kind": "llm", "output": "Refund my last charge.", "agent_name": "u"},
            {"span_id": "a", "kind": "llm", "output": "call get_charge", "agent_name": "bot"},
            {
                "span_id": "r",
                "kind": "tool",
                "tool_name": "get_charge",
                "arguments": "{}",
                "result": json.dumps(read),
            },
            {"span_id": "b", "kind": "llm", "output": "call refund", "agent_name": "bot"},
            {
                "span_id": "c",
                "kind": "tool",
                "tool_name": "refund",
                "arguments": json.dumps({"amount": amount}),
                "result": '{"ok": true}',
            },
        ]
    )


def test_an_argument_that_nearly_copies_a_read_is_perception_at_the_calling_turn() -> None:
    a = attribute_steps(_trace(1243.5), assume_failed=True)
    assert (a.category, a.causal_span_id, a.surfaced_span_id) == ("perception", "b", "c")
    chosen = next(e for e in a.evidence if e["chosen"])
    assert chosen["kind"] == "near_copy_of_observed" and "read at step 2" in chosen["detail"]


def test_an_exact_or_unrelated_argument_is_not_a_near_copy() -> None:
    for amount in (1234.5, 99.0):
        a = attribute_steps(_trace(amount), assume_failed=True)
        assert not any(e["kind"] == "near_copy_of_observed" for e in a.evidence)


def _answer_trace(answer: str) -> list:
    read = [
        {"amount": 200.0, "id": 2, "subject": "New year gift", "room": "Conference Room B"},
        {"amount": 850.0, "id": 3, "subject": "Rent", "room": "Hall"},
    ]
    return steps_from_rows(
        [
            {"span_id": "t", "kind": "llm", "output": "How much did I spend?", "agent_name": "u"},
            {
                "span_id": "r",
                "kind": "tool",
                "tool_name": "get_transactions",
                "arguments": "{}",
                "result": json.dumps(read),
            },
            {"span_id": "a", "kind": "llm", "output": answer, "agent_name": "bot"},
        ]
    )


def test_an_answer_quoting_a_near_copy_of_a_field_is_a_misread() -> None:
    for answer in ("You spent 201 on the gift.", "It is in Conference Room."):
        a = attribute_steps(_answer_trace(answer), assume_failed=True)
        assert (a.category, a.causal_span_id) == ("perception", "a"), a.evidence
        assert any(e["kind"] == "near_copy_of_observed" for e in a.evidence)


def test_a_total_over_read_records_is_derived_not_made_up() -> None:
    a = attribute_steps(_answer_trace("In total you spent 1,050."), assume_failed=True)
    assert not any(e["kind"] in ("ungrounded_fact", "near_copy_of_observed") for e in a.evidence)
    made_up = attribute_steps(_answer_trace("In total you spent 1,070."), assume_failed=True)
    assert any(e["kind"] == "ungrounded_fact" for e in made_up.evidence)


def test_answer_misreadings_keep_the_rest_of_the_answer() -> None:
    from flywheel.values import answer_misreadings

    out = answer_misreadings("Spent 1,234 in Room Alpha", [{"a": 1234.0, "r": "Room Alpha"}])
    assert ("off by one", "Spent 1235 in Room Alpha") in out
    assert ("truncated", "Spent 1,234 in Room Alph") in out
    assert answer_misreadings("You have 3 meetings", [{"n": 30}]) == []  # nothing quoted
