"""``flywheel traces list|show`` through the real CLI entry, on the test's chDB store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from flywheel import Store
from flywheel.cli import cli
from tests.ingest.test_read import A, B, C, seeded_store


@pytest.fixture(scope="module")
def seeded(chdb_dir: str) -> Iterator[Store]:
    yield from seeded_store(chdb_dir)


@pytest.fixture
def run(seeded: Any):
    url = f"chdb://{seeded.path}?database={seeded.database}"
    runner = CliRunner()

    def invoke(*args: str) -> Any:
        return runner.invoke(cli, ["--store", url, *args], catch_exceptions=False)

    return invoke


def test_list_json(run):
    res = run("traces", "list", "--json")
    assert res.exit_code == 0, res.output
    body = json.loads(res.output)
    assert [t["trace_id"] for t in body["traces"]] == [C, B, A]
    assert body["next_cursor"] is None


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--service", "bank"], [C, A]),
        (["--status", "error"], [B]),
        (["--has-error"], [B, A]),
        (["--no-error"], [C]),
        (["--tool", "send_money"], [A]),
        (["--text", "RENT"], [A]),
        (["--until", "2025-11-30T16:26:41Z"], [A]),
        (["--since", "1764520001"], [C, B]),
    ],
)
def test_list_filters(run, flags, expected):
    res = run("traces", "list", "--json", *flags)
    assert res.exit_code == 0, res.output
    assert [t["trace_id"] for t in json.loads(res.output)["traces"]] == expected


def test_list_pages(run):
    first = json.loads(run("traces", "list", "--json", "--limit", "2").output)
    assert len(first["traces"]) == 2 and first["next_cursor"]
    rest = json.loads(run("traces", "list", "--json", "--cursor", first["next_cursor"]).output)
    assert [t["trace_id"] for t in rest["traces"]] == [A]


def test_list_table(run):
    res = run("traces", "list")
    assert res.exit_code == 0, res.output
    for tid in (A, B, C):
        assert tid in res.output
    assert "send_money" in res.output and "error" in res.output


def test_list_table_empty(run):
    res = run("traces", "list", "--service", "nobody")
    assert res.exit_code == 0 and "no traces match" in res.output


@pytest.mark.parametrize(
    "flags", [["--since", "yesterday"], ["--limit", "0"], ["--status", "bad"], ["--cursor", "%%"]]
)
def test_list_bad_values_exit_nonzero_without_traceback(run, flags):
    res = run("traces", "list", *flags)
    assert res.exit_code != 0
    assert "Traceback" not in res.output


def test_show_tree(run):
    res = run("traces", "show", A)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith(f"trace {A}")
    assert "spans 5" in lines[1] and "tool calls 3" in lines[1]
    steps = lines[2:]
    assert len(steps) == 5
    assert steps[0].startswith("   1  agent  invoke_agent banker")
    assert steps[1].startswith("   2    llm  chat gpt-x") and "120 tok" in steps[1]
    assert steps[2].startswith("   3    tool  send_money")
    assert '"amount": 1100' in steps[2] and "error: insufficient funds" in steps[2]
    assert "1.0 ms" in steps[2]


def test_show_attributes(run):
    res = run("traces", "show", A, "--attributes")
    assert "gen_ai.tool.name = send_money" in res.output


def test_show_json(run):
    res = run("traces", "show", A, "--json")
    assert res.exit_code == 0
    body = json.loads(res.output)
    assert [s["step"]["order"] for s in body["spans"]] == [1, 2, 3, 4, 5]
    assert body["spans"][2]["attributes"]["gen_ai.tool.name"] == "send_money"
    slim = json.loads(run("traces", "show", A, "--json", "--no-attributes").output)
    assert slim["spans"][2]["attributes"] == {}


def test_show_unknown_is_one_line_error(run):
    res = run("traces", "show", "f" * 32)
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        f"error: no trace {'f' * 32} in project 'default'; list traces with `flywheel traces list`"
    ]


def test_project_flag(run):
    res = run("--project", "p2", "traces", "list", "--json")
    assert [t["trace_id"] for t in json.loads(res.output)["traces"]] == ["d" * 32]



def test_show_loads_only_what_a_read_needs(tmp_path: Any) -> None:
    """Opening a trace loads neither pandas (pyarrow's check is settled without it) nor the
    write side (OTLP protobuf classes, write-ahead log, provenance): a quarter of a second of
    start-up each time ``traces show`` runs. A fresh process seeds a store, another reads it."""
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    url = f"chdb://{tmp_path}/store"
    seed = (
        "from flywheel import open_store\n"
        "from tests.ingest.test_read import seed\n"
        f"s = open_store({url!r}); s.migrate(); seed(s); s.close()\n"
    )
    subprocess.run([sys.executable, "-c", seed], cwd=root, check=True, capture_output=True)
    show = (
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from flywheel.cli import cli\n"
        f"r = CliRunner().invoke(cli, ['--store', {url!r}, 'traces', 'show', {A!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "assert 'send_money' in r.output, r.output\n"
        "heavy = ['pandas', 'opentelemetry.proto', 'flywheel.ingest._wal',\n"
        "         'flywheel.ingest._provenance', 'flywheel.ingest._otlp']\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", show], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
