"""One object answering for every store port, each method delegated to the part that owns it.

Both backends split their store by port (vectors, index admin, interaction and conversation logs,
enrichment cache) around one shared connection; tests, benchmarks and ``Stores.of`` still want one
object. ``StoreFacade`` is that object, written once for both: each method is ``delegate(part,
Port.method)``, so its signature and docstring are the port's own (mypy checks the facade against
the ports) and a new port method is one line here.
"""

from __future__ import annotations

from functools import wraps
from typing import Any, Callable, Concatenate, ParamSpec, Protocol, TypeVar

import numpy as np

from backend.core.ports import (
    AuditLog,
    QuotaCounter,
    SyncState,
    Closeable,
    ConversationLog,
    EnrichmentCache,
    IndexAdmin,
    InteractionLog,
    Stores,
    VectorStore,
)
from backend.core.types import Visibility

P = ParamSpec("P")
R = TypeVar("R")


def delegate(part: str, method: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
    """A method that calls ``method``'s namesake on ``self.<part>``, typed and documented as ``method``."""
    name = method.__name__

    @wraps(method)
    def delegated(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        result: R = getattr(getattr(self, part), name)(*args, **kwargs)
        return result

    return delegated


class FacadeVectors(VectorStore, Protocol):
    """The vector part: the port, ``asset_refs`` under an ACL, and the whole version's matrix."""

    def asset_refs(self, version: str, *, visibility: Visibility | None = None) -> set[str]: ...

    def version_vectors(self, target: str) -> tuple[list[str], np.ndarray]: ...


class CountedInteractionLog(InteractionLog, Protocol):
    def count_interactions(self) -> int: ...


class SharedConnection(Closeable, Protocol):
    """What the parts share (a SQLite file's connections, an Oracle pool)."""

    def ping(self) -> None: ...


class StoreFacade:
    """``VectorStore`` + ``IndexAdmin`` + ``InteractionLog`` + ``ConversationLog`` + ``EnrichmentCache``
    by delegation; a backend's subclass builds the parts and names its shared ``owner``."""

    vector_store: FacadeVectors
    index_admin: IndexAdmin
    interaction_log: CountedInteractionLog
    conversation_log: ConversationLog
    enrichment: EnrichmentCache
    audit_log: AuditLog
    quota_counter: QuotaCounter
    sync_state: SyncState

    @property
    def owner(self) -> SharedConnection:
        """What holds the parts' connection: ``close`` closes it, as does closing ``stores()``."""
        raise NotImplementedError

    def stores(self) -> Stores:
        """Each port as its own object over the shared connection; closing the bundle closes it."""
        return Stores(vectors=self.vector_store, admin=self.index_admin, interactions=self.interaction_log,
                      conversations=self.conversation_log, enrichment_cache=self.enrichment, owner=self.owner,
                      audit=self.audit_log, quotas=self.quota_counter, sync_state=self.sync_state)

    def ping(self) -> None:
        self.owner.ping()

    def close(self) -> None:
        self.owner.close()

    # --- VectorStore -----------------------------------------------------------------
    resolve_retrieval = delegate("vector_store", VectorStore.resolve_retrieval)
    max_writers = delegate("vector_store", VectorStore.max_writers)
    write_documents = delegate("vector_store", VectorStore.write_documents)
    delete_documents = delegate("vector_store", VectorStore.delete_documents)
    asset_refs = delegate("vector_store", FacadeVectors.asset_refs)
    document_hashes = delegate("vector_store", VectorStore.document_hashes)
    document_list = delegate("vector_store", VectorStore.document_list)
    cached_vectors = delegate("vector_store", VectorStore.cached_vectors)
    search = delegate("vector_store", VectorStore.search)
    dense_candidates = delegate("vector_store", VectorStore.dense_candidates)
    similarities = delegate("vector_store", VectorStore.similarities)
    fetch_chunks = delegate("vector_store", VectorStore.fetch_chunks)
    chunk_vectors = delegate("vector_store", VectorStore.chunk_vectors)
    chunk_texts = delegate("vector_store", VectorStore.chunk_texts)
    search_questions = delegate("vector_store", VectorStore.search_questions)
    search_summaries = delegate("vector_store", VectorStore.search_summaries)
    lexical_search = delegate("vector_store", VectorStore.lexical_search)
    lexical_candidates = delegate("vector_store", VectorStore.lexical_candidates)
    version_vectors = delegate("vector_store", FacadeVectors.version_vectors)

    # --- IndexAdmin (``lock_series``: each subclass, typed with its lease) ----------
    create_version = delegate("index_admin", IndexAdmin.create_version)
    protected_versions = delegate("index_admin", IndexAdmin.protected_versions)
    finish_load = delegate("index_admin", IndexAdmin.finish_load)
    get_version = delegate("index_admin", IndexAdmin.get_version)
    list_versions = delegate("index_admin", IndexAdmin.list_versions)
    drop_version = delegate("index_admin", IndexAdmin.drop_version)
    record_evaluation = delegate("index_admin", IndexAdmin.record_evaluation)
    point_alias = delegate("index_admin", IndexAdmin.point_alias)
    resolve_alias = delegate("index_admin", IndexAdmin.resolve_alias)
    list_aliases = delegate("index_admin", IndexAdmin.list_aliases)
    alias_history = delegate("index_admin", IndexAdmin.alias_history)

    # --- InteractionLog ----------------------------------------------------------------
    record_interaction = delegate("interaction_log", InteractionLog.record_interaction)
    interactions = delegate("interaction_log", InteractionLog.interactions)
    count_interactions = delegate("interaction_log", CountedInteractionLog.count_interactions)

    # --- AuditLog --------------------------------------------------------------------
    append_audit = delegate("audit_log", AuditLog.append_audit)
    audit_events = delegate("audit_log", AuditLog.audit_events)

    # --- QuotaCounter ----------------------------------------------------------------
    count_request = delegate("quota_counter", QuotaCounter.count_request)
    prune_quota_counters = delegate("quota_counter", QuotaCounter.prune_quota_counters)

    # --- ConversationLog ---------------------------------------------------------------
    record_turn = delegate("conversation_log", ConversationLog.record_turn)
    conversation_turns = delegate("conversation_log", ConversationLog.conversation_turns)
    get_turn = delegate("conversation_log", ConversationLog.get_turn)
    delete_conversation = delegate("conversation_log", ConversationLog.delete_conversation)
    record_feedback = delegate("conversation_log", ConversationLog.record_feedback)
    feedback = delegate("conversation_log", ConversationLog.feedback)

    # --- EnrichmentCache ---------------------------------------------------------------
    get_many = delegate("enrichment", EnrichmentCache.get_many)
    put_many = delegate("enrichment", EnrichmentCache.put_many)

    # --- SyncState ---------------------------------------------------------------------
    sync_items = delegate("sync_state", SyncState.sync_items)
    save_sync = delegate("sync_state", SyncState.save_sync)
    record_sync_run = delegate("sync_state", SyncState.record_sync_run)
    sync_runs = delegate("sync_state", SyncState.sync_runs)
    forget_sync = delegate("sync_state", SyncState.forget_sync)
