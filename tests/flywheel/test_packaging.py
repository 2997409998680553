"""The wheel installs one top-level package, and the user's folders cannot shadow it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _package_folders() -> dict[str, Path]:
    """Every importable folder of the product, by its installed (flywheel.*) name."""
    mapping = PYPROJECT["tool"]["setuptools"]["package-dir"]
    found: dict[str, Path] = {}
    for top, folder in mapping.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            found[".".join([top, *rel.parts])] = init.parent
    return found


def test_every_package_folder_is_listed() -> None:
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    missing = sorted(set(_package_folders()) - listed)
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"
    assert {name.split(".")[0] for name in listed} == {"flywheel"}


def test_wheel_has_one_top_level_package(tmp_path: Path) -> None:
    src = tmp_path / "src"  # a copy, so the build leaves nothing in the checkout
    for folder in {*PYPROJECT["tool"]["setuptools"]["package-dir"].values()}:
        shutil.copytree(ROOT / folder, src / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path / "dist"), str(src)],
        check=True, capture_output=True, text=True,
    )
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"flywheel"}, tops
    for package in _package_folders():
        assert f"{package.replace('.', '/')}/__init__.py" in names, package
    assert any(n.startswith("flywheel/ingest/migrations/") and n.endswith(".sql") for n in names)
    assert any(n.endswith(".tcss") for n in names)


def test_folders_named_like_packages_do_not_shadow_the_product(tmp_path: Path) -> None:
    for name in ("evalset", "ingest", "tui", "promote", "ablation", "side_effects"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise ImportError('shadowed')\n")
    out = subprocess.run([sys.executable, "-m", "flywheel", "--help"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "review" in out.stdout


def test_help_says_where_each_job_lives() -> None:
    from flywheel.cli import COMMAND_PACKAGES

    out = subprocess.run([sys.executable, "-m", "flywheel", "--help"], capture_output=True,
                         text=True, check=True, env={**os.environ, "COLUMNS": "200"}).stdout
    for package, heading in COMMAND_PACKAGES.items():
        assert f"({package}/)" in heading
        assert heading in out, heading
