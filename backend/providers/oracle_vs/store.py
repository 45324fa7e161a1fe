"""Oracle AI Vector Search store: every port, each its own object around one ``OracleConnector``.

``vectors.OracleVectors`` (``VectorStore``: reads here, writes in ``writes.OracleVectorWriter``), ``index_admin.OracleIndexAdmin`` (``IndexAdmin`` +
``SeriesLocking``), ``conversations`` (``InteractionLog``, ``ConversationLog``) and
``enrichment_cache`` (``EnrichmentCache``) share the connector's pool; ``stores()`` hands them
out as a ``Stores`` bundle (what ``providers.registry.build_stores`` returns).

``OracleVectorStore`` is the facade that answers for every port at once, delegating each method
explicitly to its part (composition, not inheritance): what tests and ``Stores.of`` build.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from backend.common.config import OracleSettings
from backend.common.errors import StoreError
from backend.core.ports import Stores
from backend.core.types import (
    AliasChange,
    Candidates,
    Chunk,
    ConversationTurn,
    DocumentWrite,
    Feedback,
    FieldFilter,
    IndexVersion,
    Interaction,
    LockHolder,
    QueryVector,
    QuestionResult,
    SearchResult,
    StoredDocument,
    SummaryKind,
    SummaryResult,
    VersionSpec,
    Visibility,
)
from backend.providers.oracle_vs.connection import OracleConnector
from backend.providers.oracle_vs.conversations import OracleConversationLog, OracleInteractionLog
from backend.providers.oracle_vs.enrichment_cache import OracleEnrichmentCache
from backend.providers.oracle_vs.index_admin import OracleIndexAdmin
from backend.providers.oracle_vs.series_lock import OracleSeriesLease
from backend.providers.oracle_vs.vectors import OracleVectors


class OracleVectorStore:
    """``VectorStore`` + ``IndexAdmin`` + ``InteractionLog`` + ``ConversationLog`` +
    ``EnrichmentCache`` on one Oracle schema, each method its part's."""

    backend = "oracle"

    def __init__(self, connector: OracleConnector, settings: OracleSettings) -> None:
        self.connector = connector
        self.settings = settings
        self.index_admin = OracleIndexAdmin(connector, settings)
        self.vector_store = OracleVectors(connector, settings, self.index_admin)
        self.interaction_log = OracleInteractionLog(connector)
        self.conversation_log = OracleConversationLog(connector)
        self.enrichment = OracleEnrichmentCache(connector)

    @classmethod
    def from_settings(cls, settings: OracleSettings) -> OracleVectorStore:
        store = cls(OracleConnector.from_settings(settings), settings)
        try:
            store.ensure_catalog()
        except StoreError:
            store.close()
            raise
        return store

    @property
    def endpoint(self) -> str:
        return self.index_admin.endpoint

    def stores(self) -> Stores:
        """Each port as its own object over this store's connector; closing the bundle closes the pool."""
        return Stores(vectors=self.vector_store, admin=self.index_admin, interactions=self.interaction_log,
                      conversations=self.conversation_log, enrichment_cache=self.enrichment, owner=self.connector)

    def ping(self) -> None:
        self.connector.ping()

    def close(self) -> None:
        self.connector.close()

    # --- VectorStore ---------------------------------------------------------------
    def resolve_retrieval(self, target: str) -> tuple[str, Mapping[str, Any] | None]:
        return self.vector_store.resolve_retrieval(target)

    def write_documents(self, version: str, documents: Sequence[DocumentWrite], *, allow_served: bool = False) -> int:
        return self.vector_store.write_documents(version, documents, allow_served=allow_served)

    def delete_documents(self, version: str, doc_ids: Sequence[str], *, allow_served: bool = False) -> int:
        return self.vector_store.delete_documents(version, doc_ids, allow_served=allow_served)

    def asset_refs(self, version: str, *, visibility: Visibility | None = None) -> set[str]:
        return self.vector_store.asset_refs(version, visibility=visibility)

    def document_hashes(self, version: str) -> dict[str, str]:
        return self.vector_store.document_hashes(version)

    def document_list(self, version: str) -> list[StoredDocument]:
        return self.vector_store.document_list(version)

    def cached_vectors(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        return self.vector_store.cached_vectors(model, text_hashes)

    def search(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
               visibility: Visibility | None = None) -> SearchResult:
        return self.vector_store.search(target, query, k, filters, visibility=visibility)

    def dense_candidates(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         visibility: Visibility | None = None) -> Candidates:
        return self.vector_store.dense_candidates(target, query, k, filters, visibility=visibility)

    def similarities(self, version: str, query: QueryVector, chunk_ids: Sequence[str], *,
                     visibility: Visibility | None = None) -> dict[str, float]:
        return self.vector_store.similarities(version, query, chunk_ids, visibility=visibility)

    def fetch_chunks(self, version: str, chunk_ids: Sequence[str], *,
                     visibility: Visibility | None = None) -> dict[str, Chunk]:
        return self.vector_store.fetch_chunks(version, chunk_ids, visibility=visibility)

    def chunk_vectors(self, version: str, chunk_ids: Sequence[str], *,
                      visibility: Visibility | None = None) -> dict[str, np.ndarray]:
        return self.vector_store.chunk_vectors(version, chunk_ids, visibility=visibility)

    def chunk_texts(self, version: str, chunk_ids: Sequence[str], *,
                    visibility: Visibility | None = None) -> dict[str, str]:
        return self.vector_store.chunk_texts(version, chunk_ids, visibility=visibility)

    def search_questions(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         visibility: Visibility | None = None) -> QuestionResult:
        return self.vector_store.search_questions(target, query, k, filters, visibility=visibility)

    def search_summaries(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         kinds: Sequence[SummaryKind] = ("page_summary", "artifact_summary"),
                         visibility: Visibility | None = None) -> SummaryResult:
        return self.vector_store.search_summaries(target, query, k, filters, kinds=kinds, visibility=visibility)

    def lexical_search(self, target: str, text: str, k: int, filters: Sequence[FieldFilter] = (), *,
                       visibility: Visibility | None = None) -> SearchResult:
        return self.vector_store.lexical_search(target, text, k, filters, visibility=visibility)

    def lexical_candidates(self, target: str, text: str, k: int, filters: Sequence[FieldFilter] = (), *,
                           visibility: Visibility | None = None) -> Candidates:
        return self.vector_store.lexical_candidates(target, text, k, filters, visibility=visibility)

    def version_vectors(self, target: str) -> tuple[list[str], np.ndarray]:
        return self.vector_store.version_vectors(target)

    # --- IndexAdmin, SeriesLocking ------------------------------------------------------
    def lock_series(self, series: str, holder: LockHolder, *, wait_s: float = 0.0) -> OracleSeriesLease:
        return self.index_admin.lock_series(series, holder, wait_s=wait_s)

    def ensure_catalog(self) -> None:
        return self.index_admin.ensure_catalog()

    def protected_versions(self) -> dict[str, str]:
        return self.index_admin.protected_versions()

    def create_version(self, spec: VersionSpec) -> IndexVersion:
        return self.index_admin.create_version(spec)

    def restamp(self, version: str, retrieval: Mapping[str, Any]) -> None:
        return self.index_admin.restamp(version, retrieval)

    def finish_load(self, version: str) -> None:
        return self.index_admin.finish_load(version)

    def get_version(self, name: str) -> IndexVersion:
        return self.index_admin.get_version(name)

    def list_versions(self) -> list[IndexVersion]:
        return self.index_admin.list_versions()

    def drop_version(self, name: str) -> None:
        return self.index_admin.drop_version(name)

    def record_evaluation(self, version: str, report: Mapping[str, Any]) -> None:
        return self.index_admin.record_evaluation(version, report)

    def point_alias(self, alias: str, version: str, *, reason: str = "", forced: bool = False,
                    expected_generation: int | None = None) -> AliasChange:
        return self.index_admin.point_alias(alias, version, reason=reason, forced=forced, expected_generation=expected_generation)

    def rollback_alias(self, alias: str, *, reason: str = "rollback", forced: bool = False) -> AliasChange:
        return self.index_admin.rollback_alias(alias, reason=reason, forced=forced)

    def drop_alias(self, alias: str) -> None:
        return self.index_admin.drop_alias(alias)

    def resolve_alias(self, alias: str) -> str | None:
        return self.index_admin.resolve_alias(alias)

    def list_aliases(self) -> dict[str, str]:
        return self.index_admin.list_aliases()

    def alias_history(self, alias: str) -> list[AliasChange]:
        return self.index_admin.alias_history(alias)

    # --- InteractionLog ---------------------------------------------------------------
    def record_interaction(self, interaction: Interaction) -> None:
        return self.interaction_log.record_interaction(interaction)

    def interactions(self, limit: int = 100) -> list[Interaction]:
        return self.interaction_log.interactions(limit)

    def count_interactions(self) -> int:
        return self.interaction_log.count_interactions()

    # --- ConversationLog --------------------------------------------------------------
    def record_turn(self, turn: ConversationTurn) -> None:
        return self.conversation_log.record_turn(turn)

    def conversation_turns(self, conversation_id: str, principal: str | None, limit: int = 50
                           ) -> list[ConversationTurn]:
        return self.conversation_log.conversation_turns(conversation_id, principal, limit)

    def get_turn(self, interaction_id: str) -> ConversationTurn | None:
        return self.conversation_log.get_turn(interaction_id)

    def delete_conversation(self, conversation_id: str, principal: str | None) -> int:
        return self.conversation_log.delete_conversation(conversation_id, principal)

    def record_feedback(self, feedback: Feedback) -> int:
        return self.conversation_log.record_feedback(feedback)

    def feedback(self, limit: int = 1000) -> list[Feedback]:
        return self.conversation_log.feedback(limit)

    # --- EnrichmentCache --------------------------------------------------------------
    def get_many(self, prompt_version: str, model_id: str, content_hashes: Sequence[str]) -> dict[str, str]:
        return self.enrichment.get_many(prompt_version, model_id, content_hashes)

    def put_many(self, prompt_version: str, model_id: str, payloads: Mapping[str, str]) -> None:
        return self.enrichment.put_many(prompt_version, model_id, payloads)
