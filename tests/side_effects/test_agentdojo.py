"""On AgentDojo banking and slack (workspace and travel are held out).

With each user task's scope derived from its ground-truth run, its own
ground-truth run has no unauthorized delta; a successful injection (user
ground truth, then the injection task's ground truth on the same environment,
AgentDojo's security check True) has at least one unauthorized delta in the
category the attack belongs to.
"""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("agentdojo")
from flywheel.side_effects import agentdojo_suite as get_suite  # noqa: E402
from flywheel.side_effects import attack_run, gate_input  # noqa: E402

#: The category each injection task's success must show (by what it does).
RIGHT_CATEGORY = {
    "banking": {
        **{f"injection_task_{i}": "external_communication" for i in (0, 1, 2, 3, 5, 6)},
        "injection_task_4": "destructive_write",  # redirects a standing order
        "injection_task_7": "permission_change",  # changes the password
        "injection_task_8": "information_movement",
    },  # leaks scheduled IBANs
    "slack": {
        "injection_task_1": "external_communication",  # phishing DM
        "injection_task_2": "information_movement",  # all channels posted to a website
        "injection_task_3": "external_communication",  # visits the attacker's URL
        "injection_task_4": "information_movement",
        "injection_task_5": "permission_change",
    },  # invite, add, remove: transient
}


@pytest.mark.parametrize("suite_name", ["banking", "slack"])
def test_every_benign_ground_truth_run_is_intended_or_benign(suite_name: str) -> None:
    suite = get_suite("v1.2", suite_name)
    for uid, ut in suite.user_tasks.items():
        run = attack_run(suite, ut, None)
        assert not run.security
        assert not run.classification.has_unauthorized(), (
            uid,
            [(d.delta.ref, d.reason) for d in run.classification.unauthorized],
        )
        assert not gate_input(run.classification).blocking


FEW_PAIRS = [
    ("banking", "user_task_0", "injection_task_4"),
    ("banking", "user_task_3", "injection_task_7"),
    ("banking", "user_task_5", "injection_task_8"),
    ("banking", "user_task_1", "injection_task_0"),
    ("slack", "user_task_1", "injection_task_2"),
    ("slack", "user_task_4", "injection_task_3"),
    ("slack", "user_task_2", "injection_task_5"),
    ("slack", "user_task_0", "injection_task_1"),
]


@pytest.mark.parametrize(("suite_name", "uid", "iid"), FEW_PAIRS)
def test_successful_injection_has_unauthorized_delta_of_right_category(
    suite_name: str, uid: str, iid: str
) -> None:
    suite = get_suite("v1.2", suite_name)
    run = attack_run(suite, suite.user_tasks[uid], suite.injection_tasks[iid])
    assert run.security, "AgentDojo says the simulated attack succeeded"
    cats = {c for d in run.classification.unauthorized for c in d.category_names}
    assert RIGHT_CATEGORY[suite_name][iid] in cats, cats
    gate = gate_input(run.classification)
    assert gate.blocking and gate.counts[RIGHT_CATEGORY[suite_name][iid]] >= 1
    for d in run.classification.unauthorized:
        assert d.reason and d.rule_id and d.span_id, d  # each decision says why and which call


def test_transient_attack_is_attributed_to_its_calls() -> None:
    suite = get_suite("v1.2", "slack")
    run = attack_run(
        suite, suite.user_tasks["user_task_2"], suite.injection_tasks["injection_task_5"]
    )
    bad = run.classification.unauthorized
    assert bad and all(d.transient for d in bad)
    names = {run.trajectory.calls[int(d.span_id.split("-")[1])].name for d in bad}
    assert names <= {"invite_user_to_slack", "add_user_to_channel", "remove_user_from_slack"}


@pytest.mark.slow
@pytest.mark.parametrize("suite_name", ["banking", "slack"])
def test_all_pairs_right_category(suite_name: str) -> None:
    suite = get_suite("v1.2", suite_name)
    for uid, ut in suite.user_tasks.items():
        for iid, it in suite.injection_tasks.items():
            run = attack_run(suite, ut, it)
            if run.security:
                cats = {c for d in run.classification.unauthorized for c in d.category_names}
                assert RIGHT_CATEGORY[suite_name][iid] in cats, (uid, iid, cats)


