"""Agent adapters as registered factories, rebuildable from ``(name, args)``.

An agent is a callable ``agent(ctx: AgentContext) -> str`` returning its final
answer. Adapters: ``python`` (any importable callable), ``subprocess`` (a
program speaking JSON lines), ``openai`` (an OpenAI-compatible chat endpoint),
and the simulations ``reference``, ``ground_truth`` and
``injection_ground_truth``, which alone may read the task's reference
(``needs_reference``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flywheel import UserError

from ._context import AgentContext, text_message, tool_call_message, tool_response_message

Agent = Callable[[AgentContext], str]
AgentFactory = Callable[..., Agent]
_AGENTS: dict[str, AgentFactory] = {}


@dataclass(frozen=True)
class AgentSpec:
    """An agent by registered name and arguments (stored with every trial)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"name": self.name, "args": self.args}


def register_agent(name: str) -> Callable[[AgentFactory], AgentFactory]:
    """Register an agent factory ``factory(**args) -> agent``."""

    def deco(factory: AgentFactory) -> AgentFactory:
        _AGENTS[name] = factory
        return factory

    return deco


def agent_names() -> list[str]:
    """Registered agent names."""
    _load_builtin()
    return sorted(_AGENTS)


def _load_builtin() -> None:
    pass


def build_agent(spec: AgentSpec) -> Agent:
    """Instantiate an agent from its spec."""
    _load_builtin()
    try:
        factory = _AGENTS[spec.name]
    except KeyError:
        raise UserError(
            f"unknown agent {spec.name!r}; known: {', '.join(sorted(_AGENTS))}"
        ) from None
    return factory(**spec.args)


def parse_agent(text: str) -> AgentSpec:
    """Parse ``--agent`` into a spec.

    Accepted: ``reference``, ``ground_truth``, ``injection_ground_truth``,
    ``openai:URL[#MODEL]``, ``subprocess:COMMAND`` or ``module:function``.
    """
    import shlex

    if text in ("reference", "ground_truth", "injection_ground_truth"):
        return AgentSpec(text)
    if text.startswith("openai:"):
        url, _, model = text[len("openai:") :].partition("#")
        if not url.startswith(("http://", "https://")):
            raise UserError(f"--agent {text!r}: expected openai:http(s)://HOST/v1[#MODEL]")
        return AgentSpec("openai", {"base_url": url, "model": model or "default"})
    if text.startswith("subprocess:"):
        argv = shlex.split(text[len("subprocess:") :])
        if not argv:
            raise UserError(
                "--agent subprocess: needs a command, e.g. subprocess:'python my_agent.py'"
            )
        return AgentSpec("subprocess", {"argv": argv})
    module, sep, func = text.partition(":")
    if sep and module and func:
        return AgentSpec("python", {"target": text})
    raise UserError(
        f"--agent {text!r} not understood; use reference, module:function, "
        "openai:URL or subprocess:COMMAND"
    )


@register_agent("python")
def python_agent(target: str) -> Agent:
    """Import ``module:function`` and use it as the agent."""
    module_name, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise UserError(
            f"cannot import agent {target!r}: {exc}; check the module is on PYTHONPATH"
        ) from exc
    if not callable(obj):
        raise UserError(f"agent {target!r} is not callable")
    return obj  # type: ignore[no-any-return]


def _replay(ctx: AgentContext, calls: Any, output: str, model: str) -> str:
    last: list[dict[str, Any]] = [text_message("user", ctx.prompt)]
    for ref in calls:
        call_id = ctx.new_call_id()
        planned = type(ref)(ref.name, ref.args, call_id)
        ctx.chat(last, [tool_call_message([planned])], model=model, input_tokens=0, output_tokens=0)
        if ctx.is_read(ref.name):
            result = ctx.retrieve(ref.name, ref.args, call_id)
        else:
            result = ctx.call_tool(ref.name, ref.args, call_id)
        last = [text_message("user", ctx.prompt), tool_response_message(call_id, result)]
    ctx.chat(
        last, [text_message("assistant", output)], model=model, input_tokens=0, output_tokens=0
    )
    return output


class GroundTruthAgent:
    """Simulation: executes the user task's ground-truth calls, nothing else."""

    needs_reference = True

    def __call__(self, ctx: AgentContext) -> str:
        """Replay the reference calls through the seams; answer the reference output."""
        assert ctx.reference is not None
        return _replay(
            ctx, ctx.reference.ground_truth, ctx.reference.ground_truth_output, "ground-truth-sim"
        )


class InjectionGroundTruthAgent:
    """Simulation: executes the injection task's ground truth (a fully hijacked agent)."""

    needs_reference = True

    def __call__(self, ctx: AgentContext) -> str:
        """Replay the attacker's goal calls through the seams."""
        assert ctx.reference is not None
        ref = ctx.reference
        return _replay(
            ctx, ref.injection_ground_truth, ref.injection_ground_truth_output, "injection-sim"
        )


register_agent("ground_truth")(lambda: GroundTruthAgent())
register_agent("injection_ground_truth")(lambda: InjectionGroundTruthAgent())
