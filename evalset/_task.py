"""The task contract: what a trial starts from and how it is graded (13.2, 22.1).

A task is the versioned specification of one evaluation problem: its initial
state, its reference path and expected state (what a human added when it was
promoted), its slice and golden flag, and the criteria that decide acceptance.
Each criterion names a registered grader by ``(name, args)`` so any grade can
be rebuilt, and a role: *mandatory* criteria decide the verdict, *diagnostic*
ones are kept for error analysis only (partial credit included).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: Version of the task record; bump with a migration and an old-fixture test.
TASK_SCHEMA_VERSION = 1


class CriterionKind(StrEnum):
    """What evidence a criterion inspects (the evidence dimensions of 13.2.1)."""

    STATE = "state"
    SCHEMA = "schema"
    POLICY = "policy"
    JUDGE = "judge"
    BUDGET = "budget"
    SIDE_EFFECT = "side-effect"
    CUSTOM = "custom"


class CriterionRole(StrEnum):
    """Whether a criterion decides acceptance or only diagnoses."""

    MANDATORY = "mandatory"
    DIAGNOSTIC = "diagnostic"


class GraderSpec(BaseModel):
    """A registered grader factory and its arguments; enough to rebuild it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="Registered grader name, e.g. 'state'.")
    args: dict[str, Any] = Field(default_factory=dict, description="Factory keyword arguments.")


class Criterion(BaseModel):
    """One declared acceptance (or diagnostic) condition of a task."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, description="Unique within the task, e.g. 'final-state'.")
    kind: CriterionKind
    role: CriterionRole = CriterionRole.MANDATORY
    grader: GraderSpec
    weight: float = Field(
        default=1.0, ge=0.0, description="Weight in the diagnostic partial credit."
    )
    description: str = ""


class Task(BaseModel):
    """A versioned, promoted evaluation task (one line of ``tasks.jsonl``)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    task_id: str = Field(min_length=1)
    version: str = Field(default="1", description="Task revision; graders version with it.")
    slice: str = Field(default="all", description="Predeclared cohort reported separately.")
    golden: bool = Field(default=False, description="Must-not-break: a regression blocks release.")
    prompt: str = ""
    initial_state: str = Field(
        default="", description="Identity of the s0 snapshot a trial starts from."
    )
    expected_state: Any = Field(default=None, description="The human-written goal state, if any.")
    expected_tools: list[str] = Field(default_factory=list, description="Reference tool path.")
    source_trace_id: str | None = None
    criteria: list[Criterion] = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("criteria")
    @classmethod
    def _unique_ids(cls, criteria: list[Criterion]) -> list[Criterion]:
        seen: set[str] = set()
        for c in criteria:
            if c.id in seen:
                raise ValueError(f"criterion id {c.id!r} appears twice; ids must be unique")
            seen.add(c.id)
        return criteria

    @model_validator(mode="after")
    def _has_mandatory(self) -> Task:
        if not any(c.role is CriterionRole.MANDATORY for c in self.criteria):
            raise ValueError(
                f"task {self.task_id!r} has no mandatory criterion, so no trial could be accepted"
            )
        return self

    def criterion(self, criterion_id: str) -> Criterion:
        """The criterion with this id (KeyError if absent)."""
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(criterion_id)
