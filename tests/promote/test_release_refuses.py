"""The release refuses to leak, through every detector and through the commands (issue 20).

- Every entity type (and each encoded form: base64, percent-encoding, JSON
  in a string, a credential under a key) planted in a task blocks the
  release with a finding of that type, reported by path and type, never the
  value.
- ``flywheel evalset release`` on a store with a planted value exits 1 with
  a one-line error that holds no value; ``flywheel promote allow-leak``
  records the exception (an append-only review event) and the release and
  the export then succeed.
- A redaction policy with an unknown entity type, a bad regular expression
  or a key rule that matches nothing stops ``flywheel promote redact`` with a
  one-line error naming the entry (exit 1), before anything is redacted.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from flywheel.cli import FlywheelGroup
from flywheel.evalset import Task, release_tasks
from flywheel.evalset._cli_bundle import register_bundle
from flywheel.promote import read_events

from flywheel import LeakRefused, Settings, Store
from flywheel._clikit import CliContext
from tests.promote.test_release_leaks import (
    _approve_unguarded,
    _canary_trace,
    _drafted,
    _with_planted_value,
)

#: One value per entity type, written for this file (none from a corpus).
PLANTED: dict[str, str] = {
    "EMAIL": "Write to ysolde.barrantes@tidewater-post.example about it.",
    "PHONE": "Her mobile is +33 6 48 19 27 05.",
    "CARD": "Charge the card 4539 1488 0343 6467 today.",
    "IBAN": "Pay to DE89 3704 0044 0532 0130 00 by Friday.",
    "IP": "The login came from 198.51.100.73 at night.",
    "SSN": "SSN 219-09-9999 is on the form.",
    "NAME": "Ask the courier, Vukovich-Amadi, to wait.",
    "ADDRESS": "Deliver to 71 Ropewalk Lane, Hull HU1 1TS please.",
    "DOB": "She was born on 17 April 1984 in Split.",
    "NATIONAL_ID": "Steuer-ID 86 095 742 719 liegt vor.",
    "SECRET": "The deploy key is ghp_Vq8Lm2Kx9Tn4Wv7Pb1Yc6Hd3Fg0Js5Ua9Ei4.",
}


def _task(prompt: str, **metadata: str) -> Task:
    return Task.model_validate(
        {
            "task_id": "t1",
            "prompt": prompt,
            "metadata": metadata,
            "criteria": [{"id": "c", "kind": "policy", "grader": {"name": "policy", "args": {}}}],
        }
    )


def _refusal(tmp_path: Path, task: Task) -> LeakRefused:
    with pytest.raises(LeakRefused) as exc:
        release_tasks(tmp_path / "sets", "probe", [task])
    assert not (tmp_path / "sets" / "probe" / "LATEST").exists()
    return exc.value


@pytest.mark.parametrize("entity", sorted(PLANTED))
def test_every_detector_blocks_a_release(tmp_path: Path, entity: str) -> None:
    refused = _refusal(tmp_path, _task(PLANTED[entity]))
    assert (refused.findings[0]["path"], entity) in {(f["path"], f["entity"]) for f in refused.findings}
    value = PLANTED[entity].split(" ", 3)[-1]
    assert value not in str(refused) and "\n" not in str(refused)


@pytest.mark.parametrize("form", ["base64", "percent", "json", "key"])
def test_encoded_values_block_a_release(tmp_path: Path, form: str) -> None:
    text = "Ask the courier, Vukovich-Amadi, to call +33 6 48 19 27 05."
    if form == "base64":
        task = _task("Summarise the attachment.", attachment=base64.b64encode(text.encode()).decode())
    elif form == "percent":
        task = _task("https://forms.example/cb?note=" + urllib.parse.quote(text, safe=""))
    elif form == "json":
        task = _task("See the record.", record=json.dumps({"body": json.dumps({"note": text})}))
    else:
        task = _task("Use the stored login.", db_password="Murmel-Kiesel-4471")
    entities = {f["entity"] for f in _refusal(tmp_path, task).findings}
    assert entities & {"NAME", "PHONE", "SECRET"}, entities


def _cli(store: Store) -> click.Group:
    from flywheel.promote._cli import register

    @click.group(cls=FlywheelGroup)
    @click.pass_context
    def root(ctx: click.Context) -> None:
        ctx.obj = CliContext(Settings(), _store=store)

    register(root)
    register_bundle(root)
    return root


def test_cli_release_is_refused_then_allowed_by_a_recorded_exception(
    store: Store, tmp_path: Path
) -> None:
    (cand,) = _drafted(store, _canary_trace(7))
    _approve_unguarded(store, cand.candidate_id, _with_planted_value)
    cli, runner, root = _cli(store), CliRunner(), str(tmp_path / "sets")
    res = runner.invoke(cli, ["evalset", "release", "leaks", "--root", root])
    assert res.exit_code == 1, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: release of leaks refused"), res.output
    assert "Wendeline" not in res.output and "7700" not in res.output
    assert "$.prompt NAME" in lines[0] and "$.prompt PHONE" in lines[0]
    task_id = lines[0].split("finding(s) of personal data or secrets (", 1)[1].split(" ", 1)[0]
    for entity in ("NAME", "PHONE"):
        res = runner.invoke(cli, ["promote", "allow-leak", "leaks", "--task", task_id, "--path",
                                  "$.prompt", "--entity", entity, "--reason", "checked: fiction"])
        assert res.exit_code == 0, res.output
    kinds = [e.kind for e in read_events(store, candidate_ids=[cand.candidate_id])[cand.candidate_id]]
    assert kinds[-2:] == ["leak-exception", "leak-exception"]
    res = runner.invoke(cli, ["evalset", "release", "leaks", "--root", root, "--json"])
    assert res.exit_code == 0, res.output
    ref = json.loads(res.output)["ref"]
    res = runner.invoke(cli, ["evalset", "export", ref, str(tmp_path / "out"), "--root", root])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    ("redaction", "named"),
    [
        ({"entities": ["EMAIL_ADDRESS", "PASSPORT_MRZ"]}, "PASSPORT_MRZ"),
        ({"deny_patterns": {"SECRET": ["acct-([0-9"]}}, "acct-([0-9"),
        ({"key_rules": {"--": "SECRET"}}, "'--'"),
        ({"key_rules": {"tax_ref": "lowercase label"}}, "lowercase label"),
    ],
)
def test_a_bad_redaction_policy_is_a_one_line_error(
    store: Store, tmp_path: Path, redaction: dict[str, object], named: str
) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"redaction": redaction}))
    res = CliRunner().invoke(_cli(store), ["promote", "redact", "--policy", str(policy)])
    assert res.exit_code == 1, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: policy file"), res.output
    assert named in lines[0] and "Traceback" not in res.output
