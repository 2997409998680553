"""Adversarial tests: person-shaped slots outside prose (issue 20).

The user of a home directory in a path is a person when the user name is made of a
person's name; service accounts stay. No name is copied from a bench corpus.
"""

from __future__ import annotations

import pytest

from flywheel.pii import shared_detector


def _names(text: str) -> list[str]:
    return [text[d.start : d.end] for d in shared_detector().detect(text) if d.label == "NAME"]


@pytest.mark.parametrize(
    ("text", "user"),
    [
        ("open /Users/wiebke.hollander/Documents/cv.pdf", "wiebke.hollander"),
        ("cd /home/john.smith/src && make", "john.smith"),
        ("C:\\Users\\ana-ruiz\\Desktop\\notes.txt", "ana-ruiz"),
        ('{"path": "C:\\\\Users\\\\grace_hopper\\\\x"}', "grace_hopper"),
        ("tail /home/wiebke/.bash_history", "wiebke"),
    ],
)
def test_home_directory_of_a_person(text: str, user: str) -> None:
    assert user in _names(text), _names(text)


@pytest.mark.parametrize(
    "text",
    [
        "/home/runner/work/repo",
        "/home/gitlab-runner/builds/x",
        "/Users/build-agent/ci",
        "/home/ubuntu/app",
        "/home/ec2-user/.ssh",
        "/u/will-build/tmp",
        "/home/deploy/releases",
    ],
)
def test_service_accounts_stay(text: str) -> None:
    assert _names(text) == []


# -- a first name alone at a sentence start or before 's; people named by their role -------
@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Refund sent. Wiebke confirmed it by phone.", "Wiebke"),
        ("Ottilie asked for the invoice again", "Ottilie"),
        ("notes:\nWiebke will bring the keys", "Wiebke"),
        ("we still need Ottilie's signature", "Ottilie"),
        ("Rodzice: Zdzisław, oboje z parafii", "Zdzisław"),
    ],
)
def test_lone_first_name_at_a_sentence_start_or_possessive(text: str, name: str) -> None:
    assert name in _names(text), _names(text)


@pytest.mark.parametrize(
    "text",
    [
        "Kubernetes rolled out. Monday starts the freeze.",
        "the parish of św. Floriana holds the records",  # an abbreviation, not a sentence end
        "St. Ottilien abbey shop",
        "Grafana dashboards updated. Prometheus alerts fired.",
    ],
)
def test_capitalised_sentence_starts_that_are_no_first_names(text: str) -> None:
    assert _names(text) == [], _names(text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Passport of the passenger Okwudiba found at gate 4", "Okwudiba"),
        ("la alumna Zubiaurre llegó tarde", "Zubiaurre"),
        ("der Mitarbeiter Quellhorst-Aue hat unterschrieben", "Quellhorst-Aue"),
    ],
)
def test_people_named_by_their_role(text: str, name: str) -> None:
    assert name in _names(text), _names(text)


@pytest.mark.parametrize(
    "text",
    ["Student Flex plan renewed", "passenger Airbus A320 delayed", "insured Allianz policy lapsed"],
)
def test_role_words_before_products_and_firms(text: str) -> None:
    assert _names(text) == [], _names(text)


@pytest.mark.parametrize(
    "text",
    [
        "Claim opened on the policy (Skoda Fabia 1.0) yesterday",  # a make in parentheses first
        "the hire car is a yellow Yaris 1.5 hybrid",  # a model code after it
    ],
)
def test_car_models_named_like_people_stay(text: str) -> None:
    assert _names(text) == [], _names(text)


# -- greetings and closings -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Best,\nMarisol", "Marisol"),  # a closing the cheap gate must let through
        ("Saludos,\nBegoña", "Begoña"),
        ("Hola Íñigo, te confirmo la reserva.", "Íñigo"),  # listed as "Iñigo": accents folded both ways
        ("Dear Anna Hall,\nthanks for the call", "Anna Hall"),  # a surname that heads places too
        ("Hi Susan Park, your order shipped", "Susan Park"),
    ],
)
def test_people_after_greetings_and_closings(text: str, name: str) -> None:
    assert name in _names(text), _names(text)


@pytest.mark.parametrize(
    "text",
    [
        "Best regards,\nThe Support Team",
        "Thanks,\nThe Billing Team",
        "Regards,\nAcme Support",
        "Hi Central Park visitors!",
        "Visit Austin Stack Park today",
    ],
)
def test_teams_and_places_after_greetings_stay(text: str) -> None:
    assert _names(text) == [], _names(text)
