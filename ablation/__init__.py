"""Agent harness: stateful environments, seams with oracles, budgets, agents, traced trials."""

from ._agentdojo import (
    BENCHMARK_VERSION,
    SUITES,
    AgentDojoEnvironment,
    injection_task_ids,
    injection_vectors,
    is_read_tool,
    task_ids,
)
from ._agents import AgentSpec, agent_names, build_agent, parse_agent, register_agent
from ._budget import Budget, BudgetExhausted, BudgetMeter
from ._context import AgentContext, Fault, Usage
from ._env import (
    LEDGER,
    Environment,
    IdentityLedger,
    TaskInfo,
    ToolCall,
    ToolResult,
    ToolSpec,
    Verdicts,
    canonical_json,
    sha256_hex,
)
from ._export import SERVICE_NAME, StoreSpanExporter, otlp_exporter, tracer_provider
from ._openai import OpenAIChatAgent
from ._reference import DEFAULT_RATES, HAZARDS, ReferenceAgent
from ._runner import (
    SCHEMA_VERSION,
    STATUSES,
    TrialRecord,
    TrialSpec,
    config_id,
    make_environment,
    plan_trials,
    run_trial,
    run_trials,
)
from ._seams import MODES, SEAMS, SeamConfig, SeamSpec, register_seam, seam_names
from ._subprocess import SubprocessAgent
from ._trials_store import load_snapshot, load_trials, save_trials, spec_from_row

__all__ = [
    "BENCHMARK_VERSION",
    "DEFAULT_RATES",
    "HAZARDS",
    "LEDGER",
    "MODES",
    "SCHEMA_VERSION",
    "SEAMS",
    "SERVICE_NAME",
    "STATUSES",
    "SUITES",
    "AgentContext",
    "AgentDojoEnvironment",
    "AgentSpec",
    "Budget",
    "BudgetExhausted",
    "BudgetMeter",
    "Environment",
    "Fault",
    "IdentityLedger",
    "OpenAIChatAgent",
    "ReferenceAgent",
    "SeamConfig",
    "SeamSpec",
    "StoreSpanExporter",
    "SubprocessAgent",
    "TaskInfo",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "TrialRecord",
    "TrialSpec",
    "Usage",
    "Verdicts",
    "agent_names",
    "build_agent",
    "canonical_json",
    "config_id",
    "injection_task_ids",
    "injection_vectors",
    "is_read_tool",
    "load_snapshot",
    "load_trials",
    "make_environment",
    "otlp_exporter",
    "parse_agent",
    "plan_trials",
    "register_agent",
    "register_seam",
    "run_trial",
    "run_trials",
    "save_trials",
    "seam_names",
    "sha256_hex",
    "spec_from_row",
    "task_ids",
    "tracer_provider",
]
