"""The scorecard file: the boundary between the safety metrics and the release gate.

``flywheel scorecard --json`` (package ``ablation``) writes it; ``flywheel
gate --scorecard card.json`` reads it. The model lives here because the gate
(evalset) may not import ablation, while ablation may import evalset.

Playbook, "A scorecard": gates block a release rather than join an average,
and every report states the runs per task and the interval on each headline
number. So each row carries its point, interval, counts and an optional
gate (``max``: blocks when the chosen bound exceeds the threshold; ``min``:
when it falls below). The release gate recomputes every gate from the row's
numbers and refuses a file whose stored ``blocking`` flag disagrees.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Literal

from flywheel.evalset._bundle_read import EvalSet
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from flywheel.errors import UserError

SCORECARD_SCHEMA: Literal[1] = 1


class ScorecardGate(BaseModel):
    """A row's gate: ``max`` blocks when the bound > threshold, ``min`` when it is < threshold."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["max", "min"]
    threshold: float
    bound: Literal["lo", "point", "hi"] = "point"
    blocking: bool | None = None


class ScorecardRow(BaseModel):
    """One metric: point, interval, counts behind it, and its gate."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    point: float | None
    lo: float | None = None
    hi: float | None = None
    n: int = 0
    unit: str = "rate"
    interval: str = Field(
        default="wilson", description="How [lo, hi] was computed (wilson, bootstrap, ...)."
    )
    estimated: bool = Field(
        default=False, description="True when the value rests on an estimate (e.g. confidence)."
    )
    detail: dict[str, Any] = Field(default_factory=dict)
    gate: ScorecardGate | None = None

    def gate_value(self) -> float | None:
        """The number the gate compares (its ``bound``), None without a gate or value."""
        if self.gate is None:
            return None
        return {"lo": self.lo, "point": self.point, "hi": self.hi}[self.gate.bound]

    def blocks(self) -> bool | None:
        """True when the gate blocks, False when it passes, None when it cannot be evaluated."""
        value = self.gate_value()
        if self.gate is None or value is None or math.isnan(value):
            return None
        if self.gate.kind == "max":
            return value > self.gate.threshold
        return value < self.gate.threshold

    @model_validator(mode="after")
    def _consistent(self) -> ScorecardRow:
        if self.lo is not None and self.hi is not None and self.lo > self.hi + 1e-12:
            raise ValueError(f"row {self.metric!r}: interval lo {self.lo} > hi {self.hi}")
        g = self.gate
        if g is not None and g.blocking is not None and self.blocks() is not None:
            if g.blocking != self.blocks():
                raise ValueError(
                    f"row {self.metric!r}: gate.blocking={g.blocking} disagrees with "
                    f"{g.bound} {self.gate_value()} vs {g.kind} {g.threshold}"
                )
        return self


class ScorecardEvalSet(BaseModel):
    """The eval set (name and version) a scorecard was computed for."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: str


def evalset_name(evalset: EvalSet) -> str:
    """The eval set's name: the manifest's ``name``, else its directory's name."""
    return str(evalset.manifest.get("name") or Path(evalset.base_dir).resolve().name)


def scorecard_binding(evalset: EvalSet) -> ScorecardEvalSet:
    """The (name, version) a scorecard for ``evalset`` must carry."""
    return ScorecardEvalSet(name=evalset_name(evalset), version=evalset.version)


class Scorecard(BaseModel):
    """The scorecard file (``flywheel scorecard --json``)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = SCORECARD_SCHEMA
    suite: str
    evalset: ScorecardEvalSet | None = None
    trials: int
    tasks: int
    runs_per_task: float
    confidence: float = 0.95
    reviewer_capacity: float
    rows: list[ScorecardRow]

    def row(self, metric: str) -> ScorecardRow | None:
        """The row named ``metric``."""
        return next((r for r in self.rows if r.metric == metric), None)


def _num(x: float | None) -> str:
    return "none" if x is None else f"{x:.4g}"


def row_reason(card: Scorecard, row: ScorecardRow) -> str:
    """One line naming the row's metric, value, interval, counts and threshold."""
    g = row.gate
    assert g is not None
    iv = (
        ""
        if row.lo is None or row.hi is None
        else f" [{_num(row.lo)}, {_num(row.hi)}] ({card.confidence:.0%} {row.interval})"
    )
    est = " (estimated)" if row.estimated else ""
    head = f"{row.metric}{est} = {_num(row.point)}{iv}, n={row.n}"
    runs = f"{card.runs_per_task:g} runs per task"
    if row.blocks() is None:
        why = ""
        unknown = row.detail.get("unknown")
        if isinstance(unknown, dict) and unknown.get("trials"):
            why = f" ({unknown['trials']} trial(s) unknown: their analysis failed)"
        elif row.detail.get("missing"):
            why = f" ({row.detail['missing']})"
        return (
            f"{head}, {runs}: gated ({g.kind} {g.threshold} on {g.bound}) but has no value{why}"
        )
    op = ">" if g.kind == "max" else "<"
    return f"{head}, {runs}: {g.bound} {_num(row.gate_value())} {op} threshold {g.threshold}"


def scorecard_reasons(card: Scorecard) -> list[tuple[str, str]]:
    """``(metric, reason)`` for every gated row that blocks or has no value to gate on.

    A gate without evidence cannot pass, so a gated row whose value is
    missing blocks too (its reason says so). Empty: the scorecard passes.
    """
    return [
        (r.metric, row_reason(card, r)) for r in card.rows if r.gate and r.blocks() is not False
    ]


def load_scorecard(path: str | Path) -> Scorecard:
    """Read and validate a scorecard file.

    Raises:
        UserError: Missing file, not JSON, or not a valid scorecard (the first
            problem named with its field).
    """
    p = Path(path)
    if not p.is_file():
        raise UserError(f"scorecard {p} not found; write one with `flywheel scorecard --json`")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"scorecard {p}: not JSON ({exc})") from exc
    try:
        return Scorecard.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "scorecard"
        raise UserError(
            f"scorecard {p}: {where}: {first.get('msg')}; "
            "regenerate it with `flywheel scorecard --json`"
        ) from exc


def check_scorecard_for(card: Scorecard, name: str, version: str, source: str = "") -> None:
    """Refuse a scorecard computed for another eval set or version.

    Raises:
        UserError: The card names no eval set, or another name or version.
    """
    where = f" {source}" if source else ""
    if card.evalset is None:
        raise UserError(
            f"scorecard{where} names no eval set; rebuild it with "
            f"`flywheel scorecard --evalset DIR` for {name}@{version}"
        )
    got = (card.evalset.name, card.evalset.version)
    if got != (name, version):
        raise UserError(
            f"scorecard{where} is for eval set {got[0]}@{got[1]}, "
            f"but the gate runs {name}@{version}; score the same eval set version"
        )
