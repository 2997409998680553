"""Imports follow the layering of the README's Layout table, through public APIs only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: package -> the packages it may import (besides the core, which everyone may).
ALLOWED: dict[str, set[str]] = {
    "ingest": set(),
    "evalset": {"ingest"},
    "promote": {"ingest", "evalset"},
    "side_effects": {"ingest", "evalset"},
    "harness": {"ingest", "evalset", "side_effects"},
    "attribution": {"ingest", "evalset", "side_effects", "harness"},
    "safety": {"ingest", "evalset", "side_effects", "harness"},
    "ablation": {"ingest", "evalset", "side_effects", "harness"},
    "tui": {"ingest", "evalset", "promote", "side_effects", "harness", "attribution",
            "safety", "ablation"},
}
#: Core modules other packages may use besides ``flywheel`` itself (shared CLI and
#: app plumbing, the public value-identity module).
CORE_SHARED = {
    "flywheel._clikit", "flywheel._app", "flywheel._lazy", "flywheel.values", "flywheel.errors",
    "flywheel.pii",
}


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
    return out


def _violations(package: str) -> list[str]:
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[0] != "flywheel":
                if parts[0] in ALLOWED or parts[0] == "tests":
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {module} (not namespaced)")
                continue
            if len(parts) == 1 or module in CORE_SHARED:
                continue
            other = parts[1]
            if other not in ALLOWED:  # a core module
                if other.startswith("_") and package != "flywheel":
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports private core {module}")
                continue
            if other == package:
                continue
            if other not in ALLOWED[package]:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {module} (layering)")
            elif len(parts) > 2 and parts[2].startswith("_"):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports private {module}")
    return bad


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_follow_the_layering(package: str) -> None:
    assert _violations(package) == []


def test_core_imports_no_package() -> None:
    bad = []
    for path in sorted((ROOT / "flywheel").rglob("*.py")):
        for line, module in _imports(path):
            parts = module.split(".")
            if parts[0] == "flywheel" and len(parts) > 1 and parts[1] in ALLOWED:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
            if parts[0] in ALLOWED:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert bad == []
