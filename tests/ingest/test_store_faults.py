"""A read-only store and a full disk during an ingest, at the pipeline and through ``rag ingest``:
one line on stderr, a non-zero exit, the served version intact, and the next run resumes (issue 34).

Tests run as root here, where ``chmod`` stops no write; the store is then opened the way SQLite
opens a file this user may not write (``mode=ro``), so every write fails with the real
SQLITE_READONLY. The ``chmod`` variant runs where the tests are not root.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from backend.cli.main import cli
from backend.common.errors import StoreUnavailable
from backend.core.ports import Stores
from backend.ingest.pipeline import IngestPipeline
from backend.providers.sqlite_vs.connection import SqliteDatabase
from backend.providers.sqlite_vs.store import SqliteVectorStore
from tests.conftest import make_settings
from tests.ingest.helpers import write_config, write_corpus, write_manifest
from tests.ingest.test_full_disk import FillingStore

ALIAS = "KB_ACTIVE"


class ReadOnlyDatabase(SqliteDatabase):
    """The real database whose connections open the file read-only once ``read_only`` is set."""

    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        self.read_only = read_only
        super().__init__(path)

    def open(self) -> sqlite3.Connection:
        if not self.read_only:
            return super().open()
        con = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
        con.row_factory = sqlite3.Row
        return con


class ReadOnlyStore(SqliteVectorStore):
    """The real store on a ``ReadOnlyDatabase``; ``writes_left`` lets that many ``write_documents``
    through first, so the store turns read-only in the middle of an ingest (a file system
    remounted read-only after an error)."""

    def __init__(self, path: str | Path, read_only: bool = False, writes_left: int | None = None) -> None:
        self.read_only_db = ReadOnlyDatabase(path, read_only)
        self.writes_left = writes_left
        super().__init__(self.read_only_db)

    @property
    def read_only(self) -> bool:
        return self.read_only_db.read_only

    @read_only.setter
    def read_only(self, value: bool) -> None:
        self.read_only_db.read_only = value

    def write_documents(self, version: str, documents: Any, *, allow_served: bool = False) -> int:
        if self.writes_left is not None:
            if self.writes_left == 0:
                self.close()
                self.read_only = True
            self.writes_left -= 1
        return super().write_documents(version, documents, allow_served=allow_served)


def manifest_of(root: Path, docs: list[Path], name: str = "manifest.jsonl") -> Path:
    return write_manifest(root / name, [{"path": str(p), "doc_id": f"{p.parent.name}-{p.stem}"} for p in docs])


def served_state(store: SqliteVectorStore, version: str) -> tuple[Any, ...]:
    return (store.resolve_alias(ALIAS), sorted(store.get_version(version).__dict__.items()),
            store.document_hashes(version), len(store.alias_history(ALIAS)))


def test_a_store_turning_read_only_mid_ingest_ends_with_one_line_and_the_next_run_resumes(
        tmp_path: Path, embedder: Any) -> None:
    settings = make_settings(tmp_path, ingest={"allowed_roots": [str(tmp_path)], "documents_per_transaction": 2})
    store = ReadOnlyStore(settings.resolve_path(settings.store.sqlite.path))
    first = write_corpus(tmp_path / "docs", 4)
    served = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest_of(tmp_path, first)).version
    assert served is not None
    store.point_alias(ALIAS, served, reason="test")
    before = served_state(store, served)

    more = first + write_corpus(tmp_path / "more", 6)
    store.writes_left = 1  # the first group of two documents is committed, then the file turns read-only
    with pytest.raises(StoreUnavailable) as failed:
        IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest_of(tmp_path, more))
    message = failed.value.user_message
    assert "\n" not in message and str(store.path) in message
    assert "it is read-only" in message and "attempt to write a readonly database" in message
    assert "the served version is unchanged and the next run resumes" in message

    store.read_only, store.writes_left = False, None
    store.close()
    assert served_state(store, served) == before
    resumed = IngestPipeline.from_settings(settings, store, embedder, progress=False).run(manifest_of(tmp_path, more))
    assert resumed.ok and resumed.version not in (None, served)
    # the 4 carried from the served version and the 2 committed before the failure are not redone
    assert (resumed.skipped_unchanged, resumed.documents_written) == (6, 4)
    assert set(store.document_hashes(str(resumed.version))) == {f"{p.parent.name}-{p.stem}" for p in more}
    assert served_state(store, served) == before


# --- through the CLI ---------------------------------------------------------------------------
def quiet_config(tmp_path: Path, kb: Path) -> Path:
    """The CLI's config with warnings as the lowest log level: whatever else reaches stderr is noise."""
    config = write_config(tmp_path, kb, ingest={"allowed_roots": [str(kb)], "progress": False,
                                                "documents_per_transaction": 2})
    data = yaml.safe_load(config.read_text())
    data["logging"] = {"level": "WARNING", "format": "console"}
    config.write_text(yaml.safe_dump(data))
    return config


