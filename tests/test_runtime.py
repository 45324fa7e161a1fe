"""``backend.runtime``: the composition root serves from the ports a caller hands in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backend.api.app import create_app
from backend.common.config import Settings
from backend.core.ports import Stores
from backend.core.services.chat_service import ChatQuery
from backend.core.services.search_service import SearchRequest
from backend.core.types import VersionSpec
from backend.providers.local.extractive import DisabledChatModel, ExtractiveChatModel
from backend.runtime import ServingRuntime, build_runtime, open_stores
from tests.contracts.vector_store import corpus_docs

VERSION = "KB_RUNTIME_V1"


def _served(settings: Settings, store: Any, embedder: Any) -> None:
    store.create_version(VersionSpec(VERSION, embedder.model_id, embedder.dimension, settings.retrieval.distance))
    store.write_documents(VERSION, corpus_docs(embedder))
    store.point_alias(settings.embeddings.alias.name, VERSION)


def test_build_runtime_uses_the_ports_it_is_given(settings: Settings, sqlite_store: Any, embedder: Any) -> None:
    _served(settings, sqlite_store, embedder)
    stores = Stores.of(sqlite_store)
    primary, fallback = ExtractiveChatModel(embedder), DisabledChatModel()
    runtime = build_runtime(settings, stores=stores, embedder=embedder, primary=primary, fallback=fallback)
    assert (runtime.stores, runtime.embedder, runtime.primary, runtime.fallback) == (stores, embedder, primary,
                                                                                     fallback)
    # the configured file was never opened: every service reads the store given
    assert not Path(settings.resolve_path(settings.store.sqlite.path)).exists()
    outcome = runtime.search.search(SearchRequest("how many days of paid vacation leave", settings.embeddings.alias.name,
                                                  3))
    assert outcome.version == VERSION and outcome.hits[0].chunk.doc_id == "hr-leave"
    answer = runtime.chat.answer(ChatQuery("How many days of paid vacation leave do employees accrue per month?",
                                           record=False))
    assert answer.decision_explain["version"] == VERSION
    assert answer.decision_explain["answered_by"] == primary.name


def test_build_runtime_without_ports_opens_the_configured_ones(settings: Settings, embedder: Any) -> None:
    runtime = build_runtime(settings, embedder=embedder)
    try:
        assert all(type(port).__module__.startswith("backend.providers.sqlite_vs.")
                   for port in (runtime.stores.vectors, runtime.stores.admin, runtime.stores.interactions))
        assert Path(settings.resolve_path(settings.store.sqlite.path)).exists()
        assert runtime.stores.admin.list_versions() == []
    finally:
        runtime.stores.close()
    only = open_stores(settings)
    try:
        assert only.admin.list_aliases() == {}
    finally:
        only.close()


def test_the_app_serves_the_runtime_it_is_given(settings: Settings, sqlite_store: Any, embedder: Any) -> None:
    _served(settings, sqlite_store, embedder)
    runtime = build_runtime(settings, stores=Stores.of(sqlite_store), embedder=embedder,
                            primary=ExtractiveChatModel(embedder), fallback=DisabledChatModel())
    app = create_app(settings, runtime)
    served = app.extensions["rag"]
    assert isinstance(served, ServingRuntime) and served.runtime is runtime and served.store is sqlite_store
    response = app.test_client().get("/search", query_string={"q": "corporate VPN client", "top_k": 2})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["version"] == VERSION
    assert response.get_json()["hits"][0]["doc_id"] == "it-vpn"
