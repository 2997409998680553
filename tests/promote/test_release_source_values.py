"""The release scanner has a second, independent witness: the source trace's personal keys.

The detectors that scan a release are redaction's own, so a value redaction
missed is missed again. These tests plant values no detector flags (a
passphrase of plain words, a rare surname, a customer number) under personal
keys of the source trace, let them reach an approved task, and check that
the release refuses by path and type (never the value), that the detectors
alone would have let them through, and that identifiers, placeholders and
pseudonyms under the same keys are not collected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flywheel.evalset import Task, release_from_store, release_tasks, scan_release
from flywheel.evalset._source_values import collect, personal_values
from flywheel.pii import find_values, scan_document
from flywheel.promote import record_leak_exception

from flywheel import LeakRefused, Store
from tests.promote.test_release_leaks import _approve, _drafted
from tests.promote.test_sampling import agent_trace, tid

PASSPHRASE = "velvet-otter-harbour"
SURNAME = "Quenneville-Ardouin"


def _trace(n: int) -> list[dict[str, Any]]:
    return agent_trace(
        tid(n),
        "Please reset the portal login of the customer.",
        [
            (
                "reset_login",
                {"nom": SURNAME, "password": PASSPHRASE, "name": "reset_login", "token": "***"},
                {"ok": True, "owner": "<NAME_1>", "author": "platform-team"},
            )
        ],
        "Done.",
    )


def test_collect_takes_personal_keys_and_leaves_identifiers() -> None:
    found: dict[str, str] = {}
    collect(
        "gen_ai.tool.call.arguments",
        json.dumps(
            {
                "nom": SURNAME,
                "password": PASSPHRASE,
                "name": "get_weather",  # a tool name under a name key
                "owner": "platform-team",
                "author": "admin",
                "token": "***",
                "signed_by": "<NAME_2>",
                "to": ["Ana Ruiz", "support"],
                "telefono": "n/a",
                "user.email": "Ana.Ruiz@example.org",
                "nested": json.dumps({"geburtsdatum": "1984-04-17"}),
            }
        ),
        found,
    )
    assert found == {
        SURNAME: "NAME",
        PASSPHRASE: "SECRET",
        "Ana Ruiz": "NAME",
        "Ana.Ruiz@example.org": "EMAIL",
        "1984-04-17": "DOB",
    }


def test_every_type_the_witness_reports_is_one_a_reviewer_can_except() -> None:
    """Key rules whose label depends on the value (AUTO, CHECKED_ID, SECRET_IF_RANDOM)
    resolve as redaction resolves them; a finding typed CHECKED_ID could not be excepted
    (``promote allow-leak`` takes entity types only), so such a release stayed refused."""
    from flywheel.pii import ENTITIES
    from flywheel.pii._keys import DEFAULT_KEY_RULES

    found: dict[str, str] = {}
    doc = {
        "CNP": "1800101221144",  # an id word as a key, check digits pass
        "PPS": "1234",  # check digits fail: read as text, not collected
        "licenseKey": "sk_9f8A7b6C5d4E3f2G1h0J",  # generated: a secret
        "routing_key": "standard",  # a word: no secret
        "contact": "Ana.Ruiz@example.org",
        "emergency_contact": "Jonas Weber",
    }
    collect("payload", json.dumps(doc), found)
    assert found == {
        "1800101221144": "NATIONAL_ID",
        "sk_9f8A7b6C5d4E3f2G1h0J": "SECRET",
        "Ana.Ruiz@example.org": "EMAIL",
        "Jonas Weber": "NAME",
    }
    entities = set(ENTITIES.values())
    samples = ("Jonas Weber", "jonas.weber@example.org", "+49 30 1234567", "1800101221144",
               "sk_9f8A7b6C5d4E3f2G1h0J", "1984-04-17", "Hauptstr. 5, 10115 Berlin")
    for key in DEFAULT_KEY_RULES:
        for value in samples:
            got: dict[str, str] = {}
            collect(key, value, got)
            assert set(got.values()) <= entities, (key, got)


def test_find_values_reports_path_and_type_never_the_value() -> None:
    doc = {
        "prompt": f"Log in with {PASSPHRASE} for QUENNEVILLE.",
        "url": "https://x.example/?who=ana.ruiz%40example.org",
        "note": "Banana Ruizzz",  # no whole-word occurrence
        "blob": json.dumps({"inner": f"by {SURNAME}"}),
    }
    values = {PASSPHRASE: "SECRET", "Ana.Ruiz@example.org": "EMAIL", "Ana Ruiz": "NAME",
              SURNAME: "NAME"}
    found = find_values(doc, values)
    assert {(f.path, f.entity, f.rule) for f in found} == {
        ("$.prompt", "SECRET", "source-value"),
        ("$.url", "EMAIL", "source-value"),
        ("$.blob.inner", "NAME", "source-value"),
    }
    assert PASSPHRASE not in json.dumps([f.to_dict() for f in found])


def _task(prompt: str, trace: str) -> Task:
    return Task.model_validate(
        {
            "task_id": "t1",
            "prompt": prompt,
            "source_trace_id": trace,
            "criteria": [{"id": "c", "kind": "policy", "grader": {"name": "policy", "args": {}}}],
        }
    )


def test_a_value_no_detector_sees_is_refused_by_the_source_witness(
    store: Store, tmp_path: Path
) -> None:
    from tests.promote.test_sampling import insert

    insert(store, _trace(7))
    values = personal_values(store, [tid(7)])
    assert values[tid(7)][PASSPHRASE] == "SECRET" and values[tid(7)][SURNAME] == "NAME"
    task = _task(f"Log in with {PASSPHRASE} as {SURNAME}.", tid(7))
    # The detectors alone let both through: the witness is independent evidence.
    assert scan_document(task.model_dump(mode="json")) == []
    assert scan_release([task], {}) == []
    with pytest.raises(LeakRefused) as exc:
        release_tasks(tmp_path / "sets", "probe", [task], source_values=values)
    found = {(f["path"], f["entity"], f["rule"]) for f in exc.value.findings}
    assert found == {("$.prompt", "SECRET", "source-value"), ("$.prompt", "NAME", "source-value")}
    assert PASSPHRASE not in str(exc.value) and SURNAME not in str(exc.value)
    # Another trace's values do not count against this task.
    other = _task(f"Log in with {PASSPHRASE}.", tid(8))
    assert scan_release([other], {}, values) == []


def test_release_from_store_reads_the_source_and_an_exception_lets_it_pass(
    store: Store, tmp_path: Path
) -> None:
    (cand,) = _drafted(store, _trace(9), evalset="witness")

    def leak(task: dict[str, Any]) -> dict[str, Any]:
        task["prompt"] = f"Reset the login; the passphrase stays {PASSPHRASE}."
        task["metadata"]["review_todo"] = []
        return task

    _approve(store, cand.candidate_id, edit=leak)
    root = tmp_path / "sets"
    with pytest.raises(LeakRefused) as exc:
        release_from_store(store, root, "witness")
    (finding,) = exc.value.findings
    assert (finding["path"], finding["entity"], finding["rule"]) == ("$.prompt", "SECRET", "source-value")
    assert PASSPHRASE not in str(exc.value)
    record_leak_exception(
        store, evalset="witness", task_id=finding["task_id"], path="$.prompt", entity="SECRET",
        reviewer="rita", reason="a public demo passphrase",
    )
    assert release_from_store(store, root, "witness").created


def test_a_clean_release_from_store_has_no_source_finding(store: Store, tmp_path: Path) -> None:
    (cand,) = _drafted(store, _trace(10), evalset="clean")
    _approve(store, cand.candidate_id)
    assert release_from_store(store, tmp_path / "sets", "clean").created


def test_a_hyphenated_name_under_a_name_key_is_a_person_not_an_identifier() -> None:
    """``Quenneville-Ardouin`` under ``nom`` was kept as an identifier (like ``platform-team``)."""
    from flywheel.pii import is_identifier
    from flywheel.promote import Redactor, TraceStep

    assert not is_identifier(SURNAME) and not is_identifier("Jean-Pierre")
    assert is_identifier("platform-team") and is_identifier("get_weather") and is_identifier("admin")
    red = Redactor().redact_trace(
        [TraceStep(tool_name="crm", arguments=json.dumps({"nom": SURNAME, "owner": "platform-team"}))]
    )
    args = json.loads(red.steps[0].arguments or "")
    assert args["nom"].startswith("<NAME_") and args["owner"] == "platform-team"


def test_a_company_under_a_contact_key_is_no_person_for_the_witness() -> None:
    """Redaction keeps a company or product name under ``recipient`` (not person-like);
    the witness must not collect it, or a task that names the payee in its prompt
    ("pay the Spotify bill") is refused for a value redaction rightly kept. A person
    and an account number under the same key still are collected."""
    found: dict[str, str] = {}
    for value in ("Spotify", "Acme Logistics GmbH", "Marie Dupont", "US122000000121212121212"):
        collect("recipient", value, found)
    assert "Spotify" not in found and "Acme Logistics GmbH" not in found
    assert found["Marie Dupont"] == "NAME" and found["US122000000121212121212"] == "IBAN"
