"""Re-run redaction of one candidate with rules a reviewer added.

Why: the default policy misses what only a reader recognises (a customer's
name in free text, a house key under an odd JSON key). The reviewer names
the key or the exact string; the server re-redacts from the *raw* trace (it
alone reads it), replaces the candidate's redacted steps and report, and
re-drafts the task texts that were built from the old redacted text (the
prompt and the judge rubric). The rules are kept per candidate (table
``promote_redaction_rules``) so a later re-run applies them again.

The re-run is a review write like any other: attributed, based on the
version the reviewer saw (stale: 409), and recorded as a ``redact`` event
whose body is the re-drafted task and whose reason names the rules by kind
and label only (never a deny-listed value).
"""

from __future__ import annotations

import copy
import json
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from flywheel.evalset import task_sha256
from flywheel.promote._candidates import load_traces, root_step, steps_json, write_candidates
from flywheel.promote._draft import draft_task
from flywheel.promote._redact import Redactor
from flywheel.pii import CONDITIONAL_LABELS, normalise_key
from flywheel.promote._redact_types import DEFAULT_KEY_RULES, RedactionPolicy, TraceStep
from flywheel.promote._review import (
    ReviewEvent,
    ReviewState,
    _check_won,
    _conflict,
    _insert,
    _lock,
    _require_reviewer,
    drafted_candidate,
    fold,
    review_state,
    validate_task,
)

from flywheel import ConflictError, Store, UserError, record_audit

RULES = "promote_redaction_rules"
_LABEL = re.compile(r"^[A-Z][A-Z0-9_]{0,31}$")
#: Span id of the stand-in step that carries reviewer-written task texts through redaction.
_TASK_SPAN = "__task__"


