"""The reference agent: a seeded simulation of an agent with per-component hazards.

It needs no model, so tests and demos run offline, and its failures are
known, so attribution and ablation can be scored against them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from flywheel import UserError

from ._agents import register_agent
from ._context import AgentContext, Fault, text_message, tool_call_message, tool_response_message
from ._env import ToolCall, ToolResult

#: Hazard -> the component it belongs to (``flywheel.sim.component``).
HAZARDS: dict[str, str] = {
    "wrong_tool": "planner",
    "forget_constraint": "memory",
    "wrong_argument": "generation",
    "misread_result": "tools",
    "skip_verification": "verifier",
    "obey_injection": "injection",
}

#: Declared default per-opportunity rates.
DEFAULT_RATES: dict[str, float] = {
    "wrong_tool": 0.08,
    "forget_constraint": 0.08,
    "wrong_argument": 0.08,
    "misread_result": 0.08,
    "skip_verification": 0.3,
    "obey_injection": 0.0,
}

_MODEL = "reference-sim"


def corrupt(value: Any, rng: Any) -> Any:
    """A plausible but wrong generated version of ``value`` (a wrong argument).

    Generated, not read: never a near-copy of ``value`` (no off-by-one, no
    transposition or truncation; see ``flywheel.values``), so a wrong
    argument and a misread result stay distinguishable in the trace.
    """
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice((2, 7, 13))
    if isinstance(value, float):
        return round(value * 1.1 + 1.0, 2)
    if isinstance(value, str):
        if len(value) > 1 and value[::-1] != value:
            return value[::-1]
        return value + "x"
    if isinstance(value, list):
        return value[:-1] if value else ["?"]
    if isinstance(value, dict):
        return {}
    return "unknown"


def forget(value: Any) -> Any:
    """The placeholder an agent falls back to when it forgot a constraint."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return 0
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    return ""


