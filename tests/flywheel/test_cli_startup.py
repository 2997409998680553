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


@pytest.mark.parametrize("package", ["ingest", "promote", "tui"])
def test_lazy_public_api_resolves_every_name(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None
    assert set(dir(module)) == set(module.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        module.nope  # noqa: B018


def test_package_commands_table_is_what_each_package_registers() -> None:
    """``PACKAGE_COMMANDS`` (lazy loading) names exactly the commands each package adds."""
    import click

    from flywheel.cli import COMMAND_PACKAGES, PACKAGE_COMMANDS, FlywheelGroup

    assert list(PACKAGE_COMMANDS) == list(COMMAND_PACKAGES)
    group = FlywheelGroup()
    for package, names in PACKAGE_COMMANDS.items():
        assert sorted(group.load_package(package)) == sorted(names), package
    assert all(isinstance(c, click.Command) for c in group.commands.values())


def test_a_command_imports_only_its_own_package() -> None:
    code = (
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from flywheel.cli import cli\n"
        "r = CliRunner().invoke(cli, ['traces', '--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.endswith('._cli'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["flywheel.ingest._cli"]
