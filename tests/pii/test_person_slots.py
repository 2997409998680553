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
