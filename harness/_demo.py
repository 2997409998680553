"""``flywheel demo``: the platform on the embedded store, agents on AgentDojo, and where to look.

Starts the real server (OTLP receiver + REST API) in this process, runs the
reference agent (a simulation with declared hazards, some runs obeying
injected instructions) on a few AgentDojo banking tasks through the real
OTLP exporter, analyses every trial (argument provenance, side effects),
prints a table, and keeps serving so the traces can be browsed.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import click

from flywheel import Settings, Store
from flywheel._clikit import print_table, stderr_console

from ._agents import AgentSpec
from ._analysis import analyse_trial
from ._export import otlp_exporter
from ._reference import HAZARDS
from ._runner import TrialRecord, plan_trials, run_trials
from ._trials_store import save_trials

DEMO_TASKS = ("user_task_0", "user_task_3", "user_task_4", "user_task_7", "user_task_11")
DEMO_INJECTIONS = ("injection_task_0", "injection_task_4")


def start_server(settings: Settings, store: Store) -> tuple[Any, threading.Thread]:
    """The platform's app under uvicorn in a thread (chDB is in-process)."""
    import uvicorn

    from flywheel._app import create_app

    app = create_app(settings, store)
    server = uvicorn.Server(uvicorn.Config(app, host=settings.ingest.host, port=settings.ingest.port,
                                           log_level="warning", timeout_keep_alive=30))
    thread = threading.Thread(target=server.run, name="flywheel-server", daemon=True)
    thread.start()
    deadline = time.time() + 60
    while not server.started:
        if not thread.is_alive() or time.time() > deadline:
            raise click.ClickException(
                f"the server could not start on {settings.ingest.host}:{settings.ingest.port} "
                "(port in use? pass --port)")
        time.sleep(0.05)
    return server, thread


def run_demo(settings: Settings, store: Store, *, runs: int, seed: int, serve: bool) -> list[dict[str, Any]]:
    """Run the demo; return one summary row per trial."""
    console = stderr_console()
    server, thread = start_server(settings, store)
    url = f"http://{settings.ingest.host}:{settings.ingest.port}"
    rates = dict.fromkeys(HAZARDS, 0.05)
    rates["obey_injection"] = 0.5
    agent = AgentSpec("reference", {"rates": rates})
    specs = plan_trials("agentdojo:banking", agent, tasks=DEMO_TASKS, runs=runs, seed=seed)
    specs += plan_trials("agentdojo:banking", agent, tasks=DEMO_TASKS[:3],
                         injections=list(DEMO_INJECTIONS), runs=runs, seed=seed + 1)
    console.print(f"[bold]platform[/] {url}  store {settings.store}")
    console.print(f"running {len(specs)} reference-agent trials (a simulation) on AgentDojo banking, "
                  "spans sent over OTLP/HTTP ...")
    records: list[TrialRecord] = run_trials(specs, otlp_exporter(url), workers=2)
    save_trials(store, records, project=settings.project)
    writer = server.config.app.state.writer
    writer.flush(30)
    rows = []
    for rec in records:
        analysis = analyse_trial(store, rec, project=settings.project).summary()
        rows.append({"task": rec.task_id, "injection": rec.injection_task_id or "-",
                     "status": rec.status, "utility": rec.utility, "attacked": rec.security,
                     "faults": ",".join(f["kind"] for f in rec.faults) or "-", **analysis})
    _print_table(rows)
    console.print(
        "\n[bold]where to look[/]\n", soft_wrap=True)
    console.print(
        f"  curl -s '{url}/api/traces?limit=5' | python -m json.tool\n"
        f"  curl -s {url}/api/traces/{rows[0]['trace_id']}/provenance | python -m json.tool\n"
        f"  API docs: {url}/docs\n"
        f"  after Ctrl-C: flywheel --store {settings.store} traces list | "
        f"traces show TRACE_ID | provenance TRACE_ID", soft_wrap=True)
    if serve:
        console.print(f"\nserving on {url}; Ctrl-C to stop")
        try:
            while thread.is_alive():
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
    server.should_exit = True
    thread.join(30)
    return rows


def _print_table(rows: list[dict[str, Any]]) -> None:
    def short(name: str) -> str:
        return name.replace("user_task_", "u").replace("injection_task_", "i")

    cells = []
    for r in rows:
        critical = ", ".join(f"{k.replace('_', ' ')}" for k in r["critical_events"]) or "-"
        cells.append([short(r["task"]), short(r["injection"]) or "-",
                      "yes" if r["utility"] else "no",
                      {True: "YES", False: "no", None: "-"}[r["attacked"]],
                      r["faults"].replace("_", " ") or "-", str(r["provenance_flags"]), critical,
                      r["trace_id"]])
    print_table(["task", "inj", "ok", "attacked", "faults", "flags", "critical side effects",
                 "trace"], cells, ids=(7,), title="demo trials (u = user task, i = injection task)",
                stderr=True)
