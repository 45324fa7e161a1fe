"""Oracle AI Vector Search store: every port, each its own object around one ``OracleConnector``.

``vectors.OracleVectors`` (``VectorStore``: reads there, writes in ``writes.OracleVectorWriter``),
``index_admin.OracleIndexAdmin`` (``IndexAdmin`` + ``SeriesLocking``), ``conversations``
(``InteractionLog``, ``ConversationLog``) and ``enrichment_cache`` (``EnrichmentCache``) share the
connector's pool; ``stores()`` hands them out as a ``Stores`` bundle (what
``providers.registry.build_stores`` returns).

``OracleVectorStore`` is the facade that answers for every port at once, delegating each method to
its part (``providers.store_facade``; composition, not inheritance): what tests and ``Stores.of`` build.
"""

from __future__ import annotations

from backend.common.config import OracleSettings
from backend.common.errors import StoreError
from backend.providers.oracle_vs.audit import OracleAuditLog
from backend.providers.oracle_vs.quotas import OracleQuotaCounter
from backend.providers.oracle_vs.connection import OracleConnector
from backend.providers.oracle_vs.conversations import OracleConversationLog, OracleInteractionLog
from backend.providers.oracle_vs.enrichment_cache import OracleEnrichmentCache
from backend.providers.oracle_vs.index_admin import OracleIndexAdmin
from backend.providers.oracle_vs.sync_state import OracleSyncState
from backend.providers.oracle_vs.vectors import OracleVectors
from backend.providers.store_facade import StoreFacade, delegate


class OracleVectorStore(StoreFacade):
    """``VectorStore`` + ``IndexAdmin`` + ``InteractionLog`` + ``ConversationLog`` +
    ``EnrichmentCache`` on one Oracle schema, each method its part's."""

    backend = "oracle"
    index_admin: OracleIndexAdmin

    def __init__(self, connector: OracleConnector, settings: OracleSettings) -> None:
        self.connector = connector
        self.settings = settings
        self.index_admin = OracleIndexAdmin(connector, settings)
        self.vector_store = OracleVectors(connector, settings, self.index_admin)
        self.interaction_log = OracleInteractionLog(connector)
        self.conversation_log = OracleConversationLog(connector)
        self.enrichment = OracleEnrichmentCache(connector)
        self.audit_log = OracleAuditLog(connector)
        self.quota_counter = OracleQuotaCounter(connector)
        self.sync_state = OracleSyncState(connector)

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
    def owner(self) -> OracleConnector:
        return self.connector

    @property
    def endpoint(self) -> str:
        return self.index_admin.endpoint

    lock_series = delegate("index_admin", OracleIndexAdmin.lock_series)
    ensure_catalog = delegate("index_admin", OracleIndexAdmin.ensure_catalog)
    restamp = delegate("index_admin", OracleIndexAdmin.restamp)
    rollback_alias = delegate("index_admin", OracleIndexAdmin.rollback_alias)
    drop_alias = delegate("index_admin", OracleIndexAdmin.drop_alias)
