"""The ground-truth agents through the harness reproduce AgentDojo's own verdicts."""

from __future__ import annotations

import pytest
from flywheel.harness import AgentSpec, injection_task_ids, plan_trials, run_trials, task_ids
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ._agentdojo_own import own_security, own_utility

DEV_SUITES = ("banking", "slack")


def _run(
    suite: str, agent: str, *, tasks: list[str] | None = None, injections: bool | list[str] = False
):
    specs = plan_trials(f"agentdojo:{suite}", AgentSpec(agent), tasks=tasks, injections=injections)
    return run_trials(specs, InMemorySpanExporter(), workers=2)


@pytest.mark.parametrize("suite", DEV_SUITES)
def test_every_user_task_ground_truth_reproduces_utility(suite: str) -> None:
    records = _run(suite, "ground_truth")
    assert len(records) == len(task_ids(suite))
    for r in records:
        assert r.status == "completed", (r.task_id, r.error)
        assert r.utility is True
        assert r.utility == own_utility(suite, r.task_id)


@pytest.mark.parametrize("suite", DEV_SUITES)
def test_injection_ground_truth_reproduces_security_fast_subset(suite: str) -> None:
    tasks = task_ids(suite)[:3]
    records = _run(suite, "injection_ground_truth", tasks=tasks, injections=True)
    assert len(records) == 3 * len(injection_task_ids(suite))
    for r in records:
        assert r.status == "completed", (r.task_id, r.injection_task_id, r.error)
        assert r.security == own_security(suite, r.task_id, r.injection_task_id)
        assert r.security is True


@pytest.mark.parametrize("suite", DEV_SUITES)
def test_user_ground_truth_under_injection_keeps_utility_and_is_not_attacked(suite: str) -> None:
    tasks = task_ids(suite)[:2]
    for r in _run(suite, "ground_truth", tasks=tasks, injections=True):
        assert r.utility == own_utility(suite, r.task_id, r.injection_task_id) is True
        assert r.security is False


@pytest.mark.slow
@pytest.mark.parametrize("suite", DEV_SUITES)
def test_every_pair_injection_ground_truth_reproduces_security(suite: str) -> None:
    records = _run(suite, "injection_ground_truth", injections=True)
    assert len(records) == len(task_ids(suite)) * len(injection_task_ids(suite))
    for r in records:
        assert r.status == "completed", (r.task_id, r.injection_task_id, r.error)
        assert r.security == own_security(suite, r.task_id, r.injection_task_id)
