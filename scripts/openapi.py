"""Write the REST API's OpenAPI document to docs/openapi.json (committed).

    python scripts/openapi.py        # rewrite
    python scripts/openapi.py --check  # exit 1 if the committed file drifted
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def current() -> str:
    """The OpenAPI document of the app, as committed (sorted, indented)."""
    from flywheel import Settings, open_store
    from flywheel._app import create_app

    store = open_store(f"chdb://{tempfile.mkdtemp(prefix='flywheel-openapi-')}")
    store.migrate()
    return json.dumps(create_app(Settings(), store).openapi(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    target = ROOT / "docs" / "openapi.json"
    text = current()
    if "--check" in sys.argv:
        sys.exit(0 if target.exists() and target.read_text() == text else 1)
    target.write_text(text)
    print(f"wrote {target}")
