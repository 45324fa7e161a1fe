"""The composition root: config -> adapters -> services, in one place.

Every entry point (the app factory, each CLI command, the benchmarks, the scripts)
calls ``build_runtime(settings)`` once, or ``open_stores(settings)`` when it only
reads the index; tests pass their own ports. This is the only module that imports
both ``backend.providers.registry`` and the services, so a new adapter or service
is wired here and nowhere else.

``Runtime`` is frozen: what it holds was built together and stays consistent. The
server's one piece of mutable state, the knowledge-base registry taken in since
start (hot reload), lives in ``ServingRuntime``, a small holder that swaps in a new
``Runtime`` under a lock: a request reads one coherent runtime, never a half-updated
one, and the CLI, which never reloads, needs no lock at all.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generic, Mapping, TypeVar, cast

import structlog

from backend.common.config import ConnectorSpec, EmbeddingSettings, ProfileSettings, RerankSettings, Settings
from backend.common.errors import ConfigError
from backend.core.connector import Connector
from backend.core.ports import (ChatModel, CombinedStore, Embedder, Enricher, IndexAdmin, Reranker, Stores,
                                VectorStore)
from backend.core.services.audit import AuditTrail
from backend.core.services.quotas import QuotaService
from backend.core.services.chat_service import ChatService, Routing
from backend.core.services.evaluation import Evaluator
from backend.core.services.evidence import SentenceScorer, quoting_scorer
from backend.core.services.promotion import PromotionResult, promote_configured
from backend.core.services.search_service import SearchService
from backend.core.services.series_lock import SeriesLocks
from backend.common.progress import Progress
from backend.ingest.cancel import CancelToken
from backend.ingest.embedding_batches import VectorCache
from backend.ingest.engine import IngestEngine
from backend.ingest.pipeline import IngestPipeline
from backend.providers import registry

log = structlog.get_logger(__name__)

T = TypeVar("T")

#: answer providers that are LLMs: they also rewrite conversation follow-ups (else the offline rule does)
LLM_PROVIDERS = frozenset({"openai_compat", "oci"})


@dataclass(frozen=True)
class Runtime:
    """Everything an entry point needs, built once from config; tests pass their own ports."""

    settings: Settings
    stores: Stores
    embedder: Embedder
    primary: ChatModel
    fallback: ChatModel
    searches: Mapping[str, SearchService]
    chat: ChatService
    #: the configured reranker, so the evaluation gate sees the order users get
    reranker: Reranker | None
    #: builds the reranker a version's stamp names when it is not the configured one
    rerankers: Callable[[RerankSettings], Reranker | None]

    @property
    def search(self) -> SearchService:
        """The search service of the default embedding profile."""
        return self.searches[self.settings.embeddings.default_profile]

    @property
    def store(self) -> VectorStore:
        """The vector port (older callers named the single store object ``store``)."""
        return self.stores.vectors

    @property
    def admin(self) -> IndexAdmin:
        return self.stores.admin

    @functools.cached_property
    def quotas(self) -> QuotaService:
        """The per-principal quotas, counted in this runtime's store (``quotas.enabled``)."""
        return QuotaService(self.stores.quotas, self.settings.quotas)

    @functools.cached_property
    def audit(self) -> AuditTrail:
        """The audit trail in this runtime's store (``audit.enabled``)."""
        return AuditTrail(self.stores.audit, self.settings.audit)

    def with_settings(self, settings: Settings) -> Runtime:
        """The same adapters and services under ``settings`` (the knowledge-base registry taken in,
        a run's folders allowed): what ``ServingRuntime.refresh`` swaps in and a knowledge-base run
        ingests and gates with."""
        return dataclasses.replace(self, settings=settings)

    def evaluator(self, *, answers: bool) -> Evaluator:
        """An evaluator of this runtime's versions; ``answers`` asks every golden query through the
        chat path (modes exactly as ``/chat``), else the mode comes from the search hits alone."""
        return Evaluator.from_settings(self.settings, self.stores.vectors, self.stores.admin, self.embedder,
                                       chat=self.chat if answers else None, reranker=self.reranker,
                                       rerankers=self.rerankers, scorer=self.chat.scorer)

    def ingest(self, *, progress: bool | Progress | None = None, cancel: CancelToken | None = None,
               engine: IngestEngine | None = None) -> IngestPipeline:
        """An ingest pipeline writing into this runtime's stores with its embedder; the
        profiles' enrichers come from the provider registry (ingest imports no provider)."""
        settings = self.settings
        return IngestPipeline.from_settings(settings, self.stores, self.embedder, progress=progress, cancel=cancel,
                                            engine=engine, enricher_for=enricher_factory(settings),
                                            worker_cache=worker_cache_db(self.stores))

    def locks(self, command: str, *, on_wait: Callable[[str], None] | None = None) -> SeriesLocks:
        """The series locks of one command (``series_lock``)."""
        return SeriesLocks(self.stores.admin, self.settings, command, on_wait=on_wait)

    def promote(self, *, domain_key: str | None = None, alias: str | None = None, version: str | None = None,
                golden: str | Path | None = None, answers: bool = True, force: bool = False, write: bool = True,
                rotate: bool = True, by: str | None = None, locks: SeriesLocks | None = None,
                command: str = "rag index promote") -> PromotionResult:
        """``promote_version`` through the gate as configured (``promotion.promote_configured``)."""
        return promote_configured(self.settings, self.stores, self.evaluator(answers=answers),
                                  domain_key=domain_key, alias=alias, version=version, golden=golden, force=force,
                                  write=write, rotate=rotate, by=by, locks=locks, command=command)


