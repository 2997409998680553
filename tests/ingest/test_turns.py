"""One model of turns from every message shape (``ingest/_turns.py``).

The shapes here are written from each format's documentation, for the
libraries the real-library tests (``test_library_shapes.py``) cannot run:
Anthropic content blocks, OpenAI Responses items, OpenLLMetry's older
flattened prompt keys. Then the rules that matter to provenance (a tool
result is never the user's words, whatever role carries it), wrappers, the
naming of a bare argument, and hostile input (deep nesting, huge reprs,
garbage): never an exception, never a trusted turn made up.
"""

from __future__ import annotations

import json

import pytest

from flywheel.ingest import (
    TURN_ROLES,
    infer_provenance,
    normalise_steps,
    parse_turns,
    turns_text,
)
from flywheel.ingest._turns import tool_arguments, tool_result


def roles(turns):
    return [t.role for t in turns]


def test_genai_parts_tool_result_inside_user_message_is_a_tool_result():
    msgs = [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Pay the bill"}]},
        {"role": "assistant", "parts": [
            {"type": "tool_call", "id": "a1", "name": "read", "arguments": {"path": "b.txt"}}]},
        {"role": "user", "parts": [
            {"type": "tool_call_response", "id": "a1", "name": "read", "result": "IBAN X1"}]},
    ]
    turns = parse_turns(json.dumps(msgs))
    assert roles(turns) == ["system", "user", "tool_call", "tool_result"]
    assert turns[2].arguments == {"path": "b.txt"} and turns[2].call_id == "a1"
    assert turns[3].content == "IBAN X1" and turns[3].tool_name == "read"


def test_anthropic_blocks():
    msgs = [
        {"role": "user", "content": "Find the invoice"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "tu1", "name": "search", "input": {"q": "invoice"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1",
             "content": [{"type": "text", "text": "pay to FR76 3000"}]}]},
    ]
    turns = parse_turns(msgs)
    assert roles(turns) == ["user", "assistant", "tool_call", "tool_result"]
    assert turns[2].arguments == {"q": "invoice"}
    assert turns[3].content == "pay to FR76 3000" and turns[3].call_id == "tu1"


def test_openai_chat_and_responses_items():
    chat = [
        {"role": "developer", "content": "rules"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get", "arguments": "{\"id\": 7}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"ok\": true}"},
    ]
    assert roles(parse_turns(chat)) == ["system", "user", "tool_call", "tool_result"]
    assert parse_turns(chat)[2].arguments == {"id": 7}
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "function_call", "call_id": "f1", "name": "open", "arguments": "{\"u\": \"x\"}"},
        {"type": "function_call_output", "call_id": "f1", "output": "page text"},
    ]
    turns = parse_turns(items)
    assert roles(turns) == ["user", "tool_call", "tool_result"]
    assert turns[2].call_id == "f1" and turns[2].content == "page text"


def test_openinference_flattened_keys_with_gaps_and_contents():
    flat = {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": "hello",
        "llm.input_messages.1.message.role": "assistant",
        # indices need not start at 0 or be contiguous
        "llm.input_messages.1.message.tool_calls.1.tool_call.id": "t9",
        "llm.input_messages.1.message.tool_calls.1.tool_call.function.name": "pay",
        "llm.input_messages.1.message.tool_calls.1.tool_call.function.arguments": "{\"to\": \"A\"}",
        "llm.input_messages.10.message.role": "tool",
        "llm.input_messages.10.message.content": "done",
        "llm.input_messages.10.message.tool_call_id": "t9",
    }
    turns = parse_turns(json.dumps(flat))
    assert roles(turns) == ["user", "tool_call", "tool_result"]
    assert turns[1].arguments == {"to": "A"} and turns[2].call_id == "t9"


def test_openllmetry_legacy_prompt_and_completion_keys():
    prompt = {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "weather?",
              "gen_ai.prompt.1.role": "tool", "gen_ai.prompt.1.content": "sunny",
              "gen_ai.prompt.1.tool_call_id": "w1"}
    assert roles(parse_turns(prompt)) == ["user", "tool_result"]
    completion = {"gen_ai.completion.0.role": "assistant",
                  "gen_ai.completion.0.tool_calls.0.name": "weather",
                  "gen_ai.completion.0.tool_calls.0.arguments": "{\"city\": \"Oslo\"}",
                  "gen_ai.completion.0.tool_calls.0.id": "w1"}
    (call,) = parse_turns(completion, "assistant")
    assert call.role == "tool_call" and call.arguments == {"city": "Oslo"}


