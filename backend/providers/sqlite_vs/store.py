"""The embedded default store: one SQLite file, versioned tables, alias views.

Implements ``VectorStore``, ``IndexAdmin`` and ``InteractionLog``. Each thread
gets its own connection (WAL mode, so readers never block the writer and see a
consistent snapshot). An alias is resolved and searched inside one read
transaction, so a concurrent rotation yields the old or the new version, never
a mix, never an error.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import structlog

from backend.common.config import SqliteAnnSettings
from backend.common.errors import (
    AliasNotFound,
    EmbeddingModelMismatch,
    StoreError,
    StoreUnavailable,
    VersionChanged,
    VersionConflict,
    VersionNotFound,
    VersionServed,
)
from backend.common.identifiers import validate_identifier
from backend.core.types import (
    ACL_FIELD,
    AliasChange,
    Candidates,
    Chunk,
    DocumentWrite,
    FieldFilter,
    IndexVersion,
    Interaction,
    LockHolder,
    QueryVector,
    QuestionHit,
    QuestionResult,
    ScoredChunk,
    SearchResult,
    StoredDocument,
    Summary,
    SummaryHit,
    SummaryKind,
    SummaryResult,
    VersionSpec,
    Visibility,
    content_hash,
)
from backend.core.model_stamp import same_model
from backend.providers.enrichment_rows import (
    SUMMARY_KINDS,
    summary_kinds,
    Enrichment,
    check_ids_across,
    chunk_ids_json,
    enrichment,
    summary_from_row,
)
from backend.providers.sqlite_vs import ann, dense, schema
from backend.providers.sqlite_vs.conversations import SqliteConversationLog
from backend.providers.sqlite_vs.series_lock import FileSeriesLease, FileSeriesLocks
from backend.providers.sqlite_vs.filters import check_filter_fields, filter_sql

log = structlog.get_logger(__name__)
_MATRICES = dense.MatrixCache()
_INDEXES = ann.AnnCache()
_ROW_COLUMNS = "rowid, chunk_id, doc_id, chunk_index, chunk_type, source, text, content_hash, metadata"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _row_to_chunk(row: sqlite3.Row) -> Chunk:
    return Chunk(
        chunk_id=row["chunk_id"],
        doc_id=row["doc_id"],
        text=row["text"],
        source=row["source"],
        chunk_index=row["chunk_index"],
        chunk_type=row["chunk_type"],
        metadata=json.loads(row["metadata"]),
        content_hash=row["content_hash"],
    )


def _tuples(con: sqlite3.Connection, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Rows as plain tuples: building a ``sqlite3.Row`` per row costs more than the query
    itself on the hot paths that read a few hundred (id, score) or (id, text) pairs."""
    cur = con.cursor()
    cur.row_factory = None
    return cur.execute(statement, list(params)).fetchall()


def fts_query(text: str) -> str:
    """User text as an FTS5 query: every word quoted (no operators), OR-ed. A repeated word
    stays repeated: ``bm25()`` sums over the query's phrases, so it counts once per occurrence
    (query term frequency, ``retrieval.lexical.query_term_frequency``; the search service
    sends each word once when that is off)."""
    import re

    words = re.findall(r"\w+", text.lower())
    return " OR ".join(f'"{w}"' for w in words)


def _with_visibility(filters: Sequence[FieldFilter], visibility: Visibility | None) -> tuple[FieldFilter, ...]:
    """Access control as one more facet condition, so it narrows the candidate rowids in the
    same indexed query as the filters, before the NumPy top-k (a hidden chunk never takes a slot)."""
    return (*filters, visibility.as_filter()) if visibility is not None else tuple(filters)


def _search_conditions(target: str, k: int, filters: Sequence[FieldFilter], visibility: Visibility | None
                       ) -> tuple[FieldFilter, ...]:
    """What every search checks before any SQL runs (``k``, the target's name, each filter
    field), and the filters with the reader's visibility added."""
    if k <= 0:
        raise StoreError(f"k must be positive, got {k}")
    validate_identifier(target, "retrieval target")
    filters = _with_visibility(filters, visibility)
    check_filter_fields(filters)
    return filters


def _check_chunk_ids(documents: Sequence[DocumentWrite]) -> None:
    """A chunk id claimed twice in one write would silently keep only one of the chunks."""
    seen: dict[str, str] = {}
    for doc in documents:
        for c in doc.chunks:
            if c.chunk_id in seen:
                raise StoreError(
                    f"chunk_id {c.chunk_id!r} appears twice in one write (documents {seen[c.chunk_id]} and "
                    f"{doc.doc_id}); chunk ids must be unique",
                    chunk_id=c.chunk_id,
                )
            seen[c.chunk_id] = doc.doc_id


