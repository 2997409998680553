"""Judge calibration: measure a model judge against labels, store it, gate on it.

A judge's output is used only when a stored calibration of *that* judge
(endpoint and model) shows agreement with labels: Cohen's kappa on the
responsible agent and on the decisive step (and on the category where the
labels have one) all at least ``min_kappa``. Calibrations are rows of the
``attributions`` table under the reserved attributor ``judge-calibration``
(trace id ``calibration:<judge id>``), so no trace ever carries one; the
newest calibration of a judge replaces the previous one.

Labelled sets: ``whowhen:SUBSET`` (imported Who&When logs: agent and step)
and ``faults`` (reference-agent trials with injected faults: category,
step and agent of the labelled span).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from flywheel import Store, UserError

from ._attributor import Attribution
from ._judge import JudgeAttributor, judge_agreement
from ._steps import load_trace
from ._taxonomy import HAZARD_CATEGORY, UNDETERMINED

CALIBRATION = "judge-calibration"
#: The default kappa a judge must reach on every labelled dimension to be used.
DEFAULT_MIN_KAPPA = 0.6
#: Environment variables: the judge's API key, and an override of the kappa threshold.
KEY_ENV = ("FLYWHEEL_JUDGE_API_KEY", "OPENAI_API_KEY")
MIN_KAPPA_ENV = "FLYWHEEL_JUDGE_MIN_KAPPA"


def parse_judge(spec: str, **kwargs: Any) -> JudgeAttributor:
    """A judge from ``URL[#MODEL]`` (OpenAI-compatible root), its key from the environment."""
    url, _, model = spec.partition("#")
    if not url.startswith(("http://", "https://")):
        raise UserError(f"--judge {spec!r}: expected http(s)://HOST/v1[#MODEL]")
    key = next((os.environ[k] for k in KEY_ENV if os.environ.get(k)), None)
    return JudgeAttributor(url, model or "judge", api_key=key, **kwargs)


def judge_id(judge: JudgeAttributor) -> str:
    """The identity a calibration is stored under: endpoint and model."""
    return f"{judge.base_url}#{judge.model}"


def min_kappa_default() -> float:
    """The kappa threshold: ``FLYWHEEL_JUDGE_MIN_KAPPA`` if set, else ``DEFAULT_MIN_KAPPA``."""
    raw = os.environ.get(MIN_KAPPA_ENV, "")
    try:
        return float(raw) if raw else DEFAULT_MIN_KAPPA
    except ValueError:
        raise UserError(f"{MIN_KAPPA_ENV}={raw!r} is not a number; set e.g. 0.6") from None


def labelled_set(
    store: Store, labels: str, *, project: str = "default", limit: int | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """``(trace_id, label)`` pairs of a labelled set (see the module docstring)."""
    from ._faults import read_faults
    from ._store import select_traces
    from ._whowhen import read_labels

    kind, _, subset = labels.partition(":")
    out: list[tuple[str, dict[str, Any]]] = []
    if kind == "whowhen" and subset:
        ids = select_traces(store, project=project, service=f"whowhen:{subset}")
        lab = read_labels(store, ids, project=project)
        for tid in ids:
            if tid in lab and lab[tid].get("mistake_step", "").strip():
                out.append(
                    (
                        tid,
                        {
                            "agent": lab[tid].get("mistake_agent", "").strip(),
                            "step": lab[tid]["mistake_step"].strip(),
                        },
                    )
                )
            if limit and len(out) >= limit:
                break
        if not out:
            raise UserError(
                f"no imported Who&When logs of subset {subset!r} in project {project}; "
                f"import them first: flywheel import-whowhen DIR/{subset}"
            )
        return out
    if kind == "faults" and not subset:
        from ._attributor import _speaker

        for tid in select_traces(store, project=project):
            faults = read_faults(store, tid, project)
            if len(faults) != 1 or len(faults[0].kinds) != 1:
                continue  # one unambiguous answer per trace
            steps = load_trace(store, tid, project)
            idx = next((s.index for s in steps if s.span_id == faults[0].span_id), -1)
            cat = HAZARD_CATEGORY.get(faults[0].kinds[0], UNDETERMINED)
            agent = _speaker(steps, idx) if idx >= 0 else ""
            out.append((tid, {"agent": agent, "step": str(idx), "category": cat}))
            if limit and len(out) >= limit:
                break
        if not out:
            raise UserError(
                f"no single-fault reference-agent trials in project {project}; "
                "run some first: flywheel ablate ... --agent reference"
            )
        return out
    raise UserError(
        f"--labels {labels!r} not understood; use whowhen:algorithm-generated, "
        "whowhen:hand-crafted or faults"
    )


def calibrate_judge(
    store: Store,
    judge: JudgeAttributor,
    labels: str,
    *,
    project: str = "default",
    limit: int | None = None,
    min_kappa: float | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Ask the judge about every labelled trace, measure its agreement, store it.

    Returns the agreement (``judge_agreement``) with the judge id, label set,
    threshold and time; ``trusted`` says whether the attributor will use
    this judge. Nothing is faked: an unreachable endpoint is a UserError and
    no calibration is stored.
    """
    threshold = min_kappa_default() if min_kappa is None else min_kappa
    pairs = labelled_set(store, labels, project=project, limit=limit)
    preds: list[Attribution] = []
    for tid, _ in pairs:
        preds.append(judge.attribute(load_trace(store, tid, project), trace_id=tid))
        if on_progress:
            on_progress(1)
    agreement = judge_agreement(preds, [lab for _, lab in pairs], min_kappa=threshold)
    agreement["trusted"] = _passes(agreement, threshold)
    record = {
        **agreement,
        "judge": judge_id(judge),
        "labels": labels,
        "min_kappa": threshold,
        "calibrated_at": time.time(),
    }
    save_calibration(store, record, project=project)
    return record


def _kappas(record: dict[str, Any]) -> list[float | None]:
    keys = ["agent_kappa", "step_kappa"] + (
        ["category_kappa"] if "category_kappa" in record else []
    )
    return [record.get(k) for k in keys]


def _passes(record: dict[str, Any], threshold: float) -> bool:
    """Every measured kappa reaches ``threshold`` (a missing or nan kappa never does)."""
    return all(k is not None and k == k and k >= threshold for k in _kappas(record))


def save_calibration(store: Store, record: dict[str, Any], *, project: str = "default") -> None:
    """Store a calibration record (replaces the judge's previous one)."""
    ks = [k for k in _kappas(record) if k is not None and k == k]
    store.insert(
        "attributions",
        {
            "project_id": [project],
            "trace_id": [f"calibration:{record['judge']}"],
            "attributor": [CALIBRATION],
            "version": [str(record.get("labels", ""))],
            "failed": [False],
            "category": [UNDETERMINED],
            "outcome": ["none"],
            "surfaced_span_id": [""],
            "surfaced_index": [-1],
            "causal_span_id": [""],
            "causal_index": [-1],
            "agent": [""],
            "confidence": [min(ks) if ks else 0.0],
            "evidence": [json.dumps(record, default=_nan_safe)],
            "signals": [[]],
            "service_name": [""],
            "computed_at": [time.time_ns()],
        },
    )


def _nan_safe(o: Any) -> Any:
    return str(o)


def read_calibration(
    store: Store, judge: str, *, project: str = "default"
) -> dict[str, Any] | None:
    """The newest stored calibration of a judge id, or None."""
    rows = store.query(
        "SELECT evidence FROM attributions FINAL WHERE project_id = {p:String} "
        "AND trace_id = {t:String} AND attributor = {a:String}",
        {"p": project, "t": f"calibration:{judge}", "a": CALIBRATION},
    )
    return json.loads(rows[0]["evidence"]) if rows else None


def judge_gate(
    store: Store,
    judge: JudgeAttributor,
    *,
    project: str = "default",
    min_kappa: float | None = None,
) -> tuple[bool, str]:
    """Whether the judge may be used, and why (a sentence for the user)."""
    threshold = min_kappa_default() if min_kappa is None else min_kappa
    jid = judge_id(judge)
    cal = read_calibration(store, jid, project=project)
    if cal is None:
        return False, (
            f"judge {jid} has no stored calibration; measure it first: flywheel calibrate-judge "
            f"--judge '{jid}' --labels whowhen:algorithm-generated"
        )
    ks = ", ".join(
        f"{k} {cal.get(k)}" for k in ("agent_kappa", "step_kappa", "category_kappa") if k in cal
    )
    if not _passes(cal, threshold):
        return False, (
            f"judge {jid} calibrated on {cal.get('labels')} (n={cal.get('n')}: {ks}) is below "
            f"kappa {threshold}"
        )
    return True, f"judge {jid} calibrated on {cal.get('labels')} (n={cal.get('n')}: {ks})"


def attribute_with_judge(
    store: Store,
    trace_id: str,
    judge: JudgeAttributor,
    deterministic: Attribution,
    *,
    project: str = "default",
    min_kappa: float | None = None,
) -> tuple[Attribution, str]:
    """The judge's attribution if its calibration passes the gate, else the deterministic one.

    Returns the attribution to show and the gate's sentence. An uncalibrated
    judge is never asked (its answer could not be trusted anyway).
    """
    ok, why = judge_gate(store, judge, project=project, min_kappa=min_kappa)
    if not ok:
        return deterministic, why + "; using the deterministic attribution"
    a = judge.attribute(load_trace(store, trace_id, project), trace_id=trace_id)
    a.service_name = deterministic.service_name
    return a, why


def calibrations_table(records: Sequence[dict[str, Any]]) -> list[str]:
    """Plain lines for a calibration record (CLI output)."""
    out = []
    for r in records:
        fmt = lambda v: "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))  # noqa: E731
        out.append(
            f"{r['judge']} on {r['labels']}: n={r['n']} agent acc {fmt(r['agent_accuracy'])} "
            f"kappa {fmt(r['agent_kappa'])}; step acc {fmt(r['step_accuracy'])} kappa "
            f"{fmt(r['step_kappa'])}"
            + (f"; category kappa {fmt(r['category_kappa'])}" if "category_kappa" in r else "")
            + f" -> {'TRUSTED' if r['trusted'] else 'not trusted'} (min kappa {r['min_kappa']})"
        )
    return out
