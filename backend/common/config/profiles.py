"""Ingestion profiles (chunker, prefixes, enrichment), domains and the default alias."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, SecretStr, field_validator, model_validator

from backend.common.config.base import Distance, RetrySettings, _Model, placeholders, validate_table_name
from backend.common.config.llm import LocalLlmSettings
from backend.common.config.strategies import FusionSettings, LexicalSettings


class ChunkerSettings(_Model):
    kind: Literal["char", "tokens", "conditional"] = Field("conditional", description="Chunking strategy.")
    size: int = Field(1200, ge=16, description="Target chunk size (characters, or tokens for `tokens`).")
    overlap: int = Field(150, ge=0, description="Overlap between consecutive chunks.")
    min_chars_before_split: int = Field(2000, ge=0, description="`conditional`: one chunk up to this many characters.")
    dedupe: bool = Field(True, description="Drop exact duplicate chunks within a document at ingest; search collapses duplicates across documents.")

    @model_validator(mode="after")
    def _overlap_below_size(self) -> "ChunkerSettings":
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


EnrichmentProvider = Literal["none", "extractive", "local_llm", "openai_compat", "oci"]


class EnrichmentSettings(_Model):
    """Seeds 000/001/002: per-chunk summary, content type, typed metadata and hypothetical
    questions; page and document summaries. Cached by chunk content hash + prompt version +
    provider/model, and part of every document's fingerprint (a change builds a new version)."""

    provider: EnrichmentProvider = Field(
        "none", description="none; extractive (offline, non-generative: best sentences, rules, templated questions); "
        "local_llm (Gemma 3 270M GGUF via llama-cpp-python, extra `local-llm`); openai_compat; oci. The default is "
        "none because neither extractive nor local_llm enrichment improved retrieval on the measured sets "
        "(docs/ENRICHMENT.md, docs/BENCHMARKS.md).")
    questions: int = Field(8, ge=0, le=10, description="Hypothetical questions per chunk (seed 001 asks for 8-10; "
                           "0 = none).")
    summaries: bool = Field(True, description="Build and embed a summary per page (PDF page or top heading) and "
                            "per document (seed 002).")
    prompt_version: str = Field("1", min_length=1, max_length=40, description="Bump when the prompt (or the "
                                "extractive rules) change: cached results of another version are not reused and "
                                "every document is re-enriched into a new version.")
    model: str | None = Field(None, description="openai_compat / oci: the model name or OCID (oci falls back to "
                              "embeddings.oci.chat_model_id).")
    base_url: str | None = Field(None, description="openai_compat: e.g. http://127.0.0.1:8000/v1")
    api_key: SecretStr | None = Field(None, description="openai_compat key; environment only.")
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature of the generative providers.")
    max_tokens: int = Field(400, ge=32, le=4096, description="Longest structured answer per chunk, in tokens "
                            "(caps the cost: grammar-constrained JSON is slow on the local model).")
    timeout_s: float = Field(60.0, gt=0, description="Read timeout of one remote enrichment request.")
    batch_size: int = Field(8, ge=1, le=256, description="Chunks enriched per cache round trip and progress step "
                            "(remote providers still get one request per chunk).")
    rate_limit_per_min: int = Field(0, ge=0, description="Token-bucket limit of enrichment requests per minute; 0 = none.")
    retry: RetrySettings = Field(RetrySettings(max_attempts=3),
                                 description="openai_compat / oci: retries of 429, 5xx and timeouts (tenacity).")
    local: LocalLlmSettings = LocalLlmSettings()

    @model_validator(mode="after")
    def _provider_needs(self) -> "EnrichmentSettings":
        if self.provider == "openai_compat" and (not self.base_url or not self.model):
            raise ValueError("provider openai_compat needs base_url and model")
        return self


def _table_name(what: str) -> AfterValidator:
    """Field metadata: the value passes ``validate_table_name``, errors naming the setting ``what``."""
    return AfterValidator(lambda v: validate_table_name(v, what))


IndexName = Annotated[str, _table_name("index_name")]
AliasName = Annotated[str, _table_name("alias name")]


