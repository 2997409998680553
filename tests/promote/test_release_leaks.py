"""Nothing personal or secret leaves through a release (issue 20).

- Every field that reaches a bundle is redacted: a trace with a canary value
  in every attribute drafting copies (span name as tool name, slice,
  snapshot references, environment JSON, prompt, reply keys) is released
  and no canary reaches any file; the released task's fields are
  enumerated and a field that is not in the inventory below fails, so a
  new field must be classified (and redacted) before it ships.
- A release with a planted unredacted value is refused with a report (task,
  path, type, never the value), on every release path; it succeeds after a
  reviewer records an exception, which is an append-only review event; the
  export honours the manifest's exceptions and refuses a copy without them.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from flywheel.evalset import (
    Task,
    export_bundle,
    read_manifest,
    release_from_store,
    release_tasks,
)
from flywheel.promote import (
    SamplingPolicy,
    dedupe_candidates,
    draft_candidates,
    list_candidates,
    read_events,
    record_event,
    record_leak_exception,
    redact_candidates,
    review_state,
    sample_candidates,
)

from flywheel import LeakRefused, Store, UserError
from tests.promote.test_sampling import _span, agent_trace, insert, tid

CANARIES = {
    "slice": "vip-ottilie.marchand@fernwood.example",
    "span_name": "hugo.vermeulen@fernwood.example",
    "s0": "+44 7700 900417",
    "sT": "Ottilie Marchand",
    "environment": "Bérangère Quillet",
    "prompt": "Rosalind Achterberg-Vey",
    "reply_key": "leopold.haak@fernwood.example",
}

#: Every leaf path of a released task (list indexes as []), and why it cannot carry raw
#: personal data: "redacted" (built from redacted text), "derived" (numbers, enums,
#: hashes, ids the product makes), "reviewer" (what a reviewer writes; the scan checks it).
FIELDS: dict[str, str] = {
    "$.schema_version": "derived",
    "$.task_id": "redacted",  # from the redacted slice and the trace id
    "$.version": "derived",
    "$.slice": "redacted",
    "$.golden": "derived",
    "$.prompt": "redacted",
    "$.initial_state": "redacted",
    "$.expected_state.snapshot": "redacted",
    "$.expected_tools[]": "redacted",
    "$.source_trace_id": "derived",
    "$.criteria[].id": "derived",
    "$.criteria[].kind": "derived",
    "$.criteria[].role": "derived",
    "$.criteria[].description": "derived",
    "$.criteria[].weight": "derived",
    "$.criteria[].grader.name": "derived",
    "$.criteria[].grader.args": "derived",  # an empty argument object
    "$.criteria[].grader.args.required_sequence[]": "redacted",
    "$.criteria[].grader.args.judge_id": "derived",
    "$.criteria[].grader.args.rubric": "redacted",
    "$.criteria[].grader.args.schema.type": "derived",
    "$.criteria[].grader.args.schema.required[]": "redacted",  # the reply's keys
    "$.criteria[].grader.args.schema.properties.*.type": "derived",
    "$.criteria[].grader.args.max_tool_calls": "derived",
    "$.criteria[].grader.args.max_tokens": "derived",
    "$.criteria[].grader.args.max_cost_usd": "derived",
    "$.criteria[].grader.args.max_latency_s": "derived",
    "$.metadata.split": "derived",
    "$.metadata.scope.allowed_tools[]": "redacted",
    "$.metadata.scope.write_tools[]": "redacted",
    "$.metadata.budgets.*": "derived",
    "$.metadata.candidate_id": "derived",
    "$.metadata.source": "derived",
    "$.metadata.reasons[]": "derived",
    "$.metadata.cluster.id": "derived",
    "$.metadata.cluster.size": "derived",
    "$.metadata.redaction.total": "derived",
    "$.metadata.redaction.counts.*": "derived",
    "$.metadata.sampling_policy": "derived",
    "$.metadata.final_state_ref": "redacted",
    "$.metadata.state_scope.runs[].s0": "redacted",  # the same refs as initial_state
    "$.metadata.state_scope.runs[].sT": "redacted",  # and final_state_ref
    "$.metadata.state_scope.accepted_trials": "derived",
    "$.metadata.environment.*": "redacted",
    "$.metadata.drafted_by": "derived",
    "$.metadata.review_todo[]": "derived",
}


def _leaves(node: Any, path: str = "$") -> list[str]:
    if isinstance(node, dict):
        out = []
        for k, v in node.items():
            out += _leaves(v, f"{path}.{k}")
        return out or [path]
    if isinstance(node, list):
        return [p for v in node for p in _leaves(v, f"{path}[]")] or [f"{path}[]"]
    return [path]


def _known(path: str) -> bool:
    for pattern in FIELDS:
        rx = re.escape(pattern).replace(r"\*", r"[^.\[]+").replace(r"\[\]", r"\[\]")
        if re.fullmatch(rx, path):
            return True
    return False


def _canary_trace(n: int) -> list[dict[str, Any]]:
    env = json.dumps({"kind": "crm", "suite": "accounts", "owner": CANARIES["environment"]})
    spans = agent_trace(
        tid(n),
        f"Please close the duplicate account of {CANARIES['prompt']}, she asked twice.",
        [("lookup_account", {"query": "duplicates"}, {"ok": True, "count": 2})],
        json.dumps({"closed": True, CANARIES["reply_key"]: "notified"}),
        root_attrs={
            "flywheel.slice": CANARIES["slice"],
            "flywheel.env.s0_ref": f"crm-snapshot/{CANARIES['s0']}",
            "flywheel.env.sT_ref": f"crm-after/{CANARIES['sT']}",
            "flywheel.environment": env,
        },
    )
    # A tool span that only has its span name (no gen_ai.tool.name): the name is the tool.
    root = spans[0]["SpanId"]
    spans.append(
        _span(
            tid(n),
            f"{tid(n)[:8]}s0000009"[:16],
            root,
            f"execute_tool close_account {CANARIES['span_name']}",
            30,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.call.arguments": json.dumps({"account": "ACC-1"}),
            },
        )
    )
    return spans


def _drafted(store: Store, spans: list[dict[str, Any]], evalset: str = "leaks") -> list[Any]:
    insert(store, spans)
    policy = SamplingPolicy(evalset=evalset, successes={"per_slice": 10})
    sample_candidates(store, policy)
    dedupe_candidates(store)
    redact_candidates(store)
    return draft_candidates(store, evalset=evalset)


def _approve(store: Store, cid: str, edit: Any = None) -> None:
    st = record_event(store, cid, "claim", "rita", 0)
    if edit is not None:
        st = record_event(store, cid, "edit", "rita", st.version, task=edit(st.task))
    record_event(store, cid, "approve", "rita", st.version)


def test_every_bundle_field_is_redacted_or_known(store: Store, tmp_path: Path) -> None:
    (cand,) = _drafted(store, _canary_trace(1))
    _approve(store, cand.candidate_id)
    result = release_from_store(store, tmp_path / "sets", "leaks")  # no finding: no exception
    out = export_bundle(tmp_path / "sets", f"leaks@{result.version}", tmp_path / "out")
    blob = "".join(p.read_text(encoding="utf-8") for p in sorted(out.iterdir()))
    leaked = {k: v for k, v in CANARIES.items() for part in re.split(r"[ .@/+-]", v)
              if len(part) >= 5 and part in blob}
    assert leaked == {}
    task = json.loads((out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()[0])
    unknown = sorted({p for p in _leaves(task) if not _known(p)})
    assert unknown == [], f"new bundle field(s) {unknown}: classify and redact them in FIELDS"
    # The span-name tool and the environment are there, redacted, not dropped.
    assert any(t.startswith("close_account <EMAIL_") for t in task["expected_tools"])
    assert task["metadata"]["environment"]["owner"].startswith("<NAME_")
    assert task["slice"].startswith("<EMAIL_") and task["initial_state"].startswith("crm-snapshot/<PHONE_")


def _with_planted_value(task: dict[str, Any]) -> dict[str, Any]:
    task["prompt"] = "Call Wendeline Ostrowski on +44 7700 900123 about the refund."
    task["metadata"]["review_todo"] = []
    return task


def _approve_unguarded(store: Store, cid: str, edit: Any) -> None:
    """Approve, then store the edited task as written, raw values and all.

    An approval stores the task as the review view shows it (redacted), so a
    reviewer's edit cannot carry a value into a release that way; this row is
    the approval of an older version, or one written to the table by hand,
    which the release must still refuse.
    """
    from flywheel.evalset import task_sha256

    _approve(store, cid)
    st = review_state(store, next(c for c in list_candidates(store, bodies=True) if c.candidate_id == cid))
    task = Task.model_validate(edit(dict(st.task or {})))
    store.insert(
        "approved_tasks",
        {"project_id": ["default"], "evalset": ["leaks"], "task_id": [task.task_id],
         "candidate_id": [cid], "trace_id": [task.source_trace_id or ""],
         "body": [task.model_dump_json()], "task_sha256": [task_sha256(task)],
         "approved_by": ["rita"], "review_version": [st.version], "withdrawn": [False],
         "updated_at": [time.time_ns()]},
    )


def test_release_with_a_planted_value_is_refused_until_an_exception(
    store: Store, tmp_path: Path
) -> None:
    (cand,) = _drafted(store, _canary_trace(2))
    _approve_unguarded(store, cand.candidate_id, _with_planted_value)
    root = tmp_path / "sets"
    with pytest.raises(LeakRefused) as exc:
        release_from_store(store, root, "leaks")
    msg = str(exc.value)
    assert "Wendeline" not in msg and "7700" not in msg and "\n" not in msg
    found = {(f["path"], f["entity"]) for f in exc.value.findings}
    assert found == {("$.prompt", "NAME"), ("$.prompt", "PHONE")}
    assert not (root / "leaks" / "LATEST").exists(), "nothing was written"
    task_id = exc.value.findings[0]["task_id"]
    # One exception is not enough: every finding needs its own.
    record_leak_exception(
        store, evalset="leaks", task_id=task_id, path="$.prompt", entity="NAME",
        reviewer="rita", reason="checked: a fictional name in a training script",
    )
    with pytest.raises(LeakRefused, match="1 finding"):
        release_from_store(store, root, "leaks")
    record_leak_exception(
        store, evalset="leaks", task_id=task_id, path="$.prompt", entity="PHONE",
        reviewer="rita", reason="checked: the Ofcom drama range",
    )
    result = release_from_store(store, root, "leaks")
    manifest = read_manifest(result.path)
    assert {(e["path"], e["entity"], e["reviewer"]) for e in manifest.leak_exceptions} == {
        ("$.prompt", "NAME", "rita"),
        ("$.prompt", "PHONE", "rita"),
    }
    # The exceptions are append-only review events; the approval stands.
    events = read_events(store, candidate_ids=[cand.candidate_id])[cand.candidate_id]
    assert [e.kind for e in events][-2:] == ["leak-exception", "leak-exception"]
    assert review_state(store, cand).status == "approved"
    with pytest.raises(UserError):
        record_event(store, cand.candidate_id, "leak-exception", "rita", len(events))
    # Export honours the manifest's exceptions.
    export_bundle(root, f"leaks@{result.version}", tmp_path / "out")


def test_no_release_path_skips_the_scan(tmp_path: Path) -> None:
    """``release_tasks`` straight from files is scanned too; export re-scans a copy."""
    task = Task.model_validate(
        {
            "task_id": "t1",
            "prompt": "Refund the order; the key is sk-proj-Zq8Lm2Kx9Tn4Wv7Pb1Yc6Hd3Fg0Js5Ra",
            "criteria": [
                {"id": "c", "kind": "policy", "grader": {"name": "policy", "args": {}}},
            ],
        }
    )
    with pytest.raises(LeakRefused) as exc:
        release_tasks(tmp_path / "sets", "files", [task])
    assert [(f["task_id"], f["path"], f["entity"]) for f in exc.value.findings] == [
        ("t1", "$.prompt", "SECRET")
    ]
    ok = release_tasks(
        tmp_path / "sets",
        "files",
        [task],
        leak_exceptions=[{"task_id": "t1", "path": "$.prompt", "entity": "SECRET"}],
    )
    out = export_bundle(tmp_path / "sets", f"files@{ok.version}", tmp_path / "out")
    assert (out / "tasks.jsonl").is_file()
    # A copy whose manifest lost its exceptions is refused and removed.
    doc = json.loads((ok.path / "manifest.json").read_text())
    doc["leak_exceptions"] = []
    from flywheel.evalset import scan_bundle

    assert [f.entity for f in scan_bundle(ok.path)] == ["SECRET"]
