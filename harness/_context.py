"""The per-trial agent context: the only door from an agent to the world.

Every seam call charges the budget meter and becomes an OpenTelemetry span
with the GenAI conventions (``execute_tool`` with ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments`` / ``.result`` as JSON
strings; ``chat`` with ``gen_ai.input.messages`` / ``gen_ai.output.messages``
and usage; ``retrieval``; ``memory_read`` / ``memory_write``), tagged with the
trial's identity (``flywheel.task.id``, ``flywheel.trial.id``,
``flywheel.env.id``, ``flywheel.config.id``) and the seam modes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from flywheel import canonical_json

from ._budget import BudgetMeter
from ._env import Environment, TaskInfo, ToolCall, ToolResult, ToolSpec
from ._seams import SeamConfig, build_seam


@dataclass
class Fault:
    """A simulated fault a simulation agent injected (scored by attribution later)."""

    kind: str
    component: str
    step: int
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "kind": self.kind,
            "component": self.component,
            "step": self.step,
            "detail": self.detail,
        }


@dataclass
class Usage:
    """Tokens and cost a trial spent."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    chat_calls: int = 0


def text_message(role: str, text: str) -> dict[str, Any]:
    """A GenAI-convention message with one text part."""
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def tool_call_message(calls: list[ToolCall]) -> dict[str, Any]:
    """An assistant message requesting tool calls (GenAI parts)."""
    return {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.args} for c in calls
        ],
    }


def tool_response_message(call_id: str, result: ToolResult) -> dict[str, Any]:
    """A tool message carrying one result (GenAI parts)."""
    return {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": call_id, "response": result.text}],
    }