def test_langchain_forms():
    ctor = {"messages": [[
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
         "kwargs": {"content": "hi", "type": "human"}},
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
         "kwargs": {"content": "", "tool_calls": [{"name": "f", "args": {"a": 1}, "id": "x"}]}},
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
         "kwargs": {"content": "res", "tool_call_id": "x"}},
    ]]}
    assert roles(parse_turns(ctor)) == ["user", "tool_call", "tool_result"]
    dumped = {"messages": [{"type": "human", "data": {"content": "q"}},
                           {"type": "tool", "data": {"content": "r", "tool_call_id": "x"}}]}
    assert roles(parse_turns(dumped)) == ["user", "tool_result"]
    gen = {"generations": [[{"text": "ok", "type": "ChatGeneration", "message": {
        "lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
        "kwargs": {"content": "ok"}}}]]}
    assert [(t.role, t.content) for t in parse_turns(gen, "assistant")] == [("assistant", "ok")]


def test_smolagents_roles_and_python_reprs():
    msgs = [{"role": "tool-call", "content": [{"type": "text", "text":
             "Calling tools:\n[{'id': 'c0', 'type': 'function', 'function': "
             "{'name': 'read', 'arguments': {'path': 'a'}}}]"}]},
            {"role": "tool-response", "content": [{"type": "text", "text": "Observation:\nxyz"}]}]
    turns = parse_turns(msgs)
    assert roles(turns) == ["tool_call", "tool_result"]
    assert turns[0].arguments == {"path": "a"} and turns[0].call_id == "c0"
    # the OTel-contrib OpenAI Agents instrumentor prints the model's message as a repr
    out = [{"role": "assistant", "parts": [{"type": "text", "content": str({
        "content": None, "role": "assistant", "tool_calls": [
            {"id": "c1", "function": {"arguments": "{\"x\": 2}", "name": "g"}, "type": "function"}]})}]}]
    (call,) = parse_turns(out, "assistant")
    assert (call.role, call.tool_name, call.arguments) == ("tool_call", "g", {"x": 2})


def test_system_instructions_travel_with_messages():
    bag = {"gen_ai.system_instructions": json.dumps([{"type": "text", "content": "S"}]),
           "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
               {"type": "text", "content": "U"}]}])}
    assert [(t.role, t.content) for t in parse_turns(json.dumps(bag))] == [
        ("system", "S"), ("user", "U")]


def test_plain_text_and_unknown_speakers():
    assert [(t.role, t.content) for t in parse_turns("just a prompt")] == [("user", "just a prompt")]
    assert parse_turns("") == [] and parse_turns("   ") == []
    # another agent's name as the role: a model speaking, never the principal
    assert roles(parse_turns([{"role": "Planner", "content": "do X"}])) == ["assistant"]
    # an agent's input object: the request when it is a named text, else nothing
    assert roles(parse_turns({"task": "pay it", "stream": False})) == ["user"]
    assert parse_turns({"unrelated": 1}) == []


@pytest.mark.parametrize("hostile", [
    "[" * 5000 + "]" * 5000,
    json.dumps({"messages": [[[[[[[[[[[[{"role": "user", "content": "deep"}]]]]]]]]]]]]}),
    json.dumps({"message": {"message": {"message": {"message": {"message": {"message": {
        "message": {"message": {"message": {"message": {"role": "user", "content": "x"}}}}}}}}}}}),
    "{'role': 'assistant', 'content': " * 3000,
    json.dumps([{"role": "assistant", "content": "{'role': 'user', " + "'x': [" * 2000}]),
    json.dumps({"llm.input_messages." + ".".join(["0"] * 5000): "x"}),
    "{not json",
    json.dumps([1, None, True, {"role": None}, {"parts": "nope"}, {"tool_calls": "x"}]),
])
def test_hostile_input_never_raises_nor_invents_user_words(hostile):
    for default in ("user", "assistant"):
        turns = parse_turns(hostile, default)
        assert all(t.role in TURN_ROLES for t in turns)
    assert all(t.content != "deep" or t.role == "user" for t in parse_turns(hostile))


def test_tool_argument_wrappers():
    smol = {"args": [], "sanitize_inputs_outputs": True, "kwargs": {"path": "a"}}
    assert tool_arguments(smol) == ({"path": "a"}, "")
    assert tool_arguments({"args": [], "kwargs": {"q": 1}}) == ({"q": 1}, "")
    assert tool_arguments({"args": ["a"], "kwargs": {}}) == (["a"], "")
    tl = {"input_str": "{'path': 'a'}", "tags": [], "metadata": {}, "inputs": {"path": "a"},
          "kwargs": {"color": "green", "tool_call_id": "c3"}}
    assert tool_arguments(tl) == ({"path": "a"}, "c3")
    assert tool_arguments({"input_str": "{'path': 'b'}", "kwargs": {}}) == ({"path": "b"}, "")
    assert tool_arguments("{'path': 'c'}") == ({"path": "c"}, "")  # a repr
    # a tool whose own arguments are named args/kwargs keeps them
    assert tool_arguments({"args": "x", "kwargs": "y", "other": 1})[0] == {
        "args": "x", "kwargs": "y", "other": 1}


