"""Side by side: one OTLP/protobuf GenAI load against trace-flywheel and Arize Phoenix.

Both on loopback, in one run.
Workload: bench/_otlp_load.py (--workload agents: whole agent traces of 20 spans
from bench/_otlp_agents.py; genai: flat GenAI traces; about 1.1 KB of attributes
per span), --spans-per-request per request, --clients concurrent connections
from a separate client process, --seconds per server. Each server gets the same
load in turn on its default local store (flywheel: ``flywheel serve`` on the
embedded chDB store with its log; Phoenix: ``phoenix serve`` on its default
SQLite database in a fresh working directory, telemetry and external resources
off, so it starts without a network).

Reported per server:

- acknowledged spans/s (spans in requests answered 200, over the sending time),
  p50/p99 acknowledgement latency, the status mix (Phoenix answers 503 when its
  span queue is full);
- durable spans/s: the spans found in the store after the load divided by the
  time from the first request until the store stopped growing (flywheel: until
  its log lag is 0; Phoenix, which acknowledges into an in-memory queue: rows of
  its ``spans`` table, polled until all acknowledged spans are there or the rows
  are unchanged and the server idle for --settle-seconds, at most --drain-seconds
  after the load);
- stored vs acknowledged and duplicate span ids;
- memory: RSS of the server's process tree idle, and the peak of its sum
  (sampled every 0.2 s through the load and the drain); server CPU per stored span;
- kill -9 (unless --no-kill9): a fresh server and store, --kill-seconds of the
  same load, SIGKILL of the server's process tree as soon as the load ends;
  flywheel is restarted on its store (it replays its log) and stopped; then the
  spans in each store are counted against the acknowledged ones.

Ratios: flywheel / Phoenix of acknowledged and of durable spans/s. Exits 1 when
the acknowledged ratio is under 30 (issue 24), when flywheel does not store
every acknowledged span exactly once (after the load or after kill -9), or when
Phoenix acknowledged or stored nothing (no comparison). Machine: printed (cores,
memory, load average before and after); client and servers share it.

Phoenix is not a dependency of this project. Install it in its own environment
and pass its ``phoenix`` executable with --phoenix or $BENCH_PHOENIX:

    python3 -m venv ~/phoenix-venv && ~/phoenix-venv/bin/pip install arize-phoenix
    python bench/vs_phoenix.py --phoenix ~/phoenix-venv/bin/phoenix
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _otlp_load import _free_port, run_load  # noqa: E402
from ingest_throughput import RssSampler, _cpu_s, _status_kib, _tree  # noqa: E402

#: Issue 24: flywheel acknowledges at least this many times Phoenix's spans/s.
TARGET_ACKED_RATIO = 30
INSTALL_HINT = ("python3 -m venv ~/phoenix-venv && ~/phoenix-venv/bin/pip install "
                "arize-phoenix, then --phoenix ~/phoenix-venv/bin/phoenix "
                "(or BENCH_PHOENIX=...)")
_FW_COUNT = ("import sys; from flywheel import open_store; s = open_store(sys.argv[1]); "
             "print(s.scalar('SELECT count() FROM otel_traces'), "
             "s.scalar('SELECT count() - uniqExact(SpanId) FROM otel_traces'))")


class Server:
    """One system under test: how to start it on a fresh store, wait for it, count its spans."""

    name = ""

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.port = tmp, _free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def traces_url(self) -> str:
        """The OTLP/HTTP traces endpoint."""
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def start(self) -> None:
        """Start the server and wait until it answers its health endpoint."""
        raise NotImplementedError

    def drain(self, acked: int, timeout: float) -> tuple[float, bool]:
        """Wait until everything acknowledged is in the store.

        Returns the time it was (perf_counter) and whether ``timeout`` ran out first.
        """
        raise NotImplementedError

    def stop(self) -> None:
        """SIGTERM and wait (SIGKILL after 60 s)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.kill9()

    def kill9(self) -> None:
        """SIGKILL the server and its child processes at once."""
        for pid in _tree(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def after_kill9(self) -> None:
        """What the system does after a crash before its store is counted (nothing by default)."""

    def count(self) -> tuple[int, int]:
        """(spans stored, duplicate span ids) with the server stopped."""
        raise NotImplementedError

    def _wait_ready(self, path: str, timeout: float = 300) -> None:
        url = f"http://127.0.0.1:{self.port}{path}"
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"error: {self.name} exited with {self.proc.returncode} "
                                 f"before it was ready (log: {self.log})")
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise SystemExit(f"error: {self.name} at {url} not ready after {timeout}s "
                         f"(log: {self.log})")

    @property
    def log(self) -> Path:
        """The server's stderr."""
        return self.tmp / f"{self.name}.log"


