"""The ``Stores`` bundle on the embedded store: what ``build_stores`` returns, ``Stores.of`` on the
facade, and what ``close`` closes."""

from __future__ import annotations

from pathlib import Path

from backend.core.ports import Stores
from backend.core.types import VersionSpec
from backend.providers.registry import build_stores
from backend.providers.sqlite_vs.connection import SqliteDatabase
from backend.providers.sqlite_vs.index_admin import SqliteIndexAdmin
from backend.providers.sqlite_vs.store import SqliteVectorStore
from backend.providers.sqlite_vs.vectors import SqliteVectors
from tests.conftest import make_settings


def test_build_stores_returns_one_object_per_port_over_one_database(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    stores = build_stores(settings)
    try:
        assert isinstance(stores.vectors, SqliteVectors) and isinstance(stores.admin, SqliteIndexAdmin)
        assert isinstance(stores.owner, SqliteDatabase)
        assert stores.owner.path == str(settings.resolve_path(settings.store.sqlite.path))
        stores.admin.create_version(VersionSpec("KB_V1", "test/model", 4, "cosine"))
        assert stores.vectors.document_hashes("KB_V1") == {}
    finally:
        stores.close()
    again = build_stores(settings)  # what one bundle wrote, the next one (another process) reads
    try:
        assert [v.name for v in again.admin.list_versions()] == ["KB_V1"]
    finally:
        again.close()


def test_stores_of_the_facade_puts_it_in_every_field_and_closes_it(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "rag.sqlite")
    stores = Stores.of(store)
    fields = (stores.vectors, stores.admin, stores.interactions, stores.conversations, stores.enrichment_cache)
    assert all(f is store for f in fields) and stores.owner is store
    store.ping()
    stores.close()
    store.ping()  # closing drops this thread's connection; the next use opens a new one


class _CountingStore(SqliteVectorStore):
    closed = 0

    def close(self) -> None:
        self.closed += 1
        super().close()


def test_without_an_owner_each_distinct_port_is_closed_once(tmp_path: Path) -> None:
    store = _CountingStore(tmp_path / "rag.sqlite")
    cache = _CountingStore(tmp_path / "cache.sqlite")
    stores = Stores(vectors=store, admin=store, interactions=store, conversations=store, enrichment_cache=cache)
    stores.close()
    assert (store.closed, cache.closed) == (1, 1)
