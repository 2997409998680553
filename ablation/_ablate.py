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

Resumable: trials already in ``ablation_trials`` under the ablation id (its
run id) are keyed by (config, task, injection task, run index) and skipped
on a restart; trials are saved in chunks so an interruption loses at most
one chunk.
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace.export import SpanExporter

from flywheel import NotFoundError, Store, UserError

from ._agents import AgentSpec
from ._budget import Budget
from ._env import canonical_json
from ._export import StoreSpanExporter
from ._runner import TrialRecord, TrialSpec, config_id, plan_trials, run_trials
from ._seams import SEAMS, SeamConfig
from ._trials_store import TRIALS, save_trials

RUNS_TABLE = "ablation_runs"
RESULTS_TABLE = "ablation_results"
BASELINE = "baseline"

CellKey = tuple[str, str, str, int]  # (config_key, task_id, injection_task_id, run_index)


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
    """What an ablation runs: one suite, one agent, one budget, several oracle sets."""

    suite: str
    agent: AgentSpec
    oracles: tuple[str, ...]
    lattice: bool = False
    runs: int = 3
    budget: Budget = field(default_factory=Budget)
    seed: int = 0
    tasks: tuple[str, ...] = ()

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
        out: list[tuple[str, TrialSpec]] = []
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
            out.extend((config_key(oracles), s) for s in specs)
        return out

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
        )


def _cell(key: str, spec: TrialSpec) -> CellKey:
    return (key, spec.task_id, spec.injection_task_id or "", spec.run_index)


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
    by_id = {v: k for k, v in plan.config_ids().items()}
    rows = store.query(
        f"SELECT DISTINCT config_id, task_id, injection_task_id, run_index FROM {TRIALS} "
        "WHERE project_id = {p:String} AND run_id = {r:String}",
        {"p": project, "r": ablation_id},
    )
    return {
        (by_id[r["config_id"]], r["task_id"], r["injection_task_id"], int(r["run_index"]))
        for r in rows
        if r["config_id"] in by_id
    }


def save_results(
    store: Store, ablation_id: str, pairs: Sequence[tuple[str, TrialRecord]], *, project: str
) -> None:
    """One ``ablation_results`` row per trial (what the report reads)."""
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
            "task_id": [r.task_id for r in recs],
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
    """Result rows of an ablation run, one per cell (the newest when a cell repeats)."""
    rows = store.query(
        f"SELECT * FROM {RESULTS_TABLE} FINAL WHERE project_id = {{p:String}} "
        "AND ablation_id = {a:String} ORDER BY config_key, task_id, injection_task_id, run_index",
        {"p": project, "a": ablation_id},
    )
    for r in rows:
        r["faults"] = json.loads(r["faults"]) if r.get("faults") else []
    return rows


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
    cells = plan.trials()
    done = done_cells(store, ablation_id, plan, project=project) if resume else set()
    todo = [(k, s) for k, s in cells if _cell(k, s) not in done]
    if on_start:
        on_start(ablation_id, len(cells), len(todo))
    exporter = exporter or StoreSpanExporter(store, project=project)
    key_of: dict[tuple[str, str, int, str], str] = {}
    for k, s in todo:
        cid = config_id(s.agent, s.seams, s.budget)
        key_of[(cid, s.task_id, s.run_index, s.injection_task_id or "")] = k
    t0 = time.perf_counter()
    spend = 0.0
    ran = 0
    for start in range(0, len(todo), max(1, chunk)):
        part = [s for _, s in todo[start : start + chunk]]
        records = run_trials(
            part, exporter, workers=workers, run_id=ablation_id, on_trial=on_trial
        )
        save_trials(store, records, project=project)
        pairs = [
            (key_of[(r.config_id, r.task_id, r.run_index, r.injection_task_id)], r)
            for r in records
        ]
        save_results(store, ablation_id, pairs, project=project)
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