class Flywheel(Server):
    """``flywheel serve`` on an embedded chDB store with its log (this interpreter)."""

    name = "flywheel"

    def start(self) -> None:
        """Start ``flywheel serve`` (without the caller's FLYWHEEL_ settings) and wait for it."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("FLYWHEEL_")}
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "flywheel", "--store", f"chdb://{self.tmp}/store", "serve",
                 "--port", str(self.port), "--wal-dir", str(self.tmp / "wal")],
                stdout=subprocess.DEVNULL, stderr=log, env=env)
        self._wait_ready("/readyz")

    def drain(self, acked: int, timeout: float) -> tuple[float, bool]:
        """Wait until the log's lag is 0 (every acknowledged span inserted)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            metrics = httpx.get(f"http://127.0.0.1:{self.port}/metrics", timeout=10).text
            if "flywheel_ingest_wal_lag_bytes 0.0\n" in metrics:
                return time.perf_counter(), False
            time.sleep(0.2)
        return time.perf_counter(), True

    def after_kill9(self) -> None:
        """Restart on the same store and log (replaying it), wait for the lag to be 0, stop."""
        self.start()  # replays the log
        self.drain(0, 300)
        self.stop()

    def count(self) -> tuple[int, int]:
        """Rows of ``otel_traces`` and duplicate span ids, from a new process."""
        out = subprocess.run([sys.executable, "-c", _FW_COUNT, f"chdb://{self.tmp}/store"],
                             capture_output=True, text=True, check=True).stdout.split()
        return int(out[0]), int(out[1])


class Phoenix(Server):
    """``phoenix serve`` on its default SQLite database in a fresh working directory, offline."""

    name = "phoenix"

    def __init__(self, tmp: Path, exe: str, settle: float) -> None:
        super().__init__(tmp)
        self.exe, self.settle = exe, settle
        self.work = tmp / "phoenix-home"

    def start(self) -> None:
        """Start ``phoenix serve`` with no telemetry or external resources and wait for it."""
        self.work.mkdir(exist_ok=True)
        env = {**os.environ, "PHOENIX_PORT": str(self.port), "PHOENIX_GRPC_PORT": str(_free_port()),
               "PHOENIX_HOST": "127.0.0.1", "PHOENIX_WORKING_DIR": str(self.work),
               "PHOENIX_TELEMETRY_ENABLED": "false", "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
               "DO_NOT_TRACK": "1"}
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([self.exe, "serve"], env=env, stdout=log, stderr=log)
        self._wait_ready("/healthz")

    def drain(self, acked: int, timeout: float) -> tuple[float, bool]:
        """Poll the ``spans`` rows until its queue is drained; the time of the last increase.

        Drained: every acknowledged span there (rows unchanged for 1 s), or the rows
        unchanged and the server idle (under 10% of a core) for ``settle`` s (its
        inserter pauses for seconds while it decodes a backlog), or ``timeout`` s.
        """
        last, changed = self._rows() or 0, time.perf_counter()
        busy, cpu = changed, _cpu_s(_tree(self.proc.pid))
        deadline = changed + timeout
        while time.perf_counter() < deadline:
            time.sleep(0.5)
            rows, now = self._rows(), time.perf_counter()
            cpu, was = _cpu_s(_tree(self.proc.pid)), cpu
            if cpu - was > 0.05:  # more than 10% of a core over the last 0.5 s
                busy = now
            if rows is None:  # the database is busy: ask again
                continue
            if rows != last:
                last, changed, busy = rows, now, now
            elif now - changed >= 1 and rows >= acked or now - busy >= self.settle:
                return changed, False
        return changed, True

    def _rows(self) -> int | None:
        """Rows of ``spans`` now, or None when the database cannot be read at this moment."""
        db = self.work / "phoenix.db"
        if not db.exists():
            return 0
        try:  # read-only beside the running server (its database is in WAL mode)
            with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as con:
                return int(con.execute("SELECT count(*) FROM spans").fetchone()[0])
        except sqlite3.OperationalError:
            return None

    def count(self) -> tuple[int, int]:
        """Rows of ``spans`` and duplicate span ids."""
        db = self.work / "phoenix.db"
        if not db.exists():
            return 0, 0
        # read-write once the server is gone: opening recovers a crashed server's WAL file
        with closing(sqlite3.connect(db, timeout=30)) as con:
            n, distinct = con.execute(
                "SELECT count(*), count(DISTINCT span_id) FROM spans").fetchone()
        return int(n), int(n) - int(distinct)


