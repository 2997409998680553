"""Small Python agents for the harness tests (test fixtures, not product code)."""

from __future__ import annotations

import time

from flywheel.harness import AgentContext, BudgetExhausted


def balance_agent(ctx: AgentContext) -> str:
    """Reads the balance twice, then answers with it."""
    ctx.call_tool("get_balance", {})
    return ctx.call_tool("get_balance", {}).text


def swallowing_agent(ctx: AgentContext) -> str:
    """Catches the budget exception and tries to go on (it must not be able to)."""
    for _ in range(5):
        try:
            ctx.call_tool("get_balance", {})
        except BudgetExhausted:
            pass
    return "done"


def slow_agent(ctx: AgentContext) -> str:
    """Spends its wall-clock budget, then calls a tool."""
    time.sleep(0.3)
    ctx.call_tool("get_balance", {})
    return "late"


def deep_agent(ctx: AgentContext) -> str:
    """Nests sub-agents three deep."""
    with ctx.subagent("a"), ctx.subagent("b"), ctx.subagent("c"):
        ctx.call_tool("get_balance", {})
    return "deep"


def chatty_agent(ctx: AgentContext) -> str:
    """Spends tokens."""
    for _ in range(3):
        ctx.chat([], [], model="m", input_tokens=600, output_tokens=100)
    return "chatty"


def crashing_agent(ctx: AgentContext) -> str:
    """Raises."""
    raise RuntimeError("boom")
