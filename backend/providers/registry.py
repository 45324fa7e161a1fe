"""Config names to adapters, in one place.

Built-in adapters register here exactly like any added later. Entry points call
``build_store`` / ``build_embedder`` / ``build_chat_model`` once with the typed
settings slice; services receive the built objects and never import adapters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping, Protocol, TypeVar

from backend.common.config import (ChatProviderSettings, EmbeddingSettings, EnrichmentSettings, ProfileSettings,
                                   RerankSettings, Settings, StoreSettings)
from backend.common.errors import ConfigError
from backend.common.token_bucket import TokenBucket
from backend.core.metadata_schema import Schema
from backend.core.ports import AnswerReader, ChatModel, CombinedStore, Embedder, EnrichmentCache, Enricher, Reranker, Stores


class StoreFacade(CombinedStore, Protocol):
    """A store backend as one object answering for every port (``SqliteVectorStore``,
    ``OracleVectorStore``), which hands its ports out one object each with ``stores()``."""

    def stores(self) -> Stores: ...

    def ping(self) -> None: ...

    def close(self) -> None: ...


def _sqlite_store(settings: StoreSettings, root: Callable[[str], Path]) -> StoreFacade:
    from backend.providers.sqlite_vs import dense
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    dense.limit_blas_threads(settings.sqlite.blas_threads)
    return SqliteVectorStore(root(settings.sqlite.path), settings.sqlite.busy_timeout_ms, settings.sqlite.ann)


def sqlite_vector_cache(path: str) -> CombinedStore:
    """The SQLite store file at ``path``, opened for its embedding cache (``cached_vectors``) alone:
    what a Ray embedding actor on the driver's machine reads."""
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    return SqliteVectorStore(path)


def sqlite_path(stores: Stores) -> str | None:
    """The SQLite file behind ``stores``, or None for another backend."""
    from backend.providers.sqlite_vs.connection import SqliteDatabase
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    owner = stores.owner
    return owner.path if isinstance(owner, (SqliteDatabase, SqliteVectorStore)) else None


def _oracle_store(settings: StoreSettings, root: Callable[[str], Path]) -> StoreFacade:
    from backend.providers.oracle_vs.store import OracleVectorStore

    return OracleVectorStore.from_settings(settings.oracle)


def _local_embedder(settings: EmbeddingSettings) -> Embedder:
    from backend.providers.local.embedder import make_local_embedder

    return make_local_embedder(settings)


def _oci_embedder(settings: EmbeddingSettings) -> Embedder:
    from backend.providers.oci.embedder import OciEmbedder

    return OciEmbedder.from_settings(settings)


#: Store backends by ``store.backend`` (name -> factory(StoreSettings, path resolver)).
STORES: dict[str, Callable[[StoreSettings, Callable[[str], Path]], StoreFacade]] = {
    "sqlite": _sqlite_store, "oracle": _oracle_store}
EMBEDDERS: dict[str, Callable[[EmbeddingSettings], Embedder]] = {"local": _local_embedder, "oci": _oci_embedder}


def _extractive_chat(provider: ChatProviderSettings, settings: Settings) -> ChatModel:
    """Ranks sentences with the local model when that is the embedder (the weights are
    already loaded, so it costs no extra memory); by word overlap otherwise, so a remote
    embedder is never called once per answer."""
    from backend.providers.local.extractive import ExtractiveChatModel

    embedder = build_embedder(settings) if settings.embeddings.provider == "local" else None
    answerability = settings.retrieval.answerability if settings.retrieval.judges_sentences else None
    return ExtractiveChatModel(embedder, max_sentences=provider.max_sentences, answerability=answerability,
                               max_answer_chars=provider.max_answer_chars, reader=build_answer_reader(settings),
                               reader_sentences=settings.retrieval.answerability.reader.max_sentences)


def build_answer_reader(settings: Settings) -> AnswerReader | None:
    """The trained answer reader when ``retrieval.answerability.reader.enabled`` (and sentences are
    judged at all), loaded once per process from the committed folder; None otherwise."""
    reader = settings.retrieval.answerability.reader
    if not (reader.enabled and settings.retrieval.judges_sentences):
        return None
    from backend.providers.local.answer_reader import load_reader

    return load_reader(settings.resolve_path(reader.path), max_length=reader.max_length)


