"""Config names to adapters, in one place.

Built-in adapters register here exactly like any added later. Entry points call
``build_store`` / ``build_embedder`` / ``build_chat_model`` once with the typed
settings slice; services receive the built objects and never import adapters.
"""

from __future__ import annotations

from typing import Any, Callable

from backend.common.config import ChatProviderSettings, EmbeddingSettings, Settings, StoreSettings
from backend.common.errors import ConfigError


def _sqlite_store(settings: StoreSettings, root: Callable[[str], Any]) -> Any:
    from backend.providers.sqlite_vs.store import SqliteVectorStore

    return SqliteVectorStore(root(settings.sqlite.path), settings.sqlite.busy_timeout_ms)


def _oracle_store(settings: StoreSettings, root: Callable[[str], Any]) -> Any:
    from backend.providers.oracle_vs.store import OracleVectorStore

    return OracleVectorStore.from_settings(settings.oracle)


def _local_embedder(settings: EmbeddingSettings) -> Any:
    from backend.providers.local.embedder import LocalEmbedder

    return LocalEmbedder(settings)


def _oci_embedder(settings: EmbeddingSettings) -> Any:
    from backend.providers.oci.embedder import OciEmbedder

    return OciEmbedder.from_settings(settings)


STORES: dict[str, Callable[..., Any]] = {"sqlite": _sqlite_store, "oracle": _oracle_store}
EMBEDDERS: dict[str, Callable[[EmbeddingSettings], Any]] = {"local": _local_embedder, "oci": _oci_embedder}
#: Chat providers register themselves in ``CHAT_MODELS`` (name -> factory(ChatProviderSettings, Settings)).
CHAT_MODELS: dict[str, Callable[[ChatProviderSettings, Settings], Any]] = {}


def build_store(settings: Settings) -> Any:
    factory = STORES.get(settings.store.backend)
    if factory is None:
        raise ConfigError(f"store.backend: unknown store {settings.store.backend!r}; known: {sorted(STORES)}")
    return factory(settings.store, settings.resolve_path)


def build_embedder(settings: Settings) -> Any:
    factory = EMBEDDERS.get(settings.embeddings.provider)
    if factory is None:
        raise ConfigError(f"embeddings.provider: unknown provider {settings.embeddings.provider!r}; known: {sorted(EMBEDDERS)}")
    return factory(settings.embeddings)


def build_chat_model(provider: ChatProviderSettings, settings: Settings) -> Any:
    factory = CHAT_MODELS.get(provider.provider)
    if factory is None:
        raise ConfigError(f"llm: unknown chat provider {provider.provider!r}; known: {sorted(CHAT_MODELS)}")
    return factory(provider, settings)
