"""The learned attribution model: fitting, abstention, and what the shipped file may hold.

Features are built by hand here (no benchmark log is read); the shipped
``model.json`` is checked for its shape and origin only -- that it is the fit of
the tune halves is ``bench/whowhen.py --check``'s job (it needs the data).
"""

from __future__ import annotations

import json
import math
import random
from importlib import resources

import pytest
from flywheel.attribution import (
    MODEL_CATEGORIES,
    STEP_FEATURES,
    AttributionModel,
    Example,
    fit_model,
    load_model,
    prior_model,
)

from flywheel import UserError


def _trace(n: int, faulty: int, rng: random.Random) -> list[dict[str, float]]:
    """``n`` speaking steps with noise features; only ``faulty`` says it assumed its data."""
    out = []
    for i in range(n):
        f = dict.fromkeys(STEP_FEATURES, 0.0)
        f.update(speaks=1.0, acts=float(rng.random() < 0.5), position=i / (n - 1))
        f["assumed_state"] = float(i == faulty)
        out.append(f)
    return out


def test_a_planted_feature_is_learned_and_places_the_step() -> None:
    rng = random.Random(7)
    train = []
    for _ in range(40):
        n = rng.randrange(4, 9)
        k = rng.randrange(n)
        train.append(Example(_trace(n, k, rng), k, "perception"))
    m = fit_model(train)
    assert m.step_weights["assumed_state"] > 2.0
    assert abs(m.step_weights["acts"]) < 1.0  # noise stays near its prior mean 0
    hits = 0
    for _ in range(20):
        n = rng.randrange(4, 9)
        k = rng.randrange(n)
        hits += m.predict(_trace(n, k, rng)).step == k
    assert hits == 20


def test_fitting_is_deterministic_and_round_trips_through_json() -> None:
    rng = random.Random(3)
    train = [Example(_trace(5, j % 5, rng), j % 5, "perception") for j in range(15)]
    a, b = fit_model(train), fit_model(train)
    assert a.to_json() == b.to_json()
    again = AttributionModel.from_json(json.loads(json.dumps(a.to_json())))
    assert again.to_json() == a.to_json()


def test_no_evidence_is_no_category_and_a_role_alone_is_none() -> None:
    m = prior_model()
    plain = [dict.fromkeys(STEP_FEATURES, 0.0) for _ in range(3)]
    for f in plain:
        f.update(speaks=1.0, acts=1.0, answer=0.0)
    plain[-1]["answer"] = 1.0
    p = m.predict(plain)
    assert p.category_probs == []  # acting and answering are roles, not evidence
    plain[1]["signal:execution"] = 0.9
    q = m.predict(plain)
    assert [c for c, _ in q.category_probs] == ["execution"]
    assert 0.0 < q.category_probs[0][1] <= 1.0


def test_evidence_at_an_unlikely_step_keeps_a_small_probability() -> None:
    m = prior_model()
    feats = [dict.fromkeys(STEP_FEATURES, 0.0) for _ in range(4)]
    feats[0]["signal:perception"] = 0.9  # evidence, so the step model prefers step 0
    feats[0]["evidence"] = 0.9
    feats[3]["signal:recovery"] = 0.2  # weak evidence elsewhere
    p = m.predict(feats)
    probs = dict((c, v) for c, v in p.category_probs)
    assert p.step == 0 and probs["perception"] > probs["recovery"]
    assert sum(probs.values()) <= 1.0 + 1e-9


def test_the_shipped_model_is_small_fit_on_tune_halves_and_names_no_format() -> None:
    text = resources.files("flywheel.attribution").joinpath("model.json").read_text("utf-8")
    assert len(text) < 8_000
    doc = json.loads(text)
    assert doc["meta"]["fitted_by"] == "bench/whowhen.py --fit"
    assert all(n > 0 for n in doc["meta"]["tune_logs"].values())
    m = load_model()
    # every key is a generic feature or category: no agent, tool or phrase of any format
    assert set(m.step_weights) == set(STEP_FEATURES)
    assert set(m.intercepts) == set(MODEL_CATEGORIES)
    assert set(m.evidence_weights) == set(MODEL_CATEGORIES)
    weights = [*m.step_weights.values(), *m.intercepts.values()]
    weights += [w for ws in m.evidence_weights.values() for w in ws.values()]
    assert all(math.isfinite(w) for w in weights)


def test_an_unreadable_model_is_a_one_line_error(tmp_path) -> None:
    bad = tmp_path / "model.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match="model.json: not a readable attribution model"):
        load_model(bad)
    bad.write_text('{"step_weights": {}}')
    with pytest.raises(UserError):
        load_model(bad)
    with pytest.raises(UserError, match="no labelled traces"):
        fit_model([])
