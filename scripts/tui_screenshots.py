"""Write docs/screenshots/<screen>.svg: each main screen of `flywheel review` at 80x24.

Builds a throw-away chDB store, puts three demo agent runs into it, runs the
promotion pipeline (sample, dedupe, redact, draft), and drives the app over
the in-process API exactly as the snapshot tests do (tests/tui/_fixture.py).

    /work/venv/bin/python scripts/tui_screenshots.py [OUT_DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flywheel import open_store  # noqa: E402
from tests.tui._fixture import SCREENS, demo_app, drafted_candidates, goto  # noqa: E402


async def shoot(store: object, screen: str, out: Path) -> Path:
    """Drive a fresh app to ``screen`` and save its SVG."""
    app = demo_app(store)  # type: ignore[arg-type]
    async with app.run_test(size=(80, 24)) as pilot:
        await goto(pilot, screen)
        return Path(app.save_screenshot(f"{screen}.svg", str(out)))


def main() -> None:
    """Write one SVG per main screen."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "docs" / "screenshots",
                        help="folder for the SVGs (default: docs/screenshots)")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"chdb://{tmp}?database=screens")
        store.migrate()
        drafted_candidates(store)
        for screen in SCREENS:  # queue first: later screens claim a candidate
            print(asyncio.run(shoot(store, screen, out)))
        store.close()


if __name__ == "__main__":
    main()
