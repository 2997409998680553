"""Each package's public surface is its ``__all__``, pinned in ``public_api.json``.

Changing a package's public API is a decision: update the JSON file in the
same commit. Every listed name must import; names are listed once.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

PINNED: dict[str, list[str]] = json.loads((Path(__file__).parent / "public_api.json").read_text())


@pytest.mark.parametrize("package", sorted(PINNED))
def test_all_is_pinned_and_importable(package: str) -> None:
    module = importlib.import_module(package)
    names = list(module.__all__)
    assert len(names) == len(set(names)), f"{package}.__all__ lists a name twice"
    assert sorted(names) == PINNED[package], (
        f"{package}.__all__ changed; if on purpose, update tests/public_api.json"
    )
    for name in names:
        assert getattr(module, name, None) is not None, f"{package}.{name}"