def test_tool_result_wrappers():
    oi = {"type": "tool", "data": {"content": "text", "tool_call_id": "c1", "status": "success"}}
    assert tool_result(oi) == ("text", "c1")
    ctor = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
            "kwargs": {"content": "{\"balance\": 3}", "tool_call_id": "c2"}}
    assert tool_result(ctor) == ({"balance": 3}, "c2")
    assert tool_result({"output": ctor, "kwargs": {"tags": []}}) == ({"balance": 3}, "c2")
    listed = {"type": "tool", "data": {"content": [{"type": "text", "text": "a"}]}}
    assert tool_result(listed) == ("a", "")
    plain = {"type": "tool", "name": "x"}  # a tool's own result that looks alike stays
    assert tool_result(plain) == (plain, "")


def _llm(span, out_calls):
    return {"span_id": span, "kind": "llm", "input": "", "output": json.dumps(
        [{"role": "assistant", "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for cid, n, a in out_calls]}])}


def test_bare_argument_named_by_the_models_call_or_schema():
    steps = [
        _llm("m1", [("k1", "lookup", {"name": "landlord"})]),
        {"span_id": "t1", "kind": "tool", "tool_name": "lookup", "arguments": "\"landlord\"",
         "result": "\"ok\"", "tool_call_id": ""},
        {"span_id": "t2", "kind": "tool", "tool_name": "lookup", "arguments": "\"someone else\"",
         "result": "\"ok\"", "tool_call_id": ""},
        {"span_id": "t3", "kind": "tool", "tool_name": "fetch", "arguments": "\"http://x\"",
         "result": "\"ok\""},
        {"span_id": "t4", "kind": "tool", "tool_name": "grep", "arguments": "\"needle\"",
         "result": "\"ok\"", "attributes": {"tool.name": "grep", "tool.parameters": json.dumps(
             {"type": "object", "properties": {"pattern": {"type": "string"}}})}},
    ]
    normalise_steps(steps, {"fetch": {"type": "object", "properties": {"url": {}}}})
    assert json.loads(steps[1]["arguments"]) == {"name": "landlord"}
    assert json.loads(steps[2]["arguments"]) == "someone else"  # no call said so, no schema
    assert json.loads(steps[3]["arguments"]) == {"url": "http://x"}
    assert json.loads(steps[4]["arguments"]) == {"pattern": "needle"}  # the span's own schema
    again = json.dumps(steps, default=str)
    normalise_steps(steps)
    assert json.dumps(steps, default=str) == again  # idempotent


def test_turns_text():
    assert turns_text(parse_turns("hello")) == "hello"
    two = json.loads(turns_text(parse_turns([{"role": "user", "content": "a"},
                                             {"role": "tool", "content": "b"}])))
    assert two == [{"role": "user", "content": "a"}, {"role": "tool_result", "content": "b"}]


def _trace(result_role: str):
    iban = "DE89370400440532013000"
    history = [
        {"role": "user", "parts": [{"type": "text", "content": "Pay the bill in bill.txt"}]},
        {"role": "assistant", "parts": [
            {"type": "tool_call", "id": "c1", "name": "read_file", "arguments": {"path": "bill.txt"}}]},
        {"role": result_role, "parts": [
            {"type": "tool_call_response", "id": "c1", "name": "read_file",
             "result": f"Send it to {iban} today"}]},
    ]
    return [
        {"span_id": "a", "kind": "llm", "input": json.dumps(history[:1]), "output": ""},
        {"span_id": "b", "kind": "tool", "tool_name": "read_file",
         "arguments": json.dumps({"path": "bill.txt"}), "result": json.dumps(f"Send it to {iban} today")},
        {"span_id": "c", "kind": "llm", "input": json.dumps(history), "output": ""},
        {"span_id": "d", "kind": "tool", "tool_name": "send_money",
         "arguments": json.dumps({"recipient": iban, "amount": 84.5}), "result": "\"sent\""},
    ]


def _recipient(steps):
    normalise_steps(steps)
    return next(r for r in infer_provenance(steps, b"salt") if r.path == "recipient")


@pytest.mark.parametrize("role", ["user", "tool"])
def test_a_tool_result_in_a_user_message_is_not_the_users_word(role):
    rec = _recipient(_trace(role))
    assert (rec.source_kind, rec.source_span_id, rec.trusted) == ("tool_result", "b", False)
    assert rec.flags and not rec.ambiguous


def test_a_result_only_in_the_history_is_still_a_tool_result():
    steps = [s for s in _trace("user") if s["span_id"] != "b"]  # the tool span was not exported
    rec = _recipient(steps)
    assert (rec.source_kind, rec.source_span_id, rec.trusted) == ("tool_result", "c", False)
    assert rec.source_ref == "read_file" and rec.flags