def measure(server: Server, args: argparse.Namespace, seed: int) -> dict:
    """Start, idle memory, load, drain, peak memory, stop, count: the rate figures."""
    server.start()
    try:
        idle_kib = sum(_status_kib(p, "VmRSS") for p in _tree(server.proc.pid))
        cpu0 = _cpu_s(_tree(server.proc.pid))
        sampler = RssSampler(server.proc.pid)
        sampler.start()
        load = run_load(server.traces_url, args.clients, args.seconds, args.spans_per_request,
                        first_seed=seed, workload=args.workload)
        load_end = time.perf_counter()
        drained_at, timed_out = server.drain(load["acked_spans"], args.drain_seconds)
        sampler.stop()
        cpu = _cpu_s(_tree(server.proc.pid)) - cpu0
    finally:
        server.stop()
    stored, dupes = server.count()
    window = load["elapsed_s"] + max(0.0, drained_at - load_end)
    return {
        **load,
        "stored_spans": stored, "duplicate_spans": dupes,
        "stored_equals_acked": stored == load["acked_spans"] and dupes == 0,
        "drain_s_after_load": round(max(0.0, drained_at - load_end), 1),
        "drain_timed_out": timed_out,
        "durable_spans_per_s": round(stored / window) if window > 0 else 0,
        "rss_idle_mib": round(idle_kib / 1024, 1),
        "peak_rss_sum_mib": round(sampler.peak_kib / 1024, 1),
        "server_cpu_us_per_stored_span": round(cpu * 1e6 / max(stored, 1), 1),
    }


def crash(server: Server, args: argparse.Namespace, seed: int) -> dict:
    """Load for --kill-seconds, kill -9 the server's tree at once, recover, count."""
    server.start()
    try:
        load = run_load(server.traces_url, args.clients, args.kill_seconds,
                        args.spans_per_request, first_seed=seed, workload=args.workload)
        server.kill9()
        server.after_kill9()
    finally:
        server.stop()
    stored, dupes = server.count()
    acked = load["acked_spans"]
    return {"acked_spans": acked, "statuses": load["statuses"], "stored_spans": stored,
            "duplicate_spans": dupes, "acked_not_stored_at_least": max(0, acked - stored),
            "stored_equals_acked": stored == acked and dupes == 0}


def machine() -> str:
    """Cores, CPU model and memory of this machine."""
    model, mem_gib = "?", 0.0
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_gib = int(Path("/proc/meminfo").read_text().split()[1]) / 2**20
    except (OSError, IndexError, ValueError):
        pass
    return (f"{os.cpu_count()} cores ({model}), {mem_gib:.0f} GiB; client and servers share it, "
            "loopback")


