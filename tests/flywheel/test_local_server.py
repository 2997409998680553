"""One embedded store, many clients: the CLI beside a running `flywheel serve` (real
processes, a real chDB store, real HTTP)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.test_readme import free_port

SERVER_FILE = "flywheel-server.json"


def flywheel(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flywheel", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str], str]]:
    """A `flywheel serve` over a fresh embedded store: (its directory, env, URL)."""
    cwd = tmp_path_factory.mktemp("served")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLYWHEEL_")}
    env.update({"FLYWHEEL_STORE": f"chdb://{cwd}/store", "FLYWHEEL_INGEST__PORT": str(port)})
    proc = subprocess.Popen([sys.executable, "-m", "flywheel", "serve"], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not (cwd / "store" / SERVER_FILE).exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.2)
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    try:
        yield cwd, env, url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_the_server_file_names_the_server_and_only_its_user_reads_it(served) -> None:
    cwd, _, url = served
    file = cwd / "store" / SERVER_FILE
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    doc = json.loads(file.read_text())
    assert doc["url"] == url and len(doc["token"]) >= 32 and doc["pid"] > 0


def test_reads_go_through_the_server(served) -> None:
    cwd, env, _ = served
    res = flywheel("traces", "list", "--json", cwd=cwd, env=env)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"traces": [], "next_cursor": None}
    res = flywheel("traces", "show", "0" * 32, cwd=cwd, env=env)
    assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    assert "not found" in res.stderr.lower() or "no trace" in res.stderr.lower()


def test_config_shows_the_running_servers_settings_and_auth(served) -> None:
    """`flywheel config` beside a server reports the server's true auth state, not unknown."""
    cwd, env, url = served
    res = flywheel("config", "--json", cwd=cwd, env=env)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["served_by"] == url
    assert doc["auth_state"]["mode"] != "unknown" and "unknown" not in json.dumps(
        doc["auth_state"]).lower(), doc["auth_state"]


def test_a_command_that_needs_the_store_says_what_to_do(served) -> None:
    cwd, env, url = served
    pid = json.loads((cwd / "store" / SERVER_FILE).read_text())["pid"]
    res = flywheel("promote", "run", cwd=cwd, env=env)
    assert res.returncode == 3
    line = res.stderr.strip()
    assert "\n" not in line and "Traceback" not in line, res.stderr
    assert f"pid {pid}" in line and url in line and "stop the server" in line


def test_a_wrong_token_is_not_the_operator(served) -> None:
    """The server file's token acts as the operator; any other bearer is an unknown key."""
    cwd, env, url = served
    token = json.loads((cwd / "store" / SERVER_FILE).read_text())["token"]
    ok = httpx.get(f"{url}/api/traces", headers={"Authorization": f"Bearer {token}"})
    assert ok.status_code == 200
    res = flywheel("keys", "create", "--project", "default", "--scope", "read", "--name", "r",
                   cwd=cwd, env=env)
    assert res.returncode == 0, res.stderr  # through the server: auth is on from now
    bad = httpx.get(f"{url}/api/traces", headers={"Authorization": f"Bearer {token[:-1]}x"})
    assert bad.status_code == 401
    assert httpx.get(f"{url}/api/traces", headers={"Authorization": f"Bearer {token}"}
                     ).status_code == 200


def test_keys_revoke_takes_effect_without_a_restart(served) -> None:
    cwd, env, url = served
    res = flywheel("keys", "create", "--project", "default", "--scope", "ingest", "--name", "agent",
                   cwd=cwd, env=env)
    assert res.returncode == 0, res.stderr
    key = res.stdout.strip()
    body = json.dumps({"resourceSpans": []})
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    assert httpx.post(f"{url}/v1/traces", content=body, headers=headers).status_code == 200
    res = flywheel("keys", "revoke", key, cwd=cwd, env=env)
    assert res.returncode == 0 and res.stdout.startswith("revoked "), res.stderr
    assert httpx.post(f"{url}/v1/traces", content=body, headers=headers).status_code == 401
    listed = flywheel("keys", "list", "--json", cwd=cwd, env=env)
    assert listed.returncode == 0, listed.stderr
    assert [k["revoked"] for k in json.loads(listed.stdout) if k["identity"] == "agent"] == [True]


def test_a_stale_server_file_is_ignored(tmp_path: Path) -> None:
    """A server killed with SIGKILL leaves its file behind: the CLI opens the store itself."""
    store = tmp_path / "store"
    store.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (store / SERVER_FILE).write_text(json.dumps(
        {"url": "http://127.0.0.1:9", "token": "x" * 43, "pid": dead.pid, "store": "s"}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLYWHEEL_")}
    env["FLYWHEEL_STORE"] = f"chdb://{store}"
    res = flywheel("traces", "list", "--json", cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["traces"] == []
