"""Harness seams: tools, retrieval, memory, planner, verifier; real and oracle.

An agent reaches the world only through these seams, so each can be swapped
for an oracle built from the task's reference ("Counterfactual ablation
locates the bottleneck"). Every seam implementation is a registered factory
rebuildable from ``(seam, mode, name, args)``; a trial stores those specs.

How the seams map onto AgentDojo (the only environment so far):

- tools. Real: the call runs on the live state. Oracle: the call still runs
  (its effects stay real), and a call equal to a reference call gets that
  reference call's result, computed on a private copy of s0. Staged
  (``tools.staged``, a real-mode option): every write is staged with an undo
  log and committed or undone after the agent finishes (see ``StagedTools``).
- retrieval = read-type tool calls (``get_``, ``read_``, ``search_``...), run
  through the tools seam. Oracle: the read still runs (state fidelity) but
  returns exactly the needed item -- the reference result of the matching
  reference read, else nothing -- and ``needed()`` hands over every
  reference read result up front.
- memory = a per-trial scratch key-value memory the harness provides
  (nothing crosses trials). Oracle: the same memory pre-seeded with the
  needed items, ``constraints`` (the reference calls' arguments) and
  ``step.N`` (reference call N), which the agent cannot overwrite (no stale
  or poisoned entries).
- planner. Real: none, the agent plans for itself. Oracle: the reference
  plan (the ground-truth calls).
- verifier. Real: a self-check on what the agent can see (a step deviated
  iff its tool returned an error), asked by the agent. Oracle: after every
  step the harness says whether the call deviated from the reference (it
  matches no reference call not yet matched); the verdict rides on the
  result.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace

from flywheel import UserError, canonical_json

from ._env import Environment, ToolCall, ToolResult

SEAMS: tuple[str, ...] = ("tools", "retrieval", "memory", "planner", "verifier")
MODES: tuple[str, ...] = ("real", "oracle")


@dataclass(frozen=True)
class SeamSpec:
    """A seam implementation by name and arguments (rebuildable, stored per trial)."""

    seam: str
    mode: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"seam": self.seam, "mode": self.mode, "name": self.name, "args": self.args}


SeamFactory = Callable[..., Any]
_REGISTRY: dict[str, tuple[str, str, SeamFactory]] = {}


def register_seam(seam: str, mode: str, name: str) -> Callable[[SeamFactory], SeamFactory]:
    """Register a seam factory ``factory(env, **args)`` under ``name``."""
    if seam not in SEAMS or mode not in MODES:
        raise ValueError(f"unknown seam/mode {seam}/{mode}")

    def deco(factory: SeamFactory) -> SeamFactory:
        _REGISTRY[name] = (seam, mode, factory)
        return factory

    return deco


def seam_names() -> dict[str, tuple[str, str]]:
    """Registered seam implementations: name -> (seam, mode)."""
    return {k: (s, m) for k, (s, m, _) in _REGISTRY.items()}


def default_spec(seam: str, mode: str) -> SeamSpec:
    """The built-in implementation of a seam in a mode."""
    return SeamSpec(seam, mode, f"{seam}.{mode}")


@dataclass(frozen=True)
class SeamConfig:
    """Which implementation each of the five seams uses in a configuration."""

    specs: tuple[SeamSpec, ...]

    @classmethod
    def from_oracles(cls, oracles: Iterable[str] = ()) -> SeamConfig:
        """Real everywhere except the named seams, which get their oracle."""
        chosen = set(oracles)
        unknown = chosen - set(SEAMS)
        if unknown:
            raise UserError(
                f"unknown seam(s) {', '.join(sorted(unknown))}; choose from {', '.join(SEAMS)}"
            )
        return cls(tuple(default_spec(s, "oracle" if s in chosen else "real") for s in SEAMS))

    def modes(self) -> dict[str, str]:
        """Seam -> mode."""
        return {s.seam: s.mode for s in self.specs}

    def spec(self, seam: str) -> SeamSpec:
        """The spec of one seam."""
        for s in self.specs:
            if s.seam == seam:
                return s
        return default_spec(seam, "real")

    def to_json(self) -> list[dict[str, Any]]:
        """JSON-able form."""
        return [s.to_json() for s in self.specs]


def build_seam(spec: SeamSpec, env: Environment) -> Any:
    """Instantiate a seam implementation for one trial's environment."""
    try:
        seam, mode, factory = _REGISTRY[spec.name]
    except KeyError:
        raise UserError(
            f"unknown seam implementation {spec.name!r}; known: {', '.join(sorted(_REGISTRY))}"
        ) from None
    if (seam, mode) != (spec.seam, spec.mode):
        raise UserError(
            f"seam implementation {spec.name!r} is {seam}/{mode}, not {spec.seam}/{spec.mode}"
        )
    return factory(env, **spec.args)


class _ReferenceMatcher:
    """Matches calls against the reference calls, each reference call at most once."""

    def __init__(self, calls: Iterable[ToolCall]) -> None:
        self._open: list[tuple[int, str]] = [(i, c.key()) for i, c in enumerate(calls)]

    def take(self, call: ToolCall) -> int | None:
        key = call.key()
        for pos, (i, k) in enumerate(self._open):
            if k == key:
                del self._open[pos]
                return i
        return None


