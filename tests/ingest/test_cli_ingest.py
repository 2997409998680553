"""``flywheel ingest``: files and directories; bad input is one line naming it (issue 23)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from flywheel.cli import cli


def _body(n: int) -> dict:
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [
        {"traceId": f"{n:032x}", "spanId": f"{n:016x}", "name": "s",
         "startTimeUnixNano": "1", "endTimeUnixNano": "2"}]}]}]}


@pytest.fixture
def run(store):
    url = f"chdb://{store.path}?database={store.database}"

    def invoke(*args: str):
        return CliRunner().invoke(cli, ["--store", url, *args])

    return invoke


def test_a_directory_imports_its_otlp_files(run, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.json").write_text(json.dumps(_body(1)))
    (tmp_path / "two.jsonl").write_text(json.dumps(_body(2)) + "\n" + json.dumps(_body(3)))
    (tmp_path / "notes.txt").write_text("not spans")
    res = run("ingest", str(tmp_path), "--json")
    assert res.exit_code == 0, res.output
    files = json.loads(res.output)["files"]
    assert [f["spans"] for f in files] == [1, 2]
    assert [f["path"].rsplit("/", 1)[-1] for f in files] == ["one.json", "two.jsonl"]


def test_missing_paths_and_empty_directories_are_one_line(run, tmp_path):
    res = run("ingest", str(tmp_path / "nope.json"))
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        f"error: no such file or directory: {tmp_path / 'nope.json'} (pass OTLP JSON files "
        "written by the OpenTelemetry file exporter, or a directory of them)"]
    (tmp_path / "empty").mkdir()
    res = run("ingest", str(tmp_path / "empty"))
    assert res.exit_code == 1 and "is a directory without OTLP JSON files" in res.output


def _nested(depth: int) -> dict:
    v: dict = {"stringValue": "x"}
    for _ in range(depth):
        v = {"arrayValue": {"values": [v]}}
    body = _body(1)
    body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"] = [{"key": "k", "value": v}]
    return body


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (_nested(150), "at resourceSpans.scopeSpans.spans.attributes.value.values x"),
        ({"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 5}]}]}]},
         "at resourceSpans.scopeSpans.spans.traceId"),
        ({"resourceSpans": [{"scopeSpans": "x"}]},
         "at resourceSpans[0].scopeSpans: a list is needed, not a string"),
        ({"resourceSpans": [{"scopeSpans": [{"spans": ["x"]}]}]},
         "at resourceSpans[0].scopeSpans[0].spans[0]: an object is needed, not a string"),
        ([1, 2], "the body must be an object"),
    ],
)
def test_malformed_bodies_are_one_short_line(run, tmp_path, body, says):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(body))
    res = run("ingest", str(f))
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {f}:1: malformed OTLP JSON"), lines
    assert says in lines[0] and len(lines[0]) < 400
    assert "Failed to parse" not in lines[0] and "object has no attribute" not in lines[0]
