"""An agent behind an OpenAI-compatible chat endpoint (vLLM, Ollama, hosted).

Tool calling through ``POST {base_url}/chat/completions`` with httpx. The
seams reach the model as text: an oracle plan or the needed items go into the
system message, oracle verifier verdicts are appended to each tool message,
and the memory seam is offered as two tools (``memory_read``,
``memory_write``). Every model turn becomes a ``chat`` span with the whole
input conversation and the usage the endpoint reported.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx

from flywheel import UserError, canonical_json

from ._agents import register_agent
from ._context import AgentContext

SYSTEM_PROMPT = (
    "You are an assistant that completes the user's request by calling the tools provided. "
    "Call tools as needed, then answer the user briefly."
)

MEMORY_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "memory_write",
            "description": "Store a value in your scratch memory under a key.",
            "parameters": {
                "type": "object",
                "properties": {"key": {"type": "string"}, "value": {}},
                "required": ["key", "value"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "memory_read",
            "description": "Read the value under a key in your scratch memory (null if absent).",
            "parameters": {
                "type": "object",
                "properties": {"key": {"type": "string"}},
                "required": ["key"],
            },
        },
    },
]


def to_genai(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat messages -> GenAI-convention messages with parts."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m.get("role", "")
        parts: list[dict[str, Any]] = []
        if role == "tool":
            parts.append(
                {
                    "type": "tool_call_response",
                    "id": m.get("tool_call_id", ""),
                    "response": m.get("content"),
                }
            )
        else:
            if m.get("content"):
                parts.append({"type": "text", "content": m["content"]})
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function", {})
                try:
                    args: Any = json.loads(fn.get("arguments") or "{}")
                except json.JSONDecodeError:
                    args = fn.get("arguments")
                parts.append(
                    {
                        "type": "tool_call",
                        "id": tc.get("id", ""),
                        "name": fn.get("name", ""),
                        "arguments": args,
                    }
                )
        out.append({"role": role, "parts": parts})
    return out


class OpenAIChatAgent:
    """A real LLM agent over an OpenAI-compatible endpoint."""

    needs_reference = False

    def __init__(
        self,
        base_url: str,
        model: str = "default",
        api_key_env: str = "OPENAI_API_KEY",
        max_turns: int = 20,
        temperature: float = 0.0,
        timeout_s: float = 120.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.max_turns = max_turns
        self.temperature = temperature
        self.timeout_s = timeout_s

    def _system(self, ctx: AgentContext) -> str:
        text = SYSTEM_PROMPT
        plan = ctx.plan()
        if plan is not None:
            text += "\n\nFollow this plan (tool calls in order):\n" + canonical_json(
                [c.to_json() for c in plan]
            )
        items = ctx.retrieval_items()
        if items is not None:
            text += "\n\nThe data you need (retrieved for you):\n" + canonical_json(items)
        return text

    def _run_tool(self, ctx: AgentContext, call_id: str, name: str, raw: str) -> str:
        try:
            args = json.loads(raw or "{}")
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
        except (json.JSONDecodeError, ValueError) as exc:
            return f"Error: could not parse arguments: {exc}"
        if name == "memory_write":
            return json.dumps(
                {"stored": ctx.memory_write(str(args.get("key", "")), args.get("value"))}
            )
        if name == "memory_read":
            return json.dumps(ctx.memory_read(str(args.get("key", ""))), default=str)
        if ctx.is_read(name):
            result = ctx.retrieve(name, args, call_id)
        else:
            result = ctx.call_tool(name, args, call_id)
        text = result.text if result.error is None else f"Error: {result.error}"
        if result.verdict is not None:
            text += (
                "\n[verifier: this step deviated from the reference]"
                if result.verdict
                else "\n[verifier: ok]"
            )
        return text

    def __call__(self, ctx: AgentContext) -> str:
        """Talk to the endpoint until it answers without tool calls (or ``max_turns``)."""
        tools = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in ctx.tools
        ] + MEMORY_TOOLS
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self._system(ctx)},
            {"role": "user", "content": ctx.prompt},
        ]
        headers = {}
        key = os.environ.get(self.api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        answer = ""
        with httpx.Client(
            base_url=self.base_url, headers=headers, timeout=self.timeout_s
        ) as client:
            for _ in range(self.max_turns):
                remaining = ctx.meter.remaining_wall_s()
                body = {
                    "model": self.model,
                    "messages": messages,
                    "tools": tools,
                    "temperature": self.temperature,
                }
                try:
                    resp = client.post(
                        "/chat/completions", json=body, timeout=remaining or self.timeout_s
                    )
                    resp.raise_for_status()
                    data = resp.json()
                    msg = data["choices"][0]["message"]
                except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
                    raise UserError(f"chat endpoint {self.base_url} failed: {exc}") from exc
                usage = data.get("usage") or {}
                out_msg = {"role": "assistant", "content": msg.get("content") or ""}
                if msg.get("tool_calls"):
                    out_msg["tool_calls"] = msg["tool_calls"]
                ctx.chat(
                    to_genai(messages),
                    to_genai([out_msg]),
                    model=str(data.get("model") or self.model),
                    input_tokens=int(usage.get("prompt_tokens") or 0),
                    output_tokens=int(usage.get("completion_tokens") or 0),
                    provider="openai",
                    extra={
                        "gen_ai.response.id": str(data.get("id", "")),
                        "server.address": self.base_url,
                    },
                )
                messages.append(out_msg)
                answer = out_msg["content"]
                calls = msg.get("tool_calls") or []
                if not calls:
                    return answer
                for i, tc in enumerate(calls):
                    fn = tc.get("function") or {}
                    call_id = tc.get("id") or f"{ctx.new_call_id()}-{i}"
                    content = self._run_tool(
                        ctx, call_id, str(fn.get("name", "")), fn.get("arguments") or "{}"
                    )
                    messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
        return answer


@register_agent("openai")
def openai_agent(
    base_url: str,
    model: str = "default",
    api_key_env: str = "OPENAI_API_KEY",
    max_turns: int = 20,
    temperature: float = 0.0,
) -> OpenAIChatAgent:
    """An agent over an OpenAI-compatible ``/v1/chat/completions`` endpoint."""
    return OpenAIChatAgent(base_url, model, api_key_env, max_turns, temperature)
