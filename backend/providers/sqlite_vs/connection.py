"""The SQLite file every port of the embedded store shares: connections and transactions.

Each thread gets its own connection (WAL mode, so readers never block the writer and see a
consistent snapshot); ``read()`` and ``write()`` are the only ways the ports touch the file, so
a write that fails (a full disk, a read-only file, a lock held too long) always ends in one
``StoreUnavailable`` that says what happened and that nothing half-written stays. Opening the
file brings a catalog made by an older release up to date, once.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, Sequence

import structlog

from backend.common.errors import StoreUnavailable
from backend.providers.sqlite_vs import schema

log = structlog.get_logger(__name__)
MEMORY = ":memory:"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def write_failed(path: str, exc: sqlite3.Error) -> StoreUnavailable:
    """One line that says what happened to the store and that nothing half-written stays."""
    text = str(exc).lower()
    if "full" in text:
        what = "the disk is full (or the database reached its size limit)"
    elif "readonly" in text or "read-only" in text:
        what = "it is read-only (make the file, its folder and its -wal/-shm files writable by this user)"
    elif "locked" in text or "busy" in text:
        what = "it is locked by another writer"
    else:
        what = "a write failed"
    return StoreUnavailable(f"SQLite store {path}: {what} ({exc}); the transaction was rolled back, the served "
                            "version is unchanged and the next run resumes", path=str(path))


def _rollback(con: sqlite3.Connection) -> None:
    try:
        con.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # SQLite already rolled back (a full disk ends the transaction itself)


class SqliteDatabase:
    """One SQLite file, a connection per thread. Subclass and override ``open`` (or ``connection``)
    to change how connections are made (tests use it to simulate a full disk or a read-only file)."""

    def __init__(self, path: str | Path, busy_timeout_ms: int = 10_000) -> None:
        self.path = str(Path(path).resolve()) if str(path) != MEMORY else MEMORY
        self.busy_timeout_ms = busy_timeout_ms
        if self.path != MEMORY:
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreUnavailable(f"cannot create the folder of SQLite store {self.path}: {exc.strerror}") from exc
        self._local = threading.local()
        try:
            self.connection().executescript(schema.CATALOG)
        except sqlite3.OperationalError as exc:  # a read-only or full store must say so, not trace back
            raise write_failed(self.path, exc) from exc
        self._upgrade_catalog()
        self._add_missing_version_tables("_facets", lambda name: (*schema.facet_ddl(name),
                                                                   *schema.facet_backfill_sql(name)),
                                         "store.facet_index_added")
        self._add_missing_version_tables("_summaries", schema.enrichment_ddl, "store.enrichment_tables_added")

    @property
    def in_memory(self) -> bool:
        return self.path == MEMORY

    # --- catalog upgrades ---------------------------------------------------------
    def _upgrade_catalog(self) -> None:
        """Add the catalog columns a database made by an older release lacks."""
        con = self.connection()
        for table, column, declaration in schema.CATALOG_UPGRADES:
            if not any(r["name"] == column for r in con.execute(f"PRAGMA table_info({table})")):
                with self.write() as w:
                    if not any(r["name"] == column for r in w.execute(f"PRAGMA table_info({table})")):
                        w.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

    def _add_missing_version_tables(self, suffix: str, ddl_of: Callable[[str], Sequence[str]], event: str) -> None:
        """Versions written before their metadata index (``_facets``) or their question and summary
        tables (``_summaries``) existed get them, filled once. Opening a current database only
        reads, so it never waits for a writer."""
        missing_sql = (f"SELECT name FROM rag_versions WHERE name || '{suffix}' NOT IN "
                       "(SELECT name FROM sqlite_master WHERE type = 'table')")
        if not self.connection().execute(missing_sql).fetchall():
            return
        with self.write() as con:
            for (name,) in con.execute(missing_sql).fetchall():
                for ddl in ddl_of(name):
                    con.execute(ddl)
                log.info(event, version=name)

    # --- connections and transactions ------------------------------------------------
    def open(self) -> sqlite3.Connection:
        """A new connection in autocommit mode (transactions are explicit), WAL, foreign keys on."""
        con = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None,
                              check_same_thread=False)
        con.row_factory = sqlite3.Row
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        con.execute("PRAGMA foreign_keys=ON")
        return con

    def connection(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is None:
            try:
                con = self.open()
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"cannot open SQLite store {self.path}: {exc}") from exc
            self._local.con = con
        return con

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``: it holds the write lock from its first
        statement, so what it reads cannot change before it commits)."""
        con = self.connection()
        try:
            con.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise write_failed(self.path, exc) from exc
        try:
            yield con
        except sqlite3.OperationalError as exc:
            _rollback(con)
            raise write_failed(self.path, exc) from exc
        except BaseException:
            _rollback(con)
            raise
        else:
            try:
                con.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                _rollback(con)
                raise write_failed(self.path, exc) from exc

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: every statement in it sees the same snapshot."""
        con = self.connection()
        con.execute("BEGIN")
        try:
            yield con
        except BaseException:
            con.execute("ROLLBACK")
            raise
        else:
            con.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection (the next use opens a new one)."""
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    def ping(self) -> None:
        """Raise ``StoreUnavailable`` unless the store answers a trivial query."""
        try:
            self.connection().execute("SELECT 1").fetchone()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite store {self.path} does not answer: {exc}") from exc


class OnDatabase:
    """A port on the store's ``SqliteDatabase`` (the same file and connections as the vector store):
    the interaction, conversation, audit and quota tables are catalog tables of fixed names."""

    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
