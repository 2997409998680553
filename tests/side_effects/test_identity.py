"""Record identity from the document's shape: no --map hints for ordinary documents."""

from __future__ import annotations

import copy
from typing import Any

from flywheel.side_effects import JsonDocumentAdapter, Snapshot, diff


def _doc() -> dict[str, Any]:
    return {
        "users": {
            "mia_li_3668": {
                "email": "mia@x.org",
                "name": {"first": "Mia", "last": "Li"},
                "payment_methods": {
                    "card_11": {"id": "card_11", "brand": "visa"},
                    "gift_7": {"id": "gift_7", "balance": 40},
                },
                "reservations": ["HATHAT"],
            },
            "noah_ok_1200": {
                "email": "noah@x.org",
                "name": {"first": "Noah", "last": "Ok"},
                "payment_methods": {"card_98": {"id": "card_98", "brand": "amex"}},
                "reservations": [],
            },
        },
        "reservations": [
            {
                "reservation_id": "HATHAT",
                "user_id": "mia_li_3668",
                "flights": [
                    {"flight_number": "HX1", "date": "2024-05-10", "price": 200},
                    {"flight_number": "HX2", "date": "2024-05-14", "price": 210},
                ],
                "payments": [{"payment_id": "card_11", "amount": 410}],
            }
        ],
        "flights": {
            "HX1": {"origin": "SFO", "dates": {"2024-05-10": {"seats": 3}}},
            "HX2": {"origin": "SEA", "dates": {"2024-05-14": {"seats": 9}}},
        },
    }


def _snap(doc: Any) -> Snapshot:
    return Snapshot.from_records(JsonDocumentAdapter().records(doc))


def test_collections_are_found_by_shape_without_hints() -> None:
    types = {rid[0] for rid in _snap(_doc()).raw}
    assert types == {
        "users",
        "users.payment_methods",
        "reservations",
        "flights",
        "flights.dates",
    }
    assert ("users", ("mia_li_3668",)) in _snap(_doc())
    assert ("reservations", ("HATHAT",)) in _snap(_doc())  # keyed by reservation_id
    assert ("flights.dates", ("HX1", "2024-05-10")) in _snap(_doc())


def test_a_change_inside_a_records_list_is_an_update_of_that_record() -> None:
    after = copy.deepcopy(_doc())
    after["reservations"][0]["flights"][1]["flight_number"] = "HX9"
    after["reservations"][0]["payments"].append({"payment_id": "gift_7", "amount": 50})
    [d] = diff(_snap(_doc()), _snap(after))
    assert (d.kind, d.ref) == ("updated", "reservations[HATHAT]")
    assert [(c.field, c.op) for c in d.changes] == [
        ("flights[1].flight_number", "set"),
        ("payments[1]", "added"),
    ]


def test_inserting_at_the_front_of_a_records_list_is_one_added_element() -> None:
    after = copy.deepcopy(_doc())
    after["reservations"][0]["flights"].insert(
        0, {"flight_number": "HX0", "date": "2024-05-09", "price": 90}
    )
    [d] = diff(_snap(_doc()), _snap(after))
    assert [(c.field, c.op) for c in d.changes] == [("flights[0]", "added")]


def test_nested_objects_are_named_by_path_and_reorders_are_marked() -> None:
    before = _doc()
    before["users"]["mia_li_3668"]["reservations"] = ["A", "B"]
    after = copy.deepcopy(before)
    after["users"]["mia_li_3668"]["name"]["last"] = "Lee"
    after["users"]["mia_li_3668"]["reservations"] = ["B", "A"]
    [d] = diff(_snap(before), _snap(after))
    assert [(c.field, c.op) for c in d.changes] == [
        ("name.last", "set"),
        ("reservations", "reordered"),
    ]


def test_a_balance_of_a_self_keyed_map_entry_is_its_own_record() -> None:
    after = copy.deepcopy(_doc())
    after["users"]["mia_li_3668"]["payment_methods"]["gift_7"]["balance"] = 0
    [d] = diff(_snap(_doc()), _snap(after))
    assert d.ref == "users.payment_methods[mia_li_3668/gift_7]"


def test_a_struct_of_different_objects_stays_a_struct() -> None:
    doc = {"bank": {"iban": "X"}, "profile": {"name": "a", "city": "b"}}
    types = {rid[0] for rid in _snap(doc).raw}
    assert types == {"bank", "profile"}


def test_names_identify_a_top_level_list_but_not_part_of_a_record() -> None:
    doc = {"owners": [{"name": "a", "pets": [{"name": "Rex"}, {"name": "Mia"}]}]}
    types = {rid[0] for rid in _snap(doc).raw}
    assert types == {"owners"}  # pets belong to their owner's record
    assert ("owners", ("a",)) in _snap(doc)


def test_an_archive_beside_its_collection_keeps_the_records_identity() -> None:
    notice = {"notice_id": "01JRQDZ6E0KPW5TXH6CVQ70TZJ", "to": "ann@x.org", "title": "Rent due"}
    welcome = {"notice_id": "01J6WSW8ZM745ERMZ5EG87TEC2", "to": "bo@x.org", "title": "Welcome"}
    before = {"notices": [welcome, notice], "archive": []}
    after = {"notices": [welcome], "archive": [{**notice, "retracted": "2025-04-13T13:21:53Z"}]}
    got = sorted((d.kind, d.ref) for d in diff(_snap(before), _snap(after)))
    assert got == [
        ("created", "archive[01JRQDZ6E0KPW5TXH6CVQ70TZJ]"),
        ("deleted", "notices[01JRQDZ6E0KPW5TXH6CVQ70TZJ]"),
    ]


def test_a_list_of_another_shape_does_not_borrow_a_siblings_id() -> None:
    # transactions name their account by account_id, unique only by chance here
    doc = {
        "accounts": [{"account_id": "A1", "owner": "ann", "iban": "DE1", "kind": "giro"}],
        "transactions": [{"account_id": "A1", "amount": 5, "date": "2025-01-02"}],
    }
    assert ("transactions", ("0",)) in _snap(doc)
