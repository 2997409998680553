"""Oracle-component ablations: the same tasks under the baseline and oracle configurations.

"Replace one component at a time with an oracle version and re-run the same
tasks" (playbook, "Counterfactual ablation locates the bottleneck"). The
deltas are not additive, so an ablation is either *marginal* in a declared
order (baseline, +first oracle, +first+second, ...) or the full *lattice* of
the 2^k oracle subsets.

Pairing (acceptance-and-statistics 13.5.3): every configuration runs the
same (task, run index) cells with the same derived seed, so the per-task
difference is a within-task comparison. Matched budgets (13.5.5): every
configuration runs under the same declared ``Budget``. Each trial gets its
own fresh environment (the harness resets and snapshots it).

Sources: a benchmark suite (``agentdojo:banking``, its user tasks) or a
released eval set (``evalset:NAME@VERSION``, its tasks mapped to
environments, see ``_ablate_evalset``). Either way every trial is graded by
the eval-set graders (``_ablate_grading``) and the report's acceptance is
theirs: all mandatory criteria pass.

Resumable: trials already in ``ablation_trials`` under the ablation id (its
run id) are keyed by (config, task, injection task, run index, seed) and
skipped on a restart; trials are saved in chunks so an interruption loses at
most one chunk. Grades are saved before the trials, so a trial that counts
as done always has its grades.
"""

from __future__ import annotations

import itertools
import json
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flywheel.evalset import Grader, GradingContext, Task
from flywheel.evalset import save_trials as save_graded_trials
from flywheel.harness import (
    SEAMS,
    TRIALS,
    AgentSpec,
    Budget,
    CallCapture,
    SeamConfig,
    StoreSpanExporter,
    TrialRecord,
    TrialSpec,
    config_id,
    for_storage,
    grade_records,
    plan_trials,
    run_trials,
    save_trials,
    suite_task,
)
from opentelemetry.sdk.trace.export import SpanExporter

from flywheel import NotFoundError, Store, UserError, canonical_json

from ._ablate_evalset import EvalUnit

RUNS_TABLE = "ablation_runs"
RESULTS_TABLE = "ablation_results"
BASELINE = "baseline"

CellKey = tuple[str, str, str, int]  # (config_key, task_id, injection_task_id, run_index)
#: What identifies a trial's cell from its record: (config id, environment task,
#: injection task, run index, seed); seeds are unique per (task, run) in a plan.
_SpecKey = tuple[str, str, str, int, int]


def config_key(oracles: Sequence[str]) -> str:
    """``baseline`` or ``+a+b`` (oracles in the declared order)."""
    return BASELINE if not oracles else "+" + "+".join(oracles)


def configurations(oracles: Sequence[str], *, lattice: bool = False) -> list[tuple[str, ...]]:
    """Oracle sets to run, baseline first.

    Marginal: ``(), (o1,), (o1, o2), ...`` in the declared order (k + 1
    configurations). Lattice: every subset (2^k), by size then declared order.
    """
    order = list(oracles)
    if len(set(order)) != len(order):
        raise UserError(f"--oracles {','.join(order)}: each seam at most once")
    unknown = [o for o in order if o not in SEAMS]
    if unknown:
        raise UserError(
            f"--oracles: unknown seam(s) {', '.join(unknown)}; choose from {', '.join(SEAMS)}"
        )
    if not lattice:
        return [tuple(order[:i]) for i in range(len(order) + 1)]
    return [c for r in range(len(order) + 1) for c in itertools.combinations(order, r)]


