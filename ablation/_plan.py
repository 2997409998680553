"""An ablation plan from the options a user gives (what ``flywheel ablate`` parses).

One place validates the source (a suite or a released eval set, not both),
the agent and its hazard rates, the oracle order and the confidence level,
and resolves an eval set (verified, mapped to runnable environments) into
the plan's units, so the command stays a thin parse-call-print.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flywheel.harness import SEAMS, Budget, parse_agent, parse_hazards

from flywheel import UserError

from ._ablate import AblationPlan
from ._ablate_evalset import evalset_root, load_evalset_source
from ._ablate_report import AblationReport, plot_png, to_markdown


def build_plan(
    *,
    suite: str | None = None,
    evalset: str | None = None,
    store_url: str | None = None,
    evalset_root_dir: str | None = None,
    skip_unrunnable: bool = False,
    tasks: Sequence[str] = (),
    agent: str = "reference",
    oracles: Sequence[str] = SEAMS,
    order: Sequence[str] = (),
    lattice: bool = False,
    runs: int = 3,
    seed: int = 0,
    hazards: Sequence[str] = (),
    budget: Budget | None = None,
    confidence: float = 0.95,
) -> AblationPlan:
    """The validated plan of an ablation, its trials checked before anything is written.

    Args:
        suite: ``agentdojo:SUITE`` (one source of the two).
        evalset: ``NAME@VERSION`` of a released eval set (the other source).
        store_url: The store, to find released versions beside it.
        evalset_root_dir: Directory of released versions (overrides the default).
        skip_unrunnable: With ``evalset``: leave out tasks without a runnable environment.
        tasks: User task ids of the suite, or task ids of the eval set.
        agent: The agent spec text (``reference``, ``module:function``, ...).
        oracles: Seams to ablate with their oracle.
        order: Declared order of the marginal deltas (default: ``oracles``).
        lattice: Run every subset of the oracles.
        runs: Runs per task (paired seeds).
        seed: Seed of the trial seeds.
        hazards: Reference-agent hazard rates, ``NAME=RATE``.
        budget: The per-trial budget (the same for every configuration).
        confidence: Level of the report's intervals (checked here, used by the report).

    Raises:
        UserError: Both or neither source, options that do not apply, an order
            that is not the oracles, a bad level, or an unrunnable plan.
    """
    if suite and evalset:
        raise UserError("--suite and --evalset are two sources; give one of them")
    if skip_unrunnable and not evalset:
        raise UserError("--skip-unrunnable applies to --evalset only")
    if not suite and not evalset:
        raise UserError(
            "give a source: --suite agentdojo:SUITE or --evalset NAME@VERSION "
            "(or --resume ABLATION_ID)"
        )
    spec = parse_agent(agent)
    if hazards:
        if spec.name != "reference":
            raise UserError("--hazard applies to --agent reference only")
        spec = type(spec)(spec.name, {**spec.args, "rates": parse_hazards(tuple(hazards))})
    chosen = list(oracles)
    declared = list(order) or chosen
    if sorted(declared) != sorted(chosen):
        raise UserError(
            f"--order {','.join(order)!r} must list exactly the --oracles ({','.join(chosen)})"
        )
    if not declared:
        raise UserError(f"--oracles: name at least one of {', '.join(SEAMS)}")
    if not 0.5 <= confidence < 1.0:
        raise UserError(f"--confidence {confidence}: choose a level in [0.5, 1), e.g. 0.95")
    source: dict[str, Any] = {"suite": suite or "", "tasks": tuple(tasks)}
    if evalset:
        src = load_evalset_source(
            evalset_root(store_url, evalset_root_dir), evalset, tasks=list(tasks),
            skip_unrunnable=skip_unrunnable,
        )
        source = {
            "suite": f"evalset:{src.ref}",
            "tasks": tuple(tasks),
            "evalset": src.ref,
            "evalset_sha256": src.manifest_sha256,
            "evalset_path": str(src.path),
            "units": src.units,
            "skipped": tuple(t for t, _ in src.unrunnable),
        }
    plan = AblationPlan(
        agent=spec,
        oracles=tuple(declared),
        lattice=lattice,
        runs=runs,
        budget=budget or Budget(),
        seed=seed,
        **source,
    )
    plan.trials()  # validate suite, tasks and runs before anything is written
    return plan


def write_outputs(report: AblationReport, doc: dict[str, Any], out_dir: str | Path) -> list[str]:
    """``report.md``, ``report.json`` and ``ablation.png`` in ``out_dir``; returns their paths.

    Raises:
        UserError: ``out_dir`` is a file or cannot be written.
    """
    out = Path(out_dir)
    names = ("report.md", "report.json", "ablation.png")
    try:
        os.makedirs(out, exist_ok=True)
        (out / names[0]).write_text(to_markdown(report), encoding="utf-8")
        (out / names[1]).write_text(json.dumps(doc, indent=2), encoding="utf-8")
        plot_png(report, str(out / names[2]))
    except OSError as exc:
        raise UserError(f"--out {out}: cannot write the report ({exc.strerror or exc})") from exc
    return [str(out / n) for n in names]
