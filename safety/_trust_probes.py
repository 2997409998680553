"""Tool-result trust probes: wrong, truncated and stale results; the cross-check rate.

Playbook, "'Tool used' does not mean 'truth acquired'": inject a
plausible-but-wrong response, a partial result, a stale timestamp, and
measure whether the agent cross-checks (re-reads) or propagates.

The probe is a registered tools-seam implementation (``tools.probe``, mode
real): the first read of each distinct call is altered, a repeat of the same
call gets the truth (so a cross-check can succeed). The altered span carries
``flywheel.probe.kind``; the ground truth is therefore in the trace.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flywheel.evalset.stats import Interval, wilson_interval
from flywheel.harness import (
    Environment,
    RealTools,
    ToolCall,
    ToolResult,
    corrupt,
    register_seam,
)
from opentelemetry import trace

from flywheel import canonical_json

from ._spans import SpanRow, by_trace

PROBE_KINDS: tuple[str, ...] = ("wrong", "truncated", "stale")
PROBE_ATTR = "flywheel.probe.kind"
STALE_AS_OF = "2019-01-01T00:00:00Z"


@dataclass
class ProbedResult(ToolResult):
    """A tool result a probe altered (``probe`` names how)."""

    probe: str = ""


def _wrong(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict) and value:
        k = sorted(value)[rng.randrange(len(value))]
        return {**value, k: _wrong(value[k], rng)}
    if isinstance(value, list) and value:
        i = rng.randrange(len(value))
        return [*value[:i], _wrong(value[i], rng), *value[i + 1 :]]
    return corrupt(value, rng)


def alter(kind: str, result: ToolResult, rng: random.Random) -> ProbedResult:
    """The probed version of ``result``: wrong value, truncated, or stamped stale."""
    v = result.value
    if kind == "wrong":
        nv: Any = _wrong(v, rng)
    elif kind == "truncated":
        if isinstance(v, list):
            nv = v[: len(v) // 2]
        elif isinstance(v, dict):
            keys = sorted(v)
            nv = {k: v[k] for k in keys[: len(keys) // 2]}
        else:
            text = result.text
            nv = text[: len(text) // 2]
    elif kind == "stale":
        nv = {"as_of": STALE_AS_OF, "data": v}
    else:
        raise ValueError(f"unknown probe kind {kind!r}; choose from {PROBE_KINDS}")
    text = nv if isinstance(nv, str) else canonical_json(nv)
    return ProbedResult(text=text, value=nv, error=None, probe=kind)


@register_seam("tools", "real", "tools.probe")
class ProbeTools(RealTools):
    """Real tools whose first read of each distinct call is altered (rate ``rate``).

    Writes and repeated reads run unaltered. Each probe marks the current
    ``execute_tool`` span with ``flywheel.probe.kind``.
    """

    def __init__(
        self, env: Environment, kind: str = "wrong", rate: float = 1.0, seed: int = 0
    ) -> None:
        super().__init__(env)
        if kind not in PROBE_KINDS:
            raise ValueError(f"unknown probe kind {kind!r}; choose from {PROBE_KINDS}")
        self.kind, self.rate = kind, rate
        self._rng = random.Random(f"{seed}:{getattr(env, 'environment_id', '')}")
        self._seen: set[str] = set()
        self._reads = {t.name for t in env.tools() if t.read_only}

    def call(self, call: ToolCall) -> ToolResult:
        """Run the call; alter a first read's result with probability ``rate``."""
        live = super().call(call)
        key = call.key()
        if call.name not in self._reads or key in self._seen or live.error is not None:
            return live
        self._seen.add(key)
        if self._rng.random() >= self.rate:
            return live
        trace.get_current_span().set_attribute(PROBE_ATTR, self.kind)
        return alter(self.kind, live, self._rng)


@dataclass(frozen=True)
class CrossCheckRate:
    """Per probe kind: probed results, those cross-checked, and the rate's interval."""

    kind: str
    probed: int
    cross_checked: int
    rate: Interval


def cross_check_rates(
    rows: Iterable[SpanRow], confidence: float = 0.95
) -> dict[str, CrossCheckRate]:
    """Share of probed results the agent cross-checked, per probe kind (Wilson interval).

    A probed ``execute_tool`` span counts as cross-checked when a later tool
    span of the same trace repeats the same tool and arguments, or declares
    ``flywheel.cross_check.of`` = its call id. Otherwise it was propagated.
    """
    counts: dict[str, list[int]] = {}
    for spans in by_trace(rows).values():
        tools = [s for s in spans if s.operation == "execute_tool"]
        for i, s in enumerate(tools):
            kind = s.get(PROBE_ATTR)
            if not kind:
                continue
            key = (s.get("gen_ai.tool.name"), s.get("gen_ai.tool.call.arguments"))
            cid = s.get("gen_ai.tool.call.id")
            checked = any(
                (t.get("gen_ai.tool.name"), t.get("gen_ai.tool.call.arguments")) == key
                or (cid and t.get("flywheel.cross_check.of") == cid)
                for t in tools[i + 1 :]
            )
            c = counts.setdefault(kind, [0, 0])
            c[0] += 1
            c[1] += int(checked)
    return {
        k: CrossCheckRate(k, n, x, wilson_interval(x, n, confidence))
        for k, (n, x) in sorted(counts.items())
    }
