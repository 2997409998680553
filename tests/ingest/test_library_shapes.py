"""Real libraries' message shapes come out as one model of turns (issue 17, item 3).

Each library of ``_library_runs.LIBRARIES`` runs the injected-bill scenario
with its real instrumentor, exporting over OTLP to a live server; the trace
read back must have typed turns, arguments as objects, unwrapped results and
the injected IBAN that reaches ``send_money`` flagged (``check_trace``), and
its tokens counted once: the list and the detail both show the sum over the
model calls, whatever the library also recorded on the root.
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from flywheel.ingest import get_trace, list_traces
from tests.ingest._libraries import check_trace, exporting, trace_of
from tests.ingest.test_trace_pages import assert_pages_are_the_trace
from tests.ingest._library_runs import LIBRARIES


@pytest.mark.parametrize("library", list(LIBRARIES))
def test_library_trace_normalised(store, tmp_path, library):
    modules, run = LIBRARIES[library]
    for m in modules:
        if importlib.util.find_spec(m.split(".")[0]) is None or importlib.util.find_spec(m) is None:
            pytest.skip(f"{m} is not installed")
    service = re.sub(r"\W+", "-", library.lower())
    with exporting(store, tmp_path, service) as (provider, _):
        run(provider)
    got = check_trace(store, trace_of(store, service))
    assert {k: got[k] for k in ("turns", "arguments", "results", "provenance")} == {
        "turns": True, "arguments": True, "results": True, "provenance": True,
    }, got
    detail = get_trace(store, trace_of(store, service))
    listed = next(t for t in list_traces(store) if t.trace_id == detail.trace_id)
    calls = [n.step for n in detail.spans if n.step.kind == "llm"]
    assert sum(c.input_tokens for c in calls) > 0, "the scripted model reports usage"
    for view in (listed, detail.summary):
        assert view.input_tokens == sum(c.input_tokens for c in calls)
        assert view.output_tokens == sum(c.output_tokens for c in calls)
    # read a page at a time, the library's shapes come out the same (issue 23)
    assert_pages_are_the_trace(store, detail.trace_id, sizes=(1, 3))