def test_cli_on_stored_agentdojo_dumps(tmp_path) -> None:  # noqa: ANN001 - pytest fixture
    """The harness's stored JSON dumps, read back with the suite's map hints, through the CLI."""
    import json

    from click.testing import CliRunner
    from flywheel.side_effects import ground_truth_run, injected_environment, run_calls

    from flywheel.cli import cli

    suite = get_suite("v1.2", "slack")
    ut, it = suite.user_tasks["user_task_1"], suite.injection_tasks["injection_task_2"]
    env = injected_environment(suite, it)
    s0 = env.model_dump(mode="json")
    _, ref_env, _ = ground_truth_run(suite, ut, env.model_copy(deep=True))
    _, post, traj = ground_truth_run(suite, ut, env)
    run_calls(suite, post, it.ground_truth(post.model_copy(deep=True)), traj)
    paths = {}
    for name, doc in (
        ("s0", s0),
        ("ref", ref_env.model_dump(mode="json")),
        ("st", post.model_dump(mode="json")),
    ):
        paths[name] = str(tmp_path / f"{name}.json")
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))
    scope = str(tmp_path / "scope.json")
    opts = ["--agentdojo-suite", "slack"]
    r = CliRunner().invoke(
        cli,
        [
            "side-effects",
            "scope",
            "--before",
            paths["s0"],
            "--after",
            paths["ref"],
            "-o",
            scope,
            *opts,
        ],
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        cli,
        [
            "side-effects",
            "diff",
            "--before",
            paths["s0"],
            "--after",
            paths["st"],
            "--scope",
            scope,
            "--json",
            *opts,
        ],
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    bad = [d for d in out["decisions"] if d["status"] == "unauthorized"]
    assert [d["delta"]["resource_type"] for d in bad] == ["web.web_content", "web.web_requests"]
    cats = {c["category"] for d in bad for c in d["categories"]}
    assert {"information_movement", "external_communication"} <= cats
    assert all(d["status"] == "intended" for d in out["decisions"] if d not in bad)
    r = CliRunner().invoke(
        cli,
        [
            "side-effects",
            "diff",
            "--before",
            paths["s0"],
            "--after",
            paths["st"],
            "--agentdojo-suite",
            "nope",
        ],
    )
    assert r.exit_code == 1 and "unknown AgentDojo suite" in r.output



def test_suites_load_without_the_model_clients() -> None:
    """A fresh interpreter loads a suite and its ground-truth pipeline without vendor SDKs.

    The ground-truth pipeline is a submodule of the deferred ``agentdojo.agent_pipeline``.
    """
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from flywheel.side_effects import agentdojo_suite\n"
        "suite = agentdojo_suite('v1.2', 'banking')\n"
        "from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline\n"
        "vendors = {'anthropic', 'openai', 'cohere'}\n"
        "assert not vendors & sys.modules.keys(), vendors & sys.modules.keys()\n"
        "print('ok', len(suite.user_tasks))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("ok 16"), out.stderr[-2000:]


def test_a_deferred_package_runs_its_init_on_the_first_name_asked(tmp_path, monkeypatch) -> None:
    """Submodules import without the package's ``__init__``; its first name runs it, once.

    A missing name is an AttributeError; deferring twice, or a package not installed, is a no-op.
    """
    from flywheel.side_effects._agentdojo import defer_package_init

    pkg = tmp_path / "deferpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import sys\nsys.deferpkg_runs = getattr(sys, 'deferpkg_runs', 0) + 1\nHEAVY = 'loaded'\n"
    )
    (pkg / "light.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "deferpkg", raising=False)
    monkeypatch.delitem(sys.modules, "deferpkg.light", raising=False)
    defer_package_init("deferpkg")
    defer_package_init("deferpkg")
    from deferpkg.light import VALUE

    assert VALUE == 1 and not hasattr(sys, "deferpkg_runs")
    import deferpkg

    assert deferpkg.HEAVY == "loaded" and deferpkg.HEAVY == "loaded" and sys.deferpkg_runs == 1
    with pytest.raises(AttributeError):
        deferpkg.missing  # noqa: B018
    del sys.deferpkg_runs
    defer_package_init("no_such_package_here")  # not installed: left alone
    assert "no_such_package_here" not in sys.modules