# -- tools -------------------------------------------------------------------
@register_seam("tools", "real", "tools.real")
class RealTools:
    """Runs each call on the live state."""

    def __init__(self, env: Environment) -> None:
        self.env = env

    def call(self, call: ToolCall) -> ToolResult:
        """Execute ``call``."""
        return self.env.call_tool(call.name, call.args)


@register_seam("tools", "oracle", "tools.oracle")
class OracleTools(RealTools):
    """Runs each call; a reference call gets the reference result (the truth)."""

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        self._ref = env.reference_results()
        self._match = _ReferenceMatcher(env.task().ground_truth)

    def call(self, call: ToolCall) -> ToolResult:
        """Execute ``call``; substitute the reference result when it is a reference call."""
        live = self.env.call_tool(call.name, call.args)
        i = self._match.take(call)
        if i is None:
            return live
        ref = self._ref[i]
        return ToolResult(text=ref.text, value=ref.value, error=ref.error, oracle=True)


def _checkpoint(env: Environment) -> Any:
    """A restorable copy of the live state (``env.checkpoint()``, else AgentDojo's model)."""
    own = getattr(env, "checkpoint", None)
    if callable(own):
        return own()
    state = getattr(env, "_env", None)
    if state is None or not hasattr(state, "model_copy"):
        raise UserError(
            f"tools.staged needs an environment whose state can be restored; "
            f"{type(env).__name__} has neither checkpoint()/restore() nor a pydantic state"
        )
    return state.model_copy(deep=True)


def _restore(env: Environment, token: Any) -> None:
    own = getattr(env, "restore", None)
    if callable(own):
        own(token)
    else:
        env._env = token  # type: ignore[attr-defined]  # AgentDojo adapter's live state


@dataclass
class StagedWrite:
    """One staged write: the call, its result, the state before it, and the decision."""

    call: ToolCall
    result: ToolResult
    before: Any
    decision: str = "staged"  # -> "commit" or "undo"
    reason: str = ""


@register_seam("tools", "real", "tools.staged")
class StagedTools(RealTools):
    """Staged writes and an undo log: every write is reversible by the harness.

    Playbook, "Reversibility sets a confidence threshold": "Stage every write;
    require an explicit commit; keep an undo log. An agent operating in a world
    where more actions are reversible has a lower p* everywhere." Reads run on
    the live state. Before each write the seam checkpoints the state and logs
    the write; the write then runs (the agent sees its effect) and its span
    carries ``flywheel.staged``. When the agent is done the harness calls
    :meth:`commit`: each write is committed or undone. Undo restores the
    state before the first undone write and replays the committed writes
    after it, in order.

    Args:
        env: The trial's environment.
        check: What decides an undo at commit. ``reference``: a write that
            matches no reference call is undone with probability ``catch``
            (the review an undo log makes possible; in simulation the
            reference is the truth). ``errors``: writes whose tool returned
            an error. ``none``: commit everything (staging only).
        catch: Probability that the check notices a wrong write.
        seed: Seed of the ``catch`` draws when :meth:`commit` gets no
            generator (the harness passes the trial's seeded one, so each
            trial draws its own).
    """

    CHECKS = ("reference", "errors", "none")

    def __init__(
        self, env: Environment, check: str = "reference", catch: float = 1.0, seed: int = 0
    ) -> None:
        super().__init__(env)
        if check not in self.CHECKS:
            raise UserError(f"tools.staged check={check!r}; choose from {', '.join(self.CHECKS)}")
        if not 0.0 <= catch <= 1.0:
            raise UserError(f"tools.staged catch={catch}: must be in [0, 1]")
        self.check, self.catch = check, catch
        self._rng = random.Random(seed)
        self._reads = {t.name for t in env.tools() if t.read_only}
        self.log: list[StagedWrite] = []

    def call(self, call: ToolCall) -> ToolResult:
        """Reads run; writes are checkpointed, logged, run and marked staged."""
        if call.name in self._reads:
            return super().call(call)
        before = _checkpoint(self.env)
        result = super().call(call)
        self.log.append(StagedWrite(call, result, before))
        span = trace.get_current_span()
        span.set_attribute("flywheel.staged", True)
        span.set_attribute("flywheel.staged.index", len(self.log) - 1)
        return result

    def _decide(
        self, matcher: _ReferenceMatcher | None, w: StagedWrite, rng: random.Random
    ) -> tuple[str, str]:
        if self.check == "errors" and w.result.error is not None:
            return "undo", "tool error"
        if matcher is not None and matcher.take(w.call) is None:
            if rng.random() < self.catch:
                return "undo", "matches no reference call"
            return "commit", "wrong write missed by the check"
        return "commit", ""

    def commit(self, rng: random.Random | None = None) -> list[StagedWrite]:
        """Decide every staged write, undo the rejected ones, and return the log."""
        matcher = (
            _ReferenceMatcher(self.env.task().ground_truth) if self.check == "reference" else None
        )
        for w in self.log:
            w.decision, w.reason = self._decide(matcher, w, rng or self._rng)
        undone = [i for i, w in enumerate(self.log) if w.decision == "undo"]
        if undone:
            first = undone[0]
            _restore(self.env, self.log[first].before)
            for w in self.log[first + 1 :]:
                if w.decision == "commit":
                    self.env.call_tool(w.call.name, w.call.args)
        return list(self.log)


