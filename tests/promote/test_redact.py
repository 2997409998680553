"""Redaction behaviour: key paths, pseudonym consistency, deny lists, report, offline."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from flywheel.promote import RedactionPolicy, TraceStep
from flywheel.promote._redact import Redactor, normalise_key
from flywheel.promote._redact_batch import redact_traces, shutdown_pools
from flywheel.pii._patterns import triggered_entities
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor()


def _trace() -> list[TraceStep]:
    return [
        TraceStep(
            span_id="u", input_text="Email jane.roe@gmail.com or call +1 415-555-0132, thanks"
        ),
        TraceStep(
            span_id="t1",
            tool_name="find_contact",
            arguments=json.dumps({"query": "Jane Roe", "limit": 3, "active": True}),
            result=json.dumps(
                {
                    "contact": {
                        "name": "Jane Roe",
                        "email": "Jane.Roe@gmail.com",
                        "phone": "(415) 555-0132",
                    },
                    "address": {"street": "1 Main St", "city": "Springfield"},
                    "card_number": 4111111111111111,
                    "id": "c_123",
                    "status": "active",
                }
            ),
        ),
        TraceStep(
            span_id="t2",
            tool_name="send_email",
            arguments=json.dumps(
                {
                    "recipients": ["jane.roe@gmail.com"],
                    "body": "Hi Jane, card 4111 1111 1111 1111 was charged; login from 10.0.0.12",
                    "meta": json.dumps({"iban": "DE89370400440532013000"}),
                }
            ),
            result='"sent"',
        ),
        TraceStep(
            span_id="llm",
            output_text=json.dumps(
                [
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "function": {
                                    "name": "send_email",
                                    "arguments": json.dumps({"to": "jane.roe@gmail.com"}),
                                }
                            }
                        ],
                    }
                ]
            ),
        ),
    ]


def test_pseudonyms_consistent_across_spans_json_and_text(redactor: Redactor) -> None:
    out = redactor.redact_trace(_trace())
    s = out.steps
    res = json.loads(s[1].result or "")
    email = res["contact"]["email"]
    assert email == "<EMAIL_1>"
    assert email in (s[0].input_text or "")
    assert json.loads(s[2].arguments or "")["recipients"] == [email]
    inner = json.loads(
        json.loads(s[3].output_text or "")[0]["tool_calls"][0]["function"]["arguments"]
    )
    assert inner == {"to": email}
    # Different formats of one phone number share a pseudonym.
    assert res["contact"]["phone"] in (s[0].input_text or "")
    # The keyed card (a JSON number) and the spaced card in prose are one value.
    assert res["card_number"] == "<CARD_1>"
    assert "<CARD_1>" in json.loads(s[2].arguments or "")["body"]
    # A name found under a key is replaced wherever it appears, also in parts.
    assert json.loads(s[1].arguments or "")["query"] == res["contact"]["name"] == "<NAME_1>"
    assert "Hi <NAME_1>," in json.loads(s[2].arguments or "")["body"]


def test_key_rules_and_what_is_kept(redactor: Redactor) -> None:
    out = redactor.redact_trace(_trace())
    res = json.loads(out.steps[1].result or "")
    assert res["address"] == {"street": "<ADDRESS_1>", "city": "<ADDRESS_2>"}
    assert res["id"] == "c_123" and res["status"] == "active"
    args = json.loads(out.steps[1].arguments or "")
    assert args["limit"] == 3 and args["active"] is True
    meta = json.loads(json.loads(out.steps[2].arguments or "")["meta"])
    assert meta == {"iban": "<IBAN_1>"}
    # Tool names under a "name" key are identifiers, not people.
    fn = json.loads(out.steps[3].output_text or "")[0]["tool_calls"][0]["function"]
    assert fn["name"] == "send_email"
    assert out.steps[1].tool_name == "find_contact"


def test_report_has_types_paths_counts_never_values(redactor: Redactor) -> None:
    out = redactor.redact_trace(_trace())
    rep = out.report.to_dict()
    text = json.dumps(rep)
    for secret in ("jane", "Jane", "415", "4111", "10.0.0.12", "DE89", "Main St", "Springfield"):
        assert secret not in text
    paths = {(f["step"], f["field"], f["path"], f["entity"], f["rule"]) for f in rep["findings"]}
    assert (1, "result", "$.contact.email", "EMAIL", "key") in paths
    assert (2, "arguments", "$.meta.iban", "IBAN", "key") in paths
    assert (2, "arguments", "$.body", "IP", "pattern") in paths
    assert rep["counts"]["EMAIL"] == 4 and rep["distinct"]["EMAIL"] == 1
    assert rep["total"] == sum(f["count"] for f in rep["findings"])


def test_untouched_fields_are_byte_identical(redactor: Redactor) -> None:
    raw = '{"a":1,   "b":"plain words"}'
    step = TraceStep(span_id="x", tool_name="t", arguments=raw, result="no pii here at all")
    out = redactor.redact_trace([step])
    assert out.steps[0].arguments == raw
    assert out.steps[0].result == "no pii here at all"
    assert out.report.total == 0


def test_pseudonyms_restart_per_trace(redactor: Redactor) -> None:
    a = redactor.redact_trace([TraceStep(input_text="write to bob@example.com")])
    b = redactor.redact_trace([TraceStep(input_text="x@example.com then bob@example.com")])
    assert a.steps[0].input_text == "write to <EMAIL_1>"
    assert b.steps[0].input_text == "<EMAIL_1> then <EMAIL_2>"


def test_deny_lists_and_custom_key_rules() -> None:
    policy = RedactionPolicy(
        deny_strings={"PROJECT": ["Project Nightjar"]},
        deny_patterns={"EMPLOYEE": [r"\bEMP-\d{5}\b"]},
        key_rules={"customer_ref": "CUSTOMER"},
    )
    r = Redactor(policy)
    out = r.redact_trace(
        [
            TraceStep(input_text="Ask EMP-12345 about Project Nightjar"),
            TraceStep(
                tool_name="lookup", arguments=json.dumps({"customerRef": "K9", "name": "Ann Lee"})
            ),
        ]
    )
    assert out.steps[0].input_text == "Ask <EMPLOYEE_1> about <PROJECT_1>"
    args = json.loads(out.steps[1].arguments or "")
    assert args["customerRef"] == "<CUSTOMER_1>"
    # The policy's key rules replace the defaults: "name" is no key rule here, so the
    # value is caught by the name detector, not by the key.
    assert args["name"] == "<NAME_1>"
    rules = {f.rule for f in out.report.findings if f.path == "$.name"}
    assert rules == {"name"}


def test_bad_deny_pattern_names_the_pattern() -> None:
    with pytest.raises(ValueError, match=r"\[unclosed"):
        Redactor(RedactionPolicy(deny_patterns={"X": ["[unclosed"]}))


def test_auto_keys_take_the_detected_type(redactor: Redactor) -> None:
    out = redactor.redact_trace(
        [
            TraceStep(
                tool_name="send_money",
                arguments=json.dumps(
                    {
                        "recipient": "GB33BUKB20201555555555",
                        "sender": "Sam Poe",
                        "cc": ["ann@example.org"],
                    }
                ),
            )
        ]
    )
    args = json.loads(out.steps[0].arguments or "")
    assert args == {"recipient": "<IBAN_1>", "sender": "<NAME_1>", "cc": ["<EMAIL_1>"]}


def test_normalise_key() -> None:
    assert normalise_key("First-Name") == normalise_key("firstName") == "firstname"


def test_triggers_skip_id_like_and_short_strings() -> None:
    wanted = ("EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS", "US_SSN")
    assert triggered_entities("2026-05-01T10:00:00Z", wanted) == []
    assert triggered_entities("0af7651916cd43dd8448eb211c80319c", wanted) == []
    assert triggered_entities("ok", wanted) == []
    assert triggered_entities("mail a@b.co", wanted) == ["EMAIL_ADDRESS"]
    assert "PHONE_NUMBER" in triggered_entities("call 555 010 2000", wanted)


def test_detection_cache_reused(redactor: Redactor) -> None:
    step = TraceStep(input_text="ping ops@example.com about 10.1.2.3")
    redactor.redact_trace([step])
    before = redactor.detector.hits
    redactor.redact_trace([step])
    assert redactor.detector.hits > before


def test_no_socket_opened_during_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the engine and redacting emails/URLs must not touch the network."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    r = Redactor()  # fresh analyzer, fresh recognizers
    out = r.redact_trace(
        [
            TraceStep(
                input_text="see https://docs.example.co.uk/x and write to a.b@mail.example.co.uk"
            )
        ]
    )
    assert "<EMAIL_1>" in (out.steps[0].input_text or "")


def test_no_socket_opened_from_a_fresh_interpreter(tmp_path: Path) -> None:
    """Same, with the guard in place before presidio/tldextract are first imported."""
    script = textwrap.dedent(
        """
        import os, socket
        os.environ.pop("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", None)
        os.environ["TLDEXTRACT_CACHE"] = os.environ["FRESH_CACHE"]
        def refuse(*a, **k):
            raise SystemExit("network access attempted: %r" % (a,))
        socket.socket.connect = refuse
        socket.create_connection = refuse
        from flywheel.promote._redact import Redactor
        from flywheel.promote._redact_types import TraceStep
        out = Redactor().redact_trace([TraceStep(input_text="mail x.y@example.co.uk now")])
        assert out.steps[0].input_text == "mail <EMAIL_1> now", out.steps[0].input_text
        print("ok")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={
            "PYTHONPATH": str(ROOT),
            "FRESH_CACHE": str(tmp_path / "tld"),
            "PATH": "/usr/bin:/bin",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:] + proc.stdout[-500:]
    assert proc.stdout.strip().endswith("ok")


