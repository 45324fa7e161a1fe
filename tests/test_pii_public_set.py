"""The public labelled PII set's adapter (DataMade's parserator training data) and the false-positive set.

The adapter tests read rows written here in the set's own format, and the committed copies of the
set itself; the section tests run the real Presidio and spaCy model on a handful of texts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.benchmarks import pii_fp, pii_public
from backend.common.config import SanitizeSettings
from backend.common.sanitizer import sanitize_if_enabled
from backend.benchmarks.pii_public import (ADDRESS_TAGS, COMPANY_TAGS, PERSON_TAGS, UNSCORED, PublicSetError,
                                           address_sample, parse_rows, whole_row_sample)

ADDRESSES = """<AddressCollection>
  <AddressString><Recipient>Joe's</Recipient> <Recipient>Pub,</Recipient> <AddressNumber>123</AddressNumber> \
<StreetNamePreDirectional>W</StreetNamePreDirectional> <StreetName>Main</StreetName> \
<StreetNamePostType>St.,</StreetNamePostType> <PlaceName>North</PlaceName> <PlaceName>Bend,</PlaceName> \
<StateName>OR</StateName> <ZipCode>97212</ZipCode> <ZipPlus4>4321</ZipPlus4></AddressString>
  <AddressString><USPSBoxType>PO</USPSBoxType> <USPSBoxType>Box</USPSBoxType> <USPSBoxID>63,</USPSBoxID> \
<PlaceName>Cordova,</PlaceName> <StateName>AK</StateName> <ZipCode>99574</ZipCode></AddressString>
  <AddressString><AddressNumber>3600</AddressNumber> <StreetName>West</StreetName> \
