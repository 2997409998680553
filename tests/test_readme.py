"""The README's quick start, run as written: a real server in the background, the example
agent, and the CLI beside the server on a fresh store (no stand-in anywhere)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sh_blocks(section: str) -> list[str]:
    """The ```sh blocks of the README section whose heading starts with ``section``."""
    text = (ROOT / "README.md").read_text()
    parts = re.split(r"^## ", text, flags=re.M)
    body = next(p for p in parts if p.startswith(section))
    return re.findall(r"^```sh\n(.*?)^```", body, flags=re.M | re.S)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_block(block: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``block`` in bash (errors stop it), in ``cwd``, with this environment's ``flywheel``.

    The platform listens on a free port (``FLYWHEEL_INGEST__PORT``; the example agent
    follows ``OTEL_EXPORTER_OTLP_ENDPOINT``) so parallel tests never meet; the
    block's own process group is ended afterwards whatever happened.
    """
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLYWHEEL_", "OTEL_"))}
    env.update({
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        "FLYWHEEL_INGEST__PORT": str(port),
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
        "COLUMNS": "120",
    })
    proc = subprocess.Popen(["bash", "-c", "set -euo pipefail\n" + block], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        _end_group(proc.pid)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _end_group(pgid: int, grace_s: float = 30.0) -> None:
    """Let the block's processes finish (a stopped server removes its file), then kill the rest."""
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_quick_start_runs_as_written(tmp_path: Path) -> None:
    (block,) = sh_blocks("Quick start")
    for needed in ("flywheel serve &", "examples/otel_quickstart.py", "traces list",
                   "traces show", "provenance", "keys revoke"):
        assert needed in block, needed
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # the default store lands here
    res = run_block(block, tmp_path)
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    assert "Traceback" not in res.stderr, res.stderr[-3000:]
    out = res.stdout
    assert "quickstart-agent" in out and "invoke_agent banker" in out  # traces list
    assert re.search(r"^\s+3\s+tool\s+send_money", out, flags=re.M), out  # traces show
    assert "argument provenance of" in out and "recipient" in out  # provenance
    assert re.search(r"^revoked \S+", out, flags=re.M), out
    assert not (tmp_path / ".flywheel" / "store" / "flywheel-server.json").exists()


def test_examples_run_as_written(tmp_path: Path) -> None:
    (block,) = sh_blocks("Examples")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    res = run_block(block, tmp_path)
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    out = res.stdout + res.stderr
    assert "Traceback" not in out, out[-3000:]
    assert "18 spans from 4 request(s)" in out
    assert "4 draft(s) wait for review in eval set 'library-desk'" in out
    assert "1 intended, 0 benign, 2 unauthorized" in out
    assert "verdict: BLOCK" in out and "gate exit status 2" in out
    for reason in ("[insufficient_evidence]", "[golden_regression]", "[slice_floor]"):
        assert reason in out, reason
    assert (tmp_path / "report" / "report.json").exists()


def test_readme_and_docs_link_only_inside_the_repository() -> None:
    """What a user of the repository has: every link of README.md and docs/*.md resolves
    to a file or folder of the repository (no workspace path, no web page)."""
    bad = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text()
        if "/work/" in text:
            bad.append((page.name, "/work/"))
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            path = target.split("#")[0]
            if not path:
                continue  # an anchor on the same page
            resolved = (page.parent / path).resolve()
            if "://" in target or not resolved.is_relative_to(ROOT) or not resolved.exists():
                bad.append((page.name, target))
    assert not bad, bad