def test_parallel_batch_matches_serial() -> None:
    traces = [_trace() for _ in range(8)] + [
        [TraceStep(input_text=f"user{i}@example.com")] for i in range(8)
    ]
    serial = redact_traces(traces, workers=1)
    try:
        parallel = redact_traces(traces, workers=2, chunk_size=4)
        again = redact_traces(traces, workers=2, chunk_size=4)  # the pool is reused
    finally:
        shutdown_pools()
    assert [t.steps for t in again] == [t.steps for t in parallel]
    assert [t.steps for t in parallel] == [t.steps for t in serial]
    assert [t.report for t in parallel] == [t.report for t in serial]


@pytest.mark.parametrize(
    ("n", "workers", "sent"),
    [
        (64, 2, [4] * 16),  # redact_candidates' old batch: it ran in the calling process
        (128, 2, [8] * 16),
        (5, 2, [1] * 5),
        (1000, 2, [16] * 62 + [8]),  # chunks stop growing at MAX_CHUNK
        (1, 2, []),  # one trace: nothing to split, this process
        (64, 1, []),
    ],
)
def test_default_chunks_reach_every_worker(
    monkeypatch: pytest.MonkeyPatch, n: int, workers: int, sent: list[int]
) -> None:
    from flywheel.promote import _redact_batch

    got: list[int] = []

    class Pool:
        def map(self, fn: Any, chunks: Any) -> Any:
            chunks = list(chunks)
            got.extend(len(c) for c in chunks)
            return [Redactor().redact_many(c) for c in chunks]

    monkeypatch.setattr(_redact_batch, "_pool", lambda policy_json, w: Pool())
    traces = [[TraceStep(input_text=f"mail user{i}@example.com")] for i in range(n)]
    out = redact_traces(traces, workers=workers)
    assert got == sent
    assert [t.steps for t in out] == [t.steps for t in Redactor().redact_many(traces)]