<StreetNamePostType>Ave</StreetNamePostType> <NotAddress>(closed)</NotAddress></AddressString>
</AddressCollection>
"""


def _values(sample: object) -> list[tuple[str, str]]:
    return sample.values()  # type: ignore[attr-defined, no-any-return]


def test_address_rows_map_to_street_address_zip_and_city() -> None:
    rows = parse_rows(ADDRESSES, "AddressString", ADDRESS_TAGS, "a.xml")
    street, box, bare = (address_sample(r) for r in rows)

    assert street.text == "Joe's Pub, 123 W Main St., North Bend, OR 97212 4321"
    assert sorted(_values(street)) == [
        ("LOCATION", "North Bend"),
        ("STREET_ADDRESS", "123 W Main St., North Bend, OR 97212 4321"),  # the recipient is not part of it
        (UNSCORED, "Joe's Pub"),
        ("ZIP_CODE", "97212"),
    ]
    # a PO box is address text the product does not claim: its ZIP and city are scored, the rest is not
    assert sorted(_values(box)) == [("LOCATION", "Cordova"), (UNSCORED, "PO Box 63, Cordova, AK 99574"),
                                    ("ZIP_CODE", "99574")]
    # NotAddress text stays non-PII; the address ends before it
    assert _values(bare) == [("STREET_ADDRESS", "3600 West Ave")]
    assert pii_public.non_pii_chars([street, box, bare]) == len(", ") + len(" (closed)")


def test_person_and_company_rows_are_whole_values() -> None:
    people = parse_rows("<NameCollection>\n  <Name><Surname>Russell,</Surname> <GivenName>Herman</GivenName></Name>\n"
                        "  <Name><GivenName>VALERY</GivenName>\n  </Name>\n</NameCollection>", "Name", PERSON_TAGS,
                        "p.xml")
    assert [_values(whole_row_sample(r, "PERSON", "p")) for r in people] == [
        [("PERSON", "Russell, Herman")], [("PERSON", "VALERY")]]
    company = parse_rows("<NameCollection><Name><CorporationName>swidler</CorporationName> "
                         "<CorporationNameAndCompany>&amp;</CorporationNameAndCompany> "
                         "<CorporationNameAndCompany>co,</CorporationNameAndCompany> "
                         "<CorporationLegalType>llc</CorporationLegalType></Name></NameCollection>",
                         "Name", COMPANY_TAGS, "c.xml")
    assert _values(whole_row_sample(company[0], "ORGANIZATION", "c")) == [("ORGANIZATION", "swidler & co, llc")]


@pytest.mark.parametrize(("row", "message"), [
    ("<AddressString><AddressNumber>1</AddressNumber> <Street>Main</Street></AddressString>",
     "unknown tag <Street>"),
    ("<AddressString><AddressNumber>1</AddressNumber> <StreetName>Main</AddressString>", "not well-formed XML"),
    ("<AddressString>just text</AddressString>", "no labelled token"),
    ("<AddressString><AddressNumber> </AddressNumber></AddressString>", "empty <AddressNumber>"),
])
def test_a_malformed_row_is_named_by_file_line_and_row(row: str, message: str) -> None:
    text = ADDRESSES.replace("</AddressCollection>", f"  {row}\n</AddressCollection>")
    with pytest.raises(PublicSetError) as err:
        parse_rows(text, "AddressString", ADDRESS_TAGS, "set/labeled.xml")
    assert str(err.value).startswith("set/labeled.xml:5: row 4: ")
    assert message in str(err.value)


def test_the_committed_copies_load_whole_and_a_missing_folder_is_skipped_with_a_note(tmp_path: Path) -> None:
    by_file = pii_public.load()
    assert {name: len(rows) for name, rows in by_file.items()} == {
        pii_public.ADDRESS_FILE: 1513, pii_public.PERSON_FILE: 2898, pii_public.COMPANY_FILE: 1383}
    chosen = pii_public.select(by_file)
    assert len(chosen) == 1500 and chosen == pii_public.select(by_file)  # seeded: the same draw every run
    labels = {p.label for s in chosen for p in s.planted}
    assert labels == set(pii_public.LABELS) | {UNSCORED}

    section = pii_public.measure(directory=tmp_path)
    assert section.title.endswith(": skipped") and not section.targets
    assert "usaddress_labeled.xml not found" in section.notes[0] and "README" in section.notes[0]


def test_the_public_section_compares_with_presidio_on_a_few_rows() -> None:
    files = (pii_public.ADDRESS_FILE, pii_public.PERSON_FILE, pii_public.COMPANY_FILE)
    section = pii_public.measure(counts=dict.fromkeys(files, 6))
    names = [t[0] for t in section.targets]
    assert names[:3] == ["recall STREET_ADDRESS - presidio", "recall ZIP_CODE - presidio",
                         "recall LOCATION - presidio"]
    assert "address whole-value coverage" in names and "throughput / bare Presidio" in names
    assert "over-redaction not measurable here" in " ".join(section.notes)  # 18 short rows: too few characters
    assert section.figures["texts per file"] == "usaddress 6, probablepeople-person 6, probablepeople-company 6"


def test_luhn_order_numbers_are_valid_and_the_false_positive_set_is_seeded() -> None:
    from backend.common.pii_recognizers import luhn_valid

    samples = pii_fp.generate(seed=5, per_kind=20)
    assert [s.template for s in samples[::20]] == list(pii_fp.KINDS)
    orders = [s.text[p.start:p.end].replace(" ", "") for s in samples if s.template == "order" for p in s.planted]
    assert len(orders) == 20 and all(luhn_valid(o) for o in orders)
    assert all(s.text[p.start:p.end] == "MIT" for s in samples if s.template.startswith("mit") for p in s.planted)
    assert [s.text for s in samples] == [s.text for s in pii_fp.generate(seed=5, per_kind=20)]
    assert pii_fp.luhn_check_digit("7992739871") == "3"  # the textbook example


def test_false_positive_rates_count_only_trap_values_touched() -> None:
    samples = [s for s in pii_fp.generate(seed=5, per_kind=2)]
    spans: list[list[tuple[int, int]]] = [[] for _ in samples]
    first_order = samples[0].planted[0]
    spans[0] = [(first_order.start, first_order.start + 2)]  # a finding touching one order number
    rates = pii_fp.flag_rates(samples, spans)
    assert rates["order"][0] == 0.5 and rates["decimal"] == (0.0, 0.0)
    traps = sum(len(s.planted) for s in samples if s.template in pii_fp.FALSE_POSITIVE_KINDS)
    assert pii_fp.false_positive_rate(samples, spans) == pytest.approx(1 / traps)


def test_the_false_positive_section_reports_every_kind_for_both_systems() -> None:
    section = pii_fp.measure(per_kind=3)
    for kind in pii_fp.KINDS:
        assert section.figures[f"  {kind}"].count("/") == 2, kind
    assert [t[0] for t in section.targets] == ["false positives on order numbers, decimals, MIT licence"]


@pytest.fixture(scope="module")
def audit() -> SanitizeSettings:
    settings = SanitizeSettings(enabled=True, mode="audit")
    sanitize_if_enabled(["warm-up"], settings, doc_ids=["w"])
    return settings


def _found(settings: SanitizeSettings, text: str) -> list[tuple[str, str]]:
    out = sanitize_if_enabled([text], settings, doc_ids=["d"])
    return [(f.entity_type, text[f.start:f.end]) for f in out.findings]


@pytest.mark.parametrize("text", [
    "Order 4806756919335054 was shipped on the third working day.",
    "Please quote invoice number 4539 1488 0343 6467 when you pay.",
    "Your return for order no. 5605 4742 7019 7341 has been received.",
    "Ticket 4451 1657: the nightly export failed twice.",
    "Tracking number 68073021573684 shows the parcel at the hub.",
])
def test_a_luhn_valid_number_after_an_order_invoice_or_ticket_cue_is_no_card_or_phone(
        audit: SanitizeSettings, text: str) -> None:
    assert not [f for f in _found(audit, text) if f[0] in ("CREDIT_CARD", "PHONE_NUMBER")]


@pytest.mark.parametrize(("text", "entity", "value"), [
    ("The order was paid with card 4806 7569 1933 5054 yesterday.", "CREDIT_CARD", "4806 7569 1933 5054"),
    ("Card number for the order: 4539148803436467.", "CREDIT_CARD", "4539148803436467"),
    ("Call the order desk on +44 20 7946 0958 before noon.", "PHONE_NUMBER", "+44 20 7946 0958"),
])
def test_cards_and_phones_near_the_word_order_are_still_found(audit: SanitizeSettings, text: str, entity: str,
                                                              value: str) -> None:
    assert (entity, value) in _found(audit, text)


@pytest.mark.parametrize("text", [
    "The library is released under the MIT License, so it can be used in commercial products.",
    "We chose the MIT licence because it is short and permissive.",
    "License: MIT. Contributions are welcome through pull requests.",
    "The parser is MIT-licensed and maintained by a small group of volunteers.",
])
def test_mit_as_the_software_licence_is_no_organisation(audit: SanitizeSettings, text: str) -> None:
    assert not [value for entity, value in _found(audit, text) if entity == "ORGANIZATION" and "MIT" in value]


def test_mit_the_university_is_still_an_organisation(audit: SanitizeSettings) -> None:
    assert ("ORGANIZATION", "MIT") in _found(audit, "Researchers at MIT published the benchmark last year.")


def test_rag_bench_passes_the_pii_set_folder_to_the_pii_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from backend.benchmarks import runner
    from backend.cli.main import cli

    seen: dict[str, object] = {}

    def fake_run(*args: object, **kwargs: object) -> list[object]:
        seen.update(sections=args[2], pii_set=kwargs.get("pii_set"))
        return []

    monkeypatch.setattr(runner, "run", fake_run)
    result = CliRunner().invoke(cli, ["bench", "--section", "pii", "--pii-set", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert seen == {"sections": ("pii",), "pii_set": tmp_path}
