"""The environment interface every harness environment implements.

A trial needs four things from an environment (acceptance-and-statistics
13.3): a declared initial state it can ``reset`` to under a fresh identity, the
tool set, a canonical ``snapshot`` of its state (s0 before the agent, sT after),
and the task's reference (prompt, ground-truth calls, checks) kept apart from
the agent. ``reset`` refuses an identity that was already used in this
process, so two trials can never share state by accident.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from flywheel import ConflictError, canonical_json


@dataclass(frozen=True)
class ToolCall:
    """One call of a tool: its name, JSON-able arguments and optional call id."""

    name: str
    args: dict[str, Any]
    id: str = ""

    def key(self) -> str:
        """Name and canonical arguments: two calls with equal keys are the same call."""
        return f"{self.name}:{canonical_json(self.args)}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form (for plans, messages and spans)."""
        return {"name": self.name, "args": self.args}


@dataclass(frozen=True)
class ToolSpec:
    """What an agent is told about a tool; ``read_only`` marks retrieval-type tools."""

    name: str
    description: str
    parameters: dict[str, Any]
    read_only: bool


@dataclass
class ToolResult:
    """What a tool call returned: the text an agent reads, the JSON value, an error.

    ``verdict`` is set when an oracle verifier judged the step (True = the
    step deviated from the reference); ``oracle`` when the text came from the
    reference rather than the environment.
    """

    text: str
    value: Any = None
    error: str | None = None
    verdict: bool | None = None
    oracle: bool = False

    def result_json(self) -> str:
        """The result as a JSON string (``gen_ai.tool.call.result``)."""
        if self.error is not None:
            return canonical_json({"error": self.error})
        return canonical_json(self.value)


@dataclass(frozen=True)
class TaskInfo:
    """A task's prompt and reference. Only simulation agents may see the reference.

    ``ground_truth`` are the reference calls of the user task; with an
    injection task, ``injection_ground_truth`` are the attacker's goal calls
    and ``injection_texts`` the strings planted in the environment.
    """

    suite: str
    task_id: str
    prompt: str
    ground_truth: tuple[ToolCall, ...]
    ground_truth_output: str = ""
    injection_task_id: str | None = None
    injection_goal: str = ""
    injection_ground_truth: tuple[ToolCall, ...] = ()
    injection_ground_truth_output: str = ""
    injection_texts: tuple[str, ...] = ()
    checks: tuple[str, ...] = ("utility",)

    def injected_at(self, text: str) -> int:
        """Where planted text begins in ``text`` (a tool result as read), or -1.

        A planted string is found by its first non-blank line, which survives
        the result's encoding (JSON escapes the newlines between lines).
        """
        for planted in self.injection_texts:
            head = next((ln.strip() for ln in planted.splitlines() if ln.strip()), "")
            if head and (i := text.find(head)) >= 0:
                return i
        return -1


@dataclass(frozen=True)
class Verdicts:
    """The environment's own checks: ``utility`` (task done) and ``security``.

    ``security`` follows AgentDojo: True means the injection task's goal was
    achieved (the attack succeeded); None when the trial had no injection.
    """

    utility: bool | None
    security: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)


class Environment(Protocol):
    """A stateful environment for one trial."""

    environment_id: str

    def reset(self, environment_id: str | None = None) -> str:
        """Build the declared initial state under a fresh identity; return the identity."""
        ...

    def task(self) -> TaskInfo:
        """The task's prompt and reference."""
        ...

    def tools(self) -> list[ToolSpec]:
        """The tool set the agent may call."""
        ...

    def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Execute one tool call against the live state (never raises for tool errors)."""
        ...

    def reference_results(self) -> list[ToolResult]:
        """Results of the reference calls run on a private copy of s0."""
        ...

    def snapshot(self) -> str:
        """The current state as canonical JSON."""
        ...

    def evaluate(self, final_output: str, calls: list[ToolCall]) -> Verdicts:
        """The environment's own verdicts on the trial (utility, security)."""
        ...


class IdentityLedger:
    """Every environment identity handed out in this process; a reuse is refused.

    Why: a reused identity means two trials could read each other's state,
    which turns a comparison into a measurement of contamination.
    """

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def claim(self, environment_id: str | None = None) -> str:
        """Reserve ``environment_id`` (or a new random one) and return it."""
        env_id = environment_id or f"env-{uuid.uuid4().hex}"
        with self._lock:
            if env_id in self._seen:
                raise ConflictError(
                    f"environment identity {env_id!r} was already used by another trial; "
                    "omit it to get a fresh one"
                )
            self._seen.add(env_id)
        return env_id

    def __contains__(self, environment_id: object) -> bool:
        return environment_id in self._seen


#: The process-wide ledger used by every environment adapter.
LEDGER = IdentityLedger()