_emails = st.from_regex(r"[a-z]{2,8}\.[a-z]{2,8}@(example|mail)\.(com|org)", fullmatch=True)
_json_leaf = st.one_of(st.integers(), st.booleans(), st.none(), st.text(max_size=12))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    emails=st.lists(_emails, min_size=1, max_size=3, unique=True),
    filler=st.dictionaries(st.sampled_from(["a", "b", "note", "count"]), _json_leaf, max_size=4),
    key=st.sampled_from(["email", "to", "text", "contact_email", "notes"]),
)
def test_property_no_email_survives_anywhere(
    redactor: Redactor, emails: list[str], filler: dict[str, object], key: str
) -> None:
    args = {**filler, key: " and ".join(emails)}
    steps = [
        TraceStep(
            tool_name="t", arguments=json.dumps(args), result=json.dumps({"echo": json.dumps(args)})
        ),
        TraceStep(output_text=f"done for {emails[-1]}"),
    ]
    out = redactor.redact_trace(steps)
    blob = json.dumps([s.__dict__ for s in out.steps], default=dict)
    for e in emails:
        assert e not in blob
    # Structure is kept: same keys, same non-string values.
    red_args = json.loads(out.steps[0].arguments or "")
    assert set(red_args) == set(args)
    for k, v in filler.items():
        if k != key and not isinstance(v, str):
            assert red_args[k] == v


def test_bare_digit_strings_are_not_skipped_as_ids(redactor: Redactor) -> None:
    """A 16-digit string is all hex characters; it must still be checked (it may be a card)."""
    out = redactor.redact_trace(
        [TraceStep(tool_name="t", arguments='{"note": "4111111111111111"}')]
    )
    assert json.loads(out.steps[0].arguments or "") == {"note": "<CARD_1>"}
    assert triggered_entities("0af7651916cd43dd", ("CREDIT_CARD",)) == []


@pytest.mark.parametrize(
    "text",
    [
        "Order 12345678 shipped on 2026-05-01 10:00",
        "Refund of 1234.56 EUR for order O-99812345",
        "tracking 1Z9999999999 arrives 14/03/2026",
        "timestamp 1764512345 epoch",
        "scheduled 2026-05-01T10:00:00Z",
        "invoice INV-2026-000123 total 1,234,567.00",
        "trace 4bf92f3577b34da6a3ce929d0e0e4736 took 1532 ms",
    ],
)
def test_ids_dates_and_amounts_are_not_phones(redactor: Redactor, text: str) -> None:
    """Leniency POSSIBLE finds invented numbers; the shape rules keep ids and dates intact."""
    assert redactor.redact_trace([TraceStep(output_text=text)]).steps[0].output_text == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("call me at 9607876431", "call me at <PHONE_1>"),
        ("ring 415-555-0132 now", "ring <PHONE_1> now"),
        ("office (0114) 4960907", "office <PHONE_1>"),
        ("UK +44(0)131 4960979.", "UK <PHONE_1>."),
        ("abroad 00593680829", "abroad <PHONE_1>"),
    ],
)
def test_phone_formats_in_text(redactor: Redactor, text: str, expected: str) -> None:
    assert redactor.redact_trace([TraceStep(output_text=text)]).steps[0].output_text == expected


def test_steps_may_be_loose_dicts(redactor: Redactor) -> None:
    out = redactor.redact_trace(
        [{"span_id": "s", "tool": "lookup", "args": {"email": "a.b@example.com"}, "output": "ok"}]
    )
    assert out.steps[0] == TraceStep(
        span_id="s", tool_name="lookup", arguments='{"email": "<EMAIL_1>"}', output_text="ok"
    )
