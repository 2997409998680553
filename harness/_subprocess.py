"""An agent in another process, speaking JSON lines on stdin/stdout.

One process per trial (nothing survives between trials). The harness writes
one ``start`` message; the agent then sends requests, one JSON object per
line, and reads one reply line for each:

=================================================  ==============================================
agent -> harness                                   harness -> agent
=================================================  ==============================================
(first line from the harness)                      ``{"type": "start", "prompt", "tools", "seams",
                                                   "plan", "retrieved"}`` (plan/retrieved are null
                                                   unless that seam is oracle)
``{"type": "tool_call", "name", "args", "id"?}``   ``{"type": "tool_result", "id", "output",
                                                   "error", "verdict"}``
``{"type": "verify", "id"}``                       ``{"type": "verdict", "deviated"}``
``{"type": "memory_write", "key", "value"}``       ``{"type": "memory_written", "stored"}``
``{"type": "memory_read", "key"}``                 ``{"type": "memory_value", "value"}``
``{"type": "chat", "model", "input_messages",      ``{"type": "ok"}`` (recorded as a chat span)
"output_messages", "input_tokens",
"output_tokens"}``
``{"type": "final", "output"}``                    (none; stdin is closed)
=================================================  ==============================================

A budget crossed mid-trial answers ``{"type": "budget_exhausted",
"resource"}`` and stops the process. Reads time out at the wall-clock budget.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from typing import Any

from flywheel import UserError

from ._agents import register_agent
from ._budget import BudgetExhausted
from ._context import AgentContext
from ._env import ToolCall, ToolResult


class SubprocessAgent:
    """Runs ``argv`` once per trial and serves its JSON-lines requests."""

    needs_reference = False

    def __init__(
        self, argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None
    ) -> None:
        if not argv:
            raise UserError("subprocess agent needs a command")
        self.argv = list(argv)
        self.cwd = cwd
        self.env = env

    def __call__(self, ctx: AgentContext) -> str:
        """Start the process, serve it, return its final output."""
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
                cwd=self.cwd,
                env=self.env,
            )
        except OSError as exc:
            raise UserError(f"cannot start agent {self.argv[0]!r}: {exc}") from exc
        lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        results: dict[str, tuple[ToolCall, ToolResult]] = {}
        finished = False
        try:
            self._send(
                proc,
                {
                    "type": "start",
                    "prompt": ctx.prompt,
                    "tools": [
                        {
                            "name": t.name,
                            "description": t.description,
                            "parameters": t.parameters,
                            "read_only": t.read_only,
                        }
                        for t in ctx.tools
                    ],
                    "seams": ctx.modes,
                    "plan": (lambda p: None if p is None else [c.to_json() for c in p])(ctx.plan()),
                    "retrieved": ctx.retrieval_items(),
                },
            )
            while True:
                timeout = ctx.meter.remaining_wall_s()
                try:
                    line = lines.get(timeout=timeout if timeout is not None else None)
                except queue.Empty:
                    ctx.meter.check()
                    continue
                if line is None:
                    err = proc.stderr.read()[-500:] if proc.stderr else ""
                    raise RuntimeError(f"agent process exited without a final message: {err}")
                line = line.strip()
                if not line:
                    continue
                msg = json.loads(line)
                kind = msg.get("type")
                if kind == "final":
                    finished = True
                    return str(msg.get("output", ""))
                try:
                    reply = self._serve(ctx, msg, results)
                except BudgetExhausted as exc:
                    self._send(proc, {"type": "budget_exhausted", "resource": exc.resource})
                    raise
                self._send(proc, reply)
        finally:
            if proc.stdin:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            try:
                # a finished agent may tidy up; an interrupted one is stopped at once
                proc.wait(timeout=2 if finished else 0.05)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    @staticmethod
    def _send(proc: subprocess.Popen[str], msg: dict[str, Any]) -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(msg, default=str) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    @staticmethod
    def _serve(
        ctx: AgentContext, msg: dict[str, Any], results: dict[str, tuple[ToolCall, ToolResult]]
    ) -> dict[str, Any]:
        kind = msg.get("type")
        if kind == "tool_call":
            name, args = str(msg.get("name", "")), dict(msg.get("args") or {})
            call_id = str(msg.get("id") or ctx.new_call_id())
            result = (
                ctx.retrieve(name, args, call_id)
                if ctx.is_read(name)
                else ctx.call_tool(name, args, call_id)
            )
            results[call_id] = (ctx.calls[-1], result)
            return {
                "type": "tool_result",
                "id": call_id,
                "output": result.text,
                "error": result.error,
                "verdict": result.verdict,
            }
        if kind == "verify":
            call_id = str(msg.get("id", ""))
            if call_id not in results:
                return {"type": "error", "message": f"unknown call id {call_id!r}"}
            call, result = results[call_id]
            return {"type": "verdict", "deviated": ctx.verify(call, result)}
        if kind == "memory_write":
            return {
                "type": "memory_written",
                "stored": ctx.memory_write(str(msg.get("key", "")), msg.get("value")),
            }
        if kind == "memory_read":
            return {"type": "memory_value", "value": ctx.memory_read(str(msg.get("key", "")))}
        if kind == "chat":
            ctx.chat(
                list(msg.get("input_messages") or []),
                list(msg.get("output_messages") or []),
                model=str(msg.get("model", "unknown")),
                input_tokens=int(msg.get("input_tokens") or 0),
                output_tokens=int(msg.get("output_tokens") or 0),
                cost=float(msg.get("cost") or 0.0),
            )
            return {"type": "ok"}
        return {"type": "error", "message": f"unknown message type {kind!r}"}


@register_agent("subprocess")
def subprocess_agent(argv: list[str], cwd: str | None = None) -> SubprocessAgent:
    """An agent program speaking JSON lines (see module docstring)."""
    return SubprocessAgent(argv, cwd)