def ingest(config: Path, manifest: Path) -> Result:
    return CliRunner().invoke(cli, ["--config", str(config), "ingest", str(manifest)])


def the_one_line(result: Result) -> str:
    """stderr holds exactly one line, the error, and no traceback."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return lines[0]


@pytest.fixture
def served_kb(tmp_path: Path, embedder: Any) -> tuple[Path, Path, SqliteVectorStore, str]:
    """A config, a manifest of more documents than the served version holds, the store, the served version."""
    kb = tmp_path / "kb"
    first = write_corpus(kb / "docs", 4)
    config = quiet_config(tmp_path, kb)
    done = ingest(config, manifest_of(kb, first, "first.jsonl"))
    assert done.exit_code == 0, done.output
    store = SqliteVectorStore(tmp_path / "cli.sqlite")
    served = store.list_versions()[0].name
    store.point_alias(ALIAS, served, reason="test")
    return config, manifest_of(kb, first + write_corpus(kb / "more", 6)), store, served


def test_rag_ingest_on_a_read_only_store_prints_one_line_and_exits_1_then_resumes(
        served_kb: tuple[Path, Path, SqliteVectorStore, str], monkeypatch: pytest.MonkeyPatch) -> None:
    config, manifest, store, served = served_kb
    before = served_state(store, served)
    monkeypatch.setattr("backend.cli.ingest.open_stores",
                        lambda settings: ReadOnlyStore(settings.resolve_path(settings.store.sqlite.path), True).stores())
    failed = ingest(config, manifest)
    assert failed.exit_code == 1, failed.output
    line = the_one_line(failed)
    assert line == (f"error: SQLite store {store.path}: it is read-only (make the file, its folder and its -wal/-shm "
                    "files writable by this user) (attempt to write a readonly database); the transaction was rolled "
                    "back, the served version is unchanged and the next run resumes")
    assert served_state(store, served) == before and [v.name for v in store.list_versions()] == [served]

    monkeypatch.undo()
    resumed = ingest(config, manifest)
    assert resumed.exit_code == 0 and resumed.stderr == "", resumed.output
    assert "documents written:    6" in resumed.stdout and "skipped unchanged:    4" in resumed.stdout
    assert served_state(store, served) == before


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes through chmod")
def test_rag_ingest_on_a_chmod_read_only_store_prints_one_line_and_exits_1(
        served_kb: tuple[Path, Path, SqliteVectorStore, str]) -> None:
    config, manifest, store, served = served_kb
    before = served_state(store, served)
    store.close()
    files = list(Path(store.path).parent.glob("cli.sqlite*"))
    modes = {p: p.stat().st_mode for p in files}
    for p in files:
        p.chmod(0o444)
    try:
        failed = ingest(config, manifest)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
    assert failed.exit_code == 1, failed.output
    line = the_one_line(failed)
    assert line.startswith(f"error: SQLite store {store.path}") and "next run resumes" in line
    assert served_state(store, served) == before
    assert ingest(config, manifest).exit_code == 0


def test_rag_ingest_on_a_full_disk_prints_one_line_and_exits_1_then_resumes(
        served_kb: tuple[Path, Path, SqliteVectorStore, str], monkeypatch: pytest.MonkeyPatch) -> None:
    config, manifest, store, served = served_kb
    before = served_state(store, served)
    pages = store._conn().execute("PRAGMA page_count").fetchone()[0]

    def filling(settings: Any) -> Stores:
        full = FillingStore(settings.resolve_path(settings.store.sqlite.path))
        full.limit_pages = pages + 2  # room for almost nothing more
        full.close()
        return full.stores()

    monkeypatch.setattr("backend.cli.ingest.open_stores", filling)
    failed = ingest(config, manifest)
    assert failed.exit_code == 1, failed.output
    line = the_one_line(failed)
    assert line.startswith(f"error: SQLite store {store.path}: the disk is full (or the database reached its size "
                           "limit) (database or disk is full); the transaction was rolled back, the served version "
                           "is unchanged and the next run resumes"), line
    assert served_state(store, served) == before

    monkeypatch.undo()
    resumed = ingest(config, manifest)
    assert resumed.exit_code == 0 and resumed.stderr == "", resumed.output
    assert served_state(store, served) == before
