"""The predeclared release rule (``gate.toml``), fixed before any trial runs (22.7).

Example (the chapter-22 rule)::

    schema_version = 1
    margin = 0.02            # largest tolerated loss, candidate minus baseline
    confidence = 0.95        # two-sided level of the paired interval
    k = 2                    # pass^k / pass@k draw size

    [bootstrap]
    resamples = 10000
    seed = 22

    [slices]
    floor = 0.75             # default floor for every candidate slice
    floors = {}              # per-slice overrides

    [golden]
    tasks = []               # in addition to tasks flagged golden

    [judge]
    min_kappa = 0.60
    min_fail_recall = 0.70
    max_position_flip_rate = 0.15
    calibrations = ["judge_calibration.json"]   # relative to this file

    [evidence]
    power = 0.80             # declared power of the sample-size plan and the MDE
    require_powered = false  # true: an underpowered design never ships

    [side_effects]
    critical = ["destructive_write", "information_movement", "permission_change",
                "external_communication", "scope_violation"]   # the default
    required = false         # true: a candidate trial without a summary blocks

    [cost]
    max_cost_per_accepted_usd = 0.50   # optional ceiling, failed trials charged
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from flywheel.evalset._graders._side_effect import DEFAULT_FORBIDDEN
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from flywheel.errors import UserError


class BootstrapRules(BaseModel):
    """Paired cluster bootstrap settings (fixed so the report is reproducible)."""

    model_config = ConfigDict(extra="forbid")

    resamples: int = Field(default=10_000, ge=100, le=1_000_000)
    seed: int = 0


class SliceRules(BaseModel):
    """Absolute floors on candidate per-slice trial pass rates."""

    model_config = ConfigDict(extra="forbid")

    floor: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Default floor for every slice."
    )
    floors: dict[str, float] = Field(default_factory=dict, description="Per-slice floors.")

    def floor_for(self, name: str) -> float | None:
        """The floor that applies to slice ``name`` (None: no floor)."""
        return self.floors.get(name, self.floor)


class GoldenRules(BaseModel):
    """Must-not-break tasks: any pass-rate regression blocks."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[str] = Field(
        default_factory=list, description="Extra golden ids beyond task flags."
    )
    use_task_flags: bool = True


class JudgeContract(BaseModel):
    """What a judge's calibration record must show before its verdicts count (22.3)."""

    model_config = ConfigDict(extra="forbid")

    min_kappa: float = Field(default=0.6, ge=-1.0, le=1.0)
    min_fail_recall: float | None = Field(default=None, ge=0.0, le=1.0)
    max_false_acceptance: float | None = Field(default=None, ge=0.0, le=1.0)
    max_position_flip_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    max_verbosity_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    calibrations: list[str] = Field(
        default_factory=list,
        description="Calibration files (relative to gate.toml) checked by the gate.",
    )


class SideEffectRules(BaseModel):
    """Categories whose any event in a candidate trial blocks (never averaged).

    The gate is generic over the list: whatever categories the side-effect
    analysis emits, an event in one named here blocks. The default is the
    side-effect grader's ``DEFAULT_FORBIDDEN`` (the critical categories and
    ``scope_violation``, a change outside the task's declared scope). A
    candidate trial whose analysis failed blocks as missing evidence;
    ``required`` also blocks candidate trials that carry no summary at all.
    """

    model_config = ConfigDict(extra="forbid")

    critical: list[str] = Field(default_factory=lambda: list(DEFAULT_FORBIDDEN))
    required: bool = False


class EvidenceRules(BaseModel):
    """How much evidence the paired decision needs (13.5.3 sample-size planning)."""

    model_config = ConfigDict(extra="forbid")

    power: float = Field(
        default=0.8, gt=0.5, lt=1.0, description="Declared power of the plan and the MDE."
    )
    require_powered: bool = Field(
        default=False,
        description="Also refuse a cleared interval when the MDE exceeds the margin.",
    )


class CostRules(BaseModel):
    """Cost ceiling per accepted task (13.5.5: every initiated trial is charged)."""

    model_config = ConfigDict(extra="forbid")

    max_cost_per_accepted_usd: float | None = Field(default=None, gt=0.0)


class GateRules(BaseModel):
    """The whole predeclared rule."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    margin: float = Field(
        ge=0.0, le=1.0, description="Non-inferiority margin: block if lower bound < -margin."
    )
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    k: int = Field(default=1, ge=1, description="Draw size for pass^k and pass@k.")
    min_pass_hat_k: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Optional floor on candidate pass^k."
    )
    bootstrap: BootstrapRules = Field(default_factory=BootstrapRules)
    slices: SliceRules = Field(default_factory=SliceRules)
    golden: GoldenRules = Field(default_factory=GoldenRules)
    judge: JudgeContract = Field(default_factory=JudgeContract)
    evidence: EvidenceRules = Field(default_factory=EvidenceRules)
    side_effects: SideEffectRules = Field(default_factory=SideEffectRules)
    cost: CostRules = Field(default_factory=CostRules)
    base_dir: Path = Field(
        default=Path("."), exclude=True, description="Directory of the rule file."
    )


def load_rules(path: str | Path) -> GateRules:
    """Read and validate ``gate.toml``.

    Raises:
        UserError: Missing file, not UTF-8, TOML syntax error, or an invalid/unknown key.
    """
    p = Path(path)
    if not p.is_file():
        raise UserError(f"rule file {p} not found; pass --rules gate.toml")
    try:
        data = tomllib.loads(p.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UserError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{p}: not valid TOML: {exc}") from exc
    try:
        rules = GateRules.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ()))
        raise UserError(f"{p}: {where}: {first.get('msg')}") from exc
    return rules.model_copy(update={"base_dir": p.resolve().parent})
