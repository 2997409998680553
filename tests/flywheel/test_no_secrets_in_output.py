"""No secret in any command's output: every CLI command runs with a planted password.

The store URL carries a planted password (``clickhouse://flywheel:PASSWORD@...``,
reaching the ClickHouse-HTTP stand-in, which accepts any password, so the
commands really run against a server store), the admin token is planted too,
and a planted API key is passed where a command takes one. Every command of
the CLI (walked from the click tree, so a new command without arguments here
fails) runs once, successfully or into its one-line error; its stdout, stderr
and anything written to the process's file descriptors must not hold a
planted secret. ``flywheel config`` and ``serve``'s refusal print the store
URL by design: masked.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from flywheel import mask
from flywheel.cli import cli

PASSWORD = "PlantedPw-7f3a91"
TOKEN = "planted-admin-token-0123456789abcdefXYZ"
KEY = "fwk_0123456789ab_PlantedKeySecretAbCdEfGhIjKlMn"


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            out += _commands(cmd, (*prefix, name))
        else:
            out.append((*prefix, name))
    return out


def _args(tmp: Path) -> dict[tuple[str, ...], list[str]]:
    """Arguments of each command: quick, real work where it is quick, else a fast failure."""
    state = tmp / "state.json"
    state.write_text('{"notes": [{"id": 1, "t": "x"}]}')
    return {
        ("ablate",): ["--suite", "agentdojo:nope"],
        ("analyse",): ["trial-none"],
        ("attribute",): ["trace-none"],
        ("audit",): [],
        ("calibrate-judge",): ["--judge", f"http://u:{PASSWORD}@127.0.0.1:9/v1", "--labels",
                               "faults"],
        ("config",): [],
        ("demo",): ["--runs", "0", "--exit"],
        ("evalset", "export"): ["nope@0", str(tmp / "out")],
        ("evalset", "exposure"): ["nope", "--root", str(tmp / "sets")],
        ("evalset", "release"): ["nope", "--root", str(tmp / "sets")],
        ("evalset", "verify"): [str(tmp / "missing")],
        ("evalset", "versions"): ["nope", "--root", str(tmp / "sets")],
        ("gate",): ["--evalset", str(tmp), "--baseline", str(state), "--candidate", str(state),
                    "--rules", str(state), "--out", str(tmp / "gate")],
        ("grade",): ["--evalset", str(tmp), "--trials", str(state), "--out", str(tmp / "g")],
        ("import-whowhen",): [str(tmp / "missing")],
        ("ingest",): [str(state)],
        ("keys", "create"): ["--project", "p", "--scope", "ingest", "--name", "agent"],
        ("keys", "list"): [],
        ("keys", "revoke"): ["0123456789ab"],
        ("migrate",): [],
        ("promote", "allow-leak"): ["nope", "--task", "t-none", "--path", "$.prompt",
                                    "--entity", "NAME", "--reason", "checked"],
        ("promote", "dedupe"): [],
        ("promote", "draft"): [],
        ("promote", "queue"): [],
        ("promote", "redact"): [],
        ("promote", "run"): [],
        ("promote", "sample"): [],
        ("provenance",): ["trace-none"],
        ("review",): ["--url", "http://127.0.0.1:9", "--api-key", KEY],
        ("run",): ["--suite", "agentdojo:banking", "--tasks", "user_task_0", "--agent",
                   "reference"],
        ("scorecard",): ["--trials", "run-none"],
        ("serve",): ["--host", "0.0.0.0"],
        ("side-effects", "adapters"): [],
        ("side-effects", "diff"): ["--before", str(state), "--after", str(state)],
        ("side-effects", "scope"): ["--before", str(state), "--after", str(state)],
        ("tools", "import"): [str(tmp / "missing.toml")],
        ("tools", "list"): [],
        ("tools", "set"): ["probe_tool", "--effect", "read"],
        ("tools", "show"): ["probe_tool"],
        ("tools", "unset"): ["probe_tool"],
        ("traces", "list"): [],
        ("traces", "show"): ["trace-none"],
    }


def test_mask_removes_url_passwords_keys_and_tokens(caplog: pytest.LogCaptureFixture) -> None:
    from flywheel._secrets import install_log_masking, register_secret

    register_secret(TOKEN)
    text = (f"clickhouse://flywheel:{PASSWORD}@h:8123/db https://u:p@ss@x/ {KEY} "
            f"token={TOKEN} clickhouse://h:8123/db")
    out = mask(text)
    assert PASSWORD not in out and "p@ss" not in out and TOKEN not in out
    assert "PlantedKeySecret" not in out and "fwk_0123456789ab_***" in out
    assert "clickhouse://flywheel:***@h:8123/db" in out and "clickhouse://h:8123/db" in out
    install_log_masking()  # what create_app and the CLI do
    with caplog.at_level(logging.INFO):
        logging.getLogger("flywheel.ingest").warning("store %s key %s", f"http://a:{PASSWORD}@h/", KEY)
        logging.getLogger("uvicorn.error").info("token %s", TOKEN)
    assert PASSWORD not in caplog.text and "PlantedKeySecret" not in caplog.text
    assert TOKEN not in caplog.text and "http://a:***@h/" in caplog.text


def test_no_planted_secret_in_any_command_output(
    standin_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    base = standin_url.rsplit("/", 1)[0].split("://", 1)[1].split("@", 1)[-1]
    store = f"clickhouse://flywheel:{PASSWORD}@{base}/secrets_probe"
    monkeypatch.setenv("FLYWHEEL_STORE", store)
    monkeypatch.setenv("FLYWHEEL_ADMIN_TOKEN", TOKEN)
    monkeypatch.setenv("FLYWHEEL_EVALSETS_DIR", str(tmp_path / "sets"))
    monkeypatch.chdir(tmp_path)
    args = _args(tmp_path)
    cli.list_commands(click.Context(cli))  # every package's commands (loaded lazily otherwise)
    commands = _commands(cli)
    assert set(commands) == set(args), (
        "every command needs arguments here (a new command must be checked for secrets): "
        f"missing {sorted(set(commands) - set(args))}, stale {sorted(set(args) - set(commands))}"
    )
    caplog.set_level(logging.DEBUG)
    runner = CliRunner()
    outputs: dict[str, str] = {}
    # serve on a store with no key and no admin token: the refusal names the (masked) URL
    env = {c: {} for c in commands}
    env[("serve",)] = {"FLYWHEEL_STORE": store.replace("secrets_probe", "secrets_probe_serve"),
                       "FLYWHEEL_ADMIN_TOKEN": None}
    for command in commands:
        result = runner.invoke(cli, [*command, *args[command]], catch_exceptions=True,
                               env=env[command])
        fd_out, fd_err = capfd.readouterr()
        text = result.output + (result.stderr or "") + fd_out + fd_err + caplog.text
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            text += repr(result.exception)
        caplog.clear()
        outputs[" ".join(command)] = text
    leaked = {c: t for c, t in outputs.items()
              if PASSWORD in t or TOKEN in t or "PlantedKeySecret" in t}
    assert not leaked, {c: t[:400] for c, t in leaked.items()}
    # the store URL is printed by these, masked (so the check above saw it)
    assert "flywheel:***@" in outputs["config"] and "admin_token" in outputs["config"]
    assert "flywheel:***@" in outputs["serve"] and "refusing to serve on 0.0.0.0" in outputs["serve"]
    assert "flywheel:***@" in outputs["migrate"]
    assert "spans -> clickhouse://flywheel:***@" in outputs["run"]  # a real run, masked
