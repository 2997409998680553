"""How many generated examples a property test runs: the full count with ``--runslow``.

The default suite (CI, on a fresh machine, within its time budget) runs a
quarter of each heavy fuzzing test's examples, never fewer than 50; ``--runslow``
(set by ``tests/conftest.py`` through ``FLYWHEEL_RUNSLOW``) runs them all.
"""

from __future__ import annotations

import os


def examples(full: int) -> int:
    """``full`` under ``--runslow``, else a quarter of it (at least 50)."""
    if os.environ.get("FLYWHEEL_RUNSLOW") == "1":
        return full
    return min(full, max(full // 4, 50))