def missed_targets(out: dict) -> list[str]:
    """Why this run fails (empty when every target is met)."""
    fw, ph = out["flywheel"], out["phoenix"]
    missed = []
    if ph["acked_spans"] == 0 or ph["stored_spans"] == 0:
        missed.append("Phoenix acknowledged or stored nothing: no comparison (see its log)")
    elif out["ratio_acked_spans_per_s"] < TARGET_ACKED_RATIO:
        missed.append(f"acknowledged ratio {out['ratio_acked_spans_per_s']} < {TARGET_ACKED_RATIO}")
    if not fw["stored_equals_acked"]:
        missed.append("flywheel: stored != acknowledged or duplicates after the load")
    kill = out.get("kill9")
    if kill and not kill["flywheel"]["stored_equals_acked"]:
        missed.append("flywheel: stored != acknowledged or duplicates after kill -9")
    return missed


def _phoenix_version(exe: str) -> str:
    """arize-phoenix's version in the environment of ``exe`` ('?' when it cannot tell)."""
    python = Path(exe).parent / "python"
    code = "import importlib.metadata as m; print(m.version('arize-phoenix'))"
    try:
        return subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                              timeout=60, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def _phoenix_exe(arg: str | None) -> str:
    exe = arg or os.environ.get("BENCH_PHOENIX") or shutil.which("phoenix")
    exe = exe and os.path.expanduser(exe)
    if not exe or not Path(exe).is_file():
        raise SystemExit(f"error: no Phoenix executable ({exe or 'none given'}); "
                         f"install: {INSTALL_HINT}")
    return exe


def main() -> None:
    """Measure both servers, print the figures, exit 1 when a target is missed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phoenix", default=None,
                    help="the `phoenix` executable of an environment with arize-phoenix "
                         "(default: $BENCH_PHOENIX, else `phoenix` on PATH)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=20, help="load per server")
    ap.add_argument("--spans-per-request", type=int, default=500)
    ap.add_argument("--workload", choices=["agents", "genai"], default="agents",
                    help="as bench/ingest_throughput.py --workload")
    ap.add_argument("--drain-seconds", type=float, default=300,
                    help="longest wait for a store to catch up after the load")
    ap.add_argument("--settle-seconds", type=float, default=10,
                    help="Phoenix's span rows unchanged and its CPU idle this long = its queue "
                         "is drained")
    ap.add_argument("--kill-seconds", type=float, default=10, help="load before kill -9")
    ap.add_argument("--no-kill9", action="store_true", help="skip the kill -9 runs")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    exe = _phoenix_exe(args.phoenix)
    load_before = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="flywheel-vs-phoenix-"))
    runs: list[tuple[str, Callable[[Path], Server]]] = [
        ("flywheel", Flywheel), ("phoenix", lambda d: Phoenix(d, exe, args.settle_seconds))]
    out: dict = {
        "workload": f"{args.workload}: {args.clients} clients x {args.spans_per_request} "
                    f"spans/request, {args.seconds}s per server, OTLP/protobuf over loopback, "
                    "one load generator process",
        "machine": machine(),
        "phoenix_build": f"arize-phoenix {_phoenix_version(exe)} ({exe}), its defaults (SQLite)",
    }
    for i, (name, make) in enumerate(runs):
        (tmp / name).mkdir()
        out[name] = measure(make(tmp / name), args, seed=10 + 5_000 * i)
    fw, ph = out["flywheel"], out["phoenix"]
    out["ratio_acked_spans_per_s"] = round(fw["spans_per_s"] / max(ph["spans_per_s"], 1), 1)
    out["ratio_durable_spans_per_s"] = round(fw["durable_spans_per_s"]
                                             / max(ph["durable_spans_per_s"], 1), 1)
    if not args.no_kill9:
        out["kill9"] = {}
        for i, (name, make) in enumerate(runs):
            (tmp / f"{name}-kill9").mkdir()
            out["kill9"][name] = crash(make(tmp / f"{name}-kill9"), args, seed=20_000 + 5_000 * i)
    out["loadavg_1m_before_after"] = [round(load_before[0], 2), round(os.getloadavg()[0], 2)]
    out["missed_targets"] = missed_targets(out)
    print(json.dumps(out, indent=None if args.json else 2))
    if out["missed_targets"]:
        print(f"servers' logs and stores: {tmp}", file=sys.stderr)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if out["missed_targets"] else 0)


if __name__ == "__main__":
    main()
