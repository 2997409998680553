"""The core tool-semantics model: sources, precedence, bad input, the store tables."""

from __future__ import annotations

import pytest

from flywheel.tools import (
    MCP_DEFAULTS,
    ToolCatalog,
    ToolDeclarationError,
    ToolDefinition,
    ToolObservation,
    call_semantics,
    import_manifest,
    load_observations,
    manifest_entries,
    parse_manifest,
    project_catalog,
    record_observations,
    set_tool,
    split_name,
    tool_semantics,
)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("VenmoWithdrawMoney", ["venmo", "withdraw", "money"]),
        ("send_money", ["send", "money"]),
        ("create-issue", ["create", "issue"]),
        ("github.repos.delete", ["github", "repos", "delete"]),
        ("HTTPGetJSON", ["http", "get", "json"]),
        ("getURLContent", ["get", "url", "content"]),
    ],
)
def test_names_split_in_every_case_style(name: str, words: list[str]) -> None:
    assert split_name(name) == words


@pytest.mark.parametrize(
    ("name", "effect"),
    [
        ("AugustSmartLockUnlockDoor", "destructive"),  # "lock" is a noun here
        ("SmartLockGetStatus", "read"),
        ("GmailReadEmail", "read"),
        ("GoogleCalendarGetEventsFromSharedCalendar", "read"),  # "shared" is an adjective
        ("email_user", "additive"),  # an ambiguous word is the verb when alone
        ("is_available", "read"),
        ("storage.buckets.delete", "destructive"),
        ("WeatherForecast", "read"),
    ],
)
def test_effect_from_the_names_verb(name: str, effect: str) -> None:
    sem = tool_semantics(name)
    assert sem.effect.value == effect
    assert sem.effect.source == "inferred"


def test_unknown_tool_is_a_cautious_write() -> None:
    sem = tool_semantics("zorblax")
    assert sem.writes and sem.sensitive and sem.open_world
    assert sem.effect.source == "default" and sem.effect.confidence < 0.5


def test_description_and_schema_decide_when_the_name_cannot() -> None:
    d = ToolDefinition(
        "acme_widget",
        "Transfers funds from the user's wallet to another account.",
        {"type": "object", "properties": {"amount": {"type": "number"},
                                          "notify": {"type": "string", "format": "email"}}},
    )
    sem = tool_semantics("acme_widget", d)
    assert sem.effect.value == "additive" and sem.effect.origin.startswith("description")
    assert "money" in sem.touches.value and not sem.reversible.value


def test_action_argument_and_http_method_refine_a_call() -> None:
    assert call_semantics("FileManager", {"action": "delete", "path": "/a"}).effect.value == (
        "destructive"
    )
    assert call_semantics("http_request", {"method": "GET", "url": "https://x.io"}).read_only
    assert call_semantics("http_request", {"method": "DELETE", "url": "https://x.io"}).writes
    # an action never makes a named write harmless
    assert call_semantics("delete_file", {"mode": "list"}).writes


def test_mcp_annotations_and_their_defaults() -> None:
    read = ToolDefinition("zorblax", annotations={"readOnlyHint": True})
    sem = tool_semantics("zorblax", read)
    assert sem.read_only and sem.effect.source == "declared"
    # an annotations object that leaves hints out takes the spec's defaults
    sem = tool_semantics("get_thing", ToolDefinition("get_thing", annotations={"title": "x"}))
    assert MCP_DEFAULTS["destructiveHint"] and sem.effect.value == "destructive"
    assert sem.effect.origin.startswith("MCP default") and sem.open_world
    closed = ToolDefinition("zorblax", annotations={"readOnlyHint": False,
                                                    "destructiveHint": False,
                                                    "openWorldHint": False, "x-vendor": 1})
    sem = tool_semantics("zorblax", closed)
    assert (sem.effect.value, sem.reach.value, sem.ignored_keys) == ("additive", "closed", ("x-vendor",))


def test_malformed_annotation_names_tool_and_field() -> None:
    sem = tool_semantics("t1", ToolDefinition("t1", annotations={"readOnlyHint": "yes"}))
    assert sem.problems == ("tool 't1': annotation readOnlyHint must be true or false, got 'yes'",)
    with pytest.raises(ToolDeclarationError, match="tool 'x': field effect must be one of"):
        parse_manifest('[tools.x]\neffect = "maybe"\n')
    with pytest.raises(ToolDeclarationError, match="tool 'x': unknown field 'efect'"):
        parse_manifest('{"tools": {"x": {"efect": "read"}}}')
    with pytest.raises(ToolDeclarationError, match="not valid TOML"):
        parse_manifest("[tools.x\n")


def test_precedence_manifest_over_observed_over_attributes_over_inference() -> None:
    manifest = parse_manifest('[tools.get_report]\neffect = "read"\n')
    cat = ToolCatalog(observations=[ToolObservation("get_status", True, "row updated")])
    assert cat.semantics("get_status").effect.source == "observed"
    assert cat.semantics("get_status").writes  # whatever the name says
    cat.add_attributes("list_things", {"flywheel.tool.effect": "write"})
    assert cat.semantics("list_things").effect.origin == "span attribute"
    cat = ToolCatalog(manifest=manifest,
                      observations=[ToolObservation("get_report", True, "file written")])
    assert cat.semantics("get_report").read_only  # the user's override is final
    cat.add_attributes("x", {"flywheel.tool.reach": "sideways"})
    assert "field reach must be one of" in cat.semantics("x").problems[0]


def test_every_decision_says_its_source() -> None:
    d = tool_semantics("VenmoWithdrawMoney").as_dict()
    for key in ("effect", "reach", "touches", "reversible", "idempotent"):
        assert d[key]["source"] in ("declared", "observed", "inferred", "default")
        assert d[key]["origin"]
    assert d["touches"]["value"] == ["money"] and d["tier"] == "irreversible"


def test_manifest_and_observations_in_the_store(store) -> None:
    names = import_manifest(store, "p1", '[tools.NukeIt]\neffect = "destructive"\nreversible = false\n')
    assert names == ["NukeIt"] and manifest_entries(store, "p2") == {}
    set_tool(store, "p1", "list_stuff", {"effect": "additive"})
    record_observations(store, "p1", "t1", [ToolObservation("peek_value", True, "x changed")])
    record_observations(store, "p1", "t2", [ToolObservation("peek_value", False)])
    [obs] = load_observations(store, "p1")
    assert (obs.tool, obs.changed_state, obs.count) == ("peek_value", True, 2)
    cat = project_catalog(store, "p1")
    assert cat.semantics("NukeIt").effect.source == "declared"
    assert cat.semantics("list_stuff").writes and cat.semantics("peek_value").writes
    assert project_catalog(store, "p2").semantics("list_stuff").read_only
    with pytest.raises(ToolDeclarationError):
        import_manifest(store, "p1", '[tools.a]\neffect = "read"\n[tools.b]\ntouches = ["gold"]\n')
    assert "a" not in manifest_entries(store, "p1")  # nothing stored from a bad document
