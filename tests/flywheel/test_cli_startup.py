"""CLI start-up stays light: heavy libraries load only in the commands that use them."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

HEAVY = ["presidio_analyzer", "spacy", "datasketch", "scipy", "textual"]


def test_help_does_not_import_heavy_libraries() -> None:
    code = (
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from flywheel.cli import cli\n"
        "r = CliRunner().invoke(cli, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("package", ["promote", "tui"])
def test_lazy_public_api_resolves_every_name(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None
    assert set(dir(module)) == set(module.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        module.nope  # noqa: B018
