"""The question embedded beside the lexical search (``query_embedding.PendingQuery``).

Lexical-first strategies start the embedding in a worker thread; when every slot is
taken it runs inline. Either way a search returns the same hits, and an embedder's
error reaches the caller as it did when the embedding ran first.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from backend.common.config import ProfileSettings, RetrievalSettings
from backend.common.errors import ProviderTimeout
from backend.core.services import query_embedding
from backend.core.services.query_embedding import PendingQuery
from backend.core.services.search_service import SearchRequest, SearchService
from backend.core.types import Chunk, DocumentWrite, QueryVector, VersionSpec, content_hash
from backend.providers.sqlite_vs.store import SqliteVectorStore

VERSION = "KB_OVERLAP_V1"
TEXTS = ["Employees receive 25 days of annual leave each year.", "Laptops must be locked with a strong password.",
         "Travel expenses above the limit need the manager's approval.", "The VPN is required outside the office.",
         "Sick pay starts on the first day of illness.", "Invoices are paid within 30 days of receipt."]


@contextmanager
def every_slot_taken() -> Iterator[None]:
    for _ in range(query_embedding._WORKERS):
        assert query_embedding._SLOTS.acquire(timeout=5)
    try:
        yield
    finally:
        for _ in range(query_embedding._WORKERS):
            query_embedding._SLOTS.release()


def _vector(embedder: Any, text: str) -> QueryVector:
    return QueryVector(embedder.embed_queries([text])[0], embedder.model_id)


def test_an_overlapped_query_is_embedded_in_a_worker_thread(embedder: Any) -> None:
    threads: list[str] = []

    def compute() -> QueryVector:
        threads.append(threading.current_thread().name)
        return _vector(embedder, "annual leave")

    pending = PendingQuery(compute, overlap=True)
    vector = pending.get()
    assert pending.overlapped and threads[0].startswith("rag-query-embedding")
    assert pending.get() is vector and len(threads) == 1
    assert (vector.values == _vector(embedder, "annual leave").values).all()


def test_with_every_slot_taken_or_no_overlap_the_query_is_embedded_inline(embedder: Any) -> None:
    caller = threading.current_thread().name
    seen: list[str] = []

    def compute() -> QueryVector:
        seen.append(threading.current_thread().name)
        return _vector(embedder, "vpn")

    with every_slot_taken():
        assert not PendingQuery(compute, overlap=True).overlapped
    assert not PendingQuery(compute, overlap=False).overlapped
    assert seen == [caller, caller]


def test_the_embedders_error_is_raised_by_get_and_the_slot_is_given_back() -> None:
    def failing() -> QueryVector:
        raise ProviderTimeout("embedding endpoint timed out")

    pending = PendingQuery(failing, overlap=True)
    with pytest.raises(ProviderTimeout, match="timed out"):
        pending.get()
    with every_slot_taken():  # would time out if the failed call had kept its slot
        pass


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[SearchService]:
    store = SqliteVectorStore(Path(tmp_path_factory.mktemp("overlap")) / "o.sqlite")
    store.create_version(VersionSpec(VERSION, embedder.model_id, embedder.dimension, "cosine"))
    vectors = embedder.embed_documents(TEXTS)
    store.write_documents(VERSION, [
        DocumentWrite(f"d{n}", content_hash(text), [Chunk(f"c{n}", f"d{n}", text, f"d{n}.md", 0)], vectors[n:n + 1])
        for n, text in enumerate(TEXTS)])
    settings = RetrievalSettings.model_validate({"fusion": {"dense_feedback_docs": 2}})
    yield SearchService(store, embedder, ProfileSettings(index_name=VERSION), settings)
    store.close()


@pytest.mark.parametrize("strategy", ["fusion", "lexical"])
def test_overlapped_and_inline_searches_return_the_same_hits(service: SearchService, strategy: str) -> None:
    def run() -> list[tuple[str, float, float | None, float | None]]:
        hits = service.search(SearchRequest("How many days of annual leave?", VERSION, 4, strategy=strategy)).hits
        return [(h.chunk.chunk_id, h.score, h.lexical_score, h.fused_score) for h in hits]

    overlapped = run()
    with every_slot_taken():
        inline = run()
    assert overlapped == inline and overlapped[0][0] == "c0"


def test_an_embedder_error_during_a_fusion_search_reaches_the_caller(service: SearchService, embedder: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def timed_out(texts: Any) -> Any:
        raise ProviderTimeout("embedding endpoint timed out")

    monkeypatch.setattr(embedder, "embed_queries", timed_out)
    with pytest.raises(ProviderTimeout):
        service.search(SearchRequest("annual leave", VERSION, 3, strategy="fusion"))
