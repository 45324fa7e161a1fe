"""Typed configuration, validated once at startup and passed down.

``load_settings()`` is the only function that reads the YAML profile and the environment.
Everything below it receives a typed, frozen slice (``RetrievalSettings``, ``SanitizeSettings``...)
and never looks at ``os.environ``.

One module per settings area (``store``, ``embeddings``, ``profiles``, ``sanitize``, ``ingest``,
``retrieval``, ``strategies``, ``metadata``, ``llm``, ``evaluation``, ``server``, ``access``,
``knowledge_bases``, ``connectors``, ``telemetry``; the root model in ``settings``); where values come from in
``sources`` and ``kb_registry``; the precedence, written once, in ``loading``. Every name is
re-exported here: import from ``backend.common.config``, not from the modules.
"""

from __future__ import annotations

from backend.common.config.base import (
    DEFAULT_CONFIG,
    REPO_ROOT,
    Distance,
    RetrySettings,
    hint,
    placeholders,
    validate_domain_key,
    validate_identifier,
    validate_table_name,
)
from backend.common.config.store import (
    OracleSettings,
    OracleVectorIndexSettings,
    QueryInDatabaseSettings,
    SqliteAnnSettings,
    SqliteSettings,
    StoreSettings,
)
from backend.common.config.embeddings import (
    BatchingSettings,
    EmbeddingSettings,
    InputTypes,
    LocalEmbeddingSettings,
    OciSettings,
)
from backend.common.config.profiles import (
    AliasSettings,
    ChunkerSettings,
    DomainSettings,
    EnrichmentProvider,
    EnrichmentSettings,
    ProfileSettings,
)
from backend.common.config.sanitize import (
    DEFAULT_SANITIZE_ALLOW_LIST,
    NerScope,
    SanitizeEntity,
    SanitizeSettings,
)
from backend.common.config.ingest import (
    DocxSettings,
    IngestLimits,
    OcrSettings,
    IngestSettings,
)
from backend.common.config.strategies import (
    FusionSettings,
    HierarchicalSettings,
    HyDESettings,
    LexicalSettings,
    RerankSettings,
    SearchStrategy,
)
from backend.common.config.metadata import (
    BUILTIN_FILTER_FIELDS,
    CHUNK_COLUMNS,
    PRESET_PLACEHOLDERS,
    MetadataFieldSettings,
    SearchPreset,
)
from backend.common.config.retrieval import (
    FEATURES,
    AnswerabilitySettings,
    ReaderSettings,
    FreshnessSettings,
    HybridGateSettings,
    RetrievalSettings,
    ScoreMode,
    ShortQuerySettings,
)
from backend.common.config.llm import (
    ChatProviderSettings,
    LlmSettings,
    LocalLlmSettings,
    PromptSettings,
    answer_time_budget_s,
)
from backend.common.config.evaluation import (
    EvaluationSettings,
    GateSettings,
)
from backend.common.config.server import (
    RateLimitSettings,
    ServerSettings,
)
from backend.common.config.access import (
    DEFAULT_DOMAIN,
    ROLES,
    AccessSettings,
    JwtSettings,
    PrincipalSettings,
)
from backend.common.config.audit import AuditSettings
from backend.common.config.quotas import QuotaLimit, QuotaSettings
from backend.common.config.connectors import (
    ConnectorKind,
    ConnectorsSettings,
    ConnectorSpec,
    PermissionMapping,
    VaultSettings,
    read_connectors,
    validate_connector_name,
)
from backend.common.config.knowledge_bases import (
    AdminSettings,
    KnowledgeBasesSettings,
    RegisteredKnowledgeBase,
)
from backend.common.config.telemetry import (
    LoggingSettings,
    TelemetrySettings,
    header_pairs,
)
from backend.common.config.settings import (
    Settings,
)
from backend.common.config.sources import (
    ENV_PREFIX,
    FLAG_ENV_VARS,
    LIST_FIELDS,
    LIST_FIELDS_IN_MAPS,
    Layer,
    environment_path,
    environment_source,
    overrides_source,
    read_yaml,
    yaml_source,
)
from backend.common.config.kb_registry import (
    read_registry,
    registry_path,
    with_registry,
)
from backend.common.config.problems import (
    Problem,
    format_validation_error,
    validation_problems,
)
from backend.common.config.loading import (
    SOURCES,
    SOURCE_ORDER,
    SourceInputs,
    _deep_merge,
    deep_merge,
    load_settings,
    masked_dump,
)

__all__ = [
    "FEATURES",
    "QuotaLimit",
    "QuotaSettings",
    "AuditSettings",
    "AccessSettings",
    "AdminSettings",
    "AliasSettings",
    "AnswerabilitySettings",
    "ReaderSettings",
    "BUILTIN_FILTER_FIELDS",
    "BatchingSettings",
    "CHUNK_COLUMNS",
    "ChatProviderSettings",
    "ChunkerSettings",
    "DEFAULT_CONFIG",
    "DEFAULT_DOMAIN",
    "DEFAULT_SANITIZE_ALLOW_LIST",
    "Distance",
    "DocxSettings",
    "DomainSettings",
    "ENV_PREFIX",
    "EmbeddingSettings",
    "EnrichmentProvider",
    "EnrichmentSettings",
    "EvaluationSettings",
    "FLAG_ENV_VARS",
    "FreshnessSettings",
    "FusionSettings",
    "GateSettings",
    "HierarchicalSettings",
    "HyDESettings",
    "HybridGateSettings",
    "IngestLimits",
    "OcrSettings",
    "IngestSettings",
    "InputTypes",
    "JwtSettings",
    "KnowledgeBasesSettings",
    "ConnectorKind",
    "ConnectorsSettings",
    "ConnectorSpec",
    "PermissionMapping",
    "VaultSettings",
    "read_connectors",
    "validate_connector_name",
    "LIST_FIELDS",
    "LIST_FIELDS_IN_MAPS",
    "Layer",
    "LexicalSettings",
    "LlmSettings",
    "LocalEmbeddingSettings",
    "LocalLlmSettings",
    "LoggingSettings",
    "MetadataFieldSettings",
    "NerScope",
    "OciSettings",
    "OracleSettings",
    "OracleVectorIndexSettings",
    "PRESET_PLACEHOLDERS",
    "PrincipalSettings",
    "Problem",
    "ProfileSettings",
    "PromptSettings",
    "QueryInDatabaseSettings",
    "REPO_ROOT",
    "ROLES",
    "RateLimitSettings",
    "RegisteredKnowledgeBase",
    "RerankSettings",
    "RetrievalSettings",
    "RetrySettings",
    "SOURCES",
    "SOURCE_ORDER",
    "SanitizeEntity",
    "SanitizeSettings",
    "ScoreMode",
    "SearchPreset",
    "SearchStrategy",
    "ServerSettings",
    "Settings",
    "ShortQuerySettings",
    "SourceInputs",
    "SqliteAnnSettings",
    "SqliteSettings",
    "StoreSettings",
    "TelemetrySettings",
    "_deep_merge",
    "answer_time_budget_s",
    "deep_merge",
    "environment_path",
    "environment_source",
    "format_validation_error",
    "header_pairs",
    "hint",
    "load_settings",
    "masked_dump",
    "overrides_source",
    "placeholders",
    "read_registry",
    "read_yaml",
    "registry_path",
    "validate_domain_key",
    "validate_identifier",
    "validate_table_name",
    "validation_problems",
    "with_registry",
    "yaml_source",
]