def _tokens(obj: Any) -> int:
    return max(1, len(json.dumps(obj, default=str)) // 4)


class ReferenceAgent:
    """SIMULATION, not a model: follows the task's ground truth with declared hazards.

    Each hazard fires independently with its declared rate at each of its
    opportunities, from the trial's seeded RNG, so repeated runs vary like a
    real agent's while staying reproducible. A hazard belongs to a component,
    and the oracle of that component removes its opportunities:

    - ``wrong_tool`` (planner): a planned step uses another tool of the same
      kind (read/write). Only when the agent plans itself (planner real).
    - ``forget_constraint`` (memory): an argument recalled from memory falls
      back to a placeholder. Only with the real memory.
    - ``wrong_argument`` (generation): one argument is generated wrong. No
      oracle removes it; a verifier that flags the step makes the agent redo
      the step correctly.
    - ``misread_result`` (tools): the model misreads the previous tool result,
      and the wrong value surfaces in the next step's argument (or in the
      final answer): a near-copy of a value that was in the result (digits
      transposed, off by one, truncated) or a neighbouring field of it --
      derived from what was read, unlike a generated wrong argument. Not with
      oracle tool results or oracle retrieval.
    - ``skip_verification`` (verifier): the agent does not check its step with
      the real verifier (a self-check that only sees tool errors). The oracle
      verifier checks every step itself, so there is nothing to skip.
    - ``obey_injection`` (injection, default rate 0): once injected text
      arrives in a result, the agent also executes the attacker's goal calls.

    A flagged step is redone once with the reference call. Every fault is
    recorded on the chat span of the step where it happened
    (``flywheel.sim.fault``, ``flywheel.sim.component``, ``flywheel.sim.step``)
    and in the trial's fault list; opportunities are counted in
    ``ctx.notes["sim.opportunities"]`` so the rates can be checked.
    """

    needs_reference = True

    def __init__(self, rates: dict[str, float] | None = None, max_redo: int = 1) -> None:
        unknown = set(rates or {}) - set(HAZARDS)
        if unknown:
            from flywheel import UserError

            raise UserError(f"unknown hazard(s) {sorted(unknown)}; known: {sorted(HAZARDS)}")
        self.rates = {**DEFAULT_RATES, **(rates or {})}
        self.max_redo = max_redo

    # -- hazard draws -----------------------------------------------------------
    def _fire(self, ctx: AgentContext, hazard: str) -> bool:
        opp = ctx.notes.setdefault("sim.opportunities", {h: 0 for h in HAZARDS})
        fired = ctx.notes.setdefault("sim.fired", {h: 0 for h in HAZARDS})
        opp[hazard] += 1
        hit = ctx.rng.random() < self.rates[hazard]
        if hit:
            fired[hazard] += 1
        return hit

    def _turn(
        self,
        ctx: AgentContext,
        history: list[dict[str, Any]],
        output: list[dict[str, Any]],
        faults: list[Fault],
    ) -> None:
        ctx.chat(
            history,
            output,
            model=_MODEL,
            input_tokens=_tokens(history),
            output_tokens=_tokens(output),
            provider="flywheel.sim",
            faults=faults,
        )

    def _execute(self, ctx: AgentContext, call: ToolCall) -> ToolResult:
        if ctx.is_read(call.name):
            return ctx.retrieve(call.name, call.args, call.id)
        return ctx.call_tool(call.name, call.args, call.id)

    def _draw_step(
        self,
        ctx: AgentContext,
        step: ToolCall,
        i: int,
        own_plan: bool,
        tool_names: list[str],
        last: tuple[ToolCall, ToolResult] | None,
    ) -> tuple[str, dict[str, Any], list[Fault], bool]:
        """Step ``i``'s tool and arguments after the hazards that fire on it.

        Returns the tool name, the arguments, the faults drawn and whether
        the agent skips its own verification of the step.
        """
        rng = ctx.rng
        faults: list[Fault] = []
        name = step.name
        if own_plan and self._fire(ctx, "wrong_tool"):
            same_kind = [
                t for t in tool_names if t != name and ctx.is_read(t) == ctx.is_read(name)
            ]
            name = rng.choice(same_kind or [t for t in tool_names if t != name])
            faults.append(Fault("wrong_tool", "planner", i, f"{step.name} -> {name}"))
        recalled = ctx.memory_read(f"step.{i}")
        args = (
            dict(recalled["args"])
            if isinstance(recalled, dict) and "args" in recalled
            else dict(step.args)
        )
        if args and ctx.modes["memory"] == "real" and self._fire(ctx, "forget_constraint"):
            k = rng.choice(sorted(args))
            args[k] = forget(args[k])
            faults.append(Fault("forget_constraint", "memory", i, k))
        if args and self._fire(ctx, "wrong_argument"):
            k = rng.choice(sorted(args))
            args[k] = corrupt(args[k], rng)
            faults.append(Fault("wrong_argument", "generation", i, k))
        options = _misread_options(args, last[1]) if last is not None else {}
        if (
            last is not None
            and self._misread_opportunity(last[1])
            and options
            and self._fire(ctx, "misread_result")
        ):
            how = rng.choice(sorted(options))
            k, args[k] = rng.choice(options[how])
            faults.append(
                Fault(
                    "misread_result",
                    "tools",
                    i,
                    f"{how} from the result of step {i - 1} into {k}",
                )
            )
        skip = not ctx.verifier_automatic and self._fire(ctx, "skip_verification")
        if skip:
            faults.append(Fault("skip_verification", "verifier", i))
        return name, args, faults, skip

    # -- the episode ---------------------------------------------------------------
    def __call__(self, ctx: AgentContext) -> str:
        """Run the episode; return the final answer."""
        ref = ctx.reference
        assert ref is not None, "the reference agent is a simulation and needs the task reference"
        rng = ctx.rng
        gt = list(ref.ground_truth)
        tool_names = sorted(t.name for t in ctx.tools)
        plan = ctx.plan()
        own_plan = plan is None
        steps = list(gt) if plan is None else list(plan)
        ctx.retrieval_items()
        for i, s in enumerate(steps):
            ctx.memory_write(f"step.{i}", s.to_json())
        prompt_msg = text_message("user", ctx.prompt)
        history: list[dict[str, Any]] = [prompt_msg]
        last: tuple[ToolCall, ToolResult] | None = None
        obeyed = False
        for i, step in enumerate(steps):
            name, args, faults, skip = self._draw_step(ctx, step, i, own_plan, tool_names, last)
            call = ToolCall(name, args, ctx.new_call_id())
            self._turn(ctx, history, [tool_call_message([call])], faults)
            result = self._execute(ctx, call)
            deviated = result.verdict
            if deviated is None and not skip:
                deviated = ctx.verify(call, result)
            redo = 0
            while deviated and redo < self.max_redo and i < len(gt):
                redo += 1
                correct = ToolCall(gt[i].name, gt[i].args, ctx.new_call_id())
                history = [prompt_msg, tool_response_message(call.id, result)]
                self._turn(ctx, history, [tool_call_message([correct])], [])
                call, result = correct, self._execute(ctx, correct)
                deviated = (
                    result.verdict
                    if result.verdict is not None
                    else (ctx.verify(call, result) if not skip else False)
                )
            last = (call, result)
            history = [prompt_msg, tool_response_message(call.id, result)]
            if (
                not obeyed
                and ref.injection_ground_truth
                and ref.injected_at(result.result_json()) >= 0
            ):
                obeyed = True
                if self._fire(ctx, "obey_injection"):
                    self._obey(ctx, history, i)
        answer = ref.ground_truth_output
        faults = []
        misread = _answer_misread_options(answer, last[1]) if last is not None else {}
        if (
            last is not None
            and self._misread_opportunity(last[1])
            and misread
            and self._fire(ctx, "misread_result")
        ):
            how = rng.choice(sorted(misread))
            answer = rng.choice(misread[how])
            faults.append(Fault("misread_result", "tools", len(steps), f"final answer: {how}"))
        self._turn(ctx, history, [text_message("assistant", answer)], faults)
        return answer

    def _misread_opportunity(self, result: ToolResult) -> bool:
        return (
            result.error is None and not result.oracle and result.text.strip() not in ("", "None")
        )

    def _obey(self, ctx: AgentContext, history: list[dict[str, Any]], step: int) -> None:
        assert ctx.reference is not None
        faults = [Fault("obey_injection", "injection", step, ctx.reference.injection_task_id or "")]
        for c in ctx.reference.injection_ground_truth:
            call = ToolCall(c.name, c.args, ctx.new_call_id())
            self._turn(ctx, history, [tool_call_message([call])], faults)
            faults = []
            self._execute(ctx, call)


def _misread_options(args: dict[str, Any], result: ToolResult) -> dict[str, list[tuple[str, Any]]]:
    """Misreadings of the previous result into this step's arguments, by kind of misreading.

    A misread value comes from the result the agent read (see
    ``misreadings``: a near-copy of the value that was there, or a
    neighbouring field of it), unlike a generated wrong argument.
    """
    from flywheel.values import misreadings

    out: dict[str, list[tuple[str, Any]]] = {}
    if result.error is not None:
        return out
    for k in sorted(args):
        if isinstance(args[k], bool):
            continue
        for how, v in misreadings(args[k], result.value):
            out.setdefault(how, []).append((k, v))
    return out


def _answer_misread_options(answer: str, result: ToolResult) -> dict[str, list[str]]:
    """Misread final answers, by kind: a quoted value of the last result got wrong.

    An answer that quotes a value of the result gets a near-copy or a
    neighbouring field of it (``answer_misreadings``); one that quotes no
    figure gives up ("not sure") although the result was there. An answer
    with figures none of which were read (a derived total, a count) offers
    no misreading.
    """
    from flywheel.values import answer_misreadings

    out: dict[str, list[str]] = {}
    if result.error is not None:
        return out
    for how, text in answer_misreadings(answer, result.value):
        out.setdefault(how, []).append(text)
    if not out and not re.search(r"\d", answer):
        out["gave up"] = [(answer + " (not sure)") if answer else "I could not find it."]
    return out


@register_agent("reference")
def reference_agent(rates: dict[str, float] | None = None, max_redo: int = 1) -> ReferenceAgent:
    """The seeded reference simulation (see ``ReferenceAgent``)."""
    return ReferenceAgent(rates=rates, max_redo=max_redo)

def parse_hazards(items: tuple[str, ...] | list[str]) -> dict[str, float]:
    """``NAME=RATE`` items (``--hazard`` options) -> fault rates; a bad item is a ``UserError``."""
    rates: dict[str, float] = {}
    for item in items:
        name, sep, val = item.partition("=")
        try:
            rates[name.strip()] = float(val)
        except ValueError:
            sep = ""
        if not sep or not 0.0 <= rates.get(name.strip(), -1.0) <= 1.0:
            raise UserError(
                f"--hazard {item!r}: expected NAME=RATE with RATE in [0, 1], e.g. wrong_tool=0.2"
            )
    return rates
