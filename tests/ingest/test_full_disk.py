"""A full disk during an ingest: one readable error, nothing half-written, the served version
intact, and the next run resumes (issue 34). The disk fills for real: SQLite's own page limit
(``PRAGMA max_page_count``) makes every write past it fail with SQLITE_FULL, as a full disk does."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from backend.common.errors import StoreUnavailable
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.connection import SqliteDatabase
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import make_settings
from tests.ingest.helpers import write_corpus, write_manifest


class FillingDatabase(SqliteDatabase):
    """The real database whose connections stop growing the file at ``limit_pages``."""

    limit_pages: int | None = None

    def connection(self) -> sqlite3.Connection:
        con = super().connection()
        if self.limit_pages is not None:
            con.execute(f"PRAGMA max_page_count={int(self.limit_pages)}")
        return con


class FillingStore(SqliteVectorStore):
    """The real store on a ``FillingDatabase``: every port it hands out fills the same file."""

    def __init__(self, path: str | Path) -> None:
        self.filling = FillingDatabase(path)
        super().__init__(self.filling)

    @property
    def limit_pages(self) -> int | None:
        return self.filling.limit_pages

    @limit_pages.setter
    def limit_pages(self, pages: int | None) -> None:
        self.filling.limit_pages = pages


def manifest_of(root: Path, docs: list[Path]) -> Path:
    return write_manifest(root / "manifest.jsonl", [{"path": str(p), "doc_id": f"{p.parent.name}-{p.stem}"} for p in docs])


def test_a_full_disk_ends_the_ingest_with_one_line_and_the_next_run_resumes(tmp_path: Path, embedder: Any) -> None:
    settings = make_settings(tmp_path, ingest={"allowed_roots": [str(tmp_path)]})
    store = FillingStore(settings.resolve_path(settings.store.sqlite.path))
    first = write_corpus(tmp_path / "docs", 4)
    report = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest_of(tmp_path, first))
    served = report.version
    assert served is not None
    store.point_alias(settings.embeddings.alias.name, served, reason="test")
    before = sorted(store.get_version(served).__dict__.items())

    more = first + write_corpus(tmp_path / "more", 40, sentences=40)
    pages = store._conn().execute("PRAGMA page_count").fetchone()[0]
    store.limit_pages = pages + 2  # room for almost nothing more
    store.close()
    with pytest.raises(StoreUnavailable) as failed:
        IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest_of(tmp_path, more))
    message = failed.value.user_message
    assert "\n" not in message and "the disk is full" in message and str(store.path) in message
    assert "served version is unchanged" in message

    store.limit_pages = None
    store.close()
    assert store.resolve_alias(settings.embeddings.alias.name) == served
    assert sorted(store.get_version(served).__dict__.items()) == before  # the served version was never written
    resumed = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest_of(tmp_path, more))
    assert resumed.ok and resumed.version is not None and resumed.version != served
    assert store.resolve_alias(settings.embeddings.alias.name) == served  # nothing promoted without the gate
