"""One trial: one isolated attempt at one task, with its evidence and verdicts.

A trial records the complete evaluated configuration (model, scaffold, tools,
memory, budgets: the same model behind another harness is another system),
the identity of its environment (a reused identity is refused: a later trial
could pass on state an earlier one left behind), the digest of the artifact
it produced, the raw evidence graders read (``observations``), and one result
per criterion under the four-verdict rule (13.2.3).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from flywheel.evalset._task import CriterionKind, CriterionRole, GraderSpec
from pydantic import BaseModel, ConfigDict, Field

#: Version of the trial record; bump with a migration and an old-fixture test.
TRIAL_SCHEMA_VERSION = 1


class Verdict(StrEnum):
    """The four verdicts of 13.2.3 (evaluation verdicts, not lifecycle states)."""

    PASS = "pass"
    FAIL = "fail"
    PENDING = "pending"
    UNKNOWN = "unknown"

    @property
    def resolved(self) -> bool:
        """True for pass and fail."""
        return self in (Verdict.PASS, Verdict.FAIL)


class TrialConfig(BaseModel):
    """The evaluated system, declared in full (13.2: a configuration, not a checkpoint)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, description="Configuration id, e.g. 'candidate_v2'.")
    model: str = ""
    scaffold: str = ""
    prompt_version: str = ""
    tools: list[str] = Field(default_factory=list)
    memory: str = "none"
    budgets: dict[str, float] = Field(
        default_factory=dict,
        description="Declared allowances: cost_usd, tokens, latency_s, tool_calls.",
    )
    extra: dict[str, Any] = Field(default_factory=dict)


class ToolCall(BaseModel):
    """One tool call as the transcript records it."""

    model_config = ConfigDict(extra="allow")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Observations(BaseModel):
    """Raw evidence of one trial, read by the graders.

    Attributes:
        snapshot: The sT state snapshot (canonical JSON document).
        output: The structured response (object, or the raw string).
        tool_calls: Tool calls in order.
        transcript: Final answer or explanation text for a judge.
        judge_labels: Replayed judge verdicts by judge id ("PASS"/"FAIL").
        side_effects: Critical-events summary: counts per category.
        side_effects_error: Why the side-effect analysis could not produce a
            summary (the error it raised); ``side_effects`` is then None and
            the evidence is ``unknown``, never zero events.
        recorded: Verdicts recorded by the environment per criterion id
            (e.g. an AgentDojo utility check), read by the ``recorded`` grader.
        budget_exhausted: The harness stopped the trial on a budget.
    """

    model_config = ConfigDict(extra="allow")

    snapshot: Any = None
    output: Any = None
    tool_calls: list[ToolCall] | None = None
    transcript: str | None = None
    judge_labels: dict[str, str] = Field(default_factory=dict)
    side_effects: dict[str, int] | None = None
    side_effects_error: str | None = None
    recorded: dict[str, Verdict] = Field(default_factory=dict)
    budget_exhausted: bool | None = None


class CriterionResult(BaseModel):
    """One criterion's observation and verdict for one trial."""

    model_config = ConfigDict(extra="forbid")

    criterion_id: str
    kind: CriterionKind
    role: CriterionRole
    verdict: Verdict
    score: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Diagnostic partial score."
    )
    reason: str = ""
    observation: dict[str, Any] = Field(default_factory=dict)
    grader: GraderSpec | None = None


class Trial(BaseModel):
    """One attempt at one task (one line of a trials JSONL file)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    trial_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    task_version: str = "1"
    config: TrialConfig
    environment_id: str = Field(min_length=1, description="Unique per trial; reuse is refused.")
    artifact_digest: str | None = Field(default=None, description="sha256 of the graded artifact.")
    trace_id: str | None = None
    started_at: str | None = None
    cost_usd: float | None = Field(default=None, ge=0.0)
    tokens: int | None = Field(default=None, ge=0)
    latency_s: float | None = Field(default=None, ge=0.0)
    observations: Observations = Field(default_factory=Observations)
    results: list[CriterionResult] = Field(default_factory=list)
    verdict: Verdict | None = Field(default=None, description="Aggregate; recomputed on grading.")
    partial_credit: float | None = Field(
        default=None, description="Diagnostic only, never the verdict."
    )
