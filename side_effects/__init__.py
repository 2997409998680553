"""Side effects: state snapshots, typed diffs, classification, reconciliation, gate input.

Flow (playbook, "The other things that changed"): snapshot s0 and sT through
adapters (``snapshot("sqlite"|"dirtree"|"json"|"outbox"|"permissions", src)``)
-> ``diff`` -> ``classify`` against a task ``Scope`` (often ``derive_scope`` of
a ground-truth run) and an environment ``Profile`` -> ``reconcile`` with the
trace's ``ToolCall``s -> ``gate_input`` (critical events, counted, never
averaged). ``analyze`` does all of it in one call; ``store_report`` keeps it
per trial.
"""

from ._adapters import Adapter, adapter_names, get_adapter, register_adapter, snapshot
from ._agentdojo import (
    AttackRun,
    Trajectory,
    agentdojo_maps,
    agentdojo_profile,
    attack_run,
    ground_truth_run,
    injected_environment,
    run_calls,
    scope_from_ground_truth,
    snapshot_agentdojo_json,
    snapshot_env,
)
from ._analyze import SideEffectReport, analyze
from ._classify import CategoryTag, Classification, Decision, classify, transient_deltas
from ._diff import Delta, FieldChange, diff, sort_deltas
from ._dirtree import DirectoryAdapter
from ._from_trace import calls_from_trace
from ._gate import CriticalEvent, GateInput, gate_input, merge_gate_inputs, side_effect_summary
from ._io import load_profile, load_scope, load_state
from ._json_doc import JsonDocumentAdapter, maps_from_pydantic
from ._outbox import OutboxAdapter, PermissionMapAdapter
from ._policy import (
    CRITICAL_CATEGORIES,
    DEFAULT_TIERS,
    AllowRule,
    Category,
    CategoryRule,
    ExpectedDelta,
    NoiseRule,
    Profile,
    Scope,
    Tier,
    default_profile,
)
from ._provenance import Observation, observations_from_provenance
from ._reconcile import Attribution, CallFinding, Reconciliation, ToolCall, reconcile
from ._records import Record, Snapshot, display_key
from ._scope import derive_scope
from ._sqlite import SqliteAdapter
from ._store import read_result, store_report, store_result

__all__ = [
    "CRITICAL_CATEGORIES",
    "DEFAULT_TIERS",
    "Adapter",
    "AllowRule",
    "AttackRun",
    "Attribution",
    "CallFinding",
    "Category",
    "CategoryRule",
    "CategoryTag",
    "Classification",
    "CriticalEvent",
    "Decision",
    "Delta",
    "DirectoryAdapter",
    "ExpectedDelta",
    "FieldChange",
    "GateInput",
    "JsonDocumentAdapter",
    "NoiseRule",
    "Observation",
    "OutboxAdapter",
    "PermissionMapAdapter",
    "Profile",
    "Reconciliation",
    "Record",
    "Scope",
    "SideEffectReport",
    "Snapshot",
    "SqliteAdapter",
    "Tier",
    "ToolCall",
    "Trajectory",
    "adapter_names",
    "agentdojo_maps",
    "analyze",
    "agentdojo_profile",
    "attack_run",
    "calls_from_trace",
    "classify",
    "default_profile",
    "derive_scope",
    "diff",
    "display_key",
    "gate_input",
    "get_adapter",
    "ground_truth_run",
    "injected_environment",
    "load_profile",
    "load_scope",
    "load_state",
    "maps_from_pydantic",
    "merge_gate_inputs",
    "observations_from_provenance",
    "read_result",
    "reconcile",
    "register_adapter",
    "run_calls",
    "scope_from_ground_truth",
    "snapshot",
    "side_effect_summary",
    "snapshot_agentdojo_json",
    "snapshot_env",
    "store_report",
    "store_result",
    "sort_deltas",
    "transient_deltas",
]
