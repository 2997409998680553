"""Redaction quality on a seeded Faker set: recall per entity type, and no value survives.

The labelled set (``pii_traces``) plants emails, phones (US/GB/DE/FR formats),
cards (all Faker brands, plain and 4-4-4-4), IBANs (six countries), IPv4/IPv6,
SSNs, names and addresses in keyed fields of tool arguments/results and in
free text (user message, e-mail body, assistant reply).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from flywheel.promote import RedactedTrace, Redactor, TraceStep
from flywheel.pii import find_leaks_in_dir
from tests.bench.redact_synth import PII_LABELS, LabelledTrace, pii_traces


def _strings(node: Any, depth: int = 0) -> list[str]:
    """Every string in a value, also inside JSON-in-a-string (so escaping cannot hide a value)."""
    if isinstance(node, str):
        out = [node]
        if depth < 4 and node.lstrip()[:1] in ("{", "[", '"'):
            try:
                out += _strings(json.loads(node), depth + 1)
            except ValueError:
                pass
        return out
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in [k, *_strings(v, depth)]]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v, depth)]
    return [str(node)] if node is not None else []


def _field_strings(step: TraceStep, field: str) -> list[str]:
    value = getattr(step, field)
    return _strings(value) if value is not None else []


def _found(value: str, haystack: list[str]) -> bool:
    return any(value in s for s in haystack)


@pytest.fixture(scope="module")
def labelled() -> list[tuple[LabelledTrace, RedactedTrace]]:
    traces = pii_traces(250, seed=7)
    redactor = Redactor()
    return [(t, redactor.redact_trace(t.steps)) for t in traces]


def test_recall_per_entity_type(labelled: list[tuple[LabelledTrace, RedactedTrace]]) -> None:
    planted: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for t, red in labelled:
        for p in t.planted:
            key = f"{p.label}/{p.where}"
            planted[key] += 1
            if _found(p.value, _field_strings(red.steps[p.step], p.field)):
                missed[key] += 1
                examples.setdefault(key, p.value)
    recall = {k: 1 - missed[k] / n for k, n in planted.items()}
    print("recall", dict(sorted(recall.items())), "missed examples", examples)
    for label in PII_LABELS:
        keys = [k for k in planted if k.startswith(label + "/")]
        assert keys, label
        total = sum(planted[k] for k in keys)
        miss = sum(missed[k] for k in keys)
        assert 1 - miss / total >= 0.98, (label, 1 - miss / total, examples)
    for key, r in recall.items():  # also per placement (keyed vs free text)
        assert r >= 0.98, (key, r, examples.get(key))


def test_no_original_value_survives_in_a_written_bundle(
    labelled: list[tuple[LabelledTrace, RedactedTrace]], tmp_path: Path
) -> None:
    """Write the redacted traces and reports as files, then scan them for every planted value."""
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    labelled = labelled[:80]  # the scan is values x bytes; 80 traces keep it to a second
    with (bundle / "traces.jsonl").open("w", encoding="utf-8") as fh:
        for t, red in labelled:
            row = {"trace_id": t.trace_id, "steps": [asdict(s) for s in red.steps]}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    reports = {t.trace_id: red.report.to_dict() for t, red in labelled}
    (bundle / "reports.json").write_text(json.dumps(reports), encoding="utf-8")
    values = {p.value for t, _ in labelled for p in t.planted}
    assert len(values) > 500
    assert find_leaks_in_dir(bundle, values) == {}
    # The scanner itself finds a planted value (no vacuous pass).
    (bundle / "oops.txt").write_text(f"note: {sorted(values)[0]}", encoding="utf-8")
    assert list(find_leaks_in_dir(bundle, values)) == ["oops.txt"]


def test_no_original_value_survives(labelled: list[tuple[LabelledTrace, RedactedTrace]]) -> None:
    """Scan everything the redacted trace would export for every planted value."""
    leaks = []
    for t, red in labelled:
        exported = json.dumps(
            {"steps": [s.__dict__ for s in red.steps], "report": red.report.to_dict()},
            ensure_ascii=False,
            default=dict,
        )
        haystack = _strings(exported)
        for value in {p.value for p in t.planted}:
            if _found(value, haystack):
                leaks.append((t.trace_id, value))
    assert not leaks, leaks[:10]


def test_non_pii_survives(labelled: list[tuple[LabelledTrace, RedactedTrace]]) -> None:
    """Ids, tool names, statuses and amounts stay, so the trace is still a task."""
    kept = total = 0
    for t, red in labelled:
        haystack = [
            s
            for step in red.steps
            for f in ("arguments", "result", "output_text", "tool_name")
            for s in _field_strings(step, f)
        ]
        for value in t.keep:
            total += 1
            kept += _found(value, haystack)
    assert kept / total >= 0.98, kept / total


def test_pseudonyms_match_across_spans(labelled: list[tuple[LabelledTrace, RedactedTrace]]) -> None:
    """The e-mail sent to in send_email is the same pseudonym in the assistant reply."""
    for _, red in labelled[:50]:
        args = json.loads(red.steps[3].arguments or "{}")
        token = args["recipients"][0]
        assert token.startswith("<EMAIL_")
        assert token in (red.steps[5].output_text or "")
        # The user's email (free text) and the CRM lookup key (keyed) agree too.
        lookup = json.loads(red.steps[1].arguments or "{}")["email"]
        assert lookup in (red.steps[0].input_text or "")


def test_free_text_recall_without_propagation() -> None:
    """Each free-text occurrence redacted with its step alone (no keyed copy to propagate)."""
    redactor = Redactor()
    planted: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    for t in pii_traces(150, seed=21):
        alone = {i: redactor.redact_trace([s]).steps[0] for i, s in enumerate(t.steps)}
        for p in t.planted:
            if p.where != "text":
                continue
            planted[p.label] += 1
            missed[p.label] += _found(p.value, _field_strings(alone[p.step], p.field))
    recall = {k: 1 - missed[k] / n for k, n in planted.items()}
    print("free-text recall", recall)
    assert set(recall) == {"EMAIL", "PHONE", "CARD", "IBAN", "IP", "SSN"}
    assert all(r >= 0.98 for r in recall.values()), recall


def _all_strings(steps: Any) -> str:
    return "\x00".join(s for st in steps for s in _strings(asdict(st)))


def test_prose_recall_on_the_hand_written_dev_corpus() -> None:
    """Names, addresses, birth dates and secrets in prose with no keyed copy, seven languages.

    The generator above always plants a keyed copy of each name and address,
    so propagation alone can pass it; this corpus was written by hand
    (bench/redaction_corpus) and redacts each step alone, so nothing is
    found by propagation. The dev corpus is what detectors were tuned on:
    this is a regression guard, the reported figures are on the frozen one.
    """
    from tests.bench.corpus import load

    redactor = Redactor()
    planted: Counter[str] = Counter()
    missed: dict[str, list[str]] = {}
    decoys = kept = 0
    for _, steps, lab in load("dev"):
        alone = [redactor.redact_trace([s]).steps[0] for s in steps]
        text = _all_strings(alone)
        for p in lab["planted"]:
            planted[p["type"]] += 1
            if any(part in text for part in p["parts"]):
                missed.setdefault(p["type"], []).append(p["value"])
        for d in lab["decoys"]:
            decoys += 1
            kept += d in text
    recall = {t: 1 - len(missed.get(t, [])) / n for t, n in planted.items()}
    assert {"NAME", "ADDRESS", "DOB", "SECRET"} <= set(recall)
    assert all(r >= 0.95 for r in recall.values()), (recall, missed)
    assert kept / decoys >= 0.95
