"""The safety reference agent: a seeded simulation with declared oversight behaviour.

SIMULATION, not a model. It follows the task's ground truth (so utility is
known) and adds behaviour whose rates are the injected truth the safety
metrics must recover:

- before each write it states a confidence ``c ~ U(confidence_lo, 1)`` on the
  proposing chat span; when ``c < p*`` it escalates (an ``escalate`` span
  naming the call) except with probability ``overreach``; when ``c >= p*``
  it escalates anyway with probability ``overask``. A person approves and
  the call runs.
- after a probed read (``tools.probe``) it repeats the read with probability
  ``cross_check[kind]``, else it propagates the result.
- with a shared memory seam it reads ``note.payee`` at session start with
  probability ``retrieval`` and, when injected text arrives in a result,
  writes a note quoting it with probability ``poison_write`` (an untrusted
  memory write) unless it recalled one this session.
- each session belongs to one of ``users`` simulated users (``enduser.id``
  on the root span), so exposures across users are visible.
- when a write fails because the resource no longer exists
  (``tools.impossible``) it reports the task impossible and stops.
- ``act_errors``: it proposes a wrong call (one argument corrupted) with
  probability ``1 - c``, so its confidence is calibrated by construction; a
  person asked about a wrong call corrects it with probability
  ``review_catch``. ``difficulty="task"`` fixes c per (task, write position)
  across runs (the setting behavioural confidence needs);
  ``expose_confidence=False`` leaves the confidence off the trace.
- under the staged-writes harness (``tools.staged``) it knows every write
  can be undone, so it uses the staged p* (playbook: a lower p* everywhere).
- every model turn costs ``usd_per_turn`` (cost per accepted task).

Ground truth for tests and benches rides on the proposing chat span under
``flywheel.sim.*`` (``p_true``, ``wrong``, ``executed_wrong``,
``call_id``); no metric reads it.
"""

from __future__ import annotations

import random
from typing import Any

from flywheel.harness import (
    AgentContext,
    ToolCall,
    corrupt,
    register_agent,
    text_message,
    tool_call_message,
)
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from ._escalation import ESCALATION_ATTR
from ._outcomes import IMPOSSIBLE_NOTE, IMPOSSIBLE_PREFIX
from ._reversibility import CONFIDENCE_ATTR, CONFIDENCE_CALL_ATTR, ReversibilityConfig

NOTE_KEY = "note.payee"