def _check_rules(
    key_rules: Mapping[str, str], deny_strings: Mapping[str, Sequence[str]]
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Validated, normalised rules (labels upper-case; blank strings refused).

    Raises:
        UserError: A blank key or string, or a label that is not ``A-Z0-9_``.
    """
    keys: dict[str, str] = {}
    for k, label in key_rules.items():
        lab = str(label).strip().upper()
        if not str(k).strip():
            raise UserError("key_rules has an empty JSON key; name the key whose value to redact")
        if not normalise_key(str(k)):
            raise UserError(
                f"key_rules[{k!r}] matches no key (it has no letters or digits); "
                "name the JSON key whose value to redact"
            )
        if not _LABEL.match(lab):
            raise UserError(
                f"key_rules[{k!r}]: label {label!r} is not a label; use e.g. NAME, EMAIL, AUTO"
            )
        keys[str(k).strip()] = lab
    deny: dict[str, list[str]] = {}
    for label, values in deny_strings.items():
        lab = str(label).strip().upper()
        if not _LABEL.match(lab) or lab in CONDITIONAL_LABELS:
            raise UserError(f"deny_strings: label {label!r} is not a label; use e.g. NAME, ADDRESS")
        for v in values:
            if not isinstance(v, str) or not v.strip():
                raise UserError(f"deny_strings[{lab!r}] has an empty string; give the exact text")
            deny.setdefault(lab, [])
            if v not in deny[lab]:
                deny[lab].append(v)
    return keys, deny


def stored_rules(
    store: Store, candidate_id: str, *, project: str = "default"
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The rules kept for a candidate (empty when none were added)."""
    rows = store.query(
        "SELECT key_rules, deny_strings FROM promote_redaction_rules FINAL"
        " WHERE project_id = {p:String} AND candidate_id = {c:String}",
        {"p": project, "c": candidate_id},
    )
    if not rows:
        return {}, {}
    return json.loads(rows[0]["key_rules"] or "{}"), json.loads(rows[0]["deny_strings"] or "{}")


def merged_policy(
    key_rules: Mapping[str, str], deny: Mapping[str, Sequence[str]]
) -> RedactionPolicy:
    """The default policy plus the candidate's rules."""
    return RedactionPolicy(
        key_rules={**DEFAULT_KEY_RULES, **key_rules},
        deny_strings={k: list(v) for k, v in deny.items()},
    )


def _rules_reason(keys: Mapping[str, str], deny: Mapping[str, Sequence[str]]) -> str:
    """The rules added, without a deny-listed value: ``key card_holder=NAME; deny NAME x1``."""
    parts = [f"key {k}={v}" for k, v in sorted(keys.items())]
    parts += [f"deny {lab} x{len(vs)}" for lab, vs in sorted(deny.items())]
    return "redaction re-run: " + ("; ".join(parts) or "kept rules only")


def _judge(task: Mapping[str, Any]) -> dict[str, Any] | None:
    for c in task.get("criteria") or []:
        if c.get("id") == "reply-judge" and (c.get("grader") or {}).get("name") == "judge":
            return dict(c["grader"].get("args") or {})
    return None


def _set_rubric(task: dict[str, Any], rubric: str) -> None:
    for c in task.get("criteria") or []:
        if c.get("id") == "reply-judge" and (c.get("grader") or {}).get("name") == "judge":
            c["grader"].setdefault("args", {})["rubric"] = rubric


def _merged_rules(
    old: tuple[dict[str, str], dict[str, list[str]]],
    new_keys: Mapping[str, str],
    new_deny: Mapping[str, Sequence[str]],
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The stored rules with the new ones added (a new key rule wins; deny strings add up)."""
    old_keys, old_deny = old
    deny = {k: list(v) for k, v in old_deny.items()}
    for lab, vs in new_deny.items():
        deny.setdefault(lab, [])
        deny[lab] += [v for v in vs if v not in deny[lab]]
    return {**old_keys, **new_keys}, deny


def _reviewer_texts(task: Mapping[str, Any] | None, old_draft: Mapping[str, Any]) -> dict[str, str]:
    """The prompt and judge rubric the reviewer rewrote (changed from the draft).

    They may carry the value too, so they go through the same redaction job
    as the trace: their pseudonyms match the trace's.
    """
    extra: dict[str, str] = {}
    if task is None:
        return extra
    if task.get("prompt") and task.get("prompt") != old_draft.get("prompt"):
        extra["prompt"] = str(task["prompt"])
    cur, old = _judge(task), _judge(old_draft)
    if cur and cur.get("rubric") and cur.get("rubric") != (old or {}).get("rubric"):
        extra["rubric"] = str(cur["rubric"])
    return extra


def _redact(
    policy: RedactionPolicy, steps: list[TraceStep], reviewer_texts: Mapping[str, str]
) -> tuple[list[TraceStep], dict[str, Any], dict[str, str]]:
    """Redact the trace's steps and the reviewer's texts in one job.

    Returns:
        The redacted steps, the report (findings and counts of the steps only)
        and the redacted reviewer texts.
    """
    if reviewer_texts:
        steps = [*steps, TraceStep(span_id=_TASK_SPAN, texts=dict(reviewer_texts))]
    red = Redactor(policy).redact_trace(steps)
    out_steps = [s for s in red.steps if s.span_id != _TASK_SPAN]
    redacted_texts: dict[str, str] = {}
    for s in red.steps:
        if s.span_id == _TASK_SPAN:
            redacted_texts = dict(s.texts)
    report = red.report.to_dict()
    findings = [f for f in report["findings"] if f["span_id"] != _TASK_SPAN]
    counts: dict[str, int] = {}
    for f in findings:
        counts[f["entity"]] = counts.get(f["entity"], 0) + f["count"]
    report.update(
        findings=findings, counts=dict(sorted(counts.items())), total=sum(counts.values())
    )
    return out_steps, report, redacted_texts


def redact_candidate(
    store: Store,
    candidate_id: str,
    reviewer: str,
    base_version: int,
    *,
    key_rules: Mapping[str, str] | None = None,
    deny_strings: Mapping[str, Sequence[str]] | None = None,
    project: str = "default",
) -> ReviewState:
    """Re-redact one candidate from its raw trace with its rules plus new ones.

    Args:
        store: The store.
        candidate_id: The candidate (must be drafted and claimed by ``reviewer``).
        reviewer: Who asks (attributed on the ``redact`` event).
        base_version: The review version the reviewer saw.
        key_rules: JSON key -> label, added to the candidate's rules.
        deny_strings: Label -> exact strings, added to the candidate's rules.
        project: Project id.

    Returns:
        The new review state (version moved by one).

    Raises:
        UserError: Bad rules, no reviewer, candidate not drafted, raw trace gone.
        ConflictError: Stale ``base_version`` or not claimed by ``reviewer``.
        NotFoundError: No such candidate.
    """
    reviewer = _require_reviewer(reviewer)
    new_keys, new_deny = _check_rules(key_rules or {}, deny_strings or {})
    cand = drafted_candidate(store, candidate_id, project=project, action="re-redacted here")
    with _lock(store, candidate_id):
        st = review_state(store, cand, project=project)
        if base_version != st.version:
            raise _conflict(st, candidate_id, base_version)
        if st.status != "claimed" or st.claimed_by != reviewer:
            holder = f"claimed by {st.claimed_by}" if st.claimed_by else st.status
            raise ConflictError(
                f"candidate {candidate_id} is {holder}; {reviewer} must claim it before redact"
            )
        keys, deny = _merged_rules(
            stored_rules(store, candidate_id, project=project), new_keys, new_deny
        )
        material = load_traces(store, [cand.trace_id], project=project).get(cand.trace_id)
        if material is None or not material.steps:
            raise UserError(
                f"the raw trace {cand.trace_id} of candidate {candidate_id} has no steps in the "
                "store (retention?); nothing to re-redact"
            )
        task = copy.deepcopy(st.task) if st.task is not None else None
        old_draft = cand.task() or {}
        steps = [*material.steps, root_step(material, cand.slice)]
        out_steps, report, redacted_texts = _redact(
            merged_policy(keys, deny), steps, _reviewer_texts(task, old_draft)
        )
        new_cand = replace(
            cand,
            redacted_steps=steps_json(out_steps),
            redaction_report=json.dumps(report),
        )
        fresh = draft_task(new_cand, material).model_dump(mode="json")
        # The stored draft: the old one with its text-derived fields re-drafted.
        new_draft = _redrafted(old_draft, fresh, {}) if old_draft else fresh
        body, sha = "", ""
        if task is not None:
            t = validate_task(_redrafted(task, fresh, redacted_texts), task_id=task.get("task_id"))
            body = t.model_dump_json()
            sha = task_sha256(t)
        event = ReviewEvent(
            candidate_id,
            st.version + 1,
            uuid.uuid4().hex,
            "redact",
            reviewer,
            base_version,
            _rules_reason(new_keys, new_deny),
            body,
            sha,
            time.time_ns(),
        )
        _insert(store, project, event)
        _check_won(store, project, event, st)
        store.insert(
            RULES,
            {
                "project_id": [project],
                "candidate_id": [candidate_id],
                "key_rules": [json.dumps(keys, sort_keys=True, ensure_ascii=False)],
                "deny_strings": [json.dumps(deny, sort_keys=True, ensure_ascii=False)],
                "updated_by": [reviewer],
                "updated_at": [time.time_ns()],
            },
        )
        write_candidates(store, [replace(new_cand, draft=json.dumps(new_draft))])
        record_audit(store, "review.rules", actor=reviewer, project=project, target=candidate_id,
                     detail={"event_id": event.event_id, "rules": event.reason})
        return fold(candidate_id, new_draft, [*st.events, event])


def _redrafted(
    task: Mapping[str, Any], fresh: Mapping[str, Any], reviewer_texts: Mapping[str, str]
) -> dict[str, Any]:
    """``task`` with prompt, judge rubric and redaction counts from the fresh draft.

    A prompt or rubric the reviewer rewrote keeps their wording, redacted
    (``reviewer_texts``); one still as drafted is drafted again.
    """
    out = copy.deepcopy(dict(task))
    out["prompt"] = reviewer_texts.get("prompt", fresh.get("prompt", out.get("prompt", "")))
    rubric = reviewer_texts.get("rubric") or (_judge(fresh) or {}).get("rubric")
    if rubric:
        _set_rubric(out, rubric)
    meta = dict(out.get("metadata") or {})
    meta["redaction"] = (fresh.get("metadata") or {}).get("redaction", meta.get("redaction"))
    out["metadata"] = meta
    return out
