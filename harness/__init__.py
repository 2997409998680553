"""Agent harness: stateful environments, seams with oracles, budgets, agents, traced trials.

Every trial runs in its own environment identity, through seams (tools,
retrieval, memory, planner, verifier) that have a real and an oracle
implementation, under a budget, and is recorded as a trace in the store.
Oracle ablations (``flywheel.ablation``), failure attribution
(``flywheel.attribution``) and the safety scorecard (``flywheel.safety``) are
built on it.
"""

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
from ._analysis import TrialAnalysis, accepted_runs, analyse_stored_trial, analyse_trial
from ._budget import Budget, BudgetExhausted, BudgetMeter
from ._context import AgentContext, Fault, Usage, text_message, tool_call_message
from ._env import (
    LEDGER,
    Environment,
    IdentityLedger,
    TaskInfo,
    ToolCall,
    ToolResult,
    ToolSpec,
    Verdicts,
)
from ._export import SERVICE_NAME, StoreSpanExporter, otlp_exporter, tracer_provider
from ._grading import (
    AGENTDOJO_UTILITY,
    AgentDojoUtilityGrader,
    CallCapture,
    for_storage,
    grade_records,
    suite_task,
)
from ._openai import OpenAIChatAgent
from ._reference import DEFAULT_RATES, HAZARDS, ReferenceAgent, corrupt, parse_hazards
from ._runner import (
    SCHEMA_VERSION,
    STATUSES,
    TrialRecord,
    TrialSpec,
    config_id,
    make_environment,
    parse_suite,
    plan_trials,
    run_trial,
    run_trials,
)
from ._seams import (
    MODES,
    SEAMS,
    RealMemory,
    RealTools,
    SeamConfig,
    SeamSpec,
    StagedTools,
    register_seam,
    seam_names,
)
from ._subprocess import SubprocessAgent
from ._trials_store import TRIALS, load_snapshot, load_trials, save_trials, spec_from_row

__all__ = [
    "AGENTDOJO_UTILITY",
    "AgentContext",
    "AgentDojoEnvironment",
    "AgentDojoUtilityGrader",
    "AgentSpec",
    "BENCHMARK_VERSION",
    "Budget",
    "BudgetExhausted",
    "BudgetMeter",
    "CallCapture",
    "DEFAULT_RATES",
    "Environment",
    "Fault",
    "HAZARDS",
    "IdentityLedger",
    "LEDGER",
    "MODES",
    "OpenAIChatAgent",
    "RealMemory",
    "RealTools",
    "ReferenceAgent",
    "SCHEMA_VERSION",
    "SEAMS",
    "SERVICE_NAME",
    "STATUSES",
    "SUITES",
    "SeamConfig",
    "SeamSpec",
    "StagedTools",
    "StoreSpanExporter",
    "SubprocessAgent",
    "TRIALS",
    "TaskInfo",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "TrialAnalysis",
    "TrialRecord",
    "TrialSpec",
    "Usage",
    "Verdicts",
    "accepted_runs",
    "agent_names",
    "analyse_stored_trial",
    "analyse_trial",
    "build_agent",
    "config_id",
    "corrupt",
    "for_storage",
    "grade_records",
    "injection_task_ids",
    "injection_vectors",
    "is_read_tool",
    "load_snapshot",
    "load_trials",
    "make_environment",
    "otlp_exporter",
    "parse_agent",
    "parse_hazards",
    "parse_suite",
    "plan_trials",
    "register_agent",
    "register_seam",
    "run_trial",
    "run_trials",
    "save_trials",
    "seam_names",
    "spec_from_row",
    "suite_task",
    "task_ids",
    "text_message",
    "tool_call_message",
    "tracer_provider",
]
