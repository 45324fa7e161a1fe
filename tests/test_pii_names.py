"""Issue 48, point 4: what the small NER model gets wrong in ordinary company text, corrected:
an e-mail address on a company's own domain beats the URL recognizer, a currency code before an
amount is no organisation, and a city is a place, not a company. Real Presidio, real spaCy."""

from __future__ import annotations

from typing import Any

import pytest

from backend.common.pii_names import is_currency_amount, relabel, trim_currency
from backend.common.sanitizer import sanitize_if_enabled
from tests.conftest import make_settings


@pytest.mark.parametrize(("text", "after", "expected"), [
    ("NOK", " 1,4", True), ("SEK", "1 25", True), ("EUR", "\u00a0150", True),
    ("NOK", " per", False),   # a code not before an amount
    ("Acme", " 1,4", False),  # not a currency code
    ("nok", " 1,4", False),   # codes are upper case
])
def test_a_currency_code_before_an_amount(text: str, after: str, expected: bool) -> None:
    assert is_currency_amount(text, after) is expected


@pytest.mark.parametrize(("text", "after", "expected"), [
    ("Stockholm SEK", " 1,", "Stockholm"), ("NOK", " 1,", ""), ("Acme Corp", " 1,", "Acme Corp"),
    ("Stockholm SEK", " per", "Stockholm SEK"),
])
def test_a_currency_code_is_trimmed_off_a_name(text: str, after: str, expected: str) -> None:
    assert trim_currency(text, after) == expected


@pytest.mark.parametrize(("text", "entity", "expected"), [
    ("Bergen", "ORGANIZATION", "LOCATION"), ("Oslo", "ORGANIZATION", "LOCATION"),
    ("Microsoft", "ORGANIZATION", "ORGANIZATION"), ("Acme Corp", "ORGANIZATION", "ORGANIZATION"),
    ("Bergen", "PERSON", "PERSON"),  # only an organisation is relabelled
])
def test_a_city_called_an_organisation_is_a_place(text: str, entity: str, expected: str) -> None:
    assert relabel(text, entity) == expected


@pytest.fixture(scope="module")
def redact(tmp_path_factory: pytest.TempPathFactory) -> Any:
    settings = make_settings(tmp_path_factory.mktemp("pii"), sanitize={"enabled": True, "mode": "redact"}).sanitize

    def run(*texts: str) -> list[str]:
        return sanitize_if_enabled(list(texts), settings, doc_ids=[str(n) for n in range(len(texts))]).texts

    return run


def test_the_issues_sentences_are_redacted_whole_and_typed_right(redact: Any) -> None:
    assert redact(
        "Contact Sigrid Aalberg at sigrid.aalberg@fjordline-travel.no or +47 55 21 43 10.",
        "Write to kari.nordmann@intranet.acme-corp.local for access.",
        "The per diem in Norway is NOK 1,400 per day; in Sweden SEK 1,250.",
        "| City | Per diem |\n| Bergen | NOK 1,400 |\n| Oslo | NOK 1,600 |",
        "Travellers to Bergen or Oslo book the hotel through the travel desk.",
    ) == [
        "Contact <PERSON> at <EMAIL_ADDRESS> or <PHONE_NUMBER>.",
        "Write to <EMAIL_ADDRESS> for access.",
        "The per diem in <LOCATION> is NOK 1,400 per day; in <LOCATION> SEK 1,250.",
        "| City | Per diem |\n| <LOCATION> | NOK 1,400 |\n| <LOCATION> | NOK 1,600 |",
        "Travellers to <LOCATION> or <LOCATION> book the hotel through the travel desk.",
    ]