# -- retrieval ----------------------------------------------------------------
@register_seam("retrieval", "real", "retrieval.real")
class RealRetrieval:
    """Retrieval is the agent's own read-type tool calls."""

    def __init__(self, env: Environment) -> None:
        self.env = env

    def needed(self) -> list[dict[str, Any]] | None:
        """Nothing is handed over up front."""
        return None

    def result(self, call: ToolCall, live: ToolResult) -> ToolResult:
        """The read's own result."""
        return live


@register_seam("retrieval", "oracle", "retrieval.oracle")
class OracleRetrieval(RealRetrieval):
    """Exactly the needed items: the reference read calls' results."""

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        gt = env.task().ground_truth
        ref = env.reference_results()
        self._reads = [(c, r) for c, r in zip(gt, ref, strict=True) if _is_read(env, c.name)]
        self._match = _ReferenceMatcher(c for c, _ in self._reads)

    def needed(self) -> list[dict[str, Any]]:
        """Every reference read with its result."""
        return [
            {"call": c.to_json(), "result": r.value if r.error is None else None}
            for c, r in self._reads
        ]

    def result(self, call: ToolCall, live: ToolResult) -> ToolResult:
        """The reference item for a needed read, or nothing for an unneeded one."""
        i = self._match.take(call)
        if i is None:
            return ToolResult(text="[]", value=[], oracle=True)
        ref = self._reads[i][1]
        return ToolResult(text=ref.text, value=ref.value, error=ref.error, oracle=True)


def _is_read(env: Environment, name: str) -> bool:
    return any(t.name == name and t.read_only for t in env.tools())


# -- memory -------------------------------------------------------------------
@register_seam("memory", "real", "memory.real")
class RealMemory:
    """A per-trial scratch memory (a dict; nothing survives the trial)."""

    def __init__(self, env: Environment) -> None:
        self._data: dict[str, Any] = {}

    def write(self, key: str, value: Any) -> bool:
        """Store ``value`` under ``key``; True when stored."""
        self._data[key] = value
        return True

    def read(self, key: str) -> Any:
        """The value under ``key`` or None."""
        return self._data.get(key)

    def keys(self) -> list[str]:
        """Stored keys, sorted."""
        return sorted(self._data)


@register_seam("memory", "oracle", "memory.oracle")
class OracleMemory(RealMemory):
    """Scratch memory pre-seeded with the needed items, which writes cannot change."""

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        gt = env.task().ground_truth
        self._fixed: dict[str, Any] = {"constraints": [c.args for c in gt]}
        self._fixed.update({f"step.{i}": c.to_json() for i, c in enumerate(gt)})

    def write(self, key: str, value: Any) -> bool:
        """Store unless ``key`` holds a needed item (no stale or poisoned entries)."""
        if key in self._fixed:
            return False
        return super().write(key, value)

    def read(self, key: str) -> Any:
        """The needed item under ``key``, else the scratch value."""
        if key in self._fixed:
            return self._fixed[key]
        return super().read(key)

    def keys(self) -> list[str]:
        """Needed and scratch keys, sorted."""
        return sorted(set(self._fixed) | set(self._data))


# -- planner ------------------------------------------------------------------
@register_seam("planner", "real", "planner.real")
class RealPlanner:
    """No plan is handed over: the agent plans for itself."""

    def __init__(self, env: Environment) -> None:
        self.env = env

    def plan(self) -> list[ToolCall] | None:
        """None."""
        return None


@register_seam("planner", "oracle", "planner.oracle")
class OraclePlanner(RealPlanner):
    """The reference plan."""

    def plan(self) -> list[ToolCall]:
        """The ground-truth calls, in order."""
        return list(self.env.task().ground_truth)


# -- verifier -----------------------------------------------------------------
@register_seam("verifier", "real", "verifier.real")
class RealVerifier:
    """A self-check on observable signals: an error result means a deviation."""

    automatic = False

    def __init__(self, env: Environment) -> None:
        self.env = env

    def verify(self, call: ToolCall, result: ToolResult) -> bool:
        """True when the step deviated."""
        return result.error is not None


@register_seam("verifier", "oracle", "verifier.oracle")
class OracleVerifier(RealVerifier):
    """After each step: did the call deviate from the reference?"""

    automatic = True

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        self._match = _ReferenceMatcher(env.task().ground_truth)

    def verify(self, call: ToolCall, result: ToolResult) -> bool:
        """True when ``call`` matches no reference call not matched yet."""
        return self._match.take(call) is None


def describe_seams() -> str:
    """The seam table of this module (for ``--help`` and docs)."""
    return canonical_json({k: list(v) for k, v in seam_names().items()})
