"""The learned attribution model: which step, which agent, which category, with probabilities.

Two small conditional logit models over the features of ``_features``:

- **step**: ``P(step i) = softmax_i(w . z(i))`` over a trace's steps, ``z`` the
  location features (``STEP_FEATURES``); one weight per feature;
- **category at a step**: ``P(c | i) = softmax_c(a_c + sum_k b_ck x_k(i))``,
  ``x_k`` the features that are positive evidence for ``c`` only
  (``CATEGORY_EVIDENCE``): one intercept per category (its prior) and one
  weight per (category, own evidence) pair -- a feature supports its own
  category and no other, so every weight reads as "how much this evidence
  says this category".

The run's category mixes over the step's uncertainty,
``P(c) = sum_i P(i) P(c | i)``: evidence at a step counts as much as that step
is likely to be the cause. Only categories with positive evidence (other than
``ROLE_FEATURES``) somewhere in the trace can be named, with their mixed
probability (not renormalised, so a category whose evidence sits at unlikely
steps keeps a small probability). The attributor names the most probable one
when it has evidence at the blamed step or a probability of
``MIN_CATEGORY_PROB`` or more, else answers ``unknown`` with these
probabilities as the runner-ups. The
attributor names the speaker of the likeliest step (or of the call a tool step
answers) as the agent.

Weights are the MAP estimate under a Gaussian prior (``fit_model``):
``sum of -log P(labelled choice) + strength * sum (theta - mu)^2``, with ``mu``
0 except the weight of a category's own signals (``SIGNAL_PRIOR``) and of the
step's evidence (``EVIDENCE_PRIOR``): a signal nobody could fit keeps the
weight its definition gives it. The weights shipped in ``model.json`` were fit
by ``bench/whowhen.py --fit`` on the tune halves of its two labelled subsets only
(``meta`` in the file says so); the report halves are never fit on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from flywheel import UserError

from ._features import CATEGORY_EVIDENCE, MODEL_CATEGORIES, ROLE_FEATURES, STEP_FEATURES

#: Prior mean of a category's weight on its own signals (a 0.6 signal adds 1.8 log-odds).
SIGNAL_PRIOR = 3.0
#: Prior mean of the step model's weight on the combined evidence at a step.
EVIDENCE_PRIOR = 2.0
#: Default prior strength (the ridge penalty on ``theta - mu``).
STRENGTH = 1.0


@dataclass
class Example:
    """One labelled trace for fitting: its step features, the faulty step, its category."""

    features: list[dict[str, float]]
    step: int
    category: str | None = None  # None: not labelled with a model category (step only)


@dataclass
class Prediction:
    """The model's reading of one trace."""

    step_probs: list[float]
    #: The likeliest step (the earliest on ties); -1 for an empty trace.
    step: int
    #: ``[[category, probability]]`` over the categories with evidence in the trace, most
    #: probable first (the mixed probability, not renormalised: the rest of the mass is
    #: on categories without evidence); empty when no category has any.
    category_probs: list[list[Any]]


def _softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    e = [math.exp(s - top) for s in scores]
    total = sum(e)
    return [x / total for x in e]


def has_evidence(features: Sequence[Mapping[str, float]], category: str) -> bool:
    """Whether any of ``features`` holds evidence for ``category`` other than a role."""
    return any(
        f.get(k, 0.0) > 0
        for f in features
        for k in CATEGORY_EVIDENCE[category]
        if k not in ROLE_FEATURES
    )


def _category_params() -> list[tuple[str, str]]:
    return [(c, k) for c in MODEL_CATEGORIES for k in CATEGORY_EVIDENCE[c]]


