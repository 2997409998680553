"""No code from input: graders and schema models come from registries, never from a spec's text.

The probe: a sentinel module (and a package) on ``sys.path`` whose import
writes a file. Grader specs name it every way an attacker might (module
paths, ``module:attr``, dunder names, file paths, ``file://`` URLs, relative
paths, padded names) as a grader name and as a schema grader's ``model``,
directly and through the review API (``PUT /api/promote/candidates/{id}/task``,
the route that imported modules before). Every one is a ``UserError`` / 400,
the file is never written and the module never reaches ``sys.modules``.

The positive control proves the probe can see an import: the same sentinel
installed the way an operator installs a plug-in (a distribution declaring
``flywheel.schemas`` / ``flywheel.graders`` entry points) is loaded by its
registered name, and then the file is written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from flywheel.evalset import (
    GraderSpec,
    Task,
    Trial,
    Verdict,
    build_grader,
    grader_names,
    register_schema,
    schema_names,
)
from flywheel.evalset._graders import _base
from pydantic import BaseModel

from flywheel import Settings, UserError, create_app
from tests._auth import LOCAL, key_headers
from tests.promote.test_review import drafted  # noqa: F401 - the fixture

SENTINEL = """
import os, pathlib
pathlib.Path(os.environ["FLYWHEEL_PROBE_FILE"]).write_text("imported " + __name__)
from pydantic import BaseModel

class Model(BaseModel):
    status: str

def factory(context, **kwargs):
    def grade(task, trial):
        from flywheel.evalset import Grade, Verdict
        return Grade(Verdict.PASS, 1.0, "plug-in")
    return grade
"""
MODULES = ("flywheel_probe_sentinel", "flywheel_probe_pkg")


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The sentinel on sys.path (plus an installed plug-in distribution naming it)."""
    root = tmp_path / "site"
    (root / "flywheel_probe_pkg").mkdir(parents=True)
    (root / "flywheel_probe_sentinel.py").write_text(SENTINEL)
    (root / "flywheel_probe_pkg" / "__init__.py").write_text(SENTINEL)
    dist = root / "flywheel_probe_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: flywheel-probe-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[flywheel.schemas]\nprobe.Model = flywheel_probe_sentinel:Model\n\n"
        "[flywheel.graders]\nprobe-grader = flywheel_probe_sentinel:factory\n"
    )
    flag = tmp_path / "imported.txt"
    monkeypatch.setenv("FLYWHEEL_PROBE_FILE", str(flag))
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(_base, "_SCHEMAS", dict(_base._SCHEMAS))  # noqa: SLF001
    monkeypatch.setattr(_base, "_REGISTRY", dict(_base._REGISTRY))  # noqa: SLF001
    for m in MODULES:
        monkeypatch.delitem(sys.modules, m, raising=False)
    file = root / "flywheel_probe_sentinel.py"
    refs = [
        "flywheel_probe_sentinel:Model", "flywheel_probe_sentinel", "flywheel_probe_sentinel.Model",
        "flywheel_probe_sentinel:factory", "flywheel_probe_pkg", "flywheel_probe_pkg:Model",
        "flywheel_probe_pkg.sub:Model", "flywheel_probe_sentinel:__class__",
        "__import__", "__builtins__", "__builtins__:__import__", "builtins:__import__",
        "__main__:Model", "os:system", "importlib:import_module", "__class__.__base__",
        f"{file}:Model", str(file), f"file://{file}", "../site/flywheel_probe_sentinel.py:Model",
        "./flywheel_probe_sentinel.py", "site/flywheel_probe_pkg/__init__.py",
        " probe.Model", "probe.Model ", "probe.model", "probe.Model\x00",
    ]
    yield {"flag": flag, "refs": refs}
    for m in MODULES:
        sys.modules.pop(m, None)


def _not_imported(flag: Path) -> None:
    assert not flag.exists(), flag.read_text()
    assert not any(m in sys.modules for m in MODULES)


def test_names_from_a_spec_import_nothing(probe: dict[str, Any]) -> None:
    for ref in probe["refs"]:
        with pytest.raises(UserError, match="not a registered schema|must be the name"):
            build_grader(GraderSpec(name="schema", args={"model": ref}))
        with pytest.raises(UserError, match="unknown grader"):
            build_grader(GraderSpec(name=ref, args={"model": ref}))
    for bad in ({"model": ["flywheel_probe_sentinel"]}, {"model": {"module": "os"}}, {"model": 1}):
        with pytest.raises(UserError):
            build_grader(GraderSpec(name="schema", args=bad))
    _not_imported(probe["flag"])


@pytest.mark.anyio
async def test_the_review_api_imports_nothing(drafted: Any, probe: dict[str, Any]) -> None:  # noqa: F811
    store, (cid, _) = drafted
    alice = key_headers(store, "read", "review", name="alice")
    transport = httpx.ASGITransport(app=create_app(Settings(), store))
    async with httpx.AsyncClient(transport=transport, base_url=LOCAL, headers=alice) as c:
        url = f"/api/promote/candidates/{cid}"
        task = (await c.get(url)).json()["task"]
        assert (await c.post(f"{url}/claim", json={"base_version": 0})).status_code == 200
        for ref in probe["refs"]:
            for grader in ({"name": "schema", "args": {"model": ref}}, {"name": ref, "args": {}}):
                crit = {"id": "probe", "kind": "custom", "role": "mandatory", "grader": grader}
                body = {**task, "criteria": [*task["criteria"], crit]}
                r = await c.put(f"{url}/task", json={"base_version": 1, "task": body})
                assert r.status_code == 400, (ref, r.text)
                msg = r.json()["error"]["message"]
                assert "not a registered schema" in msg or "unknown grader" in msg, msg
        assert (await c.get(url)).json()["review"]["version"] == 1  # nothing was written
    _not_imported(probe["flag"])


def _trial(output: Any) -> Trial:
    return Trial.model_validate({"trial_id": "t", "task_id": "x", "config": {"id": "c"},
                                 "environment_id": "e", "observations": {"output": output}})


def test_registered_and_installed_names_do_load(probe: dict[str, Any]) -> None:
    """The positive control: a name the operator installed is loaded, and the probe sees it."""

    class Local(BaseModel):
        status: str

    register_schema("local.Reply", Local)
    assert "local.Reply" in schema_names() and "probe.Model" in schema_names()
    assert "probe-grader" in grader_names()
    g = build_grader(GraderSpec(name="schema", args={"model": "local.Reply"}))
    assert not probe["flag"].exists()
    g = build_grader(GraderSpec(name="schema", args={"model": "probe.Model"}))
    assert probe["flag"].read_text() == "imported flywheel_probe_sentinel"
    task = Task.model_validate({"task_id": "x", "version": "1", "prompt": "p", "criteria": [
        {"id": "c", "kind": "schema", "role": "mandatory",
         "grader": {"name": "schema", "args": {"model": "probe.Model"}}}]})
    assert g(task, _trial({"status": "ok"})).verdict is Verdict.PASS
    assert g(task, _trial({"nope": 1})).verdict is Verdict.FAIL
    plug = build_grader(GraderSpec(name="probe-grader"))
    assert plug(task, _trial({})).reason == "plug-in"
    with pytest.raises(TypeError):
        register_schema("x", dict)  # type: ignore[arg-type]
