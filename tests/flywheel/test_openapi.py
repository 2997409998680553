"""The committed OpenAPI document matches the app, and every route is documented."""

from __future__ import annotations

import json
from pathlib import Path

from flywheel import Settings, create_app

DOC = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def test_committed_openapi_has_not_drifted(store):
    doc = create_app(Settings(), store).openapi()
    committed = json.loads(DOC.read_text())
    assert doc == committed, "the API changed: run `python scripts/openapi.py` and commit docs/openapi.json"


def test_every_route_has_operation_id_summary_and_errors(store):
    doc = create_app(Settings(), store).openapi()
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            assert op.get("operationId"), f"{method} {path} has no operation_id"
            assert op.get("summary"), f"{method} {path} has no summary"
            if method != "get" or "{" in path:
                codes = {c for c in op.get("responses", {}) if c.startswith(("4", "5"))}
                assert codes, f"{method} {path} declares no error responses"