@dataclass
class AttributionModel:
    """Weights of the step and category models (see the module docstring)."""

    step_weights: dict[str, float]
    intercepts: dict[str, float]
    evidence_weights: dict[str, dict[str, float]]
    meta: dict[str, Any] = field(default_factory=dict)

    def step_scores(self, features: Sequence[Mapping[str, float]]) -> list[float]:
        """The step model's score of every step."""
        w = self.step_weights
        return [sum(w.get(k, 0.0) * f.get(k, 0.0) for k in STEP_FEATURES) for f in features]

    def category_scores_at(self, f: Mapping[str, float]) -> list[float]:
        """The category model's score of every category (``MODEL_CATEGORIES`` order) at a step."""
        out = []
        for c in MODEL_CATEGORIES:
            b = self.evidence_weights.get(c, {})
            out.append(
                self.intercepts.get(c, 0.0)
                + sum(b.get(k, 0.0) * f.get(k, 0.0) for k in CATEGORY_EVIDENCE[c])
            )
        return out

    def predict(self, features: Sequence[Mapping[str, float]]) -> Prediction:
        """Step probabilities, the likeliest step, and the mixed category probabilities."""
        if not features:
            return Prediction([], -1, [])
        p_step = _softmax(self.step_scores(features))
        step = max(range(len(features)), key=lambda i: (p_step[i], -i))
        mix = [0.0] * len(MODEL_CATEGORIES)
        for p, f in zip(p_step, features, strict=True):
            for j, q in enumerate(_softmax(self.category_scores_at(f))):
                mix[j] += p * q

        ok = [j for j, c in enumerate(MODEL_CATEGORIES) if has_evidence(features, c)]
        ranked = sorted(((MODEL_CATEGORIES[j], mix[j]) for j in ok), key=lambda x: -x[1])
        return Prediction(p_step, step, [[c, round(p, 3)] for c, p in ranked])

    def to_json(self) -> dict[str, Any]:
        """The model as written to ``model.json``."""
        return {
            "meta": self.meta,
            "step_weights": {k: round(v, 4) for k, v in self.step_weights.items()},
            "intercepts": {k: round(v, 4) for k, v in self.intercepts.items()},
            "evidence_weights": {
                c: {k: round(v, 4) for k, v in ws.items()}
                for c, ws in self.evidence_weights.items()
            },
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> AttributionModel:
        """A model from its ``to_json`` form."""
        return cls(
            step_weights={k: float(v) for k, v in doc["step_weights"].items()},
            intercepts={k: float(v) for k, v in doc["intercepts"].items()},
            evidence_weights={
                c: {k: float(v) for k, v in ws.items()} for c, ws in doc["evidence_weights"].items()
            },
            meta=dict(doc.get("meta") or {}),
        )


_DEFAULT: AttributionModel | None = None


def load_model(path: str | Path | None = None) -> AttributionModel:
    """The model in ``path``, or the shipped one (``attribution/model.json``)."""
    global _DEFAULT
    if path is None and _DEFAULT is not None:
        return _DEFAULT
    try:
        text = (
            Path(path).read_text(encoding="utf-8")
            if path is not None
            else resources.files("flywheel.attribution").joinpath("model.json").read_text("utf-8")
        )
        model = AttributionModel.from_json(json.loads(text))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UserError(
            f"{path or 'model.json'}: not a readable attribution model ({exc})"
        ) from exc
    if path is None:
        _DEFAULT = model
    return model


def prior_model() -> AttributionModel:
    """The model before any fitting: every weight at its prior mean."""
    step = {k: (EVIDENCE_PRIOR if k == "evidence" else 0.0) for k in STEP_FEATURES}
    ev = {
        c: {k: (SIGNAL_PRIOR if k.startswith("signal:") else 0.0) for k in CATEGORY_EVIDENCE[c]}
        for c in MODEL_CATEGORIES
    }
    return AttributionModel(step, dict.fromkeys(MODEL_CATEGORIES, 0.0), ev, {"fitted_on": "none"})


# -- fitting ------------------------------------------------------------------------------
def fit_choice(
    groups: Sequence[tuple[Sequence[Sequence[float]], int]],
    mu: Sequence[float],
    strength: float = STRENGTH,
) -> list[float]:
    """MAP weights of a conditional logit: each group is (alternatives x weights, chosen row).

    Minimises ``sum -log softmax(X theta)[chosen] + strength * |theta - mu|^2`` (L-BFGS).
    """
    import numpy as np
    from scipy.optimize import minimize

    mats = [(np.asarray(x, dtype=float), int(y)) for x, y in groups]
    mu_v = np.asarray(mu, dtype=float)

    def loss(theta: Any) -> tuple[float, Any]:
        total = strength * float((theta - mu_v) @ (theta - mu_v))
        grad = 2.0 * strength * (theta - mu_v)
        for x, y in mats:
            s = x @ theta
            s = s - s.max()
            p = np.exp(s)
            p /= p.sum()
            total -= float(np.log(p[y]))
            grad = grad - (x[y] - p @ x)
        return total, grad

    res = minimize(loss, mu_v.copy(), jac=True, method="L-BFGS-B")
    return [float(v) for v in res.x]


def _category_row(f: Mapping[str, float], params: Sequence[tuple[str, str]]) -> list[list[float]]:
    """The design matrix of one step for the category model (categories x parameters)."""
    k = len(MODEL_CATEGORIES)
    rows = []
    for ci, c in enumerate(MODEL_CATEGORIES):
        row = [0.0] * (k + len(params))
        row[ci] = 1.0
        for j, (pc, name) in enumerate(params):
            if pc == c:
                row[k + j] = f.get(name, 0.0)
        rows.append(row)
    return rows


def fit_model(
    examples: Sequence[Example], *, strength: float = STRENGTH, meta: Mapping[str, Any] = ()
) -> AttributionModel:
    """Fit both models on labelled traces (MAP under the prior of the module docstring)."""
    if not examples:
        raise UserError("no labelled traces to fit the attribution model on")
    step_groups = [
        ([[f.get(k, 0.0) for k in STEP_FEATURES] for f in e.features], e.step)
        for e in examples
        if 0 <= e.step < len(e.features)
    ]
    step_mu = [EVIDENCE_PRIOR if k == "evidence" else 0.0 for k in STEP_FEATURES]
    w = fit_choice(step_groups, step_mu, strength)
    params = _category_params()
    cat_groups = [
        (_category_row(e.features[e.step], params), MODEL_CATEGORIES.index(e.category))
        for e in examples
        if e.category in MODEL_CATEGORIES and 0 <= e.step < len(e.features)
    ]
    cat_mu = [0.0] * len(MODEL_CATEGORIES) + [
        SIGNAL_PRIOR if name.startswith("signal:") else 0.0 for _, name in params
    ]
    theta = fit_choice(cat_groups, cat_mu, strength) if cat_groups else cat_mu
    k = len(MODEL_CATEGORIES)
    ev: dict[str, dict[str, float]] = {c: {} for c in MODEL_CATEGORIES}
    for j, (c, name) in enumerate(params):
        ev[c][name] = theta[k + j]
    return AttributionModel(
        step_weights=dict(zip(STEP_FEATURES, w, strict=True)),
        intercepts=dict(zip(MODEL_CATEGORIES, theta[:k], strict=True)),
        evidence_weights=ev,
        meta={
            "strength": strength,
            "step_examples": len(step_groups),
            "category_examples": len(cat_groups),
            **dict(meta),
        },
    )
