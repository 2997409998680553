"""Side by side: the same OTLP/protobuf GenAI workload against trace-flywheel
and Arize Phoenix, both on loopback, in one run.

Workload: bench/_otlp_load.py (--workload agents: whole agent traces from
bench/_otlp_agents.py; genai: flat GenAI traces; about 1 KB of attributes per span,
--spans-per-request per request, --clients concurrent connections from a
separate client process, --seconds each). Each server gets the same load in
turn on its default local store (flywheel: embedded chDB; Phoenix: its
default SQLite). Reported per server: acknowledged spans/s, p50/p99
acknowledgement latency, the status mix (Phoenix answers 503 when its queue
is full), and the spans found in its store after the run. Machine: 2 cores,
24 GiB, shared by client and server.

Phoenix is not a dependency of this project: install it in its own
environment (``python3 -m venv /work/phoenix-venv &&
/work/phoenix-venv/bin/pip install arize-phoenix``) and pass
``--phoenix /work/phoenix-venv/bin/phoenix``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _otlp_load import _free_port, run_load  # noqa: E402


def _wait_ready(url: str, proc: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode} before it was ready")
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"server at {url} not ready after {timeout}s")


def bench_flywheel(args: argparse.Namespace, tmp: Path) -> dict:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "flywheel", "--store", f"chdb://{tmp}/fw-store", "serve",
         "--port", str(port), "--wal-dir", str(tmp / "fw-wal")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_ready(f"http://127.0.0.1:{port}/readyz", proc)
        load = run_load(f"http://127.0.0.1:{port}/v1/traces", args.clients, args.seconds,
                        args.spans_per_request, first_seed=10, workload=args.workload)
        deadline = time.time() + 120
        while time.time() < deadline:
            if "flywheel_ingest_wal_lag_bytes 0.0\n" in httpx.get(f"http://127.0.0.1:{port}/metrics").text:
                break
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    code = ("import sys; from flywheel import open_store; "
            "print(open_store(sys.argv[1]).scalar('SELECT count() FROM otel_traces'))")
    stored = int(subprocess.run([sys.executable, "-c", code, f"chdb://{tmp}/fw-store"],
                                capture_output=True, text=True, check=True).stdout)
    return {**load, "stored_spans": stored}


def bench_phoenix(args: argparse.Namespace, tmp: Path) -> dict:
    port, grpc = _free_port(), _free_port()
    work = tmp / "phoenix"
    work.mkdir()
    env = {**os.environ, "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc),
           "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_TELEMETRY_ENABLED": "false", "DO_NOT_TRACK": "1"}
    proc = subprocess.Popen([args.phoenix, "serve"], env=env, stdout=subprocess.DEVNULL,
                            stderr=open(tmp / "phoenix.log", "wb"))
    try:
        _wait_ready(f"http://127.0.0.1:{port}/healthz", proc)
        load = run_load(f"http://127.0.0.1:{port}/v1/traces", args.clients, args.seconds,
                        args.spans_per_request, first_seed=5_000, workload=args.workload)
        stored, last, stable_since = 0, -1, time.time()
        deadline = time.time() + args.drain_seconds
        while time.time() < deadline:  # give its queue the time to drain
            stored = _phoenix_count(work)
            if stored != last:
                last, stable_since = stored, time.time()
            elif time.time() - stable_since > 10:
                break
            time.sleep(1)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    return {**load, "stored_spans": _phoenix_count(work)}


def _phoenix_count(work: Path) -> int:
    db = next(iter(work.glob("*.db")), None)
    if db is None:
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            return int(con.execute("SELECT count(*) FROM spans").fetchone()[0])
    except sqlite3.Error:
        return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phoenix", default="/work/phoenix-venv/bin/phoenix",
                    help="the `phoenix` executable of an environment with arize-phoenix")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--spans-per-request", type=int, default=500)
    ap.add_argument("--drain-seconds", type=float, default=120)
    ap.add_argument("--workload", choices=["agents", "genai"], default="agents",
                    help="as bench/ingest_throughput.py --workload")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not Path(args.phoenix).exists():
        raise SystemExit(f"error: no Phoenix at {args.phoenix}; see this script's docstring")
    tmp = Path(tempfile.mkdtemp(prefix="flywheel-vs-phoenix-"))
    fw = bench_flywheel(args, tmp)
    ph = bench_phoenix(args, tmp)
    out = {
        "workload": f"{args.workload}: {args.clients} clients x {args.spans_per_request} "
                    "spans/request, "
                    f"{args.seconds}s per server, OTLP/protobuf over loopback",
        "machine": f"{os.cpu_count()} cores, client and server on one machine",
        "flywheel": fw, "phoenix": ph,
        "ratio_acked_spans_per_s": round(fw["spans_per_s"] / max(ph["spans_per_s"], 1), 1),
        "ratio_stored_spans": round(fw["stored_spans"] / max(ph["stored_spans"], 1), 1),
    }
    print(json.dumps(out, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
