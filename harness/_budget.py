"""Budgets on calls, writes, tokens, wall time and depth, enforced by the harness.

The playbook ("Budgets are safety primitives"): N_calls <= B_N, tokens
(money) <= B_C, T_wall <= B_T, depth <= B_D, with a separate, tighter budget
on irreversible writes. They hold whatever the agent believes, because every
seam call goes through the meter. Exhaustion is its own trial outcome, never
"failed": a trial that hit its step limit is a loop, not a wrong answer.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Budget:
    """Limits for one trial; ``None`` means unlimited."""

    max_calls: int | None = 50
    max_write_calls: int | None = 20
    max_tokens: int | None = 200_000
    max_wall_s: float | None = 120.0
    max_depth: int | None = 3

    def to_json(self) -> dict[str, Any]:
        """The limits as a JSON-able dict (stored with the trial)."""
        return asdict(self)


class BudgetExhausted(Exception):  # noqa: N818 - an outcome, not a failure
    """Raised at the seam that would cross a limit; the trial ends as budget_exhausted."""

    def __init__(self, resource: str, limit: float, used: float) -> None:
        super().__init__(f"budget exhausted: {resource} {used} > {limit}")
        self.resource = resource
        self.limit = limit
        self.used = used


@dataclass
class BudgetMeter:
    """Counts what a trial spends and trips at the first limit crossed.

    Once tripped it stays tripped: an agent that catches the exception cannot
    continue, since every later charge raises again.
    """

    budget: Budget
    calls: int = 0
    write_calls: int = 0
    tokens: int = 0
    depth: int = 0
    started: float = field(default_factory=time.monotonic)
    tripped: BudgetExhausted | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _trip(self, resource: str, limit: float, used: float) -> None:
        if self.tripped is None:
            self.tripped = BudgetExhausted(resource, limit, used)
        raise self.tripped

    def check(self) -> None:
        """Raise if a limit was crossed before or the wall clock ran out."""
        if self.tripped is not None:
            raise self.tripped
        b = self.budget
        if b.max_wall_s is not None:
            elapsed = time.monotonic() - self.started
            if elapsed > b.max_wall_s:
                self._trip("wall_s", b.max_wall_s, round(elapsed, 3))

    def remaining_wall_s(self) -> float | None:
        """Seconds left on the wall-clock budget (for subprocess and HTTP timeouts)."""
        if self.budget.max_wall_s is None:
            return None
        return max(0.0, self.budget.max_wall_s - (time.monotonic() - self.started))

    def charge_call(self, *, write: bool) -> None:
        """Count one tool call (before it runs)."""
        with self._lock:
            self.check()
            b = self.budget
            self.calls += 1
            if b.max_calls is not None and self.calls > b.max_calls:
                self._trip("calls", b.max_calls, self.calls)
            if write:
                self.write_calls += 1
                if b.max_write_calls is not None and self.write_calls > b.max_write_calls:
                    self._trip("write_calls", b.max_write_calls, self.write_calls)

    def charge_tokens(self, n: int) -> None:
        """Count model tokens (after the model answered)."""
        with self._lock:
            self.check()
            self.tokens += max(0, int(n))
            b = self.budget
            if b.max_tokens is not None and self.tokens > b.max_tokens:
                self._trip("tokens", b.max_tokens, self.tokens)

    def enter(self) -> None:
        """One level deeper (a sub-agent)."""
        with self._lock:
            self.check()
            self.depth += 1
            b = self.budget
            if b.max_depth is not None and self.depth > b.max_depth:
                self._trip("depth", b.max_depth, self.depth)

    def leave(self) -> None:
        """Back up one level."""
        with self._lock:
            self.depth = max(0, self.depth - 1)
