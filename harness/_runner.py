"""Trials: one fresh environment, one agent, five seams, one trace each.

A trial resets its environment to s0 under a new identity, snapshots s0,
runs the agent through an ``AgentContext`` under an ``invoke_agent`` root
span, snapshots sT and asks the environment for its own verdicts. The
outcome is ``completed`` (with utility / security), ``budget_exhausted`` or
``error``; the record carries the specs that rebuild the configuration.
"""

from __future__ import annotations

import dataclasses
import random
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from flywheel import UserError, canonical_json, sha256_hex

from ._agents import AgentSpec, build_agent
from ._budget import Budget, BudgetExhausted, BudgetMeter
from ._context import AgentContext
from ._env import Environment
from ._export import tracer_provider
from ._seams import SeamConfig

SCHEMA_VERSION = 1
STATUSES = ("completed", "budget_exhausted", "error")


def parse_suite(suite: str) -> tuple[str, str]:
    """``agentdojo:banking`` -> ("agentdojo", "banking")."""
    kind, sep, name = suite.partition(":")
    if not sep or kind != "agentdojo" or not name:
        raise UserError(f"--suite {suite!r}: expected agentdojo:banking|slack|travel|workspace")
    return kind, name


def make_environment(suite: str, task_id: str, injection_task_id: str | None = None) -> Environment:
    """An environment adapter for one task of a suite."""
    _, name = parse_suite(suite)
    from ._agentdojo import AgentDojoEnvironment

    return AgentDojoEnvironment(name, task_id, injection_task_id)


def config_id(agent: AgentSpec, seams: SeamConfig, budget: Budget) -> str:
    """A stable id of (agent spec, seam specs, budget): like is compared with like."""
    doc = {"agent": agent.to_json(), "seams": seams.to_json(), "budget": budget.to_json()}
    return "cfg-" + sha256_hex(canonical_json(doc))[:16]


@dataclass(frozen=True)
class TrialSpec:
    """What to run: a task (and injection task), an agent, seams, a budget, a seed."""

    suite: str
    task_id: str
    agent: AgentSpec
    seams: SeamConfig = field(default_factory=SeamConfig.from_oracles)
    budget: Budget = field(default_factory=Budget)
    injection_task_id: str | None = None
    seed: int = 0
    run_index: int = 0


@dataclass
class TrialRecord:
    """One trial's identity, configuration, outcome, cost, snapshots and faults."""

    trial_id: str
    run_id: str
    suite: str
    task_id: str
    injection_task_id: str
    environment_id: str
    trace_id: str
    config_id: str
    agent: dict[str, Any]
    seams: list[dict[str, Any]]
    seam_modes: dict[str, str]
    budget: dict[str, Any]
    seed: int
    run_index: int
    status: str
    utility: bool | None
    security: bool | None
    budget_resource: str
    error: str
    final_output: str
    tool_calls: int
    write_calls: int
    input_tokens: int
    output_tokens: int
    cost: float
    started_ns: int
    duration_s: float
    faults: list[dict[str, Any]]
    notes: dict[str, Any]
    timings: dict[str, float]
    s0: str
    sT: str  # noqa: N815 - the playbook's name

    @property
    def budget_exhausted(self) -> bool:
        """True when the trial ended on a budget."""
        return self.status == "budget_exhausted"

    def summary(self) -> dict[str, Any]:
        """The record without snapshots (for ``--json`` and listings)."""
        d = dataclasses.asdict(self)
        d.pop("s0")
        d.pop("sT")
        d["s0_sha256"] = sha256_hex(self.s0)
        d["sT_sha256"] = sha256_hex(self.sT)
        d["state_changed"] = self.s0 != self.sT
        return d