class ProfileSettings(_Model):
    index_name: IndexName = Field(..., description="Physical table (index version) this profile writes.")
    distance: Distance = Field("cosine", description="Distance metric of the version.")
    chunker: ChunkerSettings = ChunkerSettings()
    document_prefix: str = Field("", description="Prepended to every embedded document text (e.g. `search_document: `).")
    query_prefix: str = Field("", description="Prepended to every embedded query (e.g. `search_query: `).")
    templates: dict[str, str] = Field(
        default_factory=dict, description="Per content_type text prepended to what is embedded, never stored."
    )
    chunk_headers: bool = Field(
        False, description="Embed each chunk with a contextual header (document title and heading path, see "
        "header_template); the stored and shown text stays the chunk. Part of the documents' fingerprint, so "
        "switching it builds a new version that the gate evaluates.")
    header_template: str = Field(
        "{title}\n{headings}", description="chunk_headers: header format; {title} is the metadata title (else the "
        "source file's stem), {headings} the heading path joined by ' > '. Empty lines are dropped.")
    fusion: FusionSettings | None = Field(
        None, description="This profile's own retrieval.fusion (method, weights, depths); default: retrieval.fusion.")
    lexical: LexicalSettings | None = Field(
        None, description="This profile's own retrieval.lexical (stop words, pseudo-relevance feedback); default: "
        "retrieval.lexical.")
    enrichment: EnrichmentSettings = Field(
        EnrichmentSettings(), description="LLM/extractive enrichment of each chunk (summary, content type, metadata, "
        "hypothetical questions) and page/document summaries; docs/ENRICHMENT.md.")
    ocr_pictures: bool = Field(
        False, description="OCR the pictures of this profile's documents: a DOCX picture's text joins its figure "
        "description, and a PDF page with a text layer also gets the text of its pictures (ingest.ocr; "
        "docs/OCR.md). Scanned pages and image files are OCRed whatever this says.")
    vector_format: Literal["float32", "int8"] = Field(
        "float32", description="How the store keeps this profile's chunk vectors: float32, or int8 (Oracle only: "
        "VECTOR(n, INT8), each vector scaled to +-127 and rounded; cosine distance only). Stamped on the version: a "
        "change builds a new version from scratch, formats never mix (docs/ORACLE.md, 'INT8 vectors').")

    @field_validator("header_template")
    @classmethod
    def _header_placeholders(cls, v: str) -> str:
        names = {name for name, _, _ in placeholders(v, "header_template")}
        if names - {"title", "headings"}:
            raise ValueError(f"header_template {v!r}: only {{title}} and {{headings}} are allowed, "
                             f"got {sorted(names - {'title', 'headings'})}")
        return v


class DomainSettings(_Model):
    index_name: IndexName = Field(..., description="Version table ingested for this domain with --domain-key.")
    alias_name: AliasName = Field(..., description="Alias view /chat reads for this domain (X-RAG-Domain).")
    profile: str | None = Field(None, description="Profile (chunker, distance) used for this domain; default profile if unset.")
    golden_set: str | None = Field(None, description="Golden-query file that gates promotion of this domain's versions.")
    title: str | None = Field(
        None, max_length=80, description="Name the chat page's knowledge-base picker shows; default: the key, "
        "prettified (`field-engineering` -> `Field engineering`).")
    example_questions: list[str] = Field(
        default_factory=list, max_length=6, description="Questions the chat page offers on an empty conversation "
        "for this domain (at most 6).")


class AliasSettings(_Model):
    name: AliasName = Field("KB_ACTIVE", description="Default alias view read by /chat when no domain header is sent.")
    active_index: str | None = Field(None, description="Version the default alias should serve (informational; rotations are recorded in the store).")
    title: str = Field(
        "General knowledge base", max_length=80, description="Name the chat page's knowledge-base picker shows for "
        "the default alias (no X-RAG-Domain).")
    example_questions: list[str] = Field(
        default_factory=list, max_length=6, description="Questions the chat page offers on an empty conversation "
        "for the default alias (at most 6).")

    @field_validator("active_index")
    @classmethod
    def _active(cls, v: str | None) -> str | None:
        return None if v is None else validate_table_name(v, "active_index")
