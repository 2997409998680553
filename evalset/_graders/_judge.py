"""Judge grader: a pluggable model judge, always with its calibration record (13.4, 22.3).

A judge is an unvalidated classifier until measured against adjudicated
human labels. Its calibration record carries Cohen's kappa (eq. 22.1), the
false-acceptance rate ``Pr(Acc | human FAIL)`` and failure among accepted
with Wilson intervals (13.4.2), failure recall, and the position-flip and
verbosity-control rates, all computed by ``evalset.stats`` from compressed
contingency cells. A judge without a record, or below the contract's
minimum kappa, cannot produce a pass: its PASS becomes ``unknown``.

The model sits behind an OpenAI-compatible ``/chat/completions`` endpoint
(vLLM, Ollama, a hosted API), reached with httpx. Replayed trials may carry
the judge's recorded label in ``observations.judge_labels[judge_id]``; the
grader then uses it instead of calling the endpoint.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import httpx
from flywheel.evalset._graders._base import Grade, GradingContext, register_grader
from flywheel.evalset._task import Task
from flywheel.evalset._trial import Trial, Verdict
from flywheel.evalset.stats import (
    cohen_kappa,
    judge_error_rates,
    position_flip_rate,
    verbosity_control_rate,
)
from pydantic import BaseModel, ConfigDict, Field

_INSTRUCTIONS = (
    "You grade one answer against the rubric. Reply with exactly one word: PASS or FAIL."
)


class JudgeCalibration(BaseModel):
    """A judge's measured agreement with human labels (the record a judge must carry)."""

    model_config = ConfigDict(extra="forbid")

    judge_id: str = ""
    n: int = Field(ge=0)
    agreement: float
    kappa: float
    fail_recall: float
    false_acceptance_rate: float
    false_acceptance_interval: tuple[float, float]
    failure_among_accepted: float
    failure_among_accepted_interval: tuple[float, float]
    position_flip_rate: float | None = None
    position_flip_items: int = 0
    verbosity_rate: float | None = None
    verbosity_items: int = 0
    slice_agreement: dict[str, float] = Field(default_factory=dict)
    source: str = ""

    @classmethod
    def from_cells(cls, payload: dict[str, Any], source: str = "") -> JudgeCalibration:
        """Compute the record from compressed cells (the 22.3 fixture layout).

        ``pointwise_cells``: ``[{human, judge, count, slice?}]``;
        ``pairwise_cells``: ``[{ab, ba_normalized, count}]`` (optional);
        ``verbosity_control``: ``[{pick: "long"|"short", count}]`` (optional).
        """
        cells = payload["pointwise_cells"]
        human = [c["human"] for c in cells]
        judge = [c["judge"] for c in cells]
        counts = [int(c["count"]) for c in cells]
        rates = judge_error_rates(judge, human, counts=counts)
        by_slice: dict[str, list[int]] = {}
        for c in cells:
            agree, total = by_slice.setdefault(str(c.get("slice", "all")), [0, 0])
            by_slice[str(c.get("slice", "all"))] = [
                agree + int(c["count"]) * (c["human"] == c["judge"]),
                total + int(c["count"]),
            ]
        record: dict[str, Any] = {
            "judge_id": str(payload.get("judge_id", "")),
            "n": rates.n,
            "agreement": rates.agreement,
            "kappa": cohen_kappa(human, judge, counts=counts),
            "fail_recall": rates.fail_recall,
            "false_acceptance_rate": float(rates.false_acceptance.point),
            "false_acceptance_interval": (
                float(rates.false_acceptance.lo),
                float(rates.false_acceptance.hi),
            ),
            "failure_among_accepted": float(rates.failure_among_accepted.point),
            "failure_among_accepted_interval": (
                float(rates.failure_among_accepted.lo),
                float(rates.failure_among_accepted.hi),
            ),
            "slice_agreement": {k: a / t for k, (a, t) in sorted(by_slice.items()) if t},
            "source": source,
        }
        pairs = payload.get("pairwise_cells") or []
        if pairs:
            flip = position_flip_rate(
                [p["ab"] for p in pairs],
                [p["ba_normalized"] for p in pairs],
                counts=[int(p["count"]) for p in pairs],
            )
            record["position_flip_rate"] = float(flip.point)
            record["position_flip_items"] = sum(int(p["count"]) for p in pairs)
        verbosity = payload.get("verbosity_control") or []
        if verbosity:
            rate = verbosity_control_rate(
                [v["pick"] for v in verbosity], counts=[int(v["count"]) for v in verbosity]
            )
            record["verbosity_rate"] = float(rate.point)
            record["verbosity_items"] = sum(int(v["count"]) for v in verbosity)
        return cls(**record)

    def meets(self, min_kappa: float) -> bool:
        """True when kappa is defined and at least ``min_kappa``."""
        return not math.isnan(self.kappa) and self.kappa >= min_kappa