def run_trial(spec: TrialSpec, tracer: Any, *, run_id: str = "") -> TrialRecord:
    """Run one trial and return its record (never raises for agent failures)."""
    trial_id = f"trial-{uuid.uuid4().hex}"
    started_ns = time.time_ns()
    t0 = time.perf_counter()
    env = make_environment(spec.suite, spec.task_id, spec.injection_task_id)
    env_id = env.reset()
    task = env.task()
    s0 = env.snapshot()
    t_reset = time.perf_counter()
    cfg = config_id(spec.agent, spec.seams, spec.budget)
    attrs = _trial_attributes(spec, trial_id=trial_id, env_id=env_id, cfg=cfg, run_id=run_id)
    meter = BudgetMeter(spec.budget)
    with tracer.start_as_current_span(
        f"invoke_agent {spec.agent.name}",
        kind=SpanKind.INTERNAL,
        attributes={
            **attrs,
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": spec.agent.name,
            "gen_ai.conversation.id": trial_id,
            "flywheel.agent.spec": canonical_json(spec.agent.to_json()),
            "flywheel.seams": canonical_json(spec.seams.to_json()),
            "flywheel.budget": canonical_json(spec.budget.to_json()),
            "flywheel.seed": spec.seed,
            "flywheel.input": task.prompt,
        },
        record_exception=False,
        set_status_on_exception=False,
    ) as root:
        ctx, status, error, output = _run_agent(spec, env, task, meter, tracer, attrs)
        if ctx is not None:
            _commit_staged(ctx, tracer, attrs, root)
        t_agent = time.perf_counter()
        outcome = _grade(env, output, ctx.calls if ctx is not None else [], status, error)
        sT = env.snapshot()
        t_grade = time.perf_counter()
        _mark_root(root, outcome, output, meter, ctx)
        trace_id = format(root.get_span_context().trace_id, "032x")
    usage = ctx.usage if ctx is not None else None
    return TrialRecord(
        trial_id=trial_id,
        run_id=run_id,
        suite=spec.suite,
        task_id=spec.task_id,
        injection_task_id=spec.injection_task_id or "",
        environment_id=env_id,
        trace_id=trace_id,
        config_id=cfg,
        agent=spec.agent.to_json(),
        seams=spec.seams.to_json(),
        seam_modes=spec.seams.modes(),
        budget=spec.budget.to_json(),
        seed=spec.seed,
        run_index=spec.run_index,
        status=outcome.status,
        utility=outcome.utility,
        security=outcome.security,
        budget_resource=meter.tripped.resource if meter.tripped is not None else "",
        error=outcome.error,
        final_output=output,
        tool_calls=meter.calls,
        write_calls=meter.write_calls,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        cost=usage.cost if usage else 0.0,
        started_ns=started_ns,
        duration_s=time.perf_counter() - t0,
        faults=[f.to_json() for f in ctx.faults] if ctx is not None else [],
        notes=ctx.notes if ctx is not None else {},
        timings={
            "reset_s": t_reset - t0,
            "agent_s": t_agent - t_reset,
            "grade_s": t_grade - t_agent,
        },
        s0=s0,
        sT=sT,
    )


def _trial_attributes(
    spec: TrialSpec, *, trial_id: str, env_id: str, cfg: str, run_id: str
) -> dict[str, Any]:
    """The attributes every span of a trial carries (task, trial, environment, config, seams)."""
    attrs: dict[str, Any] = {
        "flywheel.task.id": spec.task_id,
        "flywheel.trial.id": trial_id,
        "flywheel.env.id": env_id,
        "flywheel.config.id": cfg,
        "flywheel.suite": spec.suite,
        **{f"flywheel.seam.{s}": m for s, m in spec.seams.modes().items()},
    }
    if spec.injection_task_id:
        attrs["flywheel.injection_task.id"] = spec.injection_task_id
    if run_id:
        attrs["flywheel.run.id"] = run_id
    return attrs


def _run_agent(
    spec: TrialSpec,
    env: Environment,
    task: Any,
    meter: BudgetMeter,
    tracer: Any,
    attrs: dict[str, Any],
) -> tuple[AgentContext | None, str, str, str]:
    """Run the agent on the task without its ground truth: (context, status, error, output)."""
    status, error, output = "completed", "", ""
    public_task = dataclasses.replace(
        task,
        ground_truth=(),
        injection_ground_truth=(),
        ground_truth_output="",
        injection_ground_truth_output="",
    )
    ctx: AgentContext | None = None
    try:
        agent = build_agent(spec.agent)
        ctx = AgentContext(
            _env=env,
            task=public_task,
            seams=spec.seams,
            meter=meter,
            tracer=tracer,
            attributes=attrs,
            rng=random.Random(spec.seed),
            reference=task if getattr(agent, "needs_reference", False) else None,
        )
        output = str(agent(ctx) or "")
    except BudgetExhausted:
        status = "budget_exhausted"
    except Exception as exc:  # noqa: BLE001 - an agent failure is a trial outcome
        status, error = "error", f"{type(exc).__name__}: {exc}"[:2000]
    if meter.tripped is not None:
        status = "budget_exhausted"
    return ctx, status, error, output


@dataclass
class _Outcome:
    """A trial's final status, error and the environment's verdicts."""

    status: str
    error: str
    utility: bool | None = None
    security: bool | None = None


def _grade(env: Environment, output: str, calls: list[Any], status: str, error: str) -> _Outcome:
    """The environment's verdicts on the run; a checker crash is recorded, not raised."""
    outcome = _Outcome(status=status, error=error)
    try:
        verdicts = env.evaluate(output, calls)
        outcome.utility, outcome.security = verdicts.utility, verdicts.security
    except Exception as exc:  # noqa: BLE001 - a checker crash is recorded, not raised
        if outcome.status == "completed":
            outcome.status = "error"
        outcome.error = outcome.error or f"evaluate: {type(exc).__name__}: {exc}"[:2000]
    return outcome


