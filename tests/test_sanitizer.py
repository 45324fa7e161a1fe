"""PII sanitizing with the real Presidio analyzer and the installed spaCy model.

The analyzer is cached per process, so the model loads once for the session; the
module fixture only makes that first load happen before the first test.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from backend.common.config import SanitizeSettings, load_settings
from backend.common.errors import ConfigError, SanitizerError
from backend.common.sanitizer import PiiFinding, sanitize_if_enabled, write_findings

FIXTURES = Path(__file__).parent / "fixtures" / "pii"
DOCUMENT = (FIXTURES / "pii_laden.txt").read_text(encoding="utf-8")
VALUES: dict[str, list[str]] = json.loads((FIXTURES / "pii_values.json").read_text(encoding="utf-8"))
ALL_VALUES = [v for values in VALUES.values() for v in values]


def sanitize(settings: SanitizeSettings, *texts: str) -> Any:
    return sanitize_if_enabled(list(texts), settings, doc_ids=[f"doc-{i}" for i in range(len(texts))])


@pytest.fixture(scope="module")
def redact() -> SanitizeSettings:
    settings = SanitizeSettings(enabled=True, mode="redact")
    sanitize(settings, "warm-up: load the spaCy model once")
    return settings


@pytest.fixture(scope="module")
def audit(redact: SanitizeSettings) -> SanitizeSettings:
    return redact.model_copy(update={"mode": "audit"})


def test_redact_replaces_every_pii_value_of_the_fixture_with_typed_placeholders(redact: SanitizeSettings) -> None:
    out = sanitize(redact, DOCUMENT).texts[0]
    leaked = [v for v in ALL_VALUES if v in out]
    assert leaked == []
    counts = {t: out.count(f"<{t}>") for t in VALUES}
    assert counts == {"PERSON": 3, "EMAIL_ADDRESS": 2, "PHONE_NUMBER": 2, "IBAN_CODE": 1, "US_SSN": 1,
                      "CREDIT_CARD": 1, "IP_ADDRESS": 1, "LOCATION": 1}
    assert "Payroll: the monthly salary is paid to IBAN <IBAN_CODE>." in out


@pytest.mark.parametrize(
    ("entity", "text", "value"),
    [
        ("PERSON", "The contract was signed by Alexander Hamilton yesterday.", "Alexander Hamilton"),
        ("EMAIL_ADDRESS", "Send the invoice to billing.team@acme-corp.co.uk today.", "billing.team@acme-corp.co.uk"),
        ("PHONE_NUMBER", "Call the front desk on (646) 555-0142 after nine.", "(646) 555-0142"),
        ("CREDIT_CARD", "Charge it to 5500 0000 0000 0004, expiring in May.", "5500 0000 0000 0004"),
        ("IBAN_CODE", "Refunds go to GB82 WEST 1234 5698 7654 32 within a week.", "GB82 WEST 1234 5698 7654 32"),
        ("US_SSN", "Her social security number is 219-09-9999 per the form.", "219-09-9999"),
        ("IP_ADDRESS", "The backup job runs on host 172.16.4.20 every night.", "172.16.4.20"),
        ("LOCATION", "The team moved from Denver to Berlin last spring.", "Berlin"),
    ],
)
def test_each_default_entity_is_found_in_a_realistic_sentence(
    audit: SanitizeSettings, entity: str, text: str, value: str
) -> None:
    findings = sanitize(audit, text).findings
    assert [(f.entity_type, text[f.start:f.end]) for f in findings if f.entity_type == entity][-1] == (entity, value)


def test_audit_leaves_text_unchanged_and_records_types_offsets_and_scores(audit: SanitizeSettings) -> None:
    outcome = sanitize(audit, DOCUMENT)
    assert outcome.texts == [DOCUMENT]
    found = sorted((f.entity_type, DOCUMENT[f.start:f.end]) for f in outcome.findings)
    assert found == sorted((t, v) for t, values in VALUES.items() for v in values)
    assert all(f.doc_id == "doc-0" for f in outcome.findings)
    scores = {DOCUMENT[f.start:f.end]: f.score for f in outcome.findings}
    assert scores["4111 1111 1111 1111"] == 1.0
    assert scores["Maria Gonzalez"] == 0.85
    assert scores["+1 415 555 0134"] == 0.95  # international (0.6) with a context word ("reached") near it


def test_findings_objects_never_hold_the_raw_values(audit: SanitizeSettings) -> None:
    findings = sanitize(audit, DOCUMENT).findings
    dumped = repr(findings) + json.dumps([asdict(f) for f in findings])
    assert [v for v in ALL_VALUES if v in dumped] == []
    assert set(asdict(findings[0])) == {"doc_id", "entity_type", "start", "end", "score"}


def test_write_findings_appends_json_lines_without_values(audit: SanitizeSettings, tmp_path: Path) -> None:
    findings = sanitize(audit, DOCUMENT).findings
    path = tmp_path / "audit" / "nested" / "pii.jsonl"
    write_findings(path, findings)
    write_findings(path, findings[:2])
    raw = path.read_text(encoding="utf-8")
    assert [v for v in ALL_VALUES if v in raw] == []
    records = [json.loads(line) for line in raw.splitlines()]
    assert len(records) == len(findings) + 2
    assert set(records[0]) == {"entity_type", "start", "end", "score", "doc_id", "recorded_at"}
    first = findings[0]
    assert (records[0]["entity_type"], records[0]["start"], records[0]["end"], records[0]["doc_id"]) == (
        first.entity_type, first.start, first.end, "doc-0")
    assert records[0]["recorded_at"].endswith("+00:00")


def test_write_findings_with_nothing_to_record_creates_no_file(tmp_path: Path) -> None:
    write_findings(tmp_path / "audit" / "pii.jsonl", [])
    assert not (tmp_path / "audit").exists()


def test_batch_keeps_each_documents_findings_and_offsets_apart(redact: SanitizeSettings) -> None:
    texts = ["Write to ops@example.org please.", "", "No personal data in this sentence at all.",
             "Ask Maria Gonzalez, not ops@example.org."]
    outcome = sanitize_if_enabled(texts, redact, doc_ids=["a", "b", "c", "d"])
    assert outcome.texts == ["Write to <EMAIL_ADDRESS> please.", "", "No personal data in this sentence at all.",
                             "Ask <PERSON>, not <EMAIL_ADDRESS>."]
    assert [(f.doc_id, f.entity_type, texts["abcd".index(f.doc_id)][f.start:f.end]) for f in outcome.findings] == [
        ("a", "EMAIL_ADDRESS", "ops@example.org"),
        ("d", "PERSON", "Maria Gonzalez"),
        ("d", "EMAIL_ADDRESS", "ops@example.org"),
    ]


def test_long_document_is_analysed_in_pieces_with_offsets_relative_to_the_whole_text(redact: SanitizeSettings) -> None:
    filler = "The quarterly figures were reviewed by the committee and approved without changes. "
    long_line = filler * 4 + "Pay with card 4111 1111 1111 1111 only. " + filler * 3
    text = (filler * 3 + "\n") * 3 + long_line + "\nMail maria.gonzalez@example.com today.\n"
    settings = redact.model_copy(update={"max_piece_chars": 200})
    outcome = sanitize(settings, text)
    located = [(f.entity_type, text[f.start:f.end]) for f in outcome.findings]
    assert located == [("CREDIT_CARD", "4111 1111 1111 1111"), ("EMAIL_ADDRESS", "maria.gonzalez@example.com")]
    assert outcome.texts[0] == text.replace("4111 1111 1111 1111", "<CREDIT_CARD>").replace(
        "maria.gonzalez@example.com", "<EMAIL_ADDRESS>")


def test_card_number_cut_by_a_piece_boundary_is_still_redacted_whole(redact: SanitizeSettings) -> None:
    before = ("The committee reviewed the travel budget and approved it without changes. " * 3)[:190]
    after = " and the refund follows within a week of the request."
    text = before + " card 4111 1111 1111 1111" + after
    assert text.index("4111") < 200 < text.index("4111") + 19
    settings = redact.model_copy(update={"max_piece_chars": 200})
    assert sanitize(settings, text).texts[0] == before + " card <CREDIT_CARD>" + after


@pytest.mark.parametrize(
    ("text", "thresholds", "found"),
    [
        ("Reference 536-22-8519 was filed.", None, [("US_SSN", "536-22-8519", 0.5)]),
        ("SSN: 536228519 on the form.", None, [("US_SSN", "536228519", 0.4)]),
        ("SSN: 536228519 on the form.", {}, []),
        ("Order 536228519 shipped on time.", None, []),
        ("Her SSN is 078-05-1120 per the card.", None, []),
    ],
    ids=["dashed-no-context", "bare-9-digits-after-ssn", "bare-with-global-0.5", "bare-no-context", "published-sample"],
)
def test_us_ssn_score_depends_on_format_and_context(
    audit: SanitizeSettings, text: str, thresholds: dict[str, float] | None, found: list[tuple[str, str, float]]
) -> None:
    """Presidio scores 3-2-4 SSNs 0.5 (0.85 with context) and bare 9 digits 0.05 (0.4 after "SSN")."""
    settings = audit.model_copy(update={"entities": ("US_SSN",)})
    if thresholds is not None:
        settings = settings.model_copy(update={"entity_thresholds": thresholds})
    findings = sanitize(settings, text).findings
    assert [(f.entity_type, text[f.start:f.end], f.score) for f in findings] == found


def test_phone_without_context_word_needs_the_lower_phone_threshold(audit: SanitizeSettings) -> None:
    """A national-format number with no context word scores 0.45 (international ones 0.6)."""
    text = "For urgent matters John is on 415 555 0134."
    phones = lambda s: [text[f.start:f.end] for f in sanitize(s, text).findings if f.entity_type == "PHONE_NUMBER"]  # noqa: E731
    assert phones(audit) == ["415 555 0134"]
    assert phones(audit.model_copy(update={"entity_thresholds": {}})) == []


def test_score_threshold_from_config_drops_lower_scored_findings(audit: SanitizeSettings) -> None:
    strict = audit.model_copy(update={"score_threshold": 0.9, "entity_thresholds": {}})
    types = sorted({f.entity_type for f in sanitize(strict, DOCUMENT).findings})
    assert types == ["CREDIT_CARD", "EMAIL_ADDRESS", "IBAN_CODE", "PHONE_NUMBER"]  # phones with a context word


def test_only_configured_entities_are_redacted(redact: SanitizeSettings) -> None:
    only_email = redact.model_copy(update={"entities": ("EMAIL_ADDRESS",)})
    out = sanitize(only_email, "Maria Gonzalez <maria.gonzalez@example.com> called from 192.168.10.24.").texts[0]
    assert out == "Maria Gonzalez <<EMAIL_ADDRESS>> called from 192.168.10.24."


def test_overlapping_ip_and_location_become_one_ip_finding(audit: SanitizeSettings) -> None:
    """spaCy labels some IP addresses as places; the pattern recognizer's type names the span."""
    text = "The server at 10.0.0.12 was patched."
    assert [(f.entity_type, text[f.start:f.end]) for f in sanitize(audit, text).findings] == [
        ("IP_ADDRESS", "10.0.0.12")]


