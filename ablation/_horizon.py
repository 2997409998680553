"""Per-step hazard, recovery (rho) and the implied horizon H50 from trials.

The formulas are the agent-evaluation playbook's, section "Horizon is
per-step reliability wearing a costume":

- ``S(H) = (1 - h)^H = exp(-lambda H)`` with ``lambda = -ln(1 - h)``;
- ``H50 = ln 2 / lambda`` (so ``H50 x 2  <=>  h / 2``);
- with recovery, ``h_eff = h (1 - rho)`` and ``H50 ∝ 1 / (1 - rho)``.

What the trials give: every trial records its steps (tool calls), its
faults (the mistakes a simulation injected or an attributor labelled, each
with its component) and whether it was accepted. So ``h`` is measured
directly (errors per step), ``h_eff`` is what the observed success rate
implies through ``S = (1 - h_eff)^H`` at the mean step count ``H``, and
``rho = 1 - h_eff / h`` is the share of per-step error the agent survives
(caught and repaired, or harmless). Pooling tasks at their mean length is
the playbook's model, not an exact fit for tasks of mixed length (Jensen):
read H50 as a summary of a configuration, not as a task-length forecast.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Fault components that are not errors: a skipped check loses a recovery
#: chance (it lowers rho) but is not itself a mistake in the world.
NON_ERROR_COMPONENTS: frozenset[str] = frozenset({"verifier"})

LN2 = math.log(2.0)


def hazard_rate(h: float) -> float:
    """``lambda = -ln(1 - h)`` (playbook, Horizon). h = 1: ``inf``; h = 0: 0."""
    if not 0.0 <= h <= 1.0:
        raise ValueError(f"per-step hazard {h!r} must be in [0, 1]")
    return math.inf if h >= 1.0 else -math.log1p(-h)


def survival(h: float, steps: float) -> float:
    """``S(H) = (1 - h)^H = exp(-lambda H)`` (playbook, Horizon)."""
    return math.exp(-hazard_rate(h) * steps) if h < 1.0 else (1.0 if steps == 0 else 0.0)


def h50(h: float) -> float:
    """``H50 = ln 2 / lambda``: steps at which survival crosses one half.

    h = 0: ``inf`` (never fails); h = 1: 0. Halving a small h about doubles it.
    """
    lam = hazard_rate(h)
    if lam == 0.0:
        return math.inf
    return 0.0 if math.isinf(lam) else LN2 / lam


def implied_hazard(success: float, steps: float) -> float:
    """The per-step hazard ``h_eff = 1 - S^(1/H)`` that ``S(H) = (1 - h)^H`` implies.

    S = 1: 0. S = 0: 1. H = 0 (no steps): ``nan`` (nothing to spread over).
    """
    if not 0.0 <= success <= 1.0:
        raise ValueError(f"success rate {success!r} must be in [0, 1]")
    if steps <= 0:
        return math.nan
    return 1.0 - success ** (1.0 / steps)


def recovery(h: float, h_eff: float) -> float:
    """``rho = 1 - h_eff / h`` from ``h_eff = h (1 - rho)``; ``nan`` when h = 0.

    Clipped to [0, 1]: sampling noise can put ``h_eff`` above ``h``.
    """
    if h <= 0.0 or math.isnan(h) or math.isnan(h_eff):
        return math.nan
    return min(1.0, max(0.0, 1.0 - h_eff / h))


@dataclass(frozen=True)
class HorizonEstimate:
    """Hazard, recovery and horizon of one configuration, from its trials.

    Attributes:
        trials: Trials counted (completed or not).
        accepted: Accepted trials (utility true).
        steps: Total steps (tool calls) over the trials.
        mean_steps: ``H``, steps per trial.
        errors: Error faults (verifier misses excluded).
        h: Raw per-step hazard, errors / steps.
        h_by_component: Per-component hazard, that component's faults / steps
            (the verifier's entry is its skip rate per step).
        h_eff: Effective per-step hazard implied by the success rate.
        rho: Recovery ``1 - h_eff / h``.
        h50: ``ln 2 / -ln(1 - h_eff)``, the implied horizon in steps.
        h50_no_recovery: ``ln 2 / -ln(1 - h)``, the horizon if nothing were caught.
        errors_in_accepted: Share of error faults that sat in accepted trials
            (a direct, model-free reading of "caught or harmless").
        h50_lo: H50 at the upper Wilson limit of the success rate's
            complement, i.e. from the lower Wilson limit of S (H held fixed);
            finite even when every trial passed.
        h50_hi: H50 from the upper Wilson limit of S (``inf`` when it is 1).
    """

    trials: int
    accepted: int
    steps: int
    mean_steps: float
    errors: int
    h: float
    h_by_component: dict[str, float] = field(default_factory=dict)
    h_eff: float = math.nan
    rho: float = math.nan
    h50: float = math.nan
    h50_no_recovery: float = math.nan
    errors_in_accepted: float = math.nan
    h50_lo: float = math.nan
    h50_hi: float = math.nan


def _faults(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    f = row.get("faults") or []
    if isinstance(f, str):
        import json

        f = json.loads(f) if f else []
    return list(f)


def estimate_horizon(
    rows: Iterable[Mapping[str, Any]], confidence: float = 0.95
) -> HorizonEstimate:
    """Hazard, recovery and H50 of one configuration's trials.

    The H50 interval maps the Wilson interval of the success rate S through
    ``h_eff = 1 - S^(1/H)`` and ``H50 = ln 2 / lambda`` at the observed H
    (trials pooled, so it ignores task clustering: a rough bracket).

    Each row needs ``utility`` (None counts as not accepted), ``tool_calls``
    and ``faults`` (a list, or its JSON, of ``{kind, component, ...}``).
    n = 0 trials or 0 steps: every rate ``nan``.
    """
    rows = list(rows)
    n = len(rows)
    accepted = sum(bool(r.get("utility")) for r in rows)
    steps = sum(int(r.get("tool_calls") or 0) for r in rows)
    by_comp: dict[str, int] = {}
    errors = 0
    errors_ok = 0
    for r in rows:
        for f in _faults(r):
            comp = str(f.get("component", "unknown"))
            by_comp[comp] = by_comp.get(comp, 0) + 1
            if comp not in NON_ERROR_COMPONENTS:
                errors += 1
                errors_ok += bool(r.get("utility"))
    if n == 0 or steps == 0:
        return HorizonEstimate(n, accepted, steps, math.nan, errors, math.nan)
    mean_steps = steps / n
    h = errors / steps
    h_eff = implied_hazard(accepted / n, mean_steps)
    from flywheel.evalset.stats import wilson_interval

    w = wilson_interval(accepted, n, confidence)
    s_lo, s_hi = min(1.0, max(0.0, float(w.lo))), min(1.0, max(0.0, float(w.hi)))
    return HorizonEstimate(
        trials=n,
        accepted=accepted,
        steps=steps,
        mean_steps=mean_steps,
        errors=errors,
        h=h,
        h_by_component={c: k / steps for c, k in sorted(by_comp.items())},
        h_eff=h_eff,
        rho=recovery(h, h_eff),
        h50=h50(h_eff),
        h50_no_recovery=h50(h),
        errors_in_accepted=(errors_ok / errors) if errors else math.nan,
        h50_lo=h50(implied_hazard(s_lo, mean_steps)),
        h50_hi=h50(implied_hazard(s_hi, mean_steps)),
    )
