"""Side effects: state snapshots, typed diffs, classification, reconciliation, gate input.

Flow (playbook, "The other things that changed"): snapshot s0 and sT through
adapters (``snapshot("sqlite"|"dirtree"|"json"|"outbox"|"permissions", src)``)
-> ``diff`` -> ``classify`` against a task ``Scope`` (``derive_scope`` of a
reference run, ``scope_from_snapshots`` of an expected end state, or
``learn_scope`` of several correct runs) and an environment ``Profile`` ->
``reconcile`` with the trace's ``ToolCall``s -> ``find_gaps`` (omissions,
wrong values, extras) -> ``gate_input`` (critical events and scope
violations, counted, never averaged). ``analyze`` does all of it in one call;
``store_report`` keeps it per trial.
"""

from ._adapters import Adapter, adapter_names, get_adapter, register_adapter, snapshot
from ._agentdojo import (
    AttackRun,
    Trajectory,
    agentdojo_maps,
    agentdojo_profile,
    agentdojo_suite,
    attack_run,
    ground_truth_run,
    injected_environment,
    run_calls,
    scope_from_ground_truth,
    snapshot_agentdojo_json,
    snapshot_env,
)
from ._analyze import SideEffectReport, analyze
from ._categories import CategoryTag
from ._classify import (
    Classification,
    Decision,
    FieldVerdict,
    classify,
    hidden_creations,
    transient_deltas,
)
from ._diff import Delta, FieldChange, diff, sort_deltas
from ._dirtree import DirectoryAdapter
from ._findings import Finding, count_gaps, find_gaps
from ._from_trace import calls_from_trace
from ._gate import (
    GATE_CATEGORIES,
    CriticalEvent,
    GateInput,
    gate_input,
    merge_gate_inputs,
    side_effect_summary,
)
from ._io import load_profile, load_scope, load_state, load_states
from ._json_doc import JsonDocumentAdapter, maps_from_pydantic
from ._outbox import OutboxAdapter, PermissionMapAdapter
from ._policy import (
    CRITICAL_CATEGORIES,
    DEFAULT_TIERS,
    AllowRule,
    Category,
    CategoryRule,
    Constraint,
    ExpectedDelta,
    NoiseRule,
    Profile,
    Relaxation,
    Scope,
    Tier,
    default_profile,
)
from ._provenance import Observation, observations_from_provenance
from ._reconcile import Attribution, CallFinding, Reconciliation, ToolCall, reconcile
from ._records import Record, Snapshot, display_key
from ._scope import ReferenceRun, derive_scope, learn_scope, scope_from_snapshots
from ._sqlite import SqliteAdapter
from ._store import read_result, store_report, store_result

__all__ = [
    "Adapter",
    "AllowRule",
    "AttackRun",
    "Attribution",
    "CRITICAL_CATEGORIES",
    "CallFinding",
    "Category",
    "CategoryRule",
    "CategoryTag",
    "Classification",
    "Constraint",
    "CriticalEvent",
    "DEFAULT_TIERS",
    "Decision",
    "Delta",
    "DirectoryAdapter",
    "ExpectedDelta",
    "FieldChange",
    "FieldVerdict",
    "Finding",
    "GATE_CATEGORIES",
    "GateInput",
    "JsonDocumentAdapter",
    "NoiseRule",
    "Observation",
    "OutboxAdapter",
    "PermissionMapAdapter",
    "Profile",
    "Reconciliation",
    "Record",
    "ReferenceRun",
    "Relaxation",
    "Scope",
    "SideEffectReport",
    "Snapshot",
    "SqliteAdapter",
    "Tier",
    "ToolCall",
    "Trajectory",
    "adapter_names",
    "agentdojo_maps",
    "agentdojo_profile",
    "agentdojo_suite",
    "analyze",
    "attack_run",
    "calls_from_trace",
    "classify",
    "count_gaps",
    "default_profile",
    "derive_scope",
    "diff",
    "display_key",
    "find_gaps",
    "gate_input",
    "get_adapter",
    "ground_truth_run",
    "hidden_creations",
    "injected_environment",
    "learn_scope",
    "load_profile",
    "load_scope",
    "load_state",
    "load_states",
    "maps_from_pydantic",
    "merge_gate_inputs",
    "observations_from_provenance",
    "read_result",
    "reconcile",
    "register_adapter",
    "run_calls",
    "scope_from_ground_truth",
    "scope_from_snapshots",
    "side_effect_summary",
    "snapshot",
    "snapshot_agentdojo_json",
    "snapshot_env",
    "sort_deltas",
    "store_report",
    "store_result",
    "transient_deltas",
]
