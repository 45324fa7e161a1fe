"""The embedded default store: one SQLite file, versioned tables, alias views.

The ports live in their own modules over one shared ``SqliteDatabase`` (``connection``):
``vectors.SqliteVectors`` (``VectorStore``: writes and reads), ``index_admin.SqliteIndexAdmin``
(``IndexAdmin`` + ``SeriesLocking``), ``conversations`` (``InteractionLog``,
``ConversationLog``) and ``enrichment_cache`` (``EnrichmentCache``). ``stores()`` hands them out
as a ``Stores`` bundle, which is what ``providers.registry.build_stores`` returns.

``SqliteVectorStore`` is the facade that answers for every port at once, delegating each
method to its part (``providers.store_facade``): what tests, benchmarks and ``Stores.of`` build from one path.
New code asks the bundle for the port it uses instead.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from backend.common.config import SqliteAnnSettings
from backend.providers.sqlite_vs.connection import SqliteDatabase
from backend.providers.sqlite_vs.audit import SqliteAuditLog
from backend.providers.sqlite_vs.quotas import SqliteQuotaCounter
from backend.providers.sqlite_vs.conversations import SqliteConversationLog, SqliteInteractionLog
from backend.providers.sqlite_vs.enrichment_cache import SqliteEnrichmentCache
from backend.providers.sqlite_vs.index_admin import SqliteIndexAdmin
from backend.providers.sqlite_vs.matrices import VersionMatrices
from backend.providers.sqlite_vs.reads import fts_query
from backend.providers.sqlite_vs.sync_state import SqliteSyncState
from backend.providers.sqlite_vs.vectors import SqliteVectors
from backend.providers.store_facade import StoreFacade, delegate

__all__ = ["SqliteVectorStore", "fts_query"]


class SqliteVectorStore(StoreFacade):
    """``VectorStore`` + ``IndexAdmin`` + ``InteractionLog`` + ``ConversationLog`` +
    ``EnrichmentCache`` on one SQLite file, each method its part's. ``path`` may be a
    ``SqliteDatabase`` already open (a subclass that opens connections its own way)."""

    backend = "sqlite"

    def __init__(self, path: str | Path | SqliteDatabase, busy_timeout_ms: int = 10_000,
                 ann_settings: SqliteAnnSettings | None = None) -> None:
        self.db = path if isinstance(path, SqliteDatabase) else SqliteDatabase(path, busy_timeout_ms)
        self.ann = ann_settings if ann_settings is not None else SqliteAnnSettings()
        matrices = VersionMatrices(self.db.path, self.ann)
        self.vector_store = SqliteVectors(self.db, matrices)
        self.index_admin = SqliteIndexAdmin(self.db, matrices)
        self.interaction_log = SqliteInteractionLog(self.db)
        self.conversation_log = SqliteConversationLog(self.db)
        self.enrichment = SqliteEnrichmentCache(self.db)
        self.audit_log = SqliteAuditLog(self.db)
        self.quota_counter = SqliteQuotaCounter(self.db)
        self.sync_state = SqliteSyncState(self.db)

    @property
    def path(self) -> str:
        return self.db.path

    @property
    def owner(self) -> SqliteDatabase:
        return self.db

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection: tests read raw rows through it."""
        return self.db.connection()

    lock_series = delegate("index_admin", SqliteIndexAdmin.lock_series)