def _mark_root(
    root: Any, outcome: _Outcome, output: str, meter: BudgetMeter, ctx: AgentContext | None
) -> None:
    """Write the trial's outcome, budget and injected faults onto its root span."""
    root.set_attribute("flywheel.trial.status", outcome.status)
    root.set_attribute("flywheel.output", output)
    if outcome.utility is not None:
        root.set_attribute("flywheel.outcome.utility", outcome.utility)
    if outcome.security is not None:
        root.set_attribute("flywheel.outcome.security", outcome.security)
    if meter.tripped is not None:
        root.set_attribute("flywheel.budget.exhausted", meter.tripped.resource)
    if ctx is not None and ctx.faults:
        root.set_attribute("flywheel.sim.faults", canonical_json([f.to_json() for f in ctx.faults]))
    if outcome.status == "error":
        root.set_status(Status(StatusCode.ERROR, outcome.error[:500]))


def _commit_staged(ctx: AgentContext, tracer: Any, attrs: dict[str, Any], root: Any) -> None:
    """Commit or undo the staged writes of a ``tools.staged`` trial (a span per decision)."""
    commit = getattr(ctx._impl.get("tools"), "commit", None)
    if commit is None:
        return
    log = commit(random.Random(ctx.rng.random()))
    for w in log:
        with tracer.start_as_current_span(
            f"{w.decision} {w.call.name}",
            kind=SpanKind.INTERNAL,
            attributes={
                **attrs,
                "gen_ai.operation.name": w.decision,
                "flywheel.staged.tool": w.call.name,
                "flywheel.staged.call_id": w.call.id,
                "flywheel.staged.decision": w.decision,
                "flywheel.staged.reason": w.reason,
            },
        ):
            pass
    root.set_attribute("flywheel.staged.committed", sum(w.decision == "commit" for w in log))
    root.set_attribute("flywheel.staged.undone", sum(w.decision == "undo" for w in log))


def plan_trials(
    suite: str,
    agent: AgentSpec,
    *,
    tasks: Sequence[str] | None = None,
    injections: bool | Sequence[str] = False,
    runs: int = 1,
    seams: SeamConfig | None = None,
    budget: Budget | None = None,
    seed: int = 0,
) -> list[TrialSpec]:
    """Trials for tasks x (injection tasks) x runs, each with its own derived seed."""
    from ._agentdojo import injection_task_ids, task_ids

    _, name = parse_suite(suite)
    all_tasks = task_ids(name)
    chosen = list(tasks) if tasks else all_tasks
    unknown = [t for t in chosen if t not in all_tasks]
    if unknown:
        raise UserError(
            f"unknown task(s) in {suite}: {', '.join(unknown)}; "
            f"choose from user_task_0..user_task_{len(all_tasks) - 1}"
        )
    if injections is True:
        inj: list[str | None] = list(injection_task_ids(name))
    elif injections:
        inj = list(injections)
    else:
        inj = [None]
    if runs < 1:
        raise UserError(f"--runs {runs}: must be at least 1")
    seams = seams or SeamConfig.from_oracles()
    budget = budget or Budget()
    rng = random.Random(seed)
    return [
        TrialSpec(suite, t, agent, seams, budget, i, rng.randrange(2**31), r)
        for t in chosen
        for i in inj
        for r in range(runs)
    ]


def run_trials(
    specs: Iterable[TrialSpec],
    exporter: SpanExporter,
    *,
    workers: int = 1,
    run_id: str | None = None,
    on_trial: Callable[[TrialRecord], None] | None = None,
    batch_spans: bool = True,
    max_export_batch: int = 1_000,
) -> list[TrialRecord]:
    """Run trials (in ``workers`` threads) under one fresh TracerProvider; flush at the end."""
    run_id = run_id or f"run-{uuid.uuid4().hex[:12]}"
    provider = tracer_provider(
        exporter, batch=batch_spans, run_id=run_id, max_export_batch=max_export_batch
    )
    tracer = provider.get_tracer("flywheel.ablation")
    records: list[TrialRecord] = []
    specs = list(specs)
    try:
        if workers <= 1:
            for s in specs:
                rec = run_trial(s, tracer, run_id=run_id)
                records.append(rec)
                if on_trial:
                    on_trial(rec)
        else:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="trial") as pool:
                futures = [pool.submit(run_trial, s, tracer, run_id=run_id) for s in specs]
                for fut in as_completed(futures):
                    rec = fut.result()
                    records.append(rec)
                    if on_trial:
                        on_trial(rec)
    finally:
        provider.force_flush()
        provider.shutdown()
    return records
