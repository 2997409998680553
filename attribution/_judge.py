"""An optional model-judge attributor behind an OpenAI-compatible endpoint.

Never in the main path: the deterministic attributor is the default, and a
judge is only trusted once its agreement with labels is measured -- Cohen's
kappa on the responsible agent and on the decisive step over a labelled set
(``judge_agreement``) must reach ``min_kappa``. The judge reads the same
label-free steps as the deterministic attributor.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from flywheel import UserError

from ._attributor import Attribution
from ._steps import Step
from ._taxonomy import CATEGORIES, UNDETERMINED

_PROMPT = """You are auditing a failed run of an AI agent system. Steps are numbered.
Find the decisive mistake: the earliest step whose content made the run fail.
Categories: {categories}.
Answer with one JSON object only: {{"step": <int>, "agent": "<name>", "category": "<category>",
"reason": "<one sentence>"}}.

Task and steps:
{steps}
"""
_JSON = re.compile(r"\{.*\}", re.DOTALL)


@dataclass
class JudgeResult:
    """What the judge answered for one trace (raw reply kept for audit)."""

    step: int
    agent: str
    category: str
    reason: str
    raw: str


def _render(steps: Sequence[Step], max_chars: int) -> str:
    per = max(200, max_chars // max(1, len(steps)))
    lines = []
    for s in steps:
        who = s.agent or s.tool_name or s.kind
        text = s.text if s.kind != "tool" else f"{s.tool_name}({s.arguments}) -> {s.text}"
        lines.append(f"[{s.index}] {who}: {text[:per]}")
    return "\n".join(lines)


class JudgeAttributor:
    """Ask a chat-completions endpoint which step and agent caused a failure.

    Args:
        base_url: An OpenAI-compatible API root (``http://host:port/v1``).
        model: The model name sent in the request.
        api_key: Bearer token, if the endpoint wants one.
        client: An ``httpx.Client`` to use (tests pass one bound to a local stand-in).
    """

    def __init__(
        self,
        base_url: str,
        model: str = "judge",
        *,
        api_key: str | None = None,
        client: httpx.Client | None = None,
        timeout_s: float = 60.0,
        max_chars: int = 24_000,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.max_chars = max_chars
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = client or httpx.Client(timeout=timeout_s, headers=headers)

    def ask(self, steps: Sequence[Step]) -> JudgeResult:
        """One judgement; an unreadable reply becomes UNDETERMINED, never an exception."""
        prompt = _PROMPT.format(
            categories=", ".join(c for c in CATEGORIES if c != UNDETERMINED),
            steps=_render(steps, self.max_chars),
        )
        try:
            resp = self.client.post(
                f"{self.base_url}/chat/completions",
                json={
                    "model": self.model,
                    "temperature": 0,
                    "messages": [{"role": "user", "content": prompt}],
                },
            )
            resp.raise_for_status()
            raw = resp.json()["choices"][0]["message"]["content"] or ""
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            raise UserError(
                f"judge endpoint {self.base_url} failed: {exc}; check the URL and model "
                "or run without --judge"
            ) from exc
        return parse_reply(raw, len(steps))

    def attribute(self, steps: Sequence[Step], *, trace_id: str = "") -> Attribution:
        """The judge's answer in the attributor's shape (``attributor='judge'``)."""
        r = self.ask(steps)
        ok = 0 <= r.step < len(steps)
        s = steps[r.step] if ok else None
        return Attribution(
            trace_id=trace_id,
            failed=ok,
            category=r.category,
            outcome="failure" if ok else "none",
            surfaced_span_id=s.span_id if s else "",
            surfaced_index=r.step if ok else -1,
            causal_span_id=s.span_id if s else "",
            causal_index=r.step if ok else -1,
            agent=r.agent or (s.agent if s else ""),
            confidence=0.5 if ok else 0.0,
            evidence=[{"kind": "judge", "index": r.step, "detail": r.reason, "chosen": True}],
            attributor="judge",
            version=self.model,
        )


def parse_reply(raw: str, n_steps: int) -> JudgeResult:
    """Read the judge's JSON object (the first ``{...}`` in the reply)."""
    m = _JSON.search(raw or "")
    try:
        doc: Any = json.loads(m.group(0)) if m else {}
    except json.JSONDecodeError:
        doc = {}
    try:
        step = int(doc.get("step", -1))
    except (TypeError, ValueError):
        step = -1
    if not 0 <= step < n_steps:
        step = -1
    cat = str(doc.get("category", UNDETERMINED))
    return JudgeResult(
        step,
        str(doc.get("agent", "")),
        cat if cat in CATEGORIES else UNDETERMINED,
        str(doc.get("reason", "")),
        raw,
    )


def judge_agreement(
    predicted: Sequence[Attribution], labels: Sequence[dict[str, Any]], *, min_kappa: float = 0.6
) -> dict[str, Any]:
    """Agreement of an attributor with labels: exact accuracy and Cohen's kappa.

    ``labels`` are dicts with ``agent`` and ``step`` (and optionally
    ``category``), index-aligned with ``predicted``. ``trusted`` is true only
    when the agent and step kappas both reach ``min_kappa``. n = 0: every
    figure is None and the judge is not trusted; kappa is nan when both
    sides give one single label (see ``evalset.stats.cohen_kappa``).
    """
    from flywheel.evalset.stats import cohen_kappa

    n = len(predicted)
    if n != len(labels):
        raise UserError(f"{n} predictions but {len(labels)} labels; align them by trace")
    if n == 0:
        return {
            "n": 0,
            "agent_accuracy": None,
            "step_accuracy": None,
            "agent_kappa": None,
            "step_kappa": None,
            "trusted": False,
        }
    agent_p = [p.agent for p in predicted]
    agent_l = [str(lab["agent"]) for lab in labels]
    step_p = [str(p.causal_index) for p in predicted]
    step_l = [str(lab["step"]) for lab in labels]
    out: dict[str, Any] = {
        "n": n,
        "agent_accuracy": sum(a == b for a, b in zip(agent_p, agent_l, strict=True)) / n,
        "step_accuracy": sum(a == b for a, b in zip(step_p, step_l, strict=True)) / n,
        "agent_kappa": cohen_kappa(agent_l, agent_p),
        "step_kappa": cohen_kappa(step_l, step_p),
    }
    if all("category" in lab for lab in labels):
        out["category_kappa"] = cohen_kappa(
            [str(lab["category"]) for lab in labels], [p.category for p in predicted]
        )
    ks = [out["agent_kappa"], out["step_kappa"]]
    out["trusted"] = all(k == k and k >= min_kappa for k in ks)  # nan never passes
    return out
