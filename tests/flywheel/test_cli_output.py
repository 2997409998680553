"""Output for people and for scripts (issue 23, item 3).

Tables adapt to the terminal and never shorten identifiers; piped, they are
plain columns with every cell whole. ``flywheel config`` shows what ``serve``
runs with.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from rich.console import Console

from flywheel._clikit import print_table
from flywheel.cli import cli

LONG = "0123456789abcdef" * 4  # a 64-character identifier


def _rows() -> list[list[str]]:
    return [[LONG, "lookup_transactions_by_reference", "[red]UNTRUSTED[/]"], ["b" * 16, "x", "ok"]]


def test_piped_table_is_plain_columns_with_whole_cells(capsys):
    print_table(["span", "tool", "trust"], _rows(), title="T", caption="C")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "# T" and out[-1] == "# C"
    assert out[1].split() == ["span", "tool", "trust"]
    assert out[2].split() == [LONG, "lookup_transactions_by_reference", "UNTRUSTED"]
    assert "[red]" not in "\n".join(out) and "…" not in "\n".join(out)
    assert out[2].index("lookup") == out[3].index("x")  # aligned columns


def test_terminal_table_keeps_identifiers_whole_at_80_columns(monkeypatch, capsys):
    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    monkeypatch.setenv("COLUMNS", "80")
    print_table(["span", "tool", "trust"], _rows() * 3, ids=(0,))
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    assert all(len(line) <= 80 for line in out.splitlines())
    assert out.count(LONG) == 3 and "…" not in out


def test_provenance_table_piped_keeps_ids(store):
    from tests.ingest.test_read import A, seed

    seed(store)
    url = f"chdb://{store.path}?database={store.database}"
    res = CliRunner().invoke(cli, ["--store", url, "provenance", A, "--recompute"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith(f"# argument provenance of {A}")
    assert "send_money" in res.output and "…" not in res.output


@pytest.mark.parametrize(("env", "expected"), [({}, 1), ({"FLYWHEEL_INGEST__DECODE_WORKERS": "0"}, 0),
                                               ({"FLYWHEEL_INGEST__DECODE_WORKERS": "3"}, 3)])
def test_config_shows_the_decode_workers_serve_uses(env, expected):
    res = CliRunner().invoke(cli, ["config", "--json"], env=env)
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["ingest"]["decode_workers"] == expected
    text = CliRunner().invoke(cli, ["config"], env=env).output
    assert f"ingest.decode_workers: {expected}" in text.splitlines()