def open_connector(settings: Settings, name: str, env: Mapping[str, str] | None = None) -> tuple[ConnectorSpec, Connector]:
    """Connector ``name`` as ``connectors.file`` declares it, its secrets from ``env`` (the process
    environment by default): ``ConfigError`` naming the file and field, or the extra to install."""
    import os

    from backend.connectors.declarations import spec_of
    from backend.connectors.registry import build_connector
    from backend.connectors.sync import staging_dir

    spec = spec_of(settings, name)
    cache = staging_dir(settings, spec.knowledge_base, name).parent / f".cache-{name}"
    return spec, build_connector(name, spec, settings.connectors, os.environ if env is None else env, cache)


def open_stores(settings: Settings) -> Stores:
    """The configured store ports alone, for commands that only read or rotate the index
    (no embedder or chat model is loaded). The caller closes them."""
    return registry.build_stores(settings)


def enricher_factory(settings: Settings) -> Callable[[ProfileSettings], Enricher | None]:
    """``profile -> its configured enricher`` (None when enrichment is off), what ingest is given."""
    return functools.partial(registry.build_enricher, settings)


def open_embedder(settings: Settings) -> Embedder:
    """The configured embedder alone (``rag tune`` measures candidate settings with it)."""
    return registry.build_embedder(settings)


def worker_embedder(embeddings: EmbeddingSettings) -> Embedder:
    """The embedder a Ray actor builds from the embeddings slice alone (module-level, so Ray pickles
    it by name and each actor loads its model once)."""
    return registry.EMBEDDERS[embeddings.provider](embeddings)


def worker_vector_cache(path: str) -> VectorCache:
    """The embedding cache a Ray actor reads from the driver's SQLite file at ``path`` (module-level,
    so Ray pickles it by name; read beside the driver's writes, WAL)."""
    return registry.sqlite_vector_cache(path)


def worker_cache_db(stores: Stores) -> str | None:
    """The SQLite file behind ``stores`` (what ``worker_vector_cache`` reads), or None for another store."""
    return registry.sqlite_path(stores)


def open_reranker(settings: Settings, embedder: Embedder) -> Reranker | None:
    """The configured reranker alone (None when ``retrieval.rerank.provider`` is none)."""
    return registry.build_reranker(settings, embedder)


def build_runtime(settings: Settings, *, stores: Stores | None = None, embedder: Embedder | None = None,
                  primary: ChatModel | None = None, fallback: ChatModel | None = None) -> Runtime:
    """Build adapters from config (or take the ones given) and wire the services.
    Raises ``ConfigError`` for an unsupported distance / score-mode combination or an
    alias that serves a version of another distance than ``retrieval.distance``."""
    stores = stores if stores is not None else registry.build_stores(settings)
    embedder = embedder if embedder is not None else registry.build_embedder(settings)
    primary = primary if primary is not None else registry.build_chat_model(settings.llm.primary, settings)
    fallback = fallback if fallback is not None else registry.build_chat_model(settings.llm.fallback, settings)
    reranker = registry.build_reranker(settings, embedder)
    rerankers = registry.reranker_factory(settings, embedder)
    # the store embeds questions itself for versions cleared by a parity check: the query vector is then
    # made here only when a read needs it (review 4, N5)
    embeds_in_store = settings.store.backend == "oracle" and settings.store.oracle.query_embedding.enabled
    # each version is served with the retrieval settings stamped on it at ingest
    searches = {
        name: SearchService(stores.vectors, embedder, profile, settings.retrieval, reranker, follow_stamp=True,
                            rerankers=rerankers, defer_query_vector=embeds_in_store)
        for name, profile in settings.embeddings.profiles.items()
    }
    # the extractive answerer's sentence scorer when it is the primary (one vector cache), else a new one;
    # either way it reads with the configured answer reader, so the decision and the answer agree
    scorer = quoting_scorer(primary)
    reader = registry.build_answer_reader(settings)
    if scorer is not None and scorer.reader is None and reader is not None:
        scorer.use_reader(reader, settings.retrieval.answerability.reader.max_sentences)
    chat = ChatService(
        searches, Routing.from_settings(settings.embeddings), settings.retrieval, settings.llm.prompts,
        primary, fallback, admin=stores.admin, interactions=stores.interactions, sanitize=settings.sanitize,
        evidence=scorer if scorer is not None else SentenceScorer(
            embedder, reader=reader, reader_sentences=settings.retrieval.answerability.reader.max_sentences),
        conversations=stores.conversations,
        condense_llm=primary if primary.name in LLM_PROVIDERS else None,
    )
    return Runtime(settings, stores, embedder, primary, fallback, searches, chat, reranker, rerankers)