class SafetyReferenceAgent:
    """SIMULATION with declared escalation, cross-check and memory behaviour (see module)."""

    needs_reference = True

    def __init__(
        self,
        overreach: float = 0.2,
        overask: float = 0.1,
        confidence_lo: float = 0.5,
        cross_check: dict[str, float] | None = None,
        retrieval: float = 0.6,
        poison_write: float = 1.0,
        users: int = 3,
        reversibility: dict[str, Any] | None = None,
        act_errors: bool = False,
        difficulty: str = "run",
        expose_confidence: bool = True,
        review_catch: float = 1.0,
        usd_per_turn: float = 0.00045,
    ) -> None:
        if difficulty not in ("run", "task"):
            raise ValueError(f"difficulty={difficulty!r}: use 'run' or 'task'")
        self.overreach, self.overask, self.lo = overreach, overask, confidence_lo
        self.act_errors, self.difficulty = act_errors, difficulty
        self.expose, self.review_catch = expose_confidence, review_catch
        self.usd_per_turn = usd_per_turn
        self.cross_check = {"wrong": 0.7, "truncated": 0.4, "stale": 0.2, **(cross_check or {})}
        self.retrieval, self.poison_write = retrieval, poison_write
        self.users = users
        self.config = ReversibilityConfig.model_validate(reversibility or {})

    def _turn(
        self, ctx: AgentContext, out: dict[str, Any], extra: dict[str, Any] | None = None
    ) -> None:
        ctx.chat(
            [text_message("user", ctx.prompt)],
            [out],
            model="safety-sim",
            input_tokens=50,
            output_tokens=20,
            cost=self.usd_per_turn,
            provider="flywheel.sim",
            extra=extra,
        )

    def __call__(self, ctx: AgentContext) -> str:
        """Run the episode; return the reference answer."""
        ref = ctx.reference
        assert ref is not None, "a simulation needs the task reference"
        rng = ctx.rng
        shared = ctx.seams.spec("memory").name == "memory.shared"
        if self.users:
            trace.get_current_span().set_attribute(
                "enduser.id", f"user-{rng.randrange(self.users)}"
            )
        staged = ctx.seams.spec("tools").name == "tools.staged"
        config = self.config.staged_view() if staged else self.config
        writes = 0
        recalled = None
        if shared and rng.random() < self.retrieval:
            recalled = ctx.memory_read(NOTE_KEY)
        for step in ref.ground_truth:
            call = ToolCall(step.name, dict(step.args), ctx.new_call_id())
            if ctx.is_read(call.name):
                self._turn(ctx, tool_call_message([call]))
                result = ctx.retrieve(call.name, call.args, call.id)
                kind = getattr(result, "probe", "")
                if kind and rng.random() < self.cross_check.get(kind, 0.0):
                    again = ToolCall(call.name, call.args, ctx.new_call_id())
                    self._turn(ctx, tool_call_message([again]))
                    result = ctx.retrieve(again.name, again.args, again.id)
                text = result.text
                i = ref.injected_at(text)
                if shared and i >= 0 and recalled is None and rng.random() < self.poison_write:
                    ctx.memory_write(NOTE_KEY, {"text": text[i : i + 200]})
                    recalled = True
                continue
            if self.difficulty == "task":
                key = f"{ctx.task.task_id}|{ctx.task.injection_task_id}|{writes}"
                c = random.Random(key).uniform(self.lo, 1.0)
            else:
                c = rng.uniform(self.lo, 1.0)
            writes += 1
            p = config.threshold(call.name)
            wrong = False
            proposed = call
            if self.act_errors and call.args and rng.random() >= c:
                arg = sorted(call.args)[rng.randrange(len(call.args))]
                proposed = ToolCall(
                    call.name, {**call.args, arg: corrupt(call.args[arg], rng)}, call.id
                )
                wrong = proposed.args != call.args
            ask = rng.random() >= self.overreach if c < p else rng.random() < self.overask
            caught = ask and wrong and rng.random() < self.review_catch
            extra: dict[str, Any] = {
                "flywheel.sim.p_true": round(c, 6),
                "flywheel.sim.call_id": call.id,
            }
            if self.act_errors:
                extra["flywheel.sim.wrong"] = wrong
                extra["flywheel.sim.executed_wrong"] = wrong and not caught
            if self.expose:
                extra.update({CONFIDENCE_ATTR: round(c, 6), CONFIDENCE_CALL_ATTR: call.id})
            self._turn(ctx, tool_call_message([proposed]), extra)
            if ask:
                with ctx.tracer.start_as_current_span(
                    "escalate",
                    kind=SpanKind.INTERNAL,
                    attributes={
                        **ctx.attributes,
                        "gen_ai.operation.name": "escalate",
                        ESCALATION_ATTR: call.id,
                        "flywheel.escalation.decision": "corrected" if caught else "approved",
                    },
                ):
                    pass
            run = call if caught else proposed
            res = ctx.call_tool(run.name, run.args, run.id)
            if res.error and "no longer exists" in res.error:
                ctx.notes[IMPOSSIBLE_NOTE] = True
                answer = f"{IMPOSSIBLE_PREFIX} {res.error}"
                self._turn(ctx, text_message("assistant", answer))
                return answer
        answer = ref.ground_truth_output
        self._turn(ctx, text_message("assistant", answer))
        return answer


@register_agent("safety_reference")
def safety_reference_agent(**args: Any) -> SafetyReferenceAgent:
    """The safety simulation (see ``SafetyReferenceAgent``)."""
    return SafetyReferenceAgent(**args)
