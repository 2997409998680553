"""Adversarial tests: once a person is found in a trace, every form of the name is redacted.

Identity propagation (``flywheel.pii.name_forms`` and the redactor's literals): the words
of a found name as written, in capitals, capitalised, and -- when a word is in no word
list -- in lower case (slugs, handles, paths), with a genitive ``s``, and the handles
people make of a two-word name. Look-alikes: the lower-case ordinary words a name is made
of ("rose", "baker", "price"), and the parts of a double-barrelled name on their own.
No name is copied from a bench corpus.
"""

from __future__ import annotations

from flywheel.pii import name_forms
from flywheel.promote import redact_trace


def _steps(*texts: str) -> list[dict[str, str]]:
    return [{"tool_name": "t", "output_text": t} for t in texts]


def _out(*texts: str) -> str:
    red = redact_trace(_steps(*texts))
    return "\n".join(s.output_text or "" for s in red.steps)


def test_every_form_of_a_found_name_is_redacted() -> None:
    out = _out(
        "Refund approved for the customer Wendeline Oyarzabal, see the ticket.",
        "assignee: queue/oyarzabal-w, home /Users/wendeline.oyarzabal/Downloads",
        "Slack handle @woyarzabal; archive name wendelineoyarzabal.zip",
        "MANIFEST: OYARZABAL WENDELINE",
        "Oyarzabals Antrag liegt vor.",
    )
    for leaked in ("Oyarzabal", "oyarzabal", "OYARZABAL", "wendeline", "woyarzabal", "WENDELINE"):
        assert leaked not in out, out
    assert "queue/" in out and "/Users/" in out and ".zip" in out and "Antrag" in out


def test_lower_case_name_found_first_propagates_to_capitals() -> None:
    out = _out("its wiebke wernicke-ballhaus here, my card is lost", "Wiebke confirmed by phone.")
    assert "Wiebke" not in out and "wiebke" not in out, out


def test_ordinary_words_of_a_name_stay_in_lower_case() -> None:
    out = _out(
        "Please call Rose Baker about the order.",
        "the rose garden delivery; baker street depot; price list attached",
    )
    assert "Rose Baker" not in out, out
    assert "the rose garden" in out and "baker street" in out and "price list" in out, out


def test_parts_of_a_double_barrelled_name_stay_alone() -> None:
    forms = name_forms("Anneliese Price-Whitcombe")
    assert "Price" not in forms and "price" not in forms
    assert "Price-Whitcombe" in forms and "price-whitcombe" in forms


def test_handles_only_from_a_name_with_a_rare_word() -> None:
    assert "rosebaker" not in name_forms("Rose Baker")
    assert "wendelineoyarzabal" in name_forms("Wendeline Oyarzabal")


# -- names in capitals, members of a list, letters Unicode does not decompose -------------
def _names(text: str) -> list[str]:
    from flywheel.pii import shared_detector

    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == "NAME"]


def test_three_words_in_capitals_two_first_names_then_a_rare_surname() -> None:
    assert _names("2026-03-01;NAFISA ABDULLAHI GUTALE;0701234567;300,00") == ["NAFISA ABDULLAHI GUTALE"]
    # the log's next field after a name stays out ("DOB" is short), capitals that are words stay
    assert _names("OKAFOR, CHIDINMA DOB 1990") == ["OKAFOR, CHIDINMA"]
    assert _names("ORDER SHIPPED EXPRESS;NEXT DAY") == []


def test_a_one_word_first_name_in_a_list_with_a_found_name() -> None:
    assert "Zdzisław" in " ".join(_names("Świadkowie: Zdzisław i Halina Wróblewska."))
    assert "Berlin" not in " ".join(_names("Zeugen: Berlin und Greta Hubertzki"))  # a place, no first name


def test_first_names_with_letters_that_do_not_decompose() -> None:
    # ł, ø, ı fold by hand to the list's spelling ("Malgorzata", "Bjorn")
    assert _names("asked Małgorzata to sign") == ["Małgorzata"]
    assert _names("og så ringte Bjørn igjen") == ["Bjørn"]


def test_a_given_name_before_a_found_surname_is_another_person() -> None:
    """Family members: "Ottilie Moreau" named, "Tavita Moreau" is a second person.

    The given names are in no first-name list, so only the family name says
    they are people.
    """
    red = redact_trace(
        _steps(
            "Guardian on file: Ottilie Moreau.",
            "rider,level\nTavita Moreau,pony\nChidubem Moreau,horse\n",
            "Dear Moreau, thanks. The Moreau family; Team Moreau; Contact Moreau.",
        )
    )
    first, csv, prose = (s.output_text or "" for s in red.steps)
    assert "Tavita" not in csv and "Chidubem" not in csv and "Moreau" not in csv, csv
    guardian = first.split(": ")[1].rstrip(".")
    assert csv.count("<NAME_") == 2 and guardian not in csv  # other people, other tokens
    # Ordinary words before the surname stay: a greeting, an article, a team, a verb.
    for kept in ("Dear ", "The ", "Team ", "Contact "):
        assert kept in prose, prose