def test_questions_are_redacted_like_documents(redact: SanitizeSettings) -> None:
    out = sanitize_if_enabled(["What is the leave balance of john.smith@corp-mail.net?"], redact, doc_ids=["question"])
    assert out.texts == ["What is the leave balance of <EMAIL_ADDRESS>?"]
    assert [(f.doc_id, f.entity_type) for f in out.findings] == [("question", "EMAIL_ADDRESS")]


def test_one_doc_id_per_text_is_required(redact: SanitizeSettings) -> None:
    with pytest.raises(SanitizerError, match=r"got 2 texts but 1 doc_ids"):
        sanitize_if_enabled(["a", "b"], redact, doc_ids=["only-one"])


def test_seed_flags_set_the_sanitize_settings(tmp_path: Path) -> None:
    env = {"SANITIZE_ENABLED": "1", "SANITIZE_MODE": "audit", "SANITIZE_ENTITIES": "EMAIL_ADDRESS, PERSON",
           "SANITIZE_SCORE_THRESHOLD": "0.7"}
    s = load_settings(Path(__file__).parents[1] / "config" / "rag.yaml", env=env).sanitize
    assert (s.enabled, s.mode, s.entities, s.score_threshold) == (True, "audit", ("EMAIL_ADDRESS", "PERSON"), 0.7)
    assert s.audit_path == "data/audit/pii_findings.jsonl"


def test_unknown_entity_and_out_of_range_entity_threshold_fail_at_load() -> None:
    config = Path(__file__).parents[1] / "config" / "rag.yaml"
    with pytest.raises(ConfigError, match=r"sanitize\.entities\.0"):
        load_settings(config, env={"SANITIZE_ENTITIES": "SOCIAL_NUMBER"})
    with pytest.raises(ConfigError, match=r"entity_thresholds\.PHONE_NUMBER must be between 0 and 1, got 1\.5"):
        load_settings(config, overrides={"sanitize": {"entity_thresholds": {"PHONE_NUMBER": 1.5}}}, env={})


def test_finding_is_a_frozen_record() -> None:
    finding = PiiFinding(doc_id="d", entity_type="PERSON", start=0, end=4, score=0.85)
    with pytest.raises(AttributeError):
        finding.start = 1  # type: ignore[misc]
