"""Message shapes of real instrumentation libraries, read into one model of turns.

The span table keeps what the libraries sent; the ``agent_steps`` view picks,
per span, the attributes that hold a conversation or a tool call (SQL cannot
parse the shapes below). This module is the one place that interprets them:
provenance, attribution, promotion and the trace API (hence the TUI) read
steps through ``normalise_steps``.

Turns (``Turn.role``): ``system``, ``user``, ``assistant`` (the model's words),
``tool_call`` (a call the model asked for: name, call id, arguments) and
``tool_result`` (what a tool returned: call id, content). A turn's role comes
from what the part *is*, not from the message it travels in: pydantic-ai and
Anthropic put tool results inside ``role: "user"`` messages, and those are
tool results, never the user's words.

Shapes read, wherever a step's input or output holds them:

- OTel GenAI ``gen_ai.input.messages`` / ``gen_ai.output.messages``
  (``{"role", "parts": [text | tool_call | tool_call_response]}``), with
  ``gen_ai.system_instructions`` (the view packs both into one object);
- OpenInference ``llm.input_messages.N.message.*`` / ``llm.output_messages.*``
  (flattened keys; the view packs them into one object), and OpenLLMetry's
  older ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``;
- OpenAI chat messages (``content``, ``tool_calls``, ``tool_call_id``), OpenAI
  Responses items (``function_call``, ``function_call_output``), Anthropic
  content blocks (``tool_use``, ``tool_result``);
- LangChain messages as constructor JSON (``"lc": 1, "type": "constructor"``),
  as ``message_to_dict`` (``{"type": "human", "data": {...}}``) and as
  ``LLMResult`` generations;
- smolagents roles ``tool-call`` / ``tool-response``, and a message printed
  as a Python ``repr`` (the OTel-contrib OpenAI Agents instrumentor's output).

Tool calls: arguments are parsed (JSON, else a Python literal); wrappers are
removed: smolagents' ``{"args", "sanitize_inputs_outputs", "kwargs"}``, a
decorator's ``{"args", "kwargs"}``, OpenLLMetry's LangChain ``{"input_str",
"inputs", "kwargs": {"tool_call_id"}}``. Results lose LangChain's ToolMessage
wrapper (``message_to_dict`` or constructor form, also inside OpenLLMetry's
``{"output", "kwargs"}``); a ToolMessage's text that is JSON becomes the
value. A bare value (a one-argument LangChain tool) is named after the
argument the model's own call of that tool used, or the tool's schema when
it has one property, and becomes an object.

Nothing here raises on a shape it does not know: such input gives no turns
(a plain string is one turn of the default role).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any

from flywheel.tools import definitions_from_attributes

from ._models import Turn

#: Longest text tried as a Python literal (a repr), to bound parsing work.
MAX_LITERAL = 200_000
#: Deepest nesting of messages read (lists of lists, wrappers, reprs in reprs);
#: anything deeper gives no turns rather than exhausting the stack.
MAX_DEPTH = 8
#: Most segments of a flattened key that are read (deeper keys are skipped).
MAX_KEY_SEGMENTS = 12

_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "tool": "tool_result",
    "function": "tool_result",
    "ipython": "tool_result",
    "tool-response": "tool_result",
    "tool_response": "tool_result",
    "tool-call": "tool_call",
    "tool_call": "tool_call",
}
#: LangChain message classes (``id[-1]`` of constructor JSON) -> role.
_LC_CLASSES = {
    "SystemMessage": "system",
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "ToolMessage": "tool",
    "FunctionMessage": "function",
}
#: ``message_to_dict`` types.
_LC_TYPES = {"system", "human", "ai", "tool", "function", "chat", "AIMessageChunk"}
_FLAT_PREFIXES = (
    ("llm.input_messages.", ("llm", "input_messages")),
    ("llm.output_messages.", ("llm", "output_messages")),
    ("gen_ai.prompt.", ("gen_ai", "prompt")),
    ("gen_ai.completion.", ("gen_ai", "completion")),
)
#: Keys of an agent's input that hold the user's request as text.
_REQUEST_KEYS = ("task", "input", "query", "question", "prompt")
_TEXT_BLOCKS = {"text", "input_text", "output_text"}


# -- values -------------------------------------------------------------------
def _literal(text: str) -> Any:
    """A Python literal (a repr of dicts, lists, strings), or None."""
    if len(text) > MAX_LITERAL:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def parse_value(value: Any) -> Any:
    """A JSON or Python-literal text as its value (objects and arrays only); else as is."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text[:1] not in ("{", "["):
        return value
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        found = _literal(text)
        return found if isinstance(found, dict | list) else value


def _unflatten(flat: Mapping[str, Any]) -> Any:
    """Dotted keys (numeric segments are list positions) as nested values."""
    root: dict[str, Any] = {}
    for key, value in flat.items():
        parts = key.split(".")
        if not parts or len(parts) > MAX_KEY_SEGMENTS:
            continue
        node = root
        for p in parts[:-1]:
            nxt = node.get(p)
            if not isinstance(nxt, dict):
                nxt = node[p] = {}
            node = nxt
        if not isinstance(node.get(parts[-1]), dict):
            node[parts[-1]] = value
    return _listify(root)


def _listify(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if node and all(k.isdigit() for k in node):
        return [_listify(node[k]) for k in sorted(node, key=int)]
    return {k: _listify(v) for k, v in node.items()}


# -- messages -----------------------------------------------------------------
def _text(content: Any) -> str:
    """The text of a message content: a string, or the text blocks of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        inner = content.get("message_content", content)
        if isinstance(inner, Mapping) and inner.get("type", "text") in _TEXT_BLOCKS:
            text = inner.get("text", inner.get("content"))
            return text if isinstance(text, str) else ""
        return ""
    if isinstance(content, list):
        return "\n".join(t for t in (_text(c) for c in content) if t)
    return ""


def _call(tc: Mapping[str, Any]) -> Turn | None:
    """One tool call in any of the libraries' forms."""
    if isinstance(tc.get("tool_call"), Mapping):  # OpenInference
        tc = tc["tool_call"]
    fn = tc.get("function") if isinstance(tc.get("function"), Mapping) else tc
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    args = next((fn[k] for k in ("arguments", "args", "input") if k in fn), None)
    call_id = tc.get("id") or tc.get("call_id") or tc.get("tool_call_id") or ""
    return Turn(role="tool_call", tool_name=name, call_id=str(call_id),
                arguments=parse_value(args) if args is not None else None)


def _calls(value: Any) -> list[Turn]:
    items = value if isinstance(value, list) else [value] if isinstance(value, Mapping) else []
    return [t for t in (_call(tc) for tc in items if isinstance(tc, Mapping)) if t is not None]


def _result(content: Any, call_id: Any = "", name: Any = "") -> Turn:
    text = _text(content)
    return Turn(role="tool_result", content=text if text or content is None else content,
                call_id=str(call_id or ""), tool_name=str(name or ""))


def _parts(parts: list[Any], role: str, depth: int = 0) -> list[Turn]:
    """GenAI parts and Anthropic/OpenAI content blocks, in order; text joins per run."""
    out: list[Turn] = []
    text: list[str] = []

    def flush() -> None:
        if text:
            out.extend(_said(role, "\n".join(text), depth))
            text.clear()

    for p in parts:
        if isinstance(p, str):
            text.append(p)
            continue
        if not isinstance(p, Mapping):
            continue
        kind = p.get("type", "text")
        if kind in ("tool_call", "tool_use", "function_call"):
            flush()
            out.extend(_calls(p))
        elif kind in ("tool_call_response", "tool_result", "function_call_output"):
            flush()
            body = next((p[k] for k in ("response", "result", "content", "output") if k in p), None)
            out.append(_result(body, p.get("id") or p.get("tool_use_id") or p.get("call_id"),
                               p.get("name")))
        elif kind in _TEXT_BLOCKS or "message_content" in p:
            t = _text(p) or (p.get("content") if isinstance(p.get("content"), str) else "")
            if t:
                text.append(t)
    flush()
    return out


def _said(role: str, text: str, depth: int = 0) -> list[Turn]:
    """A text a role said; a repr of a whole message (assistant) is read as that message."""
    if role == "tool_result":
        return [Turn(role="tool_result", content=text)]
    if role == "tool_call":  # smolagents: "Calling tools:\n[{...}]"
        start = text.find("[")
        found = _literal(text[start:]) if start >= 0 else None
        calls = _calls(found) if isinstance(found, list) else []
        return calls or [Turn(role="tool_call", content=text)]
    stripped = text.strip()
    if role == "assistant" and stripped.startswith("{") and "'role'" in stripped[:2000]:
        found = _literal(stripped)
        if isinstance(found, dict):
            return _message(found, role, depth + 1)
    return [Turn(role=role, content=text)] if stripped else []


def _role(raw: Any, default: str) -> str:
    if not isinstance(raw, str) or not raw:
        return default
    # an unknown speaker (another agent's name) is a model speaking, never the principal
    return _ROLES.get(raw.lower(), "assistant")


def _message(m: Mapping[str, Any], default: str, depth: int = 0) -> list[Turn]:
    """One message (or item) in any library's form."""
    if depth > MAX_DEPTH:
        return []
    body: Mapping[str, Any] = m
    role_raw: Any = m.get("role")
    if m.get("lc") == 1 and m.get("type") == "constructor" and isinstance(m.get("kwargs"), Mapping):
        body = m["kwargs"]
        cls = str((m.get("id") or [""])[-1]).removesuffix("Chunk")
        role_raw = _LC_CLASSES.get(cls) or body.get("role") or body.get("type")
    elif m.get("type") in _LC_TYPES and isinstance(m.get("data"), Mapping):
        body = m["data"]
        role_raw = body.get("role") if m["type"] == "chat" else m["type"]
    elif m.get("type") in ("function_call", "function_call_output"):  # OpenAI Responses items
        return _parts([m], "assistant")
    elif "role" not in m and isinstance(m.get("message"), Mapping):
        return _message(m["message"], default, depth + 1)  # OpenInference entry, LC generation
    elif "role" not in m and m.get("type") == "ChatGeneration" and isinstance(m.get("text"), str):
        return _said(default, m["text"], depth)
    role = _role(role_raw, default)
    out: list[Turn] = []
    if isinstance(body.get("parts"), list):
        out += _parts(body["parts"], role, depth)
    content = body.get("content")
    if isinstance(body.get("contents"), list):  # OpenInference multimodal contents
        content = body["contents"]
    if role == "tool_result" and not isinstance(body.get("parts"), list):
        text = _text(content)
        out.append(_result(text if text else content, body.get("tool_call_id"), body.get("name")))
    elif isinstance(content, list):
        out += _parts(content, role, depth)
    elif isinstance(content, str):
        out += _said(role, content, depth)
    for key in ("tool_calls", "function_call"):
        if body.get(key):
            out += _calls(body[key])
    # a tool message's text part repeating its tool_call_response part is one result
    answered = {json.dumps(t.content, default=str) for t in out if t.role == "tool_result" and t.call_id}
    return [t for t in out if not (t.role == "tool_result" and not t.call_id
                                   and json.dumps(t.content, default=str) in answered)]


def _bag(value: Mapping[str, Any], default: str, depth: int) -> list[Turn] | None:
    """An object the view packed from span attributes, or None when it is not one."""
    for prefix, path in _FLAT_PREFIXES:
        flat = {k: v for k, v in value.items() if k.startswith(prefix)}
        if flat:
            tree = _unflatten(flat)
            for p in path:
                tree = tree.get(p) if isinstance(tree, dict) else None
            return _turns(tree, default, depth + 1) if isinstance(tree, list) else []
    if "gen_ai.system_instructions" in value or "gen_ai.input.messages" in value:
        instructions = parse_value(value.get("gen_ai.system_instructions") or "")
        out = [Turn(role="system", content=t) for t in [_text(instructions)] if t]
        messages = parse_value(value.get("gen_ai.input.messages") or "")
        return out + (_turns(messages, default, depth + 1) if messages else [])
    return None


def _turns(value: Any, default: str, depth: int = 0) -> list[Turn]:
    if depth > MAX_DEPTH:
        return []
    if isinstance(value, str):
        return _said(default, value, depth)
    if isinstance(value, list):
        out: list[Turn] = []
        for item in value:
            if isinstance(item, list):
                out += _turns(item, default, depth + 1)
            elif isinstance(item, Mapping):
                out += _message(item, default, depth + 1)
            elif isinstance(item, str):
                out += _said(default, item, depth)
        return out
    if not isinstance(value, Mapping):
        return []
    bag = _bag(value, default, depth)
    if bag is not None:
        return bag
    for key in ("messages", "generations", "choices"):
        if key in value:
            return _turns(value[key], default, depth + 1)
    if "args" in value and set(value) <= {"args", "kwargs"}:  # a decorator's call record
        kwargs = value.get("kwargs")
        inner = value["args"] or (kwargs if isinstance(kwargs, Mapping) else [])
        return _turns(inner, default, depth + 1)
    if default == "assistant" and isinstance(value.get("name"), str) and (
        "arguments" in value or "args" in value
    ):
        return _calls(value)  # a function call returned as is
    if any(k in value for k in ("role", "parts", "lc", "data", "tool_calls")) or (
        value.get("type") in ("function_call", "function_call_output")
    ):
        return _message(value, default, depth + 1)
    if default == "user":  # an agent's input: the request, when it is a named text
        for key in _REQUEST_KEYS:
            if isinstance(value.get(key), str) and value[key].strip():
                return [Turn(role="user", content=value[key])]
    return []


def parse_turns(source: Any, default_role: str = "user") -> list[Turn]:
    """The turns of a step's input (``default_role="user"``) or output (``"assistant"``).

    ``source`` is the stored text (JSON, a packed attribute object, or plain
    text) or an already parsed value. Unknown shapes give no turns.
    """
    if source is None or source == "":
        return []
    if isinstance(source, str):
        value = parse_value(source)
        if isinstance(value, str):
            return _said(default_role, value) if value.strip() else []
        return _turns(value, default_role)
    return _turns(source, default_role)


def turns_text(turns: Sequence[Turn]) -> str:
    """Turns as one text: a lone user or assistant text as itself, else a JSON list.

    The list holds ``{"role", "content", "tool_name", "call_id", "arguments"}``
    objects (empty fields left out), readable where OpenAI-style messages are.
    """
    if len(turns) == 1 and turns[0].role in ("user", "assistant") and isinstance(
        turns[0].content, str
    ):
        return turns[0].content
    return json.dumps(
        [t.model_dump(exclude_defaults=True) for t in turns], ensure_ascii=False, default=str
    )


# -- tool calls ---------------------------------------------------------------
def tool_arguments(raw: Any) -> tuple[Any, str]:
    """A tool step's arguments without the library's wrapper, and a call id found in it."""
    value = parse_value(raw) if isinstance(raw, str) else raw
    if isinstance(value, str):  # a JSON string holding a repr or JSON object
        value = parse_value(value)
    if not isinstance(value, dict):
        return value, ""
    keys = set(value)
    if "input_str" in keys and keys <= {"input_str", "inputs", "tags", "metadata", "kwargs"}:
        kwargs = value.get("kwargs") if isinstance(value.get("kwargs"), dict) else {}
        inputs = value.get("inputs")
        args = inputs if isinstance(inputs, dict) and inputs else parse_value(value["input_str"])
        return args, str(kwargs.get("tool_call_id") or "")
    if "kwargs" in keys and keys <= {"args", "kwargs", "sanitize_inputs_outputs"}:
        args, kwargs = value.get("args") or [], value.get("kwargs")
        if isinstance(kwargs, dict) and isinstance(args, list):
            if not args:
                return kwargs, ""
            return ({**kwargs, "args": args} if kwargs else args), ""
    return value, ""


def tool_result(raw: Any) -> tuple[Any, str]:
    """A tool step's result without LangChain's ToolMessage wrapper, and its call id."""
    value = parse_value(raw) if isinstance(raw, str) else raw
    if isinstance(value, dict) and set(value) <= {"output", "kwargs"} and "output" in value:
        value = value["output"]  # OpenLLMetry's LangChain tool span
    body: Any = None
    if isinstance(value, dict):
        if value.get("type") == "tool" and isinstance(value.get("data"), dict):
            body = value["data"]
        elif (value.get("lc") == 1 and value.get("type") == "constructor"
              and str((value.get("id") or [""])[-1]) == "ToolMessage"
              and isinstance(value.get("kwargs"), dict)):
            body = value["kwargs"]
    if body is None:
        return value, ""
    content = body.get("content")
    text = _text(content) if isinstance(content, list) else content
    return parse_value(text), str(body.get("tool_call_id") or "")


# -- steps --------------------------------------------------------------------
def _dump(value: Any) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False, default=str)


def _loads(text: Any) -> Any:
    if not isinstance(text, str) or not text:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _single_property(schema: Any) -> str:
    """The one property name of a JSON-schema object (or of a bare properties map)."""
    if not isinstance(schema, Mapping):
        return ""
    props = schema.get("properties", schema if "type" not in schema else None)
    if isinstance(props, Mapping) and len(props) == 1:
        return str(next(iter(props)))
    return ""


def _named(value: Any, tool: str, call_id: str, calls: Sequence[Turn],
           schemas: Callable[[], Mapping[str, Any]]) -> Any:
    """A bare argument value as ``{name: value}``, when the model's call or the schema names it."""
    if isinstance(value, dict | list) or value is None:
        return value
    same = [c for c in calls if c.tool_name == tool and isinstance(c.arguments, dict)
            and len(c.arguments) == 1]
    if call_id:
        same = [c for c in same if c.call_id == call_id] or same
    for c in reversed(same):  # the latest call of the tool before this step
        (key, v), = c.arguments.items()
        if v == value or str(v) == str(value):
            return {key: value}
    name = _single_property(schemas().get(tool))
    return {name: value} if name else value


def _walk_calls(turns: Iterable[Turn]) -> Iterator[Turn]:
    return (t for t in turns if t.role == "tool_call")


def normalise_steps(
    steps: Sequence[MutableMapping[str, Any]], schemas: Mapping[str, Any] | None = None
) -> Sequence[MutableMapping[str, Any]]:
    """Normalise a trace's steps in place (in start order) and return them.

    Each step is an ``agent_steps`` row as a dict (``input`` / ``output`` may
    be the stored text or its parsed value). Model and agent steps get
    ``input_turns`` and ``output_turns`` (lists of ``Turn``); tool steps get
    unwrapped ``arguments`` and ``result`` (still JSON text, as stored; left
    as stored when nothing changed), a bare argument named (see the module
    docstring; ``schemas`` maps a tool name to its parameters' JSON schema,
    added to the definitions in the steps' ``attributes``, when present),
    and ``tool_call_id`` filled from a wrapper when the span had none.
    Idempotent.
    """
    known: dict[str, Any] | None = None

    def all_schemas() -> Mapping[str, Any]:  # read only when a bare value needs a name
        nonlocal known
        if known is None:
            known = dict(schemas or {})
            for step in steps:  # definitions the spans carry, where attributes came along
                if step.get("attributes"):
                    for d in definitions_from_attributes(step["attributes"])[0]:
                        known.setdefault(d.name, d.parameters)
        return known

    calls: list[Turn] = []
    for step in steps:
        kind = step.get("kind")
        if kind in ("llm", "agent"):
            step["input_turns"] = parse_turns(step.get("input") or "", "user")
            step["output_turns"] = parse_turns(step.get("output") or "", "assistant")
            calls.extend(_walk_calls(step["output_turns"]))
            continue
        step.setdefault("input_turns", [])
        step.setdefault("output_turns", [])
        if kind != "tool":
            continue
        stored_args, stored_result = _loads(step.get("arguments")), _loads(step.get("result"))
        args, args_id = tool_arguments(stored_args)
        result, result_id = tool_result(stored_result)
        call_id = str(step.get("tool_call_id") or "") or args_id or result_id
        args = _named(args, str(step.get("tool_name") or ""), call_id, calls, all_schemas)
        if args != stored_args:
            step["arguments"] = _dump(args)
        if result != stored_result:
            step["result"] = _dump(result)
        if "tool_call_id" in step or call_id:
            step["tool_call_id"] = call_id
    return steps
