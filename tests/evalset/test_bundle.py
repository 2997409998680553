"""Content-addressed eval-set versions: release, immutability, changelog, verify, exposure."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from flywheel.evalset import Task, load_evalset
from flywheel.evalset._bundle import (
    EXPOSURE_FILE,
    export_bundle,
    exposure_status,
    read_manifest,
    record_exposure,
    release_tasks,
    resolve,
    task_sha256,
    verify_bundle,
    versions,
)
from flywheel.evalset._cli_bundle import register_bundle
from hypothesis import given
from hypothesis import strategies as st

from flywheel import NotFoundError, Settings, UserError
from flywheel._clikit import CliContext


def task(tid: str, split: str = "dev", **kw: Any) -> Task:
    return Task(
        task_id=tid,
        slice=kw.pop("slice", "all"),
        prompt=kw.pop("prompt", f"do {tid}"),
        expected_tools=["lookup"],
        criteria=[
            {
                "id": "p",
                "kind": "policy",
                "grader": {"name": "policy", "args": {"required_sequence": ["lookup"]}},
            }
        ],
        metadata={"split": split, **kw.pop("metadata", {})},
        **kw,
    )


def test_release_writes_a_content_addressed_readable_bundle(tmp_path: Path) -> None:
    r = release_tasks(tmp_path, "support", [task("b", "held-out"), task("a")])
    assert r.created and r.path == tmp_path / "support" / r.version
    m = read_manifest(r.path)
    assert m.version == m.content_version() == r.version and len(r.version) == 16
    assert [t.task_id for t in m.tasks] == ["a", "b"] and m.splits == {"dev": 1, "held-out": 1}
    assert m.changelog.added == ["a", "b"] and m.parent is None and m.sequence == 1
    assert m.tasks[0].sha256 == task_sha256(task("a"))
    es = load_evalset(r.path)
    assert set(es.tasks) == {"a", "b"} and es.version == r.version
    assert not os.access(r.path / "tasks.jsonl", os.W_OK) or os.geteuid() == 0
    assert verify_bundle(r.path).ok


def test_identical_content_is_a_noop_and_versions_are_never_rewritten(tmp_path: Path) -> None:
    r1 = release_tasks(tmp_path, "s", [task("a"), task("b")])
    stamp = (r1.path / "tasks.jsonl").stat().st_mtime_ns
    r2 = release_tasks(tmp_path, "s", [task("b"), task("a")])
    assert not r2.created and r2.version == r1.version
    assert (r1.path / "tasks.jsonl").stat().st_mtime_ns == stamp
    assert len(versions(tmp_path, "s")) == 1


def test_changelog_against_the_parent(tmp_path: Path) -> None:
    r1 = release_tasks(tmp_path, "s", [task("a"), task("b"), task("c")])
    r2 = release_tasks(
        tmp_path, "s", [task("a"), task("b", prompt="changed"), task("d", "held-out")]
    )
    log = r2.manifest.changelog
    assert (log.added, log.changed, log.removed) == (["d"], ["b"], ["c"])
    assert r2.manifest.parent == r1.version and r2.manifest.sequence == 2
    assert verify_bundle(r1.path).ok and verify_bundle(r2.path).ok
    assert resolve(tmp_path, "s")[1] == r2.version
    assert resolve(tmp_path, f"s@{r1.version[:6]}")[1] == r1.version
    with pytest.raises(NotFoundError):
        resolve(tmp_path, "s@ffffffff")
    with pytest.raises(NotFoundError):
        resolve(tmp_path, "other")


def test_release_refuses_bad_input(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no approved tasks"):
        release_tasks(tmp_path, "s", [])
    with pytest.raises(UserError, match="appear twice"):
        release_tasks(tmp_path, "s", [task("a"), task("a", prompt="x")])
    with pytest.raises(UserError, match="invalid eval-set name"):
        release_tasks(tmp_path, "../up", [task("a")])
    with pytest.raises(UserError, match="metadata.split"):
        release_tasks(tmp_path, "s", [task("a", "test")])


def _export(tmp_path: Path, tasks: list[Task]) -> Path:
    root = tmp_path / "root"
    release_tasks(root, "s", tasks)
    return export_bundle(root, "s", tmp_path / "out")


def test_verify_catches_tampering(tmp_path: Path) -> None:
    out = _export(tmp_path, [task("a"), task("b", "held-out")])
    assert verify_bundle(out).ok
    lines = (out / "tasks.jsonl").read_text().splitlines()
    (out / "tasks.jsonl").write_text("\n".join([lines[0].replace("do a", "do A"), lines[1]]) + "\n")
    assert any("SHA-256 differs" in p for p in verify_bundle(out).problems)
    (out / "tasks.jsonl").write_text(lines[0] + "\n")
    assert any("holds 1 task(s)" in p for p in verify_bundle(out).problems)
    (out / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    m = json.loads((out / "manifest.json").read_text())
    m["tasks"][0]["golden"] = True
    (out / "manifest.json").write_text(json.dumps(m))
    problems = verify_bundle(out).problems
    assert any("hashes to" in p for p in problems) and any("golden" in p for p in problems)


def test_verify_reports_a_missing_manifest(tmp_path: Path) -> None:
    assert "manifest.json not found" in verify_bundle(tmp_path).problems[0]


def test_export_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    release_tasks(tmp_path / "root", "s", [task("a")])
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("keep me")
    with pytest.raises(UserError, match="not empty"):
        export_bundle(tmp_path / "root", "s", tmp_path / "out")


def test_exposure_log_retires_the_held_out_split(tmp_path: Path) -> None:
    tasks = [task("a"), task("h1", "held-out"), task("h2", "held-out")]
    r1 = release_tasks(tmp_path, "s", tasks, max_held_out_uses=2)
    ref = f"s@{r1.version}"
    st1 = record_exposure(tmp_path, ref, "picked config B over A", by="ci", configs=["A", "B"])
    assert (st1.uses, st1.max_uses, st1.retire) == (1, 2, False)
    assert st1.entry and st1.entry["held_out"] == ["h1", "h2"]
    with pytest.raises(UserError, match="decision"):
        record_exposure(tmp_path, ref, "  ")
    st2 = record_exposure(tmp_path, ref, "picked prompt v3")
    assert st2.retire and exposure_status(tmp_path, ref).uses == 2
    # The next release retires the exhausted held-out tasks into dev; a fresh one takes over.
    r2 = release_tasks(tmp_path, "s", [*tasks, task("h3", "held-out")])
    assert r2.manifest.changelog.retired == ["h1", "h2"]
    assert sorted(r2.manifest.changelog.changed) == ["h1", "h2"]
    assert r2.manifest.splits == {"dev": 3, "held-out": 1}
    assert not exposure_status(tmp_path, f"s@{r2.version}").retire
    # Retirement is stable: the same approved tasks again are a no-op.
    assert not release_tasks(tmp_path, "s", [*tasks, task("h3", "held-out")]).created
    # Export carries the log; verify checks its chain and reports the uses.
    out = export_bundle(tmp_path, ref, tmp_path / "out")
    rep = verify_bundle(out)
    assert rep.ok and rep.held_out_uses == 2 and rep.retire
    log = (out / EXPOSURE_FILE).read_text().splitlines()
    (out / EXPOSURE_FILE).write_text("\n".join([log[1], log[0]]) + "\n")
    assert any("hash chain" in p for p in verify_bundle(out).problems)


def test_exposure_needs_a_held_out_split(tmp_path: Path) -> None:
    release_tasks(tmp_path, "s", [task("a")])
    with pytest.raises(UserError, match="no held-out task"):
        record_exposure(tmp_path, "s", "chose B")


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.integers(), max_size=6))
def test_task_hash_ignores_key_order(meta: dict[str, int]) -> None:
    a = task("t", metadata=meta)
    b = task("t", metadata=dict(reversed(list(meta.items()))))
    assert task_sha256(a) == task_sha256(b)


def _cli() -> click.Group:
    @click.group()
    @click.pass_context
    def root(ctx: click.Context) -> None:
        ctx.obj = CliContext(Settings())

    register_bundle(root)
    return root


def test_cli_export_verify_exposure_versions(tmp_path: Path) -> None:
    root = tmp_path / "root"
    r = release_tasks(root, "s", [task("a"), task("h", "held-out")], max_held_out_uses=1)
    run = CliRunner().invoke
    res = run(_cli(), ["evalset", "versions", "s", "--root", str(root), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)[0]["version"] == r.version
    res = run(
        _cli(),
        ["evalset", "exposure", f"s@{r.version}", "--decision", "B wins", "--root", str(root)],
    )
    assert res.exit_code == 0 and "1/1" in res.output and "retire" in res.output
    out = tmp_path / "out"
    res = run(_cli(), ["evalset", "export", f"s@{r.version}", str(out), "--root", str(root)])
    assert res.exit_code == 0, res.output
    res = run(_cli(), ["evalset", "verify", str(out)])
    assert (
        res.exit_code == 0
        and res.output.startswith("ok: s@")
        and "flagged for retirement" in res.output
    )
    (out / "tasks.jsonl").write_text((out / "tasks.jsonl").read_text().replace("do a", "do b"))
    res = run(_cli(), ["evalset", "verify", str(out)])
    assert res.exit_code != 0 and "SHA-256 differs" in res.output