class _Current(Generic[T]):
    """A read-only attribute of ``ServingRuntime`` taken from the runtime it serves now (the
    runtime is swapped on refresh, so the value is looked up at each read, never copied)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, holder: ServingRuntime, owner: type | None = None) -> T:
        return cast(T, getattr(holder.runtime, self.name))


class ServingRuntime:
    """The server's runtime and the one thing that changes while it serves: knowledge bases
    registered since start (``rag kb create``, an upload). ``refresh`` swaps in a runtime with
    the new settings; readers take ``.runtime`` once and see one coherent whole. The attributes
    routes read (``settings``, ``store``, ``chat``, ...) are the current runtime's."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        #: the knowledge-base registry file as ``settings`` last took it in: (inode, mtime_ns, size); the
        #: registry is replaced atomically, so a new inode tells a write even within one mtime tick
        self.registry_stamp: tuple[int, int, int] | None = None
        #: the registry's keys as last taken in: one gone from the file is routed no more
        self.registered: frozenset[str] = frozenset()
        self._refreshing = threading.Lock()

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        """Serve with other settings (tests that turn on API keys after building the services)."""
        self.runtime = self.runtime.with_settings(settings)

    stores: _Current[Stores] = _Current()
    embedder: _Current[Embedder] = _Current()
    searches: _Current[Mapping[str, SearchService]] = _Current()
    search: _Current[SearchService] = _Current()
    chat: _Current[ChatService] = _Current()
    primary: _Current[ChatModel] = _Current()
    fallback: _Current[ChatModel] = _Current()
    audit: _Current[AuditTrail] = _Current()
    quotas: _Current[QuotaService] = _Current()

    @property
    def store(self) -> VectorStore:
        return self.runtime.stores.vectors

    def promote(self, *, domain_key: str | None = None, alias: str | None = None, version: str | None = None,
                answers: bool = True, rotate: bool = True, by: str | None = None) -> PromotionResult:
        """Through the gate (never forced from HTTP) on the current runtime, the registry as refreshed."""
        return self.runtime.promote(domain_key=domain_key, alias=alias, version=version, answers=answers,
                                    rotate=rotate, by=by)

    def refresh(self) -> bool:
        """Take in knowledge bases registered since start: when the registry file changed, merge
        it into the settings and route the new domains. Aliases are resolved per request, so a
        newly promoted version needs nothing here. True if it changed."""
        from backend.ingest.knowledge_bases import apply_registry, list_registered, registry_file

        # one request takes the change in; the others wait for it rather than answer from the old
        # settings (a page that lists knowledge bases right after `rag kb create` must see the new one)
        with self._refreshing:
            current = self.runtime
            try:
                found = registry_file(current.settings).stat()
                stamp: tuple[int, int, int] | None = (found.st_ino, found.st_mtime_ns, found.st_size)
            except OSError:
                stamp = None
            if stamp == self.registry_stamp:
                return False
            try:
                registered = frozenset(list_registered(current.settings))
                settings = apply_registry(current.settings, forget=self.registered)
            except ConfigError as exc:  # a broken registry must not stop serving what was served
                self.registry_stamp = stamp  # said once, not at every request
                log.error("services.refresh_failed", error=exc.user_message)
                return False
            self.registry_stamp = stamp
            self.registered = registered
            if settings is current.settings:
                return False
            # the services are shared by the old and the new runtime (same ports, same caches): only
            # the chat service's routing changes, by one attribute swap a request in flight survives
            current.chat.routing = Routing.from_settings(settings.embeddings)
            self.runtime = current.with_settings(settings)
        log.info("services.refreshed", domains=sorted(settings.embeddings.domains))
        return True


def serving_runtime(runtime: Runtime) -> ServingRuntime:
    """A holder for serving ``runtime``, with the registry's stamp taken now: only later
    changes are re-read."""
    serving = ServingRuntime(runtime)
    serving.refresh()
    return serving


def build_services(settings: Settings, *, store: CombinedStore | Stores | None = None,
                   embedder: Embedder | None = None, primary: ChatModel | None = None,
                   fallback: ChatModel | None = None) -> ServingRuntime:
    """``build_runtime`` served, from one store object or a ``Stores`` bundle (tests, scripts)."""
    stores = store if isinstance(store, Stores) or store is None else Stores.of(store)
    return serving_runtime(build_runtime(settings, stores=stores, embedder=embedder, primary=primary,
                                         fallback=fallback))


def check_store(settings: Settings) -> None:
    """Connect to the configured store once (``rag config check --connect``): ``StoreUnavailable``,
    naming host and port, when it cannot be reached."""
    stores = registry.build_stores(settings)
    try:
        ping = getattr(stores.owner, "ping", None)
        if callable(ping):
            ping()
    finally:
        stores.close()