class SqliteVectorStore(SqliteConversationLog):
    """``VectorStore`` + ``IndexAdmin`` + ``InteractionLog`` + ``ConversationLog`` on one SQLite file."""

    backend = "sqlite"

    def __init__(self, path: str | Path, busy_timeout_ms: int = 10_000,
                 ann_settings: SqliteAnnSettings | None = None) -> None:
        self.path = str(Path(path).resolve()) if str(path) != ":memory:" else ":memory:"
        self.ann = ann_settings if ann_settings is not None else SqliteAnnSettings()
        if self.path != ":memory:":
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreUnavailable(f"cannot create the folder of SQLite store {self.path}: {exc.strerror}") from exc
        self._timeout = busy_timeout_ms / 1000
        self._local = threading.local()
        try:
            self._conn().executescript(schema.CATALOG)
        except sqlite3.OperationalError as exc:  # a read-only or full store must say so, not trace back
            raise self._write_failed(exc) from exc
        self._upgrade_catalog()
        self._add_missing_facet_indexes()
        self._add_missing_enrichment_tables()

    def _upgrade_catalog(self) -> None:
        """Add the catalog columns a database made by an older release lacks."""
        con = self._conn()
        for table, column, declaration in schema.CATALOG_UPGRADES:
            if not any(r["name"] == column for r in con.execute(f"PRAGMA table_info({table})")):
                with self._write() as w:
                    if not any(r["name"] == column for r in w.execute(f"PRAGMA table_info({table})")):
                        w.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

    def _add_missing_facet_indexes(self) -> None:
        """Versions written before the metadata index existed get it, filled once.
        Opening a current database only reads, so it never waits for a writer."""
        missing_sql = ("SELECT name FROM rag_versions WHERE name || '_facets' NOT IN "
                       "(SELECT name FROM sqlite_master WHERE type = 'table')")
        if not self._conn().execute(missing_sql).fetchall():
            return
        with self._write() as con:
            for (name,) in con.execute(missing_sql).fetchall():
                for ddl in (*schema.facet_ddl(name), *schema.facet_backfill_sql(name)):
                    con.execute(ddl)
                log.info("store.facet_index_added", version=name)

    def _add_missing_enrichment_tables(self) -> None:
        """Versions made before questions and summaries were stored get their (empty) tables."""
        missing_sql = ("SELECT name FROM rag_versions WHERE name || '_summaries' NOT IN "
                       "(SELECT name FROM sqlite_master WHERE type = 'table')")
        if not self._conn().execute(missing_sql).fetchall():
            return
        with self._write() as con:
            for (name,) in con.execute(missing_sql).fetchall():
                for ddl in schema.enrichment_ddl(name):
                    con.execute(ddl)
                log.info("store.enrichment_tables_added", version=name)

    # --- connections and transactions ------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            try:
                con = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False)
                con.row_factory = sqlite3.Row
                con.execute("PRAGMA journal_mode=WAL")
                con.execute("PRAGMA synchronous=NORMAL")
                con.execute("PRAGMA foreign_keys=ON")
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"cannot open SQLite store {self.path}: {exc}") from exc
            self._local.con = con
        return con

    def _write_failed(self, exc: sqlite3.Error) -> StoreUnavailable:
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
        return StoreUnavailable(f"SQLite store {self.path}: {what} ({exc}); the transaction was rolled back, the served "
                                "version is unchanged and the next run resumes", path=str(self.path))

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        con = self._conn()
        try:
            con.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise self._write_failed(exc) from exc
        try:
            yield con
        except sqlite3.OperationalError as exc:
            self._rollback(con)
            raise self._write_failed(exc) from exc
        except BaseException:
            self._rollback(con)
            raise
        else:
            try:
                con.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                self._rollback(con)
                raise self._write_failed(exc) from exc

    @staticmethod
    def _rollback(con: sqlite3.Connection) -> None:
        try:
            con.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # SQLite already rolled back (a full disk ends the transaction itself)

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        con = self._conn()
        con.execute("BEGIN")
        try:
            yield con
        except BaseException:
            con.execute("ROLLBACK")
            raise
        else:
            con.execute("COMMIT")

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    def ping(self) -> None:
        """Raise ``StoreUnavailable`` unless the store answers a trivial query."""
        try:
            self._conn().execute("SELECT 1").fetchone()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite store {self.path} does not answer: {exc}") from exc

    def lock_series(self, series: str, holder: LockHolder, *, wait_s: float = 0.0) -> FileSeriesLease:
        """``SeriesLocking``: an OS file lock beside the database (``series_lock``)."""
        return FileSeriesLocks(self.path).lock_series(series, holder, wait_s=wait_s)

    # --- versions ------------------------------------------------------------------
    def _version_row(self, con: sqlite3.Connection, name: str) -> sqlite3.Row:
        row = con.execute("SELECT * FROM rag_versions WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise VersionNotFound(f"index version {name!r} does not exist", version=name)
        return row

    @staticmethod
    def _count(con: sqlite3.Connection, name: str) -> tuple[int, int, int]:
        """Chunks, documents and bytes of a version: a scan of every row."""
        t = validate_identifier(name, "index_name")
        chunks, docs, size = con.execute(
            f"SELECT COUNT(*), COUNT(DISTINCT doc_id), "
            f"COALESCE(SUM(LENGTH(CAST(text AS BLOB)) + LENGTH(metadata) + LENGTH(embedding)), 0) FROM {t}"
        ).fetchone()
        return int(chunks), int(docs), int(size)

    def _to_version(self, con: sqlite3.Connection, row: sqlite3.Row) -> IndexVersion:
        """The counts ``finish_load`` recorded at the version's present generation, else a scan (L9:
        listing versions reads one registry row per finished version, not every chunk)."""
        recorded = json.loads(row["counts"]) if "counts" in row.keys() and row["counts"] else None
        if recorded is not None and recorded[0] == row["generation"]:
            chunks, docs, size = recorded[1:]
        else:
            chunks, docs, size = self._count(con, row["name"])
        return IndexVersion(
            name=row["name"],
            model=row["model"],
            dimension=row["dimension"],
            distance=row["distance"],
            created_at=row["created_at"],
            chunk_count=chunks,
            doc_count=docs,
            profile=row["profile"],
            evaluation=json.loads(row["evaluation"]) if row["evaluation"] else None,
            generation=row["generation"],
            parent=row["parent"],
            size_bytes=int(size),
            retrieval=json.loads(row["retrieval"]) if row["retrieval"] else None,
        )

    def create_version(self, spec: VersionSpec) -> IndexVersion:
        name = validate_identifier(spec.name, "index_name")
        with self._write() as con:
            row = con.execute("SELECT * FROM rag_versions WHERE name = ?", (name,)).fetchone()
            if row is not None:
                existing = (row["model"], row["dimension"], row["distance"])
                wanted = (spec.model, spec.dimension, spec.distance)
                if existing != wanted:
                    raise VersionConflict(
                        f"index version {name} exists with model {existing[0]} ({existing[1]} dims, {existing[2]}); "
                        f"cannot reuse it for {wanted[0]} ({wanted[1]} dims, {wanted[2]}); choose a new index_name",
                        version=name,
                    )
                self._restamp(con, row, spec.retrieval)
            else:
                if con.execute("SELECT 1 FROM rag_aliases WHERE alias = ?", (name,)).fetchone():
                    raise VersionConflict(f"{name} is already an alias; a version cannot share its name", version=name)
                parent = self._check_parent(con, spec)
                for ddl in schema.version_ddl(name):
                    con.execute(ddl)
                if parent is not None:
                    for statement in schema.copy_version_sql(parent, name):
                        con.execute(statement)
                con.execute(
                    "INSERT INTO rag_versions(name, model, dimension, distance, profile, created_at, parent, retrieval) "
                    "VALUES (?,?,?,?,?,?,?,?)",
                    (name, spec.model, spec.dimension, spec.distance, spec.profile, _now(), parent,
                     json.dumps(spec.retrieval, sort_keys=True) if spec.retrieval is not None else None),
                )
                log.info("store.version_created", version=name, model=spec.model, dimension=spec.dimension,
                         parent=parent)
            return self._to_version(con, self._version_row(con, name))

    @staticmethod
    def _restamp(con: sqlite3.Connection, row: sqlite3.Row, retrieval: Mapping[str, Any] | None) -> None:
        """An ingest writing an existing version (a resumed candidate, ``--in-place``) records the
        retrieval settings it runs with; the generation moves, so an earlier evaluation is stale."""
        stamp = json.dumps(retrieval, sort_keys=True) if retrieval is not None else None
        if stamp is None or stamp == row["retrieval"]:
            return
        con.execute("UPDATE rag_versions SET retrieval = ?, generation = generation + 1 WHERE name = ?",
                    (stamp, row["name"]))
        log.info("store.version_restamped", version=row["name"])

    def resolve_retrieval(self, target: str) -> tuple[str, Mapping[str, Any] | None]:
        validate_identifier(target, "retrieval target")
        with self._read() as con:
            row = self._resolve_target(con, target)
        return str(row["name"]), json.loads(row["retrieval"]) if row["retrieval"] else None

    def _check_parent(self, con: sqlite3.Connection, spec: VersionSpec) -> str | None:
        if spec.parent is None:
            return None
        parent = self._version_row(con, validate_identifier(spec.parent, "parent version"))
        if (parent["model"], parent["dimension"], parent["distance"]) != (spec.model, spec.dimension, spec.distance):
            raise VersionConflict(
                f"cannot build {spec.name} from {spec.parent}: {spec.parent} holds {parent['model']} "
                f"({parent['dimension']} dims, {parent['distance']}), the new version {spec.model} "
                f"({spec.dimension} dims, {spec.distance}); build it without a parent", version=spec.name)
        return str(parent["name"])

    def _protected(self, con: sqlite3.Connection) -> dict[str, str]:
        out: dict[str, str] = {}
        for r in con.execute("SELECT alias, version FROM rag_aliases ORDER BY alias"):
            out.setdefault(r["version"], f"{r['alias']} live")
        rows = con.execute(
            "SELECT h.alias, h.previous FROM rag_alias_history AS h WHERE h.previous IS NOT NULL AND h.id = "
            "(SELECT MAX(id) FROM rag_alias_history WHERE alias = h.alias) ORDER BY h.alias")
        for r in rows:
            out.setdefault(r["previous"], f"{r['alias']} rollback")
        return out

    def protected_versions(self) -> dict[str, str]:
        with self._read() as con:
            return self._protected(con)

    def _check_writable(self, con: sqlite3.Connection, version: str, allow_served: bool) -> None:
        if allow_served:
            return
        why = self._protected(con).get(version)
        if why is not None:
            raise VersionServed(
                f"{version} is served ({why}) and served versions are never written; ingest builds the next "
                "version instead (or pass --in-place to write it anyway)", version=version)

    def finish_load(self, version: str) -> None:
        """Builds the version's HNSW index when it holds ``store.sqlite.ann.min_vectors`` rows or more
        (``_build_indexes``; smaller versions are scanned exactly, the matrix cache reloading by generation).
        The version is counted once and the counts recorded with the generation they describe, so
        listing versions does not scan every row (a later write moves the generation: counted again).
        The record is advisory: a store that cannot take it (a full disk, a read-only file) logs that and
        is counted by scans as before."""
        validate_identifier(version, "index_name")
        try:
            with self._write() as con:
                row = self._version_row(con, version)
                counts = [row["generation"], *self._count(con, row["name"])]
                con.execute("UPDATE rag_versions SET counts = ? WHERE name = ?", (json.dumps(counts), row["name"]))
        except VersionNotFound:
            raise
        except StoreError as exc:
            log.warning("store.counts_not_recorded", version=version, error=str(exc)[:200])
        self._build_indexes(version)

    def _build_indexes(self, version: str) -> None:
        """The version's HNSW indexes (chunks, and questions/summaries where they hold enough rows),
        built outside any write transaction from the cached matrices and stamped with the generation
        they were read at; a write that lands meanwhile moves the generation, so the stamp is not
        recorded and the exact scan answers. Failing to build is logged, never fatal: exact stays."""
        if self.path == ":memory:" or not self.ann.enabled:
            return
        stamp: dict[str, Any] = {}
        with self._read() as con:
            vrow = self._version_row(con, version)
            generation = vrow["generation"]
            matrices = {side: self._matrix(con, vrow, side) for side in ann.SIDES}
        try:
            for side, m in matrices.items():
                if len(m.rowids) < self.ann.min_vectors:
                    continue
                t0 = datetime.now(timezone.utc)
                entry = ann.build(ann.index_file(self.path, version, side), m.rowids, m.vectors, vrow["distance"],
                                  self.ann)
                entry["build_s"] = round((datetime.now(timezone.utc) - t0).total_seconds(), 2)
                entry["built_at"] = _now()
                stamp[side or "chunks"] = entry
                log.info("store.ann_built", version=version, side=side or "chunks", **entry)
        except Exception as exc:  # noqa: BLE001 - no index means exact search, never a failed load
            log.warning("store.ann_not_built", version=version, error=str(exc)[:200], fallback="exact search")
            stamp = {}
        with self._write() as con:
            row = self._version_row(con, version)
            if row["generation"] != generation:
                log.warning("store.ann_stale", version=version, built_at=generation, now=row["generation"])
                return
            con.execute("UPDATE rag_versions SET ann = ? WHERE name = ?",
                        (json.dumps({"generation": generation, **stamp}) if stamp else None, row["name"]))
        for side in ann.SIDES:
            _INDEXES.drop(self.path, f"{version}@{vrow['created_at']}" + (f"#{side}" if side else ""))

    def get_version(self, name: str) -> IndexVersion:
        validate_identifier(name, "index_name")
        with self._read() as con:
            return self._to_version(con, self._version_row(con, name))

    def list_versions(self) -> list[IndexVersion]:
        with self._read() as con:
            rows = con.execute("SELECT * FROM rag_versions ORDER BY created_at").fetchall()
            return [self._to_version(con, r) for r in rows]

    def drop_version(self, name: str) -> None:
        validate_identifier(name, "index_name")
        with self._write() as con:
            created_at = self._version_row(con, name)["created_at"]
            why = self._protected(con).get(name)
            if why is not None:
                raise StoreError(f"cannot drop {name}: it is protected ({why}); point the alias elsewhere first",
                                 version=name)
            for ddl in schema.drop_version_ddl(name):
                con.execute(ddl)
            con.execute("DELETE FROM rag_versions WHERE name = ?", (name,))
        for suffix in ("", "#questions", "#summaries"):
            _MATRICES.drop(self.path, f"{name}@{created_at}{suffix}")
            _INDEXES.drop(self.path, f"{name}@{created_at}{suffix}")
        if self.path != ":memory:":
            ann.remove(self.path, name)
        log.info("store.version_dropped", version=name)

    def record_evaluation(self, version: str, report: Mapping[str, Any]) -> None:
        validate_identifier(version, "index_name")
        with self._write() as con:
            self._version_row(con, version)
            con.execute("UPDATE rag_versions SET evaluation = ? WHERE name = ?", (json.dumps(report), version))

    # --- aliases -------------------------------------------------------------------
    def point_alias(self, alias: str, version: str, *, reason: str = "", forced: bool = False,
                    expected_generation: int | None = None) -> AliasChange:
        validate_identifier(alias, "alias name")
        validate_identifier(version, "index_name")
        with self._write() as con:  # BEGIN IMMEDIATE: no write commits between this read and the rotation
            target = self._version_row(con, version)
            if expected_generation is not None and int(target["generation"]) != expected_generation:
                raise VersionChanged(
                    f"{version} changed since it was evaluated (generation {target['generation']}, evaluated "
                    f"{expected_generation}): a write committed in between; {alias} was not rotated, evaluate "
                    "it again", version=version, alias=alias)
            if con.execute("SELECT 1 FROM rag_versions WHERE name = ?", (alias,)).fetchone():
                raise VersionConflict(f"{alias} is a version name; an alias cannot share it", alias=alias)
            cur = con.execute("SELECT version FROM rag_aliases WHERE alias = ?", (alias,)).fetchone()
            previous = cur["version"] if cur else None
            if previous is not None and not forced:
                old = self._version_row(con, previous)
                if not same_model(old["model"], target["model"]) or old["dimension"] != target["dimension"]:
                    raise VersionConflict(
                        f"alias {alias} serves {previous} ({old['model']}, {old['dimension']} dims); "
                        f"{version} uses {target['model']} ({target['dimension']} dims). Queries would be "
                        "embedded with the wrong model; use --force only if the readers change model too",
                        alias=alias,
                    )
            for ddl in schema.alias_view_ddl(alias, version):
                con.execute(ddl)
            now = _now()
            con.execute(
                "INSERT INTO rag_aliases(alias, version, changed_at) VALUES (?,?,?) "
                "ON CONFLICT(alias) DO UPDATE SET version = excluded.version, changed_at = excluded.changed_at",
                (alias, version, now),
            )
            con.execute(
                "INSERT INTO rag_alias_history(alias, version, previous, changed_at, reason, forced) VALUES (?,?,?,?,?,?)",
                (alias, version, previous, now, reason, int(forced)),
            )
        log.info("store.alias_pointed", alias=alias, version=version, previous=previous, forced=forced)
        return AliasChange(alias, version, previous, now, reason, forced)

    def resolve_alias(self, alias: str) -> str | None:
        validate_identifier(alias, "alias name")
        with self._read() as con:
            row = con.execute("SELECT version FROM rag_aliases WHERE alias = ?", (alias,)).fetchone()
        return row["version"] if row else None

    def list_aliases(self) -> dict[str, str]:
        with self._read() as con:
            return {r["alias"]: r["version"] for r in con.execute("SELECT alias, version FROM rag_aliases ORDER BY alias")}

    def alias_history(self, alias: str) -> list[AliasChange]:
        validate_identifier(alias, "alias name")
        with self._read() as con:
            rows = con.execute(
                "SELECT * FROM rag_alias_history WHERE alias = ? ORDER BY id DESC", (alias,)
            ).fetchall()
        return [
            AliasChange(r["alias"], r["version"], r["previous"], r["changed_at"], r["reason"], bool(r["forced"]))
            for r in rows
        ]

    def _resolve_target(self, con: sqlite3.Connection, target: str) -> sqlite3.Row:
        validate_identifier(target, "retrieval target")
        row = con.execute("SELECT version FROM rag_aliases WHERE alias = ?", (target,)).fetchone()
        if row is not None:
            return self._version_row(con, row["version"])
        row = con.execute("SELECT * FROM rag_versions WHERE name = ?", (target,)).fetchone()
        if row is None:
            raise AliasNotFound(f"{target!r} is neither an alias nor an index version; ingest and promote first", target=target)
        return row

    # --- writes --------------------------------------------------------------------
    def write_documents(self, version: str, documents: Sequence[DocumentWrite], *, allow_served: bool = False) -> int:
        validate_identifier(version, "index_name")
        _check_chunk_ids(documents)
        check_ids_across(documents)
        written = 0
        with self._write() as con:
            vrow = self._version_row(con, version)
            t = vrow["name"]
            self._check_writable(con, t, allow_served)
            changed = False
            for doc in documents:
                vectors = np.asarray(doc.vectors, dtype=np.float32)
                if len(doc.chunks) != len(vectors):
                    raise StoreError(f"document {doc.doc_id}: {len(doc.chunks)} chunks but {len(vectors)} vectors")
                if len(vectors) and vectors.shape[1] != vrow["dimension"]:
                    raise EmbeddingModelMismatch(
                        f"document {doc.doc_id}: vectors have {vectors.shape[1]} dimensions, version {t} "
                        f"expects {vrow['dimension']} ({vrow['model']})",
                        version=t,
                    )
                rows = [
                    (
                        c.chunk_id, c.doc_id, doc.doc_hash, c.chunk_index, c.chunk_type, c.source, c.text,
                        c.content_hash, content_hash(c.text_to_embed),
                        json.dumps(dict(c.metadata), sort_keys=True, ensure_ascii=False), v.tobytes(),
                    )
                    for c, v in zip(doc.chunks, vectors)
                ]
                extra = enrichment(doc, t, vrow["dimension"], vrow["model"])
                old = con.execute(
                    f"SELECT chunk_id, doc_id, doc_hash, chunk_index, chunk_type, source, text, content_hash, "
                    f"embed_hash, metadata, embedding FROM {t} WHERE doc_id = ? ORDER BY chunk_index, chunk_id",
                    (doc.doc_id,),
                ).fetchall()
                same_chunks = [tuple(r) for r in old] == sorted(rows, key=lambda r: (r[3], r[0]))
                same_extra = self._replace_enrichment(con, t, doc.doc_id, extra, dry_run=True)
                if same_chunks and same_extra:
                    continue
                changed = True
                if not same_extra:
                    self._replace_enrichment(con, t, doc.doc_id, extra)
                if same_chunks:
                    continue
                con.execute(f"DELETE FROM {t}_fts WHERE rowid IN (SELECT rowid FROM {t} WHERE doc_id = ?)", (doc.doc_id,))
                con.execute(f"DELETE FROM {t} WHERE doc_id = ?", (doc.doc_id,))
                for r in rows:
                    # chunk_id is unique across the version: a chunk that moved documents is replaced
                    con.execute(f"DELETE FROM {t}_fts WHERE rowid IN (SELECT rowid FROM {t} WHERE chunk_id = ?)", (r[0],))
                    con.execute(f"DELETE FROM {t} WHERE chunk_id = ?", (r[0],))
                    cur = con.execute(
                        f"INSERT INTO {t}(chunk_id, doc_id, doc_hash, chunk_index, chunk_type, source, text, "
                        "content_hash, embed_hash, metadata, embedding) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        r,
                    )
                    con.execute(f"INSERT INTO {t}_fts(rowid, text) VALUES (?, ?)", (cur.lastrowid, r[6]))
                written += len(rows)
            if changed:
                con.execute("UPDATE rag_versions SET generation = generation + 1 WHERE name = ?", (t,))
        return written

    @staticmethod
    def _replace_enrichment(con: sqlite3.Connection, t: str, doc_id: str, extra: Enrichment, *,
                            dry_run: bool = False) -> bool:
        """Make the document's questions and summaries exactly ``extra``. With ``dry_run`` only
        compare: True when the stored rows already are ``extra`` (nothing to write)."""
        q_rows = sorted((q.question_id, q.chunk_id, doc_id, q.text, np.asarray(v, np.float32).tobytes())
                        for q, v in extra.questions)
        s_rows = sorted((s.summary_id, doc_id, s.kind, s.page, s.text, chunk_ids_json(s),
                         np.asarray(v, np.float32).tobytes()) for s, v in extra.summaries)
        if dry_run:
            stored_q = [tuple(r) for r in con.execute(
                f"SELECT {schema.QUESTION_COLUMNS} FROM {t}_questions WHERE doc_id = ? ORDER BY question_id",
                (doc_id,))]
            stored_s = [tuple(r) for r in con.execute(
                f"SELECT {schema.SUMMARY_COLUMNS} FROM {t}_summaries WHERE doc_id = ? ORDER BY summary_id",
                (doc_id,))]
            return stored_q == q_rows and stored_s == s_rows
        con.execute(f"DELETE FROM {t}_questions WHERE doc_id = ?", (doc_id,))
        con.execute(f"DELETE FROM {t}_summaries WHERE doc_id = ?", (doc_id,))
        # a chunk that moved here from another document takes its questions along, never two sets
        con.executemany(f"DELETE FROM {t}_questions WHERE chunk_id = ?", sorted({(r[1],) for r in q_rows}))
        con.executemany(f"DELETE FROM {t}_questions WHERE question_id = ?", [(r[0],) for r in q_rows])
        con.executemany(f"DELETE FROM {t}_summaries WHERE summary_id = ?", [(r[0],) for r in s_rows])
        con.executemany(f"INSERT INTO {t}_questions({schema.QUESTION_COLUMNS}) VALUES (?,?,?,?,?)", q_rows)
        con.executemany(f"INSERT INTO {t}_summaries({schema.SUMMARY_COLUMNS}) VALUES (?,?,?,?,?,?,?)", s_rows)
        return True

    def delete_documents(self, version: str, doc_ids: Sequence[str], *, allow_served: bool = False) -> int:
        validate_identifier(version, "index_name")
        deleted = 0
        with self._write() as con:
            t = self._version_row(con, version)["name"]
            self._check_writable(con, t, allow_served)
            for doc_id in doc_ids:
                con.execute(f"DELETE FROM {t}_fts WHERE rowid IN (SELECT rowid FROM {t} WHERE doc_id = ?)", (doc_id,))
                deleted += con.execute(f"DELETE FROM {t} WHERE doc_id = ?", (doc_id,)).rowcount
                con.execute(f"DELETE FROM {t}_questions WHERE doc_id = ?", (doc_id,))
                con.execute(f"DELETE FROM {t}_summaries WHERE doc_id = ?", (doc_id,))
            if deleted:
                con.execute("UPDATE rag_versions SET generation = generation + 1 WHERE name = ?", (t,))
        return deleted

    def document_hashes(self, version: str) -> dict[str, str]:
        validate_identifier(version, "index_name")
        with self._read() as con:
            t = self._version_row(con, version)["name"]
            return {r[0]: r[1] for r in con.execute(f"SELECT doc_id, MIN(doc_hash) FROM {t} GROUP BY doc_id")}

    def document_list(self, version: str) -> list[StoredDocument]:
        validate_identifier(version, "index_name")
        with self._read() as con:
            t = self._version_row(con, version)["name"]
            return [StoredDocument(r[0], r[1], r[2], int(r[3])) for r in con.execute(
                f"SELECT doc_id, MIN(doc_hash), MIN(source), COUNT(*) FROM {t} GROUP BY doc_id ORDER BY doc_id")]

    def asset_refs(self, version: str, *, visibility: Visibility | None = None) -> set[str]:
        validate_identifier(version, "index_name")
        with self._read() as con:
            t = self._version_row(con, version)["name"]
            if visibility is None:
                return {str(r[0]) for r in con.execute(
                    f"SELECT DISTINCT value FROM {t}_facets WHERE field = 'image_ref'")}
            # only the images cited by a chunk the reader may see
            marks = ",".join("?" * len(visibility.labels))
            return {str(r[0]) for r in con.execute(
                f"SELECT DISTINCT value FROM {t}_facets WHERE field = 'image_ref' AND rid IN "
                f"(SELECT rid FROM {t}_facets WHERE field = ? AND value IN ({marks}))",
                (ACL_FIELD, *visibility.labels))}

    def cached_vectors(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Looks in every version built with ``model`` (newest first) by ``embed_hash``."""
        out: dict[str, np.ndarray] = {}
        wanted = list(dict.fromkeys(text_hashes))
        with self._read() as con:
            tables = [r[0] for r in con.execute(
                "SELECT name FROM rag_versions WHERE model = ? ORDER BY created_at DESC", (model,))]
            for table in tables:
                t = validate_identifier(table, "index_name")
                missing = [h for h in wanted if h not in out]
                for start in range(0, len(missing), 500):
                    part = missing[start:start + 500]
                    marks = ",".join("?" * len(part))
                    for r in con.execute(f"SELECT embed_hash, embedding FROM {t} WHERE embed_hash IN ({marks})", part):
                        out[r[0]] = np.frombuffer(r[1], dtype=np.float32)
                if len(out) == len(wanted):
                    break
        return out

    # --- reads ---------------------------------------------------------------------
    def _matrix(self, con: sqlite3.Connection, vrow: sqlite3.Row, side: str = "") -> dense.Matrix:
        """The version's chunk vectors, or with ``side`` those of its ``questions`` or
        ``summaries`` table, read once per generation and cached."""
        name, generation = vrow["name"], vrow["generation"]
        # keyed by creation time too: a version dropped and re-created under the same name
        # (possibly by another process) restarts its generation at 0
        key = f"{name}@{vrow['created_at']}" + (f"#{side}" if side else "")
        m = _MATRICES.get(self.path, key, generation)
        if m is None:
            # chunk matrices keep each row's chunk id, so dense candidates need no row reads
            columns = "rowid, embedding, chunk_id" if not side else "rowid, embedding"
            rows = con.execute(f"SELECT {columns} FROM {name}{'_' + side if side else ''}").fetchall()
            dim = vrow["dimension"]
            rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vectors = (
                np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
                if rows else np.zeros((0, dim), dtype=np.float32)
            )
            ids = np.array([r[2] for r in rows], dtype=object) if not side else None
            m = dense.prepare(rowids, vectors, vrow["distance"], generation, ids)
            _MATRICES.put(self.path, key, m)
        return m

    def _fetch(self, con: sqlite3.Connection, table: str, rowids: Sequence[int]) -> dict[int, Chunk]:
        out: dict[int, Chunk] = {}
        for start in range(0, len(rowids), 500):
            part = [int(r) for r in rowids[start:start + 500]]
            marks = ",".join("?" * len(part))
            for row in con.execute(f"SELECT {_ROW_COLUMNS} FROM {table} WHERE rowid IN ({marks})", part):
                out[row["rowid"]] = _row_to_chunk(row)
        return out

    def _dense_best(self, con: sqlite3.Connection, vrow: sqlite3.Row, query: QueryVector, k: int,
                    filters: Sequence[FieldFilter]) -> tuple[dense.Matrix, np.ndarray, np.ndarray, ann.Plan]:
        """The top-``k`` chunks passing ``filters``: their positions in the version's matrix and
        their similarities, best first (ties by position, i.e. by rowid), and how they were found."""
        t = vrow["name"]
        self._check_query(vrow, query)
        m = self._matrix(con, vrow)
        allowed: np.ndarray | None = None
        if filters:
            where, params = filter_sql(filters, t)
            allowed = np.sort(np.fromiter(
                (r[0] for r in con.execute(f"SELECT t.rowid FROM {t} AS t WHERE {where}", params)), dtype=np.int64
            ))
        best, sims, how = self._ranked(vrow, "", m, query, k, allowed)
        return m, best, sims, how

    def _index(self, vrow: sqlite3.Row, side: str, m: dense.Matrix) -> tuple[ann.Searcher | None, str]:
        """The loaded HNSW index of this version's ``side`` when it describes the rows being
        searched (same generation, same count), else ``None`` and why not."""
        if not self.ann.enabled:
            return None, "store.sqlite.ann.enabled is off"
        stamp = json.loads(vrow["ann"]) if "ann" in vrow.keys() and vrow["ann"] else {}
        entry = stamp.get(side or "chunks")
        if entry is None:
            if len(m.rowids) < self.ann.min_vectors:
                return None, f"{len(m.rowids)} rows < store.sqlite.ann.min_vectors ({self.ann.min_vectors})"
            return None, "no index built (finish_load has not run since the last write)"
        if stamp["generation"] != vrow["generation"] or entry["count"] != len(m.rowids):
            return None, "index stale (the version was written after finish_load)"
        key = f"{vrow['name']}@{vrow['created_at']}" + (f"#{side}" if side else "")
        index = _INDEXES.get(self.path, key, vrow["generation"], ann.index_file(self.path, vrow["name"], side), entry)
        return index, ("index file unusable (logged); run finish_load to rebuild" if index is None else "")

    def _ranked(self, vrow: sqlite3.Row, side: str, m: dense.Matrix, query: QueryVector, depth: int,
                allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, ann.Plan]:
        """Positions in ``m`` of the best ``depth`` rows among ``allowed`` (sorted rowids; None: all)
        and their exact similarities, best first, ties by rowid. By the HNSW index where there is one
        and the filter leaves enough rows (widened by the visible fraction); when the widened search
        still finds fewer than ``depth`` visible rows, by the exact scan over them, so no hidden row is
        ever returned and no visible one is missed for lack of depth."""
        q = query.values.astype(np.float32)
        index, why_none = self._index(vrow, side, m)
        visible = len(m.rowids) if allowed is None else len(allowed)
        how = ann.plan(len(m.rowids), None if allowed is None else visible, depth, index is not None, self.ann,
                       why_none)
        if how.kind == "hnsw" and index is not None:
            keys = np.sort(ann.query(index, q, how.depth))
            if allowed is not None:
                keys = keys[np.isin(keys, allowed, assume_unique=True)]
            positions = np.minimum(np.searchsorted(m.rowids, keys), max(len(m.rowids) - 1, 0))
            positions = positions[m.rowids[positions] == keys]  # a key this matrix lacks is never a hit
            sims = dense.scores(m.vectors[positions], q, vrow["distance"])
            best = dense.top_k(sims, depth)
            if len(best) >= min(depth, visible):
                return positions[best], sims[best], how
            how = ann.Plan("exact", f"hnsw at depth {how.depth} found {len(best)} of {min(depth, visible)} "
                                    "visible rows; exact over the visible rows")
        if allowed is None:  # the whole matrix, not a copy of it
            sims = dense.scores(m.vectors, q, vrow["distance"])
            best = dense.top_k(sims, depth)
            return best, sims[best], how
        positions = np.searchsorted(m.rowids, allowed)
        sims = dense.scores(m.vectors[positions], q, vrow["distance"])
        best = dense.top_k(sims, depth)
        return positions[best], sims[best], how

    def search(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
               visibility: Visibility | None = None) -> SearchResult:
        filters = _search_conditions(target, k, filters, visibility)
        with self._read() as con:
            vrow = self._resolve_target(con, target)
            t = vrow["name"]
            m, best, sims, how = self._dense_best(con, vrow, query, k, filters)
            rowids = m.rowids[best].tolist()
            chunks = self._fetch(con, t, rowids)
            hits = tuple(
                ScoredChunk(chunks[rid], score, rank, vrow["distance"])
                for rank, (rid, score) in enumerate(zip(rowids, sims.tolist()), start=1)
            )
        return SearchResult(target=target, version=t, hits=hits, strategy="dense", dense_index=how.explain())

    def dense_candidates(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         visibility: Visibility | None = None) -> Candidates:
        """``search``'s ranking; chunk ids come from the cached matrix, so no row is read."""
        filters = _search_conditions(target, k, filters, visibility)
        with self._read() as con:
            vrow = self._resolve_target(con, target)
            m, best, sims, how = self._dense_best(con, vrow, query, k, filters)
            assert m.ids is not None
            hits = tuple(zip(m.ids[best].tolist(), sims.tolist()))
        return Candidates(target, vrow["name"], hits, vrow["distance"], dense_index=how.explain())

    def similarities(self, version: str, query: QueryVector, chunk_ids: Sequence[str], *,
                     visibility: Visibility | None = None) -> dict[str, float]:
        """Scores the rows of exactly these chunks, as ``search`` restricted to them by a filter would
        (the same rows in the same rowid order)."""
        validate_identifier(version, "retrieval target")
        with self._read() as con:
            vrow = self._resolve_target(con, version)
            self._check_query(vrow, query)
            m = self._matrix(con, vrow)
            rowids = self._visible_rowids(con, vrow["name"], m, chunk_ids, visibility)
        positions = np.searchsorted(m.rowids, rowids)
        sims = dense.scores(m.vectors[positions], query.values.astype(np.float32), vrow["distance"])
        assert m.ids is not None
        return dict(zip(m.ids[positions].tolist(), sims.tolist()))

    def chunk_vectors(self, version: str, chunk_ids: Sequence[str], *,
                      visibility: Visibility | None = None) -> dict[str, np.ndarray]:
        """The stored vectors of these chunks, from the cached matrix (no row read)."""
        validate_identifier(version, "retrieval target")
        with self._read() as con:
            vrow = self._resolve_target(con, version)
            m = self._matrix(con, vrow)
            rowids = self._visible_rowids(con, vrow["name"], m, chunk_ids, visibility)
        positions = np.searchsorted(m.rowids, rowids)
        assert m.ids is not None
        return {c: np.array(m.vectors[p], dtype=np.float32)
                for c, p in zip(m.ids[positions].tolist(), positions.tolist())}

    def fetch_chunks(self, version: str, chunk_ids: Sequence[str], *,
                     visibility: Visibility | None = None) -> dict[str, Chunk]:
        validate_identifier(version, "retrieval target")
        with self._read() as con:
            vrow = self._resolve_target(con, version)
            rowids = self._visible_rowids(con, vrow["name"], self._matrix(con, vrow), chunk_ids, visibility)
            return {c.chunk_id: c for c in self._fetch(con, vrow["name"], rowids.tolist()).values()}

    def chunk_texts(self, version: str, chunk_ids: Sequence[str], *,
                    visibility: Visibility | None = None) -> dict[str, str]:
        validate_identifier(version, "retrieval target")
        with self._read() as con:
            vrow = self._resolve_target(con, version)
            t = vrow["name"]
            m = self._matrix(con, vrow)
            rowids = self._visible_rowids(con, t, m, chunk_ids, visibility)
            assert m.ids is not None
            chunk_of = dict(zip(rowids.tolist(), m.ids[np.searchsorted(m.rowids, rowids)].tolist()))
            out: dict[str, str] = {}
            for start in range(0, len(rowids), 500):
                part = rowids[start:start + 500].tolist()
                out.update((chunk_of[rid], text) for rid, text in _tuples(
                    con, f"SELECT rowid, text FROM {t} WHERE rowid IN ({','.join('?' * len(part))})", part))
            return out

    @staticmethod
    def _visible_rowids(con: sqlite3.Connection, t: str, m: dense.Matrix, chunk_ids: Sequence[str],
                        visibility: Visibility | None) -> np.ndarray:
        """Sorted rowids of these chunks (ids from the cached matrix, no index probe); with
        ``visibility``, hidden ones are left out by the same facet condition every search applies."""
        assert m.positions is not None
        known = sorted({m.positions[c] for c in chunk_ids if c in m.positions})
        rowids = m.rowids[np.asarray(known, dtype=np.int64)]
        if visibility is None or not len(rowids):
            return rowids
        where, params = filter_sql(_with_visibility((), visibility), t)
        kept: list[int] = []
        for start in range(0, len(rowids), 500):
            part = rowids[start:start + 500].tolist()
            kept += [r[0] for r in _tuples(con, f"SELECT t.rowid FROM {t} AS t WHERE t.rowid IN "
                                                f"({','.join('?' * len(part))}) AND {where}", [*part, *params])]
        return np.sort(np.asarray(kept, dtype=np.int64))

    # --- questions (HyDE) and summaries -----------------------------------------------
    @staticmethod
    def _check_query(vrow: sqlite3.Row, query: QueryVector) -> None:
        if not query.fits(vrow["model"], vrow["dimension"]):
            raise EmbeddingModelMismatch(
                f"query embedded with {query.model} ({query.dimension} dims) but {vrow['name']} holds vectors from "
                f"{vrow['model']} ({vrow['dimension']} dims); embed the query with the version's model"
                " (or declare both runtimes in embeddings.local.compatible_runtimes)",
                version=vrow["name"],
            )

    @staticmethod
    def _allowed(con: sqlite3.Connection, sql: str, params: Sequence[Any]) -> np.ndarray:
        """Sorted rowids a filter lets through."""
        return np.sort(np.fromiter((r[0] for r in con.execute(sql, list(params))), dtype=np.int64))

    def search_questions(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         visibility: Visibility | None = None) -> QuestionResult:
        filters = _search_conditions(target, k, filters, visibility)
        with self._read() as con:
            vrow = self._resolve_target(con, target)
            t = vrow["name"]
            self._check_query(vrow, query)
            m = self._matrix(con, vrow, "questions")
            allowed: np.ndarray | None = None
            if filters:
                # the parent chunk's facets decide, in the same indexed query as a chunk search
                where, params = filter_sql(filters, t, alias="c")
                allowed = self._allowed(con, f"SELECT q.rowid FROM {t}_questions AS q JOIN {t} AS c "
                                             f"ON c.chunk_id = q.chunk_id WHERE {where}", params)
            visible = len(m.rowids) if allowed is None else len(allowed)
            depth = k * 4
            while True:  # several questions of one chunk can fill the top: widen until k parents
                best, sims, _ = self._ranked(vrow, "questions", m, query, depth, allowed)
                picked = self._best_per_chunk(con, t, m.rowids[best].tolist())
                if len(picked) >= k or depth >= visible:
                    break
                depth *= 4
            picked = picked[:k]
            chunks = self._fetch_chunks(con, t, [p[1] for p in picked])
            score = {int(m.rowids[i]): float(s) for i, s in zip(best, sims)}
            hits = tuple(
                QuestionHit(chunks[chunk_id], score[rid], rank, question_id, question)
                for rank, (rid, chunk_id, question_id, question) in enumerate(
                    (p for p in picked if p[1] in chunks), start=1)
            )
        return QuestionResult(target=target, version=t, hits=hits)

    @staticmethod
    def _best_per_chunk(con: sqlite3.Connection, t: str, rowids: Sequence[int]) -> list[tuple[int, str, str, str]]:
        """``(rowid, chunk_id, question_id, text)`` of the first question of each chunk, in ``rowids`` order."""
        rows: dict[int, tuple[str, str, str]] = {}
        for start in range(0, len(rowids), 500):
            part = [int(r) for r in rowids[start:start + 500]]
            marks = ",".join("?" * len(part))
            for r in con.execute(f"SELECT rowid, chunk_id, question_id, text FROM {t}_questions WHERE rowid IN "
                                 f"({marks})", part):
                rows[r[0]] = (r[1], r[2], r[3])
        seen: set[str] = set()
        out: list[tuple[int, str, str, str]] = []
        for rid in rowids:
            chunk_id, question_id, text = rows[int(rid)]
            if chunk_id not in seen:
                seen.add(chunk_id)
                out.append((int(rid), chunk_id, question_id, text))
        return out

    @staticmethod
    def _fetch_chunks(con: sqlite3.Connection, t: str, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        out: dict[str, Chunk] = {}
        for start in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[start:start + 500])
            marks = ",".join("?" * len(part))
            for row in con.execute(f"SELECT {_ROW_COLUMNS} FROM {t} WHERE chunk_id IN ({marks})", part):
                out[row["chunk_id"]] = _row_to_chunk(row)
        return out

    def search_summaries(self, target: str, query: QueryVector, k: int, filters: Sequence[FieldFilter] = (), *,
                         kinds: Sequence[SummaryKind] = ("page_summary", "artifact_summary"),
                         visibility: Visibility | None = None) -> SummaryResult:
        filters = _search_conditions(target, k, filters, visibility)
        wanted = summary_kinds(kinds)
        with self._read() as con:
            vrow = self._resolve_target(con, target)
            t = vrow["name"]
            self._check_query(vrow, query)
            m = self._matrix(con, vrow, "summaries")
            allowed: np.ndarray | None = None
            if filters or len(wanted) < len(SUMMARY_KINDS):
                # a summary is as visible as its document: some chunk of it passes the same conditions
                where, params = filter_sql(filters, t, alias="c")
                allowed = self._allowed(
                    con, f"SELECT s.rowid FROM {t}_summaries AS s WHERE s.kind IN ({','.join('?' * len(wanted))}) "
                         f"AND s.doc_id IN (SELECT c.doc_id FROM {t} AS c WHERE {where})", [*wanted, *params])
            best, sims, _ = self._ranked(vrow, "summaries", m, query, k, allowed)
            rowids = m.rowids
            ids = [int(r) for r in rowids[best]]
            rows: dict[int, Summary] = {}
            if ids:
                marks = ",".join("?" * len(ids))
                for r in con.execute(f"SELECT rowid, summary_id, doc_id, kind, page, text, chunk_ids FROM "
                                     f"{t}_summaries WHERE rowid IN ({marks})", ids):
                    rows[r[0]] = summary_from_row(r[1], r[2], r[3], r[4], r[5], r[6])
            hits = tuple(SummaryHit(rows[int(rowids[i])], float(score), rank)
                         for rank, (i, score) in enumerate(zip(best, sims), start=1))
        return SummaryResult(target=target, version=t, hits=hits)

    @staticmethod
    def _lexical_rows(con: sqlite3.Connection, t: str, text: str, k: int, filters: Sequence[FieldFilter]
                      ) -> list[tuple[int, float]]:
        """``(rowid, score)`` of the top-``k`` full-text matches, best first (ties by rowid). Without
        filters the FTS table is ranked alone: joining the chunk table costs as much as bm25 itself
        when a query word occurs in most chunks."""
        match = fts_query(text)
        if not match:
            return []
        if filters:
            where, params = filter_sql(filters, t)
            statement = (f"SELECT t.rowid AS rid, -bm25({t}_fts) AS score FROM {t}_fts JOIN {t} AS t "
                         f"ON t.rowid = {t}_fts.rowid WHERE {t}_fts MATCH ? AND {where} ORDER BY score DESC, t.rowid "
                         f"LIMIT ?")
        else:
            params = []
            statement = (f"SELECT rowid AS rid, -bm25({t}_fts) AS score FROM {t}_fts WHERE {t}_fts MATCH ? "
                         f"ORDER BY score DESC, rowid LIMIT ?")
        return _tuples(con, statement, [match, *params, k])

    def lexical_search(self, target: str, text: str, k: int, filters: Sequence[FieldFilter] = (), *,
                       visibility: Visibility | None = None) -> SearchResult:
        filters = _search_conditions(target, k, filters, visibility)
        with self._read() as con:
            vrow = self._resolve_target(con, target)
            t = vrow["name"]
            rows = self._lexical_rows(con, t, text, k, filters)
            chunks = self._fetch(con, t, [rid for rid, _ in rows])
            hits = tuple(
                ScoredChunk(chunks[rid], score, rank, vrow["distance"], lexical_score=score)
                for rank, (rid, score) in enumerate((r for r in rows if r[0] in chunks), start=1)
            )
        return SearchResult(target=target, version=t, hits=hits, strategy="lexical")

    def lexical_candidates(self, target: str, text: str, k: int, filters: Sequence[FieldFilter] = (), *,
                           visibility: Visibility | None = None) -> Candidates:
        filters = _search_conditions(target, k, filters, visibility)
        with self._read() as con:
            vrow = self._resolve_target(con, target)
            t = vrow["name"]
            rows = self._lexical_rows(con, t, text, k, filters)
            m = self._matrix(con, vrow)  # cached per generation; fusion's dense side reads it anyway
        # chunk ids by rowid from the matrix: no row read (a rowid without a chunk is dropped)
        rowids = np.fromiter((rid for rid, _ in rows), dtype=np.int64, count=len(rows))
        positions = np.minimum(np.searchsorted(m.rowids, rowids), max(len(m.rowids) - 1, 0))
        assert m.ids is not None
        known = (m.rowids[positions] == rowids).tolist() if len(m.rowids) else [False] * len(rows)
        ids = m.ids[positions].tolist() if len(m.rowids) else []
        hits = tuple((ids[i], score) for i, (_, score) in enumerate(rows) if known[i])
        return Candidates(target, t, hits, vrow["distance"])

    def version_vectors(self, target: str) -> tuple[list[str], np.ndarray]:
        """All chunk ids and raw vectors of a version (benchmarks compare against this)."""
        with self._read() as con:
            t = self._resolve_target(con, target)["name"]
            rows = con.execute(f"SELECT chunk_id, embedding FROM {t} ORDER BY rowid").fetchall()
        ids = [r[0] for r in rows]
        return ids, np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows]) if rows else np.zeros((0, 0), np.float32)

    # --- interactions --------------------------------------------------------------
    def record_interaction(self, interaction: Interaction) -> None:
        with self._write() as con:
            con.execute(
                "INSERT INTO rag_interactions(created_at, question, resp_mode, used_llm, domain, retrieval_target, "
                "latency_ms, conversation_id, decision_explain, principal) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    interaction.created_at or _now(), interaction.question, interaction.resp_mode, interaction.used_llm,
                    interaction.domain, interaction.retrieval_target, interaction.latency_ms,
                    interaction.conversation_id, json.dumps(dict(interaction.decision_explain), default=str),
                    interaction.principal,
                ),
            )

    def interactions(self, limit: int = 100) -> list[Interaction]:
        with self._read() as con:
            rows = con.execute("SELECT * FROM rag_interactions ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [
            Interaction(
                question=r["question"], resp_mode=r["resp_mode"], used_llm=r["used_llm"], domain=r["domain"],
                retrieval_target=r["retrieval_target"], latency_ms=r["latency_ms"],
                decision_explain=json.loads(r["decision_explain"]), conversation_id=r["conversation_id"],
                created_at=r["created_at"], principal=r["principal"],
            )
            for r in rows
        ]

    def count_interactions(self) -> int:
        with self._read() as con:
            return int(con.execute("SELECT COUNT(*) FROM rag_interactions").fetchone()[0])