def _local_llm_chat(provider: ChatProviderSettings, settings: Settings) -> ChatModel:
    from backend.providers.local.llm_answerer import LocalLlmChatModel

    return LocalLlmChatModel(provider, settings.resolve_path(provider.local.model_dir))


def _openai_compat_chat(provider: ChatProviderSettings, settings: Settings) -> ChatModel:
    from backend.providers.openai_compat.chat import OpenAICompatChatModel

    return OpenAICompatChatModel(provider)


def _oci_chat(provider: ChatProviderSettings, settings: Settings) -> ChatModel:
    from backend.providers.oci.chat import OciChatModel

    return OciChatModel.from_settings(provider, settings)


def _disabled_chat(provider: ChatProviderSettings, settings: Settings) -> ChatModel:
    from backend.providers.local.extractive import DisabledChatModel

    return DisabledChatModel()


#: Chat providers register themselves in ``CHAT_MODELS`` (name -> factory(ChatProviderSettings, Settings)).
CHAT_MODELS: dict[str, Callable[[ChatProviderSettings, Settings], ChatModel]] = {
    "extractive": _extractive_chat,
    "local_llm": _local_llm_chat,
    "openai_compat": _openai_compat_chat,
    "oci": _oci_chat,
    "none": _disabled_chat,
}


F = TypeVar("F")


def _factory(registry: Mapping[str, F], name: str, field: str, kind: str) -> F:
    """``registry[name]``, or a ConfigError naming the config field and the known names."""
    factory = registry.get(name)
    if factory is None:
        raise ConfigError(f"{field}: unknown {kind} {name!r}; known: {sorted(registry)}")
    return factory


def build_store(settings: Settings) -> StoreFacade:
    """The configured store as one object for every port; new code uses ``build_stores``."""
    return _factory(STORES, settings.store.backend, "store.backend", "store")(settings.store, settings.resolve_path)


def build_stores(settings: Settings) -> Stores:
    """Every store port of ``store.backend``, one object per port over one shared connection
    (a SQLite file, an Oracle pool); ``Stores.close`` releases it."""
    return build_store(settings).stores()


def build_embedder(settings: Settings) -> Embedder:
    return _factory(EMBEDDERS, settings.embeddings.provider, "embeddings.provider", "provider")(settings.embeddings)


def build_chat_model(provider: ChatProviderSettings, settings: Settings) -> ChatModel:
    return _factory(CHAT_MODELS, provider.provider, "llm", "chat provider")(provider, settings)


def _sentences_reranker(settings: Settings, embedder: Embedder | None) -> Reranker:
    from backend.providers.rerank.sentences import SentenceReranker

    return SentenceReranker(embedder if embedder is not None else build_embedder(settings),
                            sentence_weight=settings.retrieval.rerank.sentence_weight)


def _cross_encoder_reranker(settings: Settings, embedder: Embedder | None) -> Reranker:
    from backend.providers.rerank.cross_encoder import CrossEncoderReranker

    cfg = settings.retrieval.rerank
    assert cfg.model_path is not None  # RerankSettings requires it for this provider
    return CrossEncoderReranker(settings.resolve_path(cfg.model_path), batch_size=cfg.batch_size,
                                device=settings.embeddings.local.device)


def _http_reranker(settings: Settings, embedder: Embedder | None) -> Reranker:
    from backend.providers.rerank.http import HttpReranker

    return HttpReranker(settings.retrieval.rerank)


def _oci_reranker(settings: Settings, embedder: Embedder | None) -> Reranker:
    from backend.providers.oci.rerank import OciReranker

    return OciReranker.from_settings(settings.embeddings.oci, settings.retrieval.rerank)


#: Rerankers by ``retrieval.rerank.provider`` (name -> factory(Settings, embedder or None)).
RERANKERS: dict[str, Callable[[Settings, Embedder | None], Reranker]] = {
    "sentences": _sentences_reranker,
    "cross_encoder": _cross_encoder_reranker,
    "http": _http_reranker,
    "oci": _oci_reranker,
}


