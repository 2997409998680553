"""Near-duplicate dedupe: signature, MinHash/LSH parameters, in-memory and store-backed index."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence

import numpy as np
import pytest
from datasketch import MinHash
from flywheel.promote import TraceStep
from flywheel.promote._dedupe import (
    Assignment,
    DedupeIndex,
    DedupeParams,
    StoreDedupeIndex,
    band_keys,
    minhashes,
)
from tests.bench.redact_synth import duplicate_traces
from flywheel.promote._signature import (
    jaccard,
    jaccard_hashes,
    normalise_text,
    trace_signature,
    user_intent,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from flywheel import Store, open_store


def _trace(intent: str, calls: Sequence[tuple[str, dict[str, object]]]) -> list[TraceStep]:
    steps = [TraceStep(span_id="0", input_text=intent)]
    steps += [
        TraceStep(span_id=str(i), tool_name=t, arguments=json.dumps(a))
        for i, (t, a) in enumerate(calls)
    ]
    return steps


def pairwise_precision_recall(
    groups: dict[str, str], clusters: dict[str, str]
) -> tuple[float, float]:
    """Pairwise precision/recall of a clustering against known groups."""
    tp = fp = fn = 0
    for a, b in itertools.combinations(sorted(groups), 2):
        same_g, same_c = groups[a] == groups[b], clusters[a] == clusters[b]
        tp += same_g and same_c
        fp += (not same_g) and same_c
        fn += same_g and not same_c
    return (tp / (tp + fp) if tp + fp else 1.0, tp / (tp + fn) if tp + fn else 1.0)


# -- signature --------------------------------------------------------------


def test_normalise_masks_ids_times_numbers_and_contacts() -> None:
    t = normalise_text(
        "Refund ORD-99812 placed 2026-03-01T10:00:00Z by a.b@x.com, "
        "trace 0af7651916cd43dd8448eb211c80319c "
        "see https://x.io/o/1 amount 12.50 <EMAIL_3>"
    )
    assert t == "refund <num> placed <ts> by <email> , trace <id> see <url> amount <num> <email>"


def test_signature_ignores_ids_times_amounts_but_not_tools() -> None:
    a = _trace(
        "Please refund order O-1234",
        [("get_order", {"order_id": "O-1234"}), ("refund", {"id": 9, "amount": 12.5})],
    )
    b = _trace(
        "please refund order #-99",
        [("get_order", {"order_id": "O-77"}), ("refund", {"id": 4, "amount": 80})],
    )
    c = _trace(
        "please refund order #-99", [("get_order", {"order_id": "O-77"}), ("cancel", {"id": 4})]
    )
    sa, sb, sc = trace_signature(a), trace_signature(b), trace_signature(c)
    assert sa.shingles == sb.shingles
    assert jaccard(sa.shingles, sc.shingles) < 0.6
    assert sa.tools == ("get_order", "refund")
    assert "p:get_order>refund" in sa.shingles and "s:^>get_order" in sa.shingles


def test_literal_argument_values_weigh_three_times() -> None:
    s = trace_signature(_trace("x", [("change_plan", {"plan": "premium", "customer": "C-1"})]))
    assert {
        "a:change_plan.plan=premium",
        "a2:change_plan.plan=premium",
        "a3:change_plan.plan=premium",
    } <= s.shingles
    assert (
        "a:change_plan.customer=<num>" in s.shingles
        and "a2:change_plan.customer=<num>" not in s.shingles
    )


def test_user_intent_from_chat_messages() -> None:
    msgs = [
        {"role": "system", "content": "be nice"},
        {"role": "user", "parts": [{"type": "text", "content": "hi there"}]},
    ]
    assert user_intent([TraceStep(input_text=json.dumps(msgs))]) == "hi there"
    assert user_intent([TraceStep(tool_name="x"), TraceStep(input_text="plain")]) == "plain"
    assert user_intent([]) == ""


def test_smolagents_wrapped_kwargs_unwrapped() -> None:
    a = trace_signature(_trace("x", [("t", {"args": [], "kwargs": {"q": "a"}})]))
    b = trace_signature(_trace("x", [("t", {"q": "a"})]))
    assert a.shingles == b.shingles


@settings(deadline=None)  # a property, not a timing: the shared 2-core machine stalls examples
@given(
    st.sets(st.text(min_size=1, max_size=5), max_size=20),
    st.sets(st.text(min_size=1, max_size=5), max_size=20),
)
def test_jaccard_on_hashes_equals_jaccard_on_strings(a: set[str], b: set[str]) -> None:
    from flywheel.promote._signature import shingle_hashes

    assert jaccard_hashes(shingle_hashes(a), shingle_hashes(b)) == pytest.approx(jaccard(a, b))


# -- parameters and sketches ---------------------------------------------------


def test_params_are_explicit_and_checked() -> None:
    p = DedupeParams()
    assert (p.num_perm, p.bands, p.rows, p.threshold) == (128, 32, 4, 0.5)
    assert p.candidate_probability(0.5) == pytest.approx(1 - (1 - 0.5**4) ** 32)
    assert p.candidate_probability(0.7) > 0.999
    with pytest.raises(ValueError, match="bands\\*rows"):
        DedupeParams(num_perm=128, bands=30, rows=4)
    with pytest.raises(ValueError, match="threshold"):
        DedupeParams(threshold=0)


def test_bulk_minhash_equals_datasketch_update_batch() -> None:
    p = DedupeParams()
    sig = trace_signature(_trace("track parcel", [("track", {"n": 1})]))
    h = sig.hashes()
    fast = minhashes([h], p)[0]
    slow = MinHash(num_perm=p.num_perm, seed=p.seed, hashfunc=lambda v: v)
    slow.update_batch((h & np.uint64(0xFFFFFFFF)).tolist())
    assert np.array_equal(fast.hashvalues, slow.hashvalues)
    assert len(band_keys(fast, p)) == p.bands


# -- in-memory index --------------------------------------------------------------


def test_in_memory_clusters_keep_representative_and_size() -> None:
    idx = DedupeIndex()
    a = idx.add_trace(
        "a", _trace("refund order 1", [("get_order", {"id": 1}), ("refund", {"id": 1})])
    )
    b = idx.add_trace(
        "b", _trace("Refund order 2!", [("get_order", {"id": 2}), ("refund", {"id": 2})])
    )
    c = idx.add_trace("c", _trace("book a flight to Oslo", [("search_flights", {"to": "OSL"})]))
    assert a == Assignment("a", "a", True)
    assert (
        b.cluster_id == "a"
        and not b.is_new_cluster
        and b.matched_trace_id == "a"
        and b.similarity == 1.0
    )
    assert c.is_new_cluster
    assert idx.clusters["a"].size == 2 and idx.clusters["a"].representative == "a"
    assert idx.add_trace("b", []) == b  # re-adding is a no-op
    assert len(idx) == 3


def test_signatures_that_say_nothing_of_the_task_are_never_duplicates(store: Store) -> None:
    """Chat-only traces whose request reads as one word are no duplicates of each other.

    Their signatures are equal and empty: not the same task, in memory or in the store.
    Short requests that do call tools still cluster.
    """
    box = TraceStep(span_id="9", output_text="Box de décembre modifiée.")
    cheese = _trace("history", []) + [box]
    parking = _trace("history", []) + [TraceStep(span_id="9", output_text="Appeal lodged.")]
    assert not trace_signature(cheese).informative
    idx = DedupeIndex()
    assert idx.add_trace("c", cheese).is_new_cluster and idx.add_trace("p", parking).is_new_cluster
    sx = StoreDedupeIndex(store)
    got = sx.add_batch([("c", trace_signature(cheese)), ("p", trace_signature(parking))])
    assert all(a.is_new_cluster for a in got)
    got = sx.add_batch([("p2", trace_signature(parking))])  # against the store, too
    assert got[0].is_new_cluster
    refund = _trace("refund", [("refund", {"id": 1})])
    assert trace_signature(refund).informative
    assert not DedupeIndex().add_many(
        [("r1", trace_signature(refund)), ("r2", trace_signature(refund))]
    )[1].is_new_cluster


def test_in_memory_quality_pairwise_precision_recall() -> None:
    data = duplicate_traces(1200, per_group=6, seed=5)
    idx = DedupeIndex()
    res = idx.add_many([(tid, trace_signature(steps)) for tid, _, steps in data])
    prec, rec = pairwise_precision_recall(
        {t: g for t, g, _ in data}, {a.trace_id: a.cluster_id for a in res}
    )
    print(f"in-memory pairwise precision={prec:.4f} recall={rec:.4f} clusters={len(idx.clusters)}")
    assert prec >= 0.95 and rec >= 0.95


# -- store-backed index -----------------------------------------------------------


def test_store_index_checks_new_batches_against_everything_seen(store: Store) -> None:
    _check_store_index(store)


def test_store_index_on_the_server_path(request: pytest.FixtureRequest) -> None:
    """The same through clickhouse-connect to the ClickHouse-HTTP stand-in (when present)."""
    pytest.importorskip("tests._standin")
    base = request.getfixturevalue("standin_url").rsplit("/", 1)[0]
    s = open_store(f"{base}/dedupe_server_path")
    s.migrate()
    try:
        _check_store_index(s)
    finally:
        s.close()


def _check_store_index(store: Store) -> None:
    idx = StoreDedupeIndex(store)
    first = idx.add_traces(
        [
            ("r1", _trace("refund order 1", [("get_order", {"id": 1}), ("refund", {"id": 1})])),
            ("f1", _trace("book a flight to Oslo", [("search_flights", {"to": "OSL"})])),
        ]
    )
    assert [a.is_new_cluster for a in first] == [True, True]
    second = idx.add_traces(
        [
            (
                "r2",
                _trace(
                    "Refund order 22 please", [("get_order", {"id": 22}), ("refund", {"id": 22})]
                ),
            ),
            ("r3", _trace("refund order 3", [("get_order", {"id": 3}), ("refund", {"id": 3})])),
            ("n1", _trace("delete my account", [("delete_account", {"id": 3})])),
        ]
    )
    assert [a.cluster_id for a in second] == ["r1", "r1", "n1"]
    assert second[0].matched_trace_id == "r1"
    clusters = {c.cluster_id: c for c in idx.clusters()}
    assert clusters["r1"].size == 3 and clusters["r1"].representative == "r1"
    assert clusters["f1"].size == 1 and clusters["n1"].size == 1
    assert [c.cluster_id for c in idx.clusters(min_size=2)] == ["r1"]
    by_id = idx.clusters_by_id(["r1", "nope"])
    assert set(by_id) == {"r1"} and by_id["r1"].size == 3
    assert idx.members("r1") == ["r1", "r2", "r3"]
    # Re-adding known traces changes nothing.
    again = idx.add_traces([("r2", []), ("r2", [])])
    assert [a.cluster_id for a in again] == ["r1", "r1"]
    assert {c.cluster_id: c.size for c in idx.clusters()}["r1"] == 3
    # Nothing but hashes is stored: no intent text, no argument values.
    rows = store.query("SELECT * FROM dedupe_signatures")
    assert "refund order" not in json.dumps(rows, default=str)


def test_store_signatures_survive_reopen(chdb_dir: str) -> None:
    url = f"chdb://{chdb_dir}?database=dedupe_reopen"
    s1 = open_store(url)
    s1.migrate()
    StoreDedupeIndex(s1).add_traces([("a", _trace("track parcel 1", [("track", {"n": 1})]))])
    s1.close()
    s2 = open_store(url)
    try:
        got = StoreDedupeIndex(s2).add_traces(
            [("b", _trace("track parcel 2", [("track", {"n": 2})]))]
        )
        assert got[0].cluster_id == "a"
    finally:
        s2.close()


def test_store_rows_under_other_params_are_not_compared(store: Store) -> None:
    t = _trace("track parcel 1", [("track", {"n": 1})])
    StoreDedupeIndex(store).add_traces([("a", t)])
    other = StoreDedupeIndex(store, DedupeParams(num_perm=120, bands=40, rows=3))
    assert other.add_traces([("b", t)])[0].is_new_cluster


def test_store_index_is_per_project(store: Store) -> None:
    """One project's traces never join, or reveal, another project's clusters."""
    t = _trace("track parcel 1", [("track", {"n": 1})])
    a = StoreDedupeIndex(store, project="team-a")
    b = StoreDedupeIndex(store, project="team-b")
    a.add_traces([("a1", t), ("a2", t)])
    got = b.add_traces([("b1", t), ("a1", t)])  # a1: the same trace id in another project
    assert [g.is_new_cluster for g in got] == [True, False]
    assert [g.cluster_id for g in got] == ["b1", "b1"]
    assert {c.cluster_id: c.size for c in a.clusters()} == {"a1": 2}
    assert {c.cluster_id: c.size for c in b.clusters()} == {"b1": 2}
    assert a.members("a1") == ["a1", "a2"] and b.members("a1") == []


def test_store_quality_in_batches_matches_in_memory(store: Store) -> None:
    data = duplicate_traces(900, per_group=6, seed=9)
    idx = StoreDedupeIndex(store)
    res: list[Assignment] = []
    for i in range(0, len(data), 300):
        res += idx.add_traces([(tid, steps) for tid, _, steps in data[i : i + 300]])
    groups = {t: g for t, g, _ in data}
    prec, rec = pairwise_precision_recall(groups, {a.trace_id: a.cluster_id for a in res})
    print(f"store pairwise precision={prec:.4f} recall={rec:.4f}")
    assert prec >= 0.95 and rec >= 0.95
    sizes = {c.cluster_id: c.size for c in idx.clusters(limit=None)}
    assert sum(sizes.values()) == len(data)
    counted = store.query(
        "SELECT cluster_id, count() AS n FROM dedupe_signatures FINAL GROUP BY cluster_id"
    )
    assert {r["cluster_id"]: r["n"] for r in counted} == sizes


def test_store_large_cluster_stays_bounded(store: Store) -> None:
    """Hundreds of identical traces: band lookups are capped per key, assignment still right."""
    t = _trace("reset my password", [("reset_password", {"user": "u"})])
    idx = StoreDedupeIndex(store)
    for b in range(3):
        idx.add_traces([(f"p{b}-{i}", t) for i in range(150)])
    assert [(c.cluster_id, c.size) for c in idx.clusters()] == [("p0-0", 450)]


def test_intent_of_messages_recorded_as_one_json_attribute(store: Store) -> None:
    """A chat span holding its whole conversation in one JSON attribute (OpenAI chat
    messages in ``llm.input_messages``, Responses items in ``openai.responses.input``)
    is a step whose input is that conversation: the intent is the user's words, not a
    later span's placeholder, and two such chats with different requests are no
    duplicates. Counter-example: the tool output inside the Responses items (a
    ``function_call_output``) is never read as the user's request.
    """
    from flywheel.promote import load_traces

    from tests.promote.test_sampling import _span, insert, tid

    def chat(n: int, attrs: dict[str, object]) -> list[dict[str, object]]:
        t = tid(n)
        root, a, b = f"{n:08x}r0000000"[:16], f"{n:08x}a0000000"[:16], f"{n:08x}b0000000"[:16]
        later = {"gen_ai.operation.name": "chat",
                 "gen_ai.input.messages": json.dumps([{"role": "user", "content": "(history)"}]),
                 "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": "Done."}])}
        return [_span(t, root, "", "invoke_agent shop", 0, {"gen_ai.operation.name": "invoke_agent"}),
                _span(t, a, root, "chat gpt", 10, {"gen_ai.operation.name": "chat", **attrs}),
                _span(t, b, root, "chat gpt", 20, later)]

    messages = [{"role": "system", "content": "You are the shop's assistant."},
                {"role": "user", "content": "Swap the blue kettle in my December box for the steel teapot"}]
    items = [
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "Appeal the parking charge, the ticket machine was broken"}]},
        {"type": "function_call", "call_id": "fc_1", "name": "pcn_lookup", "arguments": '{"pcn": "X1"}'},
        {"type": "function_call_output", "call_id": "fc_1", "output": '{"site": "harbour car park"}'},
    ]
    insert(store, chat(51, {"llm.input_messages": json.dumps(messages)}))
    insert(store, chat(52, {"openai.responses.input": json.dumps(items)}))
    got = load_traces(store, [tid(51), tid(52)], project="default")
    box, appeal = (trace_signature(got[tid(n)].steps) for n in (51, 52))
    assert box.intent == "swap blue kettle december box steel teapot"
    assert appeal.intent == "appeal parking charge ticket machine broken"
    assert "harbour" not in appeal.intent
    assert box.informative and appeal.informative
    assert DedupeIndex().add_many([("b", box), ("a", appeal)])[1].is_new_cluster
