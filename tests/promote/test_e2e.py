"""End to end: from traces in the store to a verified, released eval-set bundle.

sample -> dedupe -> redact -> draft -> review (REST) -> release -> export -> verify;
a second release with a correct changelog; a 409 on a stale decision; no original
PII value anywhere in a released bundle; the same on the agent harness's traces.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import httpx
import pytest
from click.testing import CliRunner
from flywheel.evalset import export_bundle, load_evalset, release_from_store, verify_bundle
from flywheel.evalset._cli_bundle import register_bundle
from flywheel.promote import (
    SamplingPolicy,
    dedupe_candidates,
    draft_candidates,
    list_candidates,
    redact_candidates,
    sample_candidates,
)

from flywheel import Settings, Store, create_app
from tests._auth import LOCAL, Reviewers, key_headers
from flywheel._clikit import CliContext
from tests.promote.test_sampling import agent_trace, insert, tid

#: Every PII value planted in the traces (the bundle scan looks for each).
PII: list[str] = []


def _person(n: int) -> dict[str, str]:
    first = ["Jane", "Omar", "Lena", "Ravi", "Chloe", "Mateo", "Aiko", "Sven"][n % 8]
    last = ["Roe", "Haddad", "Schmidt", "Patel", "Dubois", "Garcia", "Tanaka", "Larsen"][n % 8]
    p = {
        "name": f"{first} {last}",
        "email": f"{first.lower()}.{last.lower()}{n}@example.org",
        "phone": f"+1 415-555-{1000 + n:04d}",
        "card": "4111 1111 1111 1111",
        "iban": "DE89 3704 0044 0532 0130 00",
        "ip": f"203.0.113.{n % 250 + 1}",
    }
    PII.extend([p["email"], p["phone"], p["name"], p["card"], p["iban"], p["ip"]])
    return p


def _support_trace(
    n: int, kind: str, *, error: str = "", feedback: str = ""
) -> list[dict[str, Any]]:
    p = _person(n)
    attrs: dict[str, Any] = {"flywheel.slice": kind, "flywheel.env.s0_ref": f"crm-s0@{kind}"}
    if feedback:
        attrs["flywheel.feedback.score"] = feedback
    order = f"O-{5000 + n}"
    if kind == "refunds":
        user = (
            f"Hi, {p['name']} here ({p['email']}). Please refund order {order}, it arrived damaged."
        )
        tools = [
            (
                "lookup_order",
                {"order_id": order, "email": p["email"]},
                {
                    "order_id": order,
                    "name": p["name"],
                    "phone": p["phone"],
                    "card_number": p["card"],
                },
            ),
            (
                "refund_order",
                {"order_id": order, "reason": "damaged"},
                {"refund_id": f"R-{n}", "ok": True},
            ),
        ]
        reply = (
            f"Refund for {order} issued to the card ending 1111; confirmation sent to {p['email']}."
        )
    elif kind == "payouts":
        user = f"Send my payout to IBAN {p['iban']} please, my phone is {p['phone']}."
        tools = [
            ("get_customer", {"email": p["email"]}, {"name": p["name"], "last_login_ip": p["ip"]}),
            (
                "update_payout_account",
                {"iban": p["iban"], "account_holder": p["name"]},
                {"ok": True},
            ),
        ]
        reply = f"Payouts now go to {p['iban']}."
    else:
        user = f"I forgot my password, my email is {p['email']} and I log in from {p['ip']}."
        tools = [
            ("find_account", {"email": p["email"]}, {"customer_id": f"C-{n}", "name": p["name"]}),
            ("send_reset_link", {"customer_id": f"C-{n}", "channel": "email"}, {"sent": True}),
        ]
        reply = f"A reset link went to {p['email']}."
    return agent_trace(tid(n), user, tools, reply, error=error, root_attrs=attrs, start_ms=n * 100)


def _client(store: Store) -> httpx.AsyncClient:
    """A client with a read key; ``client.reviewers[name]`` are the headers of a review key."""
    app = create_app(Settings(), store)
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url=LOCAL, headers=key_headers(store, "read")
    )
    client.reviewers = Reviewers(store)  # type: ignore[attr-defined]
    return client


def _pipeline(store: Store, policy: SamplingPolicy) -> list[str]:
    sample_candidates(store, policy)
    dedupe_candidates(store)
    redact_candidates(store, policy=policy.redaction)
    return [
        c.candidate_id for c in draft_candidates(store, held_out_fraction=policy.held_out_fraction)
    ]


async def _approve(
    client: httpx.AsyncClient, cid: str, who: str, edit: Any = None
) -> dict[str, Any]:
    h = client.reviewers[who]  # type: ignore[attr-defined]
    detail = (await client.get(f"/api/promote/candidates/{cid}")).json()
    v = detail["review"]["version"]
    r = await client.post(
        f"/api/promote/candidates/{cid}/claim", json={"base_version": v}, headers=h
    )
    assert r.status_code == 200, r.text
    v = r.json()["version"]
    if edit is not None:
        task = edit(detail["task"])
        r = await client.put(
            f"/api/promote/candidates/{cid}/task", json={"base_version": v, "task": task}, headers=h
        )
        assert r.status_code == 200, r.text
        v = r.json()["version"]
    r = await client.post(
        f"/api/promote/candidates/{cid}/decision",
        json={"base_version": v, "decision": "approve"},
        headers=h,
    )
    assert r.status_code == 200, r.text
    return r.json()


def _fix_state(task: dict[str, Any]) -> dict[str, Any]:
    """What a reviewer adds: the intended final state and a mandatory state assertion."""
    task["expected_state"] = {"ticket": {"status": "done"}}
    task["criteria"].append(
        {
            "id": "final-state",
            "kind": "state",
            "role": "mandatory",
            "grader": {
                "name": "state",
                "args": {
                    "assertions": [{"path": "/ticket/status", "op": "equals", "value": "done"}]
                },
            },
        }
    )
    task["metadata"]["review_todo"] = []
    return task


def _cli() -> click.Group:
    @click.group()
    @click.pass_context
    def root(ctx: click.Context) -> None:
        ctx.obj = CliContext(Settings())

    register_bundle(root)
    return root


@pytest.mark.anyio
async def test_end_to_end(store: Store, tmp_path: Path) -> None:
    PII.clear()
    kinds = ["refunds", "payouts", "passwords"]
    spans: list[dict[str, Any]] = []
    for n in range(18):  # six near-duplicate runs of each of three tasks
        kind = kinds[n % 3]
        spans += _support_trace(
            n, kind, error="refund API timed out" if n == 0 else "", feedback="-1" if n == 4 else ""
        )
    insert(store, spans)
    policy = SamplingPolicy(
        evalset="support", successes={"per_slice": 3, "seed": 3}, held_out_fraction=0.5
    )

    # -- sample -> dedupe -> redact -> draft
    sampled = sample_candidates(store, policy)
    assert {c.trace_id for c in sampled if c.source == "failure"} == {tid(0), tid(4)}
    assert all(c.trace_id for c in sampled)
    deduped = dedupe_candidates(store)
    kept = [c for c in deduped if c.stage == "deduped"]
    dups = [c for c in deduped if c.stage == "duplicate"]
    assert len(kept) == 3 and dups, "one candidate per task survives; the rest are duplicates"
    assert all(c.duplicate_of in {k.candidate_id for k in kept} for c in dups)
    assert [c.cluster_size for c in kept] == [6, 6, 6], "how often production hit each task"
    assert {c.trace_id for c in kept} >= {tid(0)}  # failures first: the failed refund represents it
    redacted = redact_candidates(store, policy=policy.redaction)
    assert all(c.report()["total"] > 0 for c in redacted)
    drafted = draft_candidates(store, held_out_fraction=0.5)
    assert len(drafted) == 3
    for c in drafted:
        body = c.draft + c.redacted_steps
        assert not [v for v in PII if v in body], "drafts hold no raw PII"
        task = c.task()
        assert task["source_trace_id"] == c.trace_id
        assert task["initial_state"].startswith("crm-s0@")

    by_trace = {c.trace_id: c.candidate_id for c in drafted}
    refund = by_trace[tid(0)]
    others = [cid for t, cid in by_trace.items() if t != tid(0)]

    async with _client(store) as client:
        # -- the queue and the detail a reviewer reads
        q = (await client.get("/api/promote/queue", params={"evalset": "support"})).json()
        assert q["count"] == 3 and q["items"][0]["source"] == "failure"
        detail = (await client.get(f"/api/promote/candidates/{refund}")).json()
        text = json.dumps(detail)
        assert not [v for v in PII if v in text]
        assert "<EMAIL_1>" in text and detail["redaction_report"]["counts"]["EMAIL"] >= 2
        assert detail["review"]["version"] == 0 and detail["task"]["slice"] == "refunds"

        # -- writes need a reviewer; a stale decision is a 409 and overwrites nothing
        r = await client.post(f"/api/promote/candidates/{refund}/claim", json={"base_version": 0})
        assert r.status_code == 403 and "scope review" in r.json()["error"]["message"]
        await _approve(client, refund, "alice", edit=_fix_state)
        r = await client.post(
            f"/api/promote/candidates/{refund}/decision",
            json={"base_version": 1, "decision": "reject", "reason": "dup"},
            headers=client.reviewers["bob"],
        )
        assert r.status_code == 409 and r.json()["error"]["type"] == "ConflictError"
        after = (await client.get(f"/api/promote/candidates/{refund}")).json()["review"]
        assert (
            after["status"] == "approved"
            and after["decided_by"] == "alice"
            and after["version"] == 3
        )

        for cid in others:
            await _approve(client, cid, "bob")
        prog = {p["reviewer"]: p for p in (await client.get("/api/promote/reviewers")).json()}
        assert prog["alice"]["approved"] == 1 and prog["bob"]["approved"] == 2

    # -- release -> export -> verify
    root = tmp_path / "evalsets"
    v1 = release_from_store(store, root, "support")
    assert v1.created and v1.manifest.sequence == 1 and v1.manifest.parent is None
    assert sorted(v1.manifest.changelog.added) == sorted(
        t.task_id for t in load_evalset(v1.path).tasks.values()
    )
    assert sum(v1.manifest.splits.values()) == 3
    assert policy.policy_id in v1.manifest.sampling_policies
    again = release_from_store(store, root, "support")
    assert not again.created and again.version == v1.version, "identical content: a no-op"

    runner = CliRunner()
    out1 = tmp_path / "export1"
    res = runner.invoke(
        _cli(), ["evalset", "export", f"support@{v1.version[:8]}", str(out1), "--root", str(root)]
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(_cli(), ["evalset", "verify", str(out1), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["ok"], res.output
    es = load_evalset(out1)
    assert es.manifest["version"] == v1.version and len(es.tasks) == 3

    # -- no original PII value anywhere in the released bundle
    blob = "".join(p.read_text(encoding="utf-8") for p in out1.iterdir())
    assert not [v for v in PII if v in blob]
    assert not [v for v in PII if v in "".join(p.read_text() for p in v1.path.iterdir())]

    # -- a second round: a new task added, one changed, one removed
    insert(
        store,
        _support_trace(40, "refunds")
        + agent_trace(
            tid(41),
            "Cancel my subscription plan premium today",
            [("cancel_subscription", {"plan": "premium"}, {"ok": True})],
            "Cancelled.",
            root_attrs={"flywheel.slice": "subscriptions"},
            start_ms=4100,
        ),
    )
    new = _pipeline(store, policy)
    assert len(new) == 1  # the new refund run is a duplicate of the refund task
    changed_cid, removed_cid = others
    async with _client(store) as client:
        await _approve(client, new[0], "carol")
        h = client.reviewers["carol"]
        for cid, final in ((changed_cid, "approve"), (removed_cid, "reject")):
            v = (await client.get(f"/api/promote/candidates/{cid}")).json()["review"]["version"]
            r = await client.post(
                f"/api/promote/candidates/{cid}/reopen",
                json={"base_version": v, "reason": "second look"},
                headers=h,
            )
            assert r.status_code == 200, r.text
            v = r.json()["version"]
            r = await client.post(
                f"/api/promote/candidates/{cid}/claim", json={"base_version": v}, headers=h
            )
            v = r.json()["version"]
            if final == "approve":
                task = (await client.get(f"/api/promote/candidates/{cid}")).json()["task"]
                task["golden"] = True
                r = await client.put(
                    f"/api/promote/candidates/{cid}/task",
                    json={"base_version": v, "task": task},
                    headers=h,
                )
                v = r.json()["version"]
                r = await client.post(
                    f"/api/promote/candidates/{cid}/decision",
                    json={"base_version": v, "decision": "approve"},
                    headers=h,
                )
            else:
                r = await client.post(
                    f"/api/promote/candidates/{cid}/decision",
                    json={"base_version": v, "decision": "reject", "reason": "flaky tool"},
                    headers=h,
                )
            assert r.status_code == 200, r.text
    v2 = release_from_store(store, root, "support")
    assert v2.created and v2.manifest.parent == v1.version and v2.manifest.sequence == 2
    tasks_of = {
        c.candidate_id: json.loads(c.draft)["task_id"]
        for c in list_candidates(store, bodies=True)
        if c.draft
    }
    log = v2.manifest.changelog
    assert log.added == [tasks_of[new[0]]]
    assert log.changed == [tasks_of[changed_cid]]
    assert log.removed == [tasks_of[removed_cid]]
    out2 = export_bundle(root, "support", tmp_path / "export2")
    assert verify_bundle(out2).ok
    # v1 is untouched by the second release
    assert verify_bundle(v1.path).ok and verify_bundle(v1.path).version == v1.version


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _promote_cli(store: Store) -> click.Group:
    from flywheel.promote._cli import register

    @click.group()
    @click.pass_context
    def root(ctx: click.Context) -> None:
        ctx.obj = CliContext(Settings(), _store=store)

    register(root)
    register_bundle(root)
    return root


@pytest.mark.anyio
async def test_end_to_end_on_agent_harness_traces(store: Store, tmp_path: Path) -> None:
    """Traces produced by the agent harness (AgentDojo banking, the seeded reference agent)."""
    import re

    from flywheel.harness import StoreSpanExporter, parse_agent, plan_trials, run_trials

    tasks = [f"user_task_{i}" for i in range(8)]
    specs = plan_trials("agentdojo:banking", parse_agent("reference"), tasks=tasks, runs=2, seed=1)
    records = run_trials(specs, StoreSpanExporter(store))
    failed = {r.trace_id for r in records if r.utility is False or r.status != "completed"}
    assert failed, "the reference agent's hazards give some failed runs"

    # One `flywheel promote run --json`: sample -> dedupe -> redact -> draft.
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text(
        'name = "banking"\nevalset = "banking"\nheld_out_fraction = 0.4\n'
        "[successes]\nper_slice = 4\nseed = 5\n"
    )
    runner = CliRunner()
    res = runner.invoke(
        _promote_cli(store), ["promote", "run", "--policy", str(policy_file), "--json"]
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["failures"] == len(failed) and summary["drafted"]
    drafted = [
        c for c in list_candidates(store, evalset="banking", bodies=True) if c.stage == "drafted"
    ]
    by_trial = {r.trace_id: r for r in records}
    for c in drafted:
        task = c.task()
        assert task is not None and task["source_trace_id"] == c.trace_id
        assert task["initial_state"] == f"trial:{by_trial[c.trace_id].trial_id}#s0"
        assert task["slice"] == "agentdojo:banking"
    res = runner.invoke(_promote_cli(store), ["promote", "queue", "--evalset", "banking", "--json"])
    assert res.exit_code == 0 and len(json.loads(res.output)) == len(drafted)

    # Review through the API: approve the successes, reject one failure with a reason.
    async with _client(store) as client:
        for c in drafted:
            if c.source == "failure":
                h = client.reviewers["dana"]
                r = await client.post(
                    f"/api/promote/candidates/{c.candidate_id}/claim",
                    json={"base_version": 0},
                    headers=h,
                )
                r = await client.post(
                    f"/api/promote/candidates/{c.candidate_id}/decision",
                    json={
                        "base_version": 1,
                        "decision": "reject",
                        "reason": "agent bug, not a task gap",
                    },
                    headers=h,
                )
                assert r.status_code == 200, r.text
            else:
                await _approve(client, c.candidate_id, "erin")
    approved = sum(c.source != "failure" for c in drafted)

    root = tmp_path / "evalsets"
    res = runner.invoke(
        _promote_cli(store), ["evalset", "release", "banking", "--root", str(root), "--json"]
    )
    assert res.exit_code == 0, res.output
    rel = json.loads(res.output)
    assert rel["created"] and rel["tasks"] == approved
    out = tmp_path / "bundle"
    res = runner.invoke(
        _promote_cli(store), ["evalset", "export", rel["ref"], str(out), "--root", str(root)]
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(_promote_cli(store), ["evalset", "verify", str(out), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["ok"]
    # The released set is queryable in the store too.
    n = store.scalar(
        "SELECT count() AS n FROM evalset_tasks WHERE evalset_version = {v:String}",
        {"v": rel["ref"]},
    )
    assert n == approved
    # No IBAN or e-mail address of the raw harness traces reaches the bundle.
    raw = " ".join(
        r["t"]
        for r in store.query(
            "SELECT concat(arguments, ' ', result, ' ', input, ' ', output) AS t FROM agent_steps"
        )
    )
    values = set(re.findall(r"\b[A-Z]{2}\d{2}[A-Z0-9]{10,30}\b", raw))
    values |= set(re.findall(r"[\w.+-]+@[\w-]+\.[\w.]+", raw))
    blob = (out / "tasks.jsonl").read_text() + (out / "manifest.json").read_text()
    assert values and not [v for v in values if v in blob]


def test_release_manifest_carries_the_policy_without_deny_list_values(
    store: Store, tmp_path: Path
) -> None:
    """The sampling policy travels with the release; its deny list only as hashes."""
    insert(store, _support_trace(70, "refunds"))
    policy = SamplingPolicy(evalset="p", redaction={"deny_strings": {"NAME": ["Project Falcon"]}})
    ids = _pipeline(store, policy)
    from flywheel.promote import record_event

    record_event(store, ids[0], "claim", "alice", 0)
    record_event(store, ids[0], "approve", "alice", 1)
    rel = release_from_store(store, tmp_path, "p")
    assert rel.manifest.sampling_policies == [policy.policy_id]
    body = rel.manifest.policies[policy.policy_id]
    assert body["evalset"] == "p" and body["redaction"]["deny_strings"]["NAME"][0].startswith(
        "sha256:"
    )
    assert "Project Falcon" not in (rel.path / "manifest.json").read_text()
    assert verify_bundle(rel.path).ok


def test_cli_steps_one_by_one(store: Store) -> None:
    """`flywheel promote sample|dedupe|redact|draft|queue` --json; explicit golden promotion."""
    insert(store, _support_trace(80, "refunds") + _support_trace(81, "payouts"))
    cli, run = _promote_cli(store), CliRunner().invoke
    res = run(cli, ["promote", "sample", "--trace", tid(80), "--golden", "--json"])
    assert res.exit_code == 0, res.output
    sampled = json.loads(res.output)["sampled"]
    assert [(c["trace_id"], c["source"]) for c in sampled] == [(tid(80), "explicit")]
    assert "golden" in sampled[0]["reasons"]
    for step, key in (("dedupe", "deduplicated"), ("redact", "redacted"), ("draft", "drafted")):
        res = run(cli, ["promote", step, "--json"])
        assert res.exit_code == 0, res.output
        assert [c["trace_id"] for c in json.loads(res.output)[key]] == [tid(80)]
    task = list_candidates(store, bodies=True)[0].task()
    assert task is not None and task["golden"] is True
    res = run(cli, ["promote", "queue"])
    assert res.exit_code == 0 and "1 candidate(s)" in res.output
    res = run(cli, ["promote", "sample", "--policy", "/nonexistent.toml"])
    assert res.exit_code != 0