def build_reranker(settings: Settings, embedder: Embedder | None = None) -> Reranker | None:
    """The configured reranker, or None when ``retrieval.rerank.provider`` is none.
    ``embedder`` is reused by the ``sentences`` reranker (the weights are loaded once)."""
    provider = settings.retrieval.rerank.provider
    if provider == "none":
        return None
    return _factory(RERANKERS, provider, "retrieval.rerank.provider", "reranker")(settings, embedder)


def reranker_factory(settings: Settings,
                     embedder: Embedder | None = None) -> Callable[[RerankSettings], Reranker | None]:
    """``rerank settings -> reranker`` for the settings a version was stamped with (they may name
    another reranker than the live config); each distinct setting is built once per process.
    The live endpoint, key and retries come with them (``retrieval_stamp.stamped_settings``)."""
    import threading

    built: dict[str, Reranker | None] = {}
    lock = threading.Lock()

    def reranker_for(rerank: RerankSettings) -> Reranker | None:
        key = rerank.model_dump_json()
        with lock:
            if key not in built:
                retrieval = settings.retrieval.model_copy(update={"rerank": rerank})
                built[key] = build_reranker(settings.model_copy(update={"retrieval": retrieval}), embedder)
            return built[key]

    return reranker_for


# --- enrichment (seeds 000/001/002) ---------------------------------------------------
def _enrichment_context(settings: Settings, profile: ProfileSettings) -> tuple[EnrichmentSettings, Schema,
                                                                               tuple[str, ...]]:
    from backend.core.enrichment import allowed_content_types

    schema = settings.retrieval.metadata_schema
    return profile.enrichment, schema, allowed_content_types(schema, profile.templates)


def _limiter(enrichment: EnrichmentSettings) -> TokenBucket:
    return TokenBucket(enrichment.rate_limit_per_min)


def _extractive_enricher(settings: Settings, profile: ProfileSettings) -> Enricher:
    from backend.providers.local.extractive_enricher import ExtractiveEnricher

    return ExtractiveEnricher(*_enrichment_context(settings, profile))


def _local_llm_enricher(settings: Settings, profile: ProfileSettings) -> Enricher:
    from backend.providers.local.llm_enricher import LocalLlmEnricher

    enrichment, schema, types = _enrichment_context(settings, profile)
    return LocalLlmEnricher(enrichment, schema, types, settings.resolve_path(enrichment.local.model_dir))


def _openai_compat_enricher(settings: Settings, profile: ProfileSettings) -> Enricher:
    from backend.providers.openai_compat.enricher import OpenAICompatEnricher

    enrichment, schema, types = _enrichment_context(settings, profile)
    return OpenAICompatEnricher(enrichment, schema, types, limiter=_limiter(enrichment))


def _oci_enricher(settings: Settings, profile: ProfileSettings) -> Enricher:
    from backend.providers.oci.enricher import OciEnricher

    enrichment, schema, types = _enrichment_context(settings, profile)
    return OciEnricher.from_settings(settings, enrichment, schema, types, limiter=_limiter(enrichment))


#: Enrichers by ``profile.enrichment.provider`` (name -> factory(Settings, ProfileSettings)).
ENRICHERS: dict[str, Callable[[Settings, ProfileSettings], Enricher]] = {
    "extractive": _extractive_enricher,
    "local_llm": _local_llm_enricher,
    "openai_compat": _openai_compat_enricher,
    "oci": _oci_enricher,
}


def build_enricher(settings: Settings, profile: ProfileSettings) -> Enricher | None:
    """The profile's enricher, or None when ``enrichment.provider`` is none."""
    provider = profile.enrichment.provider
    if provider == "none":
        return None
    return _factory(ENRICHERS, provider, "enrichment.provider", "enricher")(settings, profile)


def build_enrichment_cache(store: StoreFacade) -> EnrichmentCache | None:
    """The enrichment cache next to ``store``'s data (same SQLite file, same Oracle schema);
    ``build_stores(settings).enrichment_cache`` is the same object without the facade."""
    return store.stores().enrichment_cache
