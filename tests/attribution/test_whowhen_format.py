"""Who&When's Magentic-One (hand-crafted) format: speakers, channels, runtime noise, pages.

Synthetic logs in the shape of the hand-crafted subset (no real log is read
here, and nothing is scored): speakers live in ``role`` with a channel
suffix, the runtime's stderr (Python warnings) was captured into message
content, and a browsing agent's message quotes the page it was shown.
"""

from __future__ import annotations

import json
from pathlib import Path

from flywheel.attribution import attribute_trace, import_whowhen, load_trace

from flywheel import Store

WARNING = (
    "\n\n/usr/local/lib/python3.11/site-packages/autogen_magentic_one/agents/orchestrator.py:216:"
    " UserWarning: Resolved model mismatch: gpt-4o-2024-08-06 != gpt-4o-2024-05-13. Model "
    "mapping may be incorrect.\n  ledger_response = await self._model_client.create(\n"
)
PAGE = (
    "Here is a screenshot of [Gym - Search](https://www.bing.com/search?q=gym&cvid=31415926). "
    "The viewport shows 21% of the webpage.\nThe following metadata was extracted from the "
    'webpage:\n\n{"fb:app_id": "3732605936979161", "og:image:width": "600"}\n\n'
    "Automatic OCR of the page screenshot has detected the following text:\n\nOpen 7-9 pm, $120"
)
HISTORY = [
    {"role": "human", "content": "Which gym near the NYSE is open after work?"},
    {"role": "Orchestrator (thought)", "content": "Initial plan: search the web." + WARNING},
    {"role": "Orchestrator (-> WebSurfer)", "content": "Search for gyms near the NYSE."},
    {"role": "WebSurfer", "content": "I typed 'gym near NYSE' into the search bar.\n\n" + PAGE},
    {"role": "Orchestrator (thought)", "content": "The gym costs $120." + WARNING},
    {
        "role": "FileSurfer",
        "content": "Address: file:///workspace/a.csv\nViewport: 1\n=====\n4,5,613",
    },
    {"role": "Orchestrator (termination condition)", "content": "FINAL ANSWER: the $130 gym"},
]


def _import(store: Store, tmp_path: Path) -> str:
    d = tmp_path / "hand-crafted"
    d.mkdir()
    log = {"history": HISTORY, "mistake_agent": "Orchestrator", "mistake_step": "6"}
    (d / "1.json").write_text(json.dumps(log))
    return import_whowhen(store, tmp_path)[0]


def test_speakers_come_from_role_without_the_channel(store: Store, tmp_path: Path) -> None:
    steps = load_trace(store, _import(store, tmp_path))
    assert [s.agent for s in steps] == [
        "human",
        "Orchestrator",
        "Orchestrator",
        "WebSurfer",
        "Orchestrator",
        "FileSurfer",
        "Orchestrator",
    ]
    assert [s.attributes["flywheel.step.index"] for s in steps] == [str(i) for i in range(7)]
    assert steps[2].attributes["flywheel.message.channel"] == "-> WebSurfer"


def test_runtime_warnings_are_not_the_agents_words(store: Store, tmp_path: Path) -> None:
    steps = load_trace(store, _import(store, tmp_path))
    assert steps[1].text == "Initial plan: search the web."
    assert "UserWarning" not in steps[4].text and "2024" not in steps[4].text


def test_a_browsing_agent_said_its_action_and_observed_the_page(
    store: Store, tmp_path: Path
) -> None:
    steps = load_trace(store, _import(store, tmp_path))
    assert steps[3].output == "I typed 'gym near NYSE' into the search bar."
    assert steps[3].input.startswith("Here is a screenshot of") and "$120" in steps[3].input
    assert steps[5].output == "" and steps[5].input.startswith("Address: file:///")


def test_page_figures_are_observed_and_a_changed_figure_is_not(
    store: Store, tmp_path: Path
) -> None:
    a = attribute_trace(store, _import(store, tmp_path), assume_failed=True)
    flagged = {e["index"]: e["detail"] for e in a.evidence if e["kind"] == "ungrounded_fact"}
    # 130 was never observed; 120 was (on the page); 2024 and 216 were runtime noise
    assert set(flagged) == {6}, flagged
    # weak evidence in a run known to have failed: the learned model places the cause,
    # and the made-up figure makes perception the best-supported category
    assert next(e for e in a.evidence if e["kind"] == "model")["cause_index"] == a.causal_index
    assert a.category_scores[0][0] == "perception"