@dataclass(frozen=True)
class AblationPlan:
    """What an ablation runs: one source, one agent, one budget, several oracle sets.

    The source is a suite (``agentdojo:banking``; ``tasks`` picks user
    tasks) or a released eval set (``evalset`` = ``NAME@VERSION``, ``suite``
    = ``evalset:NAME@VERSION``, ``units`` its runnable tasks with their
    canonical JSON, so a resume needs no bundle; ``skipped`` the unrunnable
    task ids left out with ``--skip-unrunnable``).
    """

    suite: str
    agent: AgentSpec
    oracles: tuple[str, ...]
    lattice: bool = False
    runs: int = 3
    budget: Budget = field(default_factory=Budget)
    seed: int = 0
    tasks: tuple[str, ...] = ()
    evalset: str = ""
    evalset_sha256: str = ""
    evalset_path: str = ""
    units: tuple[EvalUnit, ...] = ()
    skipped: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        """``evalset NAME@VERSION (manifest sha256 ...)`` or ``suite agentdojo:...``."""
        if self.evalset:
            return f"evalset {self.evalset} (manifest sha256 {self.evalset_sha256})"
        return f"suite {self.suite}"

    @property
    def configs(self) -> list[tuple[str, ...]]:
        """The oracle sets, baseline first."""
        return configurations(self.oracles, lattice=self.lattice)

    @property
    def config_keys(self) -> list[str]:
        """Their keys (``baseline``, ``+planner``, ...)."""
        return [config_key(c) for c in self.configs]

    def trials(self) -> list[tuple[str, TrialSpec]]:
        """(config key, spec) for every cell; seeds identical across configurations."""
        return [(k, s) for k, _, s in self.cells()]

    def cells(self) -> list[tuple[str, str, TrialSpec]]:
        """(config key, task id of the pairing unit, spec) for every cell.

        Suite source: the unit is the user task. Eval-set source: the unit
        is the eval-set task (two tasks may run the same environment task);
        each (task, run) gets its own seed, the same in every configuration.
        """
        if self.evalset:
            return self._evalset_cells()
        out: list[tuple[str, str, TrialSpec]] = []
        for oracles in self.configs:
            specs = plan_trials(
                self.suite,
                self.agent,
                tasks=list(self.tasks) or None,
                runs=self.runs,
                seams=SeamConfig.from_oracles(oracles),
                budget=self.budget,
                seed=self.seed,
            )
            out.extend((config_key(oracles), s.task_id, s) for s in specs)
        return out

    def _evalset_cells(self) -> list[tuple[str, str, TrialSpec]]:
        if self.runs < 1:
            raise UserError(f"--runs {self.runs}: must be at least 1")
        if not self.units:
            raise UserError(f"--evalset {self.evalset}: no runnable task to run")
        rng = random.Random(self.seed)
        seeds: dict[tuple[str, int], int] = {}
        used: set[int] = set()
        for u in self.units:
            for r in range(self.runs):
                s = rng.randrange(2**31)
                while s in used:
                    s = rng.randrange(2**31)
                used.add(s)
                seeds[(u.task_id, r)] = s
        out: list[tuple[str, str, TrialSpec]] = []
        for oracles in self.configs:
            seams = SeamConfig.from_oracles(oracles)
            key = config_key(oracles)
            for u in self.units:
                for r in range(self.runs):
                    spec = TrialSpec(
                        suite=u.suite,
                        task_id=u.user_task,
                        agent=self.agent,
                        seams=seams,
                        budget=self.budget,
                        injection_task_id=u.injection_task,
                        seed=seeds[(u.task_id, r)],
                        run_index=r,
                    )
                    out.append((key, u.task_id, spec))
        return out

    def grading_tasks(self) -> dict[str, Task]:
        """Pairing-unit task id -> the task its trials are graded against."""
        if self.evalset:
            return {u.task_id: u.task() for u in self.units}
        return {t: suite_task(self.suite, t) for t in dict.fromkeys(u for _, u, _ in self.cells())}

    def config_ids(self) -> dict[str, str]:
        """Config key -> the harness's config id (agent, seams, budget)."""
        return {
            config_key(c): config_id(self.agent, SeamConfig.from_oracles(c), self.budget)
            for c in self.configs
        }

    def to_json(self) -> dict[str, Any]:
        """JSON-able form (stored with the run; rebuilt by ``from_json``)."""
        return {
            "suite": self.suite,
            "agent": self.agent.to_json(),
            "oracles": list(self.oracles),
            "lattice": self.lattice,
            "runs": self.runs,
            "budget": self.budget.to_json(),
            "seed": self.seed,
            "tasks": list(self.tasks),
            **(
                {
                    "evalset": self.evalset,
                    "evalset_sha256": self.evalset_sha256,
                    "evalset_path": self.evalset_path,
                    "units": [u.to_json() for u in self.units],
                    "skipped": list(self.skipped),
                }
                if self.evalset
                else {}
            ),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> AblationPlan:
        """Inverse of ``to_json``."""
        agent = doc["agent"]
        return cls(
            suite=doc["suite"],
            agent=AgentSpec(agent["name"], dict(agent.get("args") or {})),
            oracles=tuple(doc["oracles"]),
            lattice=bool(doc["lattice"]),
            runs=int(doc["runs"]),
            budget=Budget(**doc["budget"]),
            seed=int(doc["seed"]),
            tasks=tuple(doc.get("tasks") or ()),
            evalset=str(doc.get("evalset") or ""),
            evalset_sha256=str(doc.get("evalset_sha256") or ""),
            evalset_path=str(doc.get("evalset_path") or ""),
            units=tuple(EvalUnit.from_json(u) for u in doc.get("units") or ()),
            skipped=tuple(doc.get("skipped") or ()),
        )


def _spec_key(cid: str, task_id: str, injection: str | None, run: int, seed: int) -> _SpecKey:
    return (cid, task_id, injection or "", int(run), int(seed))


def save_plan(store: Store, ablation_id: str, plan: AblationPlan, *, project: str) -> None:
    """Record the plan of an ablation run (idempotent)."""
    store.insert(
        RUNS_TABLE,
        {
            "project_id": [project],
            "ablation_id": [ablation_id],
            "suite": [plan.suite],
            "agent_spec": [canonical_json(plan.agent.to_json())],
            "oracles": [list(plan.oracles)],
            "lattice": [plan.lattice],
            "runs": [plan.runs],
            "seed": [plan.seed],
            "tasks": [list(plan.tasks)],
            "budget": [canonical_json(plan.budget.to_json())],
            "configs": [plan.config_keys],
            "plan": [canonical_json(plan.to_json())],
        },
    )


def load_plan(store: Store, ablation_id: str, *, project: str = "default") -> AblationPlan:
    """The stored plan of an ablation run (NotFoundError names the id)."""
    rows = store.query(
        f"SELECT plan FROM {RUNS_TABLE} FINAL WHERE project_id = {{p:String}} "
        "AND ablation_id = {a:String} LIMIT 1",
        {"p": project, "a": ablation_id},
    )
    if not rows:
        raise NotFoundError(
            f"no ablation run {ablation_id!r} in project {project!r}; "
            "start one with `flywheel ablate` (its id is printed at the start)"
        )
    return AblationPlan.from_json(json.loads(rows[0]["plan"]))


def done_cells(
    store: Store, ablation_id: str, plan: AblationPlan, *, project: str = "default"
) -> set[CellKey]:
    """Cells already run under this ablation id (from ``ablation_trials``)."""
    cell_of = _cell_index(plan)
    rows = store.query(
        f"SELECT DISTINCT config_id, task_id, injection_task_id, run_index, seed FROM {TRIALS} "
        "WHERE project_id = {p:String} AND run_id = {r:String}",
        {"p": project, "r": ablation_id},
    )
    found = (
        cell_of.get(
            _spec_key(r["config_id"], r["task_id"], r["injection_task_id"], r["run_index"],
                      r["seed"])
        )
        for r in rows
    )
    return {c for c in found if c is not None}


def _cell_index(plan: AblationPlan) -> dict[_SpecKey, CellKey]:
    """What a trial record's identity maps to: its cell of the plan."""
    out: dict[_SpecKey, CellKey] = {}
    for key, unit, s in plan.cells():
        cid = config_id(s.agent, s.seams, s.budget)
        out[_spec_key(cid, s.task_id, s.injection_task_id, s.run_index, s.seed)] = (
            key, unit, s.injection_task_id or "", s.run_index
        )
    return out


def save_results(
    store: Store,
    ablation_id: str,
    pairs: Sequence[tuple[str, TrialRecord]],
    *,
    project: str,
    task_ids: Sequence[str] | None = None,
) -> None:
    """One ``ablation_results`` row per trial (what the report reads).

    ``task_ids``: the pairing unit of each pair (the eval-set task id of an
    ``--evalset`` run); default: the record's user task.
    """
    if not pairs:
        return
    recs = [r for _, r in pairs]
    store.insert(
        RESULTS_TABLE,
        {
            "project_id": [project] * len(recs),
            "ablation_id": [ablation_id] * len(recs),
            "config_key": [k for k, _ in pairs],
            "config_id": [r.config_id for r in recs],
            "task_id": list(task_ids) if task_ids is not None else [r.task_id for r in recs],
            "injection_task_id": [r.injection_task_id for r in recs],
            "run_index": [r.run_index for r in recs],
            "seed": [r.seed for r in recs],
            "trial_id": [r.trial_id for r in recs],
            "trace_id": [r.trace_id for r in recs],
            "status": [r.status for r in recs],
            "utility": [r.utility for r in recs],
            "cost": [r.cost for r in recs],
            "tokens": [r.input_tokens + r.output_tokens for r in recs],
            "tool_calls": [r.tool_calls for r in recs],
            "duration_s": [r.duration_s for r in recs],
            "faults": [canonical_json(r.faults) for r in recs],
        },
    )


def load_results(
    store: Store, ablation_id: str, *, project: str = "default"
) -> list[dict[str, Any]]:
    """Result rows of an ablation run, one per cell (the newest when a cell repeats).

    Each row carries the graders' ``verdict`` and ``accepted`` (from the
    trial's grades in ``evalset_trials``). A trial without grades (an
    ablation run before grading existed) has ``accepted`` None and the
    report falls back to its AgentDojo ``utility``; in an eval-set run it
    counts as ``unknown``, not accepted.
    """
    rows = store.query(
        f"SELECT * FROM {RESULTS_TABLE} FINAL WHERE project_id = {{p:String}} "
        "AND ablation_id = {a:String} ORDER BY config_key, task_id, injection_task_id, run_index",
        {"p": project, "a": ablation_id},
    )
    verdicts = _verdicts(store, [r["trial_id"] for r in rows], project)
    strict = bool(rows) and _is_evalset_run(store, ablation_id, project)
    for r in rows:
        r["faults"] = json.loads(r["faults"]) if r.get("faults") else []
        v = verdicts.get(r["trial_id"])
        if v is None and strict:
            v = "unknown"
        r["verdict"] = v or ""
        r["accepted"] = None if v is None else v == "pass"
    return rows


def _verdicts(store: Store, trial_ids: Sequence[str], project: str) -> dict[str, str]:
    """Trial id -> the graders' verdict (``evalset_trials``, newest write)."""
    out: dict[str, str] = {}
    for i in range(0, len(trial_ids), 5000):
        for r in store.query(
            "SELECT trial_id, verdict FROM evalset_trials FINAL WHERE project_id = {p:String} "
            "AND trial_id IN {t:Array(String)}",
            {"p": project, "t": list(trial_ids[i : i + 5000])},
        ):
            out[r["trial_id"]] = r["verdict"]
    return out


def _is_evalset_run(store: Store, ablation_id: str, project: str) -> bool:
    suite = store.scalar(
        f"SELECT any(suite) AS s FROM {RUNS_TABLE} FINAL WHERE project_id = {{p:String}} "
        "AND ablation_id = {a:String}",
        {"p": project, "a": ablation_id},
    )
    return str(suite or "").startswith("evalset:")


@dataclass
class AblationRun:
    """An ablation run's id, plan, what this call ran and what it skipped."""

    ablation_id: str
    plan: AblationPlan
    ran: int
    skipped: int
    elapsed_s: float
    spend: float


def new_ablation_id() -> str:
    """A fresh ablation id (also the run id of its trials)."""
    return f"abl-{uuid.uuid4().hex[:12]}"


def run_ablation(
    store: Store,
    plan: AblationPlan | None = None,
    *,
    resume: str | None = None,
    workers: int = 1,
    exporter: SpanExporter | None = None,
    project: str = "default",
    chunk: int = 200,
    on_start: Callable[[str, int, int], None] | None = None,
    on_trial: Callable[[TrialRecord], None] | None = None,
) -> AblationRun:
    """Run (or resume) an ablation; trials, spans and results go to the store.

    Args:
        store: The platform store (migrated).
        plan: What to run; omit with ``resume`` to use the stored plan.
        resume: An ablation id to continue: its stored plan is used (a given
            ``plan`` must equal it) and cells already in the store are skipped.
        workers: Concurrent trials (threads).
        exporter: Where spans go (default: this store).
        project: Project id of every row.
        chunk: Trials per save; an interruption loses at most one chunk.
        on_start: ``(ablation_id, total_cells, to_run)`` before the first trial.
        on_trial: Called with each finished trial (progress, spend).
    """
    if workers < 1:
        raise UserError(f"--workers {workers}: must be at least 1")
    if resume:
        stored = load_plan(store, resume, project=project)
        if plan is not None and plan != stored:
            raise UserError(
                f"--resume {resume}: the given options differ from the stored plan "
                f"{canonical_json(stored.to_json())}; resume with the same options or none"
            )
        plan, ablation_id = stored, resume
    else:
        if plan is None:
            raise UserError("nothing to run: give a plan or --resume ABLATION_ID")
        ablation_id = new_ablation_id()
        save_plan(store, ablation_id, plan, project=project)
    cells = plan.cells()
    cell_of = _cell_index(plan)
    done = done_cells(store, ablation_id, plan, project=project) if resume else set()

    def cell(s: TrialSpec) -> CellKey:
        cid = config_id(s.agent, s.seams, s.budget)
        return cell_of[_spec_key(cid, s.task_id, s.injection_task_id, s.run_index, s.seed)]

    todo = [s for _, _, s in cells if cell(s) not in done]
    if on_start:
        on_start(ablation_id, len(cells), len(todo))
    capture = CallCapture(exporter or StoreSpanExporter(store, project=project))
    tasks = plan.grading_tasks()
    context = GradingContext(base_dir=Path(plan.evalset_path) if plan.evalset_path else None)
    cache: dict[str, Grader] = {}
    t0 = time.perf_counter()
    spend = 0.0
    ran = 0
    for start in range(0, len(todo), max(1, chunk)):
        part = todo[start : start + chunk]
        records = run_trials(
            part, capture, workers=workers, run_id=ablation_id, on_trial=on_trial
        )
        where = {
            r.trial_id: cell_of[
                _spec_key(r.config_id, r.task_id, r.injection_task_id, r.run_index, r.seed)
            ]
            for r in records
        }
        graded = grade_records(
            records, tasks, {t: c[1] for t, c in where.items()}, capture, context, cache=cache
        )
        save_graded_trials(store, [for_storage(t) for t in graded], project_id=project)
        save_trials(store, records, project=project)
        save_results(
            store,
            ablation_id,
            [(where[r.trial_id][0], r) for r in records],
            project=project,
            task_ids=[where[r.trial_id][1] for r in records],
        )
        ran += len(records)
        spend += sum(r.cost for r in records)
    return AblationRun(
        ablation_id=ablation_id,
        plan=plan,
        ran=ran,
        skipped=len(cells) - len(todo),
        elapsed_s=time.perf_counter() - t0,
        spend=spend,
    )