def load_calibration(ref: str | dict[str, Any], base_dir: Path | None = None) -> JudgeCalibration:
    """A calibration record computed from its label cells (a JSON file or an inline dict).

    The record is always recomputed from the adjudicated human and judge
    labels (``pointwise_cells``, optionally ``pairwise_cells`` and
    ``verbosity_control``): a summary typed by hand (kappa and n without the
    cells behind them) cannot be checked, so it is refused.

    Raises:
        ValueError: Missing file, not UTF-8 JSON, or a record without label cells.
    """
    source = ""
    if isinstance(ref, str):
        path = Path(ref)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.is_file():
            raise ValueError(f"judge calibration file {path} not found; pass an existing path")
        try:
            payload = json.loads(path.read_bytes().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"judge calibration {path} is not UTF-8 JSON ({exc})") from exc
        source = str(path)
    else:
        payload = dict(ref)
    where = source or "inline calibration"
    if not isinstance(payload, dict) or not payload.get("pointwise_cells"):
        raise ValueError(
            f"{where} has no label cells (pointwise_cells: [{{human, judge, count}}]); a "
            "calibration is computed from adjudicated labels, not typed in as a summary"
        )
    try:
        return JudgeCalibration.from_cells(payload, source)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{where}: invalid label cells ({type(exc).__name__}: {exc})") from exc


def parse_label(text: str) -> str | None:
    """PASS / FAIL from a judge reply (a bare word or ``{"verdict": ...}``), else None."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            stripped = str(json.loads(stripped).get("verdict", ""))
        except (json.JSONDecodeError, AttributeError):
            return None
    word = stripped.split()[0].strip(".:!\"'").upper() if stripped.split() else ""
    return word if word in ("PASS", "FAIL") else None


class JudgeGrader:
    """Grades open-ended quality with a model judge, gated by its calibration."""

    def __init__(
        self,
        context: GradingContext,
        judge_id: str,
        rubric: str,
        calibration: JudgeCalibration | None,
        base_url: str | None,
        model: str,
        api_key_env: str | None,
        timeout_s: float,
        min_kappa: float | None,
    ) -> None:
        self.context = context
        self.judge_id = judge_id
        self.rubric = rubric
        self.calibration = calibration
        self.base_url = base_url.rstrip("/") if base_url else None
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.min_kappa = context.judge_min_kappa if min_kappa is None else min_kappa

    @property
    def calibrated(self) -> bool:
        """Has a record that meets the minimum kappa."""
        return self.calibration is not None and self.calibration.meets(self.min_kappa)

    def ask(self, text: str) -> tuple[str | None, str]:
        """(label or None, reason) from the endpoint."""
        if self.base_url is None:
            return None, "no recorded label and no judge endpoint configured"
        headers = {}
        if self.api_key_env and os.environ.get(self.api_key_env):
            headers["Authorization"] = f"Bearer {os.environ[self.api_key_env]}"
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": f"{_INSTRUCTIONS}\n\nRubric:\n{self.rubric}"},
                {"role": "user", "content": text},
            ],
        }
        client = self.context.http_client
        try:
            if client is not None:
                resp = client.post(
                    f"{self.base_url}/chat/completions",
                    json=body,
                    headers=headers,
                    timeout=self.timeout_s,
                )
            else:
                resp = httpx.post(
                    f"{self.base_url}/chat/completions",
                    json=body,
                    headers=headers,
                    timeout=self.timeout_s,
                )
            resp.raise_for_status()
            content = resp.json()["choices"][0]["message"]["content"]
        except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
            return None, f"judge endpoint error: {type(exc).__name__}: {exc}"
        label = parse_label(str(content))
        return label, "judge replied " + (label or f"unparseable {str(content)[:40]!r}")

    def __call__(self, task: Task, trial: Trial) -> Grade:  # noqa: D102
        obs = trial.observations
        recorded = obs.judge_labels.get(self.judge_id)
        if recorded is not None:
            label: str | None = parse_label(recorded)
            why = f"replayed label {recorded!r}"
        else:
            text = (
                obs.transcript
                if obs.transcript is not None
                else (
                    json.dumps(obs.output, ensure_ascii=False) if obs.output is not None else None
                )
            )
            if text is None:
                return Grade(Verdict.UNKNOWN, None, "nothing to judge: no transcript or output")
            label, why = self.ask(text)
        observation: dict[str, Any] = {
            "judge_id": self.judge_id,
            "label": label,
            "calibrated": self.calibrated,
            "kappa": None if self.calibration is None else self.calibration.kappa,
        }
        if label is None:
            return Grade(Verdict.UNKNOWN, None, why, observation)
        if label == "FAIL":
            return Grade(Verdict.FAIL, 0.0, why, observation)
        if not self.calibrated:
            reason = (
                "uncalibrated judge cannot produce a pass (no calibration record)"
                if self.calibration is None
                else f"judge kappa {self.calibration.kappa:.3f} below the contract's "
                f"{self.min_kappa}"
            )
            return Grade(Verdict.UNKNOWN, 1.0, f"{why}; {reason}", observation)
        return Grade(Verdict.PASS, 1.0, why, observation)


@register_grader("judge")
def judge_grader(
    context: GradingContext,
    *,
    judge_id: str,
    rubric: str = "",
    calibration: str | dict[str, Any] | None = None,
    base_url: str | None = None,
    model: str = "judge",
    api_key_env: str | None = None,
    timeout_s: float = 30.0,
    min_kappa: float | None = None,
) -> JudgeGrader:
    """Factory: ``{"name": "judge", "args": {judge_id, rubric, calibration, base_url, ...}}``."""
    record = load_calibration(calibration, context.base_dir) if calibration is not None else None
    if record is not None and record.judge_id != judge_id:
        raise ValueError(
            f"calibration {record.source or 'inline'} measured judge {record.judge_id!r}, but "
            f"this grader runs judge {judge_id!r}; attach the record of the judge that grades"
        )
    return JudgeGrader(
        context, judge_id, rubric, record, base_url, model, api_key_env, timeout_s, min_kappa
    )
