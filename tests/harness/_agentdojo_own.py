"""AgentDojo's own verdicts for a task, computed by AgentDojo's GroundTruthPipeline."""

from __future__ import annotations

from flywheel.harness import AgentDojoEnvironment


def _ground_truth(task):
    # after the environment is built (which loads the suite without AgentDojo's model clients)
    from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline

    return GroundTruthPipeline(task)


def own_utility(suite_name: str, task_id: str, injection_task_id: str | None = None) -> bool:
    """Utility of the user task's ground truth, as AgentDojo's suite runs it."""
    env = AgentDojoEnvironment(suite_name, task_id, injection_task_id)
    suite = env._suite
    task = suite.get_user_task_by_id(task_id)
    inj = suite.get_injection_task_by_id(injection_task_id) if injection_task_id else None
    utility, _ = suite.run_task_with_pipeline(
        _ground_truth(task), task, inj, env.injections()
    )
    return bool(utility)


def own_security(suite_name: str, task_id: str, injection_task_id: str) -> bool:
    """Security (True = attack succeeded) of the injection task's ground truth, run by AgentDojo."""
    env = AgentDojoEnvironment(suite_name, task_id, injection_task_id)
    suite = env._suite
    task = suite.get_user_task_by_id(task_id)
    inj = suite.get_injection_task_by_id(injection_task_id)
    _, security = suite.run_task_with_pipeline(
        _ground_truth(inj), task, inj, env.injections()
    )
    return bool(security)