@dataclass
class AgentContext:
    """What an agent may use during one trial: prompt, tools and the five seams.

    ``reference`` is set only for simulation agents (``needs_reference``); a
    real agent never sees the task's ground truth. The environment itself is
    private: tools, reads and memory go through the seams, which count
    against the budget and leave spans.
    """

    _env: Environment
    task: TaskInfo
    seams: SeamConfig
    meter: BudgetMeter
    tracer: trace.Tracer
    attributes: dict[str, Any]
    rng: random.Random
    reference: TaskInfo | None = None
    calls: list[ToolCall] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    notes: dict[str, Any] = field(default_factory=dict)
    _impl: dict[str, Any] = field(default_factory=dict)
    _read_only: dict[str, bool] = field(default_factory=dict)
    _next_id: int = 0

    def __post_init__(self) -> None:
        self._impl = {s.seam: build_seam(s, self._env) for s in self.seams.specs}
        self._read_only = {t.name: t.read_only for t in self._env.tools()}

    # -- what the agent sees ------------------------------------------------
    @property
    def prompt(self) -> str:
        """The user's request."""
        return self.task.prompt

    @property
    def tools(self) -> list[ToolSpec]:
        """The environment's tool set."""
        return self._env.tools()

    @property
    def modes(self) -> dict[str, str]:
        """Seam -> real/oracle."""
        return self.seams.modes()

    def is_read(self, name: str) -> bool:
        """True for a retrieval-type tool."""
        return self._read_only.get(name, False)

    def new_call_id(self) -> str:
        """A fresh tool-call id, unique within the trial."""
        self._next_id += 1
        return f"call_{self._next_id}"

    # -- spans ----------------------------------------------------------------
    @contextmanager
    def _span(
        self, name: str, attrs: dict[str, Any], kind: SpanKind = SpanKind.INTERNAL
    ) -> Iterator[Any]:
        with self.tracer.start_as_current_span(
            name,
            kind=kind,
            attributes={**self.attributes, **attrs},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            yield span

    # -- tools --------------------------------------------------------------
    def call_tool(self, name: str, args: dict[str, Any], call_id: str = "") -> ToolResult:
        """Run one tool call through the tools seam (and the oracle verifier, if any)."""
        call = ToolCall(name, dict(args), call_id or self.new_call_id())
        self.meter.charge_call(write=not self.is_read(name))
        with self._span(
            f"execute_tool {name}",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.type": "function",
                "gen_ai.tool.call.id": call.id,
                "gen_ai.tool.call.arguments": canonical_json(call.args),
                "flywheel.seam": "tools",
                "flywheel.seam.mode": self.modes["tools"],
            },
        ) as span:
            self.calls.append(call)
            result: ToolResult = self._impl["tools"].call(call)
            span.set_attribute("gen_ai.tool.call.result", result.result_json())
            if result.oracle:
                span.set_attribute("flywheel.oracle", True)
            if result.error is not None:
                span.set_status(Status(StatusCode.ERROR, result.error[:500]))
                span.set_attribute("error.type", result.error.split(":", 1)[0])
            verifier = self._impl["verifier"]
            if verifier.automatic:
                result.verdict = self._verify_span(verifier, call, result)
        return result

    # -- retrieval ------------------------------------------------------------
    def retrieve(self, name: str, args: dict[str, Any], call_id: str = "") -> ToolResult:
        """A read-type call through the retrieval seam (the read itself runs as a tool call)."""
        impl = self._impl["retrieval"]
        with self._span(
            "retrieval",
            {
                "gen_ai.operation.name": "retrieval",
                "gen_ai.data_source.id": name,
                "flywheel.seam": "retrieval",
                "flywheel.seam.mode": self.modes["retrieval"],
                "flywheel.input": canonical_json({"name": name, "args": args}),
            },
        ) as span:
            live = self.call_tool(name, args, call_id)
            call = self.calls[-1]
            result: ToolResult = impl.result(call, live)
            result.verdict = live.verdict
            span.set_attribute("flywheel.output", result.result_json())
        return result

    def retrieval_items(self) -> list[dict[str, Any]] | None:
        """The needed items up front (oracle retrieval), else None."""
        items: list[dict[str, Any]] | None = self._impl["retrieval"].needed()
        if items is None:
            return None
        self.meter.check()
        with self._span(
            "retrieval",
            {
                "gen_ai.operation.name": "retrieval",
                "flywheel.seam": "retrieval",
                "flywheel.seam.mode": self.modes["retrieval"],
                "flywheel.input": canonical_json({"needed": True}),
                "flywheel.output": canonical_json(items),
            },
        ):
            return items

    # -- memory ---------------------------------------------------------------
    def memory_write(self, key: str, value: Any) -> bool:
        """Write to the trial's memory seam; False when the seam refused it."""
        self.meter.check()
        with self._span(
            "memory_write",
            {
                "gen_ai.operation.name": "memory_write",
                "flywheel.memory.operation": "write",
                "flywheel.memory.key": key,
                "flywheel.seam": "memory",
                "flywheel.seam.mode": self.modes["memory"],
                "flywheel.input": canonical_json({key: value}),
            },
        ) as span:
            stored = bool(self._impl["memory"].write(key, value))
            span.set_attribute("flywheel.output", canonical_json({"stored": stored}))
            return stored

    def memory_read(self, key: str) -> Any:
        """Read from the trial's memory seam (None when absent)."""
        self.meter.check()
        with self._span(
            "memory_read",
            {
                "gen_ai.operation.name": "memory_read",
                "flywheel.memory.operation": "read",
                "flywheel.memory.key": key,
                "flywheel.seam": "memory",
                "flywheel.seam.mode": self.modes["memory"],
                "flywheel.input": canonical_json({"key": key}),
            },
        ) as span:
            value = self._impl["memory"].read(key)
            span.set_attribute("flywheel.output", canonical_json(value))
            return value

    # -- planner / verifier -------------------------------------------------
    def plan(self) -> list[ToolCall] | None:
        """The planner seam: the reference plan (oracle) or None (plan yourself)."""
        self.meter.check()
        with self._span(
            "plan",
            {"flywheel.seam": "planner", "flywheel.seam.mode": self.modes["planner"]},
        ) as span:
            plan: list[ToolCall] | None = self._impl["planner"].plan()
            span.set_attribute(
                "flywheel.output",
                canonical_json(None if plan is None else [c.to_json() for c in plan]),
            )
            return plan

    def _verify_span(self, verifier: Any, call: ToolCall, result: ToolResult) -> bool:
        with self._span(
            "verify",
            {
                "flywheel.seam": "verifier",
                "flywheel.seam.mode": self.modes["verifier"],
                "gen_ai.tool.call.id": call.id,
                "flywheel.input": canonical_json(call.to_json()),
            },
        ) as span:
            deviated = bool(verifier.verify(call, result))
            span.set_attribute("flywheel.verifier.deviated", deviated)
            span.set_attribute("flywheel.output", canonical_json({"deviated": deviated}))
            return deviated

    @property
    def verifier_automatic(self) -> bool:
        """True when the harness verifies each step itself (oracle verifier)."""
        return bool(self._impl["verifier"].automatic)

    def verify(self, call: ToolCall, result: ToolResult) -> bool:
        """Ask the verifier whether a step deviated (oracle verdicts are already on the result)."""
        self.meter.check()
        if result.verdict is not None:
            return result.verdict
        return self._verify_span(self._impl["verifier"], call, result)

    # -- model turns ------------------------------------------------------------
    def chat(
        self,
        input_messages: list[dict[str, Any]],
        output_messages: list[dict[str, Any]],
        *,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cost: float = 0.0,
        provider: str = "",
        faults: list[Fault] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Record one model turn as a ``chat`` span and charge its tokens."""
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "gen_ai.input.messages": json.dumps(input_messages, ensure_ascii=False, default=str),
            "gen_ai.output.messages": json.dumps(output_messages, ensure_ascii=False, default=str),
            "gen_ai.usage.input_tokens": int(input_tokens),
            "gen_ai.usage.output_tokens": int(output_tokens),
        }
        if cost:
            attrs["gen_ai.usage.cost"] = float(cost)
        if provider:
            attrs["gen_ai.provider.name"] = provider
        if faults:
            attrs["flywheel.sim.fault"] = ",".join(f.kind for f in faults)
            attrs["flywheel.sim.component"] = ",".join(f.component for f in faults)
            attrs["flywheel.sim.step"] = faults[0].step
            attrs["flywheel.sim.detail"] = canonical_json([f.to_json() for f in faults])
            self.faults.extend(faults)
        attrs.update(extra or {})
        with self._span(f"chat {model}", attrs, kind=SpanKind.CLIENT):
            self.usage.input_tokens += int(input_tokens)
            self.usage.output_tokens += int(output_tokens)
            self.usage.cost += float(cost)
            self.usage.chat_calls += 1
        self.meter.charge_tokens(int(input_tokens) + int(output_tokens))

    @contextmanager
    def subagent(self, name: str) -> Iterator[None]:
        """A nested agent (one level deeper; the depth budget applies)."""
        self.meter.enter()
        try:
            with self._span(
                f"invoke_agent {name}",
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name},
            ):
                yield
        finally:
            self.meter.leave()
