"""Nothing reads a label at prediction time: scrambled labels, the same predictions.

Who&When-shaped logs (written here, in both framework shapes and a plain one) are
imported twice, once with their labels and once with every label field scrambled
(``mistake_agent``, ``mistake_step``, ``mistake_reason``, ``ground_truth``,
``is_correct``). The bench's own path (``bench/whowhen.py``: import, load, attribute
with the shipped model, every label-free heuristic) must give the same predictions,
evidence and category scores on both. A test that only checked the loader would miss a
heuristic or a feature that read the resource.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path
from typing import Any

from flywheel.attribution import load_model

BENCH = Path(__file__).resolve().parents[2] / "bench" / "whowhen.py"


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("whowhen_bench", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("whowhen_bench", mod)
    spec.loader.exec_module(mod)
    return mod


def _logs() -> dict[str, list[dict[str, Any]]]:
    autogen = [
        {"role": "assistant", "name": "Planner", "content": "Find the difference of A and B."},
        {
            "role": "user",
            "name": "Analyst",
            "content": "A has 737,015 and B 4,965.\n```python\nprint(737015 - 4965)\n```",
        },
        {
            "role": "user",
            "name": "Computer_terminal",
            "content": "exitcode: 0 (execution succeeded)\nCode output: 732050",
        },
        {"role": "user", "name": "Checker", "content": "Verified: 732050. TERMINATE"},
    ]
    failing = [
        {"role": "assistant", "name": "Planner", "content": "Load the table and sum column x."},
        {"role": "user", "name": "Coder", "content": "```python\nprint(df['x'].sum())\n```"},
        {
            "role": "user",
            "name": "Computer_terminal",
            "content": "exitcode: 1 (execution failed)\n"
            "Code output: Traceback (most recent call last):\nNameError: name 'df' is not defined",
        },
        {"role": "user", "name": "Checker", "content": "The sum is 1,204. TERMINATE"},
    ]
    magentic = [
        {"role": "human", "content": "How many stars does the repo have?"},
        {"role": "Orchestrator (thought)", "content": "Initial plan:\n1. search"},
        {"role": "Orchestrator (-> WebSurfer)", "content": "Search for the repo."},
        {
            "role": "WebSurfer",
            "content": "I typed 'repo stars' into '0 characters out of 2000'.\n"
            "Here is a screenshot of the page. Stars: 4,812",
        },
        {
            "role": "Orchestrator (thought)",
            "content": "Updated Ledger:\n"
            + json.dumps(
                {
                    "is_request_satisfied": {"answer": False, "reason": "no"},
                    "is_in_loop": {"answer": True, "reason": "same search"},
                    "is_progress_being_made": {"answer": False, "reason": "stuck"},
                }
            ),
        },
        {"role": "Orchestrator (termination condition)", "content": "About 5,000 stars."},
    ]
    plain = [
        {"role": "user", "name": "Client", "content": "Book a table for two."},
        {"role": "assistant", "name": "Booker", "content": "Booked table 118 for 19:30."},
        {"role": "assistant", "name": "Writer", "content": "Your table 118 is confirmed."},
    ]
    return {"1": autogen, "2": failing, "3": magentic, "4": plain}


def _write(root: Path, scramble: bool) -> Path:
    rng = random.Random(7)
    for sub in ("algorithm-generated", "hand-crafted"):
        d = root / sub
        d.mkdir(parents=True)
        for name, history in _logs().items():
            labels = {
                "mistake_agent": "Analyst",
                "mistake_step": "1",
                "mistake_reason": "made up the figures",
                "ground_truth": "732050",
                "is_correct": "false",
                "question": "",
            }
            if scramble:
                labels = {
                    "mistake_agent": rng.choice(["Nobody", "Checker", "WebSurfer", "Zed"]),
                    "mistake_step": str(rng.randrange(len(history))),
                    "mistake_reason": "scrambled " + str(rng.random()),
                    "ground_truth": str(rng.randrange(10**6)),
                    "is_correct": rng.choice(["true", "false"]),
                    "question": "",
                }
            (d / f"{name}.json").write_text(json.dumps({**labels, "history": history}))
    return root


def _predictions(store: Any, data: Path) -> tuple[list[Any], list[Any]]:
    bench = _bench()
    model = load_model()
    out, gold = [], []
    for sub in bench.SUBSETS:
        recs = bench.collect(store, sub, data)
        bench.attribute(recs, model)
        methods = bench._methods(recs)
        for i, r in enumerate(recs):
            gold.append((r["gold_agent"], r["gold_step"]))
            out.append(
                (
                    r["log"],
                    {m: guesses[i] for m, guesses in methods.items()},
                    r["category"],
                    r["forced"],
                    r["scores"],
                    r["confidence"],
                    r["kind"],
                    r["features"],
                )
            )
    return out, gold


def test_scrambled_labels_leave_every_prediction_unchanged(
    tmp_path: Path, _chdb_template: Any
) -> None:
    runs = []
    for scramble in (False, True):
        data = _write(tmp_path / str(scramble), scramble)
        store = _chdb_template.fresh()
        try:
            runs.append(_predictions(store, data))
        finally:
            store.close()
    (plain, gold), (scrambled, gold_scrambled) = runs
    assert len(plain) == 8 and gold != gold_scrambled  # the labels did change
    assert plain == scrambled
